//! Every command in the documentation runs. The commands of README.md, docs/*.md and the
//! golden/, waves/ and rtl/ READMEs are taken from their ```sh and ```console blocks (in a
//! console block, the lines that start with `$ `) and run with the built binary in a scratch
//! directory, one directory per document, in the order written (later commands read what
//! earlier ones wrote). Each command either
//! - runs as written and exits 0;
//! - is listed in `REDUCED` with the smaller form the test runs instead (fewer SMs, a kernel
//!   subset, a small trace for the RTL engine), which must still exit 0;
//! - is listed in `FAILING`, documented as failing, and must fail with the documented error;
//! - or carries a visible `# not run in tests: REASON` marker (opens a window, needs root, …).
//!
//! Anything else fails the test, as does an entry of `REDUCED` or `FAILING` that no longer
//! appears in the docs, so the docs cannot drift from the program. README.md is checked to be
//! at most 150 lines.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_mascar");
const MARKER: &str = "# not run in tests:";
const README_MAX_LINES: usize = 150;
/// A command still running after this is killed and reported, so a hang fails the test. It
/// guards against hangs, not slowness: the README's main command (two whole kmeans-1 runs on
/// 15 SMs, about a minute each alone) shares CI's two cores with the suite's other tests, and
/// took longer than the 180 s this once was (stop 51's CI).
const COMMAND_LIMIT: Duration = Duration::from_secs(600);

/// Documents whose commands are checked, relative to the repository.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![
        PathBuf::from("README.md"),
        PathBuf::from("golden/README.md"),
        PathBuf::from("waves/README.md"),
        PathBuf::from("rtl/README.md"),
    ];
    let mut in_docs: Vec<PathBuf> = fs::read_dir(Path::new(REPO).join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| PathBuf::from("docs").join(p.file_name().unwrap()))
        .collect();
    in_docs.sort();
    docs.extend(in_docs);
    docs
}

/// Doc command (as written, without its trailing comment) → the smaller form run instead.
/// Every left-hand side must appear in the docs.
const REDUCED: &[(&str, &str)] = &[
    // Three kernels, median of 5 runs each: once is enough to check the command, and one
    // short kernel of each class (kmeans-1 and sgemm were 46 of its 47 CPU-s).
    (
        "mascar bench",
        "mascar bench --repeat 1 --sms 4 --kernel histo-1,srad-1,histo-2",
    ),
    // 15 SMs, 29 kernels × 7 schedulers × 3 placements: about 20 min on 2 cores. One
    // placement of two short kernels, one per class, checks the command (`every_doc_command_runs`
    // prints the slowest commands: these comparisons were most of its time).
    (
        "mascar compare",
        "mascar compare --kernel histo-1,histo-2 --sms 4 --placements 1",
    ),
    (
        "mascar compare --resources",
        "mascar compare --resources --kernel histo-1 --sms 4",
    ),
    (
        "mascar compare --kernel bfs,srad-1 --scheduler gto,mascar --out cmp",
        "mascar compare --kernel bfs,srad-1 --scheduler gto,mascar --out cmp --sms 4 --placements 1",
    ),
    (
        "mascar compare --kernel bfs,lbm --scheduler gto,mascar --out cmp",
        "mascar compare --kernel bfs,lbm --scheduler gto,mascar --out cmp --sms 4 --placements 1",
    ),
    (
        "mascar compare --kernel srad-1,leuko-1 --sms 4 --shard 1/2 --out slice-1",
        "mascar compare --kernel srad-1,leuko-1 --sms 4 --shard 1/2 --out slice-1 --placements 1",
    ),
    (
        "mascar compare --kernel srad-1,leuko-1 --sms 4 --shard 2/2 --out slice-2",
        "mascar compare --kernel srad-1,leuko-1 --sms 4 --shard 2/2 --out slice-2 --placements 1",
    ),
    // Three placements of a short kernel check the flag (srad-2's nine runs on one SM were
    // 54 s of CI); the traces with srad-1 on one placement.
    (
        "mascar compare --kernel srad-2 --scheduler gto,car --placements 3 --sms 1 --out cmp-placements",
        "mascar compare --kernel histo-1 --scheduler gto,car --placements 3 --sms 1 --out cmp-placements",
    ),
    (
        "mascar compare --trace testbench/data/traces/vectoradd-100-32-trace --trace testbench/data/traces/matrixmul-32-32-trace --kernel srad-1 --scheduler gto,mascar --sms 1 --out cmp-traces",
        "mascar compare --trace testbench/data/traces/vectoradd-100-32-trace --trace testbench/data/traces/matrixmul-32-32-trace --kernel srad-1 --scheduler gto,mascar --sms 1 --out cmp-traces --placements 1",
    ),
    // The whole of kmeans-1 on one SM with waveforms on (no cycle skip): the window is
    // written by cycle 18,850, so the run stops there (and fails, as FAILING says).
    (
        "mascar run -k kmeans-1 -s mascar --sms 1 --vcd kmeans.vcd --vcd-window 18700..18850",
        "mascar run -k kmeans-1 -s mascar --sms 1 --vcd kmeans.vcd --vcd-window 18700..18850 --set max_cycles=18850",
    ),
    (
        "mascar bench --kernel bfs -s mascar",
        "mascar bench --kernel bfs -s mascar --sms 4 --repeat 1",
    ),
    // The RTL engine runs about 30 k SM-cycles/s: a built-in takes minutes, a small kernel
    // or a small trace a second.
    (
        "mascar bench --kernel srad-1 --sms 1 --engine rtl",
        "mascar bench --kernel my.kern --sms 1 --engine rtl --repeat 1",
    ),
    (
        "mascar run -k bfs -s mascar --engine rtl",
        "mascar run --trace testbench/data/traces/matrixmul-32-32-trace -s mascar --engine rtl",
    ),
    (
        "mascar run -k bfs -s mascar --engine lockstep",
        "mascar run --trace testbench/data/traces/matrixmul-32-32-trace -s mascar --engine lockstep",
    ),
];

