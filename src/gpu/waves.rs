//! VCD waveforms, written with the `vcd` crate, two time units (500 ps each) per core cycle
//! so that `gpu.clk` can fall mid-cycle while the axis reads in cycles, to a temporary file
//! renamed into place when complete.
//!
//! [`Waves`] holds one scope per chosen SM with the model's own signals ([`SmSample`]), text
//! views (mode, owner, each warp's state and stall reason as VCD strings) and, when the SM
//! runs RTL blocks, an `rtl` scope under it with the rust-hdl blocks' signals, walked with
//! rust-hdl's `Probe` and shown as registers and per-warp vectors
//! ([`crate::output::vcd::readable`]). Only changes are written, to a body file; the header
//! goes in at the end, leaving out the RTL signals that never changed. The RTL blocks are
//! probed only inside the window.

use crate::gpu::sm::{Sm, SmSample};
use crate::output::vcd::{change, readable, Collect, Shown, VcdWriter};
use crate::output::PendingFile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use vcd::{IdCode, TimescaleUnit, Value, VarType};

/// What to record, from the command line.
#[derive(Clone, Debug)]
pub struct WaveOptions {
    pub path: PathBuf,
    /// Cycles `start..end` (end exclusive); all cycles when `None`.
    pub window: Option<(u64, u64)>,
    /// SMs to record; all when `None`.
    pub sms: Option<Vec<usize>>,
}

/// Parses `START..END` (either side may be empty).
pub fn parse_window(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("window `{s}`: expected START..END, e.g. 1000..5000"))?;
    let num = |x: &str, default: u64| -> Result<u64, String> {
        if x.trim().is_empty() {
            Ok(default)
        } else {
            x.trim()
                .parse()
                .map_err(|_| format!("window `{s}`: `{x}` is not a cycle number"))
        }
    };
    let (start, end) = (num(a, 0)?, num(b, u64::MAX)?);
    if start >= end {
        return Err(format!("window `{s}`: START must be below END"));
    }
    Ok((start, end))
}

/// How a model variable is shown: bits, or text (a VCD string variable, which GTKWave and
/// Surfer print as is) decoded from a small code.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Bits,
    /// `EP` / `MP`.
    Mode,
    /// `none` / `wN`: code 0 is none, N + 1 is warp N.
    Owner,
    /// A warp's state, indexed by code.
    State,
    /// A warp's stall reasons, indexed by code (bit 0 MAS, bit 1 CAR).
    Stall,
}

const MODE: [&str; 2] = ["EP", "MP"];
/// `off`: no warp in the slot; `issue`: issued this cycle; else the type of its next
/// instruction as the warp status table holds it.
const STATE: [&str; 4] = ["off", "alu", "mem", "issue"];
/// `mas:not-owner`: a memory warp held back in MP (its WST stall bit); `car:queued`: its
/// miss waits in CAR's re-execution queue.
const STALL: [&str; 4] = ["none", "mas:not-owner", "car:queued", "mas:not-owner+car:queued"];

/// The model's per-SM variables: (name, width, kind), a dotted name being a scope; the
/// order of [`model_values`].
fn model_vars(schedulers: usize, warps: u32) -> Vec<(String, u32, Kind)> {
    let b = |n: &str, w: u32| (n.to_string(), w, Kind::Bits);
    let mut v = vec![
        ("mode".to_string(), 1, Kind::Mode),
        b("mp", 1),
        ("owner_name".to_string(), 1, Kind::Owner),
        b("owner_valid", 1),
        b("owner", 6),
        b("saturated", 1),
        b("mshrs_used", 8),
        b("miss_queue_used", 8),
        b("reexec_queue_used", 8),
    ];
    for s in 0..schedulers {
        v.push(b(&format!("issue{s}_valid"), 1));
        v.push(b(&format!("issue{s}_warp"), 6));
    }
    v.push(b("wst_mem", warps));
    v.push(b("wst_stall", warps));
    v.push(b("active", warps));
    v.push(b("l1_hit", 1));
    v.push(b("l1_miss", 1));
    v.push(b("l1_reservation_fail", 1));
    v.push(b("hit_under_miss", 1));
    v.push(b("reexec_retry", 1));
    v.push(b("reexec_refused", 1));
    // Zero-padded so that a viewer's alphabetical order is warp order.
    for w in 0..warps {
        v.push((format!("warp{w:02}.state"), 1, Kind::State));
        v.push((format!("warp{w:02}.stall"), 1, Kind::Stall));
    }
    v
}

