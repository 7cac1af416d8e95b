//! Kernel-format kernels (built-ins and `.kern` files) written out as Accel-Sim trace
//! directories (`mascar trace export`), so Accel-Sim and this model can run the same stream.
//!
//! [design] Loads return the buffers' initial contents and stores write nothing, so every
//! warp's stream is fixed: each warp is walked functionally ([`Program::walk`], the control
//! flow and value registers the SM executes) and its instructions written one per line, with
//! the active mask and the per-lane addresses the SM would compute. Nothing is timing
//! dependent, so the stream is exactly what `mascar run` issues for the kernel.
//! - The file is what Accel-Sim's tracer (util/tracer_nvbit/tracer_tool/tracer_tool.cu) and
//!   its post-processing write, tracer version 4: the header keys `trace_parser.cc`
//!   (`trace_parser::parse_kernel_info`) reads, then per CTA `#BEGIN_TB`, `thread block =`,
//!   per warp `warp =`, `insts =`, the lines, `#END_TB`. CTAs are written in launch order
//!   (Accel-Sim hands a file's CTAs out in the order they come).
//! - Every warp ends with one `EXIT` of all its lanes: Accel-Sim retires a warp only when
//!   each of its threads executed an `EXIT` (trace_driven.cc, `checkExecutionStatusAndUpdate`).
//!   The model has no exit instruction, so the trace has one warp instruction per warp (and
//!   one thread instruction per thread) more than the kernel.
//! - Opcodes: [`sass_opcode`]. Registers are the model's register numbers (R0–R254), so the
//!   scoreboard dependences read back are the kernel's; the model's "no register" is RZ (R255).
//! - Addresses in the tracer's compressed forms ([`write_addrs`]).
//! - A warp is walked twice (once to count its instructions for `insts =`, once to write
//!   them), so memory holds one warp's state, never the trace.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::program::{
    AluKind, Fetched, Inst, Item, Kernel, LaneEnv, LaneStack, OpKind, Values, MAX_EXPR_STACK, NO_REG,
    WARP_LANES,
};
use super::trace::kernelslist::KERNELSLIST;
use crate::config::Config;
use crate::output::OutputSet;

/// The one kernel file of an exported directory.
pub const KERNEL_FILE: &str = "kernel-1.traceg";

/// Bytes between consecutive instructions' PCs (sm_61 SASS instructions are 8 bytes).
const PC_STEP: u64 = 8;

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportStats {
    /// Warp instructions in the trace, the `EXIT`s included.
    pub warp_instructions: u64,
    /// Thread instructions (active lanes summed), the `EXIT`s included.
    pub thread_instructions: u64,
    /// The `EXIT`s added (one per warp) and their threads (one per thread of the grid).
    pub exit_warps: u64,
    pub exit_threads: u64,
    /// `ld.tex` / `ld.const` warp instructions, which have no faithful trace form.
    pub tex_loads: u64,
    pub const_loads: u64,
}

impl ExportStats {
    /// The kernel's own warp instructions (the trace's without the added `EXIT`s).
    pub fn kernel_warp_instructions(&self) -> u64 {
        self.warp_instructions - self.exit_warps
    }
    /// The kernel's own thread instructions.
    pub fn kernel_thread_instructions(&self) -> u64 {
        self.thread_instructions - self.exit_threads
    }
}

/// The access-width modifier Accel-Sim's `get_datawidth_from_opcode` (trace_parser.cc) and
/// this reader's `width_from_opcode` both decode: `.U8`, `.U16`, none (4 bytes), `.64`, `.128`.
fn width_suffix(width: u8) -> &'static str {
    match width {
        1 => ".U8",
        2 => ".U16",
        8 => ".64",
        16 => ".128",
        _ => "",
    }
}

