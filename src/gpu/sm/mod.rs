//! One streaming multiprocessor: warp contexts, fetch into I-buffers, the scoreboard, the
//! warp schedulers, SP / SFU pipelines, the LD/ST unit with its coalescer, and the L1.
//!
//! [`Sm::cycle`] steps the stages in reverse pipeline order (fills, writebacks, LD/ST and
//! the other units, the operand collector, issue, decode and fetch), as GPGPU-Sim's
//! `shader_core_ctx::cycle` does, so each stage sees what the one before it produced in an
//! earlier cycle.

pub mod coalescer;
pub mod collector;
pub mod l1;
mod ldst;
pub mod pipeline;
mod quiet;
pub mod ro_cache;
mod ro_ldst;
pub mod warp;

use crate::config::{Config, DpUnit, IssueOrder};
use crate::gpu::mem::icnt::Network;
use crate::gpu::mem::MemReply;
use crate::mascar::blocks::{IssueIn, IssueView, MascarBlocks};
use crate::mascar::saturation::Saturation;
use crate::mascar::{SaturationIn, SchedIn, WarpSignals};
use crate::sched::ccws::{Ccws, CcwsParams};
use crate::stats::{CacheStats, SmStats};
use crate::workload::program::{OpKind, Pipe, Reg, NO_REG};
use crate::workload::Kernel;
use collector::{OcInst, Port};
use l1::L1;
use ldst::LsuOp;
use ldst::Parked;
use warp::Warp;

/// A timed event inside the SM.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A pipeline result (ALU, SFU, shared load) is written back.
    Writeback { warp: u8, reg: Reg },
    /// One line of an in-flight load was served by an L1 hit.
    LoadLine { load: u16 },
}

/// Events keyed by cycle, in a ring of slots longer than the longest latency.
#[derive(Clone, Debug)]
struct EventWheel {
    slots: Vec<Vec<Event>>,
    pending: usize,
}

impl EventWheel {
    fn new(max_latency: u32) -> Self {
        let n = (max_latency as usize + 1).next_power_of_two();
        EventWheel {
            slots: (0..n).map(|_| Vec::with_capacity(8)).collect(),
            pending: 0,
        }
    }
    fn schedule(&mut self, at: u64, e: Event) {
        let n = self.slots.len();
        self.slots[at as usize & (n - 1)].push(e);
        self.pending += 1;
    }
    /// Whether an event is due in cycle `now`.
    fn due_at(&self, now: u64) -> bool {
        self.pending != 0 && !self.slots[now as usize & (self.slots.len() - 1)].is_empty()
    }
    /// The cycle of the next event from `now` on (every event lies within one turn).
    fn next_due(&self, now: u64) -> Option<u64> {
        if self.pending == 0 {
            return None;
        }
        let n = self.slots.len() as u64;
        (now..now + n).find(|&t| !self.slots[(t & (n - 1)) as usize].is_empty())
    }
    fn take(&mut self, now: u64, out: &mut Vec<Event>) {
        let n = self.slots.len();
        let slot = &mut self.slots[now as usize & (n - 1)];
        self.pending -= slot.len();
        out.append(slot);
    }
}

/// A load instruction whose line requests are not all served yet.
#[derive(Clone, Copy, Debug, Default)]
struct InflightLoad {
    warp: u8,
    dst: Reg,
    remaining: u16,
    /// A global atomic: its last reply also ends the warp's atomic wait.
    atomic: bool,
}

/// Per-CTA bookkeeping on the SM.
#[derive(Clone, Copy, Debug, Default)]
struct CtaSlot {
    active: bool,
    live_warps: u32,
    at_barrier: u32,
    /// Warp slots of this CTA.
    warps: u64,
    regs: u32,
    threads: u32,
    shared: u32,
}

/// Why a scheduler did not issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    Idle,
    Scoreboard,
    Pipeline,
}

/// What an SM keeps from one kernel to the next. GPGPU-Sim sets these in the core's
/// constructor only, not in `reinit` between kernels (3.2.2 and 4.x `shader_core_ctx`): the
/// fetch pointer (`m_last_warp_fetched`), the scheduler that issues first (4.x `Issue_Prio`)
/// and the operand collector's round-robin pointers (`opndcoll_rfu_t`).
pub struct Carried {
    issue_first: u8,
    fetch_ptr: u32,
    collector: collector::Collector,
}

