//! RTL twin of the scheduler block: the SM's two warp schedulers (LRR or GTO order, MAS's
//! Mem_Q/Comp_Q split), the EP/MP mode state machine and the owner register. The mode reads
//! saturation every cycle in EP and, with `check_at_handover`, in MP only when the owner
//! gives up the memory path (slide 11's flowchart); without it, every cycle.
//!
//! Per-warp signals are split by scheduler: lane `j` of scheduler `s` is warp `2j + s`, so
//! every vector is `H` bits (`H = warps / 2`, at most 32). Age is an age matrix: for each
//! warp, the lanes of each scheduler that are older (launched earlier, or in the same CTA
//! at a lower slot); a warp is the oldest of a set when no lane of the set is older.

use rust_hdl::prelude::*;

/// One scheduler's pick: the first eligible lane of its order (LRR: lowest lane after the
/// last issuer; GTO: the greedy lane, else the oldest), Mem_Q or Comp_Q first under MAS.
#[derive(LogicBlock)]
pub struct PickerRtl<const H: usize> {
    pub ready: Signal<In, Bits<H>>,
    pub alu: Signal<In, Bits<H>>,
    pub sfu: Signal<In, Bits<H>>,
    pub ldst: Signal<In, Bits<H>>,
    pub gload: Signal<In, Bits<H>>,
    pub wst_mem: Signal<In, Bits<H>>,
    pub wst_stall: Signal<In, Bits<H>>,
    /// Units left for this scheduler.
    pub sp_avail: Signal<In, Bit>,
    pub sfu_avail: Signal<In, Bit>,
    pub lsu_avail: Signal<In, Bit>,
    pub load_avail: Signal<In, Bit>,
    pub policy_gto: Signal<In, Bit>,
    pub mas_enable: Signal<In, Bit>,
    pub mp: Signal<In, Bit>,
    pub last_valid: Signal<In, Bit>,
    pub last_lane: Signal<In, Bits<6>>,
    pub greedy_valid: Signal<In, Bit>,
    pub greedy_lane: Signal<In, Bits<6>>,
    /// Age rows: the lanes older than lane j.
    pub older: [Signal<In, Bits<H>>; H],
    pub pick_valid: Signal<Out, Bit>,
    pub pick_lane: Signal<Out, Bits<6>>,
    pub pick_one_hot: Signal<Out, Bits<H>>,
    ones: Constant<Bits<H>>,
    one_hot: [Constant<Bits<H>>; H],
    below: [Constant<Bits<H>>; H],
    lane_id: [Constant<Bits<6>>; H],
    sp_block: Signal<Local, Bits<H>>,
    sfu_block: Signal<Local, Bits<H>>,
    lsu_block: Signal<Local, Bits<H>>,
    load_block: Signal<Local, Bits<H>>,
    eligible: Signal<Local, Bits<H>>,
    preferred: Signal<Local, Bits<H>>,
    set: Signal<Local, Bits<H>>,
    rr_after: Signal<Local, Bits<H>>,
    target: Signal<Local, Bits<H>>,
    greedy_hit: Signal<Local, Bit>,
}

fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

impl<const H: usize> Default for PickerRtl<H> {
    fn default() -> Self {
        Self {
            ready: Default::default(),
            alu: Default::default(),
            sfu: Default::default(),
            ldst: Default::default(),
            gload: Default::default(),
            wst_mem: Default::default(),
            wst_stall: Default::default(),
            sp_avail: Default::default(),
            sfu_avail: Default::default(),
            lsu_avail: Default::default(),
            load_avail: Default::default(),
            policy_gto: Default::default(),
            mas_enable: Default::default(),
            mp: Default::default(),
            last_valid: Default::default(),
            last_lane: Default::default(),
            greedy_valid: Default::default(),
            greedy_lane: Default::default(),
            older: std::array::from_fn(|_| Default::default()),
            pick_valid: Default::default(),
            pick_lane: Default::default(),
            pick_one_hot: Default::default(),
            ones: Constant::new(low_mask(H).into()),
            one_hot: std::array::from_fn(|j| Constant::new((1u64 << j).into())),
            below: std::array::from_fn(|j| Constant::new(low_mask(j).into())),
            lane_id: std::array::from_fn(|j| Constant::new((j as u64).into())),
            sp_block: Default::default(),
            sfu_block: Default::default(),
            lsu_block: Default::default(),
            load_block: Default::default(),
            eligible: Default::default(),
            preferred: Default::default(),
            set: Default::default(),
            rr_after: Default::default(),
            target: Default::default(),
            greedy_hit: Default::default(),
        }
    }
}

