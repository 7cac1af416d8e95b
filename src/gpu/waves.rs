//! Waveforms, VCD or FST ([`WaveFormat`]: by the path's extension), two time units per core
//! cycle (VCD 500 ps, FST 100 ps × 5) so that `gpu.clk` can fall mid-cycle while the axis
//! reads in cycles, to a temporary file renamed into place when complete, with a GTKWave save
//! file beside it.
//!
//! [`Waves`] holds one scope per chosen SM with the model's own signals ([`SmSample`]), text
//! views (mode, owner, each warp's state and stall reason: VCD strings, or ASCII vectors in
//! an FST) and, when the SM runs RTL blocks, an `rtl` scope under it with the rust-hdl
//! blocks' signals, walked with rust-hdl's `Probe` and shown as registers and per-warp
//! vectors ([`crate::output::vcd::readable`]). Only changes are recorded, to a change log;
//! at the end the layout is written once through a [`WaveSink`] (VCD or FST backend),
//! leaving out the RTL signals that never changed, and the log replayed into it. The RTL
//! blocks are probed only inside the window.

use crate::gpu::sm::{Sm, SmSample};
use crate::output::fst::FstSink;
use crate::output::vcd::{readable, Collect, Shown, VcdSink, WaveSink};
use crate::output::PendingFile;
use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use vcd::VarType;

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

/// The waveform file format, from the path's extension: `.fst` writes FST (GTKWave's
/// compressed format), anything else VCD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveFormat {
    Vcd,
    Fst,
}

impl WaveFormat {
    pub fn of(path: &Path) -> Self {
        match path.extension() {
            Some(e) if e.eq_ignore_ascii_case("fst") => WaveFormat::Fst,
            _ => WaveFormat::Vcd,
        }
    }
}

impl Kind {
    /// The longest text of a text view (FST holds text as fixed-width ASCII vectors).
    fn chars(self) -> Option<u32> {
        let longest = |t: &[&str]| t.iter().map(|x| x.len() as u32).max().unwrap_or(1);
        match self {
            Kind::Bits => None,
            Kind::Mode => Some(longest(&MODE)),
            Kind::State => Some(longest(&STATE)),
            Kind::Stall => Some(longest(&STALL)),
            // `none`, `w63`.
            Kind::Owner => Some(4),
        }
    }
}

/// Writes one change of a model or RTL variable.
fn write_value(w: &mut dyn WaveSink, id: u32, width: u32, kind: Kind, v: u64) -> std::io::Result<()> {
    let pick = |t: &[&'static str]| t.get(v as usize).copied().unwrap_or("?");
    match kind {
        Kind::Bits => w.bits(id, width, v),
        Kind::Mode => w.text(id, pick(&MODE)),
        Kind::State => w.text(id, pick(&STATE)),
        Kind::Stall => w.text(id, pick(&STALL)),
        Kind::Owner if v == 0 => w.text(id, "none"),
        Kind::Owner => {
            // `w` and at most two digits (warps ≤ 64), without allocating.
            let n = (v - 1).min(99) as u8;
            let (buf, len) = if n < 10 {
                ([b'w', b'0' + n, 0], 2)
            } else {
                ([b'w', b'0' + n / 10, b'0' + n % 10], 3)
            };
            w.text(id, std::str::from_utf8(&buf[..len]).unwrap_or("w?"))
        }
    }
}

/// The value changes of a dump as they are recorded, in a compact binary form (LEB128
/// numbers): `0, cycle` opens a cycle of the window, `variable + 1, value` is a change. The
/// file is written in the system's temporary directory and replayed into the waveform file
/// at the end, once it is known which RTL signals never changed.
struct ChangeLog {
    file: PendingFile,
    w: std::io::BufWriter<std::fs::File>,
}

impl ChangeLog {
    fn create() -> std::io::Result<Self> {
        static LOGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = LOGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("mascar-wave-changes-{}-{n}.log", std::process::id()));
        let (file, w) = PendingFile::create(&path)?;
        Ok(ChangeLog { file, w })
    }

    fn number(&mut self, mut x: u64) -> std::io::Result<()> {
        let mut buf = [0u8; 10];
        let mut n = 0;
        loop {
            let low = (x & 0x7f) as u8;
            x >>= 7;
            if x == 0 {
                buf[n] = low;
                n += 1;
                break;
            }
            buf[n] = low | 0x80;
            n += 1;
        }
        self.w.write_all(&buf[..n])
    }

    fn cycle(&mut self, c: u64) -> std::io::Result<()> {
        self.number(0)?;
        self.number(c)
    }

    fn change(&mut self, var: u32, v: u64) -> std::io::Result<()> {
        self.number(var as u64 + 1)?;
        self.number(v)
    }

    /// Closes the log and opens it for reading. The file is removed at once (an open file
    /// stays readable on Linux; elsewhere the removal may fail and leave it in the temporary
    /// directory).
    fn into_reader(self) -> std::io::Result<LogReader> {
        let ChangeLog { file, mut w } = self;
        w.flush()?;
        drop(w);
        let path = file.commit()?;
        let r = std::fs::File::open(&path);
        let _ = std::fs::remove_file(&path);
        Ok(LogReader(std::io::BufReader::new(r?)))
    }
}

