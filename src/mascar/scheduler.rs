//! The scheduler block (slides 11–12), behavioural twin: the SM's warp schedulers with their
//! base order (LRR, GTO or OWL), MAS's split of that order into Mem_Q and Comp_Q, the EP/MP
//! mode state machine and the owner register shared by the schedulers.
//!
//! Moore outputs: the mode and owner in force in a cycle are the registers' values; the
//! saturation flag and the WRC's release/candidates of cycle *t* decide them for *t + 1*.
//! By default (`mas_mode_check = handover`) MP reads saturation only when its owner gives
//! up the memory path, as the authors' flowchart does; `every_cycle` reads it every cycle.
//! Ages are launch stamps (one per CTA launch; ties broken by the lower slot, which is the
//! order a CTA's warps take their slots), exactly what the RTL twin stores.

use super::ports::{BaseOrder, MasModeCheck, SchedIn, SchedOut, SchedParams, MAX_SCHEDULERS};
use crate::sched::{Order, Owl};

#[derive(Clone, Debug)]
pub struct Scheduler {
    p: SchedParams,
    schedulers: usize,
    /// Per scheduler: the warp slots it owns.
    owned: [u64; MAX_SCHEDULERS],
    mp: bool,
    /// Cycles MP still lasts after saturation ended.
    hold_left: u32,
    owner: Option<u8>,
    /// Launch stamp per warp slot (smaller = older).
    stamp: [u32; 64],
    next_stamp: u32,
    /// LRR: slot that issued last per scheduler (63 before any issue).
    last: [u8; MAX_SCHEDULERS],
    /// GTO: the greedy warp per scheduler.
    greedy: [Option<u8>; MAX_SCHEDULERS],
    /// OWL's CTA groups per scheduler (behavioural only).
    owl: Vec<Owl>,
    /// OWL launches (slot, CTA, launch sequence) since the last clock edge: applied at the
    /// edge after that cycle's exits, so a slot freed and refilled in one cycle keeps its
    /// new warp.
    owl_pending: Vec<(u8, u32, u64)>,
    scratch: Order,
}

impl Scheduler {
    pub fn new(p: SchedParams, warps: usize, schedulers: usize, owl_parity: Option<u32>) -> Self {
        let mut owned = [0u64; MAX_SCHEDULERS];
        for w in 0..warps {
            owned[w % schedulers] |= 1 << w;
        }
        Scheduler {
            p,
            schedulers,
            owned,
            mp: false,
            hold_left: 0,
            owner: None,
            stamp: [0; 64],
            next_stamp: 0,
            last: [63; MAX_SCHEDULERS],
            greedy: [None; MAX_SCHEDULERS],
            owl: match p.base {
                BaseOrder::Owl => (0..schedulers).map(|_| Owl::new(owl_parity)).collect(),
                _ => Vec::new(),
            },
            owl_pending: Vec::with_capacity(64),
            scratch: Order::default(),
        }
    }

    /// The registers as `new` leaves them (a synchronous reset; the run constants stay).
    fn power_on(&mut self) {
        self.mp = false;
        self.hold_left = 0;
        self.owner = None;
        self.stamp = [0; 64];
        self.next_stamp = 0;
        self.last = [63; MAX_SCHEDULERS];
        self.greedy = [None; MAX_SCHEDULERS];
        for o in &mut self.owl {
            o.clear();
        }
        self.owl_pending.clear();
    }

    pub fn params(&self) -> SchedParams {
        self.p
    }

    /// OWL groups warps by CTA, which the ports do not carry: the SM tells it directly.
    pub fn owl_launched(&mut self, slot: u8, cta: u32, seq: u64) {
        if !self.owl.is_empty() {
            self.owl_pending.push((slot, cta, seq));
        }
    }

    /// The registers a clock edge that issues nothing and launches and retires no warp can
    /// change (the mode machine's, and OWL's launch list): equal before and after such an
    /// edge, the edge changed nothing (the cycle skip, `gpu/skip.rs`).
    pub fn idle_registers(&self) -> (bool, Option<u8>, u32, usize) {
        (self.mp, self.owner, self.hold_left, self.owl_pending.len())
    }

    /// The mode and owner registers.
    pub fn registers(&self) -> (bool, Option<u8>) {
        (self.mp, self.owner)
    }

    /// Whether slot `a` is older than slot `b`.
    fn older(&self, a: u8, b: u8) -> bool {
        (self.stamp[a as usize], a) < (self.stamp[b as usize], b)
    }

