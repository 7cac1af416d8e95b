//! Kernels from Accel-Sim traces: each traced warp becomes a straight-line program whose
//! memory instructions carry the recorded per-lane addresses, so the SM runs a trace the way
//! it runs a kernel-format program.
//!
//! [design] What maps onto the model and what does not:
//! - Opcode classes → pipelines: global / local / generic loads and stores go through L1;
//!   global atomics and reductions (`ATOM`, `ATOMG`, `RED`, `REDG`) are global atomics
//!   (`OpKind::AtomGlobal`: they bypass L1 and are performed at the L2, as GPGPU-Sim 3.2.2
//!   times them; `RED` like `ATOM`, 3.2.2 implementing no separate `red`); `ATOMS` is a shared
//!   load, the later bulk / asynchronous reductions (`REDAS`, `UTMAREDG`, `UBLKRED`) loads;
//!   shared loads and stores to the shared-memory pipeline; `MUFU`/`RRO` to the SFU; `BAR` is
//!   a CTA barrier; everything else (ALU, tensor, branches, `EXIT`, `MEMBAR`, unknown opcodes,
//!   and constant loads, whose addresses the trace does not record, so they do not reach the
//!   constant cache) is an SP instruction.
//! - Every instruction runs with the active mask the trace recorded (predicated-off and
//!   diverged lanes excluded), so thread instructions and SIMD efficiency are the trace's.
//! - Registers: the first destination and the first three sources other than RZ (R255) feed
//!   the scoreboard; further operands are dropped. A source RZ is read by the operand
//!   collector from its bank, as Accel-Sim does (`Inst::reads_rz`); a destination RZ, which
//!   Accel-Sim would reserve in its scoreboard as R256, is dropped (no trace here has one).
//! - A memory instruction with no active lane (or no address) runs as an SP instruction.
//! - Memcpy lines of `kernelslist.g` are not simulated (their cost is not the SM's).
//! - The trace is read twice: once up front (every line checked, instructions counted), then
//!   CTA by CTA as the CTAs launch, so memory holds the resident CTAs, not the trace.

use super::program::{
    AluKind, CtaPrograms, Inst, Item, OpKind, PerCta, Program, Reg, INACTIVE_LANE, NO_REG, WARP_LANES,
};
use super::trace::{base_mnemonic, OpClass, OpcodeTable, TraceError, TraceInst, TraceReader};
use super::Kernel;
use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A kernel read from a trace, with what the reader counted in its first pass.
#[derive(Clone, Debug)]
pub struct TraceKernel {
    pub kernel: Kernel,
    pub path: PathBuf,
    /// Warp instructions in the trace.
    pub trace_instructions: u64,
    /// Thread instructions (active lanes summed), the count GPGPU-Sim reports.
    pub thread_instructions: u64,
    /// Opcodes the tables do not know, run as ALU, with their counts.
    pub unknown_opcodes: Vec<(String, u64)>,
    /// Memory instructions that run as SP instructions (no active lane or no address).
    pub memory_without_lanes: u64,
    /// Which CTAs the trace lists (the others run nothing).
    present: Arc<Vec<bool>>,
}

/// SASS's zero register.
const RZ: u16 = 255;

fn reg(r: u16) -> Reg {
    if r >= NO_REG as u16 {
        NO_REG
    } else {
        r as Reg
    }
}

/// The model's operation for a traced instruction (`None`: its class needs addresses).
pub(crate) fn op_kind(class: OpClass, mnemonic: &str) -> OpKind {
    match class {
        OpClass::LoadGlobal | OpClass::LoadLocal => OpKind::LoadGlobal,
        OpClass::StoreGlobal | OpClass::StoreLocal => OpKind::StoreGlobal,
        OpClass::LoadShared => OpKind::LoadShared,
        OpClass::StoreShared => OpKind::StoreShared,
        OpClass::Atomic => match mnemonic {
            "ATOMS" => OpKind::LoadShared,
            "ATOM" | "ATOMG" | "RED" | "REDG" => OpKind::AtomGlobal,
            // Later architectures' bulk / asynchronous reductions: loads, as before.
            _ => OpKind::LoadGlobal,
        },
        OpClass::Barrier => OpKind::Barrier,
        OpClass::Sfu => OpKind::Sfu,
        OpClass::Exit => OpKind::Alu(AluKind::Exit),
        _ => match mnemonic {
            "IMUL" | "IMUL32I" => OpKind::Alu(AluKind::IMul),
            // Fermi runs double precision at its own rate (`-ptx_opcode_latency_dp`).
            "DADD" => OpKind::Alu(AluKind::DAdd),
            "DMNMX" => OpKind::Alu(AluKind::DMinMax),
            "DMUL" => OpKind::Alu(AluKind::DMul),
            "DFMA" => OpKind::Alu(AluKind::DFma),
            _ => OpKind::Alu(AluKind::Simple),
        },
    }
}

