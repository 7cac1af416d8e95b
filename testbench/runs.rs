//! Trustworthy runs: multi-kernel traces run back to back, every route of a setting takes
//! effect with one precedence rule, every result records how it was made (validated against
//! `docs/results.schema.json`), `rerun` reproduces a record, and `merge` refuses slices
//! that do not belong together and otherwise rebuilds the unsharded report byte for byte.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mascar::config::{Config, DramModel, Engine};
use mascar::runner::LoadedWorkload;
use mascar::sched::SchedulerKind;
use mascar::stats::RunStats;
use serde_json::Value;

fn mascar(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(out: &Output, needle: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "expected failure; stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(err.contains(needle), "`{needle}` not in: {err}");
    err
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mascar-runs-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn shared_trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testbench/data/traces")
        .join(name)
        .join("kernel-1.traceg")
}

/// A trace directory whose kernelslist launches `kernels` (file names in the directory:
/// `va` = vectoradd, `mm` = matrixmul) with a memcpy before each, as real lists have.
fn trace_list(test: &str, kernels: &[&str]) -> PathBuf {
    let dir = scratch(test);
    std::fs::copy(
        shared_trace("vectoradd-100-32-trace"),
        dir.join("kernel-va.traceg"),
    )
    .unwrap();
    std::fs::copy(
        shared_trace("matrixmul-32-32-trace"),
        dir.join("kernel-mm.traceg"),
    )
    .unwrap();
    let mut list = String::new();
    for (i, k) in kernels.iter().enumerate() {
        list.push_str(&format!(
            "MemcpyHtoD,0x00007f2b2d5{i:05x},4096\nkernel-{k}.traceg\n"
        ));
    }
    std::fs::write(dir.join("kernelslist.g"), list).unwrap();
    dir
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const VA_INSTS: u64 = 344;
const MM_INSTS: u64 = 4416;

// ---------------------------------------------------------------- multi-kernel traces

fn run_list(dir: &Path, cfg: &Config) -> Vec<RunStats> {
    let w = LoadedWorkload::trace(dir).unwrap_or_else(|e| panic!("{e:#}"));
    w.run(cfg, cfg.scheduler.name(), None)
        .unwrap_or_else(|e| {
            panic!(
                "{} under {} / {:?}: {e:#}",
                dir.display(),
                cfg.scheduler,
                cfg.engine
            )
        })
        .kernels
}

#[test]
fn a_list_of_different_kernels_runs_back_to_back_under_every_scheduler_and_engine() {
    let dir = trace_list("different", &["va", "mm", "va"]);
    for &kind in SchedulerKind::ALL {
        let cfg = Config {
            sms: 2,
            scheduler: kind,
            ..Config::default()
        };
        let reference = run_list(&dir, &cfg);
        let insts: Vec<u64> = reference.iter().map(|k| k.warp_instructions).collect();
        assert_eq!(insts, [VA_INSTS, MM_INSTS, VA_INSTS], "{kind}");
        // Caches persist from one kernel to the next (GPGPU-Sim 3.2.2 flushes nothing by
        // default): vectoradd's second launch finds its lines.
        assert!(
            reference[2].l1.hits > reference[0].l1.hits && reference[2].l2.misses < reference[0].l2.misses,
            "{kind}: the second vectoradd should hit in L1 (and L2) what the first brought in"
        );
        // Every engine gives the same statistics, kernel by kernel.
        for engine in [Engine::Rtl, Engine::Lockstep] {
            let cfg = Config {
                engine,
                ..cfg.clone()
            };
            if mascar::engine::validate(&cfg).is_err() {
                continue; // a scheduler the RTL blocks do not implement (OWL)
            }
            assert_eq!(run_list(&dir, &cfg), reference, "{kind} under {engine:?}");
        }
    }
}

#[test]
fn with_flushes_a_kernel_after_another_runs_as_in_a_fresh_run() {
    // The same kernel twice, and one after another kernel: with both caches flushed between
    // kernels, each kernel's figures are those of a fresh run of it alone (so the scheduling
    // blocks of every engine start from their reset state too).
    let twice = trace_list("twice", &["va", "va"]);
    let after = trace_list("after", &["mm", "va"]);
    for &kind in SchedulerKind::ALL {
        for engine in [Engine::Ref, Engine::Rtl] {
            let cfg = Config {
                sms: 2,
                scheduler: kind,
                engine,
                flush_l1_between_kernels: true,
                flush_l2_between_kernels: true,
                // GDDR5 rows left open by one kernel stay open for the next (GPGPU-Sim 3.2.2
                // keeps each `dram_t` across kernels), so only the stateless fixed-rate channel
                // makes a flushed run equal a fresh one.
                dram_model: DramModel::Fixed,
                ..Config::default()
            };
            if mascar::engine::validate(&cfg).is_err() {
                continue;
            }
            let alone = |t: &str| {
                let w = LoadedWorkload::trace(&shared_trace(t)).unwrap();
                w.run(&cfg, kind.name(), None).unwrap().kernels.remove(0)
            };
            let va = alone("vectoradd-100-32-trace");
            let k = run_list(&twice, &cfg);
            assert_eq!(k[0], va, "{kind} {engine:?}: first launch");
            assert_eq!(k[1], va, "{kind} {engine:?}: second launch after a flush");
            assert_eq!(
                run_list(&after, &cfg)[1],
                va,
                "{kind} {engine:?}: after matrixmul"
            );
            // Without the flushes the second launch hits in the caches.
            let kept = Config {
                flush_l1_between_kernels: false,
                flush_l2_between_kernels: false,
                ..cfg.clone()
            };
            let k = run_list(&twice, &kept);
            assert!(
                k[1].cycles < k[0].cycles,
                "{kind} {engine:?}: warm caches are faster"
            );
        }
    }
}

#[test]
fn run_trace_reports_each_kernel_and_the_total() {
    let dir = trace_list("report", &["va", "mm"]);
    let out_json = dir.join("out.json");
    let out_csv = dir.join("out.csv");
    let stdout = ok(&mascar(&[
        "run",
        "--trace",
        s(&dir),
        "-s",
        "lrr,mascar",
        "--sms",
        "2",
        "-q",
        "--json",
        s(&out_json),
        "--csv",
        s(&out_csv),
    ]));
    assert!(
        stdout.contains("== kernel 1 of 2") && stdout.contains("== kernel 2 of 2"),
        "{stdout}"
    );
    assert!(stdout.contains("== total of 2 kernels"), "{stdout}");
    let doc = json(&out_json);
    for run in doc["runs"].as_array().unwrap() {
        let kernels = run["kernels"].as_array().unwrap();
        assert_eq!(kernels.len(), 2);
        let sum = |key: &str| kernels.iter().map(|k| k[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(
            run["total"]["warp_instructions"].as_u64().unwrap(),
            VA_INSTS + MM_INSTS
        );
        assert_eq!(run["total"]["cycles"].as_u64().unwrap(), sum("cycles"));
        assert_eq!(
            run["total"]["l1"]["accesses"].as_u64(),
            Some(
                kernels
                    .iter()
                    .map(|k| k["l1"]["accesses"].as_u64().unwrap())
                    .sum()
            )
        );
    }
    // Two rows per kernel and a total row per run.
    let csv = std::fs::read_to_string(&out_csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 3, "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains(",total,")).count(), 2, "{csv}");
}

#[test]
fn vcd_of_a_multi_kernel_trace_is_refused_not_ignored() {
    let dir = trace_list("vcd", &["va", "mm"]);
    fails(
        &mascar(&["run", "--trace", s(&dir), "--vcd", s(&dir.join("a.vcd")), "-q"]),
        "--vcd records one kernel; the trace has 2",
    );
    assert!(!dir.join("a.vcd").exists());
}

fn edit_trace(test: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let dir = scratch(test);
    let text = std::fs::read_to_string(shared_trace("vectoradd-100-32-trace")).unwrap();
    let path = dir.join("kernel-1.traceg");
    std::fs::write(&path, edit(&text)).unwrap();
    path
}

#[test]
fn a_trace_lacking_a_block_of_its_grid_is_an_error_naming_file_and_block() {
    let path = edit_trace("missing", |t| {
        t.replace("-grid dim = (1,1,1)", "-grid dim = (2,1,1)")
    });
    let err = fails(&mascar(&["run", "--trace", s(&path), "-q"]), "kernel-1.traceg");
    assert!(
        err.contains("lacks 1 of the grid's 2 thread blocks, the first (1,0,0)"),
        "{err}"
    );
}

#[test]
fn a_duplicated_block_is_refused_at_its_line() {
    let path = edit_trace("duplicate", |t| {
        // The header and the one CTA, then the CTA again.
        let begin = t.find("#BEGIN_TB").unwrap();
        format!("{t}{}", &t[begin..])
    });
    let second = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("#BEGIN_TB"))
        .nth(1)
        .unwrap()
        .0
        + 1;
    fails(
        &mascar(&["run", "--trace", s(&path), "-q"]),
        &format!("kernel-1.traceg:{second}:1: thread block (0,0,0) appears twice"),
    );
}

// ---------------------------------------------------------------- settings

/// The configuration and scheduler a run's JSON says were used.
fn used(args: &[&str], dir: &Path) -> (String, Value) {
    let out = dir.join("used.json");
    let mut a = vec!["run", "-k", "histo-1", "-q", "--json", s(&out)];
    a.extend_from_slice(args);
    ok(&mascar(&a));
    let doc = json(&out);
    let run = &doc["runs"][0];
    assert_eq!(run["scheduler"]["name"], run["config"]["scheduler"]);
    (
        run["scheduler"]["name"].as_str().unwrap().to_string(),
        run["config"].clone(),
    )
}

#[test]
fn every_route_of_a_setting_takes_effect_with_one_precedence_rule() {
    let dir = scratch("routes");
    let toml = dir.join("m.toml");
    std::fs::write(&toml, "scheduler = \"gto\"\nsms = 3\nl1_mshrs = 16\n").unwrap();
    let gpgpusim = dir.join("gpgpusim.config");
    std::fs::write(
        &gpgpusim,
        "-gpgpu_scheduler gto\n-gpgpu_n_clusters 3\n-gpgpu_n_cores_per_cluster 1\n\
         -gpgpu_cache:dl1 32:128:4,L:L:m:N:H,A:16:8,8\n",
    )
    .unwrap();
    let (t, g) = (s(&toml), s(&gpgpusim));
    // Defaults.
    let (sched, cfg) = used(&["--sms", "1"], &dir);
    assert_eq!((sched.as_str(), cfg["l1_mshrs"].as_u64()), ("lrr", Some(64)));
    // Each route alone: --set, a TOML file, a GPGPU-Sim file.
    let (sched, cfg) = used(
        &["--set", "scheduler=gto", "--set", "sms=2", "--set", "l1_mshrs=16"],
        &dir,
    );
    assert_eq!(
        (sched.as_str(), cfg["sms"].as_u64(), cfg["l1_mshrs"].as_u64()),
        ("gto", Some(2), Some(16))
    );
    for file in [t, g] {
        let (sched, cfg) = used(&["--config", file], &dir);
        assert_eq!(
            (sched.as_str(), cfg["sms"].as_u64(), cfg["l1_mshrs"].as_u64()),
            ("gto", Some(3), Some(16)),
            "{file}"
        );
    }
    // --set beats the file; a flag beats both.
    let (sched, cfg) = used(
        &[
            "--config",
            t,
            "--set",
            "scheduler=car",
            "--set",
            "sms=2",
            "--set",
            "l1_mshrs=8",
        ],
        &dir,
    );
    assert_eq!(
        (sched.as_str(), cfg["sms"].as_u64(), cfg["l1_mshrs"].as_u64()),
        ("car", Some(2), Some(8))
    );
    let (sched, cfg) = used(
        &[
            "--config",
            g,
            "--set",
            "scheduler=car",
            "-s",
            "mascar",
            "--set",
            "sms=2",
            "--sms",
            "1",
        ],
        &dir,
    );
    assert_eq!((sched.as_str(), cfg["sms"].as_u64()), ("mascar", Some(1)));
    // A flag left at its default is not given: the file's scheduler stands.
    let (sched, _) = used(&["--config", g, "--sms", "1"], &dir);
    assert_eq!(sched, "gto");
}

#[test]
fn compare_says_it_ignores_a_configured_scheduler() {
    let dir = scratch("compare-ignores");
    let out = mascar(&[
        "compare",
        "-k",
        "histo-1",
        "-s",
        "gto",
        "--sms",
        "1",
        "--set",
        "scheduler=car",
        "--placements",
        "1",
        "--out",
        s(&dir),
        "-q",
    ]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scheduler (car) is ignored"), "{err}");
    let labels: Vec<String> = json(&dir.join("results.json"))["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(labels, ["lrr", "gto"]);
}

// ---------------------------------------------------------------- provenance and schema

fn schema_validator() -> (boon::Schemas, boon::SchemaIndex) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results.schema.json");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource("results.schema.json", json(&path)).unwrap();
    let index = compiler
        .compile("results.schema.json", &mut schemas)
        .unwrap_or_else(|e| panic!("{e}"));
    (schemas, index)
}

fn assert_valid(doc: &Value, what: &str) {
    let (schemas, index) = schema_validator();
    if let Err(e) = schemas.validate(doc, index) {
        panic!("{what} does not match docs/results.schema.json: {e:#}");
    }
}

#[test]
fn every_result_records_how_it_was_made_and_matches_the_schema() {
    let dir = scratch("provenance");
    let toml = dir.join("m.toml");
    std::fs::write(&toml, "l1_mshrs = 32\n").unwrap();
    let list = trace_list("provenance-trace", &["va", "mm"]);
    let one = dir.join("one.json");
    let many = dir.join("many.json");
    // histo-1: a built-in that runs in a tenth of a second on one SM (kmeans-1 took a minute).
    ok(&mascar(&[
        "run",
        "-k",
        "histo-1",
        "--sms",
        "1",
        "-q",
        "--json",
        s(&one),
    ]));
    ok(&mascar(&[
        "run",
        "--trace",
        s(&list),
        "-s",
        "gto,mascar",
        "--sms",
        "1",
        "-q",
        "--config",
        s(&toml),
        "--engine",
        "rtl",
        "--json",
        s(&many),
    ]));
    let cmp = dir.join("cmp");
    let shard = dir.join("shard");
    ok(&mascar(&[
        "compare",
        "-k",
        "histo-1",
        "-s",
        "gto",
        "--sms",
        "1",
        "-q",
        "--out",
        s(&cmp),
    ]));
    ok(&mascar(&[
        "compare",
        "-k",
        "histo-1",
        "-s",
        "gto",
        "--sms",
        "1",
        "-q",
        "--shard",
        "1/2",
        "--out",
        s(&shard),
    ]));
    for path in [
        &one,
        &many,
        &cmp.join("results.json"),
        &shard.join("results.json"),
    ] {
        let doc = json(path);
        assert_valid(&doc, &path.display().to_string());
        assert_eq!(doc["mascar"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(!doc["mascar"]["commit"].as_str().unwrap().is_empty());
        for run in doc["runs"].as_array().unwrap() {
            let cfg: Config = serde_json::from_value(run["config"].clone()).expect("the whole configuration");
            assert_eq!(run["config_sha256"], mascar::results::config_sha256(&cfg));
            assert_eq!(run["engine"], run["config"]["engine"]);
        }
    }
    // Built-in sources are hashed as inputs, files by path and content.
    let one = json(&one);
    let input = &one["runs"][0]["workload"]["inputs"][0];
    let source = mascar::workload::builtin::find("histo-1").unwrap().source;
    assert_eq!(input["path"], "builtin:histo-1");
    assert_eq!(input["sha256"], mascar::results::sha256_hex(source.as_bytes()));
    let many = json(&many);
    let mascar_run = &many["runs"][1];
    assert_eq!(mascar_run["engine"], "rtl");
    assert_eq!(mascar_run["config"]["l1_mshrs"], 32);
    assert_eq!(mascar_run["config_file"]["path"], s(&toml));
    assert_eq!(
        mascar_run["config_file"]["sha256"],
        mascar::results::sha256_hex(b"l1_mshrs = 32\n")
    );
    assert_eq!(mascar_run["scheduler"]["params"]["car_queue_depth"], 32);
    assert!(
        many["runs"][0]["scheduler"]["params"]
            .as_object()
            .unwrap()
            .is_empty(),
        "gto reads no key"
    );
    let paths: Vec<&str> = many["runs"][0]["workload"]["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 3, "the list and its two kernels: {paths:?}");
    assert!(paths[0].ends_with("kernelslist.g"));
    // The CSV carries the build and the configuration's hash.
    let csv = std::fs::read_to_string(cmp.join("runs.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("mascar_version,commit,config_sha256,"));
    let doc = json(&cmp.join("results.json"));
    for (row, run) in lines.zip(doc["runs"].as_array().unwrap()) {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f[0], env!("CARGO_PKG_VERSION"));
        assert_eq!(f[1], doc["mascar"]["commit"]);
        assert_eq!(f[2], run["config_sha256"]);
    }
}

#[test]
fn the_schema_rejects_what_it_does_not_describe() {
    let dir = scratch("schema-neg");
    let path = dir.join("r.json");
    ok(&mascar(&[
        "run",
        "-k",
        "histo-1",
        "--sms",
        "1",
        "-q",
        "--json",
        s(&path),
    ]));
    let doc = json(&path);
    assert_valid(&doc, "a fresh result");
    let (schemas, index) = schema_validator();
    let mut extra = doc.clone();
    extra["runs"][0]["wall_seconds"] = 1.5.into();
    assert!(
        schemas.validate(&extra, index).is_err(),
        "an undocumented field passes"
    );
    let mut missing = doc.clone();
    missing["runs"][0]["total"]
        .as_object_mut()
        .unwrap()
        .remove("cycles");
    assert!(
        schemas.validate(&missing, index).is_err(),
        "a missing statistic passes"
    );
}

// ---------------------------------------------------------------- rerun

#[test]
fn rerun_reproduces_a_record_and_names_what_differs() {
    let dir = scratch("rerun");
    let list = trace_list("rerun-trace", &["va", "mm"]);
    let rec = dir.join("r.json");
    ok(&mascar(&[
        "run",
        "--trace",
        s(&list),
        "-s",
        "gto,mascar",
        "--sms",
        "2",
        "-q",
        "--json",
        s(&rec),
    ]));
    let out = ok(&mascar(&["rerun", s(&rec)]));
    assert!(out.contains("all 2 runs") && out.contains("match"), "{out}");
    // A changed number is reported with its field.
    let mut doc = json(&rec);
    let cycles = doc["runs"][1]["kernels"][1]["cycles"].as_u64().unwrap();
    doc["runs"][1]["kernels"][1]["cycles"] = (cycles + 1).into();
    let edited = dir.join("edited.json");
    std::fs::write(&edited, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let r = mascar(&["rerun", s(&edited)]);
    fails(&r, "1 of 2 runs");
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        stdout.contains(&format!("kernels[1].cycles: {} → {cycles}", cycles + 1)),
        "{stdout}"
    );
    // A changed input is refused before anything runs, naming the file.
    let mm = list.join("kernel-mm.traceg");
    let mut text = std::fs::read_to_string(&mm).unwrap();
    text.push_str("\n# edited\n");
    std::fs::write(&mm, text).unwrap();
    fails(
        &mascar(&["rerun", s(&rec)]),
        "kernel-mm.traceg: the input has changed",
    );
}

// ---------------------------------------------------------------- merge

fn slice(dir: &Path, k: &str, sms: &str) -> PathBuf {
    let out = dir.join(format!("slice-{}", k.replace('/', "-")));
    let a = [
        "compare",
        "-k",
        "histo-1,histo-2",
        "-s",
        "gto,mascar",
        "--sms",
        sms,
        "-q",
        "--shard",
        k,
        "--out",
        s(&out),
    ];
    ok(&mascar(&a));
    out
}

#[test]
fn merge_refuses_slices_that_do_not_belong_together() {
    let dir = scratch("merge");
    let (a, b, c) = (
        slice(&dir, "1/3", "1"),
        slice(&dir, "2/3", "1"),
        slice(&dir, "3/3", "1"),
    );
    let merged = dir.join("merged");
    ok(&mascar(&["merge", s(&a), s(&b), s(&c), "--out", s(&merged)]));
    let full = dir.join("full");
    ok(&mascar(&[
        "compare",
        "-k",
        "histo-1,histo-2",
        "-s",
        "gto,mascar",
        "--sms",
        "1",
        "-q",
        "--out",
        s(&full),
    ]));
    for f in [
        "results.json",
        "runs.csv",
        "speedup.md",
        "speedup.csv",
        "speedup.svg",
        "speedup.png",
        "stalls.svg",
    ] {
        assert!(
            std::fs::read(merged.join(f)).unwrap() == std::fs::read(full.join(f)).unwrap(),
            "{f}"
        );
    }
    let refused = |dirs: &[&Path], needle: &str| {
        let out = dir.join("refused");
        let mut args = vec!["merge"];
        args.extend(dirs.iter().map(|d| s(d)));
        args.extend(["--out", s(&out)]);
        fails(&mascar(&args), needle);
        assert!(!out.exists(), "a refused merge wrote {}", out.display());
    };
    refused(&[&a, &b], "slices missing: 3/3");
    refused(&[&a, &b, &b], "slice 2/3 given twice");
    let other_sms = dir.join("other");
    std::fs::create_dir_all(&other_sms).unwrap();
    let c2 = slice(&other_sms, "3/3", "2");
    refused(&[&a, &b, &c2], "another machine configuration");
    let fewer = dir.join("fewer");
    std::fs::create_dir_all(&fewer).unwrap();
    let c3 = {
        let out = fewer.join("s3");
        ok(&mascar(&[
            "compare",
            "-k",
            "histo-1,histo-2",
            "-s",
            "gto",
            "--sms",
            "1",
            "-q",
            "--shard",
            "3/3",
            "--out",
            s(&out),
        ]));
        out
    };
    refused(&[&a, &b, &c3], "jobs");
    refused(&[&a, &b, &full], "not a slice");
    // A slice whose record was tampered with: zero cycles.
    let zero = dir.join("zero");
    std::fs::create_dir_all(&zero).unwrap();
    let mut doc = json(&c.join("results.json"));
    doc["runs"][0]["total"]["cycles"] = 0.into();
    std::fs::write(zero.join("results.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    refused(&[&a, &b, &zero], "ran 0 cycles");
}

#[test]
fn old_flag_spellings_are_hidden_aliases() {
    let dir = scratch("aliases");
    let ev = dir.join("ev.log");
    ok(&mascar(&[
        "run",
        "-k",
        "srad-1",
        "--sms",
        "1",
        "-q",
        "--trace-events",
        s(&ev),
        "--window",
        "0..200",
    ]));
    assert!(std::fs::metadata(&ev).unwrap().len() > 0);
    let help = ok(&mascar(&["run", "--help"]));
    assert!(
        help.contains("--events") && !help.contains("--trace-events"),
        "{help}"
    );
    let help = ok(&mascar(&["compare", "--help"]));
    assert!(help.contains("--kernel") && !help.contains("--kernels"), "{help}");
}

#[test]
fn a_closed_stdout_ends_the_run_quietly_not_with_a_panic() {
    // `mascar run … | head`: the reader is gone before the summary is printed (bp-2 runs a
    // few seconds, long after the pipe is closed; kmeans-1 took a minute).
    let mut child = Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(["run", "-k", "bp-2", "--sms", "1", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{err}");
}
