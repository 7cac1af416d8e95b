//! The machine configuration: every parameter of the model in one struct.
//!
//! Defaults are the paper's GTX480-class machine (spec §2). Parameters marked [design] in
//! their doc comment are our own choices where neither the paper nor GPGPU-Sim is precise.
//! Latencies follow GPGPU-Sim 3.2.2's GTX480 configuration and the stages of its shader
//! core (`gpu/sm/pipeline.rs`): the unloaded round trips are not parameters but come out of
//! the component latencies (an L1 miss → L2 hit → fill takes 146 cycles, → DRAM 270;
//! the slides' 200 / 440 are not what the configuration gives, docs/correlation.md), and
//! tests measure them end to end and against Accel-Sim's micro-benchmarks.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::mascar::ports::MasModeCheck;
use crate::sched::SchedulerKind;

/// Bytes of address and control every network packet carries (GPGPU-Sim 3.2.2 shader.h,
/// `READ_PACKET_SIZE` and `WRITE_PACKET_SIZE`: 8).
pub const PACKET_HEADER_BYTES: u32 = 8;

/// Which value each `size NAME = DEFAULT full FULL` of a kernel takes (the `kernel_scale`
/// setting): the default, sized to keep a kernel near 2 M warp instructions, or the full size
/// of the benchmark's real input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    #[default]
    Default,
    Full,
}

impl Scale {
    /// The name as the setting spells it.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Default => "default",
            Scale::Full => "full",
        }
    }
}

/// Which twin of the Mascar blocks a run uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Behavioural blocks.
    #[default]
    Ref,
    /// rust-hdl blocks in the loop.
    Rtl,
    /// Both, every output compared every cycle.
    Lockstep,
    /// The emitted Verilog compiled by Verilator in the loop (needs the `verilator` feature).
    Verilator,
    /// The behavioural blocks and the Verilated Verilog, every output compared every cycle.
    #[serde(rename = "lockstep_verilator")]
    #[value(name = "lockstep_verilator")]
    LockstepVerilator,
}

/// What one re-execution-queue entry holds (spec §5) [design].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CarEntry {
    /// One refused line request (its address and metadata); the LD/ST head goes on with its
    /// instruction's next line, so a 32-entry queue parks at most 32 lines.
    Access,
    /// The refused instruction with all its remaining line requests; the LD/ST unit takes
    /// the next instruction, so the queue can park 32 instructions' lines.
    #[default]
    Instruction,
}

/// Which scheduler of an SM picks first in a cycle (and so takes a contended unit, such as
/// the one LD/ST issue slot, before the others).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueOrder {
    /// Scheduler 0 in every cycle: GPGPU-Sim 3.2.2 `shader_core_ctx::issue` cycles its
    /// schedulers in index order (the paper's simulator).
    #[default]
    Fixed,
    /// The next scheduler in each cycle the SM has work: GPGPU-Sim 4.x
    /// `shader_core_ctx::issue` (`Issue_Prio`), which Accel-Sim runs.
    Rotate,
}

/// Which pipeline runs the double-precision add, min/max, multiply and fused multiply-add.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DpUnit {
    /// An SP pipeline: GPGPU-Sim 3.2.2 runs them as ALU ops (cuda-sim.cc,
    /// `set_opcode_and_latency`; a multiply as `ALU_SFU_OP`, see `AluKind::DMul`) with the
    /// `-ptx_opcode_*_dp` timing (the paper's simulator).
    #[default]
    Sp,
    /// The SFU: GPGPU-Sim 4.x's `scheduler_unit::cycle` sends a `DP_OP` to the SFU when the
    /// core has no DP unit (`-gpgpu_num_dp_units 0`, as Accel-Sim's Fermi file sets it).
    Sfu,
}

/// Which takes the L1 port when the LD/ST head and a re-execution-queue entry worth
/// retrying (armed by an MSHR-free or miss-queue-free pulse since its last try) both want it
/// (spec §5) [design].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CarRetry {
    /// The head, unless it waits behind a refusal it could not park (queue full); armed
    /// entries use the other cycles.
    HeadFirst,
    /// The oldest armed entry; the head when none is armed (spec §5).
    #[default]
    QueueFirst,
}

/// What Mascar's non-owner warps may do with a memory instruction in MP [design].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NonOwnerMem {
    /// Stall it at issue, as MAS does on its own (slide 11).
    #[default]
    Stall,
    /// Issue it; the LD/ST unit and the re-execution queue serve it hit-only (a miss waits
    /// in the queue), so still only the owner's requests go beyond L1 (CAR only).
    HitOnly,
}

/// Which DRAM model each partition's channel runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DramModel {
    /// GDDR5 with banks, open rows, FR-FCFS and GDDR5 timing, as GPGPU-Sim 3.2.2's
    /// `dram.cc` / `dram_sched.cc`.
    #[default]
    Gddr5,
    /// A FIFO moving one line every `dram_cycles_per_line` core cycles [design; the model
    /// before GDDR5].
    Fixed,
}

/// Where the buffers of a kernel written in the kernel format are placed in memory (kernels
/// from traces keep their recorded addresses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BufferPlacement {
    /// One after another from one heap base, each 256 B aligned, as `cudaMalloc` places
    /// them in GPGPU-Sim 3.2.2 (`cuda-sim.cc`, `gpgpu_t::gpu_malloc`).
    #[default]
    Packed,
    /// Each buffer in its own 1 MiB-aligned region, 1 MiB apart, skewed by (k mod 7) × 9
    /// lines [design; the layout before packed placement].
    Spread,
}

/// A configuration error: the offending key and why its value is refused, with the line and
/// column when it comes from a TOML file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
    /// 1-based line and column in the TOML text, when the key came from one.
    pub at: Option<(usize, usize)>,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError {
            key: key.into(),
            reason: reason.into(),
            at: None,
        }
    }

    /// The same error, positioned at byte `offset` of `text`.
    fn at_offset(mut self, text: &str, offset: usize) -> Self {
        self.at = Some(line_column(text, offset));
        self
    }
}

