//! Output files: all of a command's outputs are written or none, interrupts and killed runs
//! leave no temporary files behind, errors name the file, and the plots are readable.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn mascar() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mascar"))
}

/// A fresh directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let d = std::env::temp_dir().join(format!("mascar-outputs-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Names in `dir` that start with a dot: temporaries (`.{name}.tmp<PID>`) or backups.
fn hidden(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Runs `cmd`, asserting success, and returns its stderr.
fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd:?} failed: {stderr}");
    stderr
}

/// A `compare --shard 1/1` slice of two short kernels: `mascar merge` turns it into the full
/// compare report (the same `write_report`) without simulating again. Made once per test
/// binary (in cargo's scratch folder for integration tests) and only read: the three tests
/// that merge it made it three times (36 s of CPU each).
fn shared_slice() -> &'static Path {
    static SLICE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SLICE.get_or_init(|| {
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("outputs-slice-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        slice(&dir)
    })
}

/// [`shared_slice`]'s command, into `dir/slice`.
fn slice(dir: &Path) -> PathBuf {
    let s = dir.join("slice");
    ok(mascar()
        .args([
            "compare",
            "--kernels",
            "histo-1,leuko-2",
            "--schedulers",
            "mascar",
        ])
        .args(["--sms", "1", "--shard", "1/1", "-q", "--out", s.to_str().unwrap()]));
    s
}

