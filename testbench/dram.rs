//! The GDDR5 DRAM model against GPGPU-Sim 3.2.2's own figures (testbench/data/dram-reference,
//! a copy of ../shared/dram-reference), the `mascar dram` command, L2 write misses that
//! fetch their line, and the DRAM statistics of a machine run.

use std::path::{Path, PathBuf};
use std::process::Command;

use mascar::config::{Config, DramModel};
use mascar::dram_replay::{parse_trace, replay, ReplayReport};
use mascar::engine::simulate;
use mascar::workload::kernel_format::parse_kernel;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testbench/data/dram-reference")
        .join(name)
}

/// The 3.2.2 GTX480 configuration, as `--config` reads it.
fn gtx480() -> Config {
    let path = data("gtx480-3.2.2.gpgpusim.config");
    let text = std::fs::read_to_string(&path).unwrap();
    mascar::gpgpusim_config::import(&text, &path.display().to_string(), &Config::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .config
}

fn run_trace(name: &str) -> ReplayReport {
    let path = data(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let trace = parse_trace(&text, name).unwrap_or_else(|e| panic!("{e}"));
    replay(&trace, &gtx480()).unwrap()
}

/// GPGPU-Sim 3.2.2's figures for the trace (README of dram-reference): bus utilisation,
/// row hit rate, activations per request; ours must give the bus utilisation within 5 %.
fn check(name: &str, util: f64, hit: f64, act_per_req: f64) {
    let r = run_trace(name);
    assert_eq!(r.requests, 12_000);
    assert_eq!(r.requests_per_channel.iter().sum::<u64>(), 12_000);
    let rel = (r.bus_utilization - util).abs() / util;
    assert!(
        rel <= 0.05,
        "{name}: bus_utilization {:.4}, GPGPU-Sim 3.2.2 {util} ({:.1} % off)",
        r.bus_utilization,
        rel * 100.0
    );
    // Row behaviour is reported too; it follows from the same FR-FCFS logic.
    assert!(
        (r.row_hit_rate - hit).abs() < 0.02,
        "{name}: row_hit_rate {:.4}, GPGPU-Sim 3.2.2 {hit}",
        r.row_hit_rate
    );
    let apr = r.activations as f64 / r.requests as f64;
    assert!(
        (apr - act_per_req).abs() <= 0.05 * act_per_req + 0.002,
        "{name}: {apr:.4} activations per request, GPGPU-Sim 3.2.2 {act_per_req}"
    );
}

#[test]
fn sequential_reads_match_gpgpusim() {
    check("seq-reads.trace", 0.686, 0.984, 0.032);
}

#[test]
fn random_reads_match_gpgpusim() {
    check("random-reads.trace", 0.653, 0.502, 0.996);
}

#[test]
fn four_arrays_in_lockstep_match_gpgpusim() {
    check("4-arrays.trace", 0.848, 0.944, 0.112);
}

#[test]
fn two_reads_one_write_match_gpgpusim() {
    check("2r1w.trace", 0.767, 0.983, 0.034);
}

#[test]
fn mixed_reads_and_writes_turn_the_bus_around() {
    let r = run_trace("2r1w.trace");
    assert!(r.dram.read_to_write > 0 && r.dram.write_to_read > 0);
    assert_eq!(r.dram.reads + r.dram.writes, 12_000);
    assert_eq!(r.dram.writes, 4_000);
    // A 128 B line is two 64 B column commands.
    assert_eq!(r.dram.column_reads + r.dram.column_writes, 24_000);
}

#[test]
fn the_gtx480_config_sets_the_dram_keys() {
    let c = gtx480();
    assert_eq!(c.l2_partitions, 6);
    assert_eq!(c.l2_sub_partitions, 2);
    assert_eq!(c.dram_queue, 16);
    assert_eq!(
        (c.dram_banks, c.dram_bank_groups, c.dram_cl, c.dram_wl),
        (16, 4, 12, 4)
    );
    assert_eq!((c.dram_tccdl, c.dram_trtpl, c.dram_trc), (3, 2, 40));
    assert_eq!((c.dram_burst_length, c.dram_bus_bytes, c.dram_chips), (8, 4, 2));
    assert_eq!(c.dram_data_command_ratio, 4);
    assert_eq!((c.core_clock_mhz, c.dram_clock_mhz), (700, 924));
    assert_eq!(c.dram_address_map, mascar::gpu::mem::addrdec::GTX480_MAPPING);
}

fn mascar() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mascar"))
}

#[test]
fn dram_command_reports_and_writes_json() {
    let dir = std::env::temp_dir().join(format!("mascar-dram-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("seq.json");
    let out = mascar()
        .args(["dram", "--trace"])
        .arg(data("seq-reads.trace"))
        .arg("--config")
        .arg(data("gtx480-3.2.2.gpgpusim.config"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("bus_utilization   0.68"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["requests"], 12_000);
    assert_eq!(doc["requests_per_channel"].as_array().unwrap().len(), 6);
    for key in ["dram_cycles", "bus_utilization", "activations", "row_hit_rate"] {
        assert!(doc[key].is_number(), "{key} missing: {doc}");
    }
    assert_eq!(doc["dram"]["channels"].as_array().unwrap().len(), 6);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_trace_line_is_an_error_with_line_and_column() {
    let dir = std::env::temp_dir().join(format!("mascar-dram-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("bad.trace");
    std::fs::write(&trace, "# two requests\n0x80 R\n0x100 Q\n").unwrap();
    let out = mascar().args(["dram", "--trace"]).arg(&trace).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.trace:3:7: expected `R` or `W`, found `Q`"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// GPGPU-Sim 3.2.2's L2 is write-allocate with fetch (`L:B:m:W`, `data_cache::wr_miss_wa`):
/// a write miss sends the write on to DRAM and reads the whole line. A store-only stream that
/// writes each line once therefore reads from DRAM exactly once per L2 write miss (the old
/// model allocated without fetching: no DRAM reads at all).
#[test]
fn l2_write_misses_fetch_their_line() {
    let k = parse_kernel(
        "kernel stores\ngrid 60\nblock 256\nbuffer A 4M\nst.global A[4*gtid], r0\n",
        "<test>",
    )
    .unwrap();
    for model in [DramModel::Gddr5, DramModel::Fixed] {
        let cfg = Config {
            dram_model: model,
            ..Config::default()
        };
        let s = simulate(&cfg, &k, None).unwrap();
        assert_eq!(s.l2.write_misses, 60 * 256 * 4 / 128, "{model:?}");
        assert_eq!(s.dram.reads, s.l2.write_misses, "{model:?}: {:?}", s.dram);
        // And every store reaches DRAM.
        assert_eq!(s.dram.writes, s.l2.write_misses, "{model:?}: {:?}", s.dram);
    }
}

/// A run reports the DRAM's counters, in total and per channel, and its utilisation is the
/// data bus's (busy ÷ DRAM cycles).
#[test]
fn a_run_reports_dram_statistics_per_channel() {
    let k = mascar::workload::builtin::find("bp-2").unwrap().kernel();
    let s = simulate(&Config::default(), &k, None).unwrap();
    let d = &s.dram;
    assert_eq!(d.channels.len(), 6);
    assert!(d.activations > 0 && d.column_reads > 0);
    assert!(d.bus_utilization > 0.0 && d.bus_utilization < 1.0, "{d:?}");
    assert_eq!(s.dram_utilization, d.bus_utilization);
    let busy: f64 = d.channels.iter().map(|c| c.counters.busy_cycles).sum();
    assert_eq!(busy, d.busy_cycles);
    // The DRAM clock runs 924 / 700 times the core's.
    let per_channel = d.cycles as f64 / 6.0 / s.cycles as f64;
    assert!((per_channel - 924.0 / 700.0).abs() < 0.01, "{per_channel}");
    // Every line read is two 64 B column commands.
    assert_eq!(d.column_reads, 2 * d.reads);
}
