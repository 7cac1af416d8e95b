//! The per-cycle event log (`mascar run --trace-events PATH --window A..B`): one line per
//! event, in cycle order, written streaming and moved into place when complete.
//!
//! Line format (space-separated `key=value` after the cycle, SM and kind):
//!
//! ```text
//! 1042 sm=0 issue sched=1 warp=7 pc=0x98 op=LoadGlobal
//! 1043 sm=0 l1 warp=7 line=0x1c2000 outcome=miss
//! 1043 sm=0 mshr-alloc line=0x1c2000
//! 1480 sm=0 mshr-free line=0x1c2000 latency=437
//! 1500 sm=0 owner warp=9 mode=MP
//! 1501 sm=0 park warp=3 entry=0
//! 1502 sm=0 reexec warp=3 entry=0
//! 2000 sm=0 cta-launch cta=17 slot=1
//! 9000 sm=0 cta-done cta=17 slot=1
//! ```

use crate::output::PendingFile;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// One event of an SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmEvent {
    /// A warp instruction issued (`pc`: the traced PC, or the instruction's index in its
    /// program for kernel-format kernels).
    Issue {
        sched: u8,
        warp: u8,
        pc: u64,
        op: crate::workload::program::OpKind,
    },
    /// An L1 access and its outcome.
    L1 {
        warp: u8,
        line: u64,
        store: bool,
        outcome: crate::gpu::sm::l1::Outcome,
        from_queue: bool,
    },
    /// A load miss took an MSHR / a fill freed it.
    MshrAlloc {
        line: u64,
    },
    MshrFree {
        line: u64,
        latency: u64,
    },
    /// MAS: the owner changed (or MP began or ended).
    Owner {
        warp: Option<u8>,
        mp: bool,
    },
    /// CAR: an instruction moved into the re-execution queue / an entry was retried.
    Park {
        warp: u8,
        entry: u8,
    },
    Reexec {
        warp: u8,
        entry: u8,
    },
    /// A CTA (its index in the grid) took CTA slot `slot` / its last warp retired.
    CtaLaunch {
        cta: u32,
        slot: u8,
    },
    CtaDone {
        cta: u32,
        slot: u8,
    },
}

impl fmt::Display for SmEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::gpu::sm::l1::Outcome;
        match *self {
            SmEvent::Issue { sched, warp, pc, op } => {
                write!(f, "issue sched={sched} warp={warp} pc={pc:#x} op={op:?}")
            }
            SmEvent::L1 {
                warp,
                line,
                store,
                outcome,
                from_queue,
            } => {
                let o = match outcome {
                    Outcome::Hit => "hit".to_string(),
                    Outcome::HitReserved => "hit-reserved".to_string(),
                    Outcome::Miss => "miss".to_string(),
                    Outcome::Fail(c) => format!("reservation-fail({c:?})"),
                };
                let kind = if store { "store" } else { "load" };
                let q = if from_queue { " from=queue" } else { "" };
                write!(f, "l1 warp={warp} {kind} line={line:#x} outcome={o}{q}")
            }
            SmEvent::MshrAlloc { line } => write!(f, "mshr-alloc line={line:#x}"),
            SmEvent::MshrFree { line, latency } => write!(f, "mshr-free line={line:#x} latency={latency}"),
            SmEvent::Owner { warp, mp } => {
                let w = warp.map_or("-".to_string(), |w| w.to_string());
                write!(f, "owner warp={w} mode={}", if mp { "MP" } else { "EP" })
            }
            SmEvent::Park { warp, entry } => write!(f, "park warp={warp} entry={entry}"),
            SmEvent::Reexec { warp, entry } => write!(f, "reexec warp={warp} entry={entry}"),
            SmEvent::CtaLaunch { cta, slot } => write!(f, "cta-launch cta={cta} slot={slot}"),
            SmEvent::CtaDone { cta, slot } => write!(f, "cta-done cta={cta} slot={slot}"),
        }
    }
}

/// The event log file being written.
pub struct EventLog {
    file: PendingFile,
    out: BufWriter<File>,
    window: (u64, u64),
}

impl EventLog {
    pub fn create(path: &Path, window: Option<(u64, u64)>) -> std::io::Result<Self> {
        let (file, out) = PendingFile::create(path)?;
        Ok(EventLog {
            file,
            out,
            window: window.unwrap_or((0, u64::MAX)),
        })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Whether `cycle` is inside the window.
    pub fn wants(&self, cycle: u64) -> bool {
        (self.window.0..self.window.1).contains(&cycle)
    }

    pub fn write(&mut self, cycle: u64, sm: usize, e: &SmEvent) -> std::io::Result<()> {
        writeln!(self.out, "{cycle} sm={sm} {e}")
    }

    /// Completes the file and moves it into place.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()?;
        drop(self.out);
        self.file.commit().map(|_| ())
    }
}