fn merge(slice: &Path, out: &Path) -> std::process::Output {
    mascar()
        .args(["merge", slice.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap()
}

/// The PID of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Waits until `dir` holds a file whose name starts with `prefix`.
fn wait_for(dir: &Path, prefix: &str, child: &mut std::process::Child) {
    let start = Instant::now();
    loop {
        if hidden(dir).iter().any(|n| n.starts_with(prefix)) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("mascar ended ({status}) before {prefix}* appeared");
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{prefix}* never appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A full-machine kmeans-1 run writing a VCD (tens of MB, a few seconds): long enough to be
/// interrupted while its temporary file is being written.
fn vcd_run(dir: &Path) -> std::process::Child {
    mascar()
        .args(["run", "-k", "kmeans-1", "-s", "lrr", "-q", "--vcd"])
        .arg(dir.join("X.vcd"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_report_that_cannot_be_written_completely_leaves_the_old_one_untouched() {
    let t = TempDir::new("all-or-nothing");
    let s = shared_slice();
    let out = t.0.join("report");
    let first = merge(s, &out);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let files = [
        "speedup.md",
        "speedup.csv",
        "speedup.png",
        "stalls.svg",
        "results.json",
        "runs.csv",
    ];
    // Mark the old report, then put a directory where speedup.svg goes.
    for f in files {
        std::fs::write(out.join(f), format!("old {f}")).unwrap();
    }
    std::fs::remove_file(out.join("speedup.svg")).unwrap();
    std::fs::create_dir(out.join("speedup.svg")).unwrap();

    let failed = merge(s, &out);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success());
    let named = out.join("speedup.svg").display().to_string();
    assert!(
        stderr.contains(&named),
        "the error does not name the file: {stderr}"
    );
    for f in files {
        assert_eq!(
            std::fs::read_to_string(out.join(f)).unwrap(),
            format!("old {f}"),
            "{f} was replaced although the report failed"
        );
    }
    assert!(out.join("speedup.svg").is_dir());
    assert_eq!(hidden(&out), Vec::<String>::new(), "temporaries left behind");

    // With the obstacle gone, every file is replaced.
    std::fs::remove_dir(out.join("speedup.svg")).unwrap();
    let again = merge(s, &out);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    for f in files {
        assert_ne!(
            std::fs::read(out.join(f)).unwrap(),
            format!("old {f}").into_bytes()
        );
    }
    assert!(std::fs::read_to_string(out.join("speedup.svg"))
        .unwrap()
        .contains("<svg"));
    assert_eq!(hidden(&out), Vec::<String>::new());
}

#[test]
fn json_and_csv_write_errors_name_the_path() {
    let t = TempDir::new("named");
    std::fs::write(t.0.join("plain"), "a file, not a directory").unwrap();
    for flag in ["--json", "--csv"] {
        let target = t.0.join("plain").join("out.x");
        let out = mascar()
            .args(["run", "-k", "leuko-2", "--sms", "1", "-q", flag])
            .arg(&target)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains(&format!("cannot write {}", target.display())),
            "{flag}: {stderr}"
        );
    }
}

fn interrupt_removes_the_temporary(signal: libc::c_int) {
    let t = TempDir::new(&format!("signal{signal}"));
    let mut child = vcd_run(&t.0);
    wait_for(&t.0, ".X.vcd.tmp", &mut child);
    // SAFETY: kill(2) on our own child's PID, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "status {}: {stderr}", out.status);
    assert!(stderr.contains("interrupted"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(&t.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn sigint_removes_the_temporary_vcd_and_exits_130() {
    interrupt_removes_the_temporary(libc::SIGINT);
}

#[test]
fn sigterm_removes_the_temporary_vcd_and_exits_130() {
    interrupt_removes_the_temporary(libc::SIGTERM);
}

#[test]
fn the_next_write_sweeps_temporaries_of_killed_runs_but_not_of_live_ones() {
    let t = TempDir::new("sigkill");
    let mut child = vcd_run(&t.0);
    wait_for(&t.0, ".X.vcd.tmp", &mut child);
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let killed = format!(".X.vcd.tmp{}", child.id());
    assert_eq!(hidden(&t.0), vec![killed]);
    // This test process is alive: a temporary with its PID belongs to a live writer.
    let live = format!(".X.vcd.tmp{}", std::process::id());
    let other_dead = format!(".X.vcd.tmp{}", dead_pid());
    for n in [&live, &other_dead] {
        std::fs::write(t.0.join(n), "partial").unwrap();
    }
    ok(mascar()
        .args(["run", "-k", "leuko-2", "--sms", "1", "-q", "--vcd"])
        .arg(t.0.join("X.vcd")));
    assert_eq!(hidden(&t.0), vec![live]);
    assert!(t.0.join("X.vcd").is_file() && t.0.join("X.gtkw").is_file());

    // The same for the compare report's files.
    let s = shared_slice();
    let out = t.0.join("report");
    std::fs::create_dir(&out).unwrap();
    let stale = format!(".results.json.tmp{}", dead_pid());
    std::fs::write(out.join(&stale), "partial").unwrap();
    let merged = merge(s, &out);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert_eq!(hidden(&out), Vec::<String>::new());
}

/// Every `font-size="…"` of an SVG (px), and its number of `<text` elements.
fn font_sizes(svg: &str) -> (Vec<f64>, usize) {
    let sizes = svg
        .split("font-size=\"")
        .skip(1)
        .map(|rest| {
            let v = rest.split('"').next().unwrap().trim_end_matches("px");
            v.parse().unwrap_or_else(|_| panic!("font-size {v:?}"))
        })
        .collect();
    (sizes, svg.matches("<text").count())
}

#[test]
fn every_text_of_the_report_plots_is_at_least_12_px() {
    let t = TempDir::new("fonts");
    let s = shared_slice();
    let out = t.0.join("report");
    let merged = merge(s, &out);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    for name in ["speedup.svg", "stalls.svg"] {
        let svg = std::fs::read_to_string(out.join(name)).unwrap();
        let (sizes, texts) = font_sizes(&svg);
        assert!(texts >= 5, "{name}: {texts} texts");
        assert_eq!(sizes.len(), texts, "{name}: a text without a font-size");
        let small: Vec<f64> = sizes.into_iter().filter(|&px| px < 12.0).collect();
        assert!(small.is_empty(), "{name}: texts under 12 px: {small:?}");
    }
}
