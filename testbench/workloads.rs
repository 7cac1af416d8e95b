//! Workloads measured as the paper measures them (issue 16 §3, §4): `kernels --characterise`
//! prints warp instructions per L1 data miss exactly as a `run --json` of the same kernel
//! counts them, beside the paper's value; `compare --trace` gives a trace a row of its own,
//! classed by that measure under LRR.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Runs the binary; fails the test with its stderr unless it succeeds. Returns stdout.
fn mascar(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(args)
        .output()
        .expect("binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mascar {}: {err}", args.join(" "));
    assert!(!err.contains("panicked"), "{err}");
    String::from_utf8(out.stdout).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mascar-workloads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The whole-GPU statistics of `name` run under LRR on 2 SMs, as `run --json` writes them:
/// the counts `kernels --characterise --sms 2` must agree with.
fn lrr_total_on_two_sms(name: &str, file: &str) -> Value {
    let path = scratch(file);
    mascar(&[
        "run",
        "-k",
        name,
        "-s",
        "lrr",
        "--sms",
        "2",
        "-q",
        "--json",
        path.to_str().unwrap(),
    ]);
    json(&path)["runs"][0]["total"].clone()
}

/// Texture and constant cache misses and merges: what the second ratio adds to L1 data
/// misses.
fn ro_misses(total: &Value) -> u64 {
    ["tex", "constant"]
        .iter()
        .map(|c| u(&total["sm"][c]["misses"]) + u(&total["sm"][c]["merged"]))
        .sum()
}

/// The cells of the markdown row whose first cell is `first`.
fn md_row(table: &str, first: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no row for {first} in:\n{table}"));
    line.trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn characterise_divides_warp_instructions_by_l1_misses_and_merges_as_run_counts_them() {
    let doc_path = scratch("characterise.json");
    let table = mascar(&[
        "kernels",
        "--characterise",
        "-k",
        "srad-1",
        "--kernel",
        "histo-2",
        "--sms",
        "2",
        "--json",
        doc_path.to_str().unwrap(),
    ]);
    let head = md_row(&table, "kernel");
    assert_eq!(
        head,
        [
            "kernel",
            "built-in class",
            "warp insts",
            "L1 data misses",
            "insts/L1 miss",
            "incl. tex+const",
            "paper",
            "class",
            "paper class",
            "agree",
            "ours/paper",
            "within 3×",
            "SIMD eff.",
            "IPC",
            "warps/SM",
            "real run"
        ]
    );
    // The output says which counters make a miss.
    assert!(
        table.contains("`l1.misses`") && table.contains("`l1.hit_reserved`"),
        "{table}"
    );
    let doc = json(&doc_path);
    assert_eq!(doc["schema"], "mascar-characterise/1");
    let rows = doc["kernels"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // MSHR merges, which a count of allocations alone would miss.
    let mut merges = 0;
    // The paper's values (spec §7): srad-1 memory intensive, histo-2 compute intensive.
    for (row, (name, paper)) in rows.iter().zip([("srad-1", 25.0), ("histo-2", 35.9)]) {
        assert_eq!(row["kernel"], name);
        // The same kernel on the same machine under LRR, counted by `run`.
        let total = &lrr_total_on_two_sms(name, &format!("{name}.json"));
        let insts = u(&total["warp_instructions"]);
        let misses = u(&total["l1"]["misses"]) + u(&total["l1"]["hit_reserved"]);
        assert!(misses > 0, "{name}: {total}");
        merges += u(&total["l1"]["hit_reserved"]);
        let measure = insts as f64 / misses as f64;
        assert_eq!(u(&row["warp_instructions"]), insts, "{name}");
        // Neither kernel reads through the texture or constant cache: the second ratio adds
        // their misses, so here it equals the first.
        assert_eq!(u(&row["ro_misses"]), ro_misses(total), "{name}");
        assert_eq!(row["insts_per_any_l1_miss"], row["insts_per_l1_miss"], "{name}");
        assert_eq!(u(&row["l1_data_misses"]), misses, "{name}");
        assert_eq!(row["insts_per_l1_miss"].as_f64(), Some(measure), "{name}");
        assert_eq!(row["paper"].as_f64(), Some(paper), "{name}");
        let class = if measure < 30.0 { "memory" } else { "compute" };
        let paper_class = if paper < 30.0 { "memory" } else { "compute" };
        assert_eq!(row["class"], class, "{name}");
        assert_eq!(row["paper_class"], paper_class, "{name}");
        assert_eq!(
            row["classes_agree"].as_bool(),
            Some(class == paper_class),
            "{name}"
        );
        if paper_class == "memory" {
            let ratio = measure / paper;
            assert_eq!(row["ratio_to_paper"].as_f64(), Some(ratio), "{name}");
            assert_eq!(
                row["within_3x"].as_bool(),
                Some((1.0 / 3.0..=3.0).contains(&ratio)),
                "{name}"
            );
        } else {
            assert!(
                row["ratio_to_paper"].is_null() && row["within_3x"].is_null(),
                "{name}"
            );
        }
        assert_eq!(row["simd_efficiency"], total["simd_efficiency"], "{name}");
        assert_eq!(row["ipc"], total["ipc"], "{name}");
        // The printed row shows the same figures.
        let cells = md_row(&table, name);
        assert_eq!(cells[2], insts.to_string(), "{name}");
        assert_eq!(cells[3], misses.to_string(), "{name}");
        let shown: f64 = cells[4].parse().unwrap();
        assert!(
            (shown - measure).abs() <= 0.01 * measure,
            "{name}: {shown} vs {measure}"
        );
        assert_eq!(cells[5], "—", "{name}: no texture or constant miss");
        assert_eq!(cells[7], class, "{name}");
        assert_eq!(cells[8], paper_class, "{name}");
        // Occupancy at the run's scale and at full scale, as the SM's dispatch limits give it
        // on this 2-SM machine.
        let cfg = mascar::config::Config {
            sms: 2,
            ..Default::default()
        };
        let b = mascar::workload::builtin::find(name).unwrap();
        for (key, cell, scale) in [
            (
                "warps_per_sm",
                14,
                mascar::workload::kernel_format::Scale::Default,
            ),
            (
                "warps_per_sm_full",
                15,
                mascar::workload::kernel_format::Scale::Full,
            ),
        ] {
            let want = mascar::gpu::first_wave_warps_per_sm(&cfg, &b.kernel_at(scale));
            assert_eq!(row[key].as_f64(), Some(want), "{name} {key}");
            assert_eq!(cells[cell], format!("{want:.1}"), "{name} {key}");
        }
        if name == "srad-1" {
            // 16 × 16 threads at 24 registers: 32768 / (24 · 256) = 5 CTAs of 8 warps.
            assert_eq!(row["warps_per_sm"].as_f64(), Some(40.0));
            assert_eq!(row["warps_per_sm_full"].as_f64(), Some(40.0));
        }
        if paper_class == "memory" {
            let shown: f64 = cells[10].parse().unwrap();
            assert!((shown - measure / paper).abs() <= 0.006, "{name}: {shown}");
        } else {
            assert_eq!(cells[10], "—", "{name}");
        }
    }
    assert!(
        merges > 0,
        "neither kernel merged a miss: the test would not see them counted"
    );
}

/// leuko-2 reads only through the texture and constant caches (Rodinia's dilate_kernel), so
/// it has no L1 data miss: its L1-data ratio is infinite and the second ratio counts the
/// texture and constant misses and merges that `run` reports.
#[test]
fn characterise_counts_texture_and_constant_misses_in_the_second_ratio() {
    let doc_path = scratch("characterise-ro.json");
    let table = mascar(&[
        "kernels",
        "--characterise",
        "-k",
        "leuko-2",
        "--sms",
        "2",
        "--json",
        doc_path.to_str().unwrap(),
    ]);
    let row = &json(&doc_path)["kernels"][0];
    let total = &lrr_total_on_two_sms("leuko-2", "leuko-2-ro.json");
    let insts = u(&total["warp_instructions"]);
    assert_eq!(
        u(&total["l1"]["misses"]) + u(&total["l1"]["hit_reserved"]),
        0,
        "{total}"
    );
    let ro = ro_misses(total);
    assert!(u(&total["sm"]["tex"]["misses"]) > 0 && u(&total["sm"]["constant"]["misses"]) > 0);
    assert_eq!(u(&row["warp_instructions"]), insts);
    assert_eq!(u(&row["l1_data_misses"]), 0);
    assert!(row["insts_per_l1_miss"].is_null(), "{row}");
    assert_eq!(u(&row["ro_misses"]), ro);
    assert_eq!(
        row["insts_per_any_l1_miss"].as_f64(),
        Some(insts as f64 / ro as f64)
    );
    // No L1 data miss classes it compute intensive, as the paper does (173).
    assert_eq!(row["class"], "compute");
    assert_eq!(row["classes_agree"].as_bool(), Some(true));
    let cells = md_row(&table, "leuko-2");
    assert_eq!(cells[3], "0");
    assert_eq!(cells[4], "∞");
    let shown: f64 = cells[5].parse().unwrap();
    let measure = insts as f64 / ro as f64;
    assert!((shown - measure).abs() <= 0.01 * measure, "{shown} vs {measure}");
}

#[test]
fn kernels_without_characterise_refuses_machine_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(["kernels", "--sms", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--characterise"), "{err}");
}

/// The speedup.csv rows of kind `kernel` for `kernel`: (scheduler, speedup).
fn csv_kernel_rows(csv: &str, kernel: &str) -> Vec<(String, f64)> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[0] == kernel && c[1] == "kernel")
        .map(|c| (c[2].to_string(), c[3].parse().unwrap()))
        .collect()
}

#[test]
fn compare_takes_a_trace_and_classes_it_by_its_lrr_instructions_per_l1_miss() {
    let trace = "testbench/data/traces/matrixmul-32-32-trace";
    // The default 128-byte lines give it ≈ 69 warp instructions per L1 miss (compute);
    // 32-byte lines four times the misses (memory intensive).
    for (line, class, row) in [
        ("128", "compute", "compute intensive"),
        ("32", "memory-intensive", "all memory intensive"),
    ] {
        let out = scratch(&format!("cmp-{line}"));
        let printed = Command::new(env!("CARGO_BIN_EXE_mascar"))
            .current_dir(REPO)
            .args([
                "compare",
                "--trace",
                trace,
                "-s",
                "gto,mascar",
                "--sms",
                "1",
                "--set",
                &format!("line_bytes={line}"),
                "-q",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            printed.status.success(),
            "{}",
            String::from_utf8_lossy(&printed.stderr)
        );
        let doc = json(&out.join("results.json"));
        let runs = doc["runs"].as_array().unwrap();
        let labels: Vec<&str> = runs.iter().map(|r| r["label"].as_str().unwrap()).collect();
        assert_eq!(labels, ["lrr", "gto", "mascar"]);
        for r in runs {
            assert_eq!(r["workload"]["kind"], "trace");
            assert_eq!(r["workload"]["name"], trace);
            // The trace's own count, under every scheduler.
            assert_eq!(u(&r["total"]["warp_instructions"]), 4416);
        }
        let lrr = &runs[0]["total"];
        let measure = u(&lrr["warp_instructions"]) as f64
            / (u(&lrr["l1"]["misses"]) + u(&lrr["l1"]["hit_reserved"])) as f64;
        assert_eq!(measure < 30.0, class == "memory-intensive", "{line}: {measure}");
        let csv = std::fs::read_to_string(out.join("speedup.csv")).unwrap();
        let rows = csv_kernel_rows(&csv, trace);
        let scheds: Vec<&str> = rows.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(scheds, ["lrr", "gto", "mascar"], "{csv}");
        let md = std::fs::read_to_string(out.join("speedup.md")).unwrap();
        let kernel_row = md_row(&md, trace);
        assert_eq!(kernel_row[1], class, "{md}");
        let class_row = md_row(&md, row);
        assert_eq!(class_row[1], "1", "{md}");
        // The trace is the only kernel: the class's speedup is the trace's.
        let gto = rows.iter().find(|(s, _)| s == "gto").unwrap().1;
        assert_eq!(class_row[2], format!("{gto:.3}"), "{md}");
    }
}

/// `kernel_scale` takes effect in a run (a kernel file's `size` lines take their full
/// values) and is recorded in the run's configuration like every other key.
#[test]
fn kernel_scale_full_runs_the_full_size_and_is_recorded() {
    let kern = scratch("scaled.kern");
    std::fs::write(
        &kern,
        "kernel scaled\nsize CTAS = 2 full 6\nsize N = 64 full 192\ngrid CTAS\nblock 32\n\
         buffer A 4 * 32 * N\nloop i N / 32 {\n  ld.global r1, A[4*gtid + 4*32*CTAS*i]\n}\n",
    )
    .unwrap();
    let mut runs = vec![];
    for scale in [None, Some("default"), Some("full")] {
        let out = scratch(&format!("scaled-{scale:?}.json"));
        let set = scale.map(|s| format!("kernel_scale=\"{s}\""));
        let mut args = vec![
            "run",
            "-k",
            kern.to_str().unwrap(),
            "-s",
            "lrr",
            "--sms",
            "2",
            "-q",
        ];
        if let Some(s) = &set {
            args.extend(["--set", s.as_str()]);
        }
        args.extend(["--json", out.to_str().unwrap()]);
        mascar(&args);
        let doc = json(&out);
        let run = &doc["runs"][0];
        runs.push((
            run["config"]["kernel_scale"].as_str().unwrap().to_string(),
            u(&run["total"]["warp_instructions"]),
        ));
    }
    // Default: 2 CTAs × 2 iterations; full: 6 CTAs × 6 iterations.
    assert_eq!(
        runs,
        vec![
            ("default".to_string(), 4),
            ("default".to_string(), 4),
            ("full".to_string(), 36)
        ]
    );
}
