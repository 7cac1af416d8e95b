//! Kernels from Accel-Sim traces: each traced warp becomes a straight-line program whose
//! memory instructions carry the recorded per-lane addresses, so the SM runs a trace the way
//! it runs a kernel-format program.
//!
//! [design] What maps onto the model and what does not:
//! - Opcode classes → pipelines: global / local / generic loads and stores, atomics (as loads,
//!   `RED` as a store, `ATOMS` as a shared load) go through L1; shared loads and stores to
//!   the shared-memory pipeline; `MUFU`/`RRO` to the SFU; `BAR` is a CTA barrier; everything
//!   else (ALU, tensor, branches, `EXIT`, `MEMBAR`, constant loads, unknown opcodes) is an SP
//!   instruction. Constant caches and predicates are not modelled.
//! - Registers: the first destination and the first three sources (RZ = R255 ignored) feed
//!   the scoreboard; further operands are dropped.
//! - A memory instruction with no active lane (or no address) runs as an SP instruction.
//! - Memcpy lines of `kernelslist.g` are not simulated (their cost is not the SM's).
//! - The trace's CTAs are read one at a time but all are kept until the kernel runs: the
//!   memory a kernel needs grows with its trace (kernels run one after another).

use super::program::{AluKind, Inst, Item, OpKind, Program, Reg, INACTIVE_LANE, NO_REG, WARP_LANES};
use super::trace::{OpClass, TraceError, TraceInst, TraceReader};
use super::Kernel;
use std::path::Path;

/// A kernel read from a trace, with what the reader counted.
#[derive(Clone, Debug)]
pub struct TraceKernel {
    pub kernel: Kernel,
    /// Warp instructions in the trace.
    pub trace_instructions: u64,
    /// Thread instructions (active lanes summed), the count GPGPU-Sim reports.
    pub thread_instructions: u64,
    /// Opcodes the tables do not know, run as ALU, with their counts.
    pub unknown_opcodes: Vec<(String, u64)>,
    /// Memory instructions that ran as SP instructions (no active lane or no address).
    pub memory_without_lanes: u64,
}

fn reg(r: u16) -> Reg {
    if r >= NO_REG as u16 {
        NO_REG
    } else {
        r as Reg
    }
}

/// The model's operation for a traced instruction (`None`: its class needs addresses).
fn op_kind(class: OpClass, mnemonic: &str) -> OpKind {
    match class {
        OpClass::LoadGlobal | OpClass::LoadLocal => OpKind::LoadGlobal,
        OpClass::StoreGlobal | OpClass::StoreLocal => OpKind::StoreGlobal,
        OpClass::LoadShared => OpKind::LoadShared,
        OpClass::StoreShared => OpKind::StoreShared,
        OpClass::Atomic => match mnemonic {
            "ATOMS" => OpKind::LoadShared,
            "RED" | "REDG" => OpKind::StoreGlobal,
            _ => OpKind::LoadGlobal,
        },
        OpClass::Barrier => OpKind::Barrier,
        OpClass::Sfu => OpKind::Sfu,
        _ => match mnemonic {
            "IMUL" | "IMUL32I" => OpKind::Alu(AluKind::IMul),
            _ => OpKind::Alu(AluKind::Simple),
        },
    }
}

/// One warp's trace as a straight-line program.
fn warp_program(
    insts: &[TraceInst],
    names: &dyn Fn(u16) -> String,
    memory_without_lanes: &mut u64,
) -> Result<Program, String> {
    let mut p = Program::default();
    p.items.reserve(insts.len());
    for t in insts {
        let name = names(t.opcode);
        let mnemonic = name.split('.').next().unwrap_or("");
        let mut op = op_kind(t.class, mnemonic);
        let mut inst = Inst::new(op);
        if let Some(&d) = t.dst_regs().iter().find(|&&r| reg(r) != NO_REG) {
            inst.dst = reg(d);
        }
        for (slot, &s) in inst
            .src
            .iter_mut()
            .zip(t.src_regs().iter().filter(|&&r| reg(r) != NO_REG))
        {
            *slot = reg(s);
        }
        if op.is_global() {
            let mut table = Box::new([INACTIVE_LANE; WARP_LANES]);
            let mut addrs = t.addrs.iter();
            let mut any = false;
            for lane in 0..WARP_LANES {
                if t.mask >> lane & 1 == 1 {
                    if let Some(&a) = addrs.next() {
                        table[lane] = a;
                        any = true;
                    }
                }
            }
            if any {
                if p.exprs.len() >= u16::MAX as usize {
                    return Err("more than 65535 memory instructions in one warp".into());
                }
                inst.addr = p.exprs.len() as u16;
                inst.width = t.mem_width.clamp(1, 16) as u8;
                p.exprs.push(super::program::AddrExpr {
                    base: 0,
                    nodes: Vec::new(),
                    lanes: Some(table),
                });
            } else {
                *memory_without_lanes += 1;
                op = OpKind::Alu(AluKind::Simple);
                inst.op = op;
            }
        }
        p.items.push(Item::Inst(inst));
        p.pcs.push(t.pc);
    }
    Ok(p)
}