pub struct Sm {
    pub id: usize,
    cfg: Config,
    pub warps: Vec<Warp>,
    /// Bit w: warp slot w holds an unfinished warp.
    active: u64,
    /// Bit w: warp slot w has an empty I-buffer and more to fetch.
    need_fetch: u64,
    /// The warp whose instructions were fetched last cycle and are decoded into its I-buffer
    /// this cycle (GPGPU-Sim's fetch buffer), if any.
    decoding: Option<u8>,
    /// Bit w: warp w has issued its last instruction; it may still wait for store
    /// acknowledgements, load data or requests that have not left yet.
    issued_all: u64,
    /// Bit w: warp w has an instruction at its I-buffer head and is not at a barrier.
    issuable: u64,
    /// Bit w: warp w's head instruction is clear of the scoreboard.
    sb_ready: u64,
    /// Bit w: warp w's head instruction goes to the LD/ST unit.
    mem_head: u64,
    /// Bit w: warp w's head instruction is a global memory instruction (the WST op type).
    gmem_head: u64,
    /// Bit w: warp w's head instruction is a global load.
    load_head: u64,
    /// Bit w: warp w's head instruction depends on a global load it issued.
    dep_load: u64,
    /// Bit w: warp w waits at a barrier.
    barrier: u64,
    /// Bit w: warp w's head instruction uses an SP lane.
    alu_head: u64,
    /// Bit w: warp w's head instruction uses an SFU.
    sfu_head: u64,
    /// The scheduler, WRC, WST and re-execution queue (behavioural, RTL or both).
    pub blocks: Box<dyn MascarBlocks + Send>,
    /// MAS is on (its statistics and log are kept).
    mas: bool,
    /// This cycle's issue-stage outputs and saturation flag (for waveforms).
    last_view: IssueView,
    last_saturated: bool,
    saturation: Saturation,
    /// Last cycle's (mode, owner), to count changes.
    mas_last: (bool, Option<u8>),
    /// CAR is on: the data of the queue's entries, indexed by entry.
    car: Option<Vec<Parked>>,
    /// Access entries: per warp, how many entries it holds (all from one instruction).
    parked_lines: [u8; 64],
    /// Warps whose store instruction has left the LD/ST unit with lines still parked.
    store_parked: u64,
    /// Warps launched / finished since the blocks were last clocked.
    launched: u64,
    exited: u64,
    /// CCWS's lost-locality detector and throttle, for the `ccws` scheduler.
    ccws: Option<Ccws>,
    /// CTAs launched on this SM so far (OWL's CTA age).
    cta_seq: u64,
    /// Per scheduler: the warp slots it owns.
    sched_mask: Vec<u64>,
    /// The scheduler that picks first this cycle (`SchedIn::first`); with `issue_order =
    /// rotate` it moves on after every cycle in which the SM holds a warp (GPGPU-Sim 4.x
    /// `shader_core_ctx::issue` advances `Issue_Prio` in each cycle its core is active).
    issue_first: u8,
    /// The first warp the next fetch considers (round robin).
    fetch_ptr: u32,
    ctas: Vec<CtaSlot>,
    next_dyn_id: u64,
    used_threads: u32,
    used_regs: u32,
    used_shared: u32,
    sfu_free_at: Vec<u64>,
    /// Per SP pipeline, the cycle from which it accepts a warp instruction: one cycle after
    /// an issue, `initiation` cycles after a double-precision one.
    sp_free_at: Vec<u64>,
    wheel: EventWheel,
    due: Vec<Event>,
    loads: Vec<InflightLoad>,
    free_loads: Vec<u16>,
    lsu: LsuOp,
    /// The access waiting in the L1's one-entry latency queue (`l1_access_queue`).
    l1_slot: Option<ldst::SlotLine>,
    /// The operand collector between issue and the SP, SFU and LD/ST units (`collector.rs`).
    collector: collector::Collector,
    /// Memory instructions issued and coalesced, in the collector on their way to the LD/ST
    /// unit: one slot for each a full collector can hold, and which are free.
    mem_slots: Vec<LsuOp>,
    mem_slots_free: u64,
    /// The EX_WB result buses: per cycle (ring slot), the results the SP and SFU pipelines
    /// hand to writeback then, tagged with that cycle.
    result_bus: Vec<(u64, u8)>,
    /// A global atomic's transaction that left the LD/ST unit, waiting for the SM's network
    /// port (a register of the unit, not of the instruction: it outlives the instruction).
    atomic_port: Option<crate::gpu::mem::MemRequest>,
    /// Bit w: warp w waits for its global atomic's replies and issues nothing until they are
    /// all back (GPGPU-Sim 3.2.2 shader.cc, `shd_warp_t::waiting` while `m_n_atomic > 0`).
    atomic_wait: u64,
    pub l1: L1,
    /// The texture and constant caches (`ld.tex`, `ld.const`) and which of them the LD/ST
    /// unit's head instruction reads through, if it is one of theirs.
    pub tex: ro_cache::TexCache,
    pub constant: ro_cache::ConstCache,
    /// Bit w: warp w's head instruction is a texture or constant load.
    ro_mem_head: u64,
    next_request_id: u32,
    pub stats: SmStats,
    /// When set, every issue is appended here (tests and debugging; off in normal runs).
    pub issue_log: Option<Vec<IssueRecord>>,
    /// When set, MAS's mode, owner and stall bits are appended every cycle.
    pub mas_log: Option<Vec<MasRecord>>,
    /// When set, every request sent below L1 is appended as (cycle, warp, from the CAR queue).
    pub request_log: Option<Vec<(u64, u8, bool)>>,
    /// When set, this cycle's events for `--trace-events` (the GPU drains it every cycle).
    pub events: Option<Vec<crate::gpu::events::SmEvent>>,
    /// Scratch for a branch's condition over all lanes.
    branch_stack: Box<crate::workload::program::LaneStack>,
    /// The SM did not act in its last cycle (`quiet.rs`).
    quiet_last: bool,
    /// By its own state after its last cycle, the SM will not act in the next (`quiet.rs`).
    quiet_next: bool,
    /// The last LD/ST stage changed nothing but counters (`ldst.rs`).
    ldst_still: bool,
    /// Cycles in which the SM does not act may be only counted (set by the GPU per run).
    pub may_skip: bool,
    /// Cycles only counted so far (not a statistic: none with the skip off).
    pub quiet_cycles: u64,
}

/// One cycle of MAS state, as recorded in [`Sm::mas_log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MasRecord {
    pub cycle: u64,
    pub mp: bool,
    pub owner: Option<u8>,
    pub stall: u64,
    pub saturated: bool,
}

/// One issued instruction, as recorded in [`Sm::issue_log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IssueRecord {
    pub cycle: u64,
    pub scheduler: u8,
    pub warp: u8,
    pub op: OpKind,
    /// Active lanes, and the global thread id of lane 0.
    pub mask: u32,
    pub first_thread: u32,
}

