//! Behavioural warp-ordering policies behind one interface.
//!
//! Each of an SM's schedulers owns the warp slots `w` with `w % schedulers == id`. Every
//! cycle the issue stage asks its policy for the candidate order and issues the first warp
//! that can issue; it then tells the policy which warp issued (if any). A policy's state
//! changes only through these notifications, so a cycle in which nothing could issue leaves
//! it untouched (the issue stage relies on that to skip repeated idle cycles).

pub mod gto;
pub mod lrr;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub use gto::Gto;
pub use lrr::Lrr;

/// Scheduler names accepted by `--scheduler` and the `scheduler` config key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    /// Loose round robin (GPGPU-Sim `lrr`), the paper's RR baseline.
    Lrr,
    /// Greedy-then-oldest (GPGPU-Sim `gto`).
    Gto,
}

impl SchedulerKind {
    pub const ALL: &'static [SchedulerKind] = &[SchedulerKind::Lrr, SchedulerKind::Gto];
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Lrr => "lrr",
            SchedulerKind::Gto => "gto",
        }
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SchedulerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SchedulerKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s.to_ascii_lowercase())
            .ok_or_else(|| {
                let names: Vec<_> = SchedulerKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown scheduler `{s}` (known: {})", names.join(", "))
            })
    }
}

/// Largest number of warp slots a scheduler may own.
pub const MAX_SLOTS: usize = 64;

/// A candidate order: warp slots, highest priority first.
#[derive(Clone, Debug)]
pub struct Order {
    pub slots: [u8; MAX_SLOTS],
    pub len: usize,
}

impl Default for Order {
    fn default() -> Self {
        Order {
            slots: [0; MAX_SLOTS],
            len: 0,
        }
    }
}

impl Order {
    pub fn clear(&mut self) {
        self.len = 0;
    }
    pub fn push(&mut self, slot: u8) {
        self.slots[self.len] = slot;
        self.len += 1;
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.slots[..self.len]
    }
}

/// One scheduler's policy state (enum dispatch: no virtual calls on the hot path).
#[derive(Clone, Debug)]
pub enum Policy {
    Lrr(Lrr),
    Gto(Gto),
}

impl Policy {
    /// A policy for scheduler `id` of `schedulers`, on an SM with `warps` slots.
    pub fn new(kind: SchedulerKind, id: usize, schedulers: usize, warps: usize) -> Policy {
        let owned = (0..warps).filter(|w| w % schedulers == id).count();
        match kind {
            SchedulerKind::Lrr => Policy::Lrr(Lrr::default()),
            SchedulerKind::Gto => Policy::Gto(Gto::new(owned)),
        }
    }

    /// Writes this cycle's candidate order into `out`. `candidates` has bit w set for every
    /// warp slot of this scheduler that holds an instruction it could consider.
    pub fn order(&self, candidates: u64, out: &mut Order) {
        out.clear();
        match self {
            Policy::Lrr(p) => p.order(candidates, out),
            Policy::Gto(p) => p.order(candidates, out),
        }
    }

    /// The warp in `slot` issued this cycle.
    pub fn issued(&mut self, slot: u8) {
        match self {
            Policy::Lrr(p) => p.issued(slot),
            Policy::Gto(p) => p.issued(slot),
        }
    }

    /// A new warp was launched into `slot` (dynamic ids grow with launch order).
    pub fn warp_launched(&mut self, slot: u8) {
        if let Policy::Gto(p) = self {
            p.launched(slot)
        }
    }

    /// The warp in `slot` finished.
    pub fn warp_exited(&mut self, slot: u8) {
        if let Policy::Gto(p) = self {
            p.exited(slot)
        }
    }
}
