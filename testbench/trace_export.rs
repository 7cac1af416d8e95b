//! `mascar trace export`: built-ins and kernel files written as Accel-Sim traces and run back
//! through the trace reader execute exactly the kernel's instruction stream: the same warp
//! and thread instructions (plus the one EXIT per warp the trace adds) and the same memory
//! instructions of every kind. Bad arguments fail cleanly and leave nothing behind.

use mascar::config::Config;
use mascar::runner::LoadedWorkload;
use mascar::stats::RunStats;
use mascar::workload::trace::TraceReader;
use mascar::workload::trace_export::{export_dir, ExportStats, KERNEL_FILE};
use mascar::workload::Kernel;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mascar-trace-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let _ = std::fs::remove_dir_all(&p);
    p
}

/// The kernel `name` (a built-in or a .kern file) at the default scale, its grid cut to at
/// most `max_ctas` CTAs so that the two runs stay short. A built-in whose host code launches
/// several kernels gives its representative launch (bfs: the largest frontier), as
/// `mascar trace export` does.
fn kernel(name: &str, max_ctas: u32) -> Kernel {
    let mut k = match mascar::workload::builtin::find(name) {
        Some(b) => b.kernel(),
        None => LoadedWorkload::kernel(name).unwrap().first_kernel().unwrap(),
    };
    k.grid = k.grid.min(max_ctas);
    k
}

/// Exports `k`, runs it and its trace on the default machine, and returns the export's
/// counts and both runs' statistics (kernel, trace).
fn round_trip(k: &Kernel, dir: &Path) -> (ExportStats, RunStats, RunStats) {
    let cfg = Config::default();
    let s = export_dir(k, &cfg, dir).unwrap_or_else(|e| panic!("{}: {e:#}", k.name));
    let direct = mascar::engine::gpu(&cfg).unwrap().run(k, None).unwrap();
    // `run_on` itself checks that the run executed the trace's warp and thread instructions.
    let traced = LoadedWorkload::trace(dir).unwrap();
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    let (back, _) = traced.run_on(&mut gpu, &mut |_, _, _, _| {}).unwrap().remove(0);
    (s, direct, back)
}

/// The trace run executes the kernel's instructions exactly: the warp and thread counts are
/// the kernel run's plus the EXITs, and every kind of memory instruction is issued as often
/// (texture loads come back as global loads). Returns the runs for further checks.
fn assert_round_trip(name: &str, max_ctas: u32) -> (ExportStats, RunStats, RunStats) {
    let k = kernel(name, max_ctas);
    let dir = scratch(&k.name);
    let (s, a, b) = round_trip(&k, &dir);
    let warps = k.grid as u64 * k.warps_per_cta() as u64;
    assert_eq!(s.exit_warps, warps, "{name}: one EXIT per warp");
    assert_eq!(s.exit_threads, k.grid as u64 * k.block as u64, "{name}");
    assert_eq!(
        a.warp_instructions,
        s.kernel_warp_instructions(),
        "{name}: export walk"
    );
    assert_eq!(a.sm.thread_instructions, s.kernel_thread_instructions(), "{name}");
    assert_eq!(
        b.warp_instructions,
        a.warp_instructions + warps,
        "{name}: warp instructions"
    );
    assert_eq!(
        b.sm.thread_instructions,
        a.sm.thread_instructions + s.exit_threads,
        "{name}: thread instructions"
    );
    assert_eq!(
        b.sm.global_loads,
        a.sm.global_loads + s.tex_loads,
        "{name}: global loads"
    );
    assert_eq!(b.sm.global_stores, a.sm.global_stores, "{name}: global stores");
    assert_eq!(b.sm.global_atomics, a.sm.global_atomics, "{name}: atomics");
    assert_eq!(
        b.sm.shared_accesses, a.sm.shared_accesses,
        "{name}: shared accesses"
    );
    assert_eq!(b.sm.ctas_completed, k.grid as u64, "{name}");
    if s.tex_loads == 0 {
        // Same addresses and widths: the coalescer makes the same line requests.
        assert_eq!(
            b.sm.coalesced_requests, a.sm.coalesced_requests,
            "{name}: coalesced requests"
        );
    }
    println!(
        "{name} ({} CTAs): {} warp / {} thread instructions; cycles {} direct, {} from the trace",
        k.grid, a.warp_instructions, a.sm.thread_instructions, a.cycles, b.cycles
    );
    let _ = std::fs::remove_dir_all(&dir);
    (s, a, b)
}

/// Divergence (if, per-lane loops) and data-dependent addresses from value loads: the whole
/// bfs grid.
#[test]
fn bfs_round_trips_with_its_divergent_stream() {
    let (_, a, _) = assert_round_trip("bfs", u32::MAX);
    // The kernel diverges: SIMD efficiency far from 1, so the masks were carried.
    assert!(a.sm.thread_instructions < a.warp_instructions * 32 / 2);
}

/// Reductions without a destination (`red.global` → RED).
#[test]
fn histo_1_round_trips_with_its_reductions() {
    let (_, a, _) = assert_round_trip("histo-1", u32::MAX);
    assert!(a.sm.global_atomics > 0);
}

