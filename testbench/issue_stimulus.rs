//! Random issue-stage stimulus shared by the twin tests (`properties.rs`, `verilator.rs`):
//! eight random words and flag bits shaped into the inputs one cycle of an SM gives its
//! blocks.

use mascar::mascar::blocks::IssueIn;
use mascar::mascar::ports::{SchedIn, WarpSignals};

/// What one cycle of random stimulus varies besides the words: the units free, the
/// scheduler that picks first, and a synchronous reset.
pub struct Extra {
    pub sp_free: u8,
    pub sfu_free: u8,
    pub first: u8,
    pub reset: bool,
}

/// The inputs of one cycle on an SM with the slots `slots`, whose warps were `active` last
/// cycle (updated): warps launch into free slots (flag bit 4) and exit from active ones (bit
/// 5), as the SM tells the blocks; one class per head instruction (SP, SFU, global load or
/// store, shared access); `ready` only for heads clear of the scoreboard (the port contract:
/// a ready warp has a head and is active); barriers only without a head. Flag bits 0–3: LD/ST
/// unit free, load slot free, saturated, L1 quiet.
pub fn issue_input(slots: u64, active: &mut u64, r: &[u64; 8], flags: u64, x: Extra) -> IssueIn {
    let bit = |n: u32| flags >> n & 1 == 1;
    let launched = if bit(4) { slots & !*active & r[0] } else { 0 };
    let exited = if bit(5) {
        *active & r[1] & r[2].rotate_left(19)
    } else {
        0
    };
    *active = *active & !exited | launched;
    // A warp has no instruction, barrier or request in the cycle it is launched (the SM
    // fetches first). The twins disagree when it has and becomes an owner candidate then:
    // the reference picks the owner by the new launch stamps, the RTL by the slot's age
    // from before the launch.
    let settled = *active & !launched;
    let has_inst = settled & (r[2] | r[3]);
    let (ldst, d) = (has_inst & r[4], r[5]);
    let global = ldst & !(d & r[6]);
    let sb_ready = (r[6].rotate_left(7) | r[3]) & slots;
    IssueIn {
        warps: WarpSignals {
            active: *active,
            has_inst,
            is_mem: global,
            sb_ready,
            dep_load: has_inst & r[7] & r[1].rotate_left(13),
            at_barrier: settled & !has_inst & r[3].rotate_left(5),
            mem_in_flight: settled & r[0].rotate_left(17) & r[4],
            l1_quiet: bit(3),
            head_blocked: r[2] >> 61 & 3 == 0,
        },
        sched: SchedIn {
            ready: has_inst & sb_ready,
            alu: has_inst & !ldst & !d,
            sfu: has_inst & !ldst & d,
            ldst,
            ldst_take: global,
            gload: global & r[7],
            sp_free: x.sp_free,
            sfu_free: x.sfu_free,
            lsu_free: bit(0),
            load_slot_free: bit(1),
            first: x.first,
            saturated: bit(2),
            launched,
            exited,
            reset: x.reset,
            ..SchedIn::default()
        },
    }
}
