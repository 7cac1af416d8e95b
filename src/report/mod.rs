//! Human-readable summaries and safe output files.

pub mod compare;
pub mod energy;
pub mod plots;

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::sched::SchedulerKind;
use crate::stats::RunStats;

type Row = (&'static str, fn(&RunStats) -> String);

/// MAS (memory-aware scheduling) counters of [`summary_table`].
const MAS_ROWS: &[Row] = &[
    ("MP fraction", |s| format!("{:.3}", s.mp_fraction)),
    ("MP entries", |s| s.mas.mp_entries.to_string()),
    ("mean MP episode (cycles)", |s| {
        format!("{:.1}", s.mp_mean_episode)
    }),
    ("owner changes", |s| s.mas.owner_changes.to_string()),
    ("  first owner", |s| s.mas.owner_first.to_string()),
    ("  after dependent load", |s| {
        s.mas.owner_after_dependent_load.to_string()
    }),
    ("  after owner exit", |s| s.mas.owner_after_exit.to_string()),
    ("  after owner barrier", |s| s.mas.owner_after_barrier.to_string()),
    ("  other hand-over", |s| s.mas.owner_other.to_string()),
    ("owner returned to EP", |s| s.mas.owner_returned_to_ep.to_string()),
    ("stalled warp-cycles", |s| s.mas.stalled_warp_cycles.to_string()),
];

/// CAR (cache access re-execution) counters of [`summary_table`].
const CAR_ROWS: &[Row] = &[
    ("NACKs (L1 refusals)", |s| s.car.nacks.to_string()),
    ("  hit-only refusals", |s| s.car.hit_only_nacks.to_string()),
    ("CAR parked", |s| s.car.enqueued.to_string()),
    ("queue retries", |s| s.car.retries.to_string()),
    ("  wasted (refused)", |s| s.car.failed_retries.to_string()),
    ("  success rate", |s| format!("{:.3}", s.car.retry_success_rate)),
    ("re-executions", |s| s.car.reexecutions.to_string()),
    ("hits under miss", |s| s.car.hits_under_miss.to_string()),
    ("queue-full cycles", |s| s.car.queue_full_cycles.to_string()),
    ("peak queue occupancy", |s| s.car.peak_occupancy.to_string()),
];

/// A metrics table with one column per run (e.g. one per scheduler).
pub fn summary_table(runs: &[(RunStats, Duration)]) -> String {
    let mut out = String::new();
    let Some((first, _)) = runs.first() else {
        return out;
    };
    let _ = writeln!(out, "kernel {} on {} SMs", first.kernel, first.sms);
    let rows: &[Row] = &[
        ("cycles", |s| s.cycles.to_string()),
        ("warp instructions", |s| s.warp_instructions.to_string()),
        ("IPC", |s| format!("{:.3}", s.ipc)),
        ("% of peak IPC", |s| format!("{:.1}", 100.0 * s.ipc / s.peak_ipc)),
        ("L1 hit rate", |s| format!("{:.3}", s.l1_hit_rate)),
        ("L1 reservation fails", |s| s.l1_reservation_fails.to_string()),
        ("LSU stall fraction", |s| format!("{:.3}", s.lsu_stall_fraction)),
        ("L2 hit rate", |s| format!("{:.3}", s.l2.hit_rate())),
        ("DRAM utilization", |s| format!("{:.3}", s.dram_utilization)),
        ("DRAM bytes/cycle", |s| format!("{:.1}", s.dram_bytes_per_cycle)),
        ("DRAM row hit rate", |s| format!("{:.3}", s.dram.row_hit_rate)),
        ("DRAM activations", |s| s.dram.activations.to_string()),
        ("DRAM reads/writes", |s| {
            format!("{}/{}", s.dram.reads, s.dram.writes)
        }),
        ("DRAM turns R→W/W→R", |s| {
            format!("{}/{}", s.dram.read_to_write, s.dram.write_to_read)
        }),
        ("mean L1 miss latency", |s| {
            format!("{:.0}", s.sm.l1_miss_latency.mean())
        }),
    ];
    let _ = write!(out, "{:<22}", "");
    for (s, _) in runs {
        let _ = write!(out, "{:>14}", s.scheduler);
    }
    out.push('\n');
    for (name, f) in rows {
        let _ = write!(out, "{name:<22}");
        for (s, _) in runs {
            let _ = write!(out, "{:>14}", f(s));
        }
        out.push('\n');
    }
    // DRAM per channel: bus utilisation / row hit rate.
    let channels = runs.iter().map(|(s, _)| s.dram.channels.len()).max().unwrap_or(0);
    for i in 0..channels {
        let _ = write!(out, "{:<22}", format!("  ch{i} util/row hits"));
        for (s, _) in runs {
            let cell = s.dram.channels.get(i).map_or("-".to_string(), |c| {
                format!("{:.3}/{:.3}", c.bus_utilization, c.row_hit_rate)
            });
            let _ = write!(out, "{cell:>14}");
        }
        out.push('\n');
    }
    // Mascar's own counters, where a run's scheduler has the block ("-" for one that has not).
    let uses = |s: &RunStats, car: bool| {
        s.scheduler
            .parse::<SchedulerKind>()
            .is_ok_and(|k| if car { k.uses_car() } else { k.uses_mas() })
    };
    for (car, rows) in [(false, MAS_ROWS), (true, CAR_ROWS)] {
        if !runs.iter().any(|(s, _)| uses(s, car)) {
            continue;
        }
        for (name, f) in rows {
            let _ = write!(out, "{name:<22}");
            for (s, _) in runs {
                let cell = if uses(s, car) { f(s) } else { "-".to_string() };
                let _ = write!(out, "{cell:>14}");
            }
            out.push('\n');
        }
    }
    if runs.len() > 1 {
        let _ = write!(out, "{:<22}", "speedup vs first");
        for (s, _) in runs {
            let _ = write!(
                out,
                "{:>14}",
                format!("{:.3}", first.cycles as f64 / s.cycles.max(1) as f64)
            );
        }
        out.push('\n');
    }
    let _ = write!(out, "{:<22}", "simulation speed");
    for (s, wall) in runs {
        let rate = s.cycles as f64 * s.sms as f64 / wall.as_secs_f64().max(1e-9);
        let _ = write!(out, "{:>14}", format!("{:.2}M SMc/s", rate / 1e6));
    }
    out.push('\n');
    out
}

// ---------------------------------------------------------------------------------------
// Output files. Every file is written under a temporary name beside its target
// (`.{name}.tmp{pid}`, same directory so the rename is atomic) and renamed into place only
// when complete. The temporaries live in a process-wide registry, so an interrupt removes
// them ([`remove_temporaries_on_interrupt`]); a later write to the same target sweeps those a
// killed process left ([`sweep_stale`]).

/// Temporaries this process has created (or handed out) and not yet committed or removed.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The registry. Held while a temporary is created, renamed or removed, and by the interrupt
/// handler until the process exits: a file is then either in place or gone, never both.
fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unregister(live: &mut Vec<PathBuf>, tmp: &Path) {
    if let Some(i) = live.iter().position(|p| p == tmp) {
        live.swap_remove(i);
    }
}

/// An I/O error that names the file: "cannot write /x/y.json: No space left on device".
fn write_error(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
}

fn invalid(path: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("cannot write {}: {why}", path.display()),
    )
}