/// A TOML error as a [`ConfigError`]: the key whose line the error is on (or the key whose
/// value's span holds it), with line and column; `<file>` for a syntax error between keys.
fn toml_error(
    text: &str,
    e: &toml::de::Error,
    table: Option<&std::collections::BTreeMap<toml::Spanned<String>, toml::Spanned<toml::Value>>>,
) -> ConfigError {
    let span = e.span().unwrap_or(0..0);
    let in_table = table.and_then(|t| {
        t.iter()
            .find(|(k, v)| k.span().contains(&span.start) || v.span().contains(&span.start))
            .map(|(k, _)| k.get_ref().clone())
    });
    // A syntax error has no table: the key is the one written on its line, if any.
    let on_line = || {
        let start = text
            .get(..span.start)
            .unwrap_or(text)
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line = text[start..].lines().next().unwrap_or("");
        let key = line.split('=').next().unwrap_or("").trim().trim_matches('"');
        setting(key).map(|s| s.key.to_string())
    };
    let key = in_table.or_else(on_line).unwrap_or_else(|| "<file>".to_string());
    let mut reason = e.message().to_string();
    if let Some(s) = setting(&key) {
        reason = format!("{reason}; expected {}", s.domain.expected());
    }
    ConfigError::new(key, reason).at_offset(text, span.start)
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((line, column)) = self.at {
            write!(f, "line {line}, column {column}: ")?;
        }
        write!(f, "config key `{}`: {}", self.key, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// 1-based line and character column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    // ---- GPU and SM resources ----
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Warp contexts per SM (at most 64: per-warp state is kept in 64-bit masks).
    pub warps_per_sm: u32,
    /// Resident threads per SM.
    pub threads_per_sm: u32,
    /// Resident CTAs per SM.
    pub ctas_per_sm: u32,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// Shared memory bytes per SM.
    pub shared_per_sm: u32,
    /// Warp schedulers per SM; warp slot w belongs to scheduler w mod this.
    pub schedulers_per_sm: u32,
    /// Which scheduler picks first each cycle: `fixed` (scheduler 0, GPGPU-Sim 3.2.2) or
    /// `rotate` (GPGPU-Sim 4.x, Accel-Sim).
    pub issue_order: IssueOrder,
    /// Instruction-buffer entries per warp.
    pub ibuffer_entries: u32,
    /// Warp scheduling policy.
    pub scheduler: SchedulerKind,

    // ---- pipelines ----
    /// SP pipelines: SP warp instructions accepted per cycle.
    pub sp_units: u32,
    /// SFU pipelines.
    pub sfu_units: u32,
    /// Cycles an SFU pipeline is busy per warp instruction (Fermi: 4 SFUs serve 32 lanes).
    pub sfu_initiation: u32,
    /// Simple ALU op latency: the SP pipeline's stages. A dependent issues 6 cycles later
    /// still (operand collector, writeback: `gpu/sm/pipeline.rs`).
    pub alu_latency: u32,
    /// Integer multiply latency.
    pub imul_latency: u32,
    /// Integer divide latency.
    pub idiv_latency: u32,
    /// SFU op latency.
    pub sfu_latency: u32,
    /// Double-precision latencies, GPGPU-Sim 3.2.2's `-ptx_opcode_latency_dp` entries
    /// (ADD, MAX/MIN, MUL, MAD, DIV; GTX480 file `8,19,8,8,330`). ADD to MAD run on an SP
    /// pipeline, DIV on the SFU (`AluKind::DAdd` …).
    pub dp_add_latency: u32,
    pub dp_minmax_latency: u32,
    pub dp_mul_latency: u32,
    pub dp_fma_latency: u32,
    pub dp_div_latency: u32,
    /// Double-precision initiation intervals, `-ptx_opcode_initiation_dp` (GTX480 file
    /// `8,16,8,8,130`): cycles the pipeline is busy per warp instruction (Fermi's DP runs
    /// at 1/8 of the single-precision rate).
    pub dp_add_initiation: u32,
    pub dp_minmax_initiation: u32,
    pub dp_mul_initiation: u32,
    pub dp_fma_initiation: u32,
    pub dp_div_initiation: u32,
    /// Which pipeline runs DP add to MAD: an SP one (3.2.2) or the SFU (4.x without DP
    /// units, Accel-Sim). DP divide always runs on the SFU.
    pub dp_unit: DpUnit,
    /// Shared-memory load latency from the LD/ST unit's first cycle to the register
    /// release: 4.x's `smem_latency` pipeline (3, as port322 sets it) and the LD/ST
    /// writeback register `m_next_wb` (1). Bank conflicts add to it: they hold the LD/ST
    /// unit (`shared_banks`).
    pub shared_latency: u32,
    /// Shared-memory banks (4-byte words, word index mod banks): a shared instruction holds
    /// the LD/ST unit's dispatch register for the most distinct words one bank is asked for
    /// (GPGPU-Sim 3.2.2 `-gpgpu_shmem_num_banks`, `ldst_unit::shared_cycle`).
    pub shared_banks: u32,
    /// Register-file banks an operand collector reads from, one read per bank a cycle
    /// (GPGPU-Sim `-gpgpu_num_reg_banks`; `gpu/sm/collector.rs`).
    pub reg_banks: u32,
    /// Operand-collector units of the SP, SFU and MEM sets (`-gpgpu_operand_collector_num_units_sp`,
    /// `_sfu`, `_mem`; GTX480: 6, 8, 2).
    pub collector_units_sp: u32,
    pub collector_units_sfu: u32,
    pub collector_units_mem: u32,
    /// Generic collector units, which any class may use (GPGPU-Sim 4.x
    /// `-gpgpu_operand_collector_num_units_gen`; 3.2.2 has none, Accel-Sim's port322 sets 2).
    pub collector_units_gen: u32,
    /// L1 hit latency from the access to the register release: Accel-Sim's 4.x
    /// `l1_latency` queue (1 in the reference's port322; `ldst_unit::L1_latency_queue_cycle`
    /// releases the register when the access hits).
    pub l1_hit_latency: u32,
    /// Accel-Sim's (GPGPU-Sim 4.x) one-entry `l1_latency_queue` between the LD/ST unit and
    /// the L1D (`-gpgpu_l1_latency 1`, port322): an instruction leaves the unit when its last
    /// access enters the queue, even if the L1 then refuses it; a refused access stays there
    /// and the next instruction's accesses wait behind it (`shader.cc`:
    /// `process_memory_access_queue_l1cache`, `L1_latency_queue_cycle`). 3.2.2, the default,
    /// has no queue: an instruction leaves when the L1 accepts its last access.
    pub l1_access_queue: bool,
    /// In-flight load instructions an SM tracks; a full table stalls the LSU [design].
    pub max_inflight_loads: u32,

    // ---- L1 data cache ----
    pub l1_sets: u32,
    pub l1_ways: u32,
    /// Cache line size in bytes for L1 and L2 (power of two).
    pub line_bytes: u32,
    pub l1_mshrs: u32,
    /// Requests merged into one MSHR entry (the first included).
    pub l1_mshr_merge: u32,
    /// L1 miss queue entries; GPGPU-Sim treats it full at `size - 1`.
    pub l1_miss_queue: u32,

    // ---- texture and constant caches (GPGPU-Sim 3.2.2 `-gpgpu_tex_cache:l1`,
    // `-gpgpu_const_cache:l1`; see `gpu::sm::ro_cache`) ----
    pub tex_sets: u32,
    pub tex_line_bytes: u32,
    pub tex_ways: u32,
    /// Texture fragment FIFO entries (accepted accesses waiting for their data, in order).
    pub tex_fragment_fifo: u32,
    /// Texture request FIFO entries (misses waiting to enter the interconnect).
    pub tex_request_fifo: u32,
    /// Texture reorder-buffer entries (misses outstanding).
    pub tex_rob: u32,
    /// Texture result FIFO entries (data ready for writeback).
    pub tex_result_fifo: u32,
    pub const_sets: u32,
    pub const_line_bytes: u32,
    pub const_ways: u32,
    pub const_mshrs: u32,
    /// Requests merged into one constant-cache MSHR entry (the first included).
    pub const_mshr_merge: u32,
    pub const_miss_queue: u32,

    // ---- interconnect ----
    pub flit_bytes: u32,
    /// Flits per cycle an SM port injects or ejects.
    pub sm_port_flits: u32,
    /// Flits per cycle an L2 sub-partition's port injects or ejects: 1, as every node of
    /// GPGPU-Sim's intersim2 network (each of the 12 sub-partitions is a node).
    pub partition_port_flits: u32,
    /// Cycles from a flit crossing the router to its arrival at the destination: the output
    /// channel and the boundary queues at both ends (`icnt_push`/`icnt_pop`, ICNT_to_L2,
    /// L2_to_ICNT), which the model does not build stage by stage. 7 keeps the unloaded
    /// one-flit traversal of the earlier fixed-latency network, whose latency was measured on
    /// the L2-hit chain micro-benchmark (docs/correlation.md).
    pub icnt_latency: u32,
    /// Flits a source's input queue holds: a packet is pushed only if it fits (intersim2
    /// `input_buffer_size`, 9 when the `.icnt` file leaves it unset; `HasBuffer`).
    pub icnt_input_buffer: u32,
    /// Flits the router's input buffer holds, one virtual channel (`vc_buf_size`, `num_vcs` 1
    /// in `config_fermi_islip.icnt`).
    pub icnt_vc_buffer: u32,
    /// Flits a destination holds between the router and its consumer: the ejection buffer
    /// (`ejection_buffer_size`, `vc_buf_size` when unset: 8) plus the boundary buffer
    /// (`boundary_buffer_size`, 16).
    pub icnt_dest_buffer: u32,
    /// Cycles a packet's head waits at the front of the router's input buffer before it
    /// crosses: `vc_alloc_delay` + `sw_alloc_delay` (1 + 1).
    pub icnt_alloc_cycles: u32,

    // ---- L2 ----
    pub l2_partitions: u32,
    pub l2_sets: u32,
    pub l2_ways: u32,
    /// Cycles from a request's arrival at its partition to the L2 access: GPGPU-Sim 3.2.2's
    /// ROP queue (`-rop_latency`, 120 in the GTX480 file; l2cache.cc `m_rop`).
    pub l2_latency: u32,
    /// Per sub-partition (the `dl2` cache string's sets, MSHRs, merge limit, miss queue).
    pub l2_mshrs: u32,
    pub l2_mshr_merge: u32,
    /// The L2 cache's miss queue (`dl2` `mq`), per sub-partition.
    pub l2_miss_queue: u32,
    /// L2 → interconnect queue entries per sub-partition (3.2.2 `-gpgpu_dram_partition_queues`
    /// `$2i`).
    pub l2_response_queue: u32,
    /// Bytes the L2 data array reads or writes per cycle (the `dl2` string's last field, 3.2.2
    /// `m_data_port_width`): a hit holds the data port, and a fill the fill port, for
    /// (bytes / width) cycles (gpu-cache.cc, `bandwidth_management`).
    pub l2_data_port_bytes: u32,
    /// Interconnect → L2 queue entries per sub-partition (`i2$`).
    pub l2_icnt_queue: u32,
    /// L2 → DRAM queue entries per sub-partition (`$2d`).
    pub l2_dram_queue: u32,
    /// DRAM → L2 queue entries per sub-partition (`d2$`).
    pub l2_fill_queue: u32,

    /// L2 sub-partitions per memory channel (`-gpgpu_n_sub_partition_per_mchannel`): each
    /// has its own L2 slice and queues and is a destination of the interconnect; the
    /// channel's DRAM serves them all (GPGPU-Sim 3.2.2 l2cache.cc).
    pub l2_sub_partitions: u32,

    // ---- DRAM ----
    /// `gddr5` (GPGPU-Sim 3.2.2's model) or `fixed` (a fixed-rate pipe).
    pub dram_model: DramModel,
    /// Requests queued per partition (the FR-FCFS queue).
    pub dram_queue: u32,
    /// DRAM return queue entries per channel (`-gpgpu_dram_return_queue_size`; 0: 1024).
    pub dram_return_queue: u32,
    /// Fixed latency (core cycles) from the L2's miss queue to the DRAM queue (GPGPU-Sim's
    /// `-dram_latency` queue, 100 in the GTX480 file); with `fixed`, the pipe's access
    /// latency.
    pub dram_latency: u32,
    /// Core cycles per 128 B line a partition's DRAM transfers (bandwidth), `fixed` only [design].
    pub dram_cycles_per_line: f64,
    /// GDDR5 timing in DRAM command cycles (`-gpgpu_dram_timing_opt`).
    pub dram_banks: u32,
    pub dram_bank_groups: u32,
    pub dram_tccd: u32,
    pub dram_trrd: u32,
    pub dram_trcd: u32,
    pub dram_tras: u32,
    pub dram_trp: u32,
    pub dram_trc: u32,
    pub dram_cl: u32,
    pub dram_wl: u32,
    pub dram_tcdlr: u32,
    pub dram_twr: u32,
    pub dram_tccdl: u32,
    pub dram_trtpl: u32,
    /// Burst length (`-gpgpu_dram_burst_length`).
    pub dram_burst_length: u32,
    /// Bytes per chip per beat (`-gpgpu_dram_buswidth`).
    pub dram_bus_bytes: u32,
    /// Chips per channel (`-gpgpu_n_mem_per_ctrlr`).
    pub dram_chips: u32,
    /// Data beats per command cycle (`-dram_data_command_freq_ratio`; 4 = GDDR5's QDR).
    pub dram_data_command_ratio: u32,
    /// Core and DRAM command clocks (`-gpgpu_clock_domains` first and last fields).
    pub core_clock_mhz: u32,
    pub dram_clock_mhz: u32,
    /// Address map (`-gpgpu_mem_addr_mapping`, GPGPU-Sim 3.2.2 `addrdec.cc` syntax).
    pub dram_address_map: String,

    // ---- MAS (spec §4) ----
    /// Saturation: MSHRs used ≥ l1_mshrs − margin, or miss queue used ≥ l1_miss_queue −
    /// margin [design].
    pub mas_sat_margin: u32,
    /// Extra cycles saturation counts as lasting after it ends, wherever the mode machine
    /// reads it (`mas_mode_check`) [design].
    pub mas_mp_exit_hold: u32,
    /// When MP reads saturation: at owner hand-over, as the authors' flowchart (slide 11), or
    /// every cycle [design: the old behaviour].
    pub mas_mode_check: MasModeCheck,
    /// Base order inside Mem_Q and Comp_Q: `gto` or `lrr` [design].
    pub mas_base_order: SchedulerKind,

    /// Mascar (MAS + CAR): non-owners' memory instructions in MP are stalled (`stall`) or
    /// issue with hit-only service (`hit_only`); ignored without CAR [design].
    pub mascar_non_owner_mem: NonOwnerMem,

    // ---- CAR (spec §5) ----
    /// Re-execution queue entries [design; 32 per the public reproduction].
    pub car_queue_depth: u32,
    /// What an entry holds: `access` (one refused line request) or `instruction` (the
    /// refused instruction's remaining line requests) [design].
    pub car_entry: CarEntry,
    /// Port priority between the LD/ST head and the queue: `head_first` or `queue_first`
    /// [design].
    pub car_retry: CarRetry,
    /// A full queue stops global memory instructions from issuing (`true`, spec §5: the LSU
    /// then only retries from the queue), or lets them in and a refused head then waits at
    /// the head, retrying in the cycles no armed entry takes the port (`false`) [design].
    pub car_full_blocks_issue: bool,

    // ---- OWL and CCWS (spec §3) ----
    /// OWL: SM i prefers CTA groups whose CTA id has parity i mod 2 (BLP awareness).
    pub owl_blp_parity: bool,
    /// CCWS: victim tag array entries per warp, and their associativity.
    pub ccws_vta_entries: u32,
    pub ccws_vta_ways: u32,
    /// CCWS: base lost-locality score; scores decay by 1 per cycle toward it.
    pub ccws_base_score: u32,
    /// CCWS: K_THROTTLE in LLDS = VTA hits × K_THROTTLE × cutoff / instructions.
    pub ccws_k_throttle: u32,

    // ---- between kernels ----
    /// Invalidate every L1 when a kernel ends, before the next one of a trace starts
    /// (GPGPU-Sim `-gpgpu_flush_l1_cache`, off by default in 3.2.2).
    pub flush_l1_between_kernels: bool,
    /// Write back and invalidate the L2 when a kernel ends (GPGPU-Sim
    /// `-gpgpu_flush_l2_cache`, off by default in 3.2.2).
    pub flush_l2_between_kernels: bool,
    /// Cycles from a kernel's launch to its first CTA dispatch, counted in the kernel's
    /// cycles (GPGPU-Sim 4.x `-gpgpu_kernel_launch_latency`: `gpgpu_sim::select_kernel`
    /// waits until `decrement_kernel_latency` has counted it down; 3.2.2 has none). Besides
    /// modelling a launch cost, it shifts the core clock against the DRAM clock, which is
    /// how docs/correlation.md measures how far a kernel's figures move on clock phase alone.
    pub kernel_launch_latency: u64,

    // ---- buffer placement ----
    /// How kernel-format buffers are laid out: `packed` (GPGPU-Sim's `cudaMalloc`) or
    /// `spread` (1 MiB regions with a skew) [design].
    pub buffer_placement: BufferPlacement,
    /// Which placement: 1 is the exact layout; k > 1 moves the base by a seeded multiple of
    /// 256 B below 1 MiB and, when packed, pads each gap by a seeded 0–7 × 256 B.
    pub placement: u32,

    // ---- kernel size ----
    /// Which value each `size NAME = DEFAULT full FULL` of a kernel-format kernel takes:
    /// `default` (sized to stay near 2 M warp instructions) or `full` (the benchmark's real
    /// input size, as each built-in's header names it). Traces are not affected.
    pub kernel_scale: Scale,

    // ---- run control ----
    /// Which twin of the Mascar blocks runs: `ref` (behavioural), `rtl` (rust-hdl blocks in
    /// the loop) or `lockstep` (both, compared every cycle).
    pub engine: Engine,
    /// Stop with an error after this many cycles without any progress (0 = off).
    pub watchdog_cycles: u64,
    /// Stop with an error after this many cycles in total (0 = unlimited).
    pub max_cycles: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sms: 15,
            warps_per_sm: 48,
            threads_per_sm: 1536,
            ctas_per_sm: 8,
            regs_per_sm: 32768,
            shared_per_sm: 48 * 1024,
            schedulers_per_sm: 2,
            issue_order: IssueOrder::Fixed,
            dp_unit: DpUnit::Sp,
            ibuffer_entries: 2,
            scheduler: SchedulerKind::Lrr,
            sp_units: 2,
            sfu_units: 1,
            sfu_initiation: 4,
            alu_latency: 4,
            imul_latency: 8,
            idiv_latency: 40,
            sfu_latency: 20,
            dp_add_latency: 8,
            dp_minmax_latency: 19,
            dp_mul_latency: 8,
            dp_fma_latency: 8,
            dp_div_latency: 330,
            dp_add_initiation: 8,
            dp_minmax_initiation: 16,
            dp_mul_initiation: 8,
            dp_fma_initiation: 8,
            dp_div_initiation: 130,
            shared_latency: 4,
            shared_banks: 32,
            reg_banks: 16,
            collector_units_sp: 6,
            collector_units_sfu: 8,
            collector_units_mem: 2,
            collector_units_gen: 0,
            l1_hit_latency: 1,
            l1_access_queue: false,
            max_inflight_loads: 256,
            l1_sets: 64,
            l1_ways: 4,
            line_bytes: 128,
            l1_mshrs: 64,
            l1_mshr_merge: 8,
            l1_miss_queue: 8,
            tex_sets: 4,
            tex_line_bytes: 128,
            tex_ways: 24,
            tex_fragment_fifo: 128,
            tex_request_fifo: 4,
            tex_rob: 128,
            tex_result_fifo: 2,
            const_sets: 64,
            const_line_bytes: 64,
            const_ways: 2,
            const_mshrs: 2,
            const_mshr_merge: 32,
            const_miss_queue: 4,
            flit_bytes: 32,
            sm_port_flits: 1,
            partition_port_flits: 1,
            icnt_latency: 7,
            icnt_input_buffer: 9,
            icnt_vc_buffer: 8,
            icnt_dest_buffer: 24,
            icnt_alloc_cycles: 2,
            l2_partitions: 6,
            l2_sets: 64,
            l2_ways: 8,
            l2_latency: 120,
            l2_mshrs: 32,
            l2_mshr_merge: 4,
            l2_miss_queue: 4,
            l2_response_queue: 8,
            l2_data_port_bytes: 32,
            l2_icnt_queue: 8,
            l2_dram_queue: 8,
            l2_fill_queue: 8,
            l2_sub_partitions: 2,
            dram_model: DramModel::Gddr5,
            dram_queue: 32,
            dram_return_queue: 116,
            dram_latency: 100,
            dram_cycles_per_line: 3.0,
            dram_banks: 16,
            dram_bank_groups: 4,
            dram_tccd: 2,
            dram_trrd: 6,
            dram_trcd: 12,
            dram_tras: 28,
            dram_trp: 12,
            dram_trc: 40,
            dram_cl: 12,
            dram_wl: 4,
            dram_tcdlr: 5,
            dram_twr: 12,
            dram_tccdl: 3,
            dram_trtpl: 2,
            dram_burst_length: 8,
            dram_bus_bytes: 4,
            dram_chips: 2,
            dram_data_command_ratio: 4,
            core_clock_mhz: 700,
            dram_clock_mhz: 924,
            dram_address_map: GTX480_ADDRESS_MAP.to_string(),
            mas_sat_margin: 1,
            mas_mp_exit_hold: 0,
            mas_mode_check: MasModeCheck::Handover,
            mas_base_order: SchedulerKind::Gto,
            car_queue_depth: 32,
            mascar_non_owner_mem: NonOwnerMem::Stall,
            car_entry: CarEntry::Instruction,
            car_retry: CarRetry::QueueFirst,
            car_full_blocks_issue: true,
            owl_blp_parity: true,
            ccws_vta_entries: 16,
            ccws_vta_ways: 8,
            ccws_base_score: 100,
            ccws_k_throttle: 8,
            flush_l1_between_kernels: false,
            flush_l2_between_kernels: false,
            kernel_launch_latency: 0,
            buffer_placement: BufferPlacement::Packed,
            placement: 1,
            kernel_scale: Scale::Default,
            engine: Engine::Ref,
            watchdog_cycles: 200_000,
            max_cycles: 0,
        }
    }
}

