//! Threads that step the SMs of a cycle together (`mascar run --threads N`, issue 31).
//!
//! Within a cycle the SMs share nothing: each reads only the reply the network delivered to
//! it, taken for every SM before they step (`Gpu::run_cycles`), so the SMs can be split
//! among threads and the run stays bit-identical whatever the split. A cycle is a few
//! microseconds of work, so the threads do not sleep between cycles (a futex wake per cycle
//! cost more than the work: rayon's pool ran 4× slower than one thread); each spins on a
//! cycle counter and yields once it has waited long, so a loaded machine is not starved.
//!
//! Protocol, per cycle: the caller publishes each worker's share of the SMs (raw pointers,
//! valid until the worker reports done), bumps `epoch` (release), steps its own share, and
//! waits until every worker has bumped `done` (acquire). Between cycles only the caller
//! touches the SMs.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use super::mem::MemReply;
use super::sm::Sm;
use crate::workload::Kernel;

/// One worker's share of a cycle: a run of SMs and their delivered replies.
struct Share {
    sms: AtomicPtr<Sm>,
    arrived: AtomicPtr<Option<MemReply>>,
    len: AtomicUsize,
}

pub struct Crew {
    /// Shares of the workers (index 0 is unused: the caller's share is passed directly).
    shares: Vec<Share>,
    epoch: AtomicU64,
    done: AtomicUsize,
    stop: AtomicBool,
    now: AtomicU64,
    skip_rest: AtomicBool,
    /// A worker panicked: the caller panics too instead of waiting for it.
    poisoned: AtomicBool,
}

/// Reports a worker's cycle done, also when its SMs panic (then poisoning the crew), so the
/// caller never waits for a thread that is gone.
struct Done<'a>(&'a Crew);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::Release);
        }
        self.0.done.fetch_add(1, Ordering::Release);
    }
}

/// Stops the workers when the caller's loop ends, by return or by panic.
pub struct Finish<'a>(pub &'a Crew);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::Release);
    }
}

/// Spins this many times before yielding the core on each further wait.
const SPINS: u32 = 1 << 12;

fn wait_until(mut ready: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        if spins < SPINS {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Steps `sms` for cycle `now`: an SM at rest (`skip_rest`) counts its idle cycle, the
/// others run with the reply delivered to them.
fn step(sms: &mut [Sm], arrived: &mut [Option<MemReply>], now: u64, k: &Kernel, skip_rest: bool) {
    for (sm, slot) in sms.iter_mut().zip(arrived.iter_mut()) {
        if skip_rest && sm.is_at_rest() {
            sm.rest_cycle();
        } else {
            sm.step(now, k, slot.take());
        }
    }
}

impl Crew {
    /// A crew of `threads` (the caller and `threads − 1` workers).
    pub fn new(threads: usize) -> Crew {
        Crew {
            shares: (0..threads.max(1))
                .map(|_| Share {
                    sms: AtomicPtr::new(std::ptr::null_mut()),
                    arrived: AtomicPtr::new(std::ptr::null_mut()),
                    len: AtomicUsize::new(0),
                })
                .collect(),
            epoch: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            now: AtomicU64::new(0),
            skip_rest: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
        }
    }

    pub fn threads(&self) -> usize {
        self.shares.len()
    }

    /// Worker `part` (1 ..< threads): steps its share each cycle until [`finish`](Self::finish).
    pub fn work(&self, part: usize, k: &Kernel) {
        let mut seen = 0;
        loop {
            let mut stopped = false;
            wait_until(|| {
                stopped = self.stop.load(Ordering::Acquire);
                stopped || self.epoch.load(Ordering::Acquire) != seen
            });
            if stopped {
                return;
            }
            seen = self.epoch.load(Ordering::Acquire);
            let _done = Done(self);
            let share = &self.shares[part];
            let len = share.len.load(Ordering::Relaxed);
            if len > 0 {
                // SAFETY: the caller published these pointers for this cycle from disjoint
                // parts of its slices and touches neither until this worker bumps `done`.
                let (sms, arrived) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(share.sms.load(Ordering::Relaxed), len),
                        std::slice::from_raw_parts_mut(share.arrived.load(Ordering::Relaxed), len),
                    )
                };
                let now = self.now.load(Ordering::Relaxed);
                step(sms, arrived, now, k, self.skip_rest.load(Ordering::Relaxed));
            }
        }
    }

    /// Steps every SM for cycle `now`, the workers taking their shares.
    pub fn step(
        &self,
        sms: &mut [Sm],
        arrived: &mut [Option<MemReply>],
        now: u64,
        k: &Kernel,
        skip_rest: bool,
    ) {
        let n = sms.len();
        let threads = self.threads();
        let chunk = n.div_ceil(threads);
        let (mine, mut rest) = sms.split_at_mut(chunk.min(n));
        let (my_arrived, mut rest_arrived) = arrived.split_at_mut(chunk.min(n));
        for share in &self.shares[1..] {
            let take = chunk.min(rest.len());
            let (part, tail) = rest.split_at_mut(take);
            let (part_arrived, tail_arrived) = rest_arrived.split_at_mut(take);
            share.sms.store(part.as_mut_ptr(), Ordering::Relaxed);
            share.arrived.store(part_arrived.as_mut_ptr(), Ordering::Relaxed);
            share.len.store(take, Ordering::Relaxed);
            (rest, rest_arrived) = (tail, tail_arrived);
        }
        self.now.store(now, Ordering::Relaxed);
        self.skip_rest.store(skip_rest, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.epoch.fetch_add(1, Ordering::Release);
        step(mine, my_arrived, now, k, skip_rest);
        wait_until(|| self.done.load(Ordering::Acquire) == threads - 1);
        assert!(
            !self.poisoned.load(Ordering::Acquire),
            "a thread stepping SMs panicked"
        );
    }
}
