//! The paper's measure for splitting memory- from compute-intensive kernels: warp
//! instructions per L1 data miss (spec §7, issue 16 §3), and the class it implies. Used by
//! `compare` to class traces and by `mascar kernels --characterise` ([`crate::characterise`]).

use serde::{Deserialize, Serialize};

use crate::stats::RunStats;
use crate::workload::builtin::KernelClass;

/// A kernel with fewer warp instructions per L1 data miss than this is memory intensive.
/// The paper's memory-intensive kernels all lie below it (the highest is leuko-1's 28) and
/// its compute-intensive ones above (the lowest is histo-2's 35.9): spec §7.
pub const MEMORY_INTENSIVE_BELOW: f64 = 30.0;

/// L1 data misses of a run: MSHR allocations plus merges into an open MSHR.
pub fn l1_data_misses(s: &RunStats) -> u64 {
    s.l1.misses + s.l1.hit_reserved
}

/// Warp instructions per L1 data miss; `None` without a miss (infinitely many).
pub fn insts_per_l1_miss(s: &RunStats) -> Option<f64> {
    let misses = l1_data_misses(s);
    (misses > 0).then(|| s.warp_instructions as f64 / misses as f64)
}

/// Which side of the threshold a value of the measure falls on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intensity {
    Memory,
    Compute,
}

impl Intensity {
    /// The class of a measure (`None`: no miss at all, compute).
    pub fn of(insts_per_miss: Option<f64>) -> Intensity {
        match insts_per_miss {
            Some(v) if v < MEMORY_INTENSIVE_BELOW => Intensity::Memory,
            _ => Intensity::Compute,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Intensity::Memory => "memory",
            Intensity::Compute => "compute",
        }
    }
}

/// The report class of a workload that has none of its own (a trace), from its LRR run.
pub fn measured_class(s: &RunStats) -> KernelClass {
    match Intensity::of(insts_per_l1_miss(s)) {
        Intensity::Memory => KernelClass::MemoryIntensive,
        Intensity::Compute => KernelClass::Compute,
    }
}