/// Doc commands documented as failing → text their stderr must contain.
const FAILING: &[(&str, &str)] = &[
    ("mascar run -k nope", "error: unknown kernel `nope`"),
    (
        "mascar run -k kmeans-1 -s mascar --sms 1 --vcd kmeans.vcd --vcd-window 18700..18850",
        "error: stopped at max_cycles = 18850",
    ),
    (
        "mascar run -k kmeans-1 -s mascar --sms 1 --engine rtl --vcd waves/example-kmeans-1-mascar.vcd --vcd-window 15230..15380 --set max_cycles=15380",
        "error: stopped at max_cycles = 15380",
    ),
];

/// The kernel file the docs call `my.kern` (written into every scratch directory).
const MY_KERN: &str = "\
# A small streaming kernel for the documentation's examples.
kernel my
grid 30
block 128
regs 8
buffer A 1M
loop i 4 {
  ld.global r1, A[4*gtid + 4*gthreads*i]
  fma r2, r1, r1, r2
  st.global A[4*gtid + 4*gthreads*i], r2
}
";

#[derive(Clone, Debug)]
struct DocCommand {
    doc: PathBuf,
    line: usize,
    /// The command as written, trailing comment removed, whitespace collapsed.
    text: String,
    /// The reason of a `# not run in tests:` marker.
    not_run: Option<String>,
}

