//! Long sweeps on two workers. libtest already runs two tests at a time, but a long serial
//! sweep that starts late is the suite's tail on a 2-core machine (CI's), one core idle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `check` on every job, two at a time, in order of the list (put the longest first).
/// Every job runs even if another fails; then the failures, each with its panic message,
/// fail the calling test together.
pub fn on_two_workers<T: Sync>(jobs: &[T], check: impl Fn(&T) + Sync) {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(job))) {
                        let message = e
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "(a panic without a message)".into());
                        failures.lock().unwrap().push(message);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}
