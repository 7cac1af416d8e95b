//! Statistics the model collects, and the run summary built from them.

use serde::{Deserialize, Serialize};

/// Counters of one cache (an L1, or an L2 partition), or their sum.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheStats {
    /// Access attempts (reads and writes), retries after a reservation failure included:
    /// `accesses = hits + hit_reserved + misses + write_hits + write_hit_reserved +
    /// write_misses + reservation failures` (see [`CacheStats::outcomes`]).
    pub accesses: u64,
    pub hits: u64,
    /// Misses merged into an MSHR already open for the line.
    pub hit_reserved: u64,
    pub misses: u64,
    pub fail_mshr_full: u64,
    pub fail_merge_limit: u64,
    pub fail_miss_queue_full: u64,
    pub fail_line_alloc: u64,
    pub write_hits: u64,
    /// Writes to a line whose fill is pending. GPGPU-Sim 3.2.2 gpu-cache.cc
    /// `cache_stats::select_stats_status` counts any access whose probe is HIT_RESERVED as
    /// HIT_RESERVED, writes included, so these are not in its `total_cache_misses`.
    #[serde(default)]
    pub write_hit_reserved: u64,
    /// Writes to a line that is neither valid nor reserved.
    pub write_misses: u64,
    pub fills: u64,
    pub cycles_mshr_full: u64,
    pub cycles_miss_queue_full: u64,
    /// Global atomics performed (L2 only; each is also counted as the read it is timed as).
    #[serde(default)]
    pub atomics: u64,
}

impl CacheStats {
    pub fn reservation_fails(&self) -> u64 {
        self.fail_mshr_full + self.fail_merge_limit + self.fail_miss_queue_full + self.fail_line_alloc
    }
    /// Every counted outcome; equals `accesses` when nothing is lost.
    pub fn outcomes(&self) -> u64 {
        self.hits
            + self.hit_reserved
            + self.misses
            + self.write_hits
            + self.write_hit_reserved
            + self.write_misses
            + self.reservation_fails()
    }
    /// Hits over accepted read accesses (reservation failures are retried, not counted).
    pub fn hit_rate(&self) -> f64 {
        let served = self.hits + self.hit_reserved + self.misses;
        if served == 0 {
            0.0
        } else {
            self.hits as f64 / served as f64
        }
    }
    pub fn add(&mut self, o: &CacheStats) {
        self.accesses += o.accesses;
        self.hits += o.hits;
        self.hit_reserved += o.hit_reserved;
        self.misses += o.misses;
        self.fail_mshr_full += o.fail_mshr_full;
        self.fail_merge_limit += o.fail_merge_limit;
        self.fail_miss_queue_full += o.fail_miss_queue_full;
        self.fail_line_alloc += o.fail_line_alloc;
        self.write_hits += o.write_hits;
        self.write_hit_reserved += o.write_hit_reserved;
        self.write_misses += o.write_misses;
        self.fills += o.fills;
        self.cycles_mshr_full += o.cycles_mshr_full;
        self.cycles_miss_queue_full += o.cycles_miss_queue_full;
        self.atomics += o.atomics;
    }
}

/// Counters of one SM's texture or constant cache (`gpu::sm::ro_cache`), or their sum:
/// `accesses = hits + merged + misses + reservation_fails`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoCacheStats {
    /// Warp instructions (`ld.tex` / `ld.const`) that went to this cache.
    pub instructions: u64,
    /// Line accesses, retries after a reservation failure included.
    pub accesses: u64,
    pub hits: u64,
    /// Misses merged into an MSHR already open for the line (constant cache).
    pub merged: u64,
    /// Misses that sent a request below the SM.
    pub misses: u64,
    /// Refused accesses (full MSHRs, miss queue, or texture FIFOs), retried by the LD/ST unit.
    pub reservation_fails: u64,
    pub fills: u64,
}

impl RoCacheStats {
    pub fn add(&mut self, o: &RoCacheStats) {
        self.instructions += o.instructions;
        self.accesses += o.accesses;
        self.hits += o.hits;
        self.merged += o.merged;
        self.misses += o.misses;
        self.reservation_fails += o.reservation_fails;
        self.fills += o.fills;
    }
}

