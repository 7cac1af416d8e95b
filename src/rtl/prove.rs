//! Formal proofs of the Mascar blocks (`mascar rtl prove`): Verilog wrappers with immediate
//! assertions (`rtl/formal/`) around the emitted modules, proved with yosys's own SAT-based
//! temporal induction (`sat -tempinduct`; SymbiYosys is not needed). Each proof runs at a
//! small size (8 warps, 8 queue entries; generated here) and at the engine's size (48 warps,
//! 32 entries). A proof ends proved (k-induction closed at some k), bounded (no
//! counterexample within the step limit from reset, but induction did not close: the
//! property needs state the ports do not show), failed (a counterexample from reset), or
//! out of time.

use super::emit::{self, VerilogFile};
use super::harness::{ENTRIES, LANES};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A size the proofs run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub name: &'static str,
    /// Lanes per scheduler (warps / 2).
    pub lanes: usize,
    pub entries: usize,
}

/// 8 warps, 8 entries: every proof finishes in seconds.
pub const SMALL: Size = Size {
    name: "small",
    lanes: 4,
    entries: 8,
};
/// The engine's and `rtl/*.v`'s size: 48 warps, 32 entries.
pub const DEFAULT: Size = Size {
    name: "default",
    lanes: LANES,
    entries: ENTRIES,
};
pub const SIZES: [Size; 2] = [SMALL, DEFAULT];

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} warps/{} entries", 2 * self.lanes, self.entries)
    }
}

/// The emitted blocks at `size` (rust-hdl needs the sizes at compile time: these two).
pub fn verilog_at(size: Size) -> Result<Vec<VerilogFile>, String> {
    match (size.lanes, size.entries) {
        (4, 8) => Ok(emit::blocks_at::<4, 8>()),
        (LANES, ENTRIES) => Ok(emit::blocks()),
        (h, d) => Err(format!(
            "no proof size with {} warps and {d} entries (sizes: {}, {})",
            2 * h,
            SMALL,
            DEFAULT
        )),
    }
}

/// One property: a wrapper top, the value of its CHECK parameter, the emitted module it
/// wraps, and the induction length limit.
pub struct Proof {
    pub name: &'static str,
    pub property: &'static str,
    /// The wrapper's file in `rtl/formal/` and its module.
    pub wrapper: &'static str,
    pub top: &'static str,
    pub check: u32,
    /// The emitted file the wrapper instantiates.
    pub dut: &'static str,
    /// Induction length limit (`-maxsteps`) at the small and the default size.
    pub steps: [u32; 2],
    /// Signals shown in a counterexample besides the inputs.
    pub show: &'static [&'static str],
}

/// The wrappers, compiled in so that `mascar rtl prove` runs from anywhere.
pub const WRAPPERS: [(&str, &str); 2] = [
    ("queue.sv", include_str!("../../rtl/formal/queue.sv")),
    ("issue.sv", include_str!("../../rtl/formal/issue.sv")),
];

const QUEUE_SHOW: &[&str] = &[
    "occupancy",
    "sv",
    "alloc",
    "alloc_valid",
    "select",
    "select_valid",
];
const ISSUE_SHOW: &[&str] = &[
    "issue_valid0",
    "issue_warp0",
    "issue_valid1",
    "issue_warp1",
    "mp",
    "owner_valid",
    "owner",
];

