//! Behavioural warp-ordering policies behind one interface.
//!
//! Each of an SM's schedulers owns the warp slots `w` with `w % schedulers == id`. Every
//! cycle the issue stage asks its policy for the candidate order and issues the first warp
//! that can issue; it then tells the policy which warp issued (if any). A policy's state
//! changes only through these notifications, so a cycle in which nothing could issue leaves
//! it untouched (the issue stage relies on that to skip repeated idle cycles).

pub mod ccws;
pub mod gto;
pub mod lrr;
pub mod owl;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub use gto::Gto;
pub use lrr::Lrr;
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

/// What the issue stage hands the policy each cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct OrderInput {
    /// Warps of this scheduler that hold an instruction the stage will consider.
    pub candidates: u64,
    /// MAS: warps whose next instruction is a global memory instruction (the WST op type).
    pub mem: u64,
    /// MAS: Memory Priority mode.
    pub mp: bool,
}

/// The base warp order a scheduler uses (enum dispatch: no virtual calls on the hot path).
#[derive(Clone, Debug)]
enum Base {
    Lrr(Lrr),
    Gto(Gto),
    Owl(Owl),
}

/// One scheduler's policy: a base order, optionally split into Mem_Q and Comp_Q (MAS).
#[derive(Clone, Debug)]
pub struct Policy {
    base: Base,
    mas_split: bool,
    scratch: Order,
}

impl Policy {
    /// The policy of scheduler `id` of `schedulers`, on SM `sm` with `warps` slots.
    pub fn new(cfg: &crate::config::Config, id: usize, sm: usize) -> Policy {
        let schedulers = cfg.schedulers_per_sm as usize;
        let owned = (0..cfg.warps_per_sm as usize)
            .filter(|w| w % schedulers == id)
            .count();
        let kind = cfg.scheduler;
        let base_kind = if kind.uses_mas() { cfg.mas_base_order } else { kind };
        let base = match base_kind {
            SchedulerKind::Lrr => Base::Lrr(Lrr::default()),
            SchedulerKind::Owl => Base::Owl(Owl::new(cfg.owl_blp_parity.then_some(sm as u32 % 2))),
            // CCWS and CAR issue in GTO order (CCWS adds throttling, CAR changes the LSU).
            _ => Base::Gto(Gto::new(owned)),
        };
        Policy {
            base,
            mas_split: kind.uses_mas(),
            scratch: Order::default(),
        }
    }

    /// Writes this cycle's candidate order into `out`.
    pub fn order(&mut self, input: &OrderInput, out: &mut Order) {
        let target = if self.mas_split {
            &mut self.scratch
        } else {
            &mut *out
        };
        target.clear();
        match &self.base {
            Base::Lrr(p) => p.order(input.candidates, target),
            Base::Gto(p) => p.order(input.candidates, target),
            Base::Owl(p) => p.order(input.candidates, target),
        }
        if self.mas_split {
            crate::mascar::scheduler::MasScheduler::split(&self.scratch, input.mem, input.mp, out);
        }
    }

    /// The warp in `slot` issued this cycle.
    pub fn issued(&mut self, slot: u8) {
        match &mut self.base {
            Base::Lrr(p) => p.issued(slot),
            Base::Gto(p) => p.issued(slot),
            Base::Owl(p) => p.issued(slot),
        }
    }

    /// A new warp was launched into `slot`, as part of CTA `cta` (the `seq`-th CTA launched
    /// on this SM).
    pub fn warp_launched(&mut self, slot: u8, cta: u32, seq: u64) {
        match &mut self.base {
            Base::Lrr(_) => {}
            Base::Gto(p) => p.launched(slot),
            Base::Owl(p) => p.launched(slot, cta, seq),
        }
    }

    /// The warp in `slot` finished.
    pub fn warp_exited(&mut self, slot: u8) {
        match &mut self.base {
            Base::Lrr(_) => {}
            Base::Gto(p) => p.exited(slot),
            Base::Owl(p) => p.exited(slot),
        }
    }
}