/// The values of [`model_vars`] for a sample (`prev` gives the strobes).
fn model_values(s: &SmSample, prev: &SmSample, schedulers: usize, warps: u32, out: &mut Vec<u64>) {
    out.clear();
    out.push(s.mp as u64);
    out.push(s.mp as u64);
    out.push(s.owner.map_or(0, |o| o as u64 + 1));
    out.push(s.owner.is_some() as u64);
    out.push(s.owner.unwrap_or(0) as u64);
    out.push(s.saturated as u64);
    out.push(s.mshrs.min(255) as u64);
    out.push(s.miss_queue.min(255) as u64);
    out.push(s.reexec_queue.min(255) as u64);
    for i in &s.issue[..schedulers] {
        out.push(i.is_some() as u64);
        out.push(i.unwrap_or(0) as u64);
    }
    out.push(s.wst_mem);
    out.push(s.wst_stall);
    out.push(s.active);
    out.push((s.l1_hits != prev.l1_hits) as u64);
    out.push((s.l1_misses != prev.l1_misses) as u64);
    out.push((s.l1_reservation_fails != prev.l1_reservation_fails) as u64);
    out.push((s.hits_under_miss != prev.hits_under_miss) as u64);
    out.push((s.reexec_retries != prev.reexec_retries) as u64);
    out.push((s.reexec_refused != prev.reexec_refused) as u64);
    for w in 0..warps {
        let bit = |m: u64| m >> w & 1;
        let state = if bit(s.active) == 0 {
            0
        } else if s.issue[..schedulers].contains(&Some(w as u8)) {
            3
        } else {
            1 + bit(s.wst_mem)
        };
        out.push(state);
        out.push(bit(s.wst_stall) | bit(s.reexec_warps) << 1);
    }
}