pub const PROOFS: [Proof; 8] = [
    Proof {
        name: "queue-count",
        property: "queue occupancy = number of valid entries (full, almost_full follow it)",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 1,
        dut: "mascar_reexec_queue.v",
        steps: [12, 4],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "queue-one-per-warp",
        property: "per-warp occupancy exact; at most one valid entry per warp",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 2,
        dut: "mascar_reexec_queue.v",
        steps: [8, 3],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "queue-age-order",
        property: "age is a strict total order over valid entries; select = oldest entry worth a try",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 3,
        dut: "mascar_reexec_queue.v",
        steps: [8, 3],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "queue-no-loss",
        property: "a pushed entry stays valid until freed: never reallocated, dropped or duplicated",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 4,
        dut: "mascar_reexec_queue.v",
        steps: [10, 3],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "queue-hit-only",
        property: "in MP every valid non-owner entry is hit-only (a selected one included), outside MP none",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 5,
        dut: "mascar_reexec_queue.v",
        steps: [8, 3],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "owner-active",
        property: "a valid owner is a warp active in the cycle it was chosen or kept, and only in MP",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 1,
        dut: "mascar_issue_top.v",
        steps: [16, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "no-issue-while-stalled",
        property: "no warp issues while its WST stall bit is set (and only ready warps issue)",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 2,
        dut: "mascar_issue_top.v",
        steps: [16, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "reset-to-power-on",
        property: "after a synchronous reset in any cycle the mode machine is in EP with no owner (the queue's proofs reset at random too)",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 3,
        dut: "mascar_issue_top.v",
        steps: [16, 2],
        show: ISSUE_SHOW,
    },
];

/// How a proof ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// k-induction closed at length `k` (the base case holds for `k` steps from reset).
    Proved { k: u32 },
    /// No counterexample in `steps` cycles from reset; induction did not close.
    Bounded { steps: u32 },
    /// A counterexample from reset, `step` cycles long (yosys's table of it).
    Failed { step: u32, trace: String },
    /// Stopped after the time limit.
    TimedOut,
}

impl Outcome {
    pub fn failed(&self) -> bool {
        matches!(self, Outcome::Failed { .. } | Outcome::TimedOut)
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Proved { k } => write!(f, "proved (k-induction, k = {k})"),
            Outcome::Bounded { steps } => write!(f, "bounded ({steps} cycles from reset)"),
            Outcome::Failed { step, .. } => write!(f, "FAILED (counterexample, {step} cycles)"),
            Outcome::TimedOut => write!(f, "TIMED OUT"),
        }
    }
}

pub struct ProofResult {
    pub proof: &'static str,
    pub property: &'static str,
    pub size: Size,
    pub outcome: Outcome,
    pub seconds: f64,
}

/// Where the proofs read their Verilog.
pub struct Sources {
    /// Emitted modules at the default size from this directory (e.g. `rtl/`), and the
    /// wrappers from its `formal/` when present; else everything generated / compiled in.
    pub rtl_dir: Option<PathBuf>,
    /// Keep each proof's files, yosys script and log here (else a temporary directory).
    pub keep: Option<PathBuf>,
    /// Per-proof time limit.
    pub timeout: Duration,
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            rtl_dir: None,
            keep: None,
            timeout: Duration::from_secs(900),
        }
    }
}

