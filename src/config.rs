//! The machine configuration: every parameter of the model in one struct.
//!
//! Defaults are the paper's GTX480-class machine (spec §2). Parameters marked [design] in
//! their doc comment are our own choices where neither the paper nor GPGPU-Sim is precise.
//! The two unloaded round-trip latencies the paper gives (200 cycles L1 miss → L2 hit,
//! 440 cycles L1 miss → DRAM) are not parameters: they come out of the component latencies
//! below, and a test measures them end to end.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::sched::SchedulerKind;

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

/// Which goes to the L1 first when the LD/ST head and a re-execution-queue entry could both
/// make progress (spec §5) [design].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CarRetry {
    /// The head; parked requests use the cycles the head cannot (no head, or it would be
    /// refused), so re-execution never delays a new request.
    #[default]
    HeadFirst,
    /// The oldest entry that can make progress; the head only when none can.
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

/// A configuration error: the offending key and why its value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config key `{key}`: {reason}")]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError {
            key: key.into(),
            reason: reason.into(),
        }
    }
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
    /// Simple ALU op latency (cycles to dependent issue).
    pub alu_latency: u32,
    /// Integer multiply latency.
    pub imul_latency: u32,
    /// Integer divide latency.
    pub idiv_latency: u32,
    /// SFU op latency.
    pub sfu_latency: u32,
    /// Shared-memory access latency [design: no bank conflicts modelled].
    pub shared_latency: u32,
    /// L1 hit latency, access to register writeback [design].
    pub l1_hit_latency: u32,
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

    // ---- interconnect ----
    pub flit_bytes: u32,
    /// Flits per cycle an SM port injects or ejects.
    pub sm_port_flits: u32,
    /// Flits per cycle an L2 partition port injects or ejects [design: 2, so DRAM, not the
    /// crossbar, bounds bandwidth].
    pub partition_port_flits: u32,
    /// Cycles a packet spends in the network after serialisation [design].
    pub icnt_latency: u32,
    /// Packets a destination can buffer, counting those still crossing the network (credit
    /// limit), in both directions [design]. The SM's own response FIFO is not this buffer:
    /// the SM takes one arrived reply per cycle, faster than its port delivers them.
    pub icnt_buffer: u32,

    // ---- L2 ----
    pub l2_partitions: u32,
    pub l2_sets: u32,
    pub l2_ways: u32,
    /// L2 tag + data access latency [design; sets the 200-cycle round trip].
    pub l2_latency: u32,
    pub l2_mshrs: u32,
    pub l2_mshr_merge: u32,
    /// L2 → DRAM queue entries.
    pub l2_miss_queue: u32,
    /// Replies an L2 partition may hold before it stops taking requests.
    pub l2_response_queue: u32,

    // ---- DRAM ----
    /// Requests queued per partition.
    pub dram_queue: u32,
    /// DRAM access latency [design; sets the 440-cycle round trip].
    pub dram_latency: u32,
    /// Core cycles per 128 B line a partition's DRAM transfers (bandwidth) [design].
    pub dram_cycles_per_line: f64,

    // ---- MAS (spec §4) ----
    /// Saturation: MSHRs used ≥ l1_mshrs − margin, or miss queue used ≥ l1_miss_queue −
    /// margin [design].
    pub mas_sat_margin: u32,
    /// Extra cycles MP mode lasts after saturation ends [design].
    pub mas_mp_exit_hold: u32,
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
    /// A full queue stops global memory instructions from issuing (`true`), or lets them in
    /// and a refused head then waits at the head as without CAR (`false`) [design].
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
            ibuffer_entries: 2,
            scheduler: SchedulerKind::Lrr,
            sp_units: 2,
            sfu_units: 1,
            sfu_initiation: 4,
            alu_latency: 4,
            imul_latency: 8,
            idiv_latency: 40,
            sfu_latency: 20,
            shared_latency: 24,
            l1_hit_latency: 20,
            max_inflight_loads: 256,
            l1_sets: 64,
            l1_ways: 4,
            line_bytes: 128,
            l1_mshrs: 64,
            l1_mshr_merge: 8,
            l1_miss_queue: 8,
            flit_bytes: 32,
            sm_port_flits: 1,
            partition_port_flits: 2,
            icnt_latency: 40,
            icnt_buffer: 64,
            l2_partitions: 6,
            l2_sets: 128,
            l2_ways: 8,
            l2_latency: 111,
            l2_mshrs: 128,
            l2_mshr_merge: 8,
            l2_miss_queue: 8,
            l2_response_queue: 16,
            dram_queue: 32,
            dram_latency: 238,
            dram_cycles_per_line: 3.0,
            mas_sat_margin: 1,
            mas_mp_exit_hold: 0,
            mas_base_order: SchedulerKind::Gto,
            car_queue_depth: 32,
            mascar_non_owner_mem: NonOwnerMem::Stall,
            car_entry: CarEntry::Instruction,
            car_retry: CarRetry::HeadFirst,
            car_full_blocks_issue: false,
            owl_blp_parity: true,
            ccws_vta_entries: 16,
            ccws_vta_ways: 8,
            ccws_base_score: 100,
            ccws_k_throttle: 8,
            engine: Engine::Ref,
            watchdog_cycles: 200_000,
            max_cycles: 0,
        }
    }
}