    fn oldest(&self, mask: u64) -> Option<u8> {
        let mut best: Option<u8> = None;
        let mut m = mask;
        while m != 0 {
            let w = m.trailing_zeros() as u8;
            m &= m - 1;
            if best.is_none_or(|b| self.older(w, b)) {
                best = Some(w);
            }
        }
        best
    }

    /// The first warp of `mask` in scheduler `s`'s base order.
    fn first_in_order(&mut self, s: usize, mask: u64) -> Option<u8> {
        if mask == 0 {
            return None;
        }
        match self.p.base {
            BaseOrder::Lrr => {
                let last = self.last[s];
                let after = if last >= 63 { 0 } else { u64::MAX << (last + 1) };
                let m = if mask & after != 0 { mask & after } else { mask };
                Some(m.trailing_zeros() as u8)
            }
            BaseOrder::Gto => match self.greedy[s] {
                Some(g) if mask >> g & 1 == 1 => Some(g),
                _ => self.oldest(mask),
            },
            BaseOrder::Owl => {
                self.scratch.clear();
                self.owl[s].order(mask, &mut self.scratch);
                self.scratch.as_slice().first().copied()
            }
        }
    }

    /// Settles: each scheduler in turn, from `first`, picks the first warp of its order that
    /// is ready, not stalled by the WST and whose unit is still free.
    pub fn eval(&mut self, i: &SchedIn) -> SchedOut {
        let mut out = SchedOut {
            issue: [None; MAX_SCHEDULERS],
            mp: self.mp,
            owner: self.owner,
        };
        let (mut sp, mut sfu, mut lsu) = (i.sp_free, i.sfu_free, i.lsu_free);
        let base = i.ready & !i.wst.stall;
        if base == 0 {
            return out;
        }
        // Mem_Q first in EP (requests leave early), Comp_Q first in MP.
        let preferred = if !self.p.mas {
            u64::MAX
        } else if self.mp {
            !i.wst.mem
        } else {
            i.wst.mem
        };
        for k in 0..self.schedulers {
            let s = (i.first as usize + k) % self.schedulers;
            let mut busy = 0;
            if sp == 0 {
                busy |= i.alu;
            }
            if sfu == 0 {
                busy |= i.sfu;
            }
            if !lsu {
                busy |= i.ldst;
            }
            if !i.load_slot_free {
                busy |= i.gload;
            }
            let eligible = base & self.owned[s] & !busy;
            let pick = match self.first_in_order(s, eligible & preferred) {
                Some(w) => Some(w),
                None => self.first_in_order(s, eligible & !preferred),
            };
            if let Some(w) = pick {
                let bit = 1u64 << w;
                sp -= (i.alu & bit != 0) as u8;
                sfu -= (i.sfu & bit != 0) as u8;
                lsu &= i.ldst_take & bit == 0;
            }
            out.issue[s] = pick;
        }
        out
    }

    /// Clock edge: order state from this cycle's issues, exits and launches; mode and owner
    /// from the saturation flag and the WRC's outputs.
    pub fn clock(&mut self, i: &SchedIn, out: &SchedOut) {
        if i.reset {
            self.power_on();
            return;
        }
        for s in 0..self.schedulers {
            match out.issue[s] {
                Some(w) => {
                    self.last[s] = w;
                    self.greedy[s] = Some(w);
                    if let Some(o) = self.owl.get_mut(s) {
                        o.issued(w);
                    }
                }
                None => {
                    if self.greedy[s].is_some_and(|g| i.exited >> g & 1 == 1) {
                        self.greedy[s] = None;
                    }
                }
            }
        }
        if !self.owl.is_empty() {
            let mut m = i.exited;
            while m != 0 {
                let w = m.trailing_zeros() as u8;
                m &= m - 1;
                self.owl[w as usize % self.schedulers].exited(w);
            }
            for (slot, cta, seq) in self.owl_pending.drain(..) {
                self.owl[slot as usize % self.schedulers].launched(slot, cta, seq);
            }
        }
        if i.launched != 0 {
            let mut m = i.launched;
            while m != 0 {
                self.stamp[m.trailing_zeros() as usize] = self.next_stamp;
                m &= m - 1;
            }
            self.next_stamp = self.next_stamp.wrapping_add(1);
        }
        if !self.p.mas {
            return;
        }
        // Saturation as the mode machine sees it: the flag, or within `mp_exit_hold` cycles
        // of it (the hold counts only in MP, which a saturated cycle always leaves us in).
        let saturated = i.saturated || (self.mp && self.hold_left > 0);
        if i.saturated {
            self.hold_left = self.p.mp_exit_hold;
        } else if self.mp && self.hold_left > 0 {
            self.hold_left -= 1;
        }
        // Where the flowchart (slide 11) checks saturation: every cycle in EP; in MP when the
        // owner gives up the path (the WRC's release) or none holds it yet. Elsewhere MP and
        // its owner stay. `every_cycle` checks in every cycle.
        let check = self.p.mode_check == MasModeCheck::EveryCycle
            || !self.mp
            || i.release_owner
            || self.owner.is_none();
        let mp = if check { saturated } else { true };
        let kept = if mp && !i.release_owner { self.owner } else { None };
        // The oldest ready warp of Mem_Q becomes the owner.
        self.owner = match kept {
            Some(o) => Some(o),
            None if mp => self.oldest(i.owner_candidates),
            None => None,
        };
        self.mp = mp;
    }

