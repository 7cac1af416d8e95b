//! VCD helpers shared by the waveform writer and the lockstep mismatch window: atomic VCD
//! files, value changes, and reading rust-hdl signals through its [`Probe`].

use super::PendingFile;
use rust_hdl::core::atom::Atom;
use rust_hdl::core::block::Block;
use rust_hdl::core::probe::Probe;
use rust_hdl::core::synth::VCDValue;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use vcd::{IdCode, Value};

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

/// One recordable RTL signal as the probe walks it: its scope path and name (rust-hdl's
/// spelling) and width; the order is that of [`Read`]'s values.
pub struct RtlSignal {
    pub scope: Vec<String>,
    pub name: String,
    pub width: u32,
}

/// Lists the RTL blocks' recordable signals, in visiting order.
#[derive(Default)]
pub struct Collect {
    scope: Vec<String>,
    pub signals: Vec<RtlSignal>,
}

impl Probe for Collect {
    fn visit_start_scope(&mut self, name: &str, _node: &dyn Block) {
        self.scope.push(name.to_string());
    }
    fn visit_start_namespace(&mut self, name: &str, _node: &dyn Block) {
        self.scope.push(name.to_string());
    }
    fn visit_atom(&mut self, name: &str, a: &dyn Atom) {
        if recordable(name, a) {
            self.signals.push(RtlSignal {
                scope: self.scope.clone(),
                name: name.to_string(),
                width: a.bits() as u32,
            });
        }
    }
    fn visit_end_namespace(&mut self, _name: &str, _node: &dyn Block) {
        self.scope.pop();
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.scope.pop();
    }
}

/// Where a shown signal's value comes from, as indices into [`Read`]'s values.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    One(usize),
    /// A per-warp mask split by lane (lane 0 holds the even warps): joined, warp w = bit w.
    Lanes(usize, usize),
}

/// A signal as a viewer shows it.
pub struct Shown {
    pub scope: Vec<String>,
    pub name: String,
    pub width: u32,
    pub source: Source,
}

impl Source {
    pub fn value(self, raw: &[u64]) -> u64 {
        let at = |i: usize| raw.get(i).copied().unwrap_or(0);
        match self {
            Source::One(i) => at(i),
            Source::Lanes(a, b) => crate::sched::lanes::join([at(a), at(b)]),
        }
    }
}

/// The RTL signals as a hardware engineer reads them: a flop (a scope holding only `d` and
/// `q`) is one signal named after the register (its `q`; `d` is next cycle's `q`), array
/// element `x$i` reads `x_i`, and a per-warp mask split into `lanes`-bit halves `x_0`,
/// `x_1` is one vector `x` in warp order.
pub fn readable(signals: &[RtlSignal], lanes: u32) -> Vec<Shown> {
    use std::collections::HashMap;
    let fix = |s: &str| s.replace('$', "_");
    let mut names: HashMap<&[String], Vec<&str>> = HashMap::new();
    for s in signals {
        names.entry(&s.scope).or_default().push(&s.name);
    }
    let is_flop = |scope: &[String]| {
        !scope.is_empty()
            && names
                .get(scope)
                .is_some_and(|n| n.len() == 2 && n.contains(&"d") && n.contains(&"q"))
    };
    let mut shown: Vec<Shown> = vec![];
    for (i, s) in signals.iter().enumerate() {
        let (scope, name) = if is_flop(&s.scope) {
            if s.name != "q" {
                continue;
            }
            let (last, up) = s.scope.split_last().expect("not empty");
            (up.to_vec(), fix(last))
        } else {
            (s.scope.clone(), fix(&s.name))
        };
        shown.push(Shown {
            scope: scope.iter().map(|x| fix(x)).collect(),
            name,
            width: s.width,
            source: Source::One(i),
        });
    }
    // Lane pairs: `x_0` and `x_1` of `lanes` bits in one scope, with no `x_2`.
    let mut out: Vec<Shown> = Vec::with_capacity(shown.len());
    let mut taken = vec![false; shown.len()];
    for i in 0..shown.len() {
        if taken[i] {
            continue;
        }
        let s = &shown[i];
        if let (Some(stem), Source::One(a)) = (s.name.strip_suffix("_0"), s.source) {
            let find = |suffix: &str| {
                shown.iter().position(|o| {
                    o.scope == s.scope && o.width == lanes && o.name == format!("{stem}{suffix}")
                })
            };
            if s.width == lanes && find("_2").is_none() {
                if let Some(j) = find("_1") {
                    if let Source::One(b) = shown[j].source {
                        taken[j] = true;
                        out.push(Shown {
                            scope: s.scope.clone(),
                            name: stem.to_string(),
                            width: 2 * lanes,
                            source: Source::Lanes(a, b),
                        });
                        continue;
                    }
                }
            }
        }
        out.push(Shown {
            scope: s.scope.clone(),
            name: s.name.clone(),
            width: s.width,
            source: s.source,
        });
    }
    out
}

