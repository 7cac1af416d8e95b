//! Lockstep: the behavioural twins and another implementation of the same blocks (the RTL)
//! side by side, every output compared every cycle. The first disagreement is kept (the run
//! stops on it) with a VCD of both twins' outputs over the cycles before it. Only the ports
//! are compared, so any engine behind [`MascarBlocks`] can be checked.

pub use super::blocks::Mismatch;
use super::blocks::{IssueIn, IssueView, MascarBlocks, RefBlocks};
use super::ports::{QueueIn, QueueOut};
use std::collections::VecDeque;

/// A port as (block, signal, width in bits, value); `Option<u8>` ports are 7 bits with the
/// valid bit on top.
pub type Port = (&'static str, &'static str, u32, u64);

fn opt(v: Option<u8>) -> u64 {
    v.map_or(0, |x| 1 << 6 | x as u64)
}

/// The issue stage's outputs, flattened.
pub fn issue_ports(v: &IssueView) -> [Port; 11] {
    [
        ("wrc", "wst_we", 64, v.wrc.wst.we),
        ("wrc", "wst_mem", 64, v.wrc.wst.mem),
        ("wrc", "wst_stall", 64, v.wrc.wst.stall),
        ("wrc", "release_owner", 1, v.wrc.release_owner as u64),
        ("wrc", "owner_candidates", 64, v.wrc.owner_candidates),
        ("wst", "mem", 64, v.wst.mem),
        ("wst", "stall", 64, v.wst.stall),
        ("scheduler", "issue0", 7, opt(v.sched.issue[0])),
        ("scheduler", "issue1", 7, opt(v.sched.issue[1])),
        ("scheduler", "mp", 1, v.sched.mp as u64),
        ("scheduler", "owner", 7, opt(v.sched.owner)),
    ]
}

/// The re-execution queue's outputs, flattened.
pub fn queue_ports(q: &QueueOut) -> [Port; 8] {
    [
        ("reexec_queue", "select", 7, opt(q.select)),
        ("reexec_queue", "alloc", 7, opt(q.alloc)),
        ("reexec_queue", "hit_only", 64, q.hit_only),
        ("reexec_queue", "armed", 64, q.armed),
        ("reexec_queue", "warps", 64, q.warps),
        ("reexec_queue", "occupancy", 8, q.occupancy as u64),
        ("reexec_queue", "full", 1, q.full as u64),
        ("reexec_queue", "almost_full", 1, q.almost_full as u64),
    ]
}

/// Cycles of history kept for the mismatch waveform.
const HISTORY: usize = 64;

#[derive(Clone, Copy, Default)]
struct Sample {
    cycle: u64,
    issue: [IssueView; 2],
    queue: [QueueOut; 2],
}

pub struct Lockstep {
    sm: usize,
    reference: RefBlocks,
    /// The implementation under test (its outputs are the "actual" side).
    rtl: Box<dyn MascarBlocks + Send>,
    mismatch: Option<Mismatch>,
    history: VecDeque<Sample>,
    current: Sample,
}

impl Lockstep {
    pub fn new(sm: usize, reference: RefBlocks, rtl: Box<dyn MascarBlocks + Send>) -> Self {
        Lockstep {
            sm,
            reference,
            rtl,
            mismatch: None,
            history: VecDeque::with_capacity(HISTORY + 1),
            current: Sample::default(),
        }
    }

    fn compare(&mut self, cycle: u64, expected: &[Port], actual: &[Port]) {
        if self.mismatch.is_some() {
            return;
        }
        for (e, a) in expected.iter().zip(actual) {
            if e.3 != a.3 {
                self.mismatch = Some(Mismatch {
                    cycle,
                    sm: self.sm,
                    block: e.0,
                    signal: e.1,
                    expected: format!("{:#x}", e.3),
                    actual: format!("{:#x}", a.3),
                    vcd: None,
                });
                self.history.push_back(self.current);
                let path =
                    std::env::temp_dir().join(format!("mascar-lockstep-sm{}-cycle{cycle}.vcd", self.sm));
                if self.write_vcd(&path).is_ok() {
                    self.mismatch.as_mut().expect("set").vcd = Some(path);
                }
                return;
            }
        }
    }

