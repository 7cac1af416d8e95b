//! One warp instruction of a trace ([`TraceInst`]) and the parser of its line:
//!
//! ```text
//! [cta_x cta_y cta_z warp]  [line]  PC mask ndst [dst…] OPCODE nsrc [src…] mem_width [mode addrs…]  [imm]
//!  tracer version < 3        lineinfo                                       only if mem_width > 0     version ≥ 5
//! ```

use super::error::TraceError;
use super::lex::{quote, LineCtx, Tokens};
use super::opcode::{OpClass, OpcodeTable};

/// Most destination registers one instruction line may list.
pub const MAX_DSTS: usize = 4;
/// Most source registers one instruction line may list.
pub const MAX_SRCS: usize = 8;

/// One dynamic warp instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceInst {
    /// Program counter (byte offset in the kernel's code).
    pub pc: u64,
    /// Active lanes (bit i = lane i), predicated-off lanes already cleared by the tracer.
    pub mask: u32,
    /// Index into the reader's opcode table (`TraceReader::opcode_name`).
    pub opcode: u16,
    /// Pipeline; opcodes [`classify`](super::classify) does not know are [`OpClass::Alu`].
    pub class: OpClass,
    /// Destination register numbers; only the first `num_dsts` are meaningful. R255 is RZ.
    pub dsts: [u16; MAX_DSTS],
    /// Source register numbers; only the first `num_srcs` are meaningful.
    pub srcs: [u16; MAX_SRCS],
    pub num_dsts: u8,
    pub num_srcs: u8,
    /// Bytes per lane for memory instructions (from the opcode modifiers); 0 for the rest.
    pub mem_width: u32,
    /// Memory addresses, one per active lane in lane order, whatever compression the line
    /// used; for Hopper TMA/bulk opcodes, one per transfer. Empty for non-memory instructions.
    pub addrs: Vec<u64>,
    /// The immediate operand (tracer version 5 writes one on every line, 0 if none).
    pub imm: Option<i64>,
    /// Source line number, when the trace has `-enable lineinfo = 1`.
    pub line_num: Option<u32>,
}

impl TraceInst {
    /// The destination registers.
    pub fn dst_regs(&self) -> &[u16] {
        &self.dsts[..usize::from(self.num_dsts).min(MAX_DSTS)]
    }

    /// The source registers.
    pub fn src_regs(&self) -> &[u16] {
        &self.srcs[..usize::from(self.num_srcs).min(MAX_SRCS)]
    }

    /// Whether the line carried memory information (`mem_width > 0` in the trace).
    pub fn is_mem(&self) -> bool {
        self.mem_width > 0
    }

    /// Number of active lanes.
    pub fn active_lanes(&self) -> u32 {
        self.mask.count_ones()
    }
}

/// Layout of instruction lines, fixed by the header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LineFormat {
    /// Tracer versions before 3 start each line with the CTA x, y, z and the warp id.
    pub leading_ids: bool,
    /// `-enable lineinfo = 1`: a source line number comes next.
    pub lineinfo: bool,
    /// Tracer version 5 and later end every line with an immediate.
    pub imm_required: bool,
}

impl LineFormat {
    pub fn for_version(tracer_version: u32, lineinfo: bool) -> Self {
        LineFormat {
            leading_ids: tracer_version < 3,
            lineinfo,
            imm_required: tracer_version >= 5,
        }
    }
}

// Address modes of the tracer (`address_format` in Accel-Sim).
const LIST_ALL: u32 = 0;
const BASE_STRIDE: u32 = 1;
const BASE_DELTA: u32 = 2;
const TMA_LIST_ALL: u32 = 3;
const TMA_BASE_DELTA: u32 = 4;

/// Parses one instruction line; interns its opcode in `opcodes`.
pub(crate) fn parse_inst(
    ctx: LineCtx,
    format: LineFormat,
    opcodes: &mut OpcodeTable,
) -> Result<TraceInst, TraceError> {
    let mut t = Tokens::new(ctx);
    if format.leading_ids {
        // Accel-Sim reads and ignores these: the enclosing CTA and warp lines are authoritative.
        for what in ["CTA x id", "CTA y id", "CTA z id", "warp id"] {
            t.dec_u32(what)?;
        }
    }
    let line_num = if format.lineinfo {
        Some(t.dec_u32("source line number")?)
    } else {
        None
    };
    let pc = t.hex_u64("PC")?;
    let mask = t.hex_u32("active mask")?;

    let mut dsts = [0u16; MAX_DSTS];
    let num_dsts = reg_list(
        &mut t,
        &mut dsts,
        ["destination register count", "destination register"],
    )?;

    let op = t.expect("opcode")?;
    let (opcode, info) = opcodes
        .intern(op.text)
        .ok_or_else(|| ctx.err(op.at, "more than 65536 distinct opcodes in one trace"))?;

    let mut srcs = [0u16; MAX_SRCS];
    let num_srcs = reg_list(&mut t, &mut srcs, ["source register count", "source register"])?;

    let trace_width = t.dec_u32("memory width")?;
    let mut addrs = Vec::new();
    let mut mem_width = 0;
    if info.tma {
        // Hopper bulk copies: the address list is per transfer; the width field is kept as is.
        tma_addrs(&mut t, mask, &mut addrs)?;
        mem_width = trace_width;
    } else if trace_width > 0 {
        lane_addrs(&mut t, mask, &mut addrs)?;
        mem_width = info.width;
    }

    let imm = match t.next_tok() {
        Some(tok) => Some(parse_imm(tok.text).ok_or_else(|| {
            ctx.err(
                tok.at,
                format!("bad immediate `{}`: expected a decimal number", quote(tok.text)),
            )
        })?),
        None if format.imm_required => return Err(ctx.err_end("truncated line: missing immediate")),
        None => None,
    };
    if let Some(extra) = t.next_tok() {
        return Err(ctx.err(
            extra.at,
            format!(
                "unexpected `{}` after the end of the instruction",
                quote(extra.text)
            ),
        ));
    }

    opcodes.record(opcode);
    Ok(TraceInst {
        pc,
        mask,
        opcode,
        class: info.class,
        dsts,
        srcs,
        num_dsts,
        num_srcs,
        mem_width,
        addrs,
        imm,
        line_num,
    })
}

