//! Human-readable summaries and safe output files.

pub mod compare;
pub mod energy;
pub mod intensity;
pub mod plots;

use std::fmt::Write as _;
use std::time::Duration;

use crate::sched::SchedulerKind;
use crate::stats::RunStats;

type Row = (&'static str, fn(&RunStats) -> String);

/// MAS (memory-aware scheduling) counters of [`summary_table`].
const MAS_ROWS: &[Row] = &[
    ("MP fraction", |s| format!("{:.3}", s.mp_fraction)),
    ("MP entries", |s| s.mas.mp_entries.to_string()),
    ("mean MP episode (cycles)", |s| {
        format!("{:.1}", s.mp_mean_episode)
    }),
    ("owner changes", |s| s.mas.owner_changes.to_string()),
    ("  first owner", |s| s.mas.owner_first.to_string()),
    ("  after dependent load", |s| {
        s.mas.owner_after_dependent_load.to_string()
    }),
    ("  after owner finished", |s| s.mas.owner_after_finish.to_string()),
    ("  after owner barrier", |s| s.mas.owner_after_barrier.to_string()),
    ("  other hand-over", |s| s.mas.owner_other.to_string()),
    ("owner returned to EP", |s| s.mas.owner_returned_to_ep.to_string()),
    ("stalled warp-cycles", |s| s.mas.stalled_warp_cycles.to_string()),
];

/// CAR (cache access re-execution) counters of [`summary_table`].
const CAR_ROWS: &[Row] = &[
    ("NACKs (L1 refusals)", |s| s.car.nacks.to_string()),
    ("  hit-only refusals", |s| s.car.hit_only_nacks.to_string()),
    ("CAR parked", |s| s.car.enqueued.to_string()),
    ("queue retries", |s| s.car.retries.to_string()),
    ("  wasted (refused)", |s| s.car.failed_retries.to_string()),
    ("  success rate", |s| format!("{:.3}", s.car.retry_success_rate)),
    ("re-executions", |s| s.car.reexecutions.to_string()),
    ("hits under miss", |s| s.car.hits_under_miss.to_string()),
    ("queue-full cycles", |s| s.car.queue_full_cycles.to_string()),
    ("peak queue occupancy", |s| s.car.peak_occupancy.to_string()),
];

/// A metrics table with one column per run (e.g. one per scheduler).
pub fn summary_table(runs: &[(RunStats, Duration)]) -> String {
    let mut out = String::new();
    let Some((first, _)) = runs.first() else {
        return out;
    };
    let _ = writeln!(out, "kernel {} on {} SMs", first.kernel, first.sms);
    let rows: &[Row] = &[
        ("cycles", |s| s.cycles.to_string()),
        ("warp instructions", |s| s.warp_instructions.to_string()),
        ("thread instructions", |s| s.sm.thread_instructions.to_string()),
        ("SIMD efficiency", |s| format!("{:.3}", s.simd_efficiency)),
        ("IPC", |s| format!("{:.3}", s.ipc)),
        ("% of peak IPC", |s| format!("{:.1}", 100.0 * s.ipc / s.peak_ipc)),
        ("L1 hit rate", |s| format!("{:.3}", s.l1_hit_rate)),
        ("L1 reservation fails", |s| s.l1_reservation_fails.to_string()),
        ("LSU stall fraction", |s| format!("{:.3}", s.lsu_stall_fraction)),
        ("L2 hit rate", |s| format!("{:.3}", s.l2.hit_rate())),
        ("DRAM utilization", |s| format!("{:.3}", s.dram_utilization)),
        ("DRAM bytes/cycle", |s| format!("{:.1}", s.dram_bytes_per_cycle)),
        ("DRAM row hit rate", |s| format!("{:.3}", s.dram.row_hit_rate)),
        ("DRAM activations", |s| s.dram.activations.to_string()),
        ("DRAM reads/writes", |s| {
            format!("{}/{}", s.dram.reads, s.dram.writes)
        }),
        ("DRAM turns R→W/W→R", |s| {
            format!("{}/{}", s.dram.read_to_write, s.dram.write_to_read)
        }),
        ("mean L1 miss latency", |s| {
            format!("{:.0}", s.sm.l1_miss_latency.mean())
        }),
    ];
    let _ = write!(out, "{:<22}", "");
    for (s, _) in runs {
        let _ = write!(out, "{:>14}", s.scheduler);
    }
    out.push('\n');
    for (name, f) in rows {
        let _ = write!(out, "{name:<22}");
        for (s, _) in runs {
            let _ = write!(out, "{:>14}", f(s));
        }
        out.push('\n');
    }
    // DRAM per channel: bus utilisation / row hit rate.
    let channels = runs.iter().map(|(s, _)| s.dram.channels.len()).max().unwrap_or(0);
    for i in 0..channels {
        let _ = write!(out, "{:<22}", format!("  ch{i} util/row hits"));
        for (s, _) in runs {
            let cell = s.dram.channels.get(i).map_or("-".to_string(), |c| {
                format!("{:.3}/{:.3}", c.bus_utilization, c.row_hit_rate)
            });
            let _ = write!(out, "{cell:>14}");
        }
        out.push('\n');
    }
    // The texture and constant caches, for kernels that read through them.
    let ro_rows: &[Row] = &[
        ("tex accesses/misses", |s| {
            format!("{}/{}", s.sm.tex.accesses, s.sm.tex.misses)
        }),
        ("const accesses/misses", |s| {
            format!("{}/{}", s.sm.constant.accesses, s.sm.constant.misses)
        }),
    ];
    if runs
        .iter()
        .any(|(s, _)| s.sm.tex.instructions + s.sm.constant.instructions > 0)
    {
        for (name, f) in ro_rows {
            let _ = write!(out, "{name:<22}");
            for (s, _) in runs {
                let _ = write!(out, "{:>14}", f(s));
            }
            out.push('\n');
        }
    }
    // Mascar's own counters, where a run's scheduler has the block ("-" for one that has not).
    let uses = |s: &RunStats, car: bool| {
        s.scheduler
            .parse::<SchedulerKind>()
            .is_ok_and(|k| if car { k.uses_car() } else { k.uses_mas() })
    };
    for (car, rows) in [(false, MAS_ROWS), (true, CAR_ROWS)] {
        if !runs.iter().any(|(s, _)| uses(s, car)) {
            continue;
        }
        for (name, f) in rows {
            let _ = write!(out, "{name:<22}");
            for (s, _) in runs {
                let cell = if uses(s, car) { f(s) } else { "-".to_string() };
                let _ = write!(out, "{cell:>14}");
            }
            out.push('\n');
        }
    }
    if runs.len() > 1 {
        let _ = write!(out, "{:<22}", "speedup vs first");
        for (s, _) in runs {
            let _ = write!(
                out,
                "{:>14}",
                format!("{:.3}", first.cycles as f64 / s.cycles.max(1) as f64)
            );
        }
        out.push('\n');
    }
    let _ = write!(out, "{:<22}", "simulation speed");
    for (s, wall) in runs {
        let rate = s.cycles as f64 * s.sms as f64 / wall.as_secs_f64().max(1e-9);
        let _ = write!(out, "{:>14}", format!("{:.2}M SMc/s", rate / 1e6));
    }
    out.push('\n');
    out
}

pub use crate::output::{
    exit_interrupted, live_temporaries, remove_live_temporaries, remove_temporaries_on_interrupt,
    sweep_stale, write_atomic, OutputSet, PendingFile,
};

/// The columns of [`run_csv_row`], in order (stable names, documented in docs/results.md).
pub const RUN_CSV_COLUMNS: &[&str] = &[
    "kernel",
    "scheduler",
    "sms",
    "cycles",
    "warp_instructions",
    "ipc",
    "peak_ipc",
    "l1_hit_rate",
    "l1_reservation_fails",
    "lsu_stall_fraction",
    "l2_hit_rate",
    "dram_utilization",
    "dram_bytes_per_cycle",
    "mp_fraction",
    "owner_changes",
    "reexecutions",
    "hits_under_miss",
];

/// One run's values in the order of [`RUN_CSV_COLUMNS`], without a line end.
pub fn run_csv_row(s: &RunStats) -> String {
    format!(
        "{},{},{},{},{},{:.6},{:.6},{:.6},{},{:.6},{:.6},{:.6},{:.6},{:.6},{},{},{}",
        s.kernel,
        s.scheduler,
        s.sms,
        s.cycles,
        s.warp_instructions,
        s.ipc,
        s.peak_ipc,
        s.l1_hit_rate,
        s.l1_reservation_fails,
        s.lsu_stall_fraction,
        s.l2.hit_rate(),
        s.dram_utilization,
        s.dram_bytes_per_cycle,
        s.mp_fraction,
        s.mas.owner_changes,
        s.car.reexecutions,
        s.car.hits_under_miss
    )
}

/// The closing line of a run, as GPGPU-Sim users expect: wall time and simulation speed.
pub fn exit_summary(s: &RunStats, wall: Duration) -> String {
    let secs = wall.as_secs_f64().max(1e-9);
    format!(
        "{} / {}: {} cycles, {} warp instructions in {:.2} s of wall time ({:.0} cycles/s, {:.0} SM-cycles/s, {:.0} warp instructions/s)",
        s.kernel,
        s.scheduler,
        s.cycles,
        s.warp_instructions,
        secs,
        s.cycles as f64 / secs,
        s.cycles as f64 * s.sms as f64 / secs,
        s.warp_instructions as f64 / secs
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_table_prints_mascar_counters_only_where_they_apply() {
        let mut lrr = RunStats {
            kernel: "k".into(),
            scheduler: "lrr".into(),
            sms: 1,
            cycles: 100,
            peak_ipc: 2.0,
            ..RunStats::default()
        };
        let plain = summary_table(&[(lrr.clone(), Duration::from_secs(1))]);
        assert!(!plain.contains("MP fraction") && !plain.contains("re-executions"));
        lrr.scheduler = "mas".into();
        lrr.mp_fraction = 0.25;
        lrr.mas.owner_changes = 7;
        let mas = summary_table(&[(lrr.clone(), Duration::from_secs(1))]);
        assert!(mas.contains("MP fraction") && mas.contains("0.250") && !mas.contains("re-executions"));
        let mut mascar = lrr.clone();
        mascar.scheduler = "mascar".into();
        mascar.car.reexecutions = 42;
        mascar.car.queue_full_cycles = 3;
        lrr.scheduler = "lrr".into();
        let both = summary_table(&[(lrr, Duration::from_secs(1)), (mascar, Duration::from_secs(1))]);
        let row = |name: &str| both.lines().find(|l| l.starts_with(name)).unwrap().to_string();
        assert!(row("re-executions").ends_with("42"), "{both}");
        assert!(row("re-executions").contains(" - "), "lrr has no CAR: {both}");
        assert!(row("queue-full cycles").ends_with('3'));
        assert!(row("owner changes").ends_with('7'));
    }
}