/// Per-scheduler cycle accounting (summed over schedulers and SMs): every scheduler-cycle
/// is exactly one of these.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedStats {
    /// Cycles the scheduler issued an instruction.
    pub issue_cycles: u64,
    /// Cycles no warp had an instruction it could consider (empty I-buffers, barriers, no warps).
    pub idle_cycles: u64,
    /// Cycles the best candidate waited on the scoreboard.
    pub scoreboard_stall_cycles: u64,
    /// Cycles a candidate was ready but its pipeline (SP, SFU, LD/ST) could not take it.
    pub pipeline_stall_cycles: u64,
}

impl SchedStats {
    pub fn add(&mut self, o: &SchedStats) {
        self.issue_cycles += o.issue_cycles;
        self.idle_cycles += o.idle_cycles;
        self.scoreboard_stall_cycles += o.scoreboard_stall_cycles;
        self.pipeline_stall_cycles += o.pipeline_stall_cycles;
    }
}

/// Latency distribution summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub sum: u64,
    pub min: u64,
    pub max: u64,
}

impl Latency {
    pub fn record(&mut self, v: u64) {
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += v;
    }
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }
    pub fn add(&mut self, o: &Latency) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 || o.min < self.min {
            self.min = o.min;
        }
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.sum += o.sum;
    }
}

/// Per-SM counters outside the caches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SmStats {
    pub warp_instructions: u64,
    /// Active lanes summed over the warp instructions issued.
    #[serde(default)]
    pub thread_instructions: u64,
    pub global_loads: u64,
    pub global_stores: u64,
    /// Global atomic warp instructions (`atom.global`, `red.global`; traces' ATOM/RED).
    #[serde(default)]
    pub global_atomics: u64,
    pub shared_accesses: u64,
    /// Cycles shared-memory instructions held the LD/ST unit beyond their first, for bank
    /// conflicts (GPGPU-Sim's `gpgpu_stall_shd_mem[s_mem][bk_conf]`).
    #[serde(default)]
    pub shared_bank_conflict_cycles: u64,
    /// Line requests the coalescer produced for global accesses.
    pub coalesced_requests: u64,
    /// Cycles the LD/ST unit's head access was refused by the L1 (reservation failure).
    pub lsu_stall_cycles: u64,
    /// Requests sent below L1, and replies received for them.
    pub requests_sent: u64,
    pub replies_received: u64,
    /// Cycles from an L1 read miss to its fill.
    pub l1_miss_latency: Latency,
    pub ctas_completed: u64,
    /// Most CTAs resident at once on one SM.
    pub peak_resident_ctas: u64,
    pub sched: SchedStats,
    pub mas: MasStats,
    pub car: CarStats,
    /// The texture and constant caches (`ld.tex`, `ld.const`).
    #[serde(default)]
    pub tex: RoCacheStats,
    #[serde(default)]
    pub constant: RoCacheStats,
}

impl SmStats {
    /// Active lanes ÷ (32 × warp instructions): 1 when every lane of every warp instruction
    /// is active (0 without instructions).
    pub fn simd_efficiency(&self) -> f64 {
        if self.warp_instructions == 0 {
            0.0
        } else {
            self.thread_instructions as f64 / (32.0 * self.warp_instructions as f64)
        }
    }

    pub fn add(&mut self, o: &SmStats) {
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        self.global_loads += o.global_loads;
        self.global_stores += o.global_stores;
        self.global_atomics += o.global_atomics;
        self.shared_accesses += o.shared_accesses;
        self.shared_bank_conflict_cycles += o.shared_bank_conflict_cycles;
        self.coalesced_requests += o.coalesced_requests;
        self.lsu_stall_cycles += o.lsu_stall_cycles;
        self.requests_sent += o.requests_sent;
        self.replies_received += o.replies_received;
        self.l1_miss_latency.add(&o.l1_miss_latency);
        self.ctas_completed += o.ctas_completed;
        self.peak_resident_ctas = self.peak_resident_ctas.max(o.peak_resident_ctas);
        self.sched.add(&o.sched);
        self.mas.mp_cycles += o.mas.mp_cycles;
        self.mas.mp_entries += o.mas.mp_entries;
        self.mas.owner_changes += o.mas.owner_changes;
        self.mas.owner_first += o.mas.owner_first;
        self.mas.owner_after_dependent_load += o.mas.owner_after_dependent_load;
        self.mas.owner_after_finish += o.mas.owner_after_finish;
        self.mas.owner_after_barrier += o.mas.owner_after_barrier;
        self.mas.owner_other += o.mas.owner_other;
        self.mas.owner_returned_to_ep += o.mas.owner_returned_to_ep;
        self.mas.stalled_warp_cycles += o.mas.stalled_warp_cycles;
        self.car.add(&o.car);
        self.tex.add(&o.tex);
        self.constant.add(&o.constant);
    }
}

