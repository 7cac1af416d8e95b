//! The `mascar` binary as a user meets it: listing, a run with JSON output, and bad input that
//! must give a one-line error and a non-zero exit, never a panic.

use std::path::PathBuf;
use std::process::{Command, Output};

fn mascar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mascar-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Asserts a clean failure: non-zero exit, one `error:` line naming `needle`, no panic.
fn assert_fails_with(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure, stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one-line error expected: {err}"
    );
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(needle), "`{needle}` not in: {err}");
}

#[test]
fn kernels_lists_every_builtin_with_class() {
    let out = mascar(&["kernels"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() >= 18);
    for class in ["compute", "bandwidth", "cache-sensitive"] {
        assert!(
            text.lines()
                .filter(|l| l.split_whitespace().nth(1) == Some(class))
                .count()
                >= 6,
            "{class}"
        );
    }
}

#[test]
fn run_writes_json_with_the_documented_keys() {
    let json = scratch("run.json");
    let out = mascar(&[
        "run",
        "-k",
        "histo-1",
        "-s",
        "lrr",
        "--sms",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("IPC") && stdout.contains("L1 hit rate"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "mascar-results/1");
    assert_eq!(doc["runs"][0]["kernels"].as_array().unwrap().len(), 1);
    let v = &doc["runs"][0]["total"];
    for key in [
        "kernel",
        "scheduler",
        "cycles",
        "warp_instructions",
        "ipc",
        "l1_hit_rate",
        "lsu_stall_fraction",
        "dram_utilization",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["kernel"], "histo-1");
    assert!(v["cycles"].as_u64().unwrap() > 0);
}

#[test]
fn malformed_kernel_file_names_file_line_and_column() {
    let path = scratch("bad.kern");
    std::fs::write(&path, "kernel bad\ngrid 1\nblock 32\nadd r1, x2\n").unwrap();
    let out = mascar(&["run", "-k", path.to_str().unwrap()]);
    assert_fails_with(&out, "bad.kern:4:");
}

#[test]
fn unknown_kernel_and_scheduler_are_refused() {
    assert_fails_with(
        &mascar(&["run", "-k", "no-such-kernel"]),
        "unknown kernel `no-such-kernel`",
    );
    assert_fails_with(
        &mascar(&["run", "-k", "bfs", "-s", "fifo"]),
        "unknown scheduler `fifo`",
    );
}

#[test]
fn impossible_configs_are_refused_with_the_key() {
    assert_fails_with(&mascar(&["run", "-k", "bfs", "--set", "l1_mshrs=0"]), "l1_mshrs");
    assert_fails_with(&mascar(&["run", "-k", "bfs", "--set", "l1_msrhs=4"]), "l1_msrhs");
    assert_fails_with(&mascar(&["run", "-k", "bfs", "--sms", "0"]), "sms");
    // sgemm's CTA has 128 threads; an SM with 64 cannot hold one.
    assert_fails_with(
        &mascar(&["run", "-k", "sgemm", "--set", "threads_per_sm=64"]),
        "threads_per_sm",
    );
}

#[test]
fn every_subcommand_has_help() {
    for sub in ["kernels", "run", "bench", "config", "compare", "trace"] {
        let out = mascar(&[sub, "--help"]);
        assert!(out.status.success(), "{sub}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"), "{sub}");
    }
}

#[test]
fn config_dump_round_trips_through_config_file() {
    let out = mascar(&["config", "--dump", "--set", "l1_mshrs=32"]);
    assert!(out.status.success());
    let path = scratch("cfg.toml");
    std::fs::write(&path, &out.stdout).unwrap();
    let again = mascar(&["config", "--dump", "--config", path.to_str().unwrap()]);
    assert_eq!(again.stdout, out.stdout);
    assert!(String::from_utf8_lossy(&out.stdout).contains("l1_mshrs = 32"));
}

#[test]
fn compare_writes_every_report_file() {
    let out = scratch("cmp");
    let status = mascar(&[
        "compare",
        "--kernels",
        "histo-1",
        "--schedulers",
        "gto,mascar",
        "--sms",
        "1",
        "--set",
        "max_cycles=2000000",
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "2",
        // One placement: three runs below (the default's three placements are tested in
        // testbench/placement.rs).
        "--placements",
        "1",
        "--csv",
        out.join("extra.csv").to_str().unwrap(),
        "--json",
        out.join("extra.json").to_str().unwrap(),
    ]);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    for f in [
        "speedup.md",
        "speedup.csv",
        "speedup.svg",
        "speedup.png",
        "stalls.svg",
        "results.json",
        "runs.csv",
    ] {
        let meta = std::fs::metadata(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(meta.len() > 100, "{f} too small");
    }
    // --csv / --json write the same records as runs.csv / results.json.
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    assert_eq!(read("extra.csv"), read("runs.csv"));
    assert_eq!(read("extra.json"), read("results.json"));
    let md = std::fs::read_to_string(out.join("speedup.md")).unwrap();
    assert!(
        md.contains("1.34") && md.contains("mascar"),
        "paper's figure beside ours"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        doc["runs"].as_array().unwrap().len(),
        3,
        "lrr is added as the baseline"
    );
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert!(stdout.contains("speedup over lrr"), "{stdout}");

    // The same matrix in two slices, merged, gives the same records and table.
    let args = |extra: &[&str]| {
        let mut v = vec![
            "compare",
            "--kernels",
            "histo-1",
            "--schedulers",
            "gto,mascar",
            "--sms",
            "1",
            "--set",
            "max_cycles=2000000",
            "--threads",
            "1",
            "--placements",
            "1",
            "-q",
        ];
        v.extend_from_slice(extra);
        v.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let (s1, s2, merged) = (scratch("shard1"), scratch("shard2"), scratch("merged"));
    for (k, dir) in [("1/2", &s1), ("2/2", &s2)] {
        let a = args(&["--shard", k, "--out", dir.to_str().unwrap()]);
        let r = mascar(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let r = mascar(&[
        "merge",
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // The old spellings --kernels / --schedulers still work (hidden aliases); the merged
    // report is the unsharded one, byte for byte.
    for f in [
        "results.json",
        "runs.csv",
        "speedup.md",
        "speedup.csv",
        "speedup.svg",
        "stalls.svg",
    ] {
        assert!(
            std::fs::read(merged.join(f)).unwrap() == std::fs::read(out.join(f)).unwrap(),
            "{f} differs between the merged and the unsharded report"
        );
    }
    // Overlapping slices are refused.
    let r = mascar(&[
        "merge",
        s1.to_str().unwrap(),
        s1.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("given twice"));
}

#[test]
fn events_writes_one_line_per_event_inside_the_window() {
    let path = scratch("events").join("ev.log");
    let r = mascar(&[
        "run",
        "-k",
        // A kernel whose first 3,000 cycles hold every kind checked below (the rewritten
        // srad-1 takes no owner before cycle 3,000).
        "sad-2",
        "-s",
        "mascar",
        "--sms",
        "1",
        "--events",
        path.to_str().unwrap(),
        "--events-window",
        "0..3000",
        "-q",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let cycle: u64 = f[0].parse().unwrap_or_else(|_| panic!("no cycle in `{line}`"));
        assert!(cycle < 3000, "{line}");
        assert_eq!(f[1], "sm=0", "{line}");
        kinds.insert(f[2].to_string());
    }
    for k in ["issue", "l1", "mshr-alloc", "mshr-free", "owner"] {
        assert!(kinds.contains(k), "no `{k}` event in the window: {kinds:?}");
    }
}

/// The event log names each CTA's launch and retirement (`cta-launch`, `cta-done`, with its
/// index in the grid and its CTA slot): once each per CTA, on the SM that ran it, the launch
/// first. With a launch latency of 5 cycles the first CTAs launch in cycle 6.
#[test]
fn events_log_every_ctas_launch_and_retirement() {
    let kern = scratch("ctas.kern");
    std::fs::write(
        &kern,
        "kernel ctas\ngrid 7\nblock 64\nloop i 3 {\n alu r1, r0\n}\n",
    )
    .unwrap();
    let path = scratch("ctas-ev.log");
    let r = mascar(&[
        "run",
        "-k",
        kern.to_str().unwrap(),
        "--sms",
        "3",
        "--set",
        "kernel_launch_latency=5",
        "--events",
        path.to_str().unwrap(),
        "-q",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = std::fs::read_to_string(&path).unwrap();
    // cta -> (sm, launch cycle, done cycle)
    let mut ctas: std::collections::BTreeMap<u32, (String, u64, Option<u64>)> = Default::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if !f[2].starts_with("cta-") {
            continue;
        }
        let cycle: u64 = f[0].parse().unwrap();
        let cta: u32 = f[3].strip_prefix("cta=").unwrap().parse().unwrap();
        assert!(f[4].starts_with("slot="), "{line}");
        match f[2] {
            "cta-launch" => assert!(
                ctas.insert(cta, (f[1].to_string(), cycle, None)).is_none(),
                "{line}"
            ),
            "cta-done" => {
                let c = ctas
                    .get_mut(&cta)
                    .unwrap_or_else(|| panic!("done before launch: {line}"));
                assert_eq!(c.0, f[1], "{line}");
                assert!(c.1 < cycle && c.2.replace(cycle).is_none(), "{line}");
            }
            other => panic!("unknown event {other}: {line}"),
        }
    }
    assert_eq!(ctas.len(), 7, "{ctas:?}");
    assert!(ctas.values().all(|c| c.2.is_some()), "{ctas:?}");
    assert_eq!(ctas.values().map(|c| c.1).min(), Some(6), "{ctas:?}");
}