/// Latencies kept below this bound fit the SM's event wheel.
pub const MAX_PIPE_LATENCY: u32 = 1000;
/// Longest latency (cycles) of the memory system and interconnect: their pipes are
/// allocated up front with room for this many cycles of requests.
pub const MAX_MEM_LATENCY: u64 = 10_000;
/// Most lines one SM's L1 holds (`l1_sets × l1_ways`): 2 MiB of 128-byte lines, 8× the
/// largest real L1, so that 1024 such SMs still fit in memory.
pub const MAX_L1_LINES: u64 = 16_384;
/// Most lines one L2 partition holds (`l2_sets × l2_ways`): 8 MiB of 128-byte lines.
pub const MAX_L2_LINES: u64 = 65_536;
/// Longest run a cycle limit may ask for (a million seconds at 1 GHz).
const MAX_RUN_CYCLES: u64 = 1_000_000_000_000;

/// The values a key accepts, and its default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    /// A whole number in `min..=max`.
    Int {
        min: u64,
        max: u64,
        default: u64,
    },
    /// A finite number in `min..=max`.
    Real {
        min: f64,
        max: f64,
        default: f64,
    },
    Bool {
        default: bool,
    },
    /// One of the names.
    Choice {
        values: &'static [&'static str],
        default: &'static str,
    },
    /// A string whose form `validate()` checks.
    Text {
        default: &'static str,
    },
}

