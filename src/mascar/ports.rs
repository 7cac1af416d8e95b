//! Per-cycle inputs and outputs of the Mascar blocks: the contract both twins implement.
//!
//! Every block is synchronous with one clock per core cycle. Per cycle the harness sets the
//! block's input struct, the block settles and gives its output struct (a function of its
//! registers and the inputs), then the clock edge updates the registers. The behavioural
//! twins (`crate::mascar::*`) and the rust-hdl twins (`crate::rtl::*`) take and give these
//! same structs, which is what lockstep compares.
//!
//! Masks have bit `w` for warp slot `w` of the SM; entry masks bit `e` for queue entry `e`.

/// The warp ↔ lane layout of the two schedulers, part of the contract.
pub use crate::sched::lanes::{join, split};

/// Lanes per scheduler of the RTL blocks (48 warps) and entries of their re-execution queue:
/// the sizes the RTL engine is built at, which waveforms need to lay out its signals.
pub const RTL_LANES: usize = 24;
pub const RTL_ENTRIES: usize = 32;

/// What the SM's issue stage knows about each warp this cycle (input of the WRC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpSignals {
    /// The slot holds a warp with something left to issue or to send: a warp that has issued
    /// its last instruction and has no request waiting to leave counts as finished here,
    /// although it stays resident until its stores are acknowledged (issue 29 §1).
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
    /// No miss of this SM is outstanding: no MSHR in use and the miss queue empty.
    pub l1_quiet: bool,
    /// In MP with CAR, the LD/ST head holds a request of a warp other than the owner that
    /// was refused (hit-only) and could not park (its warp already holds a re-execution
    /// queue entry, or the queue is full): only ownership can move it, and every memory
    /// instruction, the owner's included, waits behind it (issue 29).
    pub head_blocked: bool,
}

/// Input of the saturation detector (a comparator on the L1's counters).
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

/// Input of the warp readiness checker (combinational, no state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WrcIn {
    pub warps: WarpSignals,
    /// Mode register in force this cycle (true = Memory Priority), from the scheduler.
    pub mp: bool,
    /// Owner register in force this cycle, from the scheduler.
    pub owner: Option<u8>,
}

/// One cycle's write into the warp status table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WstWrite {
    /// Write enable per warp: the entries rewritten this cycle (warps with a head
    /// instruction); the others keep their last status.
    pub we: u64,
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
    /// issued, or it waits at a barrier, in both cases once all its requests have left (none
    /// waits at the LD/ST head or in the re-execution queue); or it has finished (nothing
    /// left to issue or send); or the L1 is quiet while it has no request waiting to leave
    /// and another warp has.
    pub release_owner: bool,
    /// Warps that could take ownership (never the owner): those whose next instruction is a
    /// ready global memory instruction that does not wait on the warp's own load; when the
    /// L1 is quiet and some warp has requests waiting to leave, those warps instead.
    pub owner_candidates: u64,
}

/// What the scheduler reads from the warp status table this cycle (write-through: an entry
/// written this cycle reads as its new value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WstOut {
    pub mem: u64,
    pub stall: u64,
}

/// The warp order the scheduler block uses under the policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BaseOrder {
    /// Loose round robin: circular slot order from one past the last issuer.
    #[default]
    Lrr,
    /// Greedy-then-oldest: the last issuer, then by age (launch order).
    Gto,
    /// OWL's CTA groups (behavioural twin only; the RTL block has no OWL order).
    Owl,
}

/// When MAS's mode machine reads the saturation flag (config key `mas_mode_check`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MasModeCheck {
    /// As the authors' flowchart (slide 11): every cycle in EP; in MP only when the owner
    /// gives up the memory path (its next instruction needs a load it issued, it finished,
    /// it waits at a barrier, or it hands a quiet L1 over): saturated → the next owner, not
    /// saturated → back to EP. An MP without an owner (no candidate yet) checks every cycle.
    #[default]
    Handover,
    /// Every cycle, in MP too: MP ends the first cycle saturation (and its hold) is over,
    /// whoever owns the path.
    EveryCycle,
}

/// Run-time constants of the scheduler block (fixed for a run, set from the config).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedParams {
    pub base: BaseOrder,
    /// MAS on: split the order into Mem_Q / Comp_Q and run the EP/MP mode machine.
    pub mas: bool,
    /// When the mode machine reads saturation.
    pub mode_check: MasModeCheck,
    /// Cycles saturation counts as lasting after it ends, wherever the mode machine reads it
    /// (every cycle: MP outlasts saturation by this much; at hand-over: a hand-over within
    /// this many cycles of saturation still goes to the next owner).
    pub mp_exit_hold: u32,
}

/// Most warp schedulers per SM (the RTL block has two, the paper's machine).
pub const MAX_SCHEDULERS: usize = 4;