    /// Both twins' outputs over the kept cycles, `ref` and `rtl` scopes per block.
    fn write_vcd(&self, path: &std::path::Path) -> std::io::Result<()> {
        let samples: Vec<Sample> = self.history.iter().copied().collect();
        crate::output::vcd::write_atomic_vcd(path, |w| {
            let mut ids = Vec::new();
            w.timescale(1, vcd::TimescaleUnit::NS)?;
            w.add_module(&format!("sm{}", self.sm))?;
            for twin in ["ref", "rtl"] {
                w.add_module(twin)?;
                let ports = issue_ports(&IssueView::default());
                let qports = queue_ports(&QueueOut::default());
                for p in ports.iter().chain(qports.iter()) {
                    ids.push(w.add_wire(p.2, &format!("{}.{}", p.0, p.1))?);
                }
                w.upscope()?;
            }
            w.upscope()?;
            w.enddefinitions()?;
            for s in &samples {
                w.timestamp(s.cycle)?;
                let mut k = 0;
                for t in 0..2 {
                    let ports = issue_ports(&s.issue[t]);
                    let qports = queue_ports(&s.queue[t]);
                    for p in ports.iter().chain(qports.iter()) {
                        crate::output::vcd::change(w, ids[k], p.2, p.3)?;
                        k += 1;
                    }
                }
            }
            Ok(())
        })
    }
}

impl MascarBlocks for Lockstep {
    fn visit_rtl(&mut self, probe: &mut dyn rust_hdl::core::probe::Probe) {
        self.rtl.visit_rtl(probe)
    }
    fn rtl_values(&self, out: &mut Vec<u64>) {
        self.rtl.rtl_values(out)
    }
    fn set_rtl_capture(&mut self, on: bool) {
        self.rtl.set_rtl_capture(on)
    }
    fn start_recording(&mut self, dir: &std::path::Path, cycles: u64) -> std::io::Result<()> {
        self.rtl.start_recording(dir, cycles)
    }
    fn finish_recording(&mut self) -> std::io::Result<()> {
        self.rtl.finish_recording()
    }
    fn registers(&self) -> (bool, Option<u8>) {
        self.reference.registers()
    }
    fn queue_eval(&mut self, i: &QueueIn) -> QueueOut {
        self.reference.queue_eval(i)
    }
    fn queue_clock(&mut self, cycle: u64, i: &QueueIn) {
        let e = self.reference.queue_eval(i);
        let a = self.rtl.queue_eval(i);
        self.current.cycle = cycle;
        self.current.queue = [e, a];
        self.compare(cycle, &queue_ports(&e), &queue_ports(&a));
        self.reference.queue_clock(cycle, i);
        self.rtl.queue_clock(cycle, i);
    }
    fn queue_state(&self) -> (u64, bool, usize) {
        self.reference.queue_state()
    }
    fn issue_eval(&mut self, i: &IssueIn) -> IssueView {
        self.reference.issue_eval(i)
    }
    fn issue_clock(&mut self, cycle: u64, i: &IssueIn) {
        let e = self.reference.issue_eval(i);
        let a = self.rtl.issue_eval(i);
        self.current.cycle = cycle;
        self.current.issue = [e, a];
        self.compare(cycle, &issue_ports(&e), &issue_ports(&a));
        self.reference.issue_clock(cycle, i);
        self.rtl.issue_clock(cycle, i);
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(self.current);
    }
    fn mismatch(&self) -> Option<&Mismatch> {
        self.mismatch.as_ref()
    }
    fn reference_scheduler(&mut self) -> Option<&mut super::scheduler::Scheduler> {
        Some(&mut self.reference.sched)
    }
}