/// The SASS opcode (sm_61 spelling) an instruction is written as:
/// - ALU → `IADD` (the model has one latency class for integer and float work), `imul` →
///   `IMUL`, `idiv` → `IMUL` too: SASS has no divide, and no opcode is read back with the
///   divide latency, so the multiply is the nearest (same pipe, longer than `IADD`);
/// - `sfu` → `MUFU`; `bar` → `BAR.SYNC`; branches → `BRA`;
/// - `.f64` arithmetic → `DADD`, `DMNMX`, `DMUL`, `DFMA`; `div.f64` → `MUFU.RCP64H`;
/// - global / shared loads and stores → `LDG.E`, `STG.E`, `LDS.U.32`, `STS` with the width;
/// - `atom.global` → `ATOMG.E.ADD`, `red.global` (no destination) → `RED.E.ADD` (the kernel
///   does not keep which operation: the timing is the same);
/// - `ld.tex` → `LDG.E.CI` (the read-only data path nvcc uses for `__ldg` on sm_35–sm_61; a
///   global load in both simulators), `ld.const` → `LDC` without addresses, as the tracer
///   writes constant-bank loads (an ALU op in both simulators).
pub fn sass_opcode(op: OpKind, width: u8, has_dst: bool) -> String {
    let w = width_suffix(width);
    match op {
        OpKind::Alu(AluKind::Simple) => "IADD".into(),
        OpKind::Alu(AluKind::Exit) => "EXIT".into(),
        OpKind::Alu(AluKind::IMul | AluKind::IDiv) => "IMUL".into(),
        OpKind::Alu(AluKind::DAdd) => "DADD".into(),
        OpKind::Alu(AluKind::DMinMax) => "DMNMX".into(),
        OpKind::Alu(AluKind::DMul) => "DMUL".into(),
        OpKind::Alu(AluKind::DFma) => "DFMA".into(),
        // nvcc expands a DP divide into MUFU.RCP64H and a DFMA refinement; the trace keeps
        // its one SFU instruction (docs/traces.md).
        OpKind::Alu(AluKind::DDiv) => "MUFU.RCP64H".into(),
        OpKind::Sfu => "MUFU".into(),
        OpKind::LoadGlobal => format!("LDG.E{w}"),
        OpKind::StoreGlobal => format!("STG.E{w}"),
        OpKind::LoadShared if width == 4 => "LDS.U.32".into(),
        OpKind::LoadShared => format!("LDS.U{w}"),
        OpKind::StoreShared => format!("STS{w}"),
        OpKind::LoadTex => format!("LDG.E.CI{w}"),
        OpKind::LoadConst => format!("LDC{w}"),
        OpKind::AtomGlobal if has_dst => format!("ATOMG.E.ADD{w}"),
        OpKind::AtomGlobal => format!("RED.E.ADD{w}"),
        OpKind::Barrier => "BAR.SYNC".into(),
        OpKind::Branch => "BRA".into(),
    }
}

/// Whether the line carries per-lane addresses (`mem_width > 0`).
fn has_addresses(op: OpKind) -> bool {
    op.is_memory() && op != OpKind::LoadConst
}

/// The addresses of the active lanes of `mask`, as the tracer compresses them
/// (tracer_tool.cu `base_stride_compress` / `base_delta_compress`): `1 BASE STRIDE` when the
/// active lanes are contiguous, at least two, with one stride that fits an `int`; otherwise
/// `2 BASE DELTA…` (one delta per further active lane, from the previous one).
pub fn write_addrs(out: &mut impl Write, mask: u32, addrs: &[u64; WARP_LANES]) -> io::Result<()> {
    let mut buf = [0usize; WARP_LANES];
    let mut n = 0;
    for l in (0..WARP_LANES).filter(|&l| mask >> l & 1 == 1) {
        buf[n] = l;
        n += 1;
    }
    let lanes = &buf[..n];
    let Some(&first) = lanes.first() else {
        // No active lane: the tracer writes base-delta with no base it could name.
        return write!(out, " 2 0x0");
    };
    let contiguous = mask >> first == (1u64 << lanes.len()).wrapping_sub(1) as u32;
    let stride = (lanes.len() >= 2)
        .then(|| addrs[lanes[1]].wrapping_sub(addrs[first]) as i64)
        .filter(|&s| i32::try_from(s).is_ok())
        .filter(|&s| {
            lanes
                .windows(2)
                .all(|p| addrs[p[1]].wrapping_sub(addrs[p[0]]) as i64 == s)
        });
    match stride {
        Some(s) if contiguous => write!(out, " 1 0x{:x} {s}", addrs[first]),
        _ => {
            write!(out, " 2 0x{:x}", addrs[first])?;
            for p in lanes.windows(2) {
                write!(out, " {}", addrs[p[1]].wrapping_sub(addrs[p[0]]) as i64)?;
            }
            Ok(())
        }
    }
}

