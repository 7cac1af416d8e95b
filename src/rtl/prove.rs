//! Formal proofs of the Mascar blocks (`mascar rtl prove`): Verilog wrappers with immediate
//! assertions (`rtl/formal/`) around the emitted modules. yosys turns each wrapper into an
//! AIGER model (`prep; async2sync; chformal -assume -early; techmap; dffunmap; abc -g AND;
//! write_aiger -zinit`), and the ABC that ships with yosys (`yosys-abc`) proves it, with
//! one of two engines, named per proof:
//!
//! - PDR (`fold; strash; orpos; pdr`): an unbounded proof, or a counterexample;
//! - k-induction (`bmc3 -F k` for the base case from reset, `ind -F k` for the inductive
//!   step over `k` time frames), for properties whose wrapper states the internal
//!   invariants that make them inductive.
//!
//! SymbiYosys is not needed. Each proof runs at a small size (8 warps, 8 queue entries;
//! generated here) and at the engine's size (48 warps, 32 entries). A proof ends proved
//! (with the engine), bounded (the engine gave up or ran out of time, and a bounded check
//! found no counterexample in N cycles from reset), failed (a counterexample from reset,
//! replayed by yosys's `sat` for its table), or out of time.
//!
//! Internal invariants need internal state: a wrapper may connect `probe_*` ports that the
//! emitted module does not have; [`with_probes`] adds them to the module text as outputs
//! wired to its registers (names from rust-hdl's emitter), changing nothing else.

use super::emit::{self, VerilogFile};
use super::harness::{ENTRIES, LANES};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
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

/// The engine that proves a property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// ABC's property-directed reachability (IC3).
    Pdr,
    /// k-induction: the base case `bmc3 -F k` from reset, the step `ind -F k`.
    Induction { k: u32 },
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Engine::Pdr => write!(f, "pdr"),
            Engine::Induction { k } => write!(f, "k-induction, k = {k}"),
        }
    }
}

