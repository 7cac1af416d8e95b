//! The single-threaded harness that runs the RTL twins inside the SM: per cycle it sets a
//! block's inputs from the contract structs, settles the circuit, reads the outputs back
//! into contract structs, and clocks it (rising edge, settle; the falling edge settles with
//! the next inputs). No `Simulation` threads.

use super::record::PortRecorder;
use super::reexec_queue::ReexecQueueRtl;
use super::top::IssueTopRtl;
use crate::mascar::blocks::{IssueIn, IssueView, MascarBlocks, RefBlocks};
use crate::mascar::ports::*;
use rust_hdl::prelude::*;

/// Lanes per scheduler of the RTL engine's blocks (48 warps).
pub const LANES: usize = crate::mascar::ports::RTL_LANES;
/// Entries of the RTL engine's re-execution queue.
pub const ENTRIES: usize = crate::mascar::ports::RTL_ENTRIES;

pub use crate::mascar::ports::{join, split};

fn settle<B: Block>(uut: &mut B) {
    // The blocks are loop-free; a failure to converge is a design bug, not bad input.
    assert!(simulate(uut, 200), "RTL block did not settle");
}

fn set2(sig: &mut [Signal<In, Bits<LANES>>; 2], m: u64) {
    let h = split(m);
    sig[0].next = h[0].into();
    sig[1].next = h[1].into();
}

fn get2(sig: &[Signal<Out, Bits<LANES>>; 2]) -> u64 {
    join([sig[0].val().to_u64(), sig[1].val().to_u64()])
}

fn opt(valid: bool, v: Bits<6>) -> Option<u8> {
    valid.then(|| v.to_u64() as u8)
}

/// The RTL twins of one SM.
pub struct RtlBlocks {
    pub issue: Box<IssueTopRtl<LANES>>,
    pub queue: Option<Box<ReexecQueueRtl<ENTRIES, LANES>>>,
    /// For waveforms: every signal's value just before the last clock edge, when on.
    capture: bool,
    issue_values: Vec<u64>,
    queue_values: Vec<u64>,
    /// For `--record`: each block's ports, for the first `record_left` cycles.
    recorders: Vec<(Recorded, PortRecorder)>,
    record_left: u64,
    /// The first write error while recording (reported when the recording finishes).
    record_error: Option<std::io::Error>,
    /// The inputs the queue was last settled on, if no clock edge came since: the LD/ST
    /// unit clocks the queue on the inputs it evaluated it on, which needs no new settle.
    queue_settled_on: Option<QueueIn>,
}

/// The blocks whose ports `--record` writes.
#[derive(Clone, Copy, Debug)]
enum Recorded {
    Wst,
    Wrc,
    Scheduler,
    IssueTop,
    Queue,
}

impl RtlBlocks {
    /// RTL blocks configured as `reference` is (policy, MAS, hit-only mode, queue depth).
    pub fn like(reference: &RefBlocks) -> Self {
        let mut issue = Box::<IssueTopRtl<LANES>>::default();
        issue.connect_all();
        let base = reference.sched.params();
        issue.stall_non_owners.next = reference.wrc.stall_non_owners;
        issue.policy_gto.next = base.base == BaseOrder::Gto;
        issue.mas_enable.next = base.mas;
        issue.check_at_handover.next = base.mode_check == MasModeCheck::Handover;
        issue.mp_exit_hold.next = (base.mp_exit_hold.min(u16::MAX as u32) as u64).into();
        settle(issue.as_mut());
        let queue = reference.queue.as_ref().map(|reference| {
            let mut q = Box::<ReexecQueueRtl<ENTRIES, LANES>>::default();
            q.connect_all();
            let depth = reference.depth() as u64;
            q.depth.next = depth.into();
            q.entries.next = ((1u64 << depth) - 1).into();
            settle(q.as_mut());
            q
        });
        RtlBlocks {
            issue,
            queue,
            capture: false,
            issue_values: Vec::new(),
            queue_values: Vec::new(),
            recorders: Vec::new(),
            record_left: 0,
            record_error: None,
            queue_settled_on: None,
        }
    }