/// Writes the header of kernel `id` (1-based).
fn write_header(out: &mut impl Write, k: &Kernel, id: u32) -> io::Result<()> {
    // The generic-address windows matter only to generic LD/ST, which an export never
    // writes; placed far above the model's buffers, shared below local as the parser expects.
    writeln!(out, "-kernel name = {}", k.name)?;
    writeln!(out, "-kernel id = {id}")?;
    writeln!(out, "-grid dim = ({},1,1)", k.grid)?;
    writeln!(out, "-block dim = ({},1,1)", k.block)?;
    writeln!(out, "-shmem = {}", k.shared_bytes)?;
    writeln!(out, "-nregs = {}", k.regs)?;
    writeln!(out, "-binary version = 61")?;
    writeln!(out, "-cuda stream id = 0")?;
    writeln!(out, "-shmem base_addr = 0x00007f0000000000")?;
    writeln!(out, "-local mem base_addr = 0x00007f0100000000")?;
    writeln!(out, "-nvbit version = mascar-export")?;
    writeln!(out, "-accelsim tracer version = 4")?;
    writeln!(out, "-enable lineinfo = 0")?;
    writeln!(out)?;
    writeln!(
        out,
        "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] \
         mem_width [adrrescompress?] [mem_addresses]"
    )?;
    writeln!(out)
}

/// Writes instruction lines of one kernel: its opcode text per item, worked out once, and
/// scratch for the lanes' addresses.
struct LineWriter<'k> {
    k: &'k Kernel,
    opcodes: Vec<String>,
    stack: Box<LaneStack>,
    addrs: [u64; WARP_LANES],
}

impl<'k> LineWriter<'k> {
    fn new(k: &'k Kernel) -> Self {
        let opcodes = k
            .program
            .items
            .iter()
            .map(|it| match it {
                Item::Inst(i) => sass_opcode(i.op, i.width, i.dst != NO_REG),
                _ => String::new(),
            })
            .collect();
        LineWriter {
            k,
            opcodes,
            stack: Box::new([[0; WARP_LANES]; MAX_EXPR_STACK]),
            addrs: [0; WARP_LANES],
        }
    }

    /// One instruction line for `f`, issued by a warp of `lanes` threads.
    fn write(
        &mut self,
        out: &mut impl Write,
        f: &Fetched,
        env: &LaneEnv,
        values: &Values,
        lanes: u32,
    ) -> io::Result<()> {
        let inst: &Inst = &f.inst;
        write!(out, "{:04x} {:08x}", f.pc as u64 * PC_STEP, f.mask)?;
        if inst.dst == NO_REG {
            write!(out, " 0")?;
        } else {
            write!(out, " 1 R{}", inst.dst)?;
        }
        write!(out, " {}", self.opcodes[f.pc as usize])?;
        let srcs = inst.src.iter().filter(|&&r| r != NO_REG);
        write!(out, " {}", srcs.clone().count())?;
        for r in srcs {
            write!(out, " R{r}")?;
        }
        if has_addresses(inst.op) {
            let e = &self.k.program.exprs[inst.addr as usize];
            e.eval_lanes_in(
                env,
                values.file(),
                lanes as usize,
                &mut self.stack,
                &mut self.addrs,
            );
            // The tracer's width field; both parsers take the width from the opcode instead.
            write!(out, " {}", inst.width)?;
            write_addrs(out, f.mask, &self.addrs)?;
        } else {
            write!(out, " 0")?;
        }
        writeln!(out)
    }
}