/// Fails with an installation hint unless `yosys` runs.
pub fn check_yosys() -> Result<String, String> {
    let out = Command::new("yosys").arg("-V").output().map_err(|e| {
        format!("cannot run yosys ({e}): the proofs need yosys ≥ 0.23 (apt-get install yosys)")
    })?;
    if !out.status.success() {
        return Err("`yosys -V` failed: the proofs need yosys ≥ 0.23 (apt-get install yosys)".into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The text of `proof`'s wrapper and its DUT at `size`.
pub fn inputs(proof: &Proof, size: Size, src: &Sources) -> Result<(String, String), String> {
    let compiled = WRAPPERS
        .iter()
        .find(|(f, _)| *f == proof.wrapper)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| format!("no wrapper {}", proof.wrapper))?;
    let (wrapper, dut) = match (&src.rtl_dir, size == DEFAULT) {
        (Some(dir), true) => {
            let w = dir.join("formal").join(proof.wrapper);
            let wrapper = if w.exists() { read(&w)? } else { compiled };
            (wrapper, read(&dir.join(proof.dut))?)
        }
        _ => {
            let dut = verilog_at(size)?
                .into_iter()
                .find(|f| f.file == proof.dut)
                .ok_or_else(|| format!("no emitted {}", proof.dut))?;
            (compiled, dut.text)
        }
    };
    Ok((wrapper, dut))
}

/// Induction lengths tried after the bounded check (the properties whose state the ports
/// show close at 1 or 2; deeper attempts only cost time).
pub const INDUCTION: u32 = 2;

/// The yosys script of `proof` at `size`: a bounded check from reset (the all-zero state the
/// `initial` blocks give) to `steps` cycles, then k-induction up to `INDUCTION`.
pub fn script(proof: &Proof, size: Size) -> String {
    let steps = proof.steps[(size == DEFAULT) as usize];
    let show: String = proof.show.iter().map(|s| format!(" -show {s}")).collect();
    format!(
        "read_verilog -formal dut.v\n\
         read_verilog -formal -sv wrapper.sv\n\
         chparam -set H {h} -set D {d} -set CHECK {c} {top}\n\
         prep -flatten -top {top}\n\
         sat -tempinduct -tempinduct-baseonly -prove-asserts -set-assumes -set-init-zero -maxsteps {steps} -show-inputs{show} -dump_vcd counterexample.vcd\n\
         sat -tempinduct -tempinduct-inductonly -prove-asserts -set-assumes -maxsteps {INDUCTION}\n",
        h = size.lanes,
        d = size.entries,
        c = proof.check,
        top = proof.top,
    )
}

/// Reads yosys's log of the two `sat` runs of [`script`].
pub fn parse_log(log: &str, steps: u32) -> Result<Outcome, String> {
    let mut runs = log.split("Executing SAT pass").skip(1);
    let (base, induction) = match (runs.next(), runs.next()) {
        (Some(b), i) => (b, i.unwrap_or("")),
        _ => return Err(unfinished(log)),
    };
    if let Some(at) = base.find("model found for base case: FAIL!") {
        // The table after the banner: header, `init` rows and one block per step.
        let table: Vec<&str> = base[at..]
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("Time"))
            .take_while(|l| {
                let t = l.trim_start();
                t.starts_with("Time")
                    || t.starts_with("----")
                    || t.starts_with("init")
                    || t.starts_with(|c: char| c.is_ascii_digit())
            })
            .collect();
        let step = table
            .iter()
            .filter_map(|l| l.split_whitespace().next()?.parse::<u32>().ok())
            .max()
            .unwrap_or(0);
        return Ok(Outcome::Failed {
            step,
            trace: table.join("\n"),
        });
    }
    if !base.contains("proved base case for") {
        return Err(unfinished(log));
    }
    if induction.contains("Induction step proven: SUCCESS!") {
        let k = induction
            .lines()
            .filter_map(|l| l.trim().strip_prefix("** Trying induction with length "))
            .filter_map(|l| l.trim_end_matches(" **").trim().parse::<u32>().ok())
            .next_back()
            .unwrap_or(1);
        return Ok(Outcome::Proved { k });
    }
    Ok(Outcome::Bounded { steps })
}

fn unfinished(log: &str) -> String {
    let tail: Vec<&str> = log.lines().rev().take(30).collect();
    format!(
        "yosys did not finish the proof; log tail:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )
}

/// Runs one proof at one size.
pub fn run(proof: &Proof, size: Size, src: &Sources) -> Result<ProofResult, String> {
    let (wrapper, dut) = inputs(proof, size, src)?;
    run_on(proof, size, &wrapper, &dut, src)
}

/// Runs one proof at one size on the given wrapper and module text (the tests plant bugs).
pub fn run_on(
    proof: &Proof,
    size: Size,
    wrapper: &str,
    dut: &str,
    src: &Sources,
) -> Result<ProofResult, String> {
    let dir = match &src.keep {
        Some(k) => k.join(format!("{}-{}", proof.name, size.name)),
        None => {
            // Unique per run: proofs may run in parallel threads of one process (the tests).
            static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::env::temp_dir().join(format!(
                "mascar-prove-{}-{n}-{}-{}",
                std::process::id(),
                proof.name,
                size.name
            ))
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
    };
    write("dut.v", dut)?;
    write("wrapper.sv", wrapper)?;
    write("prove.ys", &script(proof, size))?;
    let log_path = dir.join("yosys.log");
    let err_path = dir.join("yosys.err");
    let err_file =
        std::fs::File::create(&err_path).map_err(|e| format!("cannot write {}: {e}", err_path.display()))?;
    let start = Instant::now();
    let mut child = Command::new("yosys")
        .args(["-q", "-l", "yosys.log", "-s", "prove.ys"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(err_file)
        .spawn()
        .map_err(|e| {
            format!("cannot run yosys ({e}): the proofs need yosys ≥ 0.23 (apt-get install yosys)")
        })?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if start.elapsed() > src.timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let seconds = start.elapsed().as_secs_f64();
    let outcome = match status {
        None => Outcome::TimedOut,
        Some(status) => {
            let log = read(&log_path)?;
            if !status.success() {
                return Err(format!(
                    "yosys failed on {} at {} ({}):\n{}{}",
                    proof.name,
                    size,
                    status,
                    log.lines()
                        .rev()
                        .take(20)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n"),
                    std::fs::read_to_string(&err_path).unwrap_or_default()
                ));
            }
            parse_log(&log, proof.steps[(size == DEFAULT) as usize])?
        }
    };
    if src.keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(ProofResult {
        proof: proof.name,
        property: proof.property,
        size,
        outcome,
        seconds,
    })
}

/// `mascar rtl prove`: runs the chosen proofs at the chosen sizes, prints one line each
/// and every counterexample; an error if any proof failed or ran out of time.
pub fn cli(
    rtl_dir: Option<PathBuf>,
    size: Option<&str>,
    only: &[String],
    keep: Option<PathBuf>,
    timeout: u64,
) -> Result<(), String> {
    let sizes: Vec<Size> = match size {
        None => SIZES.to_vec(),
        Some(s) => vec![SIZES
            .into_iter()
            .find(|z| z.name == s)
            .ok_or_else(|| format!("--size {s}: expected small or default"))?],
    };
    for name in only {
        if !PROOFS.iter().any(|p| p.name == name) {
            let names: Vec<&str> = PROOFS.iter().map(|p| p.name).collect();
            return Err(format!(
                "--only {name}: no such proof (proofs: {})",
                names.join(", ")
            ));
        }
    }
    if let Some(dir) = &rtl_dir {
        if !dir.join("mascar_reexec_queue.v").is_file() {
            return Err(format!("--rtl {}: no mascar_reexec_queue.v there", dir.display()));
        }
    }
    let version = check_yosys()?;
    println!("{version}");
    let src = Sources {
        rtl_dir,
        keep,
        timeout: Duration::from_secs(timeout),
    };
    println!("{:<24} {:<22} {:<38} {:>8}", "proof", "size", "result", "seconds");
    let mut failed = Vec::new();
    for size in sizes {
        for proof in PROOFS
            .iter()
            .filter(|p| only.is_empty() || only.iter().any(|o| o == p.name))
        {
            let r = run(proof, size, &src)?;
            println!(
                "{:<24} {:<22} {:<38} {:>8.1}",
                r.proof,
                r.size.to_string(),
                r.outcome.to_string(),
                r.seconds
            );
            if let Outcome::Failed { trace, .. } = &r.outcome {
                println!(
                    "  property: {}\n  counterexample (from reset):\n{trace}",
                    r.property
                );
            }
            if r.outcome.failed() {
                failed.push(format!("{} at {}", r.proof, r.size));
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} proof(s) failed: {}", failed.len(), failed.join(", ")))
    }
}
