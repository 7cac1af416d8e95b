//! The global cycle skip (`src/gpu/skip.rs`, issue 31) jumps over cycles in which no unit
//! acts and credits the counters those cycles would have counted. It must change no
//! statistic: the whole run record is compared with the skip on and off, on every built-in
//! under every scheduler on a small machine, on the default machine (15 SMs), on the
//! shared traces and on kernels run back to back. Each part also checks that cycles were
//! skipped, so that it tests the skip.

use mascar::config::{Config, DramModel, IssueOrder};
use mascar::sched::SchedulerKind;
use mascar::workload::builtin::builtins;
use mascar::workload::Kernel;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::builtin_runs::{builtin_runs, stats_of};
use crate::parallel;
use crate::shared_traces;

/// The run record as JSON, and the cycles the skip jumped over.
fn run(cfg: &Config, k: &Kernel, skip: bool) -> (serde_json::Value, u64) {
    let mut gpu = mascar::engine::gpu(cfg).unwrap();
    gpu.set_cycle_skip(skip);
    let r = gpu.run(k, None).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    (record(r), gpu.sm_cycles_skipped())
}

/// The run record as JSON, without host time (not a statistic).
fn record(r: mascar::stats::RunStats) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    if let Some(o) = v.as_object_mut() {
        o.retain(|key, _| !key.starts_with("wall"));
    }
    v
}

/// Compares the two runs; returns the cycles skipped and the cycles run. `kernel` gives a
/// fresh kernel for each run (a trace kernel reads its CTAs once).
fn same_with_and_without(cfg: &Config, kernel: &dyn Fn() -> Kernel, what: &str) -> (u64, u64) {
    let (stepped, none) = run(cfg, &kernel(), false);
    assert_eq!(none, 0, "{what}: the skip was off");
    let (skipped, n) = run(cfg, &kernel(), true);
    assert!(
        stepped == skipped,
        "{what}: the skip changed the run record:\n{}",
        diff(&stepped, &skipped)
    );
    (n, stepped["cycles"].as_u64().unwrap())
}

/// The fields that differ, one per line (the records are long).
fn diff(a: &serde_json::Value, b: &serde_json::Value) -> String {
    let mut out = String::new();
    walk(a, b, "", &mut out);
    out
}

fn walk(a: &serde_json::Value, b: &serde_json::Value, at: &str, out: &mut String) {
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            for (key, va) in x {
                let vb = y.get(key).unwrap_or(&serde_json::Value::Null);
                walk(va, vb, &format!("{at}.{key}"), out);
            }
        }
        (serde_json::Value::Array(x), serde_json::Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                walk(va, vb, &format!("{at}[{i}]"), out);
            }
        }
        _ if a != b => out.push_str(&format!("{at}: stepped {a}, skipped {b}\n")),
        _ => {}
    }
}

/// Every built-in (its first 8 CTAs) under every scheduler on 2 SMs, the golden table's
/// runs (`builtin_runs`, skip on), against the same runs with the skip off.
#[test]
fn the_skip_changes_no_statistic_of_any_builtin() {
    let runs = builtin_runs();
    let skipped: u64 = runs.iter().map(|r| r.skipped).sum();
    parallel::on_two_workers(runs, |r| {
        let what = format!("{} under {}", r.name, r.scheduler);
        let (stepped, none) = run(&r.cfg, &r.kernel, false);
        assert_eq!(none, 0, "{what}: the skip was off");
        let with_skip = record(stats_of(r).clone());
        assert!(
            stepped == with_skip,
            "{what}: the skip changed the run record:\n{}",
            diff(&stepped, &with_skip)
        );
    });
    assert!(
        skipped > 0,
        "no cycle was skipped: the test does not test the skip"
    );
}

/// The default machine (15 SMs, default queues) on whole built-ins that leave it waiting:
/// bfs (few warps, dependent loads) and sad-2 (barriers, MP), under LRR, GTO and Mascar; and
/// one with the fixed-latency DRAM model.
#[test]
fn the_skip_changes_no_statistic_on_the_default_machine() {
    let mut skipped = 0;
    for name in ["bfs", "sad-2"] {
        let k = mascar::workload::builtin::find(name).unwrap().kernel();
        for s in [SchedulerKind::Lrr, SchedulerKind::Gto, SchedulerKind::Mascar] {
            let cfg = Config {
                scheduler: s,
                ..Config::default()
            };
            skipped += same_with_and_without(&cfg, &|| k.clone(), &format!("{name} under {s}")).0;
        }
    }
    let k = mascar::workload::builtin::find("bfs").unwrap().kernel();
    let cfg = Config {
        dram_model: DramModel::Fixed,
        ..Config::default()
    };
    skipped += same_with_and_without(&cfg, &|| k.clone(), "bfs, fixed DRAM").0;
    assert!(
        skipped > 0,
        "no cycle was skipped: the test does not test the skip"
    );
}