    /// One cycle: settle, then the clock edge.
    pub fn step(&mut self, i: &SchedIn) -> SchedOut {
        let out = self.eval(i);
        self.clock(i, &out);
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mascar::ports::WstOut;

    fn sched(base: BaseOrder, mas: bool) -> Scheduler {
        sched_with(base, mas, MasModeCheck::Handover, 0)
    }

    fn sched_with(base: BaseOrder, mas: bool, mode_check: MasModeCheck, hold: u32) -> Scheduler {
        Scheduler::new(
            SchedParams {
                base,
                mas,
                mode_check,
                mp_exit_hold: hold,
            },
            8,
            2,
            None,
        )
    }

    fn alu_ready(ready: u64) -> SchedIn {
        SchedIn {
            ready,
            alu: ready,
            sp_free: 2,
            sfu_free: 1,
            lsu_free: true,
            load_slot_free: true,
            ..SchedIn::default()
        }
    }

    #[test]
    fn lrr_rotates_per_scheduler_and_moves_only_on_issue() {
        let mut s = sched(BaseOrder::Lrr, false);
        let out = s.step(&alu_ready(0b1111_1111));
        assert_eq!(&out.issue[..2], &[Some(0), Some(1)]);
        let out = s.step(&alu_ready(0b1111_1111));
        assert_eq!(&out.issue[..2], &[Some(2), Some(3)]);
        s.step(&alu_ready(0));
        let out = s.step(&alu_ready(0b0000_0011));
        assert_eq!(&out.issue[..2], &[Some(0), Some(1)], "wraps around");
    }

    #[test]
    fn the_scheduler_named_first_takes_the_ldst_unit() {
        // GPGPU-Sim 4.x `shader_core_ctx::issue`: the scheduler `Issue_Prio` names goes
        // first and takes the one LD/ST issue slot; the other gets what is left.
        for first in 0..2u8 {
            let mut s = sched(BaseOrder::Lrr, false);
            let mut i = alu_ready(0b11);
            i.alu = 0;
            i.ldst = 0b11;
            i.ldst_take = 0b11;
            i.first = first;
            let out = s.step(&i);
            let want = if first == 0 {
                [Some(0), None]
            } else {
                [None, Some(1)]
            };
            assert_eq!(&out.issue[..2], &want, "first {first}");
        }
    }

    #[test]
    fn units_left_by_scheduler_zero_bound_scheduler_one() {
        let mut s = sched(BaseOrder::Lrr, false);
        let mut i = alu_ready(0);
        i.ready = 0b11;
        i.alu = 0;
        i.sfu = 0b11;
        let out = s.step(&i);
        assert_eq!(&out.issue[..2], &[Some(0), None], "one SFU");
        i.sfu = 0;
        i.ldst = 0b11;
        i.ldst_take = 0b11;
        let out = s.step(&i);
        assert_eq!(&out.issue[..2], &[Some(0), None], "one LD/ST unit");
    }

    #[test]
    fn gto_keeps_the_greedy_warp_then_oldest() {
        let mut s = sched(BaseOrder::Gto, false);
        let mut i = alu_ready(0);
        i.launched = 0b1100;
        s.step(&i);
        i.launched = 0b0011;
        s.step(&i);
        let out = s.step(&alu_ready(0b1111));
        assert_eq!(&out.issue[..2], &[Some(2), Some(3)], "older CTA first");
        let out = s.step(&alu_ready(0b0101));
        assert_eq!(out.issue[0], Some(2), "greedy");
        let mut i = alu_ready(0b0001);
        i.exited = 0b0100;
        assert_eq!(s.step(&i).issue[0], Some(0));
    }

    #[test]
    fn mas_mode_owner_and_queue_split() {
        let mut s = sched(BaseOrder::Lrr, true);
        let mut i = alu_ready(0b1111);
        i.alu = 0b1100;
        i.ldst = 0b0011;
        i.ldst_take = 0b0011;
        i.wst = WstOut {
            mem: 0b0011,
            stall: 0,
        };
        let out = s.step(&i);
        assert_eq!(
            (out.mp, &out.issue[..2]),
            (false, &[Some(0), Some(3)][..]),
            "EP: Mem_Q first; warp 1 finds the LD/ST unit taken"
        );
        i.saturated = true;
        i.owner_candidates = 0b0010;
        s.step(&i);
        assert_eq!(
            s.registers(),
            (true, Some(1)),
            "MP from the next cycle, oldest candidate"
        );
        let out = s.eval(&i);
        assert_eq!(&out.issue[..2], &[Some(2), Some(3)], "MP: Comp_Q first");
        i.release_owner = true;
        i.owner_candidates = 0b0001;
        s.step(&i);
        assert_eq!(s.registers(), (true, Some(0)), "hand-over");
        i.saturated = false;
        s.step(&i);
        assert_eq!(s.registers(), (false, None), "leaving MP clears the owner");
    }

    /// The mode machine's transitions, one cycle at a time: (saturated, release, candidates)
    /// in, (mp, owner) registers out. Shared with the RTL twin's test (`rtl::scheduler`).
    /// One step: the inputs and the registers after it under each mode check.
    pub(crate) type ModeStep = ((bool, bool, u64), [(bool, Option<u8>); 2]);
    pub(crate) const MODE_STEPS: [ModeStep; 13] = [
        // ((saturated, release, candidates), [handover, every_cycle])
        ((false, false, 0b0010), [(false, None), (false, None)]), // EP stays EP
        ((true, false, 0), [(true, None), (true, None)]),         // EP → MP, nobody to own
        ((false, false, 0), [(false, None), (false, None)]),      // owner-less MP checks: EP
        ((true, false, 0b0110), [(true, Some(1)), (true, Some(1))]), // EP → MP, oldest owns
        ((false, false, 0b0100), [(true, Some(1)), (false, None)]), // owner kept / flap to EP
        ((true, false, 0b0100), [(true, Some(1)), (true, Some(2))]), // every_cycle re-enters
        ((false, false, 0b0100), [(true, Some(1)), (false, None)]),
        ((false, true, 0b0100), [(false, None), (false, None)]), // release, unsaturated: EP
        ((true, false, 0b0100), [(true, Some(2)), (true, Some(2))]),
        ((true, true, 0b0001), [(true, Some(0)), (true, Some(0))]), // release, saturated: next
        ((false, true, 0), [(false, None), (false, None)]),         // release, nobody: EP
        ((true, false, 0), [(true, None), (true, None)]),
        ((true, false, 0b1000), [(true, Some(3)), (true, Some(3))]), // first candidate owns
    ];

    #[test]
    fn mode_decided_at_hand_over_or_every_cycle() {
        for (m, check) in [MasModeCheck::Handover, MasModeCheck::EveryCycle]
            .into_iter()
            .enumerate()
        {
            let mut s = sched_with(BaseOrder::Lrr, true, check, 0);
            let mut i = alu_ready(0);
            i.launched = 0b1111_1111;
            s.step(&i);
            for (n, &((saturated, release, candidates), want)) in MODE_STEPS.iter().enumerate() {
                i = alu_ready(0);
                i.saturated = saturated;
                i.release_owner = release;
                i.owner_candidates = candidates;
                s.step(&i);
                assert_eq!(s.registers(), want[m], "{check:?}, step {n}");
            }
        }
    }

    #[test]
    fn hold_keeps_saturation_for_the_hand_over_check() {
        // Hold 2: a hand-over one or two cycles after the last saturated cycle still goes to
        // the next owner; at the third the SM returns to EP.
        for (late, want) in [(1, (true, Some(2))), (2, (true, Some(2))), (3, (false, None))] {
            let mut s = sched_with(BaseOrder::Lrr, true, MasModeCheck::Handover, 2);
            let mut i = alu_ready(0);
            i.saturated = true;
            i.owner_candidates = 0b0010;
            s.step(&i);
            i.saturated = false;
            for _ in 1..late {
                s.step(&i);
            }
            assert_eq!(s.registers(), (true, Some(1)));
            i.release_owner = true;
            i.owner_candidates = 0b0100;
            s.step(&i);
            assert_eq!(s.registers(), want, "hand-over {late} cycles after saturation");
        }
    }
}
