//! Every setting is checked, documented and safe: each numeric key has a range (one table in
//! src/config.rs), a value outside it is refused naming key, value and range with exit code 1
//! (not an allocation abort); TOML and `--set` errors name the key; endless inputs end with
//! an error naming the file; docs/configuration.md is the table's current rendering.

use mascar::config::{settings, Domain};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `mascar args`, killing it (and failing the test) if it is still running after
/// `limit`, so that a hang fails rather than hangs.
fn mascar_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mascar starts");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`mascar {}` still running after {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mascar(args: &[&str]) -> Output {
    mascar_within(args, Duration::from_secs(60))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Fails unless the run exited with code 1 and its error contains `needle`.
fn assert_refused(o: &Output, needle: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{what}: exit {:?}, stderr:\n{err}",
        o.status
    );
    assert!(err.contains(needle), "{what}: expected `{needle}` in:\n{err}");
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mascar-settings-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn huge_latencies_and_partition_counts_are_refused_with_key_value_and_range() {
    for (key, range) in [
        ("dram_latency", "1..=10000"),
        ("l2_latency", "1..=10000"),
        ("l2_partitions", "1..=128"),
        ("l1_miss_queue", "2..=1024"),
        ("icnt_input_buffer", "1..=4096"),
        ("icnt_vc_buffer", "1..=4096"),
        ("icnt_dest_buffer", "1..=4096"),
        ("icnt_alloc_cycles", "0..=64"),
    ] {
        let set = format!("{key}=4294967295");
        let o = mascar(&["run", "-k", "kmeans-1", "--sms", "1", "-q", "--set", &set]);
        assert_refused(
            &o,
            &format!("config key `{key}`: 4294967295 is out of range {range}"),
            &set,
        );
    }
    // The same through a TOML file: the key's line and column too.
    let d = scratch("toml-range");
    let file = d.join("big.toml");
    std::fs::write(&file, "sms = 1\ndram_latency = 4294967295\n").unwrap();
    let o = mascar(&["run", "-k", "kmeans-1", "-q", "--config", file.to_str().unwrap()]);
    assert_refused(
        &o,
        "line 2, column 16: config key `dram_latency`: 4294967295 is out of range 1..=10000",
        "TOML file",
    );
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn every_key_just_outside_its_range_is_refused_naming_the_key() {
    let mut checked = 0;
    for s in settings() {
        let Domain::Int { min, max, .. } = s.domain else {
            continue;
        };
        let mut outside = vec![max + 1];
        if min > 0 {
            outside.push(min - 1);
        }
        for v in outside {
            let set = format!("{}={v}", s.key);
            let o = mascar(&["config", "--set", &set]);
            assert_refused(
                &o,
                &format!("config key `{}`: {v} is out of range {min}..={max}", s.key),
                &set,
            );
            checked += 1;
        }
        // The bounds themselves are accepted (alone, on the default machine), unless a rule
        // between keys refuses them; then the error names a key, not a range.
        for v in [min, max] {
            let set = format!("{}={v}", s.key);
            let o = mascar(&["config", "--set", &set]);
            assert!(
                !stderr(&o).contains("out of range"),
                "{set} is in range but refused:\n{}",
                stderr(&o)
            );
        }
    }
    assert!(checked > 80, "only {checked} values checked");
}

#[test]
fn toml_type_errors_name_the_key_with_line_and_column() {
    let d = scratch("toml-type");
    let file = d.join("bad.toml");
    std::fs::write(&file, "sms = 2\n\nl1_mshrs = \"x\"\n").unwrap();
    let o = mascar(&["config", "--config", file.to_str().unwrap()]);
    assert_refused(&o, "line 3, column 12: config key `l1_mshrs`: ", "type error");
    assert_refused(&o, "a whole number in 1..=4096", "type error");
    std::fs::write(&file, "sms = 2\nscheduler = 7\n").unwrap();
    let o = mascar(&["config", "--config", file.to_str().unwrap()]);
    assert_refused(&o, "line 2, column 13: config key `scheduler`: ", "type error");
    assert_refused(&o, "one of lrr, gto, owl, ccws, mas, car, mascar", "type error");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn set_errors_name_the_key_and_the_valid_values() {
    let o = mascar(&["config", "--set", "l1_mshrs=many"]);
    assert_refused(
        &o,
        "config key `l1_mshrs`: `many` is not a whole number in 1..=4096",
        "type",
    );
    let o = mascar(&["config", "--set", "dram_cycles_per_line=0"]);
    assert_refused(
        &o,
        "config key `dram_cycles_per_line`: 0 is out of range 0.25..=10000",
        "real",
    );
    let o = mascar(&["config", "--set", "car_retry=sometimes"]);
    assert_refused(&o, "`sometimes` is not one of head_first, queue_first", "choice");
    let o = mascar(&["config", "--set", "flush_l1_between_kernels=1"]);
    assert_refused(
        &o,
        "config key `flush_l1_between_kernels`: `1` is not true or false",
        "bool",
    );
    let o = mascar(&["config", "--set", "flush_l2_between_kernels=true", "--dump"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("flush_l2_between_kernels = true"));
}

#[test]
fn endless_inputs_end_at_once_with_an_error_naming_the_file() {
    let limit = Duration::from_secs(10);
    let o = mascar_within(&["run", "-k", "/dev/zero", "--sms", "1", "-q"], limit);
    assert_refused(&o, "/dev/zero: kernel file is larger than 16 MiB", "-k /dev/zero");
    let o = mascar_within(&["run", "-k", "kmeans-1", "--config", "/dev/zero", "-q"], limit);
    assert_refused(
        &o,
        "/dev/zero: configuration file is larger than 16 MiB",
        "--config /dev/zero",
    );
    let o = mascar_within(&["run", "--trace", "/dev/zero", "--sms", "1", "-q"], limit);
    assert_refused(&o, "/dev/zero:1:", "--trace /dev/zero");
    assert_refused(&o, "line longer than", "--trace /dev/zero");
}

#[test]
fn the_configuration_reference_in_docs_is_current() {
    let o = mascar(&["config", "--reference"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let generated = String::from_utf8(o.stdout).unwrap();
    for s in settings() {
        assert!(
            generated.contains(&format!("| `{}` |", s.key)),
            "{} missing",
            s.key
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        doc == generated,
        "docs/configuration.md is stale: regenerate it with\n  \
         cargo run --release -- config --reference > docs/configuration.md"
    );
}