/// DRAM counters summed over partitions (memory channels), and per channel.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DramStats {
    pub reads: u64,
    pub writes: u64,
    /// Channel-cycles spent transferring (data bus busy), all channels.
    pub busy_cycles: f64,
    /// Channel-cycles of the DRAM clock (command cycles for `gddr5`, core cycles for `fixed`).
    #[serde(default)]
    pub cycles: u64,
    #[serde(default)]
    pub activations: u64,
    #[serde(default)]
    pub precharges: u64,
    /// Column commands (64 B each on GTX480).
    #[serde(default)]
    pub column_reads: u64,
    #[serde(default)]
    pub column_writes: u64,
    /// Bus turnarounds: reads → writes and writes → reads.
    #[serde(default)]
    pub read_to_write: u64,
    #[serde(default)]
    pub write_to_read: u64,
    /// busy_cycles ÷ cycles (GPGPU-Sim's `bwutil / n_cmd`).
    #[serde(default)]
    pub bus_utilization: f64,
    /// 1 − activations ÷ column commands.
    #[serde(default)]
    pub row_hit_rate: f64,
    #[serde(default)]
    pub channels: Vec<DramChannel>,
}

/// One channel's DRAM counters and rates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DramChannel {
    #[serde(flatten)]
    pub counters: DramChannelStats,
    pub bus_utilization: f64,
    pub row_hit_rate: f64,
}

impl DramStats {
    /// Totals and rates of the channels' counters.
    pub fn from_channels(channels: &[DramChannelStats]) -> DramStats {
        let mut t = DramChannelStats::default();
        for c in channels {
            t.add(c);
        }
        DramStats {
            reads: t.reads,
            writes: t.writes,
            busy_cycles: t.busy_cycles,
            cycles: t.cycles,
            activations: t.activations,
            precharges: t.precharges,
            column_reads: t.column_reads,
            column_writes: t.column_writes,
            read_to_write: t.read_to_write,
            write_to_read: t.write_to_read,
            bus_utilization: t.bus_utilization(),
            row_hit_rate: t.row_hit_rate(),
            channels: channels
                .iter()
                .map(|c| DramChannel {
                    counters: c.clone(),
                    bus_utilization: c.bus_utilization(),
                    row_hit_rate: c.row_hit_rate(),
                })
                .collect(),
        }
    }

    /// The counters of two runs together (kernels back to back), channel by channel.
    pub fn combined(&self, o: &DramStats) -> DramStats {
        let n = self.channels.len().max(o.channels.len());
        let chans: Vec<_> = (0..n)
            .map(|i| {
                let mut c = self
                    .channels
                    .get(i)
                    .map(|c| c.counters.clone())
                    .unwrap_or_default();
                if let Some(x) = o.channels.get(i) {
                    c.add(&x.counters);
                }
                c
            })
            .collect();
        let mut t = DramStats::from_channels(&chans);
        if n == 0 {
            // Documents from before per-channel counters.
            t.reads = self.reads + o.reads;
            t.writes = self.writes + o.writes;
            t.busy_cycles = self.busy_cycles + o.busy_cycles;
        }
        t
    }
}