impl Sm {
    pub fn new(id: usize, cfg: &Config, blocks: Box<dyn MascarBlocks + Send>) -> Self {
        let warps = cfg.warps_per_sm as usize;
        let nsched = cfg.schedulers_per_sm as usize;
        // Events are scheduled up to the longest latency plus the dispatch register and
        // writeback stages ahead of a unit taking an instruction (pipeline.rs).
        let max_latency = [
            cfg.alu_latency,
            cfg.imul_latency,
            cfg.idiv_latency,
            cfg.sfu_latency,
            cfg.dp_add_latency,
            cfg.dp_minmax_latency,
            cfg.dp_mul_latency,
            cfg.dp_fma_latency,
            cfg.dp_div_latency,
            cfg.shared_latency,
            cfg.l1_hit_latency,
        ]
        .into_iter()
        .max()
        .unwrap_or(1)
            + (pipeline::UNIT_TO_WRITEBACK + 1) as u32;
        let collector_shape = collector::Shape {
            banks: cfg.reg_banks,
            units: [
                cfg.collector_units_sp,
                cfg.collector_units_sfu,
                cfg.collector_units_mem,
                cfg.collector_units_gen,
            ],
        };
        // ID_OC_MEM, the MEM and generic units and OC_EX_MEM hold at most this many.
        let mem_slots = collector::ID_OC_WIDTHS[2]
            + collector::OC_EX_WIDTHS[2]
            + (cfg.collector_units_mem + cfg.collector_units_gen) as usize;
        Sm {
            id,
            cfg: cfg.clone(),
            warps: vec![Warp::default(); warps],
            active: 0,
            need_fetch: 0,
            decoding: None,
            issuable: 0,
            sb_ready: 0,
            mem_head: 0,
            gmem_head: 0,
            load_head: 0,
            dep_load: 0,
            barrier: 0,
            alu_head: 0,
            sfu_head: 0,
            blocks,
            mas: cfg.scheduler.uses_mas(),
            saturation: Saturation::new(cfg.l1_mshrs, cfg.l1_miss_queue, cfg.mas_sat_margin),
            mas_last: (false, None),
            last_view: IssueView::default(),
            last_saturated: false,
            car: cfg
                .scheduler
                .uses_car()
                .then(|| vec![Parked::default(); cfg.car_queue_depth as usize]),
            parked_lines: [0; 64],
            store_parked: 0,
            issued_all: 0,
            launched: 0,
            exited: 0,
            ccws: (cfg.scheduler == crate::sched::SchedulerKind::Ccws).then(|| {
                Ccws::new(&CcwsParams {
                    warps: cfg.warps_per_sm,
                    vta_entries: cfg.ccws_vta_entries,
                    vta_ways: cfg.ccws_vta_ways,
                    base_score: cfg.ccws_base_score,
                    k_throttle: cfg.ccws_k_throttle,
                })
            }),
            cta_seq: 0,
            issue_first: 0,
            sched_mask: (0..nsched)
                .map(|s| {
                    (0..warps)
                        .filter(|w| w % nsched == s)
                        .fold(0u64, |m, w| m | 1 << w)
                })
                .collect(),
            // GPGPU-Sim starts `m_last_warp_fetched` at 0, so the first fetch scans from
            // warp 1 (`shader_core_ctx` constructor, `fetch`).
            fetch_ptr: 1 % warps as u32,
            ctas: vec![CtaSlot::default(); cfg.ctas_per_sm as usize],
            next_dyn_id: 0,
            used_threads: 0,
            used_regs: 0,
            used_shared: 0,
            sfu_free_at: vec![0; cfg.sfu_units as usize],
            sp_free_at: vec![0; cfg.sp_units as usize],
            wheel: EventWheel::new(max_latency),
            due: Vec::with_capacity(64),
            loads: vec![InflightLoad::default(); cfg.max_inflight_loads as usize],
            free_loads: (0..cfg.max_inflight_loads as u16).rev().collect(),
            lsu: LsuOp::default(),
            l1_slot: None,
            collector: collector::Collector::new(collector_shape),
            mem_slots: vec![LsuOp::default(); mem_slots],
            mem_slots_free: (1u64 << mem_slots) - 1,
            result_bus: vec![(u64::MAX, 0); (max_latency as usize + 2).next_power_of_two()],
            atomic_port: None,
            atomic_wait: 0,
            l1: L1::new(cfg),
            tex: ro_cache::TexCache::new(cfg),
            constant: ro_cache::ConstCache::new(cfg),
            ro_mem_head: 0,
            next_request_id: 0,
            stats: SmStats::default(),
            issue_log: None,
            mas_log: None,
            request_log: None,
            events: None,
            branch_stack: Box::new(
                [[0; crate::workload::program::WARP_LANES]; crate::workload::program::MAX_EXPR_STACK],
            ),
            quiet_last: false,
            quiet_next: false,
            ldst_still: false,
            may_skip: false,
            quiet_cycles: 0,
        }
    }

    // ---------------------------------------------------------------- CTA dispatch

    /// The CTA slot the next CTA of `k` would take and its first warp slot: the lowest free
    /// CTA slot `i`, whose warps are `i × warps per CTA` onwards (GPGPU-Sim 3.2.2 gpu-sim.cc
    /// `shader_core_ctx::issue_block2core`: `free_cta_hw_id` is the first free CTA context
    /// and `start_thread = free_cta_hw_id * padded_cta_size`). A CTA's warps are therefore
    /// contiguous and alternate between the schedulers, as in GPGPU-Sim.
    fn cta_home(&self, k: &Kernel) -> Option<(usize, u32)> {
        let slot = self.ctas.iter().position(|c| !c.active)?;
        let first = slot as u32 * k.warps_per_cta();
        let range = mask(k.warps_per_cta()) << first;
        (first + k.warps_per_cta() <= self.cfg.warps_per_sm && self.active & range == 0)
            .then_some((slot, first))
    }

    /// Whether one more CTA of `k` fits in its warp slots, threads, CTA slots, registers and
    /// shared memory.
    pub fn can_accept(&self, k: &Kernel) -> bool {
        self.cta_home(k).is_some()
            && self.used_threads + k.block <= self.cfg.threads_per_sm
            && self.used_regs + cta_regs(k) <= self.cfg.regs_per_sm
            && self.used_shared + k.shared_bytes <= self.cfg.shared_per_sm
    }

    /// Launches CTA `cta` of `k` into free slots. The caller checked [`can_accept`](Self::can_accept).
    pub fn launch_cta(&mut self, k: &Kernel, cta: u32) {
        let (slot, first) = self.cta_home(k).expect("caller checked can_accept");
        let mut warps = 0u64;
        let mut programs = k.cta_programs(cta).map(Vec::into_iter);
        for w in 0..k.warps_per_cta() {
            let free = (first + w) as usize;
            let tid_base = w * 32;
            let lanes = (k.block - tid_base).min(32);
            self.warps[free].launch(self.next_dyn_id, slot as u8, cta, tid_base, lanes);
            self.warps[free].reset_values(k.program.value_slots);
            if let Some(p) = programs.as_mut() {
                // A warp the trace does not list runs nothing.
                self.warps[free].program = Some(p.next().unwrap_or_default());
            }
            self.next_dyn_id += 1;
            self.active |= 1 << free;
            self.issued_all &= !(1 << free);
            self.need_fetch |= 1 << free;
            warps |= 1 << free;
            if let Some(r) = self.blocks.reference_scheduler() {
                r.owl_launched(free as u8, cta, self.cta_seq);
            }
            if let Some(c) = &mut self.ccws {
                c.warp_launched(free as u8);
            }
        }
        self.ctas[slot] = CtaSlot {
            active: true,
            live_warps: k.warps_per_cta(),
            at_barrier: 0,
            warps,
            regs: cta_regs(k),
            threads: k.block,
            shared: k.shared_bytes,
        };
        self.used_threads += k.block;
        self.used_regs += cta_regs(k);
        self.used_shared += k.shared_bytes;
        self.cta_seq += 1;
        if let Some(ev) = &mut self.events {
            ev.push(crate::gpu::events::SmEvent::CtaLaunch {
                cta,
                slot: slot as u8,
            });
        }
        let resident = self.ctas.iter().filter(|c| c.active).count() as u64;
        self.stats.peak_resident_ctas = self.stats.peak_resident_ctas.max(resident);
        self.launched |= warps;
    }

