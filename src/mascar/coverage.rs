//! Functional coverage of the Mascar blocks: named counters of the corner cases a test run
//! must reach before "the twins agree" means much. Every counter is computed from the
//! per-cycle port structs alone (what the blocks take and give, [`super::ports`] and
//! [`super::blocks`]), so any engine's run, or a recording of one, can be measured the same
//! way. The only state kept is last cycle's mode and owner registers, to see them change.
//!
//! Feed it once per cycle and SM: [`Coverage::observe_queue`] with the re-execution queue's
//! final inputs of the cycle (those it is clocked with) and its outputs, and
//! [`Coverage::observe_issue`] with the issue stage's inputs and outputs. One `Coverage` per
//! SM (the registers it remembers are per SM); [`Coverage::add`] sums them.

use super::blocks::{IssueIn, IssueView};
use super::ports::{QueueIn, QueueOut, MAX_SCHEDULERS};

/// The counters, one per corner case. Cycle counters count SM-cycles; event counters count
/// occurrences.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Cycles the re-execution queue was full (its registered `full` output).
    pub queue_full: u64,
    /// Cycles the queue had one entry left.
    pub queue_almost_full: u64,
    /// Owner changes split as `MasStats` splits them, by what the previous owner was doing:
    /// none before (first owner of an MP spell).
    pub owner_first: u64,
    /// The previous owner waits on a load it issued (the paper's hand-over).
    pub owner_after_dependent_load: u64,
    /// The previous owner finished.
    pub owner_after_finish: u64,
    /// The previous owner waits at a CTA barrier.
    pub owner_after_barrier: u64,
    /// Any other hand-over (e.g. a quiet L1 handed to a warp whose requests wait to leave).
    pub owner_other: u64,
    /// MP ended while a warp owned the memory path.
    pub owner_returned_to_ep: u64,
    /// Mode register EP → MP.
    pub ep_to_mp: u64,
    /// Mode register MP → EP.
    pub mp_to_ep: u64,
    /// A scheduler took the last free SP lane while a later scheduler had a ready, unstalled
    /// SP warp: the second picker had to see that the first one used it up.
    pub both_want_last_sp: u64,
    /// The same for the last free SFU.
    pub both_want_last_sfu: u64,
    /// The same for the LD/ST unit (a global instruction takes it; a shared one does not).
    pub both_want_lsu: u64,
    /// A hit-only queue entry was selected and refused (the non-owner's miss NACKed, or a
    /// reservation failure of a hit-only entry).
    pub hit_only_nack: u64,
    /// A hit-only queue entry was selected and accepted (a hit served to a non-owner in MP).
    pub hit_only_served: u64,
    /// A queue entry took the L1 port and was accepted.
    pub retry_success: u64,
    /// A queue entry took the L1 port and was refused.
    pub retry_failure: u64,
    /// A synchronous reset of the issue stage in mid-run: warps active, or the mode machine
    /// away from its power-on state (MP or an owner). The SM's own kernel-launch clear
    /// comes when the SM is idle, so only a reset test reaches this.
    pub reset_mid_run: u64,
    /// Last cycle's mode and owner registers (state, not a counter).
    last: (bool, Option<u8>),
    /// Warp slots each scheduler owns (slot `w` belongs to scheduler `w mod n`).
    owned: [u64; MAX_SCHEDULERS],
    schedulers: usize,
}

/// Counters no configuration can reach yet, with the reason; a coverage test lists them
/// as such instead of passing over a zero.
pub const NOT_YET_REACHABLE: &[(&str, &str)] = &[];

impl Coverage {
    /// For an SM with `warps` warp slots split over `schedulers` schedulers.
    pub fn new(warps: usize, schedulers: usize) -> Self {
        let schedulers = schedulers.clamp(1, MAX_SCHEDULERS);
        let mut owned = [0u64; MAX_SCHEDULERS];
        for w in 0..warps.min(64) {
            owned[w % schedulers] |= 1 << w;
        }
        Coverage {
            owned,
            schedulers,
            ..Coverage::default()
        }
    }

