//! Tops that wire the blocks: the issue stage (WRC → WST → scheduler) that the harness
//! drives, and the whole of Mascar's hardware (issue stage + re-execution queue, which takes
//! its mode and owner from the scheduler) for synthesis and area.

use super::reexec_queue::ReexecQueueRtl;
use super::scheduler::SchedulerRtl;
use super::wrc::WrcRtl;
use super::wst::WstRtl;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct IssueTopRtl<const H: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset of the WST and the scheduler (the WRC has no state).
    pub reset: Signal<In, Bit>,
    pub policy_gto: Signal<In, Bit>,
    pub mas_enable: Signal<In, Bit>,
    pub check_at_handover: Signal<In, Bit>,
    pub mp_exit_hold: Signal<In, Bits<16>>,
    /// The WRC's parameter: stall non-owners' memory instructions in MP.
    pub stall_non_owners: Signal<In, Bit>,
    // Warp signals (WRC).
    pub active: [Signal<In, Bits<H>>; 2],
    pub has_inst: [Signal<In, Bits<H>>; 2],
    pub is_mem: [Signal<In, Bits<H>>; 2],
    pub sb_ready: [Signal<In, Bits<H>>; 2],
    pub dep_load: [Signal<In, Bits<H>>; 2],
    pub at_barrier: [Signal<In, Bits<H>>; 2],
    pub mem_in_flight: [Signal<In, Bits<H>>; 2],
    pub l1_quiet: Signal<In, Bit>,
    pub head_blocked: Signal<In, Bit>,
    // Issue-side signals (scheduler).
    pub ready: [Signal<In, Bits<H>>; 2],
    pub alu: [Signal<In, Bits<H>>; 2],
    pub sfu: [Signal<In, Bits<H>>; 2],
    pub ldst: [Signal<In, Bits<H>>; 2],
    pub ldst_take: [Signal<In, Bits<H>>; 2],
    pub gload: [Signal<In, Bits<H>>; 2],
    pub launched: [Signal<In, Bits<H>>; 2],
    pub exited: [Signal<In, Bits<H>>; 2],
    pub sp_free: Signal<In, Bits<8>>,
    pub sfu_free: Signal<In, Bits<8>>,
    pub lsu_free: Signal<In, Bit>,
    pub load_slot_free: Signal<In, Bit>,
    /// Scheduler 1 picks first this cycle (else scheduler 0).
    pub first: Signal<In, Bit>,
    pub saturated: Signal<In, Bit>,
    pub issue_valid: [Signal<Out, Bit>; 2],
    pub issue_warp: [Signal<Out, Bits<6>>; 2],
    pub mp: Signal<Out, Bit>,
    pub owner_valid: Signal<Out, Bit>,
    pub owner: Signal<Out, Bits<6>>,
    /// The warp status table's read port: what the SM's per-warp stall statistics and the
    /// waveforms read (the scheduler takes its ready warps' entries from the write data).
    pub wst_mem: [Signal<Out, Bits<H>>; 2],
    pub wst_stall: [Signal<Out, Bits<H>>; 2],
    pub wrc: WrcRtl<H>,
    pub wst: WstRtl<H>,
    pub sched: SchedulerRtl<H>,
}

impl<const H: usize> Logic for IssueTopRtl<H> {
    #[hdl_gen]
    fn update(&mut self) {
        self.wst.clock.next = self.clock.val();
        self.sched.clock.next = self.clock.val();
        self.wst.reset.next = self.reset.val();
        self.sched.reset.next = self.reset.val();
        self.sched.policy_gto.next = self.policy_gto.val();
        self.sched.mas_enable.next = self.mas_enable.val();
        self.sched.check_at_handover.next = self.check_at_handover.val();
        self.sched.mp_exit_hold.next = self.mp_exit_hold.val();
        self.wrc.stall_non_owners.next = self.stall_non_owners.val();
        self.wrc.l1_quiet.next = self.l1_quiet.val();
        self.wrc.head_blocked.next = self.head_blocked.val();
        self.wrc.mp.next = self.sched.mp.val();
        self.wrc.owner_valid.next = self.sched.owner_valid.val();
        self.wrc.owner.next = self.sched.owner.val();
        for s in 0..2 {
            self.wrc.active[s].next = self.active[s].val();
            self.wrc.has_inst[s].next = self.has_inst[s].val();
            self.wrc.is_mem[s].next = self.is_mem[s].val();
            self.wrc.sb_ready[s].next = self.sb_ready[s].val();
            self.wrc.dep_load[s].next = self.dep_load[s].val();
            self.wrc.at_barrier[s].next = self.at_barrier[s].val();
            self.wrc.mem_in_flight[s].next = self.mem_in_flight[s].val();
            self.wst.we[s].next = self.wrc.wst_we[s].val();
            self.wst.mem_in[s].next = self.wrc.wst_mem[s].val();
            self.wst.stall_in[s].next = self.wrc.wst_stall[s].val();
            // The scheduler reads the entries as written this cycle: for a warp that can issue
            // (ready implies has_inst and active, so its entry is written) that is what the
            // table's write-through read port gives, without its mux on the issue path.
            self.sched.wst_mem[s].next = self.wrc.wst_mem[s].val();
            self.sched.wst_stall[s].next = self.wrc.wst_stall[s].val();
            self.sched.owner_candidates[s].next = self.wrc.owner_candidates[s].val();
            self.sched.ready[s].next = self.ready[s].val();
            self.sched.alu[s].next = self.alu[s].val();
            self.sched.sfu[s].next = self.sfu[s].val();
            self.sched.ldst[s].next = self.ldst[s].val();
            self.sched.ldst_take[s].next = self.ldst_take[s].val();
            self.sched.gload[s].next = self.gload[s].val();
            self.sched.launched[s].next = self.launched[s].val();
            self.sched.exited[s].next = self.exited[s].val();
            self.wst_mem[s].next = self.wst.mem[s].val();
            self.wst_stall[s].next = self.wst.stall[s].val();
            self.issue_valid[s].next = self.sched.issue_valid[s].val();
            self.issue_warp[s].next = self.sched.issue_warp[s].val();
        }
        self.sched.release_owner.next = self.wrc.release_owner.val();
        self.sched.sp_free.next = self.sp_free.val();
        self.sched.sfu_free.next = self.sfu_free.val();
        self.sched.lsu_free.next = self.lsu_free.val();
        self.sched.load_slot_free.next = self.load_slot_free.val();
        self.sched.first.next = self.first.val();
        self.sched.saturated.next = self.saturated.val();
        self.mp.next = self.sched.mp.val();
        self.owner_valid.next = self.sched.owner_valid.val();
        self.owner.next = self.sched.owner.val();
    }
}

/// All of Mascar's hardware for one SM: the issue stage and the re-execution queue.
#[derive(LogicBlock, Default)]
pub struct MascarTopRtl<const D: usize, const H: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub issue: IssueTopRtl<H>,
    pub queue: ReexecQueueRtl<D, H>,
}

impl<const D: usize, const H: usize> Logic for MascarTopRtl<D, H> {
    #[hdl_gen]
    fn update(&mut self) {
        self.issue.clock.next = self.clock.val();
        self.queue.clock.next = self.clock.val();
        self.issue.reset.next = self.reset.val();
        self.queue.reset.next = self.reset.val();
        self.queue.mp.next = self.issue.mp.val();
        self.queue.owner_valid.next = self.issue.owner_valid.val();
        self.queue.owner.next = self.issue.owner.val();
    }
}