/// `path`'s directory (`.` for a bare file name) and file name.
fn split_target(path: &Path) -> io::Result<(PathBuf, String)> {
    let name = path
        .file_name()
        .ok_or_else(|| invalid(path, "not a file name"))?
        .to_string_lossy()
        .into_owned();
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir.to_path_buf(), name))
}

/// The temporary name of `path` for this process, `.{name}{kind}{pid}` (kind `.tmp`, or
/// `.old` for the backup [`OutputSet::commit`] keeps while it renames).
fn side_path(dir: &Path, name: &str, kind: &str) -> PathBuf {
    dir.join(format!(".{name}{kind}{}", std::process::id()))
}

/// Creates `path`'s directory, sweeps stale temporaries and returns the temporary path.
fn prepare(path: &Path) -> io::Result<PathBuf> {
    let (dir, name) = split_target(path)?;
    if path.is_dir() {
        return Err(invalid(path, "a directory is in the way"));
    }
    std::fs::create_dir_all(&dir).map_err(|e| write_error(path, e))?;
    sweep_stale(&dir, &name);
    Ok(side_path(&dir, &name, ".tmp"))
}

/// Removes `.{name}.tmp<PID>` and `.{name}.old<PID>` files in `dir` left by processes that
/// no longer exist (killed with SIGKILL, or a crash). A live process's temporaries, this
/// one's included, are left alone. Linux only (a process is alive while `/proc/<PID>`
/// exists); elsewhere nothing is swept.
pub fn sweep_stale(dir: &Path, name: &str) {
    let proc_fs = Path::new("/proc");
    if !cfg!(target_os = "linux") || !proc_fs.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let Some(pid) = rest.strip_prefix("tmp").or_else(|| rest.strip_prefix("old")) else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid != std::process::id() && !proc_fs.join(pid.to_string()).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Installs a SIGINT/SIGTERM/SIGHUP handler that removes every temporary output file of this
/// process, prints "interrupted" and exits with 130 (the shell's code for an interrupt).
pub fn remove_temporaries_on_interrupt() -> Result<(), ctrlc::Error> {
    ctrlc::set_handler(|| exit_interrupted())
}

/// Removes every registered temporary and exits with 130. The registry stays locked until
/// the process is gone, so no temporary is created or renamed into place meanwhile.
pub fn exit_interrupted() -> ! {
    remove_live_temporaries();
    // On a terminal, clear a progress bar's line first.
    let clear = if std::io::IsTerminal::is_terminal(&io::stderr()) {
        "\r\x1b[2K"
    } else {
        ""
    };
    eprintln!("{clear}interrupted");
    std::process::exit(130)
}

/// Removes every temporary this process holds (before an exit that skips destructors).
pub fn remove_live_temporaries() {
    for tmp in live().iter() {
        let _ = std::fs::remove_file(tmp);
    }
}

/// The temporaries this process holds now (for tests and diagnostics).
pub fn live_temporaries() -> Vec<PathBuf> {
    live().clone()
}

/// A file being written under a temporary name beside its destination: [`commit`] moves it
/// into place; dropped uncommitted (an error, an interrupted run), the temporary file is
/// removed. So an output file is either complete or absent, never half-written.
///
/// [`commit`]: PendingFile::commit
pub struct PendingFile {
    path: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

impl PendingFile {
    /// Creates the temporary file (and the destination's directory) and returns the writer
    /// to fill; flush and drop the writer before [`PendingFile::commit`]. Errors name `path`.
    pub fn create(path: &Path) -> io::Result<(PendingFile, BufWriter<File>)> {
        let tmp = prepare(path)?;
        let file = {
            let mut live = live();
            if live.contains(&tmp) {
                return Err(invalid(path, "this process is already writing it"));
            }
            let file = File::create(&tmp).map_err(|e| write_error(path, e))?;
            live.push(tmp.clone());
            file
        };
        let pending = PendingFile {
            path: path.to_path_buf(),
            tmp,
            committed: false,
        };
        Ok((pending, BufWriter::new(file)))
    }

    /// Where the file goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the complete file into place.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        // The registry is released before an error return drops `self` (which locks it).
        let renamed = {
            let mut live = live();
            let renamed = std::fs::rename(&self.tmp, &self.path);
            if renamed.is_ok() {
                unregister(&mut live, &self.tmp);
                self.committed = true;
            }
            renamed
        };
        renamed.map_err(|e| write_error(&self.path, e))?;
        Ok(std::mem::take(&mut self.path))
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            let mut live = live();
            let _ = std::fs::remove_file(&self.tmp);
            unregister(&mut live, &self.tmp);
        }
    }
}