/// Latencies kept below this bound fit the SM's event wheel.
pub const MAX_PIPE_LATENCY: u32 = 1000;

impl Config {
    /// Refuses impossible values up front, naming the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let at_least = |key: &str, v: u64, min: u64| -> Result<(), ConfigError> {
            if v < min {
                Err(ConfigError::new(key, format!("must be at least {min}, got {v}")))
            } else {
                Ok(())
            }
        };
        let at_most = |key: &str, v: u64, max: u64| -> Result<(), ConfigError> {
            if v > max {
                Err(ConfigError::new(key, format!("must be at most {max}, got {v}")))
            } else {
                Ok(())
            }
        };
        // Both bounds, with the same messages as the two checks above.
        let in_range = |key: &str, v: u64, min: u64, max: u64| -> Result<(), ConfigError> {
            at_least(key, v, min)?;
            at_most(key, v, max)
        };
        in_range("sms", self.sms as u64, 1, 1024)?;
        in_range("warps_per_sm", self.warps_per_sm as u64, 1, 64)?;
        at_least("threads_per_sm", self.threads_per_sm as u64, 1)?;
        in_range("ctas_per_sm", self.ctas_per_sm as u64, 1, 64)?;
        at_least("regs_per_sm", self.regs_per_sm as u64, 1)?;
        in_range(
            "schedulers_per_sm",
            self.schedulers_per_sm as u64,
            1,
            (self.warps_per_sm as u64).min(crate::mascar::ports::MAX_SCHEDULERS as u64),
        )?;
        in_range("ibuffer_entries", self.ibuffer_entries as u64, 1, 8)?;
        at_least("sp_units", self.sp_units as u64, 1)?;
        at_least("sfu_units", self.sfu_units as u64, 1)?;
        at_least("sfu_initiation", self.sfu_initiation as u64, 1)?;
        for (key, v) in [
            ("alu_latency", self.alu_latency),
            ("imul_latency", self.imul_latency),
            ("idiv_latency", self.idiv_latency),
            ("sfu_latency", self.sfu_latency),
            ("shared_latency", self.shared_latency),
            ("l1_hit_latency", self.l1_hit_latency),
        ] {
            at_least(key, v as u64, 1)?;
            at_most(key, v as u64, MAX_PIPE_LATENCY as u64)?;
        }
        in_range("max_inflight_loads", self.max_inflight_loads as u64, 1, 65535)?;
        for (key, v) in [
            ("l1_sets", self.l1_sets),
            ("l1_ways", self.l1_ways),
            ("l1_mshrs", self.l1_mshrs),
            ("l1_mshr_merge", self.l1_mshr_merge),
            ("l2_partitions", self.l2_partitions),
            ("l2_sets", self.l2_sets),
            ("l2_ways", self.l2_ways),
            ("l2_mshrs", self.l2_mshrs),
            ("l2_mshr_merge", self.l2_mshr_merge),
            ("l2_miss_queue", self.l2_miss_queue),
            ("l2_response_queue", self.l2_response_queue),
            ("dram_queue", self.dram_queue),
            ("flit_bytes", self.flit_bytes),
            ("sm_port_flits", self.sm_port_flits),
            ("partition_port_flits", self.partition_port_flits),
            ("icnt_latency", self.icnt_latency),
            ("icnt_buffer", self.icnt_buffer),
            ("l2_latency", self.l2_latency),
            ("dram_latency", self.dram_latency),
        ] {
            at_least(key, v as u64, 1)?;
        }
        if !(self.dram_cycles_per_line.is_finite() && self.dram_cycles_per_line >= 0.25) {
            return Err(ConfigError::new(
                "dram_cycles_per_line",
                format!("must be a number ≥ 0.25, got {}", self.dram_cycles_per_line),
            ));
        }
        at_most("l1_mshr_merge", self.l1_mshr_merge as u64, 64)?;
        at_most("l1_mshrs", self.l1_mshrs as u64, 4096)?;
        at_most("l2_mshrs", self.l2_mshrs as u64, 4096)?;
        // GPGPU-Sim treats the miss queue as full at size - 1, so it needs two entries.
        at_least("l1_miss_queue", self.l1_miss_queue as u64, 2)?;
        // Up to 1024 ways so that a fully associative L1 (1 set) can be studied.
        at_most("l1_ways", self.l1_ways as u64, 1024)?;
        at_most("l2_ways", self.l2_ways as u64, 64)?;
        if !matches!(self.mas_base_order, SchedulerKind::Gto | SchedulerKind::Lrr) {
            return Err(ConfigError::new("mas_base_order", "must be `gto` or `lrr`"));
        }
        in_range("car_queue_depth", self.car_queue_depth as u64, 1, 64)?;
        if self.engine != Engine::Ref {
            crate::rtl::harness::supports(self).map_err(|reason| ConfigError::new("engine", reason))?;
        }
        at_least("ccws_vta_ways", self.ccws_vta_ways as u64, 1)?;
        in_range(
            "ccws_vta_entries",
            self.ccws_vta_entries as u64,
            self.ccws_vta_ways as u64,
            256,
        )?;
        if !self.ccws_vta_entries.is_multiple_of(self.ccws_vta_ways) {
            return Err(ConfigError::new(
                "ccws_vta_entries",
                "must be a multiple of ccws_vta_ways",
            ));
        }
        at_least("ccws_base_score", self.ccws_base_score as u64, 1)?;
        for (key, v) in [("l1_sets", self.l1_sets), ("l2_sets", self.l2_sets)] {
            if !v.is_power_of_two() {
                return Err(ConfigError::new(key, format!("must be a power of two, got {v}")));
            }
        }
        if !self.line_bytes.is_power_of_two() || self.line_bytes < 32 || self.line_bytes > 4096 {
            return Err(ConfigError::new(
                "line_bytes",
                format!("must be a power of two in 32..=4096, got {}", self.line_bytes),
            ));
        }
        Ok(())
    }

    /// Applies one `key=value` override; the value is a TOML literal (`64`, `"gto"`, `true`).
    pub fn set(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| ConfigError::new(assignment, "expected `key=value`".to_string()))?;
        let key = key.trim();
        let value = value.trim();
        let mut table = toml::Value::try_from(&*self).map_err(|e| ConfigError::new(key, e.to_string()))?;
        let map = table.as_table_mut().expect("config serialises to a table");
        if !map.contains_key(key) {
            return Err(ConfigError::new(
                key,
                "unknown configuration key (see `mascar config --dump`)",
            ));
        }
        let parsed: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
            Ok(mut t) => t.remove("v").expect("just inserted"),
            // A bare word such as `gto` is taken as a string.
            Err(_) => toml::Value::String(value.to_string()),
        };
        map.insert(key.to_string(), parsed);
        let updated: Config = table.try_into().map_err(|e: toml::de::Error| {
            ConfigError::new(key, format!("invalid value `{value}`: {}", e.message()))
        })?;
        *self = updated;
        Ok(())
    }

    /// Reads a TOML config file (keys as in [`Config`]; absent keys keep their defaults).
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| {
            let key = e.message().split('`').nth(1).unwrap_or("<file>").to_string();
            ConfigError::new(key, e.message().to_string())
        })
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
