//! Buffer placement (issue 15 §3): the configured placement reaches every path that runs a
//! kernel-format kernel, and `compare --placements N` reports speedups with their min–max.

use std::path::PathBuf;
use std::process::{Command, Output};

use mascar::config::{BufferPlacement, Config};
use mascar::runner::LoadedWorkload;

fn mascar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mascar-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Eight 64 KiB arrays read at the same index: packed, every array's element i falls into
/// the same L1 set (64 KiB is a multiple of the 8 KiB the 64 sets span), more lines than the
/// set has ways; spread skews the arrays 9 lines apart.
const EIGHT_ARRAYS: &str = "kernel eight-arrays
grid 8
block 256
buffer A 64K
buffer B 64K
buffer C 64K
buffer D 64K
buffer E 64K
buffer F 64K
buffer G 64K
buffer H 64K
loop i 2 {
  ld.global r1, A[4*gtid + 8192*i]
  ld.global r2, B[4*gtid + 8192*i]
  ld.global r3, C[4*gtid + 8192*i]
  ld.global r4, D[4*gtid + 8192*i]
  ld.global r5, E[4*gtid + 8192*i]
  ld.global r6, F[4*gtid + 8192*i]
  ld.global r7, G[4*gtid + 8192*i]
  ld.global r8, H[4*gtid + 8192*i]
  add r9, r1, r2
  add r9, r9, r3
  add r9, r9, r4
  add r9, r9, r5
  add r9, r9, r6
  add r9, r9, r7
  add r9, r9, r8
  st.global A[4*gtid + 8192*i], r9
}
";

fn cfg(placement: BufferPlacement, index: u32) -> Config {
    Config {
        sms: 1,
        buffer_placement: placement,
        placement: index,
        ..Config::default()
    }
}

/// A `.kern` file run through the runner, as `mascar run -k FILE` does.
#[test]
fn kernel_file_runs_under_the_configured_placement() {
    let path = scratch("eight-arrays.kern");
    std::fs::write(&path, EIGHT_ARRAYS).unwrap();
    let w = LoadedWorkload::kernel(path.to_str().unwrap()).unwrap();
    let run = |c: Config| w.run(&c, "lrr", None).unwrap().total;
    let packed = run(cfg(BufferPlacement::Packed, 1));
    let spread = run(cfg(BufferPlacement::Spread, 1));
    assert!(
        packed.l1.fail_line_alloc > spread.l1.fail_line_alloc,
        "packed arrays share L1 sets: {} line-allocation fails packed, {} spread",
        packed.l1.fail_line_alloc,
        spread.l1.fail_line_alloc
    );
    // Deterministic, and placement 2 is another layout of the same kernel.
    assert_eq!(run(cfg(BufferPlacement::Packed, 1)).cycles, packed.cycles);
    let second = run(cfg(BufferPlacement::Packed, 2));
    assert_eq!(second.warp_instructions, packed.warp_instructions);
    assert_eq!(run(cfg(BufferPlacement::Packed, 2)).cycles, second.cycles);
}

/// A built-in through the simulator entry point the experiment matrix uses.
#[test]
fn builtins_run_under_the_configured_placement() {
    let b = mascar::workload::builtin::find("srad-2").unwrap();
    let k = b.kernel();
    let sim = |c: Config| mascar::engine::simulate(&c, &k, None).unwrap();
    let c = |p| Config {
        sms: 2,
        max_cycles: 5_000_000,
        ..cfg(p, 1)
    };
    let packed = sim(c(BufferPlacement::Packed));
    let spread = sim(c(BufferPlacement::Spread));
    assert_eq!(packed.warp_instructions, spread.warp_instructions);
    assert_ne!(
        (packed.cycles, packed.l1.fail_line_alloc),
        (spread.cycles, spread.l1.fail_line_alloc),
        "the placement must change where srad-2's planes fall in L1"
    );
}

#[test]
fn compare_with_two_placements_reports_min_max() {
    let out = scratch("cmp");
    let r = mascar(&[
        "compare",
        "--kernel",
        "histo-1",
        "--scheduler",
        "gto",
        "--sms",
        "1",
        "--placements",
        "2",
        "--threads",
        "2",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // `1.234 (1.100–1.400)`: the geometric mean, then the range over the placements.
    let row = stdout
        .lines()
        .find(|l| l.starts_with("histo-1"))
        .unwrap_or_else(|| panic!("no histo-1 row: {stdout}"));
    let cell = row.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
    let nums: Vec<f64> = cell
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(nums.len(), 3, "mean (min–max) in `{row}`");
    assert!(nums[1] <= nums[0] && nums[0] <= nums[2], "{row}");
    assert!(stdout.contains("placements 1–2"), "{stdout}");

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "lrr and gto under placements 1 and 2");
    let mut placements: Vec<u64> = runs
        .iter()
        .map(|r| r["config"]["placement"].as_u64().unwrap())
        .collect();
    placements.sort();
    assert_eq!(placements, [1, 1, 2, 2]);
    let csv = std::fs::read_to_string(out.join("speedup.csv")).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .ends_with("speedup_min,speedup_max,placements"));
    assert!(csv
        .lines()
        .any(|l| l.starts_with("histo-1,kernel,gto,") && l.ends_with(",2")));
    let md = std::fs::read_to_string(out.join("speedup.md")).unwrap();
    assert!(md.contains("placements 1–2"), "{md}");

    // Sharded and merged: the same report (runs are told apart by their placement too).
    let slices: Vec<PathBuf> = ["1/2", "2/2"]
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let dir = scratch(&format!("slice{i}"));
            let r = mascar(&[
                "compare",
                "--kernel",
                "histo-1",
                "--scheduler",
                "gto",
                "--sms",
                "1",
                "--placements",
                "2",
                "--threads",
                "1",
                "-q",
                "--shard",
                k,
                "--out",
                dir.to_str().unwrap(),
            ]);
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            dir
        })
        .collect();
    let merged = scratch("merged");
    let r = mascar(&[
        "merge",
        slices[0].to_str().unwrap(),
        slices[1].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        std::fs::read(merged.join("speedup.md")).unwrap(),
        std::fs::read(out.join("speedup.md")).unwrap()
    );

    let bad = mascar(&["compare", "--kernel", "histo-1", "--placements", "0"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--placements"));
}