/// Reads a `.traceg` file into a kernel.
pub fn load(path: &Path) -> Result<TraceKernel, TraceError> {
    let mut r = TraceReader::open(path)?;
    let h = r.header().clone();
    let file = r.file_name().to_string();
    let whole = |msg: String| TraceError::unpositioned(&file, msg);
    let grid = u32::try_from(h.num_ctas()).map_err(|_| whole("grid too large".into()))?;
    let block: u32 = h.block_dim.iter().product();
    let warps = h.warps_per_cta();
    let [gx, gy, _] = h.grid_dim;
    let mut ctas: Vec<Option<Vec<Program>>> = vec![None; grid as usize];
    let mut trace_instructions = 0u64;
    let mut thread_instructions = 0u64;
    let mut memory_without_lanes = 0u64;
    while let Some(cta) = r.next_cta() {
        let cta = cta?;
        let [x, y, z] = cta.id;
        let index = x as u64 + y as u64 * gx as u64 + z as u64 * gx as u64 * gy as u64;
        let slot = ctas
            .get_mut(index as usize)
            .ok_or_else(|| whole(format!("CTA ({x},{y},{z}) is outside the grid {:?}", h.grid_dim)))?;
        if slot.is_some() {
            return Err(whole(format!("CTA ({x},{y},{z}) appears twice")));
        }
        trace_instructions += cta.num_insts() as u64;
        thread_instructions += cta
            .warps
            .iter()
            .flatten()
            .map(|t| t.active_lanes() as u64)
            .sum::<u64>();
        let names = |id: u16| r.opcode_name(id).unwrap_or("").to_string();
        let mut programs = Vec::with_capacity(warps);
        for w in 0..warps {
            let insts = cta.warps.get(w).map_or(&[][..], |v| &v[..]);
            programs.push(
                warp_program(insts, &names, &mut memory_without_lanes)
                    .map_err(|e| whole(format!("CTA ({x},{y},{z}) warp {w}: {e}")))?,
            );
        }
        *slot = Some(programs);
    }
    // A CTA the trace does not list ran nothing.
    let warp_programs: Vec<Vec<Program>> = ctas
        .into_iter()
        .map(|c| c.unwrap_or_else(|| vec![Program::default(); warps]))
        .collect();
    let kernel = Kernel {
        name: h.kernel_name.clone(),
        grid,
        block,
        regs: h.nregs.unwrap_or(32).max(1),
        shared_bytes: h.shmem.unwrap_or(0),
        buffers: Vec::new(),
        program: Program::default(),
        warp_programs,
    };
    kernel.validate().map_err(whole)?;
    Ok(TraceKernel {
        kernel,
        trace_instructions,
        thread_instructions,
        unknown_opcodes: r.unknown_opcodes(),
        memory_without_lanes,
    })
}

/// What the tools that produced a trace reported for it, from the files Accel-Sim and the
/// capture tools leave beside it: `(source, figure, value)`. Figures for the reader to compare,
/// from a different machine configuration.
pub fn peer_statistics(dir: &Path) -> Vec<(String, String, String)> {
    let mut out = vec![];
    if let Ok(text) = std::fs::read_to_string(dir.join("accelsim_log.csv")) {
        for line in text.lines() {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if let [_, _, stat @ ("gpu_tot_sim_cycle" | "gpu_total_instructions" | "gpu_ipc"), value] = f[..]
            {
                out.push(("accelsim_log.csv".into(), stat.to_string(), value.to_string()));
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("stats.csv")) {
        let mut lines = text.lines();
        if let (Some(head), Some(row)) = (lines.next(), lines.next()) {
            for (k, v) in head.split(',').zip(row.split(',')) {
                let k = k.trim();
                if k.contains("insts") {
                    out.push(("stats.csv".into(), k.to_string(), v.trim().to_string()));
                }
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("gt")) {
        out.push((
            "gt".into(),
            "measured (ground truth)".into(),
            text.trim().to_string(),
        ));
    }
    out
}
