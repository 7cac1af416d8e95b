//! The four blocks of one SM as one interface, so the SM can run the behavioural twins, the
//! RTL twins, or both in lockstep without knowing which.
//!
//! Per cycle the LD/ST stage settles the re-execution queue (`queue_eval`, possibly several
//! times while it decides) and clocks it with its final inputs (`queue_clock`); later the
//! issue stage settles WRC → WST → scheduler (`issue_eval`) and clocks them (`issue_clock`).

use super::ports::*;
use super::reexec_queue::ReexecQueue;
use super::scheduler::Scheduler;
use super::wrc::Wrc;
use super::wst::Wst;
use std::fmt;
use std::path::PathBuf;

/// What the issue stage's three blocks give in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IssueView {
    pub wrc: WrcOut,
    pub wst: WstOut,
    pub sched: SchedOut,
}

/// The issue-stage inputs from outside the blocks: `sched_in`'s `wst`, `release_owner` and
/// `owner_candidates` are ignored (the blocks wire them internally).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IssueIn {
    pub warps: WarpSignals,
    pub sched: SchedIn,
}

/// The first disagreement between the twins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub cycle: u64,
    pub sm: usize,
    pub block: &'static str,
    pub signal: &'static str,
    pub expected: String,
    pub actual: String,
    /// The VCD written around the cycle, if it could be written.
    pub vcd: Option<PathBuf>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lockstep mismatch at cycle {}, SM {}, block {}, signal {}: reference {}, RTL {}",
            self.cycle, self.sm, self.block, self.signal, self.expected, self.actual
        )?;
        if let Some(p) = &self.vcd {
            write!(f, " (waveform of the cycles before it: {})", p.display())?;
        }
        Ok(())
    }
}

/// Makes each SM's blocks: the engine, chosen once where the run is assembled
/// (`crate::engine`) and handed to the GPU.
pub trait BlockEngine: Send + Sync {
    fn blocks(&self, sm: usize) -> Box<dyn MascarBlocks + Send>;
}