impl<const H: usize> Logic for PickerRtl<H> {
    #[hdl_gen]
    fn update(&mut self) {
        // Lanes whose unit is taken.
        self.sp_block.next = 0.into();
        if !self.sp_avail.val() {
            self.sp_block.next = self.alu.val();
        }
        self.sfu_block.next = 0.into();
        if !self.sfu_avail.val() {
            self.sfu_block.next = self.sfu.val();
        }
        self.lsu_block.next = 0.into();
        if !self.lsu_avail.val() {
            self.lsu_block.next = self.ldst.val();
        }
        self.load_block.next = 0.into();
        if !self.load_avail.val() {
            self.load_block.next = self.gload.val();
        }
        // Eligible: ready, not stalled by the WST, its unit free.
        self.eligible.next = self.ready.val()
            & !self.wst_stall.val()
            & !self.sp_block.val()
            & !self.sfu_block.val()
            & !self.lsu_block.val()
            & !self.load_block.val();
        // Mem_Q first in EP (requests leave early), Comp_Q first in MP; one queue without MAS.
        self.preferred.next = self.ones.val();
        if self.mas_enable.val() {
            if self.mp.val() {
                self.preferred.next = !self.wst_mem.val();
            } else {
                self.preferred.next = self.wst_mem.val();
            }
        }
        self.set.next = self.eligible.val() & !self.preferred.val();
        if (self.eligible.val() & self.preferred.val()).any() {
            self.set.next = self.eligible.val() & self.preferred.val();
        }
        // LRR: the lanes after the last issuer, when the set has any.
        self.rr_after.next = 0.into();
        if self.last_valid.val() {
            self.rr_after.next = self.set.val() & !((bits::<H>(2) << self.last_lane.val()) - 1);
        }
        self.target.next = self.set.val();
        if !self.policy_gto.val() & self.rr_after.val().any() {
            self.target.next = self.rr_after.val();
        }
        self.greedy_hit.next = self.policy_gto.val()
            & self.greedy_valid.val()
            & self.set.val().get_bit(self.greedy_lane.val().index());
        // The first lane of the target: exactly one lane passes the test below.
        self.pick_valid.next = self.target.val().any();
        self.pick_lane.next = 0.into();
        self.pick_one_hot.next = 0.into();
        for j in 0..H {
            if self.target.val().get_bit(j) {
                if self.policy_gto.val() {
                    if self.greedy_hit.val() {
                        if self.greedy_lane.val() == self.lane_id[j].val() {
                            self.pick_lane.next = self.lane_id[j].val();
                            self.pick_one_hot.next = self.one_hot[j].val();
                        }
                    } else if !(self.target.val() & self.older[j].val()).any() {
                        self.pick_lane.next = self.lane_id[j].val();
                        self.pick_one_hot.next = self.one_hot[j].val();
                    }
                } else if !(self.target.val() & self.below[j].val()).any() {
                    self.pick_lane.next = self.lane_id[j].val();
                    self.pick_one_hot.next = self.one_hot[j].val();
                }
            }
        }
    }
}