/// A register count and that many `R<n>` registers, into `out`. `what` names the count and
/// the register for messages (static, so that nothing is allocated per instruction).
fn reg_list(t: &mut Tokens, out: &mut [u16], what: [&str; 2]) -> Result<u8, TraceError> {
    let ctx = t.ctx();
    let count_tok = t.expect(what[0])?;
    let count = super::lex::parse_dec_u64(count_tok.text).ok_or_else(|| {
        ctx.err(
            count_tok.at,
            format!("bad {} `{}`", what[0], quote(count_tok.text)),
        )
    })?;
    if count > out.len() as u64 {
        return Err(ctx.err(
            count_tok.at,
            format!("{} {count}: at most {} supported", what[0], out.len()),
        ));
    }
    for slot in out.iter_mut().take(count as usize) {
        let r = t.expect(what[1])?;
        *slot = r
            .text
            .strip_prefix('R')
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                ctx.err(
                    r.at,
                    format!("bad {} `{}`: expected R<number>", what[1], quote(r.text)),
                )
            })?;
    }
    Ok(count as u8)
}

/// Per-lane addresses of an ordinary memory instruction, in any of the three encodings.
fn lane_addrs(t: &mut Tokens, mask: u32, out: &mut Vec<u64>) -> Result<(), TraceError> {
    let ctx = t.ctx();
    let lanes = mask.count_ones() as usize;
    let mode_tok = t.expect("address mode")?;
    let mode = super::lex::parse_dec_u64(mode_tok.text);
    out.reserve_exact(lanes);
    match mode {
        Some(m) if m == u64::from(LIST_ALL) => {
            for _ in 0..lanes {
                out.push(t.hex_u64("lane address")?);
            }
        }
        Some(m) if m == u64::from(BASE_STRIDE) => {
            // The tracer uses this only when the active lanes are contiguous; the k-th active
            // lane gets base + k * stride.
            let base = t.hex_u64("base address")?;
            let stride = t.dec_i64("stride")?;
            let mut addr = base;
            for _ in 0..lanes {
                out.push(addr);
                addr = addr.wrapping_add(stride as u64);
            }
        }
        Some(m) if m == u64::from(BASE_DELTA) => {
            // Base for the first active lane, then one delta (from the previous active lane)
            // per further active lane.
            let base = t.hex_u64("base address")?;
            if lanes > 0 {
                let mut addr = base;
                out.push(addr);
                for _ in 1..lanes {
                    addr = addr.wrapping_add(t.dec_i64("address delta")? as u64);
                    out.push(addr);
                }
            }
        }
        _ => {
            return Err(ctx.err(
                mode_tok.at,
                format!(
                    "unknown address mode `{}` (expected 0, 1 or 2)",
                    quote(mode_tok.text)
                ),
            ))
        }
    }
    Ok(())
}

/// Transfer addresses of a Hopper TMA/bulk instruction (Accel-Sim's version-5 layout).
fn tma_addrs(t: &mut Tokens, mask: u32, out: &mut Vec<u64>) -> Result<(), TraceError> {
    let ctx = t.ctx();
    let mode_tok = t.expect("address mode")?;
    match super::lex::parse_dec_u64(mode_tok.text) {
        Some(m) if m == u64::from(TMA_LIST_ALL) => {
            let count = t.dec_u32("transfer count")?;
            for _ in 0..count {
                out.push(t.hex_u64("transfer address")?);
            }
        }
        Some(m) if m == u64::from(TMA_BASE_DELTA) => {
            let base = t.hex_u64("base address")?;
            let count = t.dec_u32("transfer count")?;
            // All count - 1 deltas are on the line; like Accel-Sim, a fully masked-off
            // instruction keeps no addresses.
            let mut addr = base;
            if count > 0 && mask != 0 {
                out.push(addr);
            }
            for _ in 1..count {
                addr = addr.wrapping_add(t.dec_i64("address delta")? as u64);
                if mask != 0 {
                    out.push(addr);
                }
            }
        }
        _ => {
            return Err(ctx.err(
                mode_tok.at,
                format!(
                    "unknown TMA address mode `{}` (expected 3 or 4)",
                    quote(mode_tok.text)
                ),
            ))
        }
    }
    Ok(())
}

/// The tracer prints the immediate with `%d`, so it may be negative; a value above
/// `i64::MAX` keeps its 64-bit pattern.
fn parse_imm(s: &str) -> Option<i64> {
    super::lex::parse_dec_i64(s).or_else(|| super::lex::parse_dec_u64(s).map(|v| v as i64))
}