    /// No CTA resident and nothing in flight.
    pub fn is_idle(&self) -> bool {
        self.active == 0
            && self.l1.is_quiet()
            && self.ro_quiet()
            && !self.lsu.busy
            && self.l1_slot.is_none()
            && self.collector.is_empty()
            && self.atomic_port.is_none()
            && self.wheel.pending == 0
            && self.blocks.queue_state().2 == 0
    }

    /// Idle, with the Mascar blocks at rest (EP, no owner): with no CTA left to launch, a
    /// cycle of this SM changes nothing but its idle counts.
    pub fn is_at_rest(&self) -> bool {
        self.is_idle() && self.blocks.registers() == (false, None)
    }

    /// What [`Sm::cycle`] does to an SM at rest: every scheduler counts an idle cycle, and
    /// MAS's statistics see the registers at rest (EP, no owner). `mas_statistics` counts a
    /// change one cycle after the clock edge that made it, so an SM that came to rest at
    /// that edge (its last warp was the owner and finished) still has its return to EP to
    /// count here (issue 29 §3).
    pub fn rest_cycle(&mut self) {
        self.skip_at_rest(1);
        if self.mas && self.mas_last != (false, None) {
            self.stats.mas.owner_returned_to_ep += self.mas_last.1.is_some() as u64;
            if let Some(ev) = &mut self.events {
                ev.push(crate::gpu::events::SmEvent::Owner {
                    warp: None,
                    mp: false,
                });
            }
            self.mas_last = (false, None);
        }
    }

    // ---------------------------------------------------------------- the cycle

    /// One SM cycle. `replies` is the reply network (this SM is destination `self.id`).
    /// What a waveform shows of this SM after its last cycle.
    pub fn wave_sample(&self) -> SmSample {
        let v = &self.last_view;
        let (reexec_warps, _, queue) = self.blocks.queue_state();
        let l1 = &self.l1.stats;
        SmSample {
            mp: v.sched.mp,
            owner: v.sched.owner,
            saturated: self.last_saturated,
            mshrs: self.l1.mshrs_used() as u32,
            miss_queue: self.l1.miss_queue_used() as u32,
            reexec_queue: queue as u32,
            reexec_warps,
            issue: v.sched.issue,
            wst_mem: v.wst.mem,
            wst_stall: v.wst.stall,
            active: self.active,
            l1_hits: l1.hits + l1.hit_reserved + l1.write_hits + l1.write_hit_reserved,
            l1_misses: l1.misses + l1.write_misses,
            l1_reservation_fails: l1.reservation_fails(),
            hits_under_miss: self.stats.car.hits_under_miss,
            reexec_retries: self.stats.car.retries,
            reexec_refused: self.stats.car.failed_retries,
        }
    }

    pub fn cycle(&mut self, now: u64, k: &Kernel, replies: &mut Network<MemReply>) {
        let arrived = replies.pop(self.id, now);
        self.step(now, k, arrived);
    }

    /// One SM cycle given the reply the network delivers to it this cycle (taken from the
    /// network beforehand, so that SMs can step in parallel: nothing else they touch is
    /// shared).
    pub fn cycle_with(&mut self, now: u64, k: &Kernel, arrived: Option<MemReply>) {
        self.receive(now, arrived);
        self.ro_cycle(now);
        self.writebacks(now);
        self.ldst(now);
        self.units(now);
        self.collector.step();
        self.issue(now, k);
        self.fetch(k);
        self.l1.sample();
    }

    /// Takes one reply from the network: a line fill or a store acknowledgement.
    fn receive(&mut self, now: u64, arrived: Option<MemReply>) {
        let Some(r) = arrived else {
            return;
        };
        self.stats.replies_received += 1;
        // An atomic's reply bypasses the L1D (GPGPU-Sim 3.2.2 shader.cc ldst_unit::cycle,
        // `m_next_global`) and completes its transaction.
        if let Some(load) = r.atomic {
            self.load_line_done(load);
            return;
        }
        if !r.write && self.ro_fill(&r, now) {
            return;
        }
        if r.write {
            let w = r.warp as usize;
            self.warps[w].stores_in_flight -= 1;
            self.try_finish(w);
            return;
        }
        let mut done = [0u16; 64];
        let mut n = 0;
        let latency = self.l1.fill(r.line, now, |load| {
            done[n] = load;
            n += 1;
        });
        self.stats.l1_miss_latency.record(latency);
        if let Some(ev) = &mut self.events {
            ev.push(crate::gpu::events::SmEvent::MshrFree {
                line: r.line,
                latency,
            });
        }
        for &load in &done[..n] {
            self.load_line_done(load);
        }
    }

    fn writebacks(&mut self, now: u64) {
        if self.wheel.pending == 0 {
            return;
        }
        let mut due = std::mem::take(&mut self.due);
        self.wheel.take(now, &mut due);
        for e in due.drain(..) {
            match e {
                Event::Writeback { warp, reg } => {
                    self.collector.write(reg, warp);
                    self.writeback_done(warp as usize, reg)
                }
                Event::LoadLine { load } => self.load_line_done(load),
            }
        }
        self.due = due;
    }

    /// An instruction of warp `w` leaves its pipeline, releasing `reg` (if any).
    fn writeback_done(&mut self, w: usize, reg: Reg) {
        let warp = &mut self.warps[w];
        warp.in_pipeline -= 1;
        if reg != NO_REG {
            warp.pending.remove(reg);
        }
        self.refresh(w);
        self.try_finish(w);
    }