/// Writes one change of a model or RTL variable.
fn write_value(w: &mut VcdWriter, id: IdCode, width: u32, kind: Kind, v: u64) -> std::io::Result<()> {
    let pick = |t: &[&'static str]| t.get(v as usize).copied().unwrap_or("?");
    match kind {
        Kind::Bits => change(w, id, width, v),
        Kind::Mode => w.change_string(id, pick(&MODE)),
        Kind::State => w.change_string(id, pick(&STATE)),
        Kind::Stall => w.change_string(id, pick(&STALL)),
        Kind::Owner if v == 0 => w.change_string(id, "none"),
        // Only when the owner changes.
        Kind::Owner => w.change_string(id, &format!("w{}", v - 1)),
    }
}

struct SmWave {
    sm: usize,
    model: Vec<(String, u32, Kind)>,
    rtl: Vec<Shown>,
    /// IdCode of this SM's first variable (model then RTL, numbered in order).
    base: u32,
    /// Values at the first sample (written under the header at the end).
    first: Option<Vec<u64>>,
    /// Last written values (model then RTL); `None` before the first sample.
    last: Option<Vec<u64>>,
    /// Which variables changed after the first sample: the RTL ones that never did are
    /// constants over the dump and are left out.
    changed: Vec<bool>,
    prev_sample: SmSample,
}

/// A VCD being written during a run. The value changes stream into a body file beside the
/// output; the header goes in at the end, when it is known which RTL signals never changed
/// (configuration inputs, idle registers), so that those are left out.
pub struct Waves {
    file: PendingFile,
    out: VcdWriter,
    body_file: PendingFile,
    body: VcdWriter,
    window: (u64, u64),
    schedulers: usize,
    sms: Vec<SmWave>,
    warps: u32,
    /// IdCode of the clock.
    clk: IdCode,
    scratch: Vec<u64>,
    raw: Vec<u64>,
    first_time: Option<u64>,
    /// Whether the RTL blocks capture their signals (on from `visit_rtl` until the first
    /// sample outside the window).
    capturing: bool,
}

impl Waves {
    /// Opens the temporary files and lists `sms`' signals.
    pub fn create(
        opts: &WaveOptions,
        sms: &mut [Sm],
        schedulers: usize,
        warps: u32,
    ) -> std::io::Result<Self> {
        let chosen: Vec<usize> = match &opts.sms {
            Some(list) => {
                if let Some(&bad) = list.iter().find(|&&s| s >= sms.len()) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!(
                            "--vcd-sms: SM {bad} does not exist (the machine has {})",
                            sms.len()
                        ),
                    ));
                }
                list.clone()
            }
            None => (0..sms.len()).collect(),
        };
        // On an error below, the files are dropped uncommitted and removed.
        let (file, out) = PendingFile::create(&opts.path)?;
        // The body goes to the system's temporary directory, so that the output's directory
        // only ever holds the one temporary file of the output itself.
        static BODIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = BODIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body_path = std::env::temp_dir().join(format!("mascar-vcd-body-{}-{n}.vcd", std::process::id()));
        let (body_file, body) = PendingFile::create(&body_path)?;
        let mut waves = vec![];
        let mut base = 0u32;
        for &sm in &chosen {
            let model = model_vars(schedulers, warps);
            let mut c = Collect::default();
            sms[sm].blocks.visit_rtl(&mut c);
            let rtl = readable(&c.signals, crate::mascar::ports::RTL_LANES as u32);
            let n = model.len() + rtl.len();
            waves.push(SmWave {
                sm,
                model,
                rtl,
                base,
                first: None,
                last: None,
                changed: vec![false; n],
                prev_sample: sms[sm].wave_sample(),
            });
            base += n as u32;
        }
        Ok(Waves {
            file,
            out: vcd::Writer::new(out),
            body_file,
            body: vcd::Writer::new(body),
            window: opts.window.unwrap_or((0, u64::MAX)),
            schedulers,
            warps,
            clk: IdCode::from(base),
            sms: waves,
            scratch: Vec::new(),
            raw: Vec::new(),
            first_time: None,
            capturing: true,
        })
    }

    /// Where the finished file goes.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Records the SMs' state after `cycle`, and switches the RTL blocks' capture on for
    /// the next cycle exactly when it is in the window.
    pub fn sample(&mut self, cycle: u64, sms: &mut [Sm]) -> std::io::Result<()> {
        let window = self.window.0..self.window.1;
        let in_window = window.contains(&cycle);
        let capture_next = window.contains(&(cycle + 1));
        if capture_next != self.capturing {
            for wave in &self.sms {
                sms[wave.sm].blocks.set_rtl_capture(capture_next);
            }
            self.capturing = capture_next;
        }
        // Outside the window only the cycle before it is needed (the strobes compare with
        // it): everywhere else recording costs two comparisons.
        if !in_window && !capture_next {
            return Ok(());
        }
        // Times are half cycles (500 ps, so the axis still reads in cycles as ns): the clock
        // rises at 2c, where cycle c's values appear, and falls at 2c + 1.
        if in_window && self.first_time.is_some() {
            self.body.timestamp(2 * cycle)?;
            self.body.change_scalar(self.clk, Value::V1)?;
        }
        for wave in &mut self.sms {
            let sm = &sms[wave.sm];
            let s = sm.wave_sample();
            if in_window {
                let values = &mut self.scratch;
                model_values(&s, &wave.prev_sample, self.schedulers, self.warps, values);
                self.raw.clear();
                sm.blocks.rtl_values(&mut self.raw);
                // Nothing captured yet reads as zeros.
                values.extend(wave.rtl.iter().map(|r| r.source.value(&self.raw)));
                match &mut wave.last {
                    None => {
                        wave.first = Some(values.clone());
                        wave.last = Some(values.clone());
                        self.first_time.get_or_insert(cycle);
                    }
                    Some(last) => {
                        let kinds = wave
                            .model
                            .iter()
                            .map(|m| (m.1, m.2))
                            .chain(wave.rtl.iter().map(|r| (r.width, Kind::Bits)));
                        for (i, ((width, kind), &v)) in kinds.zip(values.iter()).enumerate() {
                            if last[i] == v {
                                continue;
                            }
                            let id = IdCode::from(wave.base + i as u32);
                            write_value(&mut self.body, id, width, kind, v)?;
                            wave.changed[i] = true;
                            last[i] = v;
                        }
                    }
                }
            }
            wave.prev_sample = s;
        }
        if in_window {
            self.body.timestamp(2 * cycle + 1)?;
            self.body.change_scalar(self.clk, Value::V0)?;
        }
        Ok(())
    }

    /// Writes the header (RTL signals that never changed left out), the first values and
    /// the changes, closes the file at `cycle` and moves it into place.
    pub fn finish(mut self, cycle: u64) -> std::io::Result<PathBuf> {
        let end = cycle.min(self.window.1);
        if self.first_time.is_some_and(|t| t < end) {
            self.body.timestamp(2 * end)?;
        }
        self.body.flush()?;
        let Waves {
            file,
            mut out,
            body_file,
            body,
            sms,
            first_time,
            clk,
            ..
        } = self;
        drop(body);
        let w = &mut out;
        w.timescale(500, TimescaleUnit::PS)?;
        w.add_module("gpu")?;
        w.var_def(VarType::Wire, 1, clk, "clk", None)?;
        for wave in &sms {
            w.add_module(&format!("sm{}", wave.sm))?;
            let id = |i: usize| IdCode::from(wave.base + i as u32);
            // Model variables: a dotted name (`warp07.state`) is a scope of its own.
            let mut scope: Option<&str> = None;
            for (i, (name, width, kind)) in wave.model.iter().enumerate() {
                let (sc, leaf) = match name.split_once('.') {
                    Some((a, b)) => (Some(a), b),
                    None => (None, name.as_str()),
                };
                if sc != scope {
                    if scope.is_some() {
                        w.upscope()?;
                    }
                    if let Some(sc) = sc {
                        w.add_module(sc)?;
                    }
                    scope = sc;
                }
                let ty = if *kind == Kind::Bits {
                    VarType::Wire
                } else {
                    VarType::String
                };
                w.var_def(ty, *width, id(i), leaf, None)?;
            }
            if scope.is_some() {
                w.upscope()?;
            }
            let m = wave.model.len();
            let declared: Vec<usize> = (0..wave.rtl.len()).filter(|&j| wave.changed[m + j]).collect();
            if !declared.is_empty() {
                w.add_module("rtl")?;
                let mut open: Vec<&str> = vec![];
                for &j in &declared {
                    let r = &wave.rtl[j];
                    let common = open
                        .iter()
                        .zip(&r.scope)
                        .take_while(|(a, b)| **a == b.as_str())
                        .count();
                    while open.len() > common {
                        w.upscope()?;
                        open.pop();
                    }
                    for s in &r.scope[common..] {
                        w.add_module(s)?;
                        open.push(s);
                    }
                    w.var_def(VarType::Wire, r.width, id(m + j), &r.name, None)?;
                }
                for _ in open {
                    w.upscope()?;
                }
                w.upscope()?;
            }
            w.upscope()?;
        }
        w.upscope()?;
        w.enddefinitions()?;
        if let Some(t) = first_time {
            w.timestamp(2 * t)?;
            w.change_scalar(clk, Value::V1)?;
            for wave in &sms {
                let first = wave.first.as_deref().unwrap_or(&[]);
                let kinds = wave
                    .model
                    .iter()
                    .map(|m| (m.1, m.2))
                    .chain(wave.rtl.iter().map(|r| (r.width, Kind::Bits)));
                let m = wave.model.len();
                for (i, ((width, kind), &v)) in kinds.zip(first.iter()).enumerate() {
                    if i < m || wave.changed[i] {
                        write_value(w, IdCode::from(wave.base + i as u32), width, kind, v)?;
                    }
                }
            }
        }
        w.flush()?;
        // The body: committed under its own name, copied in, removed.
        let body_path = body_file.commit()?;
        let copied = (|| {
            let mut r = std::fs::File::open(&body_path)?;
            std::io::copy(&mut r, out.writer())?;
            out.flush()
        })();
        let _ = std::fs::remove_file(&body_path);
        copied?;
        // The writer's buffer is flushed: dropping it closes the file before the rename.
        drop(out);
        file.commit()
    }
}