/// Reads the RTL blocks' signals in the order [`Declare`] saw them (the RTL harness uses it
/// to capture them just before each clock edge).
pub struct Read<'a> {
    pub values: &'a mut Vec<u64>,
}

impl Probe for Read<'_> {
    fn visit_atom(&mut self, name: &str, a: &dyn Atom) {
        // As `recordable`, reading the value once: each `vcd()` call builds a vector of bits,
        // and this runs for every signal every cycle of a dump.
        if name != "clock" && (1..=64).contains(&a.bits()) {
            if let Some(v) = atom_value(a) {
                self.values.push(v);
            }
        }
    }
}

/// A waveform file being written, whatever its format: the hierarchy first (scopes and
/// variables, numbered from 0 in declaration order), then times and value changes.
/// [`crate::gpu::waves`] lays the signals out once and writes them through this, to VCD
/// ([`VcdSink`]) or FST ([`super::fst::FstSink`]).
pub trait WaveSink {
    fn scope(&mut self, name: &str) -> std::io::Result<()>;
    fn upscope(&mut self) -> std::io::Result<()>;
    /// Declares variable `id` (ids are small and unique, not necessarily contiguous):
    /// `width` bits, or text of up to `chars` characters.
    fn var(&mut self, id: u32, name: &str, width: u32, text: Option<u32>) -> std::io::Result<()>;
    /// Ends the hierarchy; times and changes follow.
    fn end_header(&mut self) -> std::io::Result<()>;
    /// Time in half cycles (the clock falls mid-cycle).
    fn time(&mut self, half_cycles: u64) -> std::io::Result<()>;
    fn bits(&mut self, var: u32, width: u32, value: u64) -> std::io::Result<()>;
    fn text(&mut self, var: u32, text: &str) -> std::io::Result<()>;
    /// Completes the file and moves it into place.
    fn finish(self: Box<Self>) -> std::io::Result<std::path::PathBuf>;
}

/// VCD through the `vcd` crate, 500 ps per time unit (two per cycle, so the axis reads in
/// cycles as ns); text as VCD string variables, which GTKWave and Surfer print as is.
pub struct VcdSink {
    file: PendingFile,
    w: VcdWriter,
}

impl VcdSink {
    /// Writes to `out`, the temporary file of `file`.
    pub fn new(file: PendingFile, out: BufWriter<File>) -> std::io::Result<Self> {
        let mut w = vcd::Writer::new(out);
        w.timescale(500, vcd::TimescaleUnit::PS)?;
        Ok(VcdSink { file, w })
    }
}

impl WaveSink for VcdSink {
    fn scope(&mut self, name: &str) -> std::io::Result<()> {
        self.w.add_module(name)
    }
    fn upscope(&mut self) -> std::io::Result<()> {
        self.w.upscope()
    }
    fn var(&mut self, id: u32, name: &str, width: u32, text: Option<u32>) -> std::io::Result<()> {
        let (ty, width) = match text {
            Some(_) => (vcd::VarType::String, 1),
            None => (vcd::VarType::Wire, width),
        };
        self.w.var_def(ty, width, IdCode::from(id), name, None)
    }
    fn end_header(&mut self) -> std::io::Result<()> {
        self.w.enddefinitions()
    }
    fn time(&mut self, half_cycles: u64) -> std::io::Result<()> {
        self.w.timestamp(half_cycles)
    }
    fn bits(&mut self, var: u32, width: u32, value: u64) -> std::io::Result<()> {
        change(&mut self.w, IdCode::from(var), width, value)
    }
    fn text(&mut self, var: u32, text: &str) -> std::io::Result<()> {
        self.w.change_string(IdCode::from(var), text)
    }
    fn finish(self: Box<Self>) -> std::io::Result<std::path::PathBuf> {
        let VcdSink { file, mut w } = *self;
        w.flush()?;
        // The buffer is flushed: dropping the writer closes the file before the rename.
        drop(w);
        file.commit()
    }
}
