//! Cycles in which an SM does not act, and how they are skipped (issue 31; `docs/speed.md`).
//!
//! An SM does not act in a cycle when no reply reaches it, no warp can issue or fetch,
//! nothing waits in its LD/ST path, L1 miss queue or read-only caches, no pipeline result
//! is due, and its blocks' last clock edge issued nothing, launched and retired no warp and
//! changed no register ([`MascarBlocks::settled`]; only the behavioural engine says so).
//! Such a cycle changes only counters: each scheduler counts an idle or scoreboard-stall
//! cycle, MAS an MP cycle, the L1 its full-MSHR and full-miss-queue cycles.
//!
//! If the SM also did not act in its previous cycle, its blocks' inputs are those of that
//! cycle, whose clock edge changed nothing, so this cycle's edge changes nothing either and
//! the SM only counts (`step`). The GPU may jump over many such cycles at once
//! (`gpu/skip.rs`) once every unit is quiet.
//!
//! [`MascarBlocks::settled`]: crate::mascar::blocks::MascarBlocks::settled

use super::Sm;
use crate::gpu::mem::MemReply;
use crate::workload::Kernel;

impl Sm {
    /// One SM cycle given the reply the network delivers to it this cycle, counted only
    /// when the SM does not act in it nor did in the one before (if the GPU allows the
    /// skip: nothing watches every cycle).
    pub fn step(&mut self, now: u64, k: &Kernel, arrived: Option<MemReply>) {
        if self.may_skip {
            let quiet = arrived.is_none() && !self.acts_at(now);
            let was_quiet = std::mem::replace(&mut self.quiet_last, quiet);
            if quiet && was_quiet {
                self.skip_quiet(1);
                self.quiet_cycles += 1;
                return;
            }
        }
        self.cycle_with(now, k, arrived);
    }

    /// Whether the SM may act in cycle `now` (a reply reaching it aside).
    pub fn acts_at(&self, now: u64) -> bool {
        self.launched | self.exited != 0
            || self.need_fetch != 0
            || self.issuable & self.sb_ready != 0
            || self.lsu.busy
            || self.lsu.ro.is_some()
            || !self.mem_oc.is_empty()
            || self.atomic_port.is_some()
            || !self.l1.miss_queue.is_empty()
            || self.l1.has_free_pulses()
            || !self.tex.is_quiet()
            || !self.constant.miss_queue.is_empty()
            || self.wheel.due_at(now)
            || !self.blocks.settled()
            || (self.mas && self.mas_last != self.blocks.registers())
            || self.ccws.as_ref().is_some_and(|c| !c.settled(self.active))
    }

    /// The first cycle from `now` on in which the SM may act, given that no reply reaches
    /// it before then: `now` unless it did not act in its last cycle and does not in this
    /// one; `u64::MAX` if only a reply can wake it.
    pub fn next_act(&self, now: u64) -> u64 {
        if !self.quiet_last || self.acts_at(now) {
            return now;
        }
        self.wheel.next_due(now).unwrap_or(u64::MAX)
    }

    /// An SM at rest (`is_at_rest`, stepped by `rest_cycle`) acts again only through a
    /// launch; the one thing its rest cycle can still change is MAS's last-seen registers.
    pub fn next_act_at_rest(&self, now: u64) -> u64 {
        if self.mas_last != (false, None) {
            now
        } else {
            u64::MAX
        }
    }

    /// What `cycles` cycles in which the SM does not act count: no scheduler issues
    /// (nothing is ready, nothing is held back), so each counts a scoreboard stall if it has
    /// a warp with an instruction and an idle cycle otherwise (`Sm::issue`); MAS an MP
    /// cycle if in MP (`mas_statistics`); the L1 its full counters (`L1::sample`).
    pub fn skip_quiet(&mut self, cycles: u64) {
        for s in 0..self.sched_mask.len() {
            if self.issuable & self.sched_mask[s] != 0 {
                self.stats.sched.scoreboard_stall_cycles += cycles;
            } else {
                self.stats.sched.idle_cycles += cycles;
            }
        }
        if self.mas && self.mas_last.0 {
            self.stats.mas.mp_cycles += cycles;
        }
        self.l1.sample_for(cycles);
    }

    /// What `cycles` calls of [`Sm::rest_cycle`] count once MAS's registers are at rest.
    pub fn skip_at_rest(&mut self, cycles: u64) {
        self.stats.sched.idle_cycles += self.sched_mask.len() as u64 * cycles;
    }
}