/// MAS counters (zero when MAS is off), summed over SMs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasStats {
    /// SM-cycles spent in Memory Priority mode.
    pub mp_cycles: u64,
    /// Transitions EP → MP: MP episodes (their mean length is `RunStats::mp_mean_episode`).
    pub mp_entries: u64,
    /// Times the owner warp changed to another warp (hand-overs and first assignments);
    /// the five counters below split them by what the previous owner was doing when the
    /// new owner took over.
    pub owner_changes: u64,
    /// No previous owner: the first owner of an MP period, or one after an owner-less spell.
    pub owner_first: u64,
    /// The previous owner waited on a load it had issued (the paper's hand-over, slide 11).
    pub owner_after_dependent_load: u64,
    /// The previous owner had finished (exited).
    pub owner_after_finish: u64,
    /// The previous owner waited at a CTA barrier.
    #[serde(default)]
    pub owner_after_barrier: u64,
    /// Any other hand-over, e.g. to a warp whose requests wait to leave a quiet L1.
    pub owner_other: u64,
    /// Times MP ended while a warp owned the memory path: the owner gave it back to EP (not
    /// counted in `owner_changes`, as no warp took over).
    #[serde(default)]
    pub owner_returned_to_ep: u64,
    /// Warp-cycles a warp's memory instruction was held back by the stall bit.
    pub stalled_warp_cycles: u64,
}

impl MasStats {
    /// Mean cycles an MP episode lasts (0 when MP was never entered).
    pub fn mean_mp_episode(&self) -> f64 {
        self.mp_cycles as f64 / self.mp_entries.max(1) as f64
    }
}

/// CAR counters (zero when CAR is off), summed over SMs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CarStats {
    /// Instructions moved from the LD/ST head into the re-execution queue.
    pub enqueued: u64,
    /// L1 accesses made from the re-execution queue.
    pub reexecutions: u64,
    /// Hits served while at least one request waited in the queue (hit-under-miss).
    pub hits_under_miss: u64,
    /// SM-cycles the queue was full.
    pub queue_full_cycles: u64,
    /// LD/ST-head accesses the L1 refused (NACKs: a reservation failure, or a non-owner's
    /// miss refused by hit-only service in MP), counted per attempt.
    pub nacks: u64,
    /// Of those, the non-owners' misses refused by hit-only service.
    pub hit_only_nacks: u64,
    /// Highest occupancy seen on any SM.
    pub peak_occupancy: u64,
    /// L1 accesses made from the queue (each uses the LD/ST port for its cycle); the
    /// accepted ones are `reexecutions`.
    #[serde(default)]
    pub retries: u64,
    /// Of those, the refused ones (wasted: a reservation failure again, or a non-owner's miss
    /// refused by hit-only service).
    #[serde(default)]
    pub failed_retries: u64,
    /// reexecutions ÷ retries (0 without retries).
    #[serde(default)]
    pub retry_success_rate: f64,
}

impl CarStats {
    pub fn add(&mut self, o: &CarStats) {
        self.enqueued += o.enqueued;
        self.reexecutions += o.reexecutions;
        self.hits_under_miss += o.hits_under_miss;
        self.queue_full_cycles += o.queue_full_cycles;
        self.nacks += o.nacks;
        self.hit_only_nacks += o.hit_only_nacks;
        self.peak_occupancy = self.peak_occupancy.max(o.peak_occupancy);
        self.retries += o.retries;
        self.failed_retries += o.failed_retries;
        self.retry_success_rate = if self.retries == 0 {
            0.0
        } else {
            self.reexecutions as f64 / self.retries as f64
        };
    }
}

/// Everything a run reports. Field names are stable (they are the JSON keys).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    pub kernel: String,
    pub scheduler: String,
    pub sms: u32,
    pub cycles: u64,
    pub warp_instructions: u64,
    /// SIMD efficiency: active lanes ÷ (32 × warp instructions); below 1 under divergence or
    /// with CTAs whose size is not a multiple of 32 (`sm.thread_instructions` has the lanes).
    #[serde(default)]
    pub simd_efficiency: f64,
    /// Warp instructions per cycle, whole GPU.
    pub ipc: f64,
    /// Peak IPC: schedulers per SM × SMs.
    pub peak_ipc: f64,
    pub l1_hit_rate: f64,
    pub l1_reservation_fails: u64,
    /// Fraction of SM-cycles the LD/ST unit was blocked by a reservation failure.
    pub lsu_stall_fraction: f64,
    /// Fraction of DRAM transfer capacity used, all partitions.
    pub dram_utilization: f64,
    pub dram_bytes_per_cycle: f64,
    pub sm: SmStats,
    pub l1: CacheStats,
    pub l2: CacheStats,
    pub dram: DramStats,
    pub icnt_request_flits: u64,
    pub icnt_reply_flits: u64,
    /// Fraction of SM-cycles in Memory Priority mode (MAS runs).
    pub mp_fraction: f64,
    /// Mean length of an MP episode in cycles: SM-cycles in MP ÷ MP entries (0 without any).
    #[serde(default)]
    pub mp_mean_episode: f64,
    pub mas: MasStats,
    pub car: CarStats,
}

