//! The stages between issue and a result's writeback, as GPGPU-Sim's shader core has them
//! (GPGPU-Sim 3.2.2 and Accel-Sim's 4.x `shader.cc`: `shader_core_ctx::cycle` runs
//! writeback, execute, read_operands, issue in that order, so an instruction moves one stage
//! per cycle):
//!
//! | cycle | stage | GPGPU-Sim |
//! |---|---|---|
//! | t | issue into the ID_OC register | `scheduler_unit::cycle`, `issue_warp` |
//! | t+1 | a collector unit takes it, its operand reads queue at the banks | `opndcoll_rfu_t::allocate_cu` |
//! | t+2 | the register banks are read | `opndcoll_rfu_t::allocate_reads` |
//! | t+3 | the ready collector unit dispatches into OC_EX | `dispatch_ready_cu` |
//! | t+4 | the unit takes it into its dispatch register | `shader_core_ctx::execute`, `simd_function_unit::issue` |
//! | t+5 | SP/SFU: first pipeline stage; LD/ST: its first cycle (L1 access) | `pipelined_simd_unit::cycle`, `ldst_unit::cycle` |
//! | t+5+L | SP/SFU: leaves stage 0 into EX_WB (latency L, initiation I: it waits I−1 cycles in the dispatch register and enters stage L−I) | `pipelined_simd_unit::cycle`, `m_result_port` |
//! | t+6+L | writeback releases the scoreboard; a dependent issues this cycle | `shader_core_ctx::writeback` |
//!
//! So a dependent chain of SP operations of latency L issues every L + 6 cycles (L = 4: the
//! reference's 10.0 cycles per ALU operation), and a memory instruction reaches the L1 five
//! cycles after its issue, when nothing holds it: the collector (`collector.rs`) models the
//! stages t+1 … t+4 (register-bank conflicts, busy collector units, full OC_EX registers
//! delay them), and a unit that takes an instruction at d hands its result to writeback at
//! d + L + 1 and releases the register at d + L + 2.

use crate::config::Config;
use crate::workload::program::{AluKind, OpKind};

/// Cycles from issue to the unit taking the instruction when nothing holds it in the
/// collector: allocation, bank read, dispatch into OC_EX, the unit's issue (t+1 … t+4).
pub const ISSUE_TO_UNIT: u64 = 4;

/// Cycles from a unit taking an SP/SFU instruction to the scoreboard release, beyond its
/// latency L: the dispatch register's cycle and the writeback stage (t+5, t+6+L).
pub const UNIT_TO_WRITEBACK: u64 = 2;

/// Cycles from issue until a dependent instruction of an SP/SFU operation of latency
/// `latency` may issue, when the collector holds neither.
pub const fn alu_dependent_distance(latency: u64) -> u64 {
    ISSUE_TO_UNIT + UNIT_TO_WRITEBACK + latency
}

/// The pipeline latency L and initiation interval I of an SP or SFU instruction. Only the
/// double-precision classes have I > 1 on the SP pipe (GPGPU-Sim 3.2.2
/// `ptx_instruction::set_opcode_and_latency`; the integer and single-precision intervals
/// are not modelled [design]); the SFU's single-precision interval is `sfu_initiation`.
pub fn unit_timing(c: &Config, op: OpKind) -> (u64, u64) {
    let (l, i) = match op {
        OpKind::Alu(AluKind::Simple) => (c.alu_latency, 1),
        OpKind::Alu(AluKind::IMul) => (c.imul_latency, 1),
        OpKind::Alu(AluKind::IDiv) => (c.idiv_latency, 1),
        OpKind::Alu(AluKind::DAdd) => (c.dp_add_latency, c.dp_add_initiation),
        OpKind::Alu(AluKind::DMinMax) => (c.dp_minmax_latency, c.dp_minmax_initiation),
        OpKind::Alu(AluKind::DMul) => (c.dp_mul_latency, c.dp_mul_initiation),
        OpKind::Alu(AluKind::DFma) => (c.dp_fma_latency, c.dp_fma_initiation),
        OpKind::Alu(AluKind::DDiv) => (c.dp_div_latency, c.dp_div_initiation),
        OpKind::Sfu => (c.sfu_latency, c.sfu_initiation),
        // Accel-Sim's default for `EXIT_OPS` (`trace_config::set_latency`): no config key.
        OpKind::Alu(AluKind::Exit) => (1, 1),
        // BARRIER_OP keeps the default latency and initiation of 1 (3.2.2
        // `ptx_instruction::set_opcode_and_latency`, 4.x `trace_config::set_latency`).
        OpKind::Barrier => (1, 1),
        // A branch is an SP op without a destination (3.2.2 `BRANCH_OP`).
        _ => (c.alu_latency, 1),
    };
    (l as u64, i.max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alu_chain_of_latency_four_issues_every_ten_cycles() {
        // The reference's dependent IADD/FFMA chain: 10.0 cycles per operation.
        assert_eq!(alu_dependent_distance(4), 10);
    }
}