    /// One line of load `load` has been served; the last one writes the register back.
    fn load_line_done(&mut self, load: u16) {
        let l = &mut self.loads[load as usize];
        l.remaining -= 1;
        if l.remaining == 0 {
            let (warp, dst) = (l.warp as usize, l.dst);
            if l.atomic {
                self.atomic_wait &= !(1u64 << warp);
            }
            self.free_loads.push(load);
            // The loaded value takes its register's bank (`ldst_unit::writeback`). [design]
            // It does not wait for a bank taken by another writeback this cycle.
            self.collector.write(dst, warp as u8);
            let w = &mut self.warps[warp];
            w.in_pipeline -= 1;
            if dst != NO_REG {
                w.pending.remove(dst);
                w.pending_global.remove(dst);
            }
            self.refresh(warp);
            self.try_finish(warp);
        }
    }

    /// The issue stage: the blocks pick at most one warp per scheduler (WRC → WST →
    /// scheduler), then the picked instructions go to their pipelines.
    fn issue(&mut self, now: u64, k: &Kernel) {
        let held = self.held_back();
        let (queue_warps, _, _) = self.blocks.queue_state();
        // [design] The warp whose requests wait at the LD/ST head. Instructions still in the
        // operand collector (pipeline.rs) are not counted: they wait behind the head in
        // order, so an owner whose instruction waits there behind a refused non-owner must
        // be able to hand over (the WRC's idle-path rule), or MP would deadlock.
        let lsu_warp = if self.lsu.busy { 1u64 << self.lsu.warp } else { 0 };
        // Issue 29 §1, after the flowchart (slide 11): the owner keeps the memory path while
        // it has something to send, so for MAS a warp that has issued its last instruction
        // and has no memory instruction left in the collector, at the LD/ST head or in the
        // re-execution queue is no longer active, although it stays resident until its
        // stores are acknowledged (`Warp::is_done`). An owner then hands over at its last
        // request, not at its last acknowledgement.
        let unsent = queue_warps | lsu_warp | self.collector.mem_warps();
        let mas_active = self.active & !(self.issued_all & !unsent);
        let saturated = self.mas && self.saturation_flag();
        // Issue 29: in MP with CAR a non-owner's head access is served hit-only; refused and
        // unable to park (`lsu.waiting`, ldst.rs) it holds the head until its warp owns the
        // path, so the WRC may hand the path over at once instead of when the L1 drains.
        let head_blocked = self.car.is_some() && self.lsu.busy && self.lsu.waiting && {
            let (mp, owner) = self.blocks.registers();
            mp && owner != Some(self.lsu.warp)
        };
        let input = IssueIn {
            warps: WarpSignals {
                active: mas_active,
                has_inst: self.issuable,
                // Texture and constant loads are memory instructions for MAS (ro_ldst.rs).
                is_mem: self.gmem_head | self.ro_mem_head,
                sb_ready: self.sb_ready,
                dep_load: self.dep_load,
                at_barrier: self.barrier,
                mem_in_flight: queue_warps | lsu_warp,
                l1_quiet: self.l1.is_quiet(),
                head_blocked,
            },
            sched: SchedIn {
                ready: self.issuable & self.sb_ready & !held,
                alu: self.alu_head,
                sfu: self.sfu_head,
                ldst: self.mem_head,
                // Every instruction for the LD/ST unit takes its one issue slot and a collector
                // entry (shared ones included: they wait there as global ones do).
                ldst_take: self.mem_head,
                gload: self.load_head | self.ro_mem_head,
                // Room in the ID_OC registers (`scheduler_unit::cycle` checks `has_free`).
                sp_free: self.collector.free(Port::Sp) as u8,
                sfu_free: self.collector.free(Port::Sfu) as u8,
                lsu_free: self.collector.free(Port::Mem) > 0,
                load_slot_free: !self.free_loads.is_empty(),
                saturated,
                launched: self.launched,
                exited: self.exited,
                first: self.issue_first,
                ..SchedIn::default()
            },
        };
        let view = self.blocks.issue_eval(&input);
        self.blocks.issue_clock(now, &input);
        self.rotate_issue_first(1);
        self.last_view = view;
        self.last_saturated = saturated;
        self.launched = 0;
        self.exited = 0;
        if self.mas {
            self.mas_statistics(now, &view, saturated, mas_active);
        }
        // In the order the schedulers ran (`first` first), so that an instruction's age in
        // the collector is its issue order (GPGPU-Sim's uid).
        let n = self.sched_mask.len();
        for turn in 0..n {
            let s = (input.sched.first as usize + turn) % n;
            let Some(slot) = view.sched.issue[s] else {
                self.count_stall(self.stall_of(s), 1);
                continue;
            };
            self.execute(slot as usize, now, k);
            if let Some(ev) = &mut self.events {
                let w = &self.warps[slot as usize];
                let pc = w
                    .program
                    .as_deref()
                    .unwrap_or(&k.program)
                    .pcs
                    .get(w.last_pc as usize)
                    .copied()
                    .unwrap_or(w.last_pc as u64);
                ev.push(crate::gpu::events::SmEvent::Issue {
                    sched: s as u8,
                    warp: slot,
                    pc,
                    op: w.last_issued,
                });
            }
            if let Some(log) = &mut self.issue_log {
                let w = &self.warps[slot as usize];
                log.push(IssueRecord {
                    cycle: now,
                    scheduler: s as u8,
                    warp: slot,
                    op: w.last_issued,
                    mask: w.last_mask,
                    first_thread: w.cta.wrapping_mul(k.block).wrapping_add(w.tid_base),
                });
            }
            self.stats.sched.issue_cycles += 1;
        }
    }

    /// The state the next kernel starts from (`Carried`); the SM is idle, so its collector
    /// holds no instruction.
    pub fn carried(&self) -> Carried {
        debug_assert!(self.collector.is_empty());
        Carried {
            issue_first: self.issue_first,
            fetch_ptr: self.fetch_ptr,
            collector: self.collector.clone(),
        }
    }

    /// The first warp slot the next fetch considers.
    pub fn fetch_pointer(&self) -> u32 {
        self.fetch_ptr
    }

    /// The scheduler that picks first in the next cycle.
    pub fn first_scheduler(&self) -> u8 {
        self.issue_first
    }