impl RunStats {
    /// The statistics of kernels run back to back, as one run: counters summed, rates over
    /// the summed cycles (GPGPU-Sim's `gpu_tot_*` figures), named `name`.
    pub fn total(name: &str, parts: &[RunStats]) -> RunStats {
        let Some(first) = parts.first() else {
            return RunStats {
                kernel: name.to_string(),
                ..RunStats::default()
            };
        };
        let mut t = RunStats {
            kernel: name.to_string(),
            scheduler: first.scheduler.clone(),
            sms: first.sms,
            peak_ipc: first.peak_ipc,
            ..RunStats::default()
        };
        // Time-weighted sums of the per-kernel rates whose denominators the stats do not carry.
        let (mut dram_busy, mut dram_bytes) = (0.0, 0.0);
        for p in parts {
            t.cycles += p.cycles;
            t.sm.add(&p.sm);
            t.l1.add(&p.l1);
            t.l2.add(&p.l2);
            t.dram = t.dram.combined(&p.dram);
            t.icnt_request_flits += p.icnt_request_flits;
            t.icnt_reply_flits += p.icnt_reply_flits;
            dram_busy += p.dram_utilization * p.cycles as f64;
            dram_bytes += p.dram_bytes_per_cycle * p.cycles as f64;
        }
        let cycles = t.cycles.max(1) as f64;
        let sm_cycles = cycles * t.sms as f64;
        t.warp_instructions = t.sm.warp_instructions;
        t.simd_efficiency = t.sm.simd_efficiency();
        t.ipc = t.warp_instructions as f64 / cycles;
        t.l1_hit_rate = t.l1.hit_rate();
        t.l1_reservation_fails = t.l1.reservation_fails();
        t.lsu_stall_fraction = t.sm.lsu_stall_cycles as f64 / sm_cycles;
        t.dram_utilization = dram_busy / cycles;
        t.dram_bytes_per_cycle = dram_bytes / cycles;
        t.mp_fraction = t.sm.mas.mp_cycles as f64 / sm_cycles;
        t.mp_mean_episode = t.sm.mas.mean_mp_episode();
        t.mas = t.sm.mas.clone();
        t.car = t.sm.car.clone();
        t
    }
}

/// Counters of one channel.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DramChannelStats {
    /// Read and write requests accepted.
    pub reads: u64,
    pub writes: u64,
    /// Cycles of the channel's clock (DRAM command cycles for GDDR5, core cycles for `fixed`).
    pub cycles: u64,
    /// Of those, data-bus busy cycles (GPGPU-Sim's `bwutil`).
    pub busy_cycles: f64,
    pub activations: u64,
    pub precharges: u64,
    /// Column commands (one moves an atom: 64 B on GTX480).
    pub column_reads: u64,
    pub column_writes: u64,
    /// Bus turnarounds: a write column command after reads, and a read after writes.
    pub read_to_write: u64,
    pub write_to_read: u64,
}

impl DramChannelStats {
    pub fn add(&mut self, o: &DramChannelStats) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.cycles += o.cycles;
        self.busy_cycles += o.busy_cycles;
        self.activations += o.activations;
        self.precharges += o.precharges;
        self.column_reads += o.column_reads;
        self.column_writes += o.column_writes;
        self.read_to_write += o.read_to_write;
        self.write_to_read += o.write_to_read;
    }
    /// Data-bus busy cycles ÷ cycles.
    pub fn bus_utilization(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.busy_cycles / self.cycles as f64
        }
    }
    /// 1 − activations ÷ column commands (0 with no column commands).
    pub fn row_hit_rate(&self) -> f64 {
        let cols = self.column_reads + self.column_writes;
        if cols == 0 {
            0.0
        } else {
            1.0 - self.activations as f64 / cols as f64
        }
    }
}