/// One configuration key: the range `validate()` checks and the line `mascar config
/// --reference` prints, from the same row, so the documentation cannot drift from the checks.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub key: &'static str,
    pub unit: &'static str,
    pub domain: Domain,
    pub description: &'static str,
    /// A rule beyond the range, between keys (checked in `validate()` too); empty if none.
    pub rule: &'static str,
}

const fn int(
    key: &'static str,
    unit: &'static str,
    min: u64,
    max: u64,
    default: u64,
    description: &'static str,
) -> Setting {
    Setting {
        key,
        unit,
        domain: Domain::Int { min, max, default },
        description,
        rule: "",
    }
}

const fn flag(key: &'static str, default: bool, description: &'static str) -> Setting {
    Setting {
        key,
        unit: "",
        domain: Domain::Bool { default },
        description,
        rule: "",
    }
}

const fn choice(
    key: &'static str,
    values: &'static [&'static str],
    default: &'static str,
    description: &'static str,
) -> Setting {
    Setting {
        key,
        unit: "",
        domain: Domain::Choice { values, default },
        description,
        rule: "",
    }
}

impl Setting {
    const fn rule(mut self, rule: &'static str) -> Self {
        self.rule = rule;
        self
    }
}

/// Scheduler names, as `SchedulerKind` spells them.
const SCHEDULERS: &[&str] = &["lrr", "gto", "owl", "ccws", "mas", "car", "mascar"];
const LAT: u64 = MAX_PIPE_LATENCY as u64;

