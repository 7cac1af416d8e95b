//! VCD waveforms, written streaming with the `vcd` crate, one time unit (1 ns) per core
//! cycle, to a temporary file renamed into place when complete.
//!
//! [`Waves`] holds one scope per chosen SM with the model's own signals ([`SmSample`]) and,
//! when the SM runs RTL blocks, an `rtl` scope under it with every signal of the rust-hdl
//! blocks, walked with rust-hdl's [`Probe`]. Only changes are written, so the file grows with
//! activity, and memory stays flat however long the window.

use crate::gpu::sm::Sm;
use crate::report::PendingFile;
use rust_hdl::core::atom::Atom;
use rust_hdl::core::block::Block;
use rust_hdl::core::probe::Probe;
use rust_hdl::core::synth::VCDValue;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use vcd::{IdCode, TimescaleUnit, Value, VarType};

pub type VcdWriter = vcd::Writer<BufWriter<File>>;

/// Writes a whole VCD through `f`, atomically (see [`PendingFile`]).
pub fn write_atomic_vcd(
    path: &Path,
    f: impl FnOnce(&mut VcdWriter) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (pending, out) = PendingFile::create(path)?;
    let mut w = vcd::Writer::new(out);
    f(&mut w)?;
    w.flush()?;
    drop(w);
    pending.commit().map(|_| ())
}

/// Writes `value` (of `width` bits) for `id`.
pub fn change(w: &mut VcdWriter, id: IdCode, width: u32, value: u64) -> std::io::Result<()> {
    if width == 1 {
        w.change_scalar(id, if value & 1 == 1 { Value::V1 } else { Value::V0 })
    } else {
        w.change_vector(
            id,
            (0..width)
                .rev()
                .map(|b| if value >> b & 1 == 1 { Value::V1 } else { Value::V0 }),
        )
    }
}

/// One SM's model signals after a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmSample {
    /// Memory Priority mode (else Equal Priority).
    pub mp: bool,
    pub owner: Option<u8>,
    /// L1 saturation flag (MSHRs or miss queue almost full).
    pub saturated: bool,
    pub mshrs: u32,
    pub miss_queue: u32,
    pub reexec_queue: u32,
    /// Warps holding a re-execution queue entry (CAR keeps at most one per warp).
    pub reexec_warps: u64,
    /// Warp issued by each scheduler.
    pub issue: [Option<u8>; crate::mascar::MAX_SCHEDULERS],
    /// Warp status table: op type is memory / stall bit, per warp.
    pub wst_mem: u64,
    pub wst_stall: u64,
    /// Warp slots holding an unfinished warp.
    pub active: u64,
    /// Running L1 outcome counters (the waveform shows a strobe when one moves).
    pub l1_hits: u64,
    pub l1_misses: u64,
    pub l1_reservation_fails: u64,
    /// Running count of CAR hits served while an older miss waits in the re-execution queue.
    pub hits_under_miss: u64,
    /// Running counts of the re-execution queue's L1 accesses (retries) and of the refused
    /// ones.
    pub reexec_retries: u64,
    pub reexec_refused: u64,
}

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

/// The model's per-SM variables: (name, width); the order of [`model_values`].
fn model_vars(schedulers: usize, warps: u32) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = vec![
        ("mode".into(), 16),
        ("mp".into(), 1),
        ("owner_valid".into(), 1),
        ("owner".into(), 6),
        ("saturated".into(), 1),
        ("mshrs_used".into(), 8),
        ("miss_queue_used".into(), 8),
        ("reexec_queue_used".into(), 8),
    ];
    for s in 0..schedulers {
        v.push((format!("issue{s}_valid"), 1));
        v.push((format!("issue{s}_warp"), 6));
    }
    v.push(("wst_mem".into(), warps));
    v.push(("wst_stall".into(), warps));
    v.push(("active".into(), warps));
    v.push(("l1_hit".into(), 1));
    v.push(("l1_miss".into(), 1));
    v.push(("l1_reservation_fail".into(), 1));
    v.push(("hit_under_miss".into(), 1));
    v.push(("reexec_retry".into(), 1));
    v.push(("reexec_refused".into(), 1));
    v
}

/// The values of [`model_vars`] for a sample (`prev` gives the strobes).
fn model_values(s: &SmSample, prev: &SmSample, schedulers: usize, out: &mut Vec<u64>) {
    out.clear();
    // "EP" / "MP" as two ASCII bytes, so the viewer can print the mode as text.
    out.push(if s.mp { 0x4d50 } else { 0x4550 });
    out.push(s.mp as u64);
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
}

/// A rust-hdl signal's value as bits (≤ 64), `None` for what a VCD word cannot hold.
pub fn atom_value(a: &dyn Atom) -> Option<u64> {
    let bit = |v: &hdl_vcd::Value| matches!(v, hdl_vcd::Value::V1) as u64;
    match a.vcd() {
        VCDValue::Single(v) => Some(bit(&v)),
        VCDValue::Vector(v) if v.len() <= 64 => Some(v.iter().fold(0, |acc, b| acc << 1 | bit(b))),
        _ => None,
    }
}

