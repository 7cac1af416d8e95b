//! Human-readable summaries and safe output files.

pub mod compare;
pub mod energy;
pub mod plots;

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::stats::RunStats;

/// A metrics table with one column per run (e.g. one per scheduler).
pub fn summary_table(runs: &[(RunStats, Duration)]) -> String {
    let mut out = String::new();
    let Some((first, _)) = runs.first() else {
        return out;
    };
    let _ = writeln!(out, "kernel {} on {} SMs", first.kernel, first.sms);
    type Row = (&'static str, fn(&RunStats) -> String);
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
    /// to fill; flush and drop the writer before [`PendingFile::commit`].
    pub fn create(path: &Path) -> std::io::Result<(PendingFile, BufWriter<File>)> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
        let file = File::create(&tmp)?;
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
    pub fn commit(mut self) -> std::io::Result<PathBuf> {
        std::fs::rename(&self.tmp, &self.path)?;
        self.committed = true;
        Ok(std::mem::take(&mut self.path))
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` through a [`PendingFile`], synced before the rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (pending, mut out) = PendingFile::create(path)?;
    out.write_all(bytes)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    pending.commit().map(|_| ())
}

/// The columns of [`runs_csv`], in order (stable names, documented in the README).
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

/// One CSV row per run.
pub fn runs_csv<'a>(runs: impl IntoIterator<Item = &'a RunStats>) -> String {
    let mut out = RUN_CSV_COLUMNS.join(",");
    out.push('\n');
    for s in runs {
        let _ = writeln!(
            out,
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
        );
    }
    out
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