/// Every key of [`Config`], in its order, under the reference's section headings.
pub const SETTING_GROUPS: &[(&str, &[Setting])] = &[
    (
        "GPU and SM resources",
        &[
            int("sms", "SMs", 1, 1024, 15, "Streaming multiprocessors."),
            int("warps_per_sm", "warps", 1, 64, 48, "Warp contexts per SM (per-warp state is kept in 64-bit masks)."),
            int("threads_per_sm", "threads", 1, 2048, 1536, "Resident threads per SM (64 warps × 32 lanes at most)."),
            int("ctas_per_sm", "CTAs", 1, 64, 8, "Resident CTAs per SM."),
            int("regs_per_sm", "registers", 1, 1 << 20, 32768, "32-bit registers per SM."),
            int("shared_per_sm", "bytes", 0, 16 << 20, 48 * 1024, "Shared memory per SM."),
            int("schedulers_per_sm", "schedulers", 1, 4, 2, "Warp schedulers per SM; warp slot w belongs to scheduler w mod this.")
                .rule("at most warps_per_sm"),
            choice("issue_order", &["fixed", "rotate"], "fixed", "Which scheduler picks first each cycle, taking a contended unit (the LD/ST issue slot) before the others: scheduler 0 always (GPGPU-Sim 3.2.2), or the next one each cycle the SM has work (GPGPU-Sim 4.x's Issue_Prio, as Accel-Sim runs)."),
            int("ibuffer_entries", "entries", 1, 8, 2, "Instruction-buffer entries per warp."),
            choice("scheduler", SCHEDULERS, "lrr", "Warp scheduling policy."),
        ],
    ),
    (
        "Pipelines",
        &[
            int("sp_units", "pipelines", 1, 64, 2, "SP pipelines: SP warp instructions accepted per cycle."),
            int("sfu_units", "pipelines", 1, 64, 1, "SFU pipelines."),
            int("sfu_initiation", "cycles", 1, LAT, 4, "Cycles an SFU pipeline is busy per warp instruction (Fermi: 4 SFUs serve 32 lanes)."),
            int("alu_latency", "cycles", 1, LAT, 4, "Simple ALU op latency: SP pipeline stages (a dependent issues 6 cycles later still: operand collector and writeback)."),
            int("imul_latency", "cycles", 1, LAT, 8, "Integer multiply latency."),
            int("idiv_latency", "cycles", 1, LAT, 40, "Integer divide latency."),
            int("sfu_latency", "cycles", 1, LAT, 20, "SFU op latency."),
            int("dp_add_latency", "cycles", 1, LAT, 8, "Double-precision add/sub latency (3.2.2 -ptx_opcode_latency_dp ADD; SP pipeline)."),
            int("dp_minmax_latency", "cycles", 1, LAT, 19, "Double-precision min/max latency (-ptx_opcode_latency_dp MAX; SP pipeline)."),
            int("dp_mul_latency", "cycles", 1, LAT, 8, "Double-precision multiply latency (-ptx_opcode_latency_dp MUL; SP pipeline)."),
            int("dp_fma_latency", "cycles", 1, LAT, 8, "Double-precision fma/mad latency (-ptx_opcode_latency_dp MAD; SP pipeline)."),
            int("dp_div_latency", "cycles", 1, LAT, 330, "Double-precision divide latency (-ptx_opcode_latency_dp DIV; SFU, as 3.2.2 runs every div)."),
            int("dp_add_initiation", "cycles", 1, LAT, 8, "Cycles an SP pipeline is busy per DP add/sub (-ptx_opcode_initiation_dp ADD)."),
            int("dp_minmax_initiation", "cycles", 1, LAT, 16, "Cycles an SP pipeline is busy per DP min/max (-ptx_opcode_initiation_dp MAX)."),
            int("dp_mul_initiation", "cycles", 1, LAT, 8, "Cycles an SP pipeline is busy per DP multiply (-ptx_opcode_initiation_dp MUL)."),
            int("dp_fma_initiation", "cycles", 1, LAT, 8, "Cycles an SP pipeline is busy per DP fma/mad (-ptx_opcode_initiation_dp MAD)."),
            int("dp_div_initiation", "cycles", 1, LAT, 130, "Cycles the SFU is busy per DP divide (-ptx_opcode_initiation_dp DIV)."),
            choice("dp_unit", &["sp", "sfu"], "sp", "Which pipeline runs DP add, min/max, multiply and FMA: an SP pipeline (GPGPU-Sim 3.2.2) or the one SFU (GPGPU-Sim 4.x on a core without DP units, as Accel-Sim runs the Fermi file). DP divide always runs on the SFU."),
            int("shared_latency", "cycles", 1, LAT, 4, "Shared-memory load latency from the LD/ST unit to the register release (after its bank-conflict cycles)."),
            int("shared_banks", "banks", 1, 32, 32, "Shared-memory banks of 4-byte words: a shared instruction holds the LD/ST unit for the most distinct words one bank is asked for."),
            int("reg_banks", "banks", 1, 64, 16, "Register-file banks: an operand collector reads one register per bank a cycle, register r of warp w in bank (r + 1 + w) mod banks (GPGPU-Sim -gpgpu_num_reg_banks)."),
            int("collector_units_sp", "units", 1, 16, 6, "Operand-collector units for SP instructions (-gpgpu_operand_collector_num_units_sp)."),
            int("collector_units_sfu", "units", 1, 16, 8, "Operand-collector units for SFU instructions (-gpgpu_operand_collector_num_units_sfu)."),
            int("collector_units_mem", "units", 1, 16, 2, "Operand-collector units for memory instructions (-gpgpu_operand_collector_num_units_mem)."),
            int("collector_units_gen", "units", 0, 16, 0, "Generic operand-collector units any instruction may use, tried first through their own port (GPGPU-Sim 4.x -gpgpu_operand_collector_num_units_gen; 3.2.2 has none, Accel-Sim's port322 trace.config sets 2)."),
            int("l1_hit_latency", "cycles", 1, LAT, 1, "L1 hit latency from the access to the register release (Accel-Sim's l1_latency queue)."),
            flag("l1_access_queue", false, "Accel-Sim's one-entry L1 latency queue (-gpgpu_l1_latency 1): a memory instruction leaves the LD/ST unit when its last access enters it, even if the L1 refuses that access (GPGPU-Sim 4.x shader.cc L1_latency_queue_cycle); off: 3.2.2, it leaves when the L1 accepts its last access."),
            int("max_inflight_loads", "loads", 1, 65535, 256, "In-flight load instructions an SM tracks; a full table stalls the LSU."),
        ],
    ),
    (
        "L1 data cache",
        &[
            int("l1_sets", "sets", 1, MAX_L1_LINES, 64, "L1 sets.").rule("a power of two"),
            int("l1_ways", "ways", 1, 1024, 4, "L1 associativity (up to 1024, so a fully associative L1 can be studied).")
                .rule("l1_sets × l1_ways ≤ 16384 lines"),
            int("line_bytes", "bytes", 32, 4096, 128, "Cache line size of L1 and L2.").rule("a power of two"),
            int("l1_mshrs", "entries", 1, 4096, 64, "L1 MSHR entries."),
            int("l1_mshr_merge", "requests", 1, 64, 8, "Requests merged into one MSHR entry (the first included)."),
            int("l1_miss_queue", "entries", 2, 1024, 8, "L1 miss queue entries; GPGPU-Sim treats it full at size − 1, so at least 2."),
        ],
    ),
    (
        "Texture and constant caches",
        &[
            int("tex_sets", "sets", 1, 4096, 4, "Texture cache sets (GTX480 `-gpgpu_tex_cache:l1 4:128:24`).").rule("a power of two"),
            int("tex_line_bytes", "bytes", 4, 4096, 128, "Texture cache line size; a line larger than line_bytes is cut to line_bytes (a miss fetches one memory line).").rule("a power of two"),
            int("tex_ways", "ways", 1, 1024, 24, "Texture cache associativity."),
            int("tex_fragment_fifo", "entries", 1, 4096, 128, "Texture fragment FIFO: accepted accesses waiting for their data, served in order."),
            int("tex_request_fifo", "entries", 1, 4096, 4, "Texture request FIFO: misses waiting to enter the interconnect."),
            int("tex_rob", "entries", 1, 4096, 128, "Texture reorder buffer: misses outstanding below the SM."),
            int("tex_result_fifo", "entries", 1, 4096, 2, "Texture result FIFO: data ready for writeback, one per cycle."),
            int("const_sets", "sets", 1, 4096, 64, "Constant cache sets (GTX480 `-gpgpu_const_cache:l1 64:64:2`).").rule("a power of two"),
            int("const_line_bytes", "bytes", 4, 4096, 64, "Constant cache line size; a line larger than line_bytes is cut to line_bytes.").rule("a power of two"),
            int("const_ways", "ways", 1, 1024, 2, "Constant cache associativity."),
            int("const_mshrs", "entries", 1, 4096, 2, "Constant cache MSHR entries."),
            int("const_mshr_merge", "requests", 1, 64, 32, "Requests merged into one constant-cache MSHR entry (the first included)."),
            int("const_miss_queue", "entries", 1, 1024, 4, "Constant cache miss queue entries (full at size, as `read_only_cache` checks)."),
        ],
    ),
    (
        "Interconnect",
        &[
            int("flit_bytes", "bytes", 1, 4096, 32, "Flit size."),
            int("sm_port_flits", "flits/cycle", 1, 64, 1, "Flits per cycle an SM port injects or ejects."),
            int("partition_port_flits", "flits/cycle", 1, 64, 1, "Flits per cycle an L2 sub-partition port injects or ejects (one flit per network node per cycle, as intersim2)."),
            int("icnt_latency", "cycles", 1, MAX_MEM_LATENCY, 7, "Cycles from a flit crossing the router to its arrival at the destination (output channel and boundary queues)."),
            int("icnt_input_buffer", "flits", 1, 4096, 9, "Flits a source's input queue holds; a packet is pushed only if it fits (intersim2 input_buffer_size)."),
            int("icnt_vc_buffer", "flits", 1, 4096, 8, "Flits the router's input buffer holds, one virtual channel (vc_buf_size)."),
            int("icnt_dest_buffer", "flits", 1, 4096, 24, "Flits a destination holds before its consumer takes them (ejection 8 + boundary 16)."),
            int("icnt_alloc_cycles", "cycles", 0, 64, 2, "Cycles a packet's head waits at the front of the router's input buffer (vc_alloc_delay + sw_alloc_delay)."),
        ],
    ),
    (
        "L2",
        &[
            int("l2_partitions", "partitions", 1, 128, 6, "L2 partitions (memory channels), each with its own DRAM."),
            int("l2_sets", "sets", 1, MAX_L2_LINES, 64, "L2 sets per sub-partition.").rule("a power of two"),
            int("l2_ways", "ways", 1, 64, 8, "L2 associativity.").rule("l2_sets × l2_ways ≤ 65536 lines"),
            int("l2_latency", "cycles", 1, MAX_MEM_LATENCY, 120, "Cycles from a request's arrival at its sub-partition to the L2 access (GPGPU-Sim 3.2.2 -rop_latency)."),
            int("l2_mshrs", "entries", 1, 4096, 32, "L2 MSHR entries per sub-partition."),
            int("l2_mshr_merge", "requests", 1, 64, 4, "Requests merged into one L2 MSHR entry."),
            int("l2_miss_queue", "entries", 3, 1024, 4, "L2 cache miss queue entries per sub-partition (a write miss needs room for 3)."),
            int("l2_response_queue", "entries", 1, 1024, 8, "L2 → interconnect queue entries per sub-partition (-gpgpu_dram_partition_queues $2i)."),
            int("l2_data_port_bytes", "bytes", 1, 4096, 32, "Bytes the L2 data array moves per cycle: a hit holds the data port and a fill the fill port for bytes / this cycles (-gpgpu_cache:dl2 last field).").rule("divides line_bytes"),
            int("l2_icnt_queue", "entries", 1, 1024, 8, "Interconnect → L2 queue entries per sub-partition (-gpgpu_dram_partition_queues i2$)."),
            int("l2_dram_queue", "entries", 1, 1024, 8, "L2 → DRAM queue entries per sub-partition (-gpgpu_dram_partition_queues $2d)."),
            int("l2_fill_queue", "entries", 1, 1024, 8, "DRAM → L2 queue entries per sub-partition (-gpgpu_dram_partition_queues d2$)."),
            int("l2_sub_partitions", "per channel", 1, 16, 2, "L2 sub-partitions per channel (GPGPU-Sim -gpgpu_n_sub_partition_per_mchannel), each with its own L2 slice and queues, sharing the channel's DRAM.").rule("a power of two dividing dram_banks"),
        ],
    ),
    (
        "DRAM",
        &[
            choice("dram_model", &["gddr5", "fixed"], "gddr5", "gddr5: banks, open rows, FR-FCFS and GDDR5 timing (GPGPU-Sim 3.2.2 dram.cc); fixed: a FIFO moving one line per dram_cycles_per_line."),
            int("dram_queue", "entries", 1, 1024, 32, "Requests queued per partition (the FR-FCFS queue; GPGPU-Sim -gpgpu_frfcfs_dram_sched_queue_size)."),
            int("dram_return_queue", "entries", 0, 4096, 116, "DRAM return queue entries per channel (GPGPU-Sim -gpgpu_dram_return_queue_size; 0: 1024)."),
            int("dram_latency", "cycles", 1, MAX_MEM_LATENCY, 100, "Fixed latency from the L2 miss queue to the DRAM queue (gddr5; GPGPU-Sim -dram_latency) or of the pipe (fixed)."),
            Setting {
                key: "dram_cycles_per_line",
                unit: "cycles",
                domain: Domain::Real {
                    min: 0.25,
                    max: 10_000.0,
                    default: 3.0,
                },
                description: "Core cycles per 128-byte line a partition's DRAM transfers (bandwidth; dram_model = fixed only).",
                rule: "",
            },
            int("dram_banks", "banks", 1, 64, 16, "Banks per channel (GDDR5 nbk).").rule("a multiple of dram_bank_groups"),
            int("dram_bank_groups", "groups", 1, 64, 4, "Bank groups (nbkgrp)."),
            int("dram_tccd", "DRAM cycles", 0, 1000, 2, "Column to column delay (CCD)."),
            int("dram_trrd", "DRAM cycles", 0, 1000, 6, "Activate to activate, different banks (RRD)."),
            int("dram_trcd", "DRAM cycles", 0, 1000, 12, "Activate to column command (RCD)."),
            int("dram_tras", "DRAM cycles", 0, 1000, 28, "Activate to precharge (RAS)."),
            int("dram_trp", "DRAM cycles", 0, 1000, 12, "Precharge to activate (RP)."),
            int("dram_trc", "DRAM cycles", 0, 1000, 40, "Activate to activate, same bank (RC)."),
            int("dram_cl", "DRAM cycles", 1, 1000, 12, "Read latency (CAS latency, CL)."),
            int("dram_wl", "DRAM cycles", 1, 1000, 4, "Write latency (WL)."),
            int("dram_tcdlr", "DRAM cycles", 0, 1000, 5, "Last write data to read command (CDLR)."),
            int("dram_twr", "DRAM cycles", 0, 1000, 12, "Last write data to precharge (WR)."),
            int("dram_tccdl", "DRAM cycles", 0, 1000, 3, "Column to column delay within a bank group (CCDL)."),
            int("dram_trtpl", "DRAM cycles", 0, 1000, 2, "Read to precharge within a bank group (RTPL)."),
            int("dram_burst_length", "beats", 1, 64, 8, "Burst length (GPGPU-Sim -gpgpu_dram_burst_length)."),
            int("dram_bus_bytes", "bytes", 1, 64, 4, "Data bus width per chip (-gpgpu_dram_buswidth)."),
            int("dram_chips", "chips", 1, 16, 2, "Chips per channel (-gpgpu_n_mem_per_ctrlr)."),
            int("dram_data_command_ratio", "beats/cycle", 1, 16, 4, "Data beats per command cycle (-dram_data_command_freq_ratio; 4 for GDDR5).").rule("at most dram_burst_length"),
            int("core_clock_mhz", "MHz", 1, 100_000, 700, "Core (and interconnect and L2) clock (-gpgpu_clock_domains)."),
            int("dram_clock_mhz", "MHz", 1, 100_000, 924, "DRAM command clock (-gpgpu_clock_domains)."),
            Setting {
                key: "dram_address_map",
                unit: "",
                domain: Domain::Text {
                    default: GTX480_ADDRESS_MAP,
                },
                description: "Address map (-gpgpu_mem_addr_mapping): dramid@N; then 64 letters R row, B bank, C column, S burst, D channel, 0 unused, from bit 63 down.",
                rule: "parses for l2_partitions channels of l2_sub_partitions; channel bits above the line offset",
            },
        ],
    ),
    (
        "MAS (Mascar's scheduler)",
        &[
            int("mas_sat_margin", "entries", 0, 4096, 1, "Saturation: MSHRs used ≥ l1_mshrs − margin, or miss queue used ≥ l1_miss_queue − margin."),
            int("mas_mp_exit_hold", "cycles", 0, 10_000_000, 0, "Extra cycles saturation counts as lasting after it ends, where the mode machine reads it (every_cycle: MP outlasts saturation by this much; handover: a hand-over this soon after saturation goes to the next owner)."),
            choice("mas_mode_check", &["handover", "every_cycle"], "handover", "When MP reads saturation: when the owner gives up the memory path (slide 11's flowchart: saturated → next owner, else EP), or every cycle."),
            choice("mas_base_order", &["gto", "lrr"], "gto", "Base order inside Mem_Q and Comp_Q."),
            choice("mascar_non_owner_mem", &["stall", "hit_only"], "stall", "Non-owners' memory instructions in MP: stalled, or issued with hit-only service (with CAR only)."),
        ],
    ),
    (
        "CAR (cache-access re-execution)",
        &[
            int("car_queue_depth", "entries", 1, 64, 32, "Re-execution queue entries."),
            choice("car_entry", &["access", "instruction"], "instruction", "What an entry holds: one refused line request, or the refused instruction's remaining lines."),
            choice("car_retry", &["head_first", "queue_first"], "queue_first", "L1 port priority: the oldest queue entry armed by an MSHR- or miss-queue-free pulse since its last try, or the LD/ST head (unless it waits behind a refusal)."),
            flag("car_full_blocks_issue", true, "A full queue stops global memory instructions from issuing (else a refused head waits at the head and retries)."),
        ],
    ),
    (
        "OWL and CCWS",
        &[
            flag("owl_blp_parity", true, "OWL: SM i prefers CTA groups whose CTA id has parity i mod 2 (BLP awareness)."),
            int("ccws_vta_entries", "entries", 1, 256, 16, "CCWS: victim tag array entries per warp.")
                .rule("a multiple of ccws_vta_ways"),
            int("ccws_vta_ways", "ways", 1, 256, 8, "CCWS: victim tag array associativity."),
            int("ccws_base_score", "points", 1, 10_000, 100, "CCWS: base lost-locality score; scores decay by 1 per cycle toward it."),
            int("ccws_k_throttle", "factor", 0, 1000, 8, "CCWS: K_THROTTLE in LLDS = VTA hits × K_THROTTLE × cutoff / instructions."),
        ],
    ),
    (
        "Between kernels",
        &[
            flag("flush_l1_between_kernels", false, "Invalidate every L1 when a kernel ends (GPGPU-Sim -gpgpu_flush_l1_cache)."),
            flag("flush_l2_between_kernels", false, "Write back and invalidate the L2 when a kernel ends (GPGPU-Sim -gpgpu_flush_l2_cache)."),
            int("kernel_launch_latency", "cycles", 0, 1_000_000, 0, "Cycles from a kernel's launch to its first CTA dispatch, counted in the kernel's cycles (GPGPU-Sim 4.x -gpgpu_kernel_launch_latency; 3.2.2 has none). It also shifts the core clock against the DRAM clock."),
        ],
    ),
    (
        "Buffer placement",
        &[
            choice("buffer_placement", &["packed", "spread"], "packed", "How the buffers of kernel-format kernels are laid out: packed one after another from 0x8000_0000, each 256 B aligned (GPGPU-Sim 3.2.2 cudaMalloc), or each in its own 1 MiB region with a (k mod 7) × 9-line skew. Trace kernels keep their recorded addresses."),
            int("placement", "index", 1, 1_000_000, 1, "Which placement: 1 is the exact layout; k > 1 moves the base up by a seeded multiple of 256 B below 1 MiB and, when packed, pads each gap between buffers by a seeded 0–7 × 256 B."),
        ],
    ),
    (
        "Kernel size",
        &[
            choice("kernel_scale", &["default", "full"], "default", "Which value each `size NAME = DEFAULT full FULL` of a kernel-format kernel (built-in or .kern file) takes: default (scaled to stay near 2 M warp instructions) or full (the real input size each built-in's header names; up to ~100 M warp instructions). Trace kernels are not affected."),
        ],
    ),
    (
        "Run control",
        &[
            choice("engine", &["ref", "rtl", "lockstep", "verilator", "lockstep_verilator"], "ref", "Which twin of the Mascar blocks runs: behavioural, rust-hdl RTL in the loop, or both compared every cycle; verilator and lockstep_verilator run the emitted Verilog compiled by Verilator instead of the rust-hdl RTL (a build with `--features verilator`).")
                .rule(
                "rtl, lockstep, verilator and lockstep_verilator need schedulers_per_sm = 2, warps_per_sm ≤ 48, an LRR or GTO base order, and under CAR car_queue_depth ≤ 32 and car_entry = instruction",
            ),
            int("watchdog_cycles", "cycles", 0, MAX_RUN_CYCLES, 200_000, "Stop with an error after this many cycles without progress (0 = off)."),
            int("max_cycles", "cycles", 0, MAX_RUN_CYCLES, 0, "Stop with an error after this many cycles in total (0 = unlimited)."),
        ],
    ),
];