/// Writes `bytes` to `path` through a temporary file, synced before the rename. Errors name
/// `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut set = OutputSet::new();
    set.write(path, bytes)?;
    set.commit().map(|_| ())
}

/// All output files of one command, as a transaction: each is written to a temporary file
/// beside its target, and [`OutputSet::commit`] renames them into place only when every one
/// was written; on any failure (or when the set is dropped uncommitted) none is renamed, the
/// temporaries are removed and the files already at the targets stay as they were.
///
/// ```ignore
/// let mut out = OutputSet::new();
/// out.write(&dir.join("a.json"), json.as_bytes())?;
/// let tmp = out.temp_path(&dir.join("b.vcd"))?; // for writers that need a path
/// write_vcd_to(&tmp)?;
/// out.commit()?;
/// ```
#[derive(Default)]
pub struct OutputSet {
    /// (target, temporary), in the order given.
    staged: Vec<(PathBuf, PathBuf)>,
}

impl OutputSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes `bytes` to `path`'s temporary (synced to disk); `path` itself is untouched
    /// until [`OutputSet::commit`]. Writing a target twice keeps the last bytes.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let tmp = self.stage(path, true)?;
        let written = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()
        })();
        written.map_err(|e| write_error(path, e))
    }

    /// The temporary path of `path`, for a writer that needs a path (e.g. a plotters
    /// backend): the file it writes there is moved to `path` on [`OutputSet::commit`] (which
    /// fails if the writer did not create it), or removed if the set is dropped.
    pub fn temp_path(&mut self, path: &Path) -> io::Result<PathBuf> {
        self.stage(path, false)
    }

    /// The targets staged so far.
    pub fn targets(&self) -> impl Iterator<Item = &Path> {
        self.staged.iter().map(|(p, _)| p.as_path())
    }

    /// Registers `path` (once) and, with `create`, creates its empty temporary.
    fn stage(&mut self, path: &Path, create: bool) -> io::Result<PathBuf> {
        if let Some((_, tmp)) = self.staged.iter().find(|(p, _)| p == path) {
            return Ok(tmp.clone());
        }
        let tmp = prepare(path)?;
        let mut live = live();
        if live.contains(&tmp) {
            return Err(invalid(path, "this process is already writing it"));
        }
        if create {
            File::create(&tmp).map_err(|e| write_error(path, e))?;
        }
        live.push(tmp.clone());
        self.staged.push((path.to_path_buf(), tmp.clone()));
        Ok(tmp)
    }

    /// Renames every temporary into place and returns the targets. Before the first rename
    /// every temporary is synced and every target checked; should a rename still fail, the
    /// targets already replaced get their old files back (kept as hard links meanwhile).
    pub fn commit(mut self) -> io::Result<Vec<PathBuf>> {
        for (path, tmp) in &self.staged {
            File::open(tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| write_error(path, e))?;
            if path.is_dir() {
                return Err(invalid(path, "a directory is in the way"));
            }
        }
        let staged = std::mem::take(&mut self.staged);
        let mut live = live();
        // Backups of the files being replaced; None where there was none (or no hard link
        // could be made: that target cannot be restored, but the checks above make a
        // failing rename very unlikely).
        let mut backups: Vec<Option<PathBuf>> = Vec::with_capacity(staged.len());
        for (path, _) in &staged {
            let backup = std::fs::symlink_metadata(path).ok().and_then(|_| {
                let (dir, name) = split_target(path).ok()?;
                let old = side_path(&dir, &name, ".old");
                let _ = std::fs::remove_file(&old);
                std::fs::hard_link(path, &old).ok()?;
                live.push(old.clone());
                Some(old)
            });
            backups.push(backup);
        }
        let mut failure = None;
        let mut renamed = 0;
        for (path, tmp) in &staged {
            if let Err(e) = std::fs::rename(tmp, path) {
                failure = Some(write_error(path, e));
                break;
            }
            renamed += 1;
        }
        if failure.is_some() {
            for ((path, _), backup) in staged.iter().zip(&backups).take(renamed) {
                let _ = match backup {
                    Some(old) => std::fs::rename(old, path),
                    None => std::fs::remove_file(path),
                };
            }
        }
        for (_, tmp) in &staged {
            let _ = std::fs::remove_file(tmp);
            unregister(&mut live, tmp);
        }
        for old in backups.iter().flatten() {
            let _ = std::fs::remove_file(old);
            unregister(&mut live, old);
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(staged.into_iter().map(|(p, _)| p).collect()),
        }
    }
}