    /// Starts a fresh SM from what the last kernel left (`carried`).
    pub fn resume(&mut self, c: Carried) {
        self.issue_first = c.issue_first;
        self.fetch_ptr = c.fetch_ptr;
        self.collector = c.collector;
    }

    /// Moves the first scheduler on by `cycles` cycles of issue (`issue_order = rotate`;
    /// an SM without a warp is not active in GPGPU-Sim and does not move it).
    pub(super) fn rotate_issue_first(&mut self, cycles: u64) {
        if self.cfg.issue_order == IssueOrder::Rotate && self.active != 0 {
            let n = self.sched_mask.len() as u64;
            self.issue_first = ((self.issue_first as u64 + cycles % n) % n) as u8;
        }
    }

    /// The saturation detector's output this cycle (MSHRs and miss queue nearly full).
    fn saturation_flag(&self) -> bool {
        let sat_in = SaturationIn {
            mshrs_used: self.l1.mshrs_used() as u32,
            miss_queue_used: self.l1.miss_queue_used() as u32,
        };
        self.saturation.step(&sat_in).saturated
    }

    /// Warps the LD/ST side holds back: CAR keeps one entry per warp (each warp's memory
    /// order) and takes no more when full; CCWS throttles loads.
    fn held_back(&mut self) -> u64 {
        if let Some(c) = &mut self.ccws {
            c.cycle(self.active);
        }
        if self.car.is_some() && self.blocks.queue_state().1 {
            self.stats.car.queue_full_cycles += 1;
        }
        self.held_mask()
    }

    fn mas_statistics(
        &mut self,
        now: u64,
        view: &crate::mascar::blocks::IssueView,
        saturated: bool,
        mas_active: u64,
    ) {
        let (mp, owner) = (view.sched.mp, view.sched.owner);
        let st = &mut self.stats.mas;
        st.mp_cycles += mp as u64;
        if owner.is_some() && owner != self.mas_last.1 {
            st.owner_changes += 1;
            match self.mas_last.1.map(u64::from) {
                None => st.owner_first += 1,
                Some(p) if mas_active >> p & 1 == 0 => st.owner_after_finish += 1,
                Some(p) if self.dep_load >> p & 1 == 1 => st.owner_after_dependent_load += 1,
                Some(p) if self.barrier >> p & 1 == 1 => st.owner_after_barrier += 1,
                Some(_) => st.owner_other += 1,
            }
        }
        st.mp_entries += (mp && !self.mas_last.0) as u64;
        st.owner_returned_to_ep += (!mp && self.mas_last.1.is_some()) as u64;
        st.stalled_warp_cycles += (view.wst.stall & self.issuable & self.sb_ready).count_ones() as u64;
        if (mp, owner) != self.mas_last {
            if let Some(ev) = &mut self.events {
                ev.push(crate::gpu::events::SmEvent::Owner { warp: owner, mp });
            }
        }
        self.mas_last = (mp, owner);
        if let Some(log) = &mut self.mas_log {
            log.push(MasRecord {
                cycle: now,
                mp,
                owner,
                stall: view.wst.stall,
                saturated,
            });
        }
    }

    /// Why scheduler `s` issues nothing this cycle: a warp of its own is ready (the pipeline
    /// it needs is busy or the LD/ST side holds it back), has an instruction that waits on
    /// the scoreboard, or none has an instruction.
    fn stall_of(&self, s: usize) -> Stall {
        let mine = self.issuable & self.sched_mask[s];
        if mine & self.sb_ready != 0 {
            Stall::Pipeline
        } else if mine != 0 {
            Stall::Scoreboard
        } else {
            Stall::Idle
        }
    }

    fn count_stall(&mut self, stall: Stall, cycles: u64) {
        match stall {
            Stall::Idle => self.stats.sched.idle_cycles += cycles,
            Stall::Scoreboard => self.stats.sched.scoreboard_stall_cycles += cycles,
            Stall::Pipeline => self.stats.sched.pipeline_stall_cycles += cycles,
        }
    }

    /// Issues the head instruction of warp `w` into its pipeline.
    fn execute(&mut self, w: usize, now: u64, k: &Kernel) {
        let entry = self.warps[w].pop_head();
        let inst = entry.inst;
        self.stats.warp_instructions += 1;
        self.stats.thread_instructions += entry.mask.count_ones() as u64;
        if let (Some(c), false) = (&mut self.ccws, inst.op == OpKind::Barrier) {
            c.issued(w as u8);
        }
        let port = match self.pipe_of(inst.op) {
            Pipe::Sp => Port::Sp,
            Pipe::Sfu => Port::Sfu,
            Pipe::Mem => Port::Mem,
        };
        match inst.op {
            OpKind::Alu(_) | OpKind::Sfu | OpKind::Branch => {
                // Into the collector; its unit schedules the writeback (`units`). The
                // scoreboard reserves the destination now (`scheduler_unit::cycle`).
                let warp = &mut self.warps[w];
                warp.in_pipeline += 1;
                if inst.dst != NO_REG {
                    warp.pending.insert(inst.dst);
                }
                if inst.op == OpKind::Branch {
                    // GPGPU-Sim 3.2.2 sends BRANCH_OP down the SP pipe; the SIMT stack is
                    // updated as it issues, so fetch can go on.
                    let own = warp.program.clone();
                    let program = own.as_deref().unwrap_or(&k.program);
                    warp.resolve_branch(program, &entry, k.block, k.grid, &mut self.branch_stack);
                }
                self.collector.issue(OcInst::of(w as u8, port, &inst, 0));
            }
            OpKind::LoadGlobal
            | OpKind::LoadShared
            | OpKind::StoreShared
            | OpKind::StoreGlobal
            | OpKind::AtomGlobal
            | OpKind::LoadTex
            | OpKind::LoadConst => {
                // Coalesced now (the collector reads the address registers two cycles after
                // issue, before any later instruction of the warp can write them back), into
                // a free slot; the LD/ST unit takes it out of the collector (`ldst`).
                let t = self.mem_slots_free.trailing_zeros() as usize;
                std::mem::swap(&mut self.lsu, &mut self.mem_slots[t]);
                self.lsu.busy = false;
                if matches!(inst.op, OpKind::LoadTex | OpKind::LoadConst) {
                    self.ro_dispatch(w, &entry, k, now);
                } else if matches!(inst.op, OpKind::LoadShared | OpKind::StoreShared) {
                    self.shared_dispatch(w, &entry, k);
                } else {
                    self.ldst_dispatch(w, &entry, k);
                }
                std::mem::swap(&mut self.lsu, &mut self.mem_slots[t]);
                if self.mem_slots[t].busy {
                    self.mem_slots_free &= !(1 << t);
                    self.collector.issue(OcInst::of(w as u8, port, &inst, t as u8));
                }
            }
            OpKind::Barrier => {
                // The warp arrives at issue (`shader_core_ctx::issue_warp` calls
                // `warp_reaches_barrier`), and the instruction goes on through an SP collector
                // unit and pipeline like any SP op without operands (BARRIER_OP, latency 1).
                self.warps[w].in_pipeline += 1;
                self.collector
                    .issue(OcInst::new(w as u8, port, inst.op, NO_REG, [NO_REG; 3], false, 0));
                let cta = self.warps[w].cta_slot as usize;
                self.warps[w].at_barrier = true;
                self.ctas[cta].at_barrier += 1;
                self.check_barrier(cta);
            }
        }
        // Values are written at issue, after the instruction read its address (kernel-format
        // programs only: trace warps have their own programs, without values).
        if self.warps[w].program.is_none() && !k.program.values.is_empty() {
            self.warps[w].exec_values(&k.program, &entry, k.block, k.grid, &k.buffers);
        }
        self.refresh(w);
        if self.warps[w].ibuf_empty() {
            if self.warps[w].fetch_done {
                self.issued_all |= 1 << w;
                self.try_finish(w);
            } else {
                self.need_fetch |= 1 << w;
            }
        }
    }