/// One warp's trace as a straight-line program.
fn warp_program(
    insts: &[TraceInst],
    opcodes: &OpcodeTable,
    memory_without_lanes: &mut u64,
) -> Result<Program, String> {
    let mut p = Program::default();
    p.items.reserve(insts.len());
    p.pcs.reserve(insts.len());
    p.lane_masks.reserve(insts.len());
    for t in insts {
        let mnemonic = base_mnemonic(opcodes.name(t.opcode).unwrap_or(""));
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
        inst.reads_rz = t.src_regs().contains(&RZ);
        // Shared accesses keep their lanes' addresses too: their banks decide how long they
        // hold the LD/ST unit (`Coalesced::shared_bank_cycles`).
        let shared = matches!(op, OpKind::LoadShared | OpKind::StoreShared);
        if op.is_global() || shared {
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
            if any || shared {
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
        p.lane_masks.push(t.mask);
    }
    Ok(p)
}

/// The CTAs of a trace, read from the file as they launch: memory holds the CTAs launched
/// and not yet handed out, not the whole trace.
struct LazyCtas {
    inner: Mutex<LazyInner>,
    present: Arc<Vec<bool>>,
    warps: usize,
    warp_instructions: u64,
}

struct LazyInner {
    reader: TraceReader<BufReader<File>>,
    grid_x: u64,
    grid_y: u64,
    /// CTAs read past while looking for a later one (traces list CTAs in order, so this
    /// stays empty in practice).
    pending: HashMap<u32, Vec<Arc<Program>>>,
}

impl LazyInner {
    fn index(&self, id: [u32; 3]) -> u32 {
        let [x, y, z] = id.map(u64::from);
        (x + y * self.grid_x + z * self.grid_x * self.grid_y) as u32
    }
}

impl CtaPrograms for LazyCtas {
    fn take(&self, cta: u32) -> Vec<Arc<Program>> {
        if !self.present.get(cta as usize).copied().unwrap_or(false) {
            return Vec::new();
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = inner.pending.remove(&cta) {
            return p;
        }
        // The first pass read the whole file without error: it reads the same way again.
        while let Some(Ok(c)) = inner.reader.next_cta() {
            let index = inner.index(c.id);
            let opcodes = inner.reader.opcodes();
            let mut unused = 0;
            let programs: Vec<Arc<Program>> = (0..self.warps)
                .map(|w| {
                    let insts = c.warps.get(w).map_or(&[][..], |v| &v[..]);
                    Arc::new(warp_program(insts, opcodes, &mut unused).unwrap_or_default())
                })
                .collect();
            if index == cta {
                return programs;
            }
            inner.pending.insert(index, programs);
        }
        Vec::new()
    }

    fn warp_instructions(&self) -> u64 {
        self.warp_instructions
    }
}

/// Reads a `.traceg` file once, checking every line and counting what it holds, and returns
/// a kernel that reads it again, CTA by CTA, as the CTAs launch.
pub fn load(path: &Path) -> Result<TraceKernel, TraceError> {
    let mut r = TraceReader::open(path)?;
    let h = r.header().clone();
    let file = r.file_name().to_string();
    let whole = |msg: String| TraceError::unpositioned(&file, msg);
    let grid = u32::try_from(h.num_ctas()).map_err(|_| whole("grid too large".into()))?;
    let block: u32 = h.block_dim.iter().product();
    let [gx, gy, _] = h.grid_dim;
    let mut present = vec![false; grid as usize];
    let (mut trace_instructions, mut thread_instructions, mut memory_without_lanes) = (0u64, 0u64, 0u64);
    while let Some(cta) = r.next_cta() {
        let cta = cta?;
        let [x, y, z] = cta.id;
        let index = x as u64 + y as u64 * gx as u64 + z as u64 * gx as u64 * gy as u64;
        let seen = present
            .get_mut(index as usize)
            .ok_or_else(|| whole(format!("CTA ({x},{y},{z}) is outside the grid {:?}", h.grid_dim)))?;
        if *seen {
            return Err(TraceError::new(
                &file,
                cta.begin_line,
                1,
                format!("thread block ({x},{y},{z}) appears twice"),
            ));
        }
        *seen = true;
        trace_instructions += cta.num_insts() as u64;
        thread_instructions += cta
            .warps
            .iter()
            .flatten()
            .map(|t| t.active_lanes() as u64)
            .sum::<u64>();
        // Build the programs once to check them (and count what runs as SP); they are
        // rebuilt at launch.
        let opcodes = r.opcodes();
        for (w, insts) in cta.warps.iter().enumerate() {
            warp_program(insts, opcodes, &mut memory_without_lanes)
                .map_err(|e| whole(format!("CTA ({x},{y},{z}) warp {w}: {e}")))?;
        }
    }
    // Accel-Sim runs every block of the grid; a block the trace lacks would silently run
    // nothing, so the kernel would not be the one traced.
    let missing: Vec<usize> = (0..present.len()).filter(|&i| !present[i]).collect();
    if let Some(&first) = missing.first() {
        let (gx, gy) = (gx.max(1) as usize, gy.max(1) as usize);
        let id = |i: usize| format!("({},{},{})", i % gx, i / gx % gy, i / (gx * gy));
        return Err(whole(format!(
            "the trace lacks {} of the grid's {} thread blocks, the first {} (grid {:?})",
            missing.len(),
            present.len(),
            id(first),
            h.grid_dim
        )));
    }
    let mut tk = TraceKernel {
        kernel: Kernel {
            name: h.kernel_name.clone(),
            grid,
            block,
            regs: h.nregs.unwrap_or(32).max(1),
            shared_bytes: h.shmem.unwrap_or(0),
            buffers: Vec::new(),
            program: Program::default(),
            per_cta: None,
        },
        path: path.to_path_buf(),
        trace_instructions,
        thread_instructions,
        unknown_opcodes: r.unknown_opcodes(),
        memory_without_lanes,
        present: Arc::new(present),
    };
    tk.kernel = tk.fresh_kernel()?;
    tk.kernel.validate().map_err(whole)?;
    Ok(tk)
}

impl TraceKernel {
    /// The kernel with its trace opened anew, for another run (each run reads the trace as
    /// its CTAs launch).
    pub fn fresh_kernel(&self) -> Result<Kernel, TraceError> {
        let reader = TraceReader::open(&self.path)?;
        let [gx, gy, _] = reader.header().grid_dim;
        let warps = reader.header().warps_per_cta();
        let lazy = LazyCtas {
            inner: Mutex::new(LazyInner {
                reader,
                grid_x: gx as u64,
                grid_y: gy as u64,
                pending: HashMap::new(),
            }),
            present: self.present.clone(),
            warps,
            warp_instructions: self.trace_instructions,
        };
        Ok(Kernel {
            per_cta: Some(PerCta(Arc::new(lazy))),
            ..self.kernel.clone()
        })
    }
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

#[cfg(test)]
mod atomic_tests {
    use super::*;

    /// Global atomics and reductions are global atomics (performed at the L2); shared atomics
    /// stay shared loads.
    #[test]
    fn atomics_map_to_the_global_atomic_kind() {
        for m in ["ATOM", "ATOMG", "RED", "REDG"] {
            assert_eq!(op_kind(OpClass::Atomic, m), OpKind::AtomGlobal, "{m}");
        }
        assert_eq!(op_kind(OpClass::Atomic, "ATOMS"), OpKind::LoadShared);
        assert!(OpKind::AtomGlobal.is_global() && OpKind::AtomGlobal.is_memory());
    }
}