/// Every variable a VCD declares: dotted path -> (width, whether a string).
fn declared(vcd_path: &Path) -> HashMap<String, (u32, bool)> {
    fn walk(items: &[vcd::ScopeItem], prefix: &str, out: &mut HashMap<String, (u32, bool)>) {
        for it in items {
            match it {
                vcd::ScopeItem::Scope(s) => walk(&s.items, &format!("{prefix}{}.", s.identifier), out),
                vcd::ScopeItem::Var(v) => {
                    let string = v.var_type == VarType::String;
                    out.insert(format!("{prefix}{}", v.reference), (v.size, string));
                }
                _ => {}
            }
        }
    }
    let mut out = HashMap::new();
    if let Ok(f) = std::fs::File::open(vcd_path) {
        if let Ok(h) = vcd::Parser::new(std::io::BufReader::new(f)).parse_header() {
            walk(&h.items, "", &mut out);
        }
    }
    out
}

/// Writes a GTKWave save file beside a VCD: per SM, groups that put each model signal beside
/// the RTL signal that computes it (when the VCD has them: `--engine rtl|lockstep`), the
/// decoded text views, and the warps, one collapsed group with a scope per warp; zoomed to
/// `window`. Only signals the VCD declares are listed (RTL signals that never changed are
/// not in it).
pub fn write_gtkw(
    path: &Path,
    vcd: &Path,
    sms: &[usize],
    _schedulers: usize,
    warps: u32,
    window: (u64, u64),
) -> std::io::Result<()> {
    let vars = declared(vcd);
    let mut s = String::new();
    s.push_str("[*] GTKWave save file written by `mascar run --vcd`\n");
    let dump = vcd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    s.push_str(&format!("[dumpfile] \"{dump}\"\n"));
    // GTKWave's zoom z shows about 200 * 2^z pixels per time unit (measured with GTKWave
    // 3.3.118 at this window size); fit the window in the ~950-pixel wave pane. Times are
    // in ns, as the VCD's 500 ps units are read.
    let span = (window.1 - window.0).max(1) as f64;
    let zoom = (950.0 / (200.0 * span)).log2().floor();
    s.push_str(&format!("[timestart] {}\n", window.0));
    s.push_str("[size] 1600 900\n[pos] -1 -1\n");
    s.push_str(&format!(
        "*{zoom:.6} {} -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
        window.0
    ));
    s.push_str("[sst_width] 260\n[signals_width] 300\n[sst_expanded] 1\n");
    // Flags: 0x28 binary, 0x24 decimal, 0x22 hex; groups begin 0x800200 (0xc00200 closed),
    // end 0x1000200 (0x1400200 closed).
    let mut trace = |s: &mut String, name: &str| {
        if let Some(&(width, string)) = vars.get(name) {
            // Text values and single bits show as they are.
            if string || width == 1 {
                s.push_str(&format!("@28\n{name}\n"));
            } else {
                let flag = if width > 8 { 22 } else { 24 };
                s.push_str(&format!("@{flag}\n{name}[{}:0]\n", width - 1));
            }
        }
    };
    trace(&mut s, "gpu.clk");
    for &sm in sms {
        let p = |n: &str| format!("gpu.sm{sm}.{n}");
        let r = |n: &str| format!("gpu.sm{sm}.rtl.{n}");
        let group =
            |s: &mut String, title: &str, names: &[String], trace: &mut dyn FnMut(&mut String, &str)| {
                s.push_str(&format!("@800200\n-SM {sm}: {title}\n"));
                for n in names {
                    trace(s, n);
                }
                s.push_str(&format!("@1000200\n-SM {sm}: {title}\n"));
            };
        group(
            &mut s,
            "MAS mode and owner (model | RTL)",
            &[
                p("mode"),
                p("saturated"),
                r("issue_top.saturated"),
                p("mp"),
                r("issue_top.sched.mp"),
                p("owner_name"),
                p("owner_valid"),
                r("issue_top.sched.owner_valid"),
                p("owner"),
                r("issue_top.sched.owner"),
                r("issue_top.wrc.release_owner"),
            ],
            &mut trace,
        );
        group(
            &mut s,
            "issue (model | RTL)",
            &[
                p("issue0_valid"),
                r("issue_top.issue_valid_0"),
                p("issue0_warp"),
                r("issue_top.issue_warp_0"),
                p("issue1_valid"),
                r("issue_top.issue_valid_1"),
                p("issue1_warp"),
                r("issue_top.issue_warp_1"),
            ],
            &mut trace,
        );
        group(
            &mut s,
            "warp status table, bit w = warp w (model | RTL)",
            &[
                p("active"),
                p("wst_mem"),
                r("issue_top.wst.mem"),
                p("wst_stall"),
                r("issue_top.wst.stall"),
            ],
            &mut trace,
        );
        group(
            &mut s,
            "L1 and queues (model | RTL)",
            &[
                p("l1_hit"),
                p("l1_miss"),
                p("l1_reservation_fail"),
                p("hit_under_miss"),
                p("reexec_retry"),
                p("reexec_refused"),
                p("mshrs_used"),
                p("miss_queue_used"),
                p("reexec_queue_used"),
                r("reexec_queue.occupancy"),
                r("reexec_queue.full"),
            ],
            &mut trace,
        );
        s.push_str(&format!("@c00200\n-SM {sm}: warps (state, stall reason)\n"));
        for w in 0..warps {
            trace(&mut s, &p(&format!("warp{w:02}.state")));
            trace(&mut s, &p(&format!("warp{w:02}.stall")));
        }
        s.push_str(&format!("@1400200\n-SM {sm}: warps (state, stall reason)\n"));
    }
    crate::output::write_atomic(path, s.as_bytes())
}