    fn set_queue_inputs(q: &mut ReexecQueueRtl<ENTRIES, LANES>, i: &QueueIn) {
        q.mp.next = i.mp;
        q.mshr_freed.next = i.mshr_freed;
        q.miss_queue_freed.next = i.miss_queue_freed;
        q.head_first.next = i.head_first;
        q.head_ready.next = i.head_ready;
        q.refused.next = i.refused;
        q.owner_valid.next = i.owner.is_some();
        q.owner.next = (i.owner.unwrap_or(0) as u64).into();
        q.free_valid.next = i.free.is_some();
        q.free_entry.next = (i.free.unwrap_or(0) as u64).into();
        q.push_valid.next = i.push.is_some();
        q.push_warp.next = (i.push.unwrap_or(0) as u64).into();
        q.reset.next = i.reset;
    }

    fn set_issue_inputs(t: &mut IssueTopRtl<LANES>, i: &IssueIn) {
        let w = &i.warps;
        set2(&mut t.active, w.active);
        set2(&mut t.has_inst, w.has_inst);
        set2(&mut t.is_mem, w.is_mem);
        set2(&mut t.sb_ready, w.sb_ready);
        set2(&mut t.dep_load, w.dep_load);
        set2(&mut t.at_barrier, w.at_barrier);
        set2(&mut t.mem_in_flight, w.mem_in_flight);
        t.l1_quiet.next = w.l1_quiet;
        t.head_blocked.next = w.head_blocked;
        let s = &i.sched;
        set2(&mut t.ready, s.ready);
        set2(&mut t.alu, s.alu);
        set2(&mut t.sfu, s.sfu);
        set2(&mut t.ldst, s.ldst);
        set2(&mut t.ldst_take, s.ldst_take);
        set2(&mut t.gload, s.gload);
        set2(&mut t.launched, s.launched);
        set2(&mut t.exited, s.exited);
        t.sp_free.next = (s.sp_free as u64).into();
        t.sfu_free.next = (s.sfu_free as u64).into();
        t.lsu_free.next = s.lsu_free;
        t.load_slot_free.next = s.load_slot_free;
        // Two schedulers: the twin takes `first` modulo the scheduler count.
        t.first.next = s.first % 2 == 1;
        t.saturated.next = s.saturated;
        t.reset.next = s.reset;
    }

    fn recorded_block(&self, b: Recorded) -> Option<&dyn Block> {
        Some(match b {
            Recorded::Wst => &self.issue.wst,
            Recorded::Wrc => &self.issue.wrc,
            Recorded::Scheduler => &self.issue.sched,
            Recorded::IssueTop => self.issue.as_ref(),
            Recorded::Queue => self.queue.as_deref()?,
        })
    }

    /// Records the ports of the queue's block or of the issue stage's blocks for this cycle.
    fn record(&mut self, queue: bool) -> std::io::Result<()> {
        if self.record_left == 0 {
            return Ok(());
        }
        let mut recorders = std::mem::take(&mut self.recorders);
        let mut result = Ok(());
        for (b, r) in &mut recorders {
            if matches!(b, Recorded::Queue) == queue {
                if let Some(block) = self.recorded_block(*b) {
                    result = result.and(r.sample(block));
                }
            }
        }
        self.recorders = recorders;
        // The issue stage is clocked last in a cycle: the cycle is complete.
        if !queue {
            self.record_left -= 1;
        }
        result
    }

    /// One clock edge. The falling edge is left to the next settle, which applies it with
    /// the next inputs: no register or output reacts to it, so settling it alone would only
    /// evaluate every block twice more. If no settle came since the last edge, it is
    /// applied here first, so the rising edge is always seen.
    fn clock<B: Block>(uut: &mut B, high: impl Fn(&B) -> bool, clock: impl Fn(&mut B, bool)) {
        if high(uut) {
            clock(uut, false);
            settle(uut);
        }
        clock(uut, true);
        settle(uut);
        clock(uut, false);
    }
}

impl MascarBlocks for RtlBlocks {
    fn registers(&self) -> (bool, Option<u8>) {
        let t = &self.issue.sched;
        (t.mp.val(), opt(t.owner_valid.val(), t.owner.val()))
    }

    fn queue_eval(&mut self, i: &QueueIn) -> QueueOut {
        let Some(q) = &mut self.queue else {
            return QueueOut::default();
        };
        Self::set_queue_inputs(q, i);
        settle(q.as_mut());
        self.queue_settled_on = Some(*i);
        QueueOut {
            select: opt(q.select_valid.val(), q.select.val()),
            alloc: opt(q.alloc_valid.val(), q.alloc.val()),
            hit_only: q.hit_only.val().to_u64(),
            armed: q.armed.val().to_u64(),
            warps: get2(&q.warps),
            occupancy: q.occupancy.val().to_u64() as u8,
            full: q.full.val(),
            almost_full: q.almost_full.val(),
        }
    }

