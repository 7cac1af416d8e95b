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
        if recordable(name, a) {
            self.values.push(atom_value(a).unwrap_or(0));
        }
    }
}
