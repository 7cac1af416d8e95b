//! Scheduler names and the policies beside the scheduler block: LRR and GTO are orders of
//! the scheduler block itself (`crate::mascar::scheduler`, and its RTL twin); OWL's CTA
//! groups are a behavioural order it delegates to; CCWS's lost-locality detector throttles
//! loads in front of it.

pub mod ccws;
pub mod lanes;
pub mod owl;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub use owl::Owl;

/// Scheduler names accepted by `--scheduler` and the `scheduler` config key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    /// Loose round robin (GPGPU-Sim `lrr`), the paper's RR baseline.
    Lrr,
    /// Greedy-then-oldest (GPGPU-Sim `gto`).
    Gto,
    /// CTA-aware two-level scheduling with BLP awareness (Jog et al., ASPLOS 2013).
    Owl,
    /// Cache-conscious wavefront scheduling (Rogers et al., MICRO 2012): GTO + load throttling.
    Ccws,
    /// Memory-aware scheduling alone (Mascar's scheduler half).
    Mas,
    /// Cache-access re-execution alone, on GTO (Mascar's LSU half).
    Car,
    /// MAS + CAR.
    Mascar,
}

impl SchedulerKind {
    pub const ALL: &'static [SchedulerKind] = &[
        SchedulerKind::Lrr,
        SchedulerKind::Gto,
        SchedulerKind::Owl,
        SchedulerKind::Ccws,
        SchedulerKind::Mas,
        SchedulerKind::Car,
        SchedulerKind::Mascar,
    ];
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Lrr => "lrr",
            SchedulerKind::Gto => "gto",
            SchedulerKind::Owl => "owl",
            SchedulerKind::Ccws => "ccws",
            SchedulerKind::Mas => "mas",
            SchedulerKind::Car => "car",
            SchedulerKind::Mascar => "mascar",
        }
    }
    /// Whether the SM runs the MAS blocks (warp status table, readiness checker, modes).
    pub fn uses_mas(self) -> bool {
        matches!(self, SchedulerKind::Mas | SchedulerKind::Mascar)
    }
    /// Whether the LD/ST unit has the CAR re-execution queue.
    pub fn uses_car(self) -> bool {
        matches!(self, SchedulerKind::Car | SchedulerKind::Mascar)
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

    /// Appends the slots of `mask` in circular order, starting one past `last` (63 or more:
    /// from the lowest slot) — round robin over a bit mask.
    pub fn push_round_robin(&mut self, mask: u64, last: u8) {
        let after = if last >= 63 { 0 } else { u64::MAX << (last + 1) };
        for part in [mask & after, mask & !after] {
            let mut m = part;
            while m != 0 {
                self.push(m.trailing_zeros() as u8);
                m &= m - 1;
            }
        }
    }
}