impl Drop for OutputSet {
    fn drop(&mut self) {
        if self.staged.is_empty() {
            return;
        }
        let mut live = live();
        for (_, tmp) in &self.staged {
            let _ = std::fs::remove_file(tmp);
            unregister(&mut live, tmp);
        }
    }
}

/// The columns of [`run_csv_row`], in order (stable names, documented in docs/results.md).
pub const RUN_CSV_COLUMNS: &[&str] = &[
    "kernel",
    "scheduler",
    "sms",
    "cycles",
    "warp_instructions",
    "ipc",
    "peak_ipc",
    "l1_hit_rate",
    "l1_reservation_fails",
    "lsu_stall_fraction",
    "l2_hit_rate",
    "dram_utilization",
    "dram_bytes_per_cycle",
    "mp_fraction",
    "owner_changes",
    "reexecutions",
    "hits_under_miss",
];

/// One run's values in the order of [`RUN_CSV_COLUMNS`], without a line end.
pub fn run_csv_row(s: &RunStats) -> String {
    format!(
        "{},{},{},{},{},{:.6},{:.6},{:.6},{},{:.6},{:.6},{:.6},{:.6},{:.6},{},{},{}",
        s.kernel,
        s.scheduler,
        s.sms,
        s.cycles,
        s.warp_instructions,
        s.ipc,
        s.peak_ipc,
        s.l1_hit_rate,
        s.l1_reservation_fails,
        s.lsu_stall_fraction,
        s.l2.hit_rate(),
        s.dram_utilization,
        s.dram_bytes_per_cycle,
        s.mp_fraction,
        s.mas.owner_changes,
        s.car.reexecutions,
        s.car.hits_under_miss
    )
}

