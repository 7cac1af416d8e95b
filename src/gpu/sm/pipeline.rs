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
//! cycles after its issue. [design] Register-bank conflicts in the collector are not modelled
//! (docs/correlation.md).

use crate::config::Config;
use crate::workload::program::{AluKind, OpKind};

/// Cycles from issue to the unit's first cycle: collector allocation, bank read, dispatch
/// into OC_EX, the unit's dispatch register (table above, t+1 … t+5).
pub const ISSUE_TO_UNIT: u64 = 5;

/// Cycles an SP/SFU result spends between the end of its L pipeline cycles and the
/// scoreboard release: the writeback stage (t+6+L).
pub const RESULT_TO_WRITEBACK: u64 = 1;

/// Cycles from issue until a dependent instruction of an SP/SFU operation of latency
/// `latency` may issue.
pub const fn alu_dependent_distance(latency: u64) -> u64 {
    ISSUE_TO_UNIT + latency + RESULT_TO_WRITEBACK
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
        // A branch is an SP op without a destination (3.2.2 `BRANCH_OP`).
        _ => (c.alu_latency, 1),
    };
    (l as u64, i.max(1) as u64)
}

/// Memory instructions between issue and the LD/ST unit: the ID_OC_MEM register (width 1),
/// the memory collector units (`-gpgpu_operand_collector_num_units_mem`, 3.2.2 default 2)
/// and the OC_EX_MEM register (width 1) hold at most this many; issue of a memory
/// instruction waits for room (`scheduler_unit::cycle` checks `has_free` on ID_OC_MEM).
pub const MEM_COLLECTOR_SLOTS: usize = 4;

/// Prepared memory instructions in order, each with the cycle at which the LD/ST unit may
/// take it. A fixed ring of preallocated entries: nothing is allocated per cycle.
#[derive(Clone, Debug)]
pub(super) struct MemCollector<T> {
    pub(super) slots: Vec<T>,
    ready_at: [u64; MEM_COLLECTOR_SLOTS],
    head: usize,
    len: usize,
}

impl<T: Default> MemCollector<T> {
    pub(super) fn new() -> Self {
        MemCollector {
            slots: (0..MEM_COLLECTOR_SLOTS).map(|_| T::default()).collect(),
            ready_at: [0; MEM_COLLECTOR_SLOTS],
            head: 0,
            len: 0,
        }
    }
}

impl<T> MemCollector<T> {
    pub(super) fn is_full(&self) -> bool {
        self.len == MEM_COLLECTOR_SLOTS
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The slot the next pushed instruction is prepared in.
    pub(super) fn tail(&self) -> usize {
        (self.head + self.len) % MEM_COLLECTOR_SLOTS
    }

    /// The tail slot becomes an entry the unit may take from cycle `ready_at`.
    pub(super) fn push(&mut self, ready_at: u64) {
        debug_assert!(!self.is_full());
        let t = self.tail();
        self.ready_at[t] = ready_at;
        self.len += 1;
    }

    /// The oldest entry's slot, if it may enter the unit at `now`.
    pub(super) fn ready(&self, now: u64) -> Option<usize> {
        (self.len > 0 && self.ready_at[self.head] <= now).then_some(self.head)
    }

    /// The warps of the waiting entries, as a mask (`warp_of` gives an entry's warp slot).
    pub(super) fn warps(&self, warp_of: impl Fn(&T) -> u8) -> u64 {
        (0..self.len).fold(0, |m, i| {
            m | 1u64 << warp_of(&self.slots[(self.head + i) % MEM_COLLECTOR_SLOTS])
        })
    }

    /// Drops the oldest entry (after its slot's contents were taken).
    pub(super) fn pop(&mut self) {
        debug_assert!(self.len > 0);
        self.head = (self.head + 1) % MEM_COLLECTOR_SLOTS;
        self.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alu_chain_of_latency_four_issues_every_ten_cycles() {
        // The reference's dependent IADD/FFMA chain: 10.0 cycles per operation.
        assert_eq!(alu_dependent_distance(4), 10);
    }

    #[test]
    fn entries_leave_in_order_once_ready_and_the_ring_fills() {
        let mut c: MemCollector<u32> = MemCollector::new();
        for (i, at) in [5u64, 6, 7, 8].into_iter().enumerate() {
            assert!(!c.is_full());
            let t = c.tail();
            c.slots[t] = i as u32;
            c.push(at);
        }
        assert!(c.is_full());
        assert_eq!(c.ready(4), None);
        let s = c.ready(5).unwrap();
        assert_eq!(c.slots[s], 0);
        c.pop();
        assert_eq!(c.ready(5), None, "the next is ready a cycle later");
        assert!(!c.is_full());
        assert_eq!(c.slots[c.ready(6).unwrap()], 1);
    }
}