fn recordable(name: &str, a: &dyn Atom) -> bool {
    // Clocks read low at every sample (after the edge): they carry nothing.
    name != "clock" && (1..=64).contains(&a.bits()) && atom_value(a).is_some()
}

/// Declares the RTL blocks' signals as nested scopes, in visiting order.
struct Declare<'a> {
    w: &'a mut VcdWriter,
    vars: Vec<(IdCode, u32)>,
    error: Option<std::io::Error>,
}

impl Declare<'_> {
    fn io(&mut self, r: std::io::Result<()>) {
        if let (Err(e), None) = (r, &self.error) {
            self.error = Some(e);
        }
    }
}

impl Probe for Declare<'_> {
    fn visit_start_scope(&mut self, name: &str, _node: &dyn Block) {
        let r = self.w.add_module(name);
        self.io(r);
    }
    fn visit_start_namespace(&mut self, name: &str, _node: &dyn Block) {
        let r = self.w.add_module(name);
        self.io(r);
    }
    fn visit_atom(&mut self, name: &str, a: &dyn Atom) {
        if !recordable(name, a) {
            return;
        }
        let width = a.bits() as u32;
        // rust-hdl names array elements `name$i`; `name_i` reads better in a viewer.
        match self
            .w
            .add_var(VarType::Wire, width, &name.replace('$', "_"), None)
        {
            Ok(id) => self.vars.push((id, width)),
            Err(e) => self.io(Err(e)),
        }
    }
    fn visit_end_namespace(&mut self, _name: &str, _node: &dyn Block) {
        let r = self.w.upscope();
        self.io(r);
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        let r = self.w.upscope();
        self.io(r);
    }
}

/// Reads the RTL blocks' signals in the order [`Declare`] saw them (the RTL harness uses it
/// to capture them just before each clock edge).
pub struct Read<'a> {
    pub values: &'a mut Vec<u64>,
}

impl Probe for Read<'_> {
    fn visit_atom(&mut self, name: &str, a: &dyn Atom) {
        if recordable(name, a) {
            self.values.push(atom_value(a).unwrap_or(0));
        }
    }
}

struct SmWave {
    sm: usize,
    model: Vec<(IdCode, u32)>,
    rtl: Vec<(IdCode, u32)>,
    /// Last written values (model then RTL); `None` before the first sample.
    last: Option<Vec<u64>>,
    prev_sample: SmSample,
}

/// A VCD being written during a run.
pub struct Waves {
    file: PendingFile,
    w: VcdWriter,
    window: (u64, u64),
    schedulers: usize,
    sms: Vec<SmWave>,
    scratch: Vec<u64>,
    last_time: Option<u64>,
}

impl Waves {
    /// Opens the temporary file and writes the header for `sms`' signals.
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
        // On an error below, `file` is dropped uncommitted and removes its temporary file.
        let (file, out) = PendingFile::create(&opts.path)?;
        let mut w = vcd::Writer::new(out);
        let waves = (|| -> std::io::Result<Vec<SmWave>> {
            w.timescale(1, TimescaleUnit::NS)?;
            w.add_module("gpu")?;
            let mut waves = vec![];
            for &sm in &chosen {
                w.add_module(&format!("sm{sm}"))?;
                let mut model = vec![];
                for (name, width) in model_vars(schedulers, warps) {
                    model.push((w.add_var(VarType::Wire, width, &name, None)?, width));
                }
                w.add_module("rtl")?;
                let mut d = Declare {
                    w: &mut w,
                    vars: vec![],
                    error: None,
                };
                sms[sm].blocks.visit_rtl(&mut d);
                if let Some(e) = d.error {
                    return Err(e);
                }
                let rtl = d.vars;
                w.upscope()?;
                w.upscope()?;
                waves.push(SmWave {
                    sm,
                    model,
                    rtl,
                    last: None,
                    prev_sample: sms[sm].wave_sample(),
                });
            }
            w.upscope()?;
            w.enddefinitions()?;
            Ok(waves)
        })()?;
        Ok(Waves {
            file,
            w,
            window: opts.window.unwrap_or((0, u64::MAX)),
            schedulers,
            sms: waves,
            scratch: Vec::new(),
            last_time: None,
        })
    }

    /// Where the finished file goes.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Records the SMs' state after `cycle`.
    pub fn sample(&mut self, cycle: u64, sms: &[Sm]) -> std::io::Result<()> {
        let in_window = (self.window.0..self.window.1).contains(&cycle);
        for wave in &mut self.sms {
            let sm = &sms[wave.sm];
            let s = sm.wave_sample();
            if in_window {
                let values = &mut self.scratch;
                model_values(&s, &wave.prev_sample, self.schedulers, values);
                sm.blocks.rtl_values(values);
                // Nothing captured yet reads as zeros rather than shifting the columns.
                values.resize(wave.model.len() + wave.rtl.len(), 0);
                let ids = wave.model.iter().chain(wave.rtl.iter());
                for (i, (&(id, width), &v)) in ids.zip(values.iter()).enumerate() {
                    if wave.last.as_ref().is_some_and(|l| l[i] == v) {
                        continue;
                    }
                    if self.last_time != Some(cycle) {
                        self.w.timestamp(cycle)?;
                        self.last_time = Some(cycle);
                    }
                    change(&mut self.w, id, width, v)?;
                }
                match &mut wave.last {
                    Some(l) => l.copy_from_slice(values),
                    None => wave.last = Some(values.clone()),
                }
            }
            wave.prev_sample = s;
        }
        Ok(())
    }

    /// Closes the file at `cycle` and moves it into place.
    pub fn finish(mut self, cycle: u64) -> std::io::Result<PathBuf> {
        let end = cycle.min(self.window.1);
        if self.last_time.is_some_and(|t| t < end) {
            self.w.timestamp(end)?;
        }
        self.w.flush()?;
        let Waves { file, w, .. } = self;
        // The writer's buffer is flushed: dropping it closes the file before the rename.
        drop(w);
        file.commit()
    }
}