/// Every key, in [`Config`]'s order.
pub fn settings() -> impl Iterator<Item = &'static Setting> {
    SETTING_GROUPS.iter().flat_map(|(_, s)| s.iter())
}

/// The row of `key`, if it is a configuration key.
pub fn setting(key: &str) -> Option<&'static Setting> {
    settings().find(|s| s.key == key)
}

impl Domain {
    /// The valid values: `1..=1024`, `true or false`, `lrr, gto`.
    pub fn range_text(&self) -> String {
        match self {
            Domain::Int { min, max, .. } => format!("{min}..={max}"),
            Domain::Real { min, max, .. } => format!("{min}..={max}"),
            Domain::Bool { .. } => "true or false".into(),
            Domain::Choice { values, .. } => values.join(", "),
            Domain::Text { .. } => "text".into(),
        }
    }

    /// The default as written in a TOML file.
    pub fn default_text(&self) -> String {
        match self {
            Domain::Int { default, .. } => default.to_string(),
            Domain::Real { default, .. } => format!("{default:?}"),
            Domain::Bool { default } => default.to_string(),
            Domain::Choice { default, .. } => format!("\"{default}\""),
            Domain::Text { default } => format!("\"{default}\""),
        }
    }

    /// What a value must be, for messages: `a whole number in 1..=1024`.
    pub fn expected(&self) -> String {
        match self {
            Domain::Int { .. } => format!("a whole number in {}", self.range_text()),
            Domain::Real { .. } => format!("a number in {}", self.range_text()),
            Domain::Bool { .. } => "true or false".into(),
            Domain::Choice { .. } => format!("one of {}", self.range_text()),
            Domain::Text { .. } => "a string".into(),
        }
    }
}

impl Setting {
    /// `{value} is out of range {min}..={max}`, or what the value should have been.
    fn refuse(&self, value: impl fmt::Display) -> ConfigError {
        let reason = match self.domain {
            Domain::Int { .. } | Domain::Real { .. } => {
                format!("{value} is out of range {}", self.domain.range_text())
            }
            _ => format!("`{value}` is not {}", self.domain.expected()),
        };
        ConfigError::new(self.key, reason)
    }

    /// Checks one value of this key as `serde_json` writes it (whole numbers as integers,
    /// non-finite numbers as null).
    fn check_json(&self, v: Option<&serde_json::Value>) -> Result<(), ConfigError> {
        use serde_json::Value as J;
        let missing = || ConfigError::new(self.key, "missing from the configuration");
        let v = v.ok_or_else(missing)?;
        match (self.domain, v) {
            (Domain::Int { min, max, .. }, J::Number(n)) => match n.as_u64() {
                Some(x) if (min..=max).contains(&x) => Ok(()),
                _ => Err(self.refuse(n)),
            },
            (Domain::Real { min, max, .. }, J::Number(n)) => match n.as_f64() {
                Some(x) if (min..=max).contains(&x) => Ok(()),
                _ => Err(self.refuse(n)),
            },
            (Domain::Real { .. }, J::Null) => Err(self.refuse("a non-finite number")),
            (Domain::Bool { .. }, J::Bool(_)) => Ok(()),
            (Domain::Choice { values, .. }, J::String(s)) if values.contains(&s.as_str()) => Ok(()),
            (Domain::Text { .. }, J::String(_)) => Ok(()),
            (_, other) => Err(self.refuse(other)),
        }
    }

