//! RTL twin of the warp readiness checker: combinational, per scheduler half (lane `j` of
//! scheduler `s` is warp `2j + s`). From the I-buffer op type, the scoreboard, the pending
//! load dependency, the owner id and the mode it writes the WST and tells the scheduler
//! whether the owner must release and which warps could take over.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct WrcRtl<const H: usize> {
    pub active: [Signal<In, Bits<H>>; 2],
    pub has_inst: [Signal<In, Bits<H>>; 2],
    pub is_mem: [Signal<In, Bits<H>>; 2],
    pub sb_ready: [Signal<In, Bits<H>>; 2],
    pub dep_load: [Signal<In, Bits<H>>; 2],
    pub at_barrier: [Signal<In, Bits<H>>; 2],
    pub mem_in_flight: [Signal<In, Bits<H>>; 2],
    /// No miss of the SM outstanding (no MSHR in use, miss queue empty).
    pub l1_quiet: Signal<In, Bit>,
    /// A non-owner's refused request holds the LD/ST head (MP with CAR): the path is as free
    /// to hand over as a quiet L1's.
    pub head_blocked: Signal<In, Bit>,
    /// Parameter: in MP, stall every memory warp but the owner (high, slide 11); low for
    /// Mascar with `mascar_non_owner_mem = hit_only`, where the LD/ST side keeps non-owners'
    /// requests inside L1 instead.
    pub stall_non_owners: Signal<In, Bit>,
    /// Mode and owner registers in force.
    pub mp: Signal<In, Bit>,
    pub owner_valid: Signal<In, Bit>,
    pub owner: Signal<In, Bits<6>>,
    /// WST write: enable, op type, stall bit.
    pub wst_we: [Signal<Out, Bits<H>>; 2],
    pub wst_mem: [Signal<Out, Bits<H>>; 2],
    pub wst_stall: [Signal<Out, Bits<H>>; 2],
    pub release_owner: Signal<Out, Bit>,
    pub owner_candidates: [Signal<Out, Bits<H>>; 2],
    one_hot: [Constant<Bits<H>>; H],
    warp_id0: [Constant<Bits<6>>; H],
    warp_id1: [Constant<Bits<6>>; H],
    /// The owner as a lane mask per half (zero in the half it is not in).
    owner_bit: [Signal<Local, Bits<H>>; 2],
    mem: [Signal<Local, Bits<H>>; 2],
    /// Warps other than the owner whose requests wait to leave.
    waiting: [Signal<Local, Bits<H>>; 2],
    /// The L1 is quiet or a non-owner blocks the LD/ST head.
    path_free: Signal<Local, Bit>,
    /// The owner is not using a free memory path while another warp waits for it.
    idle_path: Signal<Local, Bit>,
}

impl<const H: usize> Default for WrcRtl<H> {
    fn default() -> Self {
        Self {
            active: Default::default(),
            has_inst: Default::default(),
            is_mem: Default::default(),
            sb_ready: Default::default(),
            dep_load: Default::default(),
            at_barrier: Default::default(),
            mem_in_flight: Default::default(),
            l1_quiet: Default::default(),
            head_blocked: Default::default(),
            stall_non_owners: Default::default(),
            mp: Default::default(),
            owner_valid: Default::default(),
            owner: Default::default(),
            wst_we: Default::default(),
            wst_mem: Default::default(),
            wst_stall: Default::default(),
            release_owner: Default::default(),
            owner_candidates: Default::default(),
            one_hot: std::array::from_fn(|j| Constant::new((1u64 << j).into())),
            warp_id0: std::array::from_fn(|j| Constant::new((2 * j as u64).into())),
            warp_id1: std::array::from_fn(|j| Constant::new((2 * j as u64 + 1).into())),
            owner_bit: Default::default(),
            mem: Default::default(),
            waiting: Default::default(),
            path_free: Default::default(),
            idle_path: Default::default(),
        }
    }
}

impl<const H: usize> Logic for WrcRtl<H> {
    #[hdl_gen]
    fn update(&mut self) {
        self.owner_bit[0].next = 0.into();
        self.owner_bit[1].next = 0.into();
        for j in 0..H {
            if self.owner_valid.val() & (self.owner.val() == self.warp_id0[j].val()) {
                self.owner_bit[0].next = self.one_hot[j].val();
            }
            if self.owner_valid.val() & (self.owner.val() == self.warp_id1[j].val()) {
                self.owner_bit[1].next = self.one_hot[j].val();
            }
        }
        for s in 0..2 {
            self.mem[s].next = self.is_mem[s].val() & self.has_inst[s].val() & self.active[s].val();
            self.wst_we[s].next = self.has_inst[s].val() & self.active[s].val();
            self.wst_mem[s].next = self.mem[s].val();
            // In MP only the owner's memory instructions may go beyond L1.
            self.wst_stall[s].next = 0.into();
            if self.mp.val() & self.stall_non_owners.val() {
                self.wst_stall[s].next = self.mem[s].val() & !self.owner_bit[s].val();
            }
            self.waiting[s].next =
                self.mem_in_flight[s].val() & self.active[s].val() & !self.owner_bit[s].val();
        }
        self.path_free.next = self.l1_quiet.val() | self.head_blocked.val();
        // A warp ready to issue a memory instruction takes ownership; with the path free, a
        // warp whose requests wait to leave does (only the owner's go beyond L1, slide 11).
        for s in 0..2 {
            if self.path_free.val() & (self.waiting[0].val().any() | self.waiting[1].val().any()) {
                self.owner_candidates[s].next = self.waiting[s].val();
            } else {
                self.owner_candidates[s].next = self.mem[s].val()
                    & self.sb_ready[s].val()
                    & !self.dep_load[s].val()
                    & !self.owner_bit[s].val();
            }
        }
        // With the path free, an owner with no request waiting gives way to a warp that has.
        self.idle_path.next = self.path_free.val()
            & !((self.mem_in_flight[0].val() & self.owner_bit[0].val()).any()
                | (self.mem_in_flight[1].val() & self.owner_bit[1].val()).any())
            & (self.waiting[0].val().any() | self.waiting[1].val().any());
        // The owner releases when its next instruction waits on its own load or it waits at
        // a barrier, in both cases once its requests have all left; when the memory path is
        // idle for it; or when it has finished.
        self.release_owner.next = self.owner_valid.val()
            & (self.idle_path.val()
                | (self.has_inst[0].val()
                    & self.dep_load[0].val()
                    & !self.mem_in_flight[0].val()
                    & self.owner_bit[0].val())
                .any()
                | (self.has_inst[1].val()
                    & self.dep_load[1].val()
                    & !self.mem_in_flight[1].val()
                    & self.owner_bit[1].val())
                .any()
                | (self.at_barrier[0].val() & !self.mem_in_flight[0].val() & self.owner_bit[0].val()).any()
                | (self.at_barrier[1].val() & !self.mem_in_flight[1].val() & self.owner_bit[1].val()).any()
                | !((self.active[0].val() & self.owner_bit[0].val()).any()
                    | (self.active[1].val() & self.owner_bit[1].val()).any()));
    }
}