/// Writes kernel `k` (its buffers already placed) as trace kernel `id`, CTA by CTA.
pub fn write_kernel_trace(out: &mut impl Write, k: &Kernel, id: u32) -> io::Result<ExportStats> {
    let p = &k.program;
    let mut lines = LineWriter::new(k);
    let exit_pc = p.items.len() as u64 * PC_STEP;
    write_header(out, k, id)?;
    let mut stats = ExportStats::default();
    let mut values = Values::default();
    for cta in 0..k.grid {
        write!(out, "#BEGIN_TB\n\nthread block = {cta},0,0\n\n")?;
        for w in 0..k.warps_per_cta() {
            let env = k.warp_start_env(cta, w);
            let lanes = (k.block - w * 32).min(32);
            let count = p.warp_counts_in(&env, lanes, &k.buffers, &mut values);
            writeln!(out, "warp = {w}\ninsts = {}", count.warp + 1)?;
            let mut result = Ok(());
            p.walk(&env, lanes, &k.buffers, &mut values, |f, lane_env, vals| {
                if result.is_ok() {
                    result = lines.write(out, f, lane_env, vals, lanes);
                }
                stats.warp_instructions += 1;
                stats.thread_instructions += f.mask.count_ones() as u64;
                stats.tex_loads += (f.inst.op == OpKind::LoadTex) as u64;
                stats.const_loads += (f.inst.op == OpKind::LoadConst) as u64;
            });
            result?;
            let all = if lanes >= 32 {
                u32::MAX
            } else {
                (1u32 << lanes) - 1
            };
            writeln!(out, "{exit_pc:04x} {all:08x} 0 EXIT 0 0\n")?;
            stats.warp_instructions += 1;
            stats.thread_instructions += lanes as u64;
            stats.exit_warps += 1;
            stats.exit_threads += lanes as u64;
        }
        write!(out, "#END_TB\n\n")?;
    }
    Ok(stats)
}

/// Exports kernel `k` as the trace directory `dir` (`kernelslist.g` and [`KERNEL_FILE`]),
/// with its buffers where `cfg`'s placement puts them for a run. The files are written under
/// temporary names and renamed into place when complete; on an error none is left, nor `dir`
/// if this call created it.
pub fn export_dir(k: &Kernel, cfg: &Config, dir: &Path) -> Result<ExportStats> {
    if k.per_cta.is_some() {
        bail!(
            "kernel `{}` comes from a trace already: nothing to export",
            k.name
        );
    }
    k.validate().map_err(anyhow::Error::msg)?;
    let placed = super::placement::place_for(k, cfg)
        .map_err(|reason| anyhow::anyhow!("kernel `{}`: {reason}", k.name))?;
    if dir.exists() && !dir.is_dir() {
        bail!("{}: exists and is not a directory", dir.display());
    }
    let created = !dir.exists();
    let result = write_dir(&placed, dir);
    if result.is_err() && created {
        // Only an empty directory is removed: nothing else of ours can be in it.
        let _ = std::fs::remove_dir(dir);
    }
    result
}