pub trait MascarBlocks {
    /// Mode and owner registers (in force this cycle).
    fn registers(&self) -> (bool, Option<u8>);
    fn queue_eval(&mut self, i: &QueueIn) -> QueueOut;
    fn queue_clock(&mut self, cycle: u64, i: &QueueIn);
    /// Warps holding a queue entry and whether the queue is full (registered outputs).
    fn queue_state(&self) -> (u64, bool, usize);
    fn issue_eval(&mut self, i: &IssueIn) -> IssueView;
    fn issue_clock(&mut self, cycle: u64, i: &IssueIn);
    /// The SM's kernel-launch clear: one clock edge with `reset` high and every other input
    /// idle, between kernels (not a counted cycle). Every register returns to its power-on
    /// value, so the next kernel starts on the same blocks as on fresh ones.
    fn launch_clear(&mut self, cycle: u64) {
        let q = QueueIn {
            reset: true,
            ..QueueIn::default()
        };
        self.queue_eval(&q);
        self.queue_clock(cycle, &q);
        let i = IssueIn {
            sched: SchedIn {
                reset: true,
                ..SchedIn::default()
            },
            ..IssueIn::default()
        };
        self.issue_eval(&i);
        self.issue_clock(cycle, &i);
    }
    /// Whether the last clock edges (issue side and, with CAR, queue side) issued nothing,
    /// launched and retired no warp, selected, freed and filled no queue entry and changed no
    /// register. With the same inputs again, the next edges then change nothing either, so
    /// the SM may skip such cycles (`gpu/sm/quiet.rs`). Only the behavioural twins answer;
    /// the RTL engines are clocked every cycle by their contract.
    fn settled(&self) -> bool {
        false
    }
    /// The first disagreement between twins, when running in lockstep.
    fn mismatch(&self) -> Option<&Mismatch> {
        None
    }
    /// The behavioural scheduler, for what the ports do not carry (OWL's CTA groups).
    fn reference_scheduler(&mut self) -> Option<&mut Scheduler> {
        None
    }
    /// Walks the rust-hdl blocks' signals, if this engine has any (declares a waveform's
    /// variables) and starts capturing their values each cycle.
    fn visit_rtl(&mut self, _probe: &mut dyn rust_hdl::core::probe::Probe) {}
    /// Appends the values of the signals `visit_rtl` walked, as they were during the last
    /// cycle (captured before the clock edge that ended it), in the same order.
    fn rtl_values(&self, _out: &mut Vec<u64>) {}
    /// Turns the per-cycle capture that `visit_rtl` started on or off (a windowed waveform
    /// switches it off outside its window, where probing every signal would cost the speed).
    fn set_rtl_capture(&mut self, _on: bool) {}
    /// Starts writing the RTL blocks' ports for the first `cycles` cycles into `dir`
    /// (see `crate::rtl::record`).
    fn start_recording(&mut self, _dir: &std::path::Path, _cycles: u64) -> std::io::Result<()> {
        Err(std::io::Error::other(
            "only the RTL blocks can be recorded: use --engine rtl or --engine lockstep",
        ))
    }
    /// Completes the recording's files.
    fn finish_recording(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The behavioural twins.
#[derive(Clone, Debug)]
pub struct RefBlocks {
    pub wrc: Wrc,
    pub wst: Wst,
    pub sched: Scheduler,
    pub queue: Option<ReexecQueue>,
    /// This cycle's settled outputs, for the clock edge.
    view: IssueView,
    /// The last issue-side clock edge changed nothing ([`MascarBlocks::settled`]).
    issue_still: bool,
}

impl RefBlocks {
    pub fn new(wrc: Wrc, sched: Scheduler, queue: Option<ReexecQueue>) -> Self {
        RefBlocks {
            wrc,
            wst: Wst::default(),
            sched,
            queue,
            view: IssueView::default(),
            issue_still: false,
        }
    }

    /// The full scheduler input: the WRC's outputs wired in. The scheduler reads the WST
    /// entries as the WRC writes them this cycle: for every warp that can issue (`ready`
    /// implies `has_inst` and `active`, so its entry is written) they equal the table's
    /// write-through read port, and the hardware keeps that port's mux off the issue path
    /// (`rtl/top.rs`; the formal wrapper assumes the implication).
    pub fn wire(i: &IssueIn, wrc: &WrcOut) -> SchedIn {
        SchedIn {
            wst: WstOut {
                mem: wrc.wst.mem,
                stall: wrc.wst.stall,
            },
            release_owner: wrc.release_owner,
            owner_candidates: wrc.owner_candidates,
            ..i.sched
        }
    }
}

impl MascarBlocks for RefBlocks {
    fn registers(&self) -> (bool, Option<u8>) {
        self.sched.registers()
    }
    fn queue_eval(&mut self, i: &QueueIn) -> QueueOut {
        self.queue.as_ref().map_or_else(QueueOut::default, |q| q.eval(i))
    }
    fn queue_clock(&mut self, _cycle: u64, i: &QueueIn) {
        if let Some(q) = &mut self.queue {
            q.clock(i);
        }
    }
    fn queue_state(&self) -> (u64, bool, usize) {
        self.queue
            .as_ref()
            .map_or((0, false, 0), |q| (q.warp_mask(), q.is_full(), q.occupancy()))
    }
    fn issue_eval(&mut self, i: &IssueIn) -> IssueView {
        let (mp, owner) = self.sched.registers();
        let wrc = self.wrc.step(&WrcIn {
            warps: i.warps,
            mp,
            owner,
        });
        let wst = self.wst.eval(&wrc.wst);
        let sched = self.sched.eval(&Self::wire(i, &wrc));
        self.view = IssueView { wrc, wst, sched };
        self.view
    }
    /// Clocks with the outputs of the last `issue_eval`, which had the same inputs.
    fn issue_clock(&mut self, _cycle: u64, i: &IssueIn) {
        let v = self.view;
        let before = (self.wst, self.sched.idle_registers());
        self.wst.clock(&v.wrc.wst, i.sched.reset);
        self.sched.clock(&Self::wire(i, &v.wrc), &v.sched);
        // Issues, launches and exits change the registers `idle_registers` leaves out
        // (scheduler order, greedy warp, ages, OWL's groups).
        self.issue_still = v.sched.issue.iter().all(Option::is_none)
            && i.sched.launched == 0
            && i.sched.exited == 0
            && !i.sched.reset
            && (self.wst, self.sched.idle_registers()) == before;
    }
    fn reference_scheduler(&mut self) -> Option<&mut Scheduler> {
        Some(&mut self.sched)
    }
    fn settled(&self) -> bool {
        // The WRC is combinational; a queue that is absent (no CAR) is never clocked.
        self.issue_still && self.queue.as_ref().is_none_or(ReexecQueue::is_still)
    }
}