/// The commands of one document, and problems found while reading it (commands outside
/// sh/console blocks, markers without a reason).
fn extract(doc: &Path, text: &str) -> (Vec<DocCommand>, Vec<String>) {
    let mut cmds = Vec::new();
    let mut problems = Vec::new();
    let mut fence: Option<String> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = raw.trim();
        if let Some(rest) = trimmed.strip_prefix("```") {
            fence = match fence {
                None => Some(rest.trim().to_string()),
                Some(_) => None,
            };
            continue;
        }
        let looks_like_command = |s: &str| {
            let s = s.strip_prefix("$ ").unwrap_or(s);
            s.starts_with("mascar ") || s == "mascar" || s.starts_with("cargo run")
        };
        match fence.as_deref() {
            Some("sh") | Some("console") => {}
            Some(_) => {
                if looks_like_command(trimmed) {
                    problems.push(format!(
                        "{}:{line_no}: a command outside a ```sh or ```console block: {trimmed}",
                        doc.display()
                    ));
                }
                continue;
            }
            None => {
                // An indented code block holding a command escapes the check: refuse it.
                if raw.starts_with("    ") && looks_like_command(trimmed) {
                    problems.push(format!(
                        "{}:{line_no}: an indented command; put it in a ```sh block: {trimmed}",
                        doc.display()
                    ));
                }
                continue;
            }
        }
        let console = fence.as_deref() == Some("console");
        let (start, mut body) = match pending.take() {
            Some((start, so_far)) => (start, format!("{so_far} {trimmed}")),
            None => {
                let body = if console {
                    match trimmed.strip_prefix("$ ") {
                        Some(c) => c.to_string(),
                        None => continue, // output
                    }
                } else {
                    if trimmed.is_empty() || trimmed.starts_with('#') {
                        continue;
                    }
                    trimmed.to_string()
                };
                (line_no, body)
            }
        };
        if let Some(stripped) = body.strip_suffix('\\') {
            pending = Some((start, stripped.trim_end().to_string()));
            continue;
        }
        let mut not_run = None;
        if let Some(at) = body.find(MARKER) {
            let reason = body[at + MARKER.len()..].trim().to_string();
            if reason.is_empty() {
                problems.push(format!("{}:{start}: `{MARKER}` needs a reason", doc.display()));
            }
            not_run = Some(reason);
            body.truncate(at);
        } else if let Some(at) = comment_start(&body) {
            body.truncate(at);
        }
        cmds.push(DocCommand {
            doc: doc.to_path_buf(),
            line: start,
            text: body.split_whitespace().collect::<Vec<_>>().join(" "),
            not_run,
        });
    }
    if fence.is_some() {
        problems.push(format!("{}: a code block is never closed", doc.display()));
    }
    (cmds, problems)
}

/// Where a trailing shell comment starts (` #` followed by a space or the end).
fn comment_start(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (1..b.len()).find(|&i| b[i] == b'#' && b[i - 1] == b' ' && (i + 1 == b.len() || b[i + 1] == b' '))
}

/// What the test runs for a doc command: the command itself (with `cargo run --release --`
/// meaning the built binary), its reduced form, or nothing (marked, or not a mascar command).
fn runnable(cmd: &DocCommand) -> Result<Option<String>, String> {
    if cmd.not_run.is_some() {
        return Ok(None);
    }
    let text = match cmd.text.strip_prefix("cargo run --release -- ") {
        Some(rest) => format!("mascar {rest}"),
        None => cmd.text.clone(),
    };
    if !(text.starts_with("mascar ") || text == "mascar") {
        return Err(format!(
            "{}:{}: `{}` is not a mascar command: run it, or mark it `{MARKER} REASON`",
            cmd.doc.display(),
            cmd.line,
            cmd.text
        ));
    }
    Ok(Some(
        REDUCED
            .iter()
            .find(|(doc, _)| *doc == text)
            .map(|(_, reduced)| reduced.to_string())
            .unwrap_or(text),
    ))
}