    /// Checks one TOML value given for this key (from `--set` or a file) before it is
    /// converted, so that a wrong type or a number out of range names the valid values.
    fn check_toml(&self, v: &toml::Value) -> Result<(), ConfigError> {
        use toml::Value as T;
        match (self.domain, v) {
            (Domain::Int { min, max, .. }, T::Integer(i)) => {
                if (min as i128..=max as i128).contains(&(*i as i128)) {
                    Ok(())
                } else {
                    Err(self.refuse(i))
                }
            }
            (Domain::Real { min, max, .. }, T::Integer(i)) if (min..=max).contains(&(*i as f64)) => Ok(()),
            (Domain::Real { min, max, .. }, T::Float(x)) if (min..=max).contains(x) => Ok(()),
            (Domain::Real { .. }, T::Integer(_) | T::Float(_)) => Err(self.refuse(v)),
            (Domain::Bool { .. }, T::Boolean(_)) => Ok(()),
            (Domain::Choice { values, .. }, T::String(s)) if values.contains(&s.as_str()) => Ok(()),
            (Domain::Choice { .. }, T::String(s)) => Err(self.refuse(s)),
            (Domain::Text { .. }, T::String(_)) => Ok(()),
            _ => Err(ConfigError::new(
                self.key,
                format!(
                    "`{}` is not {}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    self.domain.expected()
                ),
            )),
        }
    }
}

/// `mascar config --reference`: every key with its unit, range, default and description,
/// as Markdown (docs/configuration.md is this text).
pub fn reference_markdown() -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = write!(
        out,
        "# Configuration reference\n\n\
         <!-- Generated by `mascar config --reference`; do not edit. Regenerate with\n     \
         `cargo run --release -- config --reference > docs/configuration.md`\n     \
         (testbench/settings_ranges.rs fails when this file is stale). -->\n\n\
         Every key of the machine configuration. Give keys in a TOML file (`--config FILE`,\n\
         the format `mascar config --dump` prints; absent keys keep their defaults) or one at a\n\
         time with `--set key=value`; a GPGPU-Sim `gpgpusim.config` given to `--config` sets the\n\
         keys its options map onto and lists the rest. Every value is checked when loaded: a\n\
         value outside its range, of the wrong type or breaking a rule is refused with an error\n\
         naming the key, the value and the valid range.\n"
    );
    for (group, rows) in SETTING_GROUPS {
        let _ = write!(
            out,
            "\n## {group}\n\n| key | unit | valid values | default | description |\n|---|---|---|---|---|\n"
        );
        for s in rows.iter() {
            let rule = if s.rule.is_empty() {
                String::new()
            } else {
                format!(" Also: {}.", s.rule)
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | `{}` | {}{} |",
                s.key,
                if s.unit.is_empty() { "—" } else { s.unit },
                s.domain.range_text(),
                s.domain.default_text(),
                s.description,
                rule
            );
        }
    }
    let _ = write!(
        out,
        "\n## Input size limits\n\n\
         Whole files are read only up to a cap; a longer one is refused with an error naming it,\n\
         so that a wrong path (`/dev/zero`, a FIFO) ends at once.\n\n\
         | input | limit |\n|---|---|\n\
         | `.kern` kernel file (`-k`) | {} |\n\
         | configuration file (`--config`, TOML or gpgpusim.config) | {} |\n\
         | Accel-Sim `kernelslist.g` | {} |\n\
         | one line of an Accel-Sim trace or kernelslist (`--trace`) | {} |\n",
        crate::input::human_bytes(crate::input::MAX_KERNEL_BYTES),
        crate::input::human_bytes(crate::input::MAX_CONFIG_BYTES),
        crate::input::human_bytes(crate::input::MAX_LIST_BYTES),
        crate::input::human_bytes(crate::input::MAX_TRACE_LINE_BYTES as u64),
    );
    out
}

/// GTX480's address mapping in GPGPU-Sim 3.2.2's `configs/GTX480/gpgpusim.config`.
pub const GTX480_ADDRESS_MAP: &str =
    "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS";

impl Config {
    /// Refuses impossible values up front, naming the key: every key against its range in
    /// [`SETTING_GROUPS`], then the rules between keys.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let values =
            serde_json::to_value(self).map_err(|e| ConfigError::new("<configuration>", e.to_string()))?;
        for s in settings() {
            s.check_json(values.get(s.key))?;
        }
        let rule = |key: &str, reason: String| Err(ConfigError::new(key, reason));
        if self.l1_access_queue && self.l1_hit_latency != 1 {
            return rule(
                "l1_hit_latency",
                format!(
                    "{} with l1_access_queue = true: the queue is modelled with one entry, \
                     Accel-Sim's -gpgpu_l1_latency 1 (valid: 1)",
                    self.l1_hit_latency
                ),
            );
        }
        if self.schedulers_per_sm > self.warps_per_sm {
            return rule(
                "schedulers_per_sm",
                format!(
                    "{} is more than warps_per_sm ({}): each scheduler needs a warp",
                    self.schedulers_per_sm, self.warps_per_sm
                ),
            );
        }
        // A packet that does not fit a router buffer could never be sent or delivered.
        let largest = (self.line_bytes + PACKET_HEADER_BYTES).div_ceil(self.flit_bytes);
        for (key, v) in [
            ("icnt_input_buffer", self.icnt_input_buffer),
            ("icnt_dest_buffer", self.icnt_dest_buffer),
        ] {
            if v < largest {
                return rule(
                    key,
                    format!(
                        "{v} flits cannot hold the largest packet: a line and its header, \
                         (line_bytes {} + {}) / flit_bytes {} = {largest} flits",
                        self.line_bytes, PACKET_HEADER_BYTES, self.flit_bytes
                    ),
                );
            }
        }
        for (key, v) in [
            ("l1_sets", self.l1_sets),
            ("l2_sets", self.l2_sets),
            ("line_bytes", self.line_bytes),
            ("tex_sets", self.tex_sets),
            ("tex_line_bytes", self.tex_line_bytes),
            ("const_sets", self.const_sets),
            ("const_line_bytes", self.const_line_bytes),
        ] {
            if !v.is_power_of_two() {
                return rule(key, format!("must be a power of two, got {v}"));
            }
        }
        for (key, sets, ways) in [
            ("tex_ways", self.tex_sets, self.tex_ways),
            ("const_ways", self.const_sets, self.const_ways),
        ] {
            let lines = sets as u64 * ways as u64;
            if lines > MAX_L1_LINES {
                let p = key.trim_end_matches("_ways");
                return rule(
                    key,
                    format!(
                        "{p}_sets × {p}_ways = {sets} × {ways} = {lines} lines, more than {MAX_L1_LINES}"
                    ),
                );
            }
        }
        // Tag arrays are allocated whole, per SM and per partition.
        for (key, sets, ways, max) in [
            ("l1_ways", self.l1_sets, self.l1_ways, MAX_L1_LINES),
            ("l2_ways", self.l2_sets, self.l2_ways, MAX_L2_LINES),
        ] {
            let lines = sets as u64 * ways as u64;
            if lines > max {
                let level = &key[..2];
                return rule(
                    key,
                    format!("{level}_sets × {level}_ways = {sets} × {ways} = {lines} lines, more than {max}"),
                );
            }
        }
        // 3.2.2 gpu-cache.h asserts `m_line_sz % m_data_port_width == 0`.
        if !self.line_bytes.is_multiple_of(self.l2_data_port_bytes) {
            return rule(
                "l2_data_port_bytes",
                format!(
                    "{} does not divide line_bytes ({})",
                    self.l2_data_port_bytes, self.line_bytes
                ),
            );
        }
        if !self.ccws_vta_entries.is_multiple_of(self.ccws_vta_ways) {
            return rule(
                "ccws_vta_entries",
                format!(
                    "{} is not a multiple of ccws_vta_ways ({})",
                    self.ccws_vta_entries, self.ccws_vta_ways
                ),
            );
        }
        // Whether the engine can run this configuration is checked where the run is
        // assembled (`crate::engine::validate`), which knows the engines.
        self.validate_dram()?;
        Ok(())
    }

    /// Applies one `key=value` override; the value is a TOML literal (`64`, `"gto"`, `true`).
    /// A value of the wrong type or out of its key's range is refused naming the key and the
    /// valid values; rules between keys are left to [`Config::validate`], so that overrides
    /// can be given in any order.
    pub fn set(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| ConfigError::new(assignment, "expected `key=value`".to_string()))?;
        let key = key.trim();
        let value = value.trim();
        let Some(setting) = setting(key) else {
            return Err(ConfigError::new(
                key,
                "unknown configuration key (see `mascar config --reference`)",
            ));
        };
        let mut table = toml::Value::try_from(&*self).map_err(|e| ConfigError::new(key, e.to_string()))?;
        let map = table.as_table_mut().expect("config serialises to a table");
        let parsed: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
            Ok(mut t) => t.remove("v").expect("just inserted"),
            // A bare word such as `gto` is taken as a string.
            Err(_) => toml::Value::String(value.to_string()),
        };
        setting.check_toml(&parsed)?;
        map.insert(key.to_string(), parsed);
        let updated: Config = table.try_into().map_err(|e: toml::de::Error| {
            ConfigError::new(
                key,
                format!(
                    "invalid value `{value}`: {}; expected {}",
                    e.message(),
                    setting.domain.expected()
                ),
            )
        })?;
        *self = updated;
        Ok(())
    }

    /// Reads a TOML config file (keys as in [`Config`]; absent keys keep their defaults).
    /// Errors name the key with its line and column; a value out of its key's range is
    /// refused here, the rules between keys by [`Config::validate`].
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        use toml::Spanned;
        // Syntax first, with every value's position kept.
        let table: std::collections::BTreeMap<Spanned<String>, Spanned<toml::Value>> =
            toml::from_str(text).map_err(|e| toml_error(text, &e, None))?;
        for (key, value) in &table {
            let Some(s) = setting(key.get_ref()) else {
                return Err(ConfigError::new(
                    key.get_ref().as_str(),
                    "unknown configuration key (see `mascar config --reference`)",
                )
                .at_offset(text, key.span().start));
            };
            s.check_toml(value.get_ref())
                .map_err(|e| e.at_offset(text, value.span().start))?;
        }
        toml::from_str(text).map_err(|e| toml_error(text, &e, Some(&table)))
    }

    /// L1 capacity in bytes.
    pub fn l1_bytes(&self) -> u64 {
        self.l1_sets as u64 * self.l1_ways as u64 * self.line_bytes as u64
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match toml::to_string(self) {
            Ok(s) => f.write_str(&s),
            Err(_) => Err(fmt::Error),
        }
    }
}