/// One property: a wrapper top, the value of its CHECK parameter, the emitted module it
/// wraps, the engine, and the bounded check's length when the engine does not close.
pub struct Proof {
    pub name: &'static str,
    pub property: &'static str,
    /// The wrapper's file in `rtl/formal/` and its module.
    pub wrapper: &'static str,
    pub top: &'static str,
    pub check: u32,
    /// The emitted file the wrapper instantiates.
    pub dut: &'static str,
    pub engine: Engine,
    /// Cycles from reset of the bounded check run when the engine does not close, at the
    /// small and the default size.
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
    "armed",
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

pub const PROOFS: [Proof; 16] = [
    Proof {
        name: "queue-count",
        property: "queue occupancy = number of valid entries (full, almost_full follow it)",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 1,
        dut: "mascar_reexec_queue.v",
        engine: Engine::Induction { k: 2 },
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
        engine: Engine::Induction { k: 2 },
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
        engine: Engine::Pdr,
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
        engine: Engine::Pdr,
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
        engine: Engine::Pdr,
        steps: [8, 3],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "queue-arming",
        property: "retry bits follow the arming policy: a free pulse arms the oldest unarmed entry, an accepted retry the next, a refusal or a free clears, a mode or owner change arms all",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 6,
        dut: "mascar_reexec_queue.v",
        engine: Engine::Pdr,
        steps: [10, 3],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "queue-retry-bound",
        property: "bounded response: an entry worth a try (armed, or by this cycle's free pulse) is selected within depth cycles unless freed, when the head does not go first and an accepted retry frees its entry",
        wrapper: "queue.sv",
        top: "formal_queue",
        check: 7,
        dut: "mascar_reexec_queue.v",
        engine: Engine::Pdr,
        steps: [10, 3],
        show: QUEUE_SHOW,
    },
    Proof {
        name: "owner-active",
        property: "a valid owner is a warp active in the cycle it was chosen or kept, and only in MP",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 1,
        dut: "mascar_issue_top.v",
        engine: Engine::Pdr,
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
        engine: Engine::Pdr,
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
        engine: Engine::Pdr,
        steps: [16, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "issue-order",
        property: "each scheduler issues iff a warp is eligible, and the first of its order: MAS queue (Mem_Q in EP, Comp_Q in MP), then LRR from after the last issuer or GTO (greedy, then oldest)",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 4,
        dut: "mascar_issue_top.v",
        engine: Engine::Pdr,
        steps: [8, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "issue-unit-limits",
        property: "an issued warp's unit is free after scheduler 0's take: SP and SFU by count, one LD/ST, a global load only with a load slot",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 5,
        dut: "mascar_issue_top.v",
        engine: Engine::Pdr,
        steps: [8, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "mas-mode",
        property: "the EP/MP mode follows the spec's machine: saturation (held mp_exit_hold cycles, counted down in MP) read in EP, in MP only at owner hand-over",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 6,
        dut: "mascar_issue_top.v",
        engine: Engine::Pdr,
        steps: [8, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "lrr-bounded-wait",
        property: "under LRR (with or without MAS) a warp eligible and in its preferred MAS queue H cycles in a row issues within them",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 7,
        dut: "mascar_issue_top.v",
        engine: Engine::Pdr,
        steps: [8, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "owner-choice",
        property: "the owner register follows the spec: kept in MP until the WRC's rules release it, then (or with none) the oldest candidate, cleared on leaving MP",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 8,
        dut: "mascar_issue_top.v",
        engine: Engine::Pdr,
        steps: [8, 2],
        show: ISSUE_SHOW,
    },
    Proof {
        name: "wrc-handover",
        property: "the WRC's owner release and owner candidates (its outputs to the scheduler) follow the hand-over rules, from the inputs and the specified owner",
        wrapper: "issue.sv",
        top: "formal_issue",
        check: 9,
        dut: "mascar_issue_top.v",
        engine: Engine::Pdr,
        steps: [8, 2],
        show: ISSUE_SHOW,
    },
];

/// How a proof ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The engine closed: the property holds in every reachable state.
    Proved { engine: Engine },
    /// The engine did not close (undecided or out of its time); no counterexample in
    /// `steps` cycles from reset.
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
    pub fn proved(&self) -> bool {
        matches!(self, Outcome::Proved { .. })
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Proved { engine } => write!(f, "proved ({engine})"),
            Outcome::Bounded { steps } => write!(f, "bounded at {steps} cycles"),
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
    let abc = Command::new("yosys-abc").args(["-c", "quit"]).output().map_err(|e| {
        format!("cannot run yosys-abc ({e}): the proofs need the ABC that ships with yosys (apt-get install yosys)")
    })?;
    if !abc.status.success() {
        return Err("`yosys-abc -c quit` failed: the proofs need the ABC that ships with yosys (apt-get install yosys)".into());
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

/// The internal registers a wrapper reads through `probe_*` ports, per emitted module:
/// (port, width, Verilog expression over the module's own signals) at `size`.
pub fn probes(dut: &str, size: Size) -> Vec<(String, usize, String)> {
    match dut {
        "mascar_reexec_queue.v" => {
            let d = size.entries;
            let warps: Vec<String> = (0..d).rev().map(|e| format!("warp_r${e}$q")).collect();
            vec![
                ("probe_valid".into(), d, "valid_r$q".into()),
                ("probe_count".into(), 7, "count_r$q".into()),
                ("probe_warp".into(), 6 * d, format!("{{{}}}", warps.join(", "))),
            ]
        }
        // The WRC's outputs to the scheduler (its `WrcOut` port struct in the behavioural
        // twin), wires of the top module: property wrc-handover compares them.
        "mascar_issue_top.v" => {
            let h = size.lanes;
            vec![
                ("probe_release".into(), 1, "wrc$release_owner".into()),
                ("probe_candidates0".into(), h, "wrc$owner_candidates$0".into()),
                ("probe_candidates1".into(), h, "wrc$owner_candidates$1".into()),
            ]
        }
        _ => Vec::new(),
    }
}

/// `text` (the emitted `module`, first in the file) with the `probes` as extra output
/// ports; an error if the module or a probed register is not there. A module whose header
/// already lists every probe port is left as it is.
pub fn with_probes(text: &str, module: &str, probes: &[(String, usize, String)]) -> Result<String, String> {
    if probes.is_empty() {
        return Ok(text.to_string());
    }
    let head = text
        .find(&format!("module {module}("))
        .ok_or_else(|| format!("no module {module} to probe"))?;
    let close = head + text[head..].find(");").ok_or("unterminated module header")?;
    // A module that already has its probe ports (a test's hand-written stand-in) is kept.
    let header: Vec<&str> = text[head..close].split([',', '(']).map(str::trim).collect();
    if probes.iter().all(|(port, _, _)| header.contains(&port.as_str())) {
        return Ok(text.to_string());
    }
    let end = close + text[close..].find("\nendmodule").ok_or("no endmodule")?;
    let body = &text[close..end];
    let mut ports = String::new();
    let mut decls = String::new();
    for (port, width, expr) in probes {
        for reg in expr.trim_matches(|c| c == '{' || c == '}').split(", ") {
            if !body.contains(&format!(" {reg};")) {
                return Err(format!("{module} has no {reg} to probe"));
            }
        }
        ports.push_str(&format!(",{port}"));
        decls.push_str(&format!(
            "\n    // Formal probe (added by mascar rtl prove): an internal register, read only.\n    output wire [{}:0] {port};\n    assign {port} = {expr};",
            width - 1
        ));
    }
    Ok(format!(
        "{}{ports}{}{decls}{}",
        &text[..close],
        &text[close..end],
        &text[end..]
    ))
}

/// The yosys script that turns `proof` at `size` into `model.aig`: assumptions constrain
/// their own cycle (`chformal -assume -early`), registers start at their `initial` values
/// (`-zinit`; a register without one would start free).
pub fn aiger_script(proof: &Proof, size: Size) -> String {
    format!(
        "read_verilog -formal dut.v\n\
         read_verilog -formal -sv wrapper.sv\n\
         chparam -set H {h} -set D {d} -set CHECK {c} {top}\n\
         prep -flatten -top {top}\n\
         async2sync\n\
         chformal -assume -early\n\
         techmap\n\
         opt -fast\n\
         dffunmap\n\
         abc -g AND\n\
         opt_clean\n\
         write_aiger -zinit model.aig\n",
        h = size.lanes,
        d = size.entries,
        c = proof.check,
        top = proof.top,
    )
}

/// The ABC script for `engine` (every assertion OR-ed into one bad-state output, the
/// assumptions folded in as constraints). `seconds` bounds PDR and the inductive step.
pub fn abc_script(engine: Engine, seconds: u64) -> String {
    let seconds = seconds.max(1);
    match engine {
        Engine::Pdr => format!("read_aiger model.aig; fold; strash; orpos; pdr -T {seconds}"),
        Engine::Induction { k } => {
            format!("read_aiger model.aig; fold; strash; orpos; bmc3 -F {k}; ind -F {k} -T {seconds}")
        }
    }
}

/// What ABC said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Proved,
    /// A bad state in this (0-based) time frame from reset.
    Fails {
        frame: u32,
    },
    Undecided,
}

/// Reads ABC's output for [`abc_script`].
pub fn parse_abc(log: &str, engine: Engine) -> Verdict {
    if let Some(line) = log.lines().find(|l| l.contains("was asserted in frame")) {
        let frame = line
            .split("was asserted in frame")
            .nth(1)
            .and_then(|r| {
                r.trim()
                    .trim_end_matches(|c: char| !c.is_ascii_digit())
                    .split('.')
                    .next()
            })
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        return Verdict::Fails { frame };
    }
    let proved = match engine {
        Engine::Pdr => log.contains("Property proved"),
        // `bmc3 -F k` found nothing in k frames, then the inductive step held.
        Engine::Induction { k } => {
            log.contains(&format!("No output asserted in {k} frames"))
                && log.contains("Networks are equivalent")
        }
    };
    if proved {
        Verdict::Proved
    } else {
        Verdict::Undecided
    }
}

/// The yosys script of a bounded check of `proof` at `size` from reset (the all-zero state
/// the `initial` blocks give) to `steps` cycles, with the counterexample table.
pub fn script(proof: &Proof, size: Size, steps: u32) -> String {
    let show: String = proof.show.iter().map(|s| format!(" -show {s}")).collect();
    format!(
        "read_verilog -formal dut.v\n\
         read_verilog -formal -sv wrapper.sv\n\
         chparam -set H {h} -set D {d} -set CHECK {c} {top}\n\
         prep -flatten -top {top}\n\
         sat -tempinduct -tempinduct-baseonly -prove-asserts -set-assumes -set-init-zero -maxsteps {steps} -show-inputs{show} -dump_vcd counterexample.vcd\n",
        h = size.lanes,
        d = size.entries,
        c = proof.check,
        top = proof.top,
    )
}

/// Reads yosys's log of the bounded check of [`script`].
pub fn parse_log(log: &str, steps: u32) -> Result<Outcome, String> {
    let base = match log.split("Executing SAT pass").nth(1) {
        Some(b) => b,
        None => return Err(unfinished(log)),
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

/// Runs `program args` in `dir` with stdout to `out` (under `dir`) until `deadline`: its
/// exit status, or `None` when it was stopped at the deadline.
fn run_until(
    program: &str,
    args: &[&str],
    dir: &Path,
    out: &str,
    deadline: Instant,
) -> Result<Option<std::process::ExitStatus>, String> {
    let hint = "the proofs need yosys ≥ 0.23 and its yosys-abc (apt-get install yosys)";
    let out_file = std::fs::File::create(dir.join(out)).map_err(|e| format!("cannot write {out}: {e}"))?;
    let err_file = std::fs::File::create(dir.join(format!("{out}.err")))
        .map_err(|e| format!("cannot write {out}.err: {e}"))?;
    // Its own process group, so that a stop at the deadline also ends the ABC that yosys's
    // `abc` pass starts.
    let mut child = Command::new(program)
        .args(args)
        .process_group(0)
        .current_dir(dir)
        .stdout(out_file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| format!("cannot run {program} ({e}): {hint}"))?;
    loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(Some(s));
        }
        if Instant::now() > deadline {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tail(dir: &Path, files: &[&str]) -> String {
    files
        .iter()
        .map(|f| {
            let t = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            let lines: Vec<&str> = t.lines().rev().take(20).collect();
            lines.into_iter().rev().collect::<Vec<_>>().join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one proof at one size on the given wrapper and module text (the tests plant bugs):
/// the engine on the AIGER model; on a counterexample, or when the engine does not close,
/// yosys's bounded check from reset for the table or the bounded result.
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
    let module = proof.dut.trim_end_matches(".v");
    write("dut.v", &with_probes(dut, module, &probes(proof.dut, size))?)?;
    write("wrapper.sv", wrapper)?;
    write("aiger.ys", &aiger_script(proof, size))?;
    let start = Instant::now();
    let deadline = start + src.timeout;
    let result = (|| -> Result<Outcome, String> {
        match run_until(
            "yosys",
            &["-q", "-l", "aiger.log", "-s", "aiger.ys"],
            &dir,
            "yosys.out",
            deadline,
        )? {
            None => return Ok(Outcome::TimedOut),
            Some(s) if !s.success() => {
                return Err(format!(
                    "yosys failed on {} at {} ({s}):\n{}",
                    proof.name,
                    size,
                    tail(&dir, &["aiger.log", "yosys.out.err"])
                ))
            }
            Some(_) => {}
        }
        // The engine gets two thirds of what is left; the bounded check the rest.
        let left = deadline.saturating_duration_since(Instant::now()).as_secs();
        let abc = abc_script(proof.engine, left * 2 / 3);
        write("abc.script", &abc)?;
        let verdict = match run_until("yosys-abc", &["-c", &abc], &dir, "abc.log", deadline)? {
            None => return Ok(Outcome::TimedOut),
            Some(s) if !s.success() => {
                return Err(format!(
                    "yosys-abc failed on {} at {} ({s}):\n{}",
                    proof.name,
                    size,
                    tail(&dir, &["abc.log", "abc.log.err"])
                ))
            }
            Some(_) => parse_abc(&read(&dir.join("abc.log"))?, proof.engine),
        };
        let steps = match verdict {
            Verdict::Proved => return Ok(Outcome::Proved { engine: proof.engine }),
            // ABC counts frames from 0; yosys's table counts cycles from 1.
            Verdict::Fails { frame } => frame + 1,
            Verdict::Undecided => proof.steps[(size == DEFAULT) as usize],
        };
        write("bounded.ys", &script(proof, size, steps))?;
        match run_until(
            "yosys",
            &["-q", "-l", "bounded.log", "-s", "bounded.ys"],
            &dir,
            "bounded.out",
            deadline,
        )? {
            None => Ok(Outcome::TimedOut),
            Some(s) if !s.success() => Err(format!(
                "yosys failed on {} at {} ({s}):\n{}",
                proof.name,
                size,
                tail(&dir, &["bounded.log", "bounded.out.err"])
            )),
            Some(_) => {
                let outcome = parse_log(&read(&dir.join("bounded.log"))?, steps)?;
                if matches!(verdict, Verdict::Fails { .. }) && !outcome.failed() {
                    return Err(format!(
                        "{} at {}: ABC found a counterexample in {steps} cycles that yosys's sat does not \
                         reproduce (see {})",
                        proof.name,
                        size,
                        dir.display()
                    ));
                }
                Ok(outcome)
            }
        }
    })();
    let seconds = start.elapsed().as_secs_f64();
    let outcome = result?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abc_verdicts_are_read_honestly() {
        let pdr = Engine::Pdr;
        let ind = Engine::Induction { k: 2 };
        assert_eq!(
            parse_abc("Property proved.  Time =     4.33 sec", pdr),
            Verdict::Proved
        );
        assert_eq!(
            parse_abc(
                "Output 0 of miter \"formal_queue-1\" was asserted in frame 1.  Time = 0.01 sec",
                pdr
            ),
            Verdict::Fails { frame: 1 }
        );
        // PDR out of its time says neither: undecided, never proved.
        assert_eq!(
            parse_abc("Reached timeout (10 seconds).", pdr),
            Verdict::Undecided
        );
        let base = "No output asserted in 2 frames. Resource limit reached (conf limit 0). Time = 0.02 sec\n";
        assert_eq!(
            parse_abc(
                &format!("{base}Networks are equivalent.  Time =     1.45 sec"),
                ind
            ),
            Verdict::Proved
        );
        // The step without the base case, or the base case without the step, is not a proof.
        assert_eq!(parse_abc("Networks are equivalent.", ind), Verdict::Undecided);
        assert_eq!(
            parse_abc(&format!("{base}Networks are UNDECIDED.  Time = 0.01 sec"), ind),
            Verdict::Undecided
        );
        assert_eq!(
            parse_abc("No output asserted in 1 frames.\nNetworks are equivalent.", ind),
            Verdict::Undecided
        );
        assert_eq!(
            Outcome::Proved { engine: ind }.to_string(),
            "proved (k-induction, k = 2)"
        );
        assert_eq!(Outcome::Bounded { steps: 8 }.to_string(), "bounded at 8 cycles");
    }

    #[test]
    fn probes_become_output_ports_of_the_probed_module_only() {
        let text = "module q(a,b);\n    input wire a;\n    wire [1:0] r$q;\n    wire [1:0] w$0$q;\nendmodule\nmodule q$r(d);\nendmodule\n";
        let r = vec![("probe_r".to_string(), 2, "r$q".to_string())];
        let out = with_probes(text, "q", &r).unwrap();
        assert!(out.starts_with("module q(a,b,probe_r);"), "{out}");
        let inside = &out[..out.find("endmodule").unwrap()];
        assert!(inside.contains("output wire [1:0] probe_r;") && inside.contains("assign probe_r = r$q;"));
        assert!(out.ends_with("endmodule\nmodule q$r(d);\nendmodule\n"));
        let missing = vec![("probe_x".to_string(), 1, "x$q".to_string())];
        assert!(with_probes(text, "q", &missing).unwrap_err().contains("no x$q"));
        assert_eq!(with_probes(text, "q", &[]).unwrap(), text);
        assert_eq!(with_probes(&out, "q", &r).unwrap(), out, "already probed");
        // The probes name signals the emitted text has, at both sizes.
        for size in SIZES {
            let v = verilog_at(size).unwrap();
            for (file, module) in [
                ("mascar_reexec_queue.v", "mascar_reexec_queue"),
                ("mascar_issue_top.v", "mascar_issue_top"),
            ] {
                let f = v.iter().find(|f| f.file == file).unwrap();
                with_probes(&f.text, module, &probes(file, size)).unwrap();
            }
        }
    }
}
