//! Every built-in (its first 8 CTAs) under every scheduler on 2 SMs with the default
//! settings, run once per test binary and read by the tests that check these runs in
//! different ways: the golden table (golden.rs), the comparison with the cycle skip off
//! (skip.rs) and the every-request-answered invariants (mascar.rs). The 203 runs were made
//! three times when each test made its own.

use std::sync::OnceLock;

use mascar::config::Config;
use mascar::sched::SchedulerKind;
use mascar::stats::RunStats;
use mascar::workload::builtin::builtins;
use mascar::workload::Kernel;

/// One kernel × scheduler run, cycle skip on (the default).
pub struct BuiltinRun {
    pub name: &'static str,
    /// The kernel as run (the grid cut to 8 CTAs).
    pub kernel: Kernel,
    pub scheduler: SchedulerKind,
    /// Its configuration: 2 SMs, `scheduler`, every other setting the default.
    pub cfg: Config,
    /// The statistics, or the run's error as text (each reading test reports it).
    pub stats: Result<RunStats, String>,
    /// SM-cycles the skip jumped over.
    pub skipped: u64,
}

/// The runs, in the order of the built-in list then `SchedulerKind::ALL`; made on first use,
/// on rayon's workers (the list's order is kept).
pub fn builtin_runs() -> &'static [BuiltinRun] {
    use rayon::prelude::*;
    static RUNS: OnceLock<Vec<BuiltinRun>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let pairs: Vec<(&'static str, Kernel, SchedulerKind)> = builtins()
            .iter()
            .flat_map(|b| {
                let mut k = b.kernel();
                k.grid = k.grid.min(8);
                SchedulerKind::ALL.iter().map(move |&s| (b.name, k.clone(), s))
            })
            .collect();
        pairs
            .into_par_iter()
            .map(|(name, kernel, scheduler)| {
                let cfg = Config {
                    sms: 2,
                    scheduler,
                    ..Config::default()
                };
                let (stats, skipped) = match mascar::engine::gpu(&cfg) {
                    Ok(mut gpu) => {
                        let stats = gpu.run(&kernel, None).map_err(|e| e.to_string());
                        (stats, gpu.sm_cycles_skipped())
                    }
                    Err(e) => (Err(e.to_string()), 0),
                };
                BuiltinRun {
                    name,
                    kernel,
                    scheduler,
                    cfg,
                    stats,
                    skipped,
                }
            })
            .collect()
    })
}

/// The statistics of a run, or a panic naming the pair and its error.
pub fn stats_of(r: &BuiltinRun) -> &RunStats {
    r.stats
        .as_ref()
        .unwrap_or_else(|e| panic!("{} under {}: {e}", r.name, r.scheduler))
}
