//! Safe output files: every file is written under a temporary name and renamed into place
//! only when complete, so a run leaves either the whole file or none.

use std::fs::File;
use std::io::{self, BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

pub mod fst;
pub mod vcd;

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
}