    fn queue_clock(&mut self, _cycle: u64, i: &QueueIn) {
        let Some(q) = &mut self.queue else {
            return;
        };
        if self.queue_settled_on != Some(*i) {
            Self::set_queue_inputs(q, i);
            settle(q.as_mut());
        }
        if self.capture {
            self.queue_values.clear();
            let values = &mut self.queue_values;
            q.accept("reexec_queue", &mut crate::output::vcd::Read { values });
        }
        if let Err(e) = self.record(true) {
            self.record_error.get_or_insert(e);
        }
        if let Some(q) = &mut self.queue {
            Self::clock(q.as_mut(), |q| q.clock.val().clk, |q, v| q.clock.next = v.into());
        }
        self.queue_settled_on = None;
    }

    fn queue_state(&self) -> (u64, bool, usize) {
        self.queue.as_ref().map_or((0, false, 0), |q| {
            (get2(&q.warps), q.full.val(), q.occupancy.val().to_u64() as usize)
        })
    }

    fn issue_eval(&mut self, i: &IssueIn) -> IssueView {
        let t = self.issue.as_mut();
        Self::set_issue_inputs(t, i);
        settle(t);
        let mut issue = [None; MAX_SCHEDULERS];
        for (s, slot) in issue.iter_mut().enumerate().take(2) {
            *slot = opt(t.issue_valid[s].val(), t.issue_warp[s].val());
        }
        IssueView {
            wrc: WrcOut {
                wst: WstWrite {
                    we: get2(&t.wrc.wst_we),
                    mem: get2(&t.wrc.wst_mem),
                    stall: get2(&t.wrc.wst_stall),
                },
                release_owner: t.wrc.release_owner.val(),
                owner_candidates: get2(&t.wrc.owner_candidates),
            },
            wst: WstOut {
                mem: get2(&t.wst.mem),
                stall: get2(&t.wst.stall),
            },
            sched: SchedOut {
                issue,
                mp: t.mp.val(),
                owner: opt(t.owner_valid.val(), t.owner.val()),
            },
        }
    }

    fn visit_rtl(&mut self, probe: &mut dyn Probe) {
        self.issue.accept("issue_top", probe);
        if let Some(q) = &self.queue {
            q.accept("reexec_queue", probe);
        }
        self.capture = true;
    }

    fn set_rtl_capture(&mut self, on: bool) {
        self.capture = on;
    }

    fn start_recording(&mut self, dir: &std::path::Path, cycles: u64) -> std::io::Result<()> {
        let mut blocks = vec![
            (Recorded::Wst, "mascar_wst"),
            (Recorded::Wrc, "mascar_wrc"),
            (Recorded::Scheduler, "mascar_scheduler"),
            (Recorded::IssueTop, "mascar_issue_top"),
        ];
        if self.queue.is_some() {
            blocks.push((Recorded::Queue, "mascar_reexec_queue"));
        }
        for (b, module) in blocks {
            let block = self.recorded_block(b).expect("listed blocks exist");
            let r = PortRecorder::create(dir, module, block)?;
            self.recorders.push((b, r));
        }
        self.record_left = cycles;
        Ok(())
    }

    fn finish_recording(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.record_error.take() {
            self.recorders.clear();
            return Err(e);
        }
        for (_, r) in std::mem::take(&mut self.recorders) {
            r.finish()?;
        }
        Ok(())
    }

    fn rtl_values(&self, out: &mut Vec<u64>) {
        out.extend_from_slice(&self.issue_values);
        out.extend_from_slice(&self.queue_values);
    }

    fn issue_clock(&mut self, _cycle: u64, _i: &IssueIn) {
        if self.capture {
            self.issue_values.clear();
            let values = &mut self.issue_values;
            self.issue
                .accept("issue_top", &mut crate::output::vcd::Read { values });
        }
        if let Err(e) = self.record(false) {
            self.record_error.get_or_insert(e);
        }
        Self::clock(
            self.issue.as_mut(),
            |t| t.clock.val().clk,
            |t, v| t.clock.next = v.into(),
        );
    }
}