struct LogReader(std::io::BufReader<std::fs::File>);

enum Logged {
    Cycle(u64),
    Change(u32, u64),
}

impl LogReader {
    /// The next number, `None` at the end of the log.
    fn number(&mut self) -> std::io::Result<Option<u64>> {
        let (mut x, mut shift) = (0u64, 0);
        loop {
            let mut b = [0u8];
            if self.0.read(&mut b)? == 0 {
                return if shift == 0 {
                    Ok(None)
                } else {
                    Err(std::io::Error::other("waveform change log: cut short"))
                };
            }
            x |= ((b[0] & 0x7f) as u64) << shift;
            if b[0] & 0x80 == 0 {
                return Ok(Some(x));
            }
            shift += 7;
        }
    }

    fn next(&mut self) -> std::io::Result<Option<Logged>> {
        let Some(tag) = self.number()? else {
            return Ok(None);
        };
        let value = self
            .number()?
            .ok_or_else(|| std::io::Error::other("waveform change log: cut short"))?;
        Ok(Some(if tag == 0 {
            Logged::Cycle(value)
        } else {
            Logged::Change((tag - 1) as u32, value)
        }))
    }
}

struct SmWave {
    sm: usize,
    model: Vec<(String, u32, Kind)>,
    rtl: Vec<Shown>,
    /// Index of this SM's first variable (model then RTL, numbered in order).
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

/// A waveform being recorded during a run (VCD or FST, [`WaveFormat::of`] its path). The
/// value changes stream into a [`ChangeLog`]; at the end the header is written, leaving out
/// the RTL signals that never changed (configuration inputs, idle registers), and the log is
/// replayed into the file through a [`WaveSink`]; the `.gtkw` is written beside it.
pub struct Waves {
    format: WaveFormat,
    file: PendingFile,
    out: std::io::BufWriter<std::fs::File>,
    log: ChangeLog,
    window: (u64, u64),
    schedulers: usize,
    sms: Vec<SmWave>,
    warps: u32,
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
        // On an error below, the files are dropped uncommitted and removed. The log goes to
        // the system's temporary directory, so that the output's directory only ever holds
        // the one temporary file of the output itself.
        let (file, out) = PendingFile::create(&opts.path)?;
        let log = ChangeLog::create()?;
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
            format: WaveFormat::of(&opts.path),
            file,
            out,
            log,
            window: opts.window.unwrap_or((0, u64::MAX)),
            schedulers,
            warps,
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
        if in_window {
            self.log.cycle(cycle)?;
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
                        for (i, (&v, l)) in values.iter().zip(last.iter_mut()).enumerate() {
                            if *l != v {
                                self.log.change(wave.base + i as u32, v)?;
                                wave.changed[i] = true;
                                *l = v;
                            }
                        }
                    }
                }
            }
            wave.prev_sample = s;
        }
        Ok(())
    }

    /// Writes the header (RTL signals that never changed left out), the first values and
    /// the changes, closes the file at `cycle` and moves it into place; then writes the
    /// GTKWave save file beside it (same name, `.gtkw`). Returns the waveform's path.
    pub fn finish(self, cycle: u64) -> std::io::Result<PathBuf> {
        let end = cycle.min(self.window.1);
        let Waves {
            format,
            file,
            out,
            log,
            sms,
            first_time,
            window,
            warps,
            ..
        } = self;
        let mut log = log.into_reader()?;
        let mut w: Box<dyn WaveSink> = match format {
            WaveFormat::Vcd => Box::new(VcdSink::new(file, out)?),
            WaveFormat::Fst => Box::new(FstSink::new(file, out)?),
        };
        // Per recorded variable: its id in the file (`NONE`: left out), width and kind. Ids
        // are the recording's own numbers (model then RTL, SM after SM), the clock's the
        // next one.
        const NONE: u32 = u32::MAX;
        let mut vars: Vec<(u32, u32, Kind)> = vec![];
        // What the file declares, for the save file: dotted path -> (width, text).
        let mut declared: HashMap<String, (u32, bool)> = HashMap::new();
        let mut declare =
            |w: &mut dyn WaveSink, id: u32, path: String, leaf: &str, width: u32, kind: Kind| {
                let text = kind.chars();
                let shown = match (format, text) {
                    (WaveFormat::Vcd, Some(_)) => 1,
                    (WaveFormat::Fst, Some(chars)) => 8 * chars,
                    (_, None) => width,
                };
                declared.insert(path, (shown, text.is_some()));
                w.var(id, leaf, width, text)
            };
        let clk = sms.iter().map(|s| s.changed.len() as u32).sum::<u32>();
        w.scope("gpu")?;
        declare(&mut *w, clk, "gpu.clk".into(), "clk", 1, Kind::Bits)?;
        for wave in &sms {
            let top = format!("gpu.sm{}", wave.sm);
            w.scope(&format!("sm{}", wave.sm))?;
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
                        w.scope(sc)?;
                    }
                    scope = sc;
                }
                let id = wave.base + i as u32;
                declare(&mut *w, id, format!("{top}.{name}"), leaf, *width, *kind)?;
                vars.push((id, *width, *kind));
            }
            if scope.is_some() {
                w.upscope()?;
            }
            let m = wave.model.len();
            let mut open: Vec<&str> = vec![];
            let mut opened_rtl = false;
            for (j, r) in wave.rtl.iter().enumerate() {
                if !wave.changed[m + j] {
                    vars.push((NONE, r.width, Kind::Bits));
                    continue;
                }
                if !opened_rtl {
                    w.scope("rtl")?;
                    opened_rtl = true;
                }
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
                    w.scope(s)?;
                    open.push(s);
                }
                let path = format!(
                    "{top}.rtl.{}",
                    r.scope.iter().map(|s| format!("{s}.")).collect::<String>()
                );
                let id = wave.base + (m + j) as u32;
                declare(
                    &mut *w,
                    id,
                    format!("{path}{}", r.name),
                    &r.name,
                    r.width,
                    Kind::Bits,
                )?;
                vars.push((id, r.width, Kind::Bits));
            }
            for _ in open {
                w.upscope()?;
            }
            if opened_rtl {
                w.upscope()?;
            }
            w.upscope()?;
        }
        w.upscope()?;
        w.end_header()?;
        // Times are half cycles (500 ps, so the axis still reads in cycles as ns): the clock
        // rises at 2c, where cycle c's values appear, and falls at 2c + 1.
        if let Some(t) = first_time {
            w.time(2 * t)?;
            w.bits(clk, 1, 1)?;
            for wave in &sms {
                let first = wave.first.as_deref().unwrap_or(&[]);
                for (i, &v) in first.iter().enumerate() {
                    let (id, width, kind) = vars[wave.base as usize + i];
                    if id != NONE {
                        write_value(&mut *w, id, width, kind, v)?;
                    }
                }
            }
            // The changes, cycle by cycle (the first cycle has none).
            let mut open: Option<u64> = None;
            while let Some(item) = log.next()? {
                match item {
                    Logged::Cycle(c) => {
                        if let Some(p) = open {
                            w.time(2 * p + 1)?;
                            w.bits(clk, 1, 0)?;
                        }
                        if c != t {
                            w.time(2 * c)?;
                            w.bits(clk, 1, 1)?;
                        }
                        open = Some(c);
                    }
                    Logged::Change(i, v) => {
                        let (id, width, kind) = vars
                            .get(i as usize)
                            .copied()
                            .ok_or_else(|| std::io::Error::other("waveform change log: bad variable"))?;
                        if id != NONE {
                            write_value(&mut *w, id, width, kind, v)?;
                        }
                    }
                }
            }
            if let Some(p) = open {
                w.time(2 * p + 1)?;
                w.bits(clk, 1, 0)?;
            }
            if t < end {
                w.time(2 * end)?;
            }
        }
        drop(log);
        let path = w.finish()?;
        let sm_list: Vec<usize> = sms.iter().map(|s| s.sm).collect();
        let dump = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let zoom = (window.0, window.1.min(cycle.max(window.0 + 1)));
        let text = gtkw_text(&dump, &declared, &sm_list, warps, zoom);
        crate::output::write_atomic(&path.with_extension("gtkw"), text.as_bytes())?;
        Ok(path)
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
    let dump = vcd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = gtkw_text(&dump, &vars, sms, warps, window);
    crate::output::write_atomic(path, text.as_bytes())
}