/// The DRAM rules between keys (the DRAM section's part of [`Config::validate`]).
impl Config {
    fn validate_dram(&self) -> Result<(), ConfigError> {
        let rule = |key: &str, reason: String| Err(ConfigError::new(key, reason));
        if !self.dram_banks.is_multiple_of(self.dram_bank_groups) {
            return rule(
                "dram_banks",
                format!(
                    "{} is not a multiple of dram_bank_groups ({})",
                    self.dram_banks, self.dram_bank_groups
                ),
            );
        }
        let sub = self.l2_sub_partitions;
        if !sub.is_power_of_two() || !self.dram_banks.is_multiple_of(sub) {
            return rule(
                "l2_sub_partitions",
                format!(
                    "{sub} must be a power of two dividing dram_banks ({})",
                    self.dram_banks
                ),
            );
        }
        if self.dram_data_command_ratio > self.dram_burst_length {
            return rule(
                "dram_data_command_ratio",
                format!(
                    "{} is more than dram_burst_length ({}): a burst would take no bus cycle",
                    self.dram_data_command_ratio, self.dram_burst_length
                ),
            );
        }
        // The address map itself is checked by the decoder that reads it
        // (`crate::gpu::mem::addrdec::check_map`, from `crate::engine::validate`).
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn router_buffers_smaller_than_a_line_packet_are_refused() {
        // 128 B line + 8 B header in 32 B flits: 5 flits; 4 could never hold a reply.
        for key in ["icnt_input_buffer", "icnt_dest_buffer"] {
            let mut c = Config::default();
            match key {
                "icnt_input_buffer" => c.icnt_input_buffer = 4,
                _ => c.icnt_dest_buffer = 4,
            }
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(key) && e.contains("5 flits"), "{e}");
            match key {
                "icnt_input_buffer" => c.icnt_input_buffer = 5,
                _ => c.icnt_dest_buffer = 5,
            }
            c.validate().unwrap();
        }
    }

    #[test]
    fn defaults_are_valid() {
        Config::default().validate().unwrap();
    }

    #[test]
    fn set_overrides_and_names_bad_keys() {
        let mut c = Config::default();
        c.set("l1_mshrs=32").unwrap();
        assert_eq!(c.l1_mshrs, 32);
        c.set("scheduler=gto").unwrap();
        assert_eq!(c.scheduler, SchedulerKind::Gto);
        let e = c.set("l1_mshr=3").unwrap_err();
        assert_eq!(e.key, "l1_mshr");
        let e = c.set("l1_mshrs=many").unwrap_err();
        assert_eq!(e.key, "l1_mshrs");
        let e = c.set("novalue").unwrap_err();
        assert!(e.reason.contains("key=value"));
    }

    #[test]
    fn zero_mshrs_is_refused_with_key() {
        let c = Config {
            l1_mshrs: 0,
            ..Config::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.key, "l1_mshrs");
    }

    #[test]
    fn toml_round_trip() {
        let c = Config::default();
        let text = c.to_string();
        assert_eq!(Config::from_toml(&text).unwrap(), c);
        let e = Config::from_toml("l1_msrs = 3").unwrap_err();
        assert!(e.to_string().contains("l1_msrs"), "{e}");
    }

    #[test]
    fn the_settings_table_lists_every_key_in_order_with_its_default() {
        let dumped = Config::default().to_string();
        let keys: Vec<&str> = dumped.lines().filter_map(|l| l.split(" = ").next()).collect();
        let table: Vec<&str> = settings().map(|s| s.key).collect();
        assert_eq!(keys, table);
        let values = toml::Value::try_from(Config::default()).unwrap();
        for s in settings() {
            assert_eq!(s.domain.default_text(), values[s.key].to_string(), "{}", s.key);
        }
        let names: Vec<&str> = SchedulerKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, SCHEDULERS);
        // Bounds that are the model's own array sizes.
        let max = |key: &str| match setting(key).unwrap().domain {
            Domain::Int { max, .. } => max,
            _ => unreachable!(),
        };
        assert_eq!(
            max("schedulers_per_sm"),
            crate::mascar::ports::MAX_SCHEDULERS as u64
        );
        assert_eq!(max("ibuffer_entries"), crate::gpu::sm::warp::MAX_IBUF as u64);
        assert_eq!(max("warps_per_sm"), 64);
        assert_eq!(max("threads_per_sm"), 64 * 32);
    }

    #[test]
    fn every_key_just_outside_its_range_is_refused_naming_key_value_and_range() {
        let default = serde_json::to_value(Config::default()).unwrap();
        for s in settings() {
            let Domain::Int { min, max, .. } = s.domain else {
                continue;
            };
            let mut outside = vec![max + 1];
            if min > 0 {
                outside.push(min - 1);
            }
            for v in outside {
                let mut j = default.clone();
                j[s.key] = v.into();
                let c: Config = serde_json::from_value(j).unwrap();
                let e = c.validate().unwrap_err();
                assert_eq!(e.key, s.key);
                assert_eq!(e.reason, format!("{v} is out of range {min}..={max}"));
                let e = Config::default().set(&format!("{}={v}", s.key)).unwrap_err();
                assert_eq!(
                    (e.key.as_str(), e.reason.clone()),
                    (s.key, format!("{v} is out of range {min}..={max}"))
                );
            }
        }
        let e = Config::default().set("dram_latency=4294967295").unwrap_err();
        assert_eq!(
            e.to_string(),
            "config key `dram_latency`: 4294967295 is out of range 1..=10000"
        );
        let e = Config::default().set("dram_cycles_per_line=0.1").unwrap_err();
        assert_eq!(e.reason, "0.1 is out of range 0.25..=10000");
        let e = Config::default().set("mas_base_order=ccws").unwrap_err();
        assert_eq!(e.reason, "`ccws` is not one of gto, lrr");
        let e = Config::default().set("l1_mshrs=many").unwrap_err();
        assert!(e.reason.contains("a whole number in 1..=4096"), "{e}");
    }

    #[test]
    fn rules_between_keys_are_kept() {
        let bad = |c: Config| c.validate().unwrap_err().key;
        let d = Config::default;
        assert_eq!(bad(Config { l1_sets: 48, ..d() }), "l1_sets");
        assert_eq!(
            bad(Config {
                line_bytes: 96,
                ..d()
            }),
            "line_bytes"
        );
        assert_eq!(
            bad(Config {
                l1_sets: 64,
                l1_ways: 1024,
                ..d()
            }),
            "l1_ways"
        );
        assert_eq!(
            bad(Config {
                l2_sets: 65536,
                l2_ways: 2,
                ..d()
            }),
            "l2_ways"
        );
        assert_eq!(
            bad(Config {
                warps_per_sm: 1,
                ..d()
            }),
            "schedulers_per_sm"
        );
        assert_eq!(
            bad(Config {
                ccws_vta_entries: 12,
                ..d()
            }),
            "ccws_vta_entries"
        );
        assert_eq!(
            bad(Config {
                ccws_vta_entries: 4,
                ..d()
            }),
            "ccws_vta_entries"
        );
        assert_eq!(
            bad(Config {
                dram_cycles_per_line: f64::NAN,
                ..d()
            }),
            "dram_cycles_per_line"
        );
        // A fully associative L1 of the default size is fine.
        Config {
            l1_sets: 1,
            l1_ways: 256,
            ..d()
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn toml_errors_name_the_key_with_line_and_column() {
        let e = Config::from_toml("sms = 4\nl1_mshrs = \"x\"\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.at), ("l1_mshrs", Some((2, 12))), "{e}");
        assert!(
            e.to_string()
                .starts_with("line 2, column 12: config key `l1_mshrs`: "),
            "{e}"
        );
        assert!(e.reason.contains("1..=4096"), "{e}");
        let e = Config::from_toml("sms = 4\n  dram_latency = 4294967295\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2, column 18: config key `dram_latency`: 4294967295 is out of range 1..=10000"
        );
        let e = Config::from_toml("\nl1_msrs = 3").unwrap_err();
        assert_eq!((e.key.as_str(), e.at), ("l1_msrs", Some((2, 1))), "{e}");
        let e = Config::from_toml("sms = 4\nl1_mshrs = \n").unwrap_err();
        assert_eq!((e.key.as_str(), e.at.map(|a| a.0)), ("l1_mshrs", Some(2)), "{e}");
        let e = Config::from_toml("scheduler = 3").unwrap_err();
        assert_eq!(e.key, "scheduler");
        assert!(e.reason.contains("one of lrr, gto"), "{e}");
    }

    #[test]
    fn the_reference_lists_every_key() {
        let md = reference_markdown();
        for s in settings() {
            assert!(md.contains(&format!("| `{}` |", s.key)), "{}", s.key);
        }
        assert!(
            md.contains("| `dram_latency` | cycles | 1..=10000 | `100` |"),
            "{md}"
        );
    }
}