/// The closing line of a run, as GPGPU-Sim users expect: wall time and simulation speed.
pub fn exit_summary(s: &RunStats, wall: Duration) -> String {
    let secs = wall.as_secs_f64().max(1e-9);
    format!(
        "{} / {}: {} cycles, {} warp instructions in {:.2} s of wall time ({:.0} cycles/s, {:.0} SM-cycles/s, {:.0} warp instructions/s)",
        s.kernel,
        s.scheduler,
        s.cycles,
        s.warp_instructions,
        secs,
        s.cycles as f64 / secs,
        s.cycles as f64 * s.sms as f64 / secs,
        s.warp_instructions as f64 / secs
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mascar-report-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// File names in `d` that are temporaries or backups.
    fn debris(d: &Path) -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect()
    }

    #[test]
    fn output_set_renames_only_when_every_file_was_written() {
        let d = dir("set-write");
        std::fs::write(d.join("a.txt"), "old a").unwrap();
        std::fs::write(d.join("blocker"), "a file, not a directory").unwrap();
        let mut set = OutputSet::new();
        set.write(&d.join("a.txt"), b"new a").unwrap();
        let tmp = set.temp_path(&d.join("a.txt")).unwrap();
        assert!(live_temporaries().contains(&tmp));
        let bad = d.join("blocker").join("b.txt");
        let e = set.write(&bad, b"b").unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("cannot write {}: ", bad.display())),
            "{e}"
        );
        drop(set);
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "old a");
        assert!(debris(&d).is_empty(), "{:?}", debris(&d));
        assert!(!live_temporaries().contains(&tmp));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn output_set_commit_checks_every_target_before_renaming() {
        let d = dir("set-commit");
        std::fs::write(d.join("a.txt"), "old a").unwrap();
        let mut set = OutputSet::new();
        set.write(&d.join("a.txt"), b"new a").unwrap();
        set.write(&d.join("b.txt"), b"new b").unwrap();
        // A directory appears at a target after it was staged.
        std::fs::create_dir(d.join("b.txt")).unwrap();
        let e = set.commit().unwrap_err();
        assert!(
            e.to_string().contains(&d.join("b.txt").display().to_string()),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "old a");
        assert!(d.join("b.txt").is_dir());
        assert!(debris(&d).is_empty(), "{:?}", debris(&d));

        let mut set = OutputSet::new();
        set.write(&d.join("a.txt"), b"new a").unwrap();
        set.write(&d.join("c.txt"), b"new c").unwrap();
        let plot = set.temp_path(&d.join("p.svg")).unwrap();
        std::fs::write(&plot, "<svg/>").unwrap();
        let done = set.commit().unwrap();
        assert_eq!(done.len(), 3);
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(d.join("c.txt")).unwrap(), "new c");
        assert_eq!(std::fs::read_to_string(d.join("p.svg")).unwrap(), "<svg/>");
        assert!(debris(&d).is_empty(), "{:?}", debris(&d));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_path_writer_that_wrote_nothing_fails_the_commit() {
        let d = dir("set-missing");
        let mut set = OutputSet::new();
        set.write(&d.join("a.txt"), b"a").unwrap();
        set.temp_path(&d.join("p.png")).unwrap();
        let e = set.commit().unwrap_err();
        assert!(e.to_string().contains("p.png"), "{e}");
        assert!(!d.join("a.txt").exists());
        assert!(debris(&d).is_empty(), "{:?}", debris(&d));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn pending_file_dropped_uncommitted_leaves_nothing() {
        let d = dir("pending");
        let (pending, mut out) = PendingFile::create(&d.join("x.vcd")).unwrap();
        out.write_all(b"partial").unwrap();
        drop(out);
        assert_eq!(debris(&d).len(), 1);
        assert!(
            PendingFile::create(&d.join("x.vcd")).is_err(),
            "the same target twice at once"
        );
        drop(pending);
        assert!(debris(&d).is_empty() && !d.join("x.vcd").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn stale_temporaries_of_dead_processes_are_swept_live_ones_kept() {
        let d = dir("stale");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = [format!(".x.json.tmp{dead}"), format!(".x.json.old{dead}")];
        // PID 1 (init) is always alive: its temporary is not ours to remove.
        let alive = [".x.json.tmp1".to_string(), format!(".other.json.tmp{dead}")];
        for n in stale.iter().chain(&alive) {
            std::fs::write(d.join(n), "leftover").unwrap();
        }
        write_atomic(&d.join("x.json"), b"{}").unwrap();
        let mut left = debris(&d);
        left.sort();
        let mut want = alive.to_vec();
        want.sort();
        assert_eq!(left, want);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn summary_table_prints_mascar_counters_only_where_they_apply() {
        let mut lrr = RunStats {
            kernel: "k".into(),
            scheduler: "lrr".into(),
            sms: 1,
            cycles: 100,
            peak_ipc: 2.0,
            ..RunStats::default()
        };
        let plain = summary_table(&[(lrr.clone(), Duration::from_secs(1))]);
        assert!(!plain.contains("MP fraction") && !plain.contains("re-executions"));
        lrr.scheduler = "mas".into();
        lrr.mp_fraction = 0.25;
        lrr.mas.owner_changes = 7;
        let mas = summary_table(&[(lrr.clone(), Duration::from_secs(1))]);
        assert!(mas.contains("MP fraction") && mas.contains("0.250") && !mas.contains("re-executions"));
        let mut mascar = lrr.clone();
        mascar.scheduler = "mascar".into();
        mascar.car.reexecutions = 42;
        mascar.car.queue_full_cycles = 3;
        lrr.scheduler = "lrr".into();
        let both = summary_table(&[(lrr, Duration::from_secs(1)), (mascar, Duration::from_secs(1))]);
        let row = |name: &str| both.lines().find(|l| l.starts_with(name)).unwrap().to_string();
        assert!(row("re-executions").ends_with("42"), "{both}");
        assert!(row("re-executions").contains(" - "), "lrr has no CAR: {both}");
        assert!(row("queue-full cycles").ends_with('3'));
        assert!(row("owner changes").ends_with('7'));
    }
}