/// The save file's text for a dump named `dump` declaring `vars` (dotted path -> (width,
/// whether a text view)).
fn gtkw_text(
    dump: &str,
    vars: &HashMap<String, (u32, bool)>,
    sms: &[usize],
    warps: u32,
    window: (u64, u64),
) -> String {
    let mut s = String::new();
    s.push_str("[*] GTKWave save file written by `mascar run --vcd`\n");
    s.push_str(&format!("[dumpfile] \"{dump}\"\n"));
    // GTKWave reads both the VCD's 500 ps units and the FST's 100 ps ones in ps: a cycle is
    // 1000 of its units. Its zoom z shows about 200 * 2^z pixels per unit (measured with
    // GTKWave 3.3.118 at this window size); fit the window in the ~950-pixel wave pane.
    let ps = |cycles: u64| cycles.saturating_mul(1000);
    let span = ps((window.1 - window.0).max(1)) as f64;
    let zoom = (950.0 / (200.0 * span)).log2().floor();
    s.push_str(&format!("[timestart] {}\n", ps(window.0)));
    s.push_str("[size] 1600 900\n[pos] -1 -1\n");
    s.push_str(&format!(
        "*{zoom:.6} {} -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
        ps(window.0)
    ));
    s.push_str("[sst_width] 260\n[signals_width] 300\n[sst_expanded] 1\n");
    // Flags: 0x28 binary, 0x24 decimal, 0x22 hex; groups begin 0x800200 (0xc00200 closed),
    // end 0x1000200 (0x1400200 closed).
    let mut trace = |s: &mut String, name: &str| {
        if let Some(&(width, string)) = vars.get(name) {
            let range = if width > 1 {
                format!("[{}:0]", width - 1)
            } else {
                String::new()
            };
            // FST text views are ASCII vectors: 0x800 shows them as text. VCD text values
            // and single bits show as they are.
            let flag = match (string, width) {
                (true, 2..) => "820",
                (_, 1) | (true, _) => "28",
                (false, 2..=8) => "24",
                (false, _) => "22",
            };
            s.push_str(&format!("@{flag}\n"));
            // GTKWave shows a signal by its leaf name: an RTL signal beside the model's of
            // the same name is told apart by an alias, `rtl:` and its block path (with `/`:
            // GTKWave cuts an alias at its last `.` too).
            if let Some((_, rtl)) = name.split_once(".rtl.") {
                let rtl = rtl.strip_prefix("issue_top.").unwrap_or(rtl).replace('.', "/");
                s.push_str(&format!("+{{rtl:{rtl}{range}}} "));
            }
            s.push_str(&format!("{name}{range}\n"));
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
    s
}
