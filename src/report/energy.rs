//! An event-energy model: each counted event costs a fixed energy, and every SM and memory
//! partition burns a fixed static power for as long as the kernel runs.
//!
//! The per-event numbers, where they come from and which of them are our own estimates are in
//! `docs/energy.md`. They are meant for *relative* comparisons between schedulers on the same
//! kernel (Mascar's "12% energy saving" claim), not as absolute joules of a GTX480.

use serde::{Deserialize, Serialize};

use crate::stats::{CacheStats, RunStats};

/// Energy per event (nJ) and static power (W) of a GTX480-class GPU at 40 nm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnergyModel {
    /// Core clock (MHz): converts static power to energy per cycle.
    pub clock_mhz: f64,
    /// Fetch, decode, schedule, operand collection and execution of one warp instruction.
    pub warp_instruction_nj: f64,
    /// Extra for a global load or store warp instruction: address generation and coalescing.
    pub global_access_nj: f64,
    /// One warp access to shared memory.
    pub shared_access_nj: f64,
    /// One L1 data access that reaches the data array (hit, miss, write).
    pub l1_access_nj: f64,
    /// A tag probe refused by a reservation failure (retried later).
    pub l1_probe_nj: f64,
    /// One L2 access that reaches the data array.
    pub l2_access_nj: f64,
    /// An L2 tag probe refused by a reservation failure.
    pub l2_probe_nj: f64,
    /// One 32 B flit across the SM ↔ partition interconnect (either direction).
    pub icnt_flit_nj: f64,
    /// One 128 B line read from or written to GDDR5 (I/O and array).
    pub dram_line_nj: f64,
    /// Static (leakage and clock) power of one SM (W).
    pub sm_static_w: f64,
    /// Static power of one memory partition: L2 slice, memory controller, DRAM background (W).
    pub partition_static_w: f64,
}

impl Default for EnergyModel {
    fn default() -> Self {
        EnergyModel {
            clock_mhz: 700.0,
            warp_instruction_nj: 3.0,
            global_access_nj: 0.5,
            shared_access_nj: 0.3,
            l1_access_nj: 0.28,
            l1_probe_nj: 0.03,
            l2_access_nj: 0.56,
            l2_probe_nj: 0.05,
            icnt_flit_nj: 0.36,
            dram_line_nj: 16.0,
            sm_static_w: 1.59,
            partition_static_w: 3.0,
        }
    }
}

impl EnergyModel {
    /// Static energy of one SM in one core cycle (nJ).
    pub fn sm_static_nj_per_cycle(&self) -> f64 {
        watts_to_nj_per_cycle(self.sm_static_w, self.clock_mhz)
    }
    /// Static energy of one memory partition in one core cycle (nJ).
    pub fn partition_static_nj_per_cycle(&self) -> f64 {
        watts_to_nj_per_cycle(self.partition_static_w, self.clock_mhz)
    }
}

/// 1 W for one cycle of `mhz` MHz is `1000 / mhz` nJ.
fn watts_to_nj_per_cycle(watts: f64, mhz: f64) -> f64 {
    watts * 1000.0 / mhz
}

/// Energy of one run, per component (nJ).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnergyBreakdown {
    /// Warp instructions, global-access overhead included.
    pub core_nj: f64,
    pub shared_nj: f64,
    pub l1_nj: f64,
    pub icnt_nj: f64,
    pub l2_nj: f64,
    pub dram_nj: f64,
    pub sm_static_nj: f64,
    pub partition_static_nj: f64,
    pub total_nj: f64,
}

impl EnergyBreakdown {
    /// Everything but static energy.
    pub fn dynamic_nj(&self) -> f64 {
        self.total_nj - self.static_nj()
    }
    pub fn static_nj(&self) -> f64 {
        self.sm_static_nj + self.partition_static_nj
    }
}

/// Energy of a cache: full accesses at `access_nj`, refused probes at `probe_nj`.
fn cache_nj(c: &CacheStats, access_nj: f64, probe_nj: f64) -> f64 {
    let fails = c.reservation_fails().min(c.accesses);
    (c.accesses - fails) as f64 * access_nj + fails as f64 * probe_nj
}