    /// The execute stage's SP and SFU side (`shader_core_ctx::execute`): each pipeline, in
    /// order, whose dispatch register is free takes the oldest instruction of its OC_EX
    /// register, if a result bus is free at the cycle its result reaches EX_WB (`test_res_bus`);
    /// the writeback follows that cycle (pipeline.rs).
    fn units(&mut self, now: u64) {
        for port in [Port::Sp, Port::Sfu] {
            if !self.collector.has_ready(port) {
                continue;
            }
            let units = match port {
                Port::Sp => &mut self.sp_free_at,
                _ => &mut self.sfu_free_at,
            };
            for free_at in units.iter_mut().filter(|t| **t <= now) {
                let Some(&i) = self.collector.ready(port) else {
                    break;
                };
                let (latency, initiation) = pipeline::unit_timing(&self.cfg, i.op);
                let at = now + latency;
                let mask = self.result_bus.len() - 1;
                let bus = &mut self.result_bus[at as usize & mask];
                if bus.0 != at {
                    *bus = (at, 0);
                }
                if bus.1 >= collector::RESULT_BUSES {
                    continue;
                }
                bus.1 += 1;
                self.collector.take(port);
                *free_at = now + initiation;
                self.wheel.schedule(
                    now + pipeline::UNIT_TO_WRITEBACK + latency,
                    Event::Writeback {
                        warp: i.warp,
                        reg: i.dst,
                    },
                );
            }
        }
    }

    /// The pipeline `op` runs on: its own (`OpKind::pipe`), except DP add to MAD on the SFU
    /// under `dp_unit = sfu` (GPGPU-Sim 4.x `scheduler_unit::cycle` with no DP unit).
    fn pipe_of(&self, op: OpKind) -> Pipe {
        match op {
            OpKind::Alu(k) if self.cfg.dp_unit == DpUnit::Sfu && k.dp_index().is_some() => Pipe::Sfu,
            _ => op.pipe(),
        }
    }

    /// Recomputes warp `w`'s bits in the issue masks after its I-buffer, scoreboard, barrier
    /// or residency changed.
    fn refresh(&mut self, w: usize) {
        let bit = 1u64 << w;
        let warp = &self.warps[w];
        let head = if warp.active && !warp.at_barrier {
            warp.head()
        } else {
            None
        };
        let at_barrier = warp.active && warp.at_barrier;
        // [design] A warp waiting for its atomic's replies (`atomic_wait`) looks to the
        // schedulers and MAS like one whose next instruction waits on its own global load:
        // not ready, dependent (an owner hands the memory path over). An atomic needs an
        // in-flight load slot as a load does (`load`).
        let atomic_wait = self.atomic_wait & bit != 0;
        let (issuable, ready, mem, gmem, load, dep) = match head {
            Some(e) => (
                true,
                !warp.blocked_by_scoreboard(e) && !atomic_wait,
                e.inst.op.is_memory(),
                e.inst.op.is_global(),
                matches!(e.inst.op, OpKind::LoadGlobal | OpKind::AtomGlobal),
                warp.depends_on_pending_load(e) || atomic_wait,
            ),
            None => (false, false, false, false, false, false),
        };
        let op = head.map(|e| e.inst.op);
        let pipe = op.map(|op| self.pipe_of(op));
        // A barrier is an SP instruction too (3.2.2 and 4.x `scheduler_unit::cycle` send
        // BARRIER_OP down the SP pipe): it needs room in ID_OC_SP.
        let alu =
            matches!(op, Some(OpKind::Alu(_) | OpKind::Branch | OpKind::Barrier)) && pipe == Some(Pipe::Sp);
        let sfu = pipe == Some(Pipe::Sfu);
        let set = |m: &mut u64, on: bool| if on { *m |= bit } else { *m &= !bit };
        set(&mut self.issuable, issuable);
        set(&mut self.sb_ready, ready);
        set(&mut self.mem_head, mem);
        set(&mut self.gmem_head, gmem);
        set(&mut self.load_head, load);
        set(&mut self.ro_mem_head, op.is_some_and(OpKind::is_read_only));
        set(&mut self.dep_load, dep);
        set(&mut self.barrier, at_barrier);
        set(&mut self.alu_head, alu);
        set(&mut self.sfu_head, sfu);
    }

    /// Releases a CTA's barrier once every live warp of it has arrived.
    fn check_barrier(&mut self, cta: usize) {
        let c = &mut self.ctas[cta];
        if c.at_barrier > 0 && c.at_barrier == c.live_warps {
            c.at_barrier = 0;
            let mut m = c.warps;
            while m != 0 {
                let w = m.trailing_zeros() as usize;
                m &= m - 1;
                self.warps[w].at_barrier = false;
                self.refresh(w);
            }
        }
    }