/// Atomics with a destination (`atom.global` → ATOMG) and constant loads (→ LDC).
#[test]
fn mrig_1_round_trips_with_its_atomics_and_constant_loads() {
    let (s, a, _) = assert_round_trip("mrig-1", 30);
    assert!(a.sm.global_atomics > 0);
    assert!(s.const_loads > 0);
}

/// Shared memory and barriers (pathfinder), integer divides (bp-1).
#[test]
fn barrier_and_shared_memory_kernels_round_trip() {
    let (_, a, _) = assert_round_trip("pathfinder", 30);
    assert!(a.sm.shared_accesses > 0);
    assert_round_trip("bp-1", 30);
}

/// Texture loads (→ LDG.E.CI global loads).
#[test]
fn kmeans_2_round_trips_with_its_texture_loads_as_global_loads() {
    let (s, _, _) = assert_round_trip("kmeans-2", 30);
    assert!(s.tex_loads > 0);
}

/// A kernel file (a 2-D block).
#[test]
fn a_kernel_file_round_trips() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbench/data/stream.kern");
    assert_round_trip(path.to_str().unwrap(), 30);
}

/// The header carries what Accel-Sim's trace_parser.cc reads, and the file what its parser
/// needs (every line ends with a newline, CTAs in launch order, `insts =` counts right).
#[test]
fn the_header_and_layout_are_accel_sims() {
    let k = kernel("pathfinder", 3);
    let dir = scratch("layout");
    let s = export_dir(&k, &Config::default(), &dir).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("kernelslist.g")).unwrap(),
        format!("{KERNEL_FILE}\n")
    );
    let mut r = TraceReader::open(dir.join(KERNEL_FILE)).unwrap();
    let h = r.header().clone();
    assert_eq!(h.kernel_name, k.name);
    assert_eq!(h.kernel_id, Some(1));
    assert_eq!(h.grid_dim, [k.grid, 1, 1]);
    assert_eq!(h.block_dim, [k.block, 1, 1]);
    assert_eq!(h.shmem, Some(k.shared_bytes));
    assert_eq!(h.nregs, Some(k.regs));
    assert_eq!(h.binary_version, Some(61));
    assert_eq!(h.tracer_version, 4);
    assert!(!h.lineinfo);
    assert!(h.other.is_empty(), "{:?}", h.other);
    let mut n = 0u64;
    let mut ctas = 0;
    while let Some(c) = r.next_cta() {
        let c = c.unwrap();
        assert_eq!(c.id, [ctas, 0, 0]);
        ctas += 1;
        for w in &c.warps {
            let last = w.last().unwrap();
            assert_eq!(r.opcode_name(last.opcode), Some("EXIT"));
            n += w.len() as u64;
        }
    }
    assert_eq!(ctas, k.grid);
    assert_eq!(n, s.warp_instructions);
    assert!(r.unknown_opcodes().is_empty());
    let text = std::fs::read_to_string(dir.join(KERNEL_FILE)).unwrap();
    assert!(text.ends_with('\n'));
    assert!(text.contains("\n#traces format = "));
    assert!(text.contains(" BAR.SYNC 0 0\n") && text.contains(" LDS.U.32 "));
    let _ = std::fs::remove_dir_all(&dir);
}

fn mascar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn assert_clean_failure(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
}

#[test]
fn the_command_exports_warns_about_read_only_loads_and_fails_cleanly() {
    let dir = scratch("cli");
    let d = dir.to_str().unwrap();
    let out = mascar(&["trace", "export", "--kernel", "mrig-1", "--out", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.starts_with("warning: mrig-1: ") && err.contains("ld.const"),
        "{err}"
    );
    assert!(dir.join(KERNEL_FILE).is_file() && dir.join("kernelslist.g").is_file());
    // No temporaries left beside the files.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // A kernel without texture or constant loads: no warning.
    let quiet = scratch("cli-bfs");
    let out = mascar(&["trace", "export", "-k", "bfs", "--out", quiet.to_str().unwrap()]);
    assert!(out.status.success() && out.stderr.is_empty());
    let _ = std::fs::remove_dir_all(&quiet);

    // An unknown kernel: an error, and no directory.
    let missing = scratch("cli-missing");
    let out = mascar(&[
        "trace",
        "export",
        "-k",
        "no-such-kernel",
        "--out",
        missing.to_str().unwrap(),
    ]);
    assert_clean_failure(&out, "unknown kernel `no-such-kernel`");
    assert!(!missing.exists());

    // The output is a file, or lies under one: an error, the file untouched.
    let file = scratch("cli-file");
    std::fs::write(&file, "keep").unwrap();
    let out = mascar(&["trace", "export", "-k", "bfs", "--out", file.to_str().unwrap()]);
    assert_clean_failure(&out, "not a directory");
    let under = file.join("sub");
    let out = mascar(&["trace", "export", "-k", "bfs", "--out", under.to_str().unwrap()]);
    assert_clean_failure(&out, "cannot write");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir_all(&dir);
}