/// With `issue_order = rotate` the first scheduler moves on in every cycle the SM holds a
/// warp, skipped or not: every built-in (first 8 CTAs, 2 SMs) under LRR and Mascar, and
/// bfs (LRR, Mascar) and histo-2 (GTO) whole on the default machine. With the L1 latency
/// queue on as well (the correlation's settings): a refused access waiting in it retries
/// every cycle, so no cycle with one is skipped.
#[test]
fn the_skip_changes_no_statistic_with_the_rotating_issue_order() {
    let on_builtins = AtomicU64::new(0);
    parallel::on_two_workers(builtins(), |b| {
        let mut k = b.kernel();
        k.grid = k.grid.min(8);
        for s in [SchedulerKind::Lrr, SchedulerKind::Mascar] {
            let cfg = Config {
                sms: 2,
                scheduler: s,
                issue_order: IssueOrder::Rotate,
                l1_access_queue: true,
                ..Config::default()
            };
            let what = format!("{} under {s}, rotating, L1 latency queue", b.name);
            on_builtins.fetch_add(
                same_with_and_without(&cfg, &|| k.clone(), &what).0,
                Ordering::Relaxed,
            );
        }
    });
    let mut skipped = on_builtins.into_inner();
    for (name, s) in [
        ("bfs", SchedulerKind::Lrr),
        ("bfs", SchedulerKind::Mascar),
        ("histo-2", SchedulerKind::Gto),
    ] {
        let k = mascar::workload::builtin::find(name).unwrap().kernel();
        {
            let cfg = Config {
                scheduler: s,
                issue_order: IssueOrder::Rotate,
                l1_access_queue: true,
                ..Config::default()
            };
            skipped += same_with_and_without(
                &cfg,
                &|| k.clone(),
                &format!("{name} under {s}, rotating, L1 latency queue"),
            )
            .0;
        }
    }
    assert!(
        skipped > 0,
        "no cycle was skipped: the test does not test the skip"
    );
}

/// The shared Accel-Sim traces (fewer CTAs than SMs, so most SMs rest) under every
/// scheduler, on the default machine.
#[test]
fn the_skip_changes_no_statistic_of_the_shared_traces() {
    let mut skipped = 0;
    for dir in shared_traces::traces() {
        for t in shared_traces::kernels(&dir) {
            for &s in SchedulerKind::ALL {
                let cfg = Config {
                    scheduler: s,
                    ..Config::default()
                };
                let what = format!("{} under {s}", t.path.display());
                skipped += same_with_and_without(&cfg, &|| t.fresh_kernel().unwrap(), &what).0;
            }
        }
    }
    assert!(
        skipped > 0,
        "no cycle was skipped: the test does not test the skip"
    );
}

/// Kernels run back to back on one GPU (the L2, DRAM and dispatch pointer carry over, each
/// SM starts fresh): both kernels' records are the same with and without the skip, on the
/// default machine under LRR and Mascar; under Mascar each kernel waits a 700-cycle launch
/// latency first, which the skip jumps over.
#[test]
fn the_skip_changes_no_statistic_of_kernels_run_back_to_back() {
    let kernels: Vec<Kernel> = ["bfs", "sad-2"]
        .iter()
        .map(|name| {
            let mut k = mascar::workload::builtin::find(name).unwrap().kernel();
            k.grid = k.grid.min(30);
            k
        })
        .collect();
    let mut skipped = 0;
    for s in [SchedulerKind::Lrr, SchedulerKind::Mascar] {
        let cfg = Config {
            scheduler: s,
            kernel_launch_latency: if s == SchedulerKind::Mascar { 700 } else { 0 },
            ..Config::default()
        };
        let records = |skip: bool| {
            let mut gpu = mascar::engine::gpu(&cfg).unwrap();
            gpu.set_cycle_skip(skip);
            let runs: Vec<_> = kernels
                .iter()
                .map(|k| serde_json::to_value(gpu.run(k, None).unwrap()).unwrap())
                .collect();
            (runs, gpu.sm_cycles_skipped())
        };
        let (stepped, _) = records(false);
        let (with_skip, n) = records(true);
        for (i, (a, b)) in stepped.iter().zip(&with_skip).enumerate() {
            assert!(a == b, "kernel {i} under {s}:\n{}", diff(a, b));
        }
        skipped += n;
    }
    assert!(
        skipped > 0,
        "no cycle was skipped: the test does not test the skip"
    );
}