    /// Retires warp `w` if it has nothing left; frees its CTA when it was the last.
    fn try_finish(&mut self, w: usize) {
        let warp = &self.warps[w];
        if !warp.active || !warp.is_done() {
            return;
        }
        self.warps[w].active = false;
        self.active &= !(1 << w);
        self.issued_all &= !(1 << w);
        self.refresh(w);
        self.exited |= 1 << w;
        let cta = self.warps[w].cta_slot as usize;
        let c = &mut self.ctas[cta];
        c.live_warps -= 1;
        c.warps &= !(1 << w);
        if c.live_warps == 0 {
            c.active = false;
            self.used_threads -= c.threads;
            self.used_regs -= c.regs;
            self.used_shared -= c.shared;
            self.stats.ctas_completed += 1;
            if let Some(ev) = &mut self.events {
                ev.push(crate::gpu::events::SmEvent::CtaDone {
                    cta: self.warps[w].cta,
                    slot: cta as u8,
                });
            }
        } else {
            self.check_barrier(cta);
        }
    }

    /// The decode and fetch stages (GPGPU-Sim `shader_core_ctx::decode`, then `fetch`, after
    /// issue in each cycle): the warp fetched last cycle gets its instructions in its
    /// I-buffer, so it may issue from the next cycle on; then one warp whose I-buffer is
    /// empty, round robin, is fetched (with the perfect instruction cache, a hit).
    fn fetch(&mut self, k: &Kernel) {
        if let Some(w) = self.decoding.take() {
            let warp = &mut self.warps[w as usize];
            // A clone of the warp's own program handle (a reference count, no copy).
            let own = warp.program.clone();
            warp.fetch(
                own.as_deref().unwrap_or(&k.program),
                self.cfg.ibuffer_entries as usize,
            );
            let empty = warp.ibuf_empty();
            self.refresh(w as usize);
            if empty {
                // The program had nothing left (e.g. trailing empty loops).
                self.try_finish(w as usize);
            }
        }
        if self.need_fetch == 0 {
            return;
        }
        let n = self.warps.len() as u32;
        let at_or_after = self.need_fetch & !mask(self.fetch_ptr);
        let w = if at_or_after != 0 {
            at_or_after.trailing_zeros()
        } else {
            self.need_fetch.trailing_zeros()
        };
        self.fetch_ptr = (w + 1) % n;
        self.need_fetch &= !(1 << w);
        self.decoding = Some(w as u8);
    }

    /// The L1 counters.
    pub fn l1_stats(&self) -> &CacheStats {
        &self.l1.stats
    }

    /// One line per unfinished warp saying what it waits on (for the watchdog).
    pub fn describe_stuck_warps(&self, k: &Kernel) -> Vec<String> {
        let mut out = vec![];
        for (i, w) in self.warps.iter().enumerate() {
            if !w.active {
                continue;
            }
            let why = if w.at_barrier {
                "barrier".to_string()
            } else if self.atomic_wait >> i & 1 == 1 {
                "its global atomic's replies".to_string()
            } else if let Some(e) = w.head() {
                if w.blocked_by_scoreboard(e) {
                    let regs: Vec<String> = w.pending.iter().map(|r| format!("r{r}")).collect();
                    format!(
                        "scoreboard ({} pending{})",
                        regs.join(" "),
                        if w.pending_global.is_empty() {
                            ""
                        } else {
                            ", global loads in flight"
                        }
                    )
                } else if e.inst.op.is_memory() {
                    format!(
                        "LD/ST unit (busy: {}, L1 MSHRs {}/{}, miss queue {}/{})",
                        self.lsu.busy,
                        self.l1.mshrs_used(),
                        self.cfg.l1_mshrs,
                        self.l1.miss_queue_used(),
                        self.cfg.l1_miss_queue
                    )
                } else {
                    format!("{:?} pipeline", self.pipe_of(e.inst.op))
                }
            } else if w.stores_in_flight > 0 {
                format!("{} store acknowledgements", w.stores_in_flight)
            } else if !w.pending.is_empty() {
                "outstanding loads".to_string()
            } else {
                "fetch".to_string()
            };
            out.push(format!(
                "SM {} warp {} (CTA {} of {}): waits on {why}",
                self.id, i, w.cta, k.name
            ));
        }
        if self.mas || self.car.is_some() {
            let (mp, owner) = self.blocks.registers();
            let parked: Vec<String> = self.parked_entries().map(|(w, _, _)| w.to_string()).collect();
            out.push(format!(
                "SM {}: mode {}, owner {}, LD/ST head {}, re-execution queue warps [{}]",
                self.id,
                if mp { "MP" } else { "EP" },
                owner.map_or("none".to_string(), |o| o.to_string()),
                if self.lsu.busy {
                    self.lsu.warp.to_string()
                } else {
                    "empty".to_string()
                },
                parked.join(" ")
            ));
        }
        out
    }
}

fn mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// One SM's model signals after a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmSample {
    /// Memory Priority mode (else Equal Priority).
    pub mp: bool,
    pub owner: Option<u8>,
    /// L1 saturation flag (MSHRs or miss queue almost full).
    pub saturated: bool,
    pub mshrs: u32,
    pub miss_queue: u32,
    pub reexec_queue: u32,
    /// Warps holding a re-execution queue entry (CAR keeps at most one per warp).
    pub reexec_warps: u64,
    /// Warp issued by each scheduler.
    pub issue: [Option<u8>; crate::mascar::MAX_SCHEDULERS],
    /// Warp status table: op type is memory / stall bit, per warp.
    pub wst_mem: u64,
    pub wst_stall: u64,
    /// Warp slots holding an unfinished warp.
    pub active: u64,
    /// Running L1 outcome counters (the waveform shows a strobe when one moves).
    pub l1_hits: u64,
    pub l1_misses: u64,
    pub l1_reservation_fails: u64,
    /// Running count of CAR hits served while an older miss waits in the re-execution queue.
    pub hits_under_miss: u64,
    /// Running counts of the re-execution queue's L1 accesses (retries) and of the refused
    /// ones.
    pub reexec_retries: u64,
    pub reexec_refused: u64,
}

/// Registers a CTA occupies.
fn cta_regs(k: &Kernel) -> u32 {
    k.regs.saturating_mul(k.warps_per_cta() * 32)
}
