//! Real Accel-Sim traces (`testbench/data/traces/`, copied from the shared material): every one runs to completion under every
//! scheduler, simulating exactly the trace's warp instructions, with every request answered;
//! where the tools that made a trace counted instructions, our count of the same trace
//! agrees. Cycles are reported beside the peer's figure (a different machine: not compared).

use crate::shared_traces;

use mascar::config::Config;
use mascar::sched::SchedulerKind;
use mascar::workload::trace_kernel;
use shared_traces::{kernels, traces};
use std::path::Path;

/// Real instruction streams (divergence, data-dependent addresses) under every scheduler
/// (issue 16 §4): each finishes (a stuck run is stopped by the watchdog with an error, which
/// fails here) and simulates the same warp and thread instructions, the trace's.
#[test]
fn every_shared_trace_runs_to_completion_under_every_scheduler_with_the_traces_instruction_count() {
    assert_eq!(SchedulerKind::ALL.len(), 7);
    for dir in traces() {
        let ks = kernels(&dir);
        assert!(!ks.is_empty(), "{}: no kernel", dir.display());
        let peer = trace_kernel::peer_statistics(&dir);
        for &s in SchedulerKind::ALL {
            let cfg = Config {
                scheduler: s,
                ..Config::default()
            };
            let mut gpu = mascar::engine::gpu(&cfg).unwrap();
            for t in &ks {
                let r = gpu
                    .run(&t.fresh_kernel().unwrap(), None)
                    .unwrap_or_else(|e| panic!("{} under {s}: {e}", dir.display()));
                assert_eq!(
                    r.warp_instructions,
                    t.trace_instructions,
                    "{} under {s}",
                    dir.display()
                );
                // Each instruction runs with its recorded active mask: the thread
                // instructions (and so SIMD efficiency) are the trace's too.
                assert_eq!(
                    r.sm.thread_instructions,
                    t.thread_instructions,
                    "{} under {s}: thread instructions",
                    dir.display()
                );
                assert_eq!(r.sm.requests_sent, r.sm.replies_received);
                assert_eq!(r.sm.ctas_completed, t.kernel.grid as u64);
                println!(
                    "{} / {s}: {} cycles, {} warp instructions; peer: {peer:?}",
                    dir.file_name().unwrap().to_string_lossy(),
                    r.cycles,
                    r.warp_instructions
                );
            }
        }
        // The peers' instruction counts of the same trace: stats.csv counts warp
        // instructions, Accel-Sim's log thread instructions.
        let warp: u64 = ks.iter().map(|t| t.trace_instructions).sum();
        let thread: u64 = ks.iter().map(|t| t.thread_instructions).sum();
        for (src, stat, value) in &peer {
            let v: u64 = match value.parse() {
                Ok(v) => v,
                Err(_) => continue,
            };
            match (src.as_str(), stat.as_str()) {
                ("stats.csv", "total_insts") => assert_eq!(warp, v, "{}", dir.display()),
                ("accelsim_log.csv", "gpu_total_instructions") => assert_eq!(thread, v, "{}", dir.display()),
                _ => {}
            }
        }
    }
}

#[test]
fn a_trace_with_a_wrong_instruction_count_is_refused_with_file_and_line() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testbench/data/traces/vectoradd-100-32-trace/kernel-1.traceg");
    let text = std::fs::read_to_string(&src).unwrap();
    // Claim one instruction more for the first warp than it has.
    let at = text.find("insts = ").unwrap();
    let end = at + text[at..].find('\n').unwrap();
    let n: u64 = text[at + 8..end].trim().parse().unwrap();
    let bad = format!("{}insts = {}{}", &text[..at], n + 1, &text[end..]);
    let dir = std::env::temp_dir().join(format!("mascar-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.traceg");
    std::fs::write(&path, bad).unwrap();
    let err = trace_kernel::load(&path).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:", path.display())), "{err}");
    assert!(
        err.split(':').nth(1).is_some_and(|l| l.parse::<u32>().is_ok()),
        "no line in {err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A named kernel maker per run.
type Runs = Vec<(String, Box<dyn Fn() -> mascar::workload::Kernel>)>;

/// Every kernel of the shared traces. A trace kernel streams its CTAs from the file: each
/// run takes a fresh one.
fn trace_runs() -> Runs {
    let mut runs: Runs = Vec::new();
    for dir in traces() {
        for t in kernels(&dir) {
            runs.push((
                dir.display().to_string(),
                Box::new(move || t.fresh_kernel().unwrap()),
            ));
        }
    }
    runs
}

/// SMs left with no work once every CTA is handed out are not stepped (issue 15 §8): that
/// must change no statistic. The shared traces have fewer CTAs than SMs, so most SMs rest
/// from the start; srad-1 (15 SMs) and sad-2 (4 SMs) have tails in which SMs finish one after
/// another.
#[test]
fn skipping_sms_at_rest_changes_no_statistic() {
    let mut runs = trace_runs();
    // sad-2: a built-in that diverges, uses barriers and enters MP. srad-1: an SM's last
    // warp is often the owner, so the SM comes to rest at the clock edge that ends MP, and
    // the return to EP, which MAS's statistics count the cycle after, must be counted by the
    // rest cycle too (issue 29 §3).
    for name in ["sad-2", "srad-1"] {
        runs.push((
            name.into(),
            Box::new(move || mascar::workload::builtin::find(name).unwrap().kernel()),
        ));
    }
    for (what, kernel) in &runs {
        for &s in SchedulerKind::ALL {
            let cfg = Config {
                scheduler: s,
                // sad-2 also on a small machine, where SMs come to rest at other times.
                sms: if what == "sad-2" { 4 } else { 15 },
                ..Config::default()
            };
            let run = |step: bool| {
                let mut gpu = mascar::engine::gpu(&cfg).unwrap();
                gpu.step_idle_sms = step;
                let r = gpu.run(&kernel(), None).unwrap();
                assert!(r.warp_instructions > 0, "{what} under {s}");
                serde_json::to_value(r).unwrap()
            };
            assert_eq!(run(false), run(true), "{what} under {s}");
        }
    }
}

/// The SMs of a cycle may step on several threads (`--threads`, issue 31): the whole
/// statistics record must be the same at 1, 2 and 7 threads, on the default machine (15
/// SMs), with SMs resting (the shared traces) and under load (histo-1, every SM busy),
/// under every scheduler. Seven threads on two cores meet at every cycle's barrier by
/// yielding to each other, so the short form runs them under Mascar only (every block in
/// use: 15 SMs split 3, 2, 2, …); the long form (`MASCAR_LONG_TESTS=1`) under every
/// scheduler.
#[test]
fn threads_change_no_statistic() {
    let mut runs = trace_runs();
    runs.push((
        "histo-1".into(),
        Box::new(|| mascar::workload::builtin::find("histo-1").unwrap().kernel()),
    ));
    for (what, kernel) in &runs {
        for &s in SchedulerKind::ALL {
            let cfg = Config {
                scheduler: s,
                ..Config::default()
            };
            let run = |threads: usize| {
                let mut gpu = mascar::engine::gpu(&cfg).unwrap();
                gpu.set_threads(threads);
                let r = gpu.run(&kernel(), None).unwrap();
                assert!(r.warp_instructions > 0, "{what} under {s}");
                serde_json::to_value(r).unwrap()
            };
            let one = run(1);
            let many = s == SchedulerKind::Mascar || crate::long_form();
            let counts: &[usize] = if many { &[2, 7] } else { &[2] };
            for &threads in counts {
                assert_eq!(run(threads), one, "{what} under {s} at {threads} threads");
            }
        }
    }
}
