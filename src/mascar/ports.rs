//! Per-cycle inputs and outputs of the Mascar blocks: the contract both twins implement.
//! Masks have bit `w` for warp slot `w` of the SM.

/// What the SM's issue stage knows about each warp this cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpSignals {
    /// The slot holds a resident, unfinished warp.
    pub active: u64,
    /// The I-buffer head holds an instruction (and the warp is not at a barrier).
    pub has_inst: u64,
    /// The head instruction is a global memory instruction (the WST's op type).
    pub is_mem: u64,
    /// The head instruction is clear of the scoreboard.
    pub sb_ready: u64,
    /// The head instruction depends on a global load this warp already issued.
    pub dep_load: u64,
    /// The warp waits at a CTA barrier.
    pub at_barrier: u64,
    /// The warp has a memory instruction whose requests have not all been sent yet (at the
    /// LD/ST head or in the re-execution queue).
    pub mem_in_flight: u64,
}

/// Input of the saturation detector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SaturationIn {
    pub mshrs_used: u32,
    pub miss_queue_used: u32,
}

/// Output of the saturation detector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SaturationOut {
    /// MSHRs or the miss queue are almost full.
    pub saturated: bool,
}

/// Input of the warp readiness checker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WrcIn {
    pub warps: WarpSignals,
    /// Mode register of the scheduler this cycle (true = Memory Priority).
    pub mp: bool,
    /// Owner register of the scheduler this cycle.
    pub owner: Option<u8>,
}

/// One cycle's write into the warp status table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WstWrite {
    /// Op type per warp: the next instruction is a global memory instruction.
    pub mem: u64,
    /// Stall bit per warp: the scheduler must not pick this warp's next instruction.
    pub stall: u64,
}

/// Output of the warp readiness checker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WrcOut {
    pub wst: WstWrite,
    /// The owner must give up the memory path: its next instruction depends on a load it
    /// issued and all its requests have left (none waits at the LD/ST head or in the
    /// re-execution queue), or it waits at a barrier, or it has finished.
    pub release_owner: bool,
    /// Warps that could take ownership now: next instruction is a ready global memory
    /// instruction (and the warp is not the releasing owner).
    pub owner_candidates: u64,
}

/// Contents of the warp status table after this cycle's write (it is write-through: the
/// scheduler reads in the same cycle what the WRC wrote).
pub type WstOut = WstWrite;

/// Input of the MAS scheduler's state (mode FSM and owner register).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MasIn {
    pub saturated: bool,
    pub release_owner: bool,
    pub owner_candidates: u64,
}

/// Mode and owner after this cycle's update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MasOut {
    /// Memory Priority mode.
    pub mp: bool,
    pub owner: Option<u8>,
    /// The owner changed this cycle (to another warp or to a first owner).
    pub owner_changed: bool,
}