    /// Every counter by name, in declaration order.
    pub fn counters(&self) -> [(&'static str, u64); 18] {
        [
            ("queue_full", self.queue_full),
            ("queue_almost_full", self.queue_almost_full),
            ("owner_first", self.owner_first),
            ("owner_after_dependent_load", self.owner_after_dependent_load),
            ("owner_after_finish", self.owner_after_finish),
            ("owner_after_barrier", self.owner_after_barrier),
            ("owner_other", self.owner_other),
            ("owner_returned_to_ep", self.owner_returned_to_ep),
            ("ep_to_mp", self.ep_to_mp),
            ("mp_to_ep", self.mp_to_ep),
            ("both_want_last_sp", self.both_want_last_sp),
            ("both_want_last_sfu", self.both_want_last_sfu),
            ("both_want_lsu", self.both_want_lsu),
            ("hit_only_nack", self.hit_only_nack),
            ("hit_only_served", self.hit_only_served),
            ("retry_success", self.retry_success),
            ("retry_failure", self.retry_failure),
            ("reset_mid_run", self.reset_mid_run),
        ]
    }

    /// Adds another SM's (or run's) counters.
    pub fn add(&mut self, o: &Coverage) {
        self.queue_full += o.queue_full;
        self.queue_almost_full += o.queue_almost_full;
        self.owner_first += o.owner_first;
        self.owner_after_dependent_load += o.owner_after_dependent_load;
        self.owner_after_finish += o.owner_after_finish;
        self.owner_after_barrier += o.owner_after_barrier;
        self.owner_other += o.owner_other;
        self.owner_returned_to_ep += o.owner_returned_to_ep;
        self.ep_to_mp += o.ep_to_mp;
        self.mp_to_ep += o.mp_to_ep;
        self.both_want_last_sp += o.both_want_last_sp;
        self.both_want_last_sfu += o.both_want_last_sfu;
        self.both_want_lsu += o.both_want_lsu;
        self.hit_only_nack += o.hit_only_nack;
        self.hit_only_served += o.hit_only_served;
        self.retry_success += o.retry_success;
        self.retry_failure += o.retry_failure;
        self.reset_mid_run += o.reset_mid_run;
    }

    /// The re-execution queue's cycle: `i` are the inputs it is clocked with (`refused`
    /// tells the selected entry's outcome), `o` its outputs under them.
    pub fn observe_queue(&mut self, i: &QueueIn, o: &QueueOut) {
        self.queue_full += o.full as u64;
        self.queue_almost_full += o.almost_full as u64;
        if let Some(e) = o.select {
            let hit_only = o.hit_only >> e & 1 == 1;
            if i.refused {
                self.retry_failure += 1;
                self.hit_only_nack += hit_only as u64;
            } else {
                self.retry_success += 1;
                self.hit_only_served += hit_only as u64;
            }
        }
    }

    /// The issue stage's cycle: its inputs and the blocks' outputs.
    pub fn observe_issue(&mut self, i: &IssueIn, v: &IssueView) {
        self.observe_mode(i, v);
        self.observe_units(i, v);
        self.reset_mid_run +=
            (i.sched.reset && (i.warps.active != 0 || v.sched.mp || v.sched.owner.is_some())) as u64;
    }

    /// Mode and owner changes, classified as the SM's `MasStats` classifies them: by the
    /// previous owner's state in the cycle the new registers are first in force.
    fn observe_mode(&mut self, i: &IssueIn, v: &IssueView) {
        let (mp, owner) = (v.sched.mp, v.sched.owner);
        let (last_mp, last_owner) = self.last;
        let w = &i.warps;
        if owner.is_some() && owner != last_owner {
            match last_owner.map(u64::from) {
                None => self.owner_first += 1,
                Some(p) if w.active >> p & 1 == 0 => self.owner_after_finish += 1,
                Some(p) if w.dep_load >> p & 1 == 1 => self.owner_after_dependent_load += 1,
                Some(p) if w.at_barrier >> p & 1 == 1 => self.owner_after_barrier += 1,
                Some(_) => self.owner_other += 1,
            }
        }
        self.owner_returned_to_ep += (!mp && last_owner.is_some()) as u64;
        self.ep_to_mp += (mp && !last_mp) as u64;
        self.mp_to_ep += (!mp && last_mp) as u64;
        self.last = (mp, owner);
    }

    /// Unit contention between the pickers: walks the schedulers in their priority order
    /// with the units each leaves to the next, as the scheduler block does.
    fn observe_units(&mut self, i: &IssueIn, v: &IssueView) {
        let s = &i.sched;
        let (mut sp, mut sfu, mut lsu) = (s.sp_free, s.sfu_free, s.lsu_free);
        let slot_blocked = if s.load_slot_free { 0 } else { s.gload };
        let wanting = s.ready & !v.wst.stall & !slot_blocked;
        let (mut took_sp, mut took_sfu, mut took_lsu) = (false, false, false);
        for k in 0..self.schedulers {
            let n = (s.first as usize + k) % self.schedulers;
            let pick = &v.sched.issue[n];
            let mine = wanting & self.owned[n];
            if k > 0 {
                self.both_want_last_sp += (took_sp && sp == 0 && mine & s.alu != 0) as u64;
                self.both_want_last_sfu += (took_sfu && sfu == 0 && mine & s.sfu != 0) as u64;
                self.both_want_lsu += (took_lsu && !lsu && mine & s.ldst != 0) as u64;
            }
            let Some(w) = *pick else { continue };
            let bit = 1u64 << w;
            if s.alu & bit != 0 && sp > 0 {
                sp -= 1;
                took_sp = sp == 0;
            }
            if s.sfu & bit != 0 && sfu > 0 {
                sfu -= 1;
                took_sfu = sfu == 0;
            }
            if s.ldst_take & bit != 0 && lsu {
                lsu = false;
                took_lsu = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mascar::ports::{SchedIn, SchedOut, WarpSignals, WstOut};

    fn issue(ready: u64, alu: u64, sfu: u64, ldst: u64, sp: u8, sfu_free: u8) -> IssueIn {
        IssueIn {
            warps: WarpSignals {
                active: u64::MAX,
                ..WarpSignals::default()
            },
            sched: SchedIn {
                ready,
                alu,
                sfu,
                ldst,
                ldst_take: ldst,
                sp_free: sp,
                sfu_free,
                lsu_free: true,
                load_slot_free: true,
                ..SchedIn::default()
            },
        }
    }

    fn view(picks: [Option<u8>; 2], mp: bool, owner: Option<u8>) -> IssueView {
        IssueView {
            sched: SchedOut {
                issue: [picks[0], picks[1], None, None],
                mp,
                owner,
            },
            ..IssueView::default()
        }
    }

    #[test]
    fn the_last_unit_taken_by_scheduler_zero_counts_when_scheduler_one_wants_it() {
        let mut c = Coverage::new(8, 2);
        // Warps 0 (scheduler 0) and 1 (scheduler 1) are SP warps; one SP lane.
        let i = issue(0b11, 0b11, 0, 0, 1, 1);
        c.observe_issue(&i, &view([Some(0), None], false, None));
        assert_eq!(c.both_want_last_sp, 1);
        // Two lanes: scheduler 1 still has one.
        let i = issue(0b11, 0b11, 0, 0, 2, 1);
        c.observe_issue(&i, &view([Some(0), Some(1)], false, None));
        assert_eq!(c.both_want_last_sp, 1);
        // Scheduler 1's warp is stalled by the WST: it does not want the unit.
        let i = issue(0b11, 0b11, 0, 0, 1, 1);
        let mut v = view([Some(0), None], false, None);
        v.wst = WstOut { mem: 0, stall: 0b10 };
        c.observe_issue(&i, &v);
        assert_eq!(c.both_want_last_sp, 1);
        // SFU and LD/ST alike; no unit free at the start is no contention.
        c.observe_issue(
            &issue(0b11, 0, 0b11, 0, 2, 1),
            &view([Some(0), None], false, None),
        );
        c.observe_issue(&issue(0b11, 0, 0b11, 0, 2, 0), &view([None, None], false, None));
        c.observe_issue(
            &issue(0b11, 0, 0, 0b11, 2, 1),
            &view([Some(0), None], false, None),
        );
        assert_eq!((c.both_want_last_sfu, c.both_want_lsu), (1, 1));
        // A shared access (ldst but not ldst_take) leaves the LD/ST unit to scheduler 1.
        let mut i = issue(0b11, 0, 0, 0b11, 2, 1);
        i.sched.ldst_take = 0b10;
        c.observe_issue(&i, &view([Some(0), Some(1)], false, None));
        assert_eq!(c.both_want_lsu, 1);
    }

    #[test]
    fn mode_and_owner_changes_are_split_by_the_previous_owner_state() {
        let mut c = Coverage::new(8, 2);
        let mut i = issue(0, 0, 0, 0, 2, 1);
        c.observe_issue(&i, &view([None; 2], true, None));
        c.observe_issue(&i, &view([None; 2], true, Some(1)));
        i.warps.dep_load = 0b10;
        c.observe_issue(&i, &view([None; 2], true, Some(2)));
        i.warps.at_barrier = 0b100;
        c.observe_issue(&i, &view([None; 2], true, Some(3)));
        i.warps.active = !0b1000;
        c.observe_issue(&i, &view([None; 2], true, Some(4)));
        c.observe_issue(&i, &view([None; 2], true, Some(5)));
        c.observe_issue(&i, &view([None; 2], true, Some(5)));
        c.observe_issue(&i, &view([None; 2], false, None));
        c.observe_issue(&i, &view([None; 2], true, None));
        c.observe_issue(&i, &view([None; 2], false, None));
        assert_eq!(
            (
                c.owner_first,
                c.owner_after_dependent_load,
                c.owner_after_barrier,
                c.owner_after_finish,
                c.owner_other,
                c.owner_returned_to_ep
            ),
            (1, 1, 1, 1, 1, 1)
        );
        assert_eq!((c.ep_to_mp, c.mp_to_ep), (2, 2));
    }

    #[test]
    fn queue_selections_count_by_outcome_and_service() {
        let mut c = Coverage::new(8, 2);
        let o = QueueOut {
            select: Some(3),
            hit_only: 0b1000,
            full: true,
            ..QueueOut::default()
        };
        let refused = QueueIn {
            refused: true,
            ..QueueIn::default()
        };
        c.observe_queue(&refused, &o);
        c.observe_queue(&QueueIn::default(), &o);
        let plain = QueueOut {
            select: Some(2),
            almost_full: true,
            ..o
        };
        c.observe_queue(&refused, &plain);
        c.observe_queue(&QueueIn::default(), &QueueOut::default());
        assert_eq!((c.retry_failure, c.retry_success), (2, 1));
        assert_eq!((c.hit_only_nack, c.hit_only_served), (1, 1));
        assert_eq!((c.queue_full, c.queue_almost_full), (3, 1));
        let mut sum = c;
        sum.add(&c);
        assert_eq!(sum.retry_failure, 4);
        assert_eq!(sum.counters().len(), 18);
        assert!(NOT_YET_REACHABLE
            .iter()
            .all(|(n, _)| c.counters().iter().any(|(m, _)| m == n)));
    }
}