/// Input of the scheduler block: all of the SM's schedulers (scheduler `s` of `n` owns the
/// warps `w` with `w mod n == s`; scheduler `first` decides first, the next in turn gets the
/// units left).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedIn {
    /// Warps whose head instruction may issue if its unit is free: active, head present,
    /// scoreboard clear, not held back by the LD/ST side (CAR occupancy, CCWS throttle).
    pub ready: u64,
    /// Head instruction class: uses an SP lane.
    pub alu: u64,
    /// Head instruction class: uses an SFU.
    pub sfu: u64,
    /// Head instruction goes to the LD/ST unit (needs it free).
    pub ldst: u64,
    /// Head instruction is global: it occupies the LD/ST unit once issued.
    pub ldst_take: u64,
    /// Head instruction is a global load: it needs a free in-flight load slot.
    pub gload: u64,
    /// The warp status table's entries as written this cycle (the WRC's write data). Only
    /// `ready` warps' bits matter, and their entries are always written, so this is what
    /// the table's write-through read port gives them.
    pub wst: WstOut,
    /// SP instructions the SM accepts this cycle: free slots of its ID_OC_SP register
    /// (`gpu/sm/collector.rs`; GPGPU-Sim's issue checks `has_free` there, not the units).
    pub sp_free: u8,
    /// SFU instructions it accepts: free slots of ID_OC_SFU.
    pub sfu_free: u8,
    /// ID_OC_MEM has room for a memory instruction.
    pub lsu_free: bool,
    pub load_slot_free: bool,
    /// The scheduler that picks first this cycle, taking the units it needs before the
    /// others: 0 in every cycle in GPGPU-Sim 3.2.2 (`shader_core_ctx::issue` cycles the
    /// schedulers in order); rotating every cycle in 4.x (`Issue_Prio`), which Accel-Sim
    /// runs. The SM drives it (`issue_order`, `gpu/sm/mod.rs`).
    pub first: u8,
    /// L1 saturation flag (MAS mode machine).
    pub saturated: bool,
    /// From the WRC: the owner gives up ownership.
    pub release_owner: bool,
    /// From the WRC: warps that may become owner.
    pub owner_candidates: u64,
    /// Warps launched since the last cycle (one CTA: the block stamps them with its age).
    pub launched: u64,
    /// Warps that finished since the last cycle.
    pub exited: u64,
    /// Synchronous reset (also the SM's kernel-launch clear): at this cycle's edge every
    /// register of the issue stage (WST and scheduler) takes its power-on value, whatever the
    /// other inputs say. The outputs of the cycle are those of the registers as they are.
    pub reset: bool,
}

/// Output of the scheduler block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedOut {
    /// The warp each scheduler issues this cycle.
    pub issue: [Option<u8>; MAX_SCHEDULERS],
    /// Mode register (true = Memory Priority), in force this cycle.
    pub mp: bool,
    /// Owner register, in force this cycle.
    pub owner: Option<u8>,
}

/// Input of the re-execution queue's control (the entries' line requests live beside it,
/// indexed by entry). The queue never looks into the L1: what makes an entry worth retrying
/// is the L1's free pulses and the outcome of its own last try.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueIn {
    /// Mode and owner in force (from the scheduler); a change re-arms every entry (a
    /// non-owner entry refused hit-only may now be served in full).
    pub mp: bool,
    pub owner: Option<u8>,
    /// The L1 released an MSHR (a fill) since the LD/ST unit's last access.
    pub mshr_freed: bool,
    /// A miss-queue slot freed (a request left for the interconnect) since then.
    pub miss_queue_freed: bool,
    /// Port priority parameter (`car_retry = head_first`): the head goes before the queue.
    pub head_first: bool,
    /// The LD/ST head holds a line request that may try the L1 this cycle (it was not
    /// refused and left waiting, e.g. behind a full queue).
    pub head_ready: bool,
    /// The selected entry's access was refused (a reservation failure, or a miss refused by
    /// hit-only service): it goes back behind every other entry with its retry bit clear.
    pub refused: bool,
    /// The selected entry sent its last line this cycle: free it at the edge.
    pub free: Option<u8>,
    /// A refused LD/ST-head instruction of this warp enters the queue (stored at `alloc`).
    pub push: Option<u8>,
    /// Synchronous reset (also the SM's kernel-launch clear): at this cycle's edge every
    /// register takes its power-on value (empty, unarmed, EP without owner).
    pub reset: bool,
}

/// Output of the re-execution queue's control.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueOut {
    /// The entry that takes the L1 port this cycle: the oldest one worth retrying (its retry
    /// bit is set, or a free pulse or mode change arrives now), unless the head goes first.
    /// `None`: the head has the port.
    pub select: Option<u8>,
    /// The free entry a push goes to (lowest index); `None` when full.
    pub alloc: Option<u8>,
    /// Per entry: marked hit-only this cycle (a non-owner entry in MP).
    pub hit_only: u64,
    /// Per entry: the retry bit (registered): something freed since the entry's last try.
    pub armed: u64,
    /// Per warp: holds an entry (registered).
    pub warps: u64,
    /// Entries in use (registered).
    pub occupancy: u8,
    pub full: bool,
    /// One entry left.
    pub almost_full: bool,
}