/// The SM's scheduler block: two pickers, the order state, the age matrix, the mode state
/// machine and the owner register.
#[derive(LogicBlock)]
pub struct SchedulerRtl<const H: usize> {
    pub clock: Signal<In, Clock>,
    /// Run constants: GTO order (else LRR); MAS on; MP reads saturation only when the owner
    /// gives up the path (else every cycle); cycles saturation counts after it ends.
    pub policy_gto: Signal<In, Bit>,
    pub mas_enable: Signal<In, Bit>,
    pub check_at_handover: Signal<In, Bit>,
    pub mp_exit_hold: Signal<In, Bits<16>>,
    /// Per scheduler, per lane: head may issue if its unit is free.
    pub ready: [Signal<In, Bits<H>>; 2],
    /// Per scheduler, per lane: head instruction class.
    pub alu: [Signal<In, Bits<H>>; 2],
    pub sfu: [Signal<In, Bits<H>>; 2],
    pub ldst: [Signal<In, Bits<H>>; 2],
    pub ldst_take: [Signal<In, Bits<H>>; 2],
    pub gload: [Signal<In, Bits<H>>; 2],
    /// The warp status table as read this cycle.
    pub wst_mem: [Signal<In, Bits<H>>; 2],
    pub wst_stall: [Signal<In, Bits<H>>; 2],
    /// From the WRC.
    pub owner_candidates: [Signal<In, Bits<H>>; 2],
    pub release_owner: Signal<In, Bit>,
    /// Warps launched (one CTA) / finished since the last cycle.
    pub launched: [Signal<In, Bits<H>>; 2],
    pub exited: [Signal<In, Bits<H>>; 2],
    pub sp_free: Signal<In, Bits<8>>,
    pub sfu_free: Signal<In, Bits<8>>,
    pub lsu_free: Signal<In, Bit>,
    pub load_slot_free: Signal<In, Bit>,
    pub saturated: Signal<In, Bit>,
    /// The warp each scheduler issues.
    pub issue_valid: [Signal<Out, Bit>; 2],
    pub issue_warp: [Signal<Out, Bits<6>>; 2],
    /// Mode (Memory Priority) and owner registers.
    pub mp: Signal<Out, Bit>,
    pub owner_valid: Signal<Out, Bit>,
    pub owner: Signal<Out, Bits<6>>,
    pub picker0: PickerRtl<H>,
    pub picker1: PickerRtl<H>,
    mp_r: DFF<Bit>,
    hold_r: DFF<Bits<16>>,
    owner_valid_r: DFF<Bit>,
    owner_r: DFF<Bits<6>>,
    last_valid_r: [DFF<Bit>; 2],
    last_lane_r: [DFF<Bits<6>>; 2],
    greedy_valid_r: [DFF<Bit>; 2],
    greedy_lane_r: [DFF<Bits<6>>; 2],
    /// Age matrix: lanes of scheduler 0 / 1 older than lane j of scheduler 0 / 1.
    older00: [DFF<Bits<H>>; H],
    older01: [DFF<Bits<H>>; H],
    older11: [DFF<Bits<H>>; H],
    older10: [DFF<Bits<H>>; H],
    below: [Constant<Bits<H>>; H],
    at_or_below: [Constant<Bits<H>>; H],
    warp_id0: [Constant<Bits<6>>; H],
    warp_id1: [Constant<Bits<6>>; H],
    owner_pick_valid: Signal<Local, Bit>,
    owner_pick: Signal<Local, Bits<6>>,
    /// Saturated, or within the hold after it.
    sat_held: Signal<Local, Bit>,
    mp_next: Signal<Local, Bit>,
}