/// Energy of a run with `sms` SMs and `partitions` memory partitions.
pub fn energy(stats: &RunStats, sms: u32, partitions: u32, model: &EnergyModel) -> EnergyBreakdown {
    let m = model;
    let global = stats.sm.global_loads + stats.sm.global_stores;
    let cycles = stats.cycles as f64;
    let mut e = EnergyBreakdown {
        core_nj: stats.sm.warp_instructions as f64 * m.warp_instruction_nj
            + global as f64 * m.global_access_nj,
        shared_nj: stats.sm.shared_accesses as f64 * m.shared_access_nj,
        l1_nj: cache_nj(&stats.l1, m.l1_access_nj, m.l1_probe_nj),
        icnt_nj: (stats.icnt_request_flits + stats.icnt_reply_flits) as f64 * m.icnt_flit_nj,
        l2_nj: cache_nj(&stats.l2, m.l2_access_nj, m.l2_probe_nj),
        dram_nj: (stats.dram.reads + stats.dram.writes) as f64 * m.dram_line_nj,
        sm_static_nj: cycles * sms as f64 * m.sm_static_nj_per_cycle(),
        partition_static_nj: cycles * partitions as f64 * m.partition_static_nj_per_cycle(),
        total_nj: 0.0,
    };
    e.total_nj = e.core_nj
        + e.shared_nj
        + e.l1_nj
        + e.icnt_nj
        + e.l2_nj
        + e.dram_nj
        + e.sm_static_nj
        + e.partition_static_nj;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy_run() -> RunStats {
        let mut s = RunStats {
            cycles: 10_000,
            ..RunStats::default()
        };
        s.sm.warp_instructions = 50_000;
        s.sm.global_loads = 4_000;
        s.sm.global_stores = 1_000;
        s.sm.shared_accesses = 2_000;
        s.l1.accesses = 9_000;
        s.l1.fail_mshr_full = 1_000;
        s.l2.accesses = 3_000;
        s.icnt_request_flits = 6_000;
        s.icnt_reply_flits = 12_000;
        s.dram.reads = 2_000;
        s.dram.writes = 500;
        s
    }

    #[test]
    fn breakdown_sums_to_total() {
        let e = energy(&busy_run(), 15, 6, &EnergyModel::default());
        let sum = e.core_nj
            + e.shared_nj
            + e.l1_nj
            + e.icnt_nj
            + e.l2_nj
            + e.dram_nj
            + e.sm_static_nj
            + e.partition_static_nj;
        assert!((sum - e.total_nj).abs() < 1e-6 * e.total_nj);
        assert!((e.dynamic_nj() + e.static_nj() - e.total_nj).abs() < 1e-6 * e.total_nj);
        assert!(e.core_nj > 0.0 && e.dram_nj > 0.0 && e.sm_static_nj > 0.0);
    }

    #[test]
    fn more_dram_traffic_costs_more() {
        let m = EnergyModel::default();
        let base = busy_run();
        let mut more = base.clone();
        more.dram.reads += 1_000;
        let (a, b) = (energy(&base, 15, 6, &m), energy(&more, 15, 6, &m));
        assert!(b.total_nj > a.total_nj);
        assert!((b.dram_nj - a.dram_nj - 1_000.0 * m.dram_line_nj).abs() < 1e-6);
    }

    #[test]
    fn faster_run_with_same_events_uses_less_static_energy() {
        let m = EnergyModel::default();
        let slow = busy_run();
        let fast = RunStats {
            cycles: slow.cycles / 2,
            ..slow.clone()
        };
        let (s, f) = (energy(&slow, 15, 6, &m), energy(&fast, 15, 6, &m));
        assert!(f.static_nj() < s.static_nj());
        assert!((f.dynamic_nj() - s.dynamic_nj()).abs() < 1e-6 * s.dynamic_nj());
        assert!(f.total_nj < s.total_nj);
    }

    #[test]
    fn refused_probes_cost_less_than_accesses() {
        let m = EnergyModel::default();
        let mut s = RunStats::default();
        s.l1.accesses = 10;
        let plain = energy(&s, 1, 1, &m).l1_nj;
        s.l1.fail_mshr_full = 5;
        let with_fails = energy(&s, 1, 1, &m).l1_nj;
        assert!((plain - 10.0 * m.l1_access_nj).abs() < 1e-9);
        assert!((with_fails - 5.0 * (m.l1_access_nj + m.l1_probe_nj)).abs() < 1e-9);
    }

    #[test]
    fn static_power_converts_to_energy_per_cycle() {
        let m = EnergyModel::default();
        // 1.59 W at 700 MHz: 1.59 / 700e6 J = 2.271 nJ per cycle.
        assert!((m.sm_static_nj_per_cycle() - 1.59e9 / 700e6).abs() < 1e-9);
    }
}