/// A scratch directory laid out like the repository where the docs need it: `testbench/`
/// (read-only data) linked, `rtl/` and `waves/` copied (commands write there), an empty
/// `docs/`, `my.kern`, and `bin/mascar` for PATH.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mascar-docs-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("bin")).unwrap();
    std::os::unix::fs::symlink(Path::new(REPO).join("testbench"), dir.join("testbench")).unwrap();
    std::os::unix::fs::symlink(BIN, dir.join("bin/mascar")).unwrap();
    for sub in ["rtl", "waves"] {
        fs::create_dir_all(dir.join(sub)).unwrap();
        for e in fs::read_dir(Path::new(REPO).join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                fs::copy(&p, dir.join(sub).join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    // An empty docs/, so a documented `… > docs/FILE` writes here, not into the repository.
    fs::create_dir_all(dir.join("docs")).unwrap();
    fs::write(dir.join("my.kern"), MY_KERN).unwrap();
    dir
}

/// Runs one command under `sh` in `dir`; returns (success, stderr) or a timeout error.
fn run_in(dir: &Path, command: &str, n: usize) -> Result<(bool, String), String> {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out_path = dir.join(format!(".cmd{n}.out"));
    let err_path = dir.join(format!(".cmd{n}.err"));
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > COMMAND_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {COMMAND_LIMIT:?}; killed"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    Ok((status.success(), stderr))
}

/// Runs a document's commands in order in its own scratch directory; returns the failures.
/// Runs one document's commands in order; returns the failures and each command's seconds
/// (the test prints the slowest, which is where CI's time goes).
fn run_document(doc: &Path, cmds: &[DocCommand]) -> (Vec<String>, Vec<(f64, String)>) {
    let name = doc.to_string_lossy().replace(['/', '.'], "_");
    let dir = scratch_dir(&name);
    let mut failures = Vec::new();
    let mut times = Vec::new();
    for (n, cmd) in cmds.iter().enumerate() {
        let Ok(Some(to_run)) = runnable(cmd) else { continue };
        let at = format!("{}:{}: `{}`", doc.display(), cmd.line, cmd.text);
        let started = std::time::Instant::now();
        let outcome = run_in(&dir, &to_run, n);
        times.push((started.elapsed().as_secs_f64(), at.clone()));
        let ran = if to_run == cmd.text {
            String::new()
        } else {
            format!(" (ran `{to_run}`)")
        };
        let expected_error = FAILING.iter().find(|(c, _)| *c == cmd.text).map(|(_, e)| *e);
        match (outcome, expected_error) {
            (Err(e), _) => failures.push(format!("{at}{ran}: {e}")),
            (Ok((true, _)), None) => {}
            (Ok((false, stderr)), None) => failures.push(format!("{at}{ran}: failed:\n{}", tail(&stderr))),
            (Ok((true, _)), Some(e)) => {
                failures.push(format!("{at}: documented to fail with `{e}`, but succeeded"))
            }
            (Ok((false, stderr)), Some(e)) => {
                if !stderr.contains(e) {
                    failures.push(format!(
                        "{at}: documented to fail with `{e}`, failed with:\n{}",
                        tail(&stderr)
                    ));
                }
            }
        }
    }
    if failures.is_empty() {
        let _ = fs::remove_dir_all(&dir);
    } else {
        failures.push(format!("(scratch directory kept: {})", dir.display()));
    }
    (failures, times)
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

fn all_commands() -> (Vec<(PathBuf, Vec<DocCommand>)>, Vec<String>) {
    let mut per_doc = Vec::new();
    let mut problems = Vec::new();
    for doc in documents() {
        let text = fs::read_to_string(Path::new(REPO).join(&doc))
            .unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let (cmds, p) = extract(&doc, &text);
        problems.extend(p);
        per_doc.push((doc, cmds));
    }
    (per_doc, problems)
}

#[test]
fn readme_is_at_most_150_lines_and_keeps_the_two_commands() {
    let readme = fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; at most {README_MAX_LINES} (move detail into docs/)"
    );
    for cmd in [
        "cargo run --release -- run --kernel kmeans-1 --scheduler lrr,gto",
        "cargo test --release",
    ] {
        assert!(readme.contains(&format!("\n{cmd}")), "README.md lost `{cmd}`");
    }
}

#[test]
fn every_doc_command_is_runnable_reduced_or_marked_and_the_tables_are_current() {
    let (per_doc, mut problems) = all_commands();
    let all: Vec<&DocCommand> = per_doc.iter().flat_map(|(_, c)| c).collect();
    assert!(all.len() > 40, "only {} commands found in the docs", all.len());
    for cmd in &all {
        if let Err(e) = runnable(cmd) {
            problems.push(e);
        }
    }
    let runnable_texts: Vec<String> = all
        .iter()
        .filter(|c| c.not_run.is_none())
        .map(|c| match c.text.strip_prefix("cargo run --release -- ") {
            Some(rest) => format!("mascar {rest}"),
            None => c.text.clone(),
        })
        .collect();
    for (doc_form, _) in REDUCED.iter().chain(FAILING) {
        if !runnable_texts.iter().any(|t| t == doc_form) {
            problems.push(format!(
                "`{doc_form}` is in a table of testbench/docs.rs but no longer in the docs"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "documentation commands:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_doc_command_runs() {
    let (mut per_doc, _) = all_commands();
    let all: Vec<DocCommand> = per_doc.iter().flat_map(|(_, c)| c.clone()).collect();
    // A command that runs, as it is run, in an earlier document (`mascar compare` in
    // docs/cli.md and docs/results.md) runs there only: twice would check nothing more.
    // Should a later command of its own document need its files, that command fails.
    // Each command text → (the document that runs it first, where).
    let mut first_at = std::collections::HashMap::new();
    let mut repeats = 0;
    for (doc, (_, cmds)) in per_doc.iter_mut().enumerate() {
        for cmd in cmds.iter_mut() {
            let Ok(Some(text)) = runnable(cmd) else { continue };
            let at = format!("{}:{}", cmd.doc.display(), cmd.line);
            let (first_doc, first) = first_at.entry(text).or_insert((doc, at));
            if *first_doc != doc {
                cmd.not_run = Some(format!("runs for {first}"));
                repeats += 1;
            }
        }
    }
    // Two workers: documents are independent, commands within one are not.
    let queue = Mutex::new(per_doc);
    let failures = Mutex::new(Vec::new());
    let times = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((doc, cmds)) = queue.lock().unwrap().pop() else {
                    break;
                };
                let (f, t) = run_document(&doc, &cmds);
                failures.lock().unwrap().extend(f);
                times.lock().unwrap().extend(t);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let mut times = times.into_inner().unwrap();
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (secs, at) in times.iter().take(12) {
        println!("{secs:6.1} s  {at}");
    }
    let ran = all.iter().filter(|c| matches!(runnable(c), Ok(Some(_)))).count() - repeats;
    let reduced = all
        .iter()
        .filter(|c| REDUCED.iter().any(|(d, _)| *d == c.text))
        .count();
    println!(
        "{ran} doc commands run ({reduced} in a reduced form), {repeats} run in an earlier document, {} marked not run",
        all.len() - ran - repeats
    );
    assert!(
        failures.is_empty(),
        "documentation commands that fail:\n{}",
        failures.join("\n\n")
    );
}

#[test]
fn extraction_finds_commands_markers_and_strays() {
    let doc = "\
Prose mentioning `mascar run -k x` inline is not a command.

```sh
mascar run -k srad-1 \\
    --sms 4   # a comment
cargo test --release  # not run in tests: it is the suite
ls -l
# a comment line
```

```console
$ mascar kernels
bp-2         bandwidth        ...
$ gtkwave a.vcd  # not run in tests:
```

    mascar run -k indented

```
mascar run -k in-a-plain-block
```
";
    let (cmds, problems) = extract(Path::new("t.md"), doc);
    let texts: Vec<&str> = cmds.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "mascar run -k srad-1 --sms 4",
            "cargo test --release",
            "ls -l",
            "mascar kernels",
            "gtkwave a.vcd"
        ]
    );
    assert_eq!(cmds[0].line, 4);
    assert_eq!(cmds[1].not_run.as_deref(), Some("it is the suite"));
    assert_eq!(
        runnable(&cmds[0]),
        Ok(Some("mascar run -k srad-1 --sms 4".to_string()))
    );
    assert_eq!(runnable(&cmds[1]), Ok(None));
    assert!(runnable(&cmds[2]).unwrap_err().contains("not a mascar command"));
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("needs a reason"));
    assert!(problems[1].contains("indented command"));
    assert!(problems[2].contains("outside a ```sh"));
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_relative_link_in_the_docs_points_at_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = fs::read_to_string(Path::new(REPO).join(&doc)).unwrap();
        let dir = Path::new(REPO).join(&doc).parent().unwrap().to_path_buf();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with('#') {
                continue;
            }
            let (file, frag) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target, None),
            };
            let path = dir.join(file);
            if !path.exists() {
                broken.push(format!("{}: `{target}`: no such file", doc.display()));
                continue;
            }
            if let Some(frag) = frag {
                let body = fs::read_to_string(&path).unwrap_or_default();
                let found = body
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .any(|h| anchor(h.trim_start_matches('#')) == frag);
                if !found {
                    broken.push(format!("{}: `{target}`: no such heading", doc.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