impl<const H: usize> Default for SchedulerRtl<H> {
    fn default() -> Self {
        assert!((1..=32).contains(&H), "1 to 32 lanes per scheduler");
        Self {
            clock: Default::default(),
            policy_gto: Default::default(),
            mas_enable: Default::default(),
            check_at_handover: Default::default(),
            mp_exit_hold: Default::default(),
            ready: Default::default(),
            alu: Default::default(),
            sfu: Default::default(),
            ldst: Default::default(),
            ldst_take: Default::default(),
            gload: Default::default(),
            wst_mem: Default::default(),
            wst_stall: Default::default(),
            owner_candidates: Default::default(),
            release_owner: Default::default(),
            launched: Default::default(),
            exited: Default::default(),
            sp_free: Default::default(),
            sfu_free: Default::default(),
            lsu_free: Default::default(),
            load_slot_free: Default::default(),
            saturated: Default::default(),
            issue_valid: Default::default(),
            issue_warp: Default::default(),
            mp: Default::default(),
            owner_valid: Default::default(),
            owner: Default::default(),
            picker0: Default::default(),
            picker1: Default::default(),
            mp_r: Default::default(),
            hold_r: Default::default(),
            owner_valid_r: Default::default(),
            owner_r: Default::default(),
            last_valid_r: Default::default(),
            last_lane_r: Default::default(),
            greedy_valid_r: Default::default(),
            greedy_lane_r: Default::default(),
            older00: std::array::from_fn(|_| Default::default()),
            older01: std::array::from_fn(|_| Default::default()),
            older11: std::array::from_fn(|_| Default::default()),
            older10: std::array::from_fn(|_| Default::default()),
            below: std::array::from_fn(|j| Constant::new(low_mask(j).into())),
            at_or_below: std::array::from_fn(|j| Constant::new(low_mask(j + 1).into())),
            warp_id0: std::array::from_fn(|j| Constant::new((2 * j as u64).into())),
            warp_id1: std::array::from_fn(|j| Constant::new((2 * j as u64 + 1).into())),
            owner_pick_valid: Default::default(),
            owner_pick: Default::default(),
            sat_held: Default::default(),
            mp_next: Default::default(),
        }
    }
}