fn write_dir(k: &Kernel, dir: &Path) -> Result<ExportStats> {
    let mut files = OutputSet::new();
    let target: PathBuf = dir.join(KERNEL_FILE);
    let tmp = files.temp_path(&target)?;
    let file = std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", target.display()))?;
    let mut out = io::BufWriter::with_capacity(1 << 20, file);
    let stats = write_kernel_trace(&mut out, k, 1)
        .and_then(|s| out.flush().map(|_| s))
        .with_context(|| format!("cannot write {}", target.display()))?;
    drop(out);
    files.write(&dir.join(KERNELSLIST), format!("{KERNEL_FILE}\n").as_bytes())?;
    files.commit()?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::{classify, opcode::width_from_opcode, OpClass};

    const WIDTHS: [u8; 5] = [1, 2, 4, 8, 16];

    /// Every opcode an export writes is read back in the class and width it was written for.
    #[test]
    fn opcodes_read_back_in_their_class_with_their_width() {
        let cases = [
            (OpKind::LoadGlobal, true, OpClass::LoadGlobal),
            (OpKind::StoreGlobal, false, OpClass::StoreGlobal),
            (OpKind::LoadShared, true, OpClass::LoadShared),
            (OpKind::StoreShared, false, OpClass::StoreShared),
            (OpKind::LoadTex, true, OpClass::LoadGlobal),
            (OpKind::AtomGlobal, true, OpClass::Atomic),
            (OpKind::AtomGlobal, false, OpClass::Atomic),
        ];
        for (op, dst, class) in cases {
            for w in WIDTHS {
                let name = sass_opcode(op, w, dst);
                assert_eq!(classify(&name), class, "{name}");
                assert_eq!(width_from_opcode(&name), w as u32, "{name}");
            }
        }
        assert_eq!(sass_opcode(OpKind::LoadGlobal, 4, true), "LDG.E");
        assert_eq!(sass_opcode(OpKind::LoadGlobal, 8, true), "LDG.E.64");
        assert_eq!(sass_opcode(OpKind::StoreGlobal, 16, false), "STG.E.128");
        assert_eq!(sass_opcode(OpKind::LoadShared, 4, true), "LDS.U.32");
        assert_eq!(sass_opcode(OpKind::AtomGlobal, 4, true), "ATOMG.E.ADD");
        assert_eq!(sass_opcode(OpKind::AtomGlobal, 4, false), "RED.E.ADD");
        assert_eq!(
            classify(&sass_opcode(OpKind::LoadConst, 4, true)),
            OpClass::LoadConst
        );
    }

    /// The pipes and latency classes read back are the model's (the divides excepted: no SASS
    /// opcode is read with their latency).
    #[test]
    fn non_memory_opcodes_read_back_on_their_pipe() {
        use crate::workload::trace_kernel::op_kind;
        let ops = [
            OpKind::Alu(AluKind::Simple),
            OpKind::Alu(AluKind::IMul),
            OpKind::Alu(AluKind::DAdd),
            OpKind::Alu(AluKind::DMinMax),
            OpKind::Alu(AluKind::DMul),
            OpKind::Alu(AluKind::DFma),
            OpKind::Sfu,
            OpKind::Barrier,
            OpKind::LoadGlobal,
            OpKind::StoreGlobal,
            OpKind::LoadShared,
            OpKind::StoreShared,
            OpKind::AtomGlobal,
        ];
        for op in ops {
            let name = sass_opcode(op, 4, true);
            let back = op_kind(classify(&name), crate::workload::trace::base_mnemonic(&name));
            assert_eq!(back, op, "{name}");
        }
        assert_eq!(sass_opcode(OpKind::Alu(AluKind::IDiv), 4, true), "IMUL");
        // The DP divide is written as its one SFU instruction (docs/traces.md).
        assert_eq!(sass_opcode(OpKind::Alu(AluKind::DDiv), 8, true), "MUFU.RCP64H");
        assert_eq!(classify("MUFU.RCP64H"), OpClass::Sfu);
        assert_eq!(classify("BRA"), OpClass::Branch);
        assert_eq!(classify("EXIT"), OpClass::Exit);
    }

    fn addrs_line(mask: u32, a: &[u64; 32]) -> String {
        let mut v = vec![];
        write_addrs(&mut v, mask, a).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn addresses_use_the_tracers_compressed_forms() {
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            *x = 0x8000_0000 + 4 * l as u64;
        }
        assert_eq!(addrs_line(u32::MAX, &a), " 1 0x80000000 4");
        // Contiguous lanes from lane 3 on.
        assert_eq!(addrs_line(0xf8, &a), " 1 0x8000000c 4");
        // A gap in the mask: base + deltas (the gap's lanes skipped).
        assert_eq!(addrs_line(0b1011, &a), " 2 0x80000000 4 8");
        // One lane: no stride to take.
        assert_eq!(addrs_line(0b100, &a), " 2 0x80000008");
        // Irregular addresses, a negative delta.
        a[1] = 0x7000_0000;
        assert_eq!(addrs_line(0b111, &a), " 2 0x80000000 -268435456 268435464");
        // A stride beyond an int.
        let mut b = [0u64; 32];
        for (l, x) in b.iter_mut().enumerate() {
            *x = (l as u64) << 33;
        }
        assert!(addrs_line(0b11, &b).starts_with(" 2 0x0 8589934592"));
    }
}