/// Writes a GTKWave save file beside a VCD: key signals of each SM grouped, mode as text,
/// warp ids in decimal, zoomed to `window`.
pub fn write_gtkw(
    path: &Path,
    vcd: &Path,
    sms: &[usize],
    schedulers: usize,
    warps: u32,
    window: (u64, u64),
) -> std::io::Result<()> {
    let mut s = String::new();
    s.push_str("[*] GTKWave save file written by `mascar run --vcd`\n");
    let dump = vcd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    s.push_str(&format!("[dumpfile] \"{dump}\"\n"));
    // GTKWave's zoom z shows about 200 * 2^z pixels per time unit (measured with GTKWave
    // 3.3.118 at this window size); fit the window in the ~950-pixel wave pane.
    let span = (window.1 - window.0).max(1) as f64;
    let zoom = (950.0 / (200.0 * span)).log2().floor();
    s.push_str(&format!("[timestart] {}\n", window.0));
    s.push_str("[size] 1600 900\n[pos] -1 -1\n");
    s.push_str(&format!(
        "*{zoom:.6} {} -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
        window.0
    ));
    s.push_str("[sst_width] 260\n[signals_width] 240\n[sst_expanded] 1\n");
    // Flags: 0x28 binary, 0x24 decimal, 0x820 ASCII text; groups begin 0x800200, end 0x1000200.
    for &sm in sms {
        let p = |n: &str| format!("gpu.sm{sm}.{n}");
        s.push_str(&format!("@800200\n-SM {sm}: MAS mode and owner\n"));
        s.push_str(&format!("@820\n{}[15:0]\n", p("mode")));
        s.push_str(&format!("@28\n{}\n", p("saturated")));
        s.push_str(&format!("@28\n{}\n", p("owner_valid")));
        s.push_str(&format!("@24\n{}[5:0]\n", p("owner")));
        s.push_str(&format!("@1000200\n-SM {sm}: MAS mode and owner\n"));
        s.push_str(&format!("@800200\n-SM {sm}: issue\n"));
        for k in 0..schedulers {
            s.push_str(&format!("@28\n{}\n", p(&format!("issue{k}_valid"))));
            s.push_str(&format!("@24\n{}[5:0]\n", p(&format!("issue{k}_warp"))));
        }
        s.push_str(&format!("@1000200\n-SM {sm}: issue\n"));
        s.push_str(&format!("@800200\n-SM {sm}: L1 and queues\n"));
        for n in [
            "l1_hit",
            "l1_miss",
            "l1_reservation_fail",
            "hit_under_miss",
            "reexec_retry",
            "reexec_refused",
        ] {
            s.push_str(&format!("@28\n{}\n", p(n)));
        }
        for n in ["mshrs_used", "miss_queue_used", "reexec_queue_used"] {
            s.push_str(&format!("@24\n{}[7:0]\n", p(n)));
        }
        s.push_str(&format!("@1000200\n-SM {sm}: L1 and queues\n"));
        s.push_str(&format!(
            "@800200\n-SM {sm}: warp status table (bit w = warp w)\n"
        ));
        for n in ["wst_mem", "wst_stall", "active"] {
            s.push_str(&format!("@22\n{}[{}:0]\n", p(n), warps - 1));
        }
        s.push_str(&format!(
            "@1000200\n-SM {sm}: warp status table (bit w = warp w)\n"
        ));
    }
    crate::report::write_atomic(path, s.as_bytes())
}