impl<const H: usize> Logic for SchedulerRtl<H> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mp_r, hold_r, owner_valid_r, owner_r);
        for s in 0..2 {
            self.last_valid_r[s].clock.next = self.clock.val();
            self.last_valid_r[s].d.next = self.last_valid_r[s].q.val();
            self.last_lane_r[s].clock.next = self.clock.val();
            self.last_lane_r[s].d.next = self.last_lane_r[s].q.val();
            self.greedy_valid_r[s].clock.next = self.clock.val();
            self.greedy_valid_r[s].d.next = self.greedy_valid_r[s].q.val();
            self.greedy_lane_r[s].clock.next = self.clock.val();
            self.greedy_lane_r[s].d.next = self.greedy_lane_r[s].q.val();
        }
        self.mp.next = self.mp_r.q.val();
        self.owner_valid.next = self.owner_valid_r.q.val();
        self.owner.next = self.owner_r.q.val();

        // Scheduler 0 picks first with every free unit.
        self.picker0.ready.next = self.ready[0].val();
        self.picker0.alu.next = self.alu[0].val();
        self.picker0.sfu.next = self.sfu[0].val();
        self.picker0.ldst.next = self.ldst[0].val();
        self.picker0.gload.next = self.gload[0].val();
        self.picker0.wst_mem.next = self.wst_mem[0].val();
        self.picker0.wst_stall.next = self.wst_stall[0].val();
        self.picker0.sp_avail.next = self.sp_free.val() != 0;
        self.picker0.sfu_avail.next = self.sfu_free.val() != 0;
        self.picker0.lsu_avail.next = self.lsu_free.val();
        self.picker0.load_avail.next = self.load_slot_free.val();
        self.picker0.policy_gto.next = self.policy_gto.val();
        self.picker0.mas_enable.next = self.mas_enable.val();
        self.picker0.mp.next = self.mp_r.q.val();
        self.picker0.last_valid.next = self.last_valid_r[0].q.val();
        self.picker0.last_lane.next = self.last_lane_r[0].q.val();
        self.picker0.greedy_valid.next = self.greedy_valid_r[0].q.val();
        self.picker0.greedy_lane.next = self.greedy_lane_r[0].q.val();
        // Scheduler 1 gets the units scheduler 0's pick left.
        self.picker1.ready.next = self.ready[1].val();
        self.picker1.alu.next = self.alu[1].val();
        self.picker1.sfu.next = self.sfu[1].val();
        self.picker1.ldst.next = self.ldst[1].val();
        self.picker1.gload.next = self.gload[1].val();
        self.picker1.wst_mem.next = self.wst_mem[1].val();
        self.picker1.wst_stall.next = self.wst_stall[1].val();
        self.picker1.sp_avail.next = (self.sp_free.val() > 1)
            | ((self.sp_free.val() == 1) & !(self.alu[0].val() & self.picker0.pick_one_hot.val()).any());
        self.picker1.sfu_avail.next = (self.sfu_free.val() > 1)
            | ((self.sfu_free.val() == 1) & !(self.sfu[0].val() & self.picker0.pick_one_hot.val()).any());
        self.picker1.lsu_avail.next =
            self.lsu_free.val() & !(self.ldst_take[0].val() & self.picker0.pick_one_hot.val()).any();
        self.picker1.load_avail.next = self.load_slot_free.val();
        self.picker1.policy_gto.next = self.policy_gto.val();
        self.picker1.mas_enable.next = self.mas_enable.val();
        self.picker1.mp.next = self.mp_r.q.val();
        self.picker1.last_valid.next = self.last_valid_r[1].q.val();
        self.picker1.last_lane.next = self.last_lane_r[1].q.val();
        self.picker1.greedy_valid.next = self.greedy_valid_r[1].q.val();
        self.picker1.greedy_lane.next = self.greedy_lane_r[1].q.val();
        for j in 0..H {
            self.picker0.older[j].next = self.older00[j].q.val();
            self.picker1.older[j].next = self.older11[j].q.val();
        }
        self.issue_valid[0].next = self.picker0.pick_valid.val();
        self.issue_valid[1].next = self.picker1.pick_valid.val();
        self.issue_warp[0].next = self.picker0.pick_lane.val() << 1;
        self.issue_warp[1].next = (self.picker1.pick_lane.val() << 1) | 1;

        // Order state: the issuer becomes the last / greedy warp; a finished greedy warp
        // stops being greedy.
        if self.picker0.pick_valid.val() {
            self.last_valid_r[0].d.next = true;
            self.last_lane_r[0].d.next = self.picker0.pick_lane.val();
            self.greedy_valid_r[0].d.next = true;
            self.greedy_lane_r[0].d.next = self.picker0.pick_lane.val();
        } else if self.exited[0]
            .val()
            .get_bit(self.greedy_lane_r[0].q.val().index())
        {
            self.greedy_valid_r[0].d.next = false;
        }
        if self.picker1.pick_valid.val() {
            self.last_valid_r[1].d.next = true;
            self.last_lane_r[1].d.next = self.picker1.pick_lane.val();
            self.greedy_valid_r[1].d.next = true;
            self.greedy_lane_r[1].d.next = self.picker1.pick_lane.val();
        } else if self.exited[1]
            .val()
            .get_bit(self.greedy_lane_r[1].q.val().index())
        {
            self.greedy_valid_r[1].d.next = false;
        }
        // Age matrix: a launched warp is younger than every other warp and older than the
        // warps of its CTA at higher slots; the others forget the launched lanes.
        for j in 0..H {
            self.older00[j].clock.next = self.clock.val();
            self.older01[j].clock.next = self.clock.val();
            self.older11[j].clock.next = self.clock.val();
            self.older10[j].clock.next = self.clock.val();
            self.older00[j].d.next = self.older00[j].q.val() & !self.launched[0].val();
            self.older01[j].d.next = self.older01[j].q.val() & !self.launched[1].val();
            self.older11[j].d.next = self.older11[j].q.val() & !self.launched[1].val();
            self.older10[j].d.next = self.older10[j].q.val() & !self.launched[0].val();
            if self.launched[0].val().get_bit(j) {
                self.older00[j].d.next =
                    !self.launched[0].val() | (self.launched[0].val() & self.below[j].val());
                self.older01[j].d.next =
                    !self.launched[1].val() | (self.launched[1].val() & self.below[j].val());
            }
            if self.launched[1].val().get_bit(j) {
                self.older11[j].d.next =
                    !self.launched[1].val() | (self.launched[1].val() & self.below[j].val());
                self.older10[j].d.next =
                    !self.launched[0].val() | (self.launched[0].val() & self.at_or_below[j].val());
            }
        }

        // MAS: the oldest owner candidate (no candidate of either scheduler is older).
        self.owner_pick_valid.next =
            self.owner_candidates[0].val().any() | self.owner_candidates[1].val().any();
        self.owner_pick.next = 0.into();
        for j in 0..H {
            if self.owner_candidates[0].val().get_bit(j)
                & !(self.owner_candidates[0].val() & self.older00[j].q.val()).any()
                & !(self.owner_candidates[1].val() & self.older01[j].q.val()).any()
            {
                self.owner_pick.next = self.warp_id0[j].val();
            }
            if self.owner_candidates[1].val().get_bit(j)
                & !(self.owner_candidates[1].val() & self.older11[j].q.val()).any()
                & !(self.owner_candidates[0].val() & self.older10[j].q.val()).any()
            {
                self.owner_pick.next = self.warp_id1[j].val();
            }
        }
        // Saturation as the mode machine reads it: the flag, or within the hold after it
        // (counted down in MP).
        self.sat_held.next = false;
        if self.mas_enable.val() {
            if self.saturated.val() {
                self.sat_held.next = true;
                self.hold_r.d.next = self.mp_exit_hold.val();
            } else if self.mp_r.q.val() & (self.hold_r.q.val() != 0) {
                self.sat_held.next = true;
                self.hold_r.d.next = self.hold_r.q.val() - 1;
            }
        }
        // Mode: read every cycle in EP; in MP (at hand-over) only when the owner gives up the
        // path or none holds it yet, else MP and the owner stay. Leaving MP clears the owner.
        self.mp_next.next = self.sat_held.val();
        if self.check_at_handover.val()
            & self.mp_r.q.val()
            & !self.release_owner.val()
            & self.owner_valid_r.q.val()
        {
            self.mp_next.next = true;
        }
        self.mp_r.d.next = self.mp_next.val();
        if !self.mp_next.val() {
            self.owner_valid_r.d.next = false;
        } else if self.release_owner.val() | !self.owner_valid_r.q.val() {
            self.owner_valid_r.d.next = self.owner_pick_valid.val();
            self.owner_r.d.next = self.owner_pick.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mascar::scheduler::tests::MODE_STEPS;

    fn settle(uut: &mut SchedulerRtl<4>) {
        assert!(simulate(uut, 200), "settles");
    }

    /// One cycle: inputs, settle, rising edge, settle, falling edge, settle; the mode and
    /// owner registers after it.
    fn cycle(
        uut: &mut SchedulerRtl<4>,
        saturated: bool,
        release: bool,
        candidates: u64,
    ) -> (bool, Option<u8>) {
        let halves = crate::rtl::harness::split(candidates);
        uut.owner_candidates[0].next = halves[0].into();
        uut.owner_candidates[1].next = halves[1].into();
        uut.saturated.next = saturated;
        uut.release_owner.next = release;
        settle(uut);
        uut.clock.next = true.into();
        settle(uut);
        uut.clock.next = false.into();
        settle(uut);
        uut.launched[0].next = 0.into();
        uut.launched[1].next = 0.into();
        let owner = uut.owner.val().to_u64() as u8;
        (uut.mp.val(), uut.owner_valid.val().then_some(owner))
    }

    #[test]
    fn mode_decided_at_hand_over_or_every_cycle_as_the_reference() {
        // The behavioural twin's transition table (`mascar::scheduler`), on the RTL block.
        for (m, at_handover) in [true, false].into_iter().enumerate() {
            let mut uut = SchedulerRtl::<4>::default();
            uut.connect_all();
            uut.mas_enable.next = true;
            uut.check_at_handover.next = at_handover;
            uut.mp_exit_hold.next = 0.into();
            uut.launched[0].next = 0b1111.into();
            uut.launched[1].next = 0b1111.into();
            cycle(&mut uut, false, false, 0);
            for (n, &((saturated, release, candidates), want)) in MODE_STEPS.iter().enumerate() {
                let got = cycle(&mut uut, saturated, release, candidates);
                assert_eq!(got, want[m], "at_handover {at_handover}, step {n}");
            }
        }
    }

    #[test]
    fn scheduler_generates_verilog() {
        let mut uut = SchedulerRtl::<4>::default();
        uut.connect_all();
        let v = generate_verilog(&uut);
        std::fs::write("/tmp/sched4.v", &v).unwrap();
        assert!(v.contains("module top"));
    }
}
