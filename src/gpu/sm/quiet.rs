//! Cycles in which an SM does not act, and how they are skipped (issue 31; `docs/speed.md`).
//!
//! An SM does not act in a cycle when no reply reaches it, no warp can fetch, no pipeline
//! result is due, nothing waits in its read-only caches or atomic port, no MSHR or miss-queue
//! slot was freed since it last looked, its blocks' last clock edge issued nothing, launched
//! and retired no warp and changed no register ([`MascarBlocks::settled`]; only the
//! behavioural engine says so), its LD/ST stage last changed nothing but counters (a head
//! the L1 refused, waiting; with CAR no entry retried or parked), and every ready warp waits
//! for the LD/ST unit (its operand collector is full) or is held back by CAR. Such a cycle
//! changes only counters: the LD/ST stage runs again and is refused again (the L1 has not
//! changed), each scheduler counts a pipeline, scoreboard or idle stall, MAS an MP cycle and
//! its stalled warps, CAR a queue-full cycle, the L1 its full-MSHR and full-miss-queue cycles.
//!
//! If the SM also did not act in its previous cycle, its blocks' inputs are those of that
//! cycle, whose clock edge changed nothing, so this cycle's edge changes nothing either and
//! the SM only counts (`step`). The GPU may jump over many such cycles at once
//! (`gpu/skip.rs`) once every unit is quiet and no LD/ST head or miss waits.
//!
//! [`MascarBlocks::settled`]: crate::mascar::blocks::MascarBlocks::settled

use super::collector::Port;
use super::Sm;
use crate::gpu::mem::MemReply;
use crate::workload::Kernel;

impl Sm {
    /// One SM cycle given the reply the network delivers to it this cycle, counted only
    /// when the SM does not act in it nor did in the one before (if the GPU allows the
    /// skip: nothing watches every cycle).
    #[inline]
    pub fn step(&mut self, now: u64, k: &Kernel, arrived: Option<MemReply>) {
        if !self.may_skip {
            self.cycle_with(now, k, arrived);
            return;
        }
        let quiet = arrived.is_none() && !self.acts_at(now);
        let was_quiet = std::mem::replace(&mut self.quiet_last, quiet);
        if quiet && was_quiet {
            // The LD/ST stage again changes nothing but its counters (a refused head's,
            // a refused retry's).
            self.ldst(now);
            self.skip_quiet(1);
            self.quiet_cycles += 1;
            return;
        }
        self.cycle_with(now, k, arrived);
        // Judged now, while the SM's state is in cache; what the rest of the GPU can change
        // before the next cycle (a launch, a free pulse, a reply) and the clock (an event
        // falling due) are checked then (`acts_at`).
        self.quiet_next = !self.acts_within();
    }

    /// Whether the SM may act in cycle `now` (a reply reaching it aside).
    pub fn acts_at(&self, now: u64) -> bool {
        !self.quiet_next
            || self.launched | self.exited != 0
            || self.l1.has_free_pulses()
            || self.wheel.due_at(now)
    }

    /// Whether the SM may act next cycle by its own state: what only its own cycle changes.
    fn acts_within(&self) -> bool {
        // Cheapest and most often decisive first: a busy SM issued (its blocks are not
        // settled) or moved its LD/ST unit.
        if !self.ldst_still || !self.blocks.settled() || self.need_fetch != 0 || self.decoding.is_some() {
            return true;
        }
        // Whether the LD/ST unit is stuck: its last stage changed nothing but counters (a
        // head refused and waiting, no entry retried), and the operand collector can move
        // nothing (it holds only memory instructions, all waiting for the LD/ST unit); and
        // the ready warps the LD/ST side does not hold back.
        let free = self.issuable & self.sb_ready & !self.held_mask();
        !self.collector.settled(self.lsu.busy)
            || self.lsu.atomic && self.lsu.busy
            || free & !self.mem_head != 0
            || (free & self.mem_head != 0 && self.collector.free(Port::Mem) > 0)
            || self.lsu.ro.is_some()
            || self.atomic_port.is_some()
            || !self.tex.is_quiet()
            || !self.constant.miss_queue.is_empty()
            || (self.mas && self.mas_last != self.blocks.registers())
            || self.ccws.as_ref().is_some_and(|c| !c.settled(self.active))
    }

    /// The warps the LD/ST side holds back (`held_back` counts, then asks this): CCWS's
    /// throttled loads, CAR's warps holding an entry (every global memory instruction when
    /// the queue is full and `car_full_blocks_issue`).
    pub(super) fn held_mask(&self) -> u64 {
        let mut held = self.ccws.as_ref().map_or(0, |c| c.throttled & self.load_head);
        if self.car.is_some() {
            let (warps, full, _) = self.blocks.queue_state();
            held |= warps & self.gmem_head;
            if full && self.cfg.car_full_blocks_issue {
                held |= self.gmem_head;
            }
        }
        held
    }

    /// The first cycle from `now` on in which the SM may act, given that no reply reaches
    /// it before then: `now` unless it did not act in its last cycle and does not in this
    /// one and has no LD/ST head or miss waiting (those retry every cycle); `u64::MAX` if
    /// only a reply can wake it.
    pub fn next_act(&self, now: u64) -> u64 {
        if !self.quiet_last
            || self.acts_at(now)
            || self.lsu.busy
            || self.l1_slot.is_some()
            || !self.l1.miss_queue.is_empty()
        {
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

    /// What the issue stage and the L1 count in `cycles` cycles in which the SM does not
    /// act (`Sm::issue`, `mas_statistics`, `L1::sample`): no scheduler issues, so each
    /// counts a pipeline stall if a warp of its own is ready, a scoreboard stall if one has
    /// an instruction, an idle cycle otherwise; MAS an MP cycle if in MP and the ready warps
    /// its status table stalls (as it did last cycle, with the same inputs).
    pub fn skip_quiet(&mut self, cycles: u64) {
        let ready = self.issuable & self.sb_ready;
        for s in 0..self.sched_mask.len() {
            self.count_stall(self.stall_of(s), cycles);
        }
        if self.car.is_some() && self.blocks.queue_state().1 {
            self.stats.car.queue_full_cycles += cycles;
        }
        if self.mas {
            let st = &mut self.stats.mas;
            st.mp_cycles += self.mas_last.0 as u64 * cycles;
            st.stalled_warp_cycles += (self.last_view.wst.stall & ready).count_ones() as u64 * cycles;
        }
        self.l1.sample_for(cycles);
        // No scheduler issues in these cycles, so which went first changed nothing; the
        // order still moves on as it would have.
        self.rotate_issue_first(cycles);
    }

    /// What `cycles` calls of [`Sm::rest_cycle`] count once MAS's registers are at rest.
    pub fn skip_at_rest(&mut self, cycles: u64) {
        self.stats.sched.idle_cycles += self.sched_mask.len() as u64 * cycles;
    }
}
