//! The `compare` report: speedup of every scheduler over a baseline, per kernel and per kernel
//! class (geometric means), our figures beside the paper's (spec §6), and relative energy.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::report::energy::EnergyBreakdown;
use crate::stats::RunStats;
use crate::workload::builtin::KernelClass;

/// One simulated (kernel, scheduler) run, as `mascar compare` hands it to the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub kernel: String,
    pub class: KernelClass,
    pub scheduler: String,
    pub stats: RunStats,
    pub energy: EnergyBreakdown,
    /// The buffer placement the run used (`placement` of its configuration; 1 = exact).
    #[serde(default = "first_placement")]
    pub placement: u32,
}

fn first_placement() -> u32 {
    1
}

/// Scheduler names in report order; unknown names follow in first-seen order.
pub const SCHEDULER_ORDER: [&str; 7] = ["lrr", "gto", "owl", "ccws", "mas", "car", "mascar"];

/// The four class rows of the paper's table (slide 17), in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClassGroup {
    Bandwidth,
    CacheSensitive,
    MemoryIntensive,
    Compute,
}

impl ClassGroup {
    pub const ALL: [ClassGroup; 4] = [
        ClassGroup::Bandwidth,
        ClassGroup::CacheSensitive,
        ClassGroup::MemoryIntensive,
        ClassGroup::Compute,
    ];
    pub fn label(self) -> &'static str {
        match self {
            ClassGroup::Bandwidth => "bandwidth intensive",
            ClassGroup::CacheSensitive => "cache sensitive",
            ClassGroup::MemoryIntensive => "all memory intensive",
            ClassGroup::Compute => "compute intensive",
        }
    }
    pub fn contains(self, class: KernelClass) -> bool {
        match self {
            ClassGroup::Bandwidth => class == KernelClass::Bandwidth,
            ClassGroup::CacheSensitive => class == KernelClass::CacheSensitive,
            ClassGroup::MemoryIntensive => class.is_memory_intensive(),
            ClassGroup::Compute => class == KernelClass::Compute,
        }
    }
}

/// The paper's speedup over RR (spec §6, slide 17); compute-intensive kernels are "≈ 1.0".
pub fn paper_speedup(group: ClassGroup, scheduler: &str) -> Option<f64> {
    let row = match group {
        ClassGroup::Bandwidth => [1.04, 1.04, 1.04, 1.17],
        ClassGroup::CacheSensitive => [1.24, 1.04, 1.55, 1.56],
        ClassGroup::MemoryIntensive => [1.13, 1.04, 1.24, 1.34],
        ClassGroup::Compute => [1.0, 1.0, 1.0, 1.0],
    };
    let col = ["gto", "owl", "ccws", "mascar"]
        .iter()
        .position(|s| *s == scheduler)?;
    Some(row[col])
}

/// The paper's energy relative to RR: Mascar saves 12% on memory-intensive kernels.
pub fn paper_energy_rel(group: ClassGroup, scheduler: &str) -> Option<f64> {
    (group == ClassGroup::MemoryIntensive && scheduler == "mascar").then_some(0.88)
}

fn has_mas(scheduler: &str) -> bool {
    matches!(scheduler, "mas" | "mascar")
}

fn has_car(scheduler: &str) -> bool {
    matches!(scheduler, "car" | "mascar")
}

/// A speedup under one buffer placement.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlacementSpeedup {
    pub placement: u32,
    pub speedup: f64,
}

/// One scheduler's runs of one kernel, relative to the baseline runs of that kernel under the
/// same buffer placements. The other figures are the first placement's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelRun {
    pub scheduler: String,
    /// Baseline cycles / these cycles; under several placements, the geometric mean of the
    /// placements' speedups.
    pub speedup: f64,
    /// Smallest and largest speedup over the placements.
    #[serde(default)]
    pub speedup_min: f64,
    #[serde(default)]
    pub speedup_max: f64,
    /// The speedup under each placement, in placement order.
    #[serde(default)]
    pub placements: Vec<PlacementSpeedup>,
    /// This run's energy / the baseline's (None when the baseline energy is zero); geometric
    /// mean over placements.
    pub energy_rel: Option<f64>,
    pub cycles: u64,
    pub ipc: f64,
    pub peak_ipc: f64,
    pub l1_hit_rate: f64,
    pub lsu_stall_fraction: f64,
    /// Fraction of the DRAM channels' cycles spent transferring.
    #[serde(default)]
    pub dram_utilization: f64,
    pub mp_fraction: f64,
    pub owner_changes: u64,
    pub reexecutions: u64,
    pub hits_under_miss: u64,
}

/// All runs of one kernel that has a baseline run, in scheduler order.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelRow {
    pub kernel: String,
    pub class: KernelClass,
    pub runs: Vec<KernelRun>,
}

impl KernelRow {
    pub fn run(&self, scheduler: &str) -> Option<&KernelRun> {
        self.runs.iter().find(|r| r.scheduler == scheduler)
    }
}

impl KernelRun {
    /// Issued instructions per cycle as a fraction of the machine's peak.
    pub fn peak_fraction(&self) -> f64 {
        self.ipc / self.peak_ipc
    }

    /// The most a scheduler could speed this run up without cutting its DRAM traffic or its
    /// instruction count: the DRAM channels and the issue slots can at best be busy every
    /// cycle, so cycles ≥ max(DRAM busy cycles per channel, instructions / peak IPC).
    pub fn headroom(&self) -> Option<f64> {
        let busiest = self.dram_utilization.max(self.peak_fraction());
        (busiest > 0.0 && busiest.is_finite()).then(|| 1.0 / busiest)
    }
}

/// Geometric means of one scheduler over the kernels of one class row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClassCell {
    pub scheduler: String,
    /// Kernels of the class this scheduler ran.
    pub kernels: usize,
    /// Geometric mean over the kernels (of each kernel's geometric mean over placements).
    pub speedup: f64,
    /// Smallest and largest over placements of the class's geometric mean under one placement.
    #[serde(default)]
    pub speedup_min: f64,
    #[serde(default)]
    pub speedup_max: f64,
    pub energy_rel: Option<f64>,
    pub paper_speedup: Option<f64>,
    pub paper_energy_rel: Option<f64>,
    /// Arithmetic means over the kernels, for the CSV.
    pub mean_ipc: f64,
    pub mean_l1_hit_rate: f64,
    pub mean_lsu_stall_fraction: f64,
    pub mean_mp_fraction: f64,
    pub total_cycles: u64,
}

/// One class row: only classes with at least one kernel appear.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClassRow {
    pub group: ClassGroup,
    pub label: String,
    pub kernels: usize,
    pub cells: Vec<ClassCell>,
}

impl ClassRow {
    pub fn cell(&self, scheduler: &str) -> Option<&ClassCell> {
        self.cells.iter().find(|c| c.scheduler == scheduler)
    }
}

/// Everything the compare report prints.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SpeedupTable {
    pub baseline: String,
    /// Schedulers present (baseline included), in report order.
    pub schedulers: Vec<String>,
    pub kernels: Vec<KernelRow>,
    pub classes: Vec<ClassRow>,
    /// Buffer placements the runs used, in order (`[1]` for a plain comparison).
    #[serde(default)]
    pub placements: Vec<u32>,
    /// Kernels left out (no baseline run) and other remarks.
    pub notes: Vec<String>,
}

impl SpeedupTable {
    /// Runs under more than one buffer placement: speedups are shown with their min–max.
    pub fn multi_placement(&self) -> bool {
        self.placements.len() > 1
    }

    /// A speedup as printed: `1.234`, or `1.234 (1.100–1.400)` (geometric mean, then the
    /// smallest and largest over placements) under several placements.
    pub fn speedup_text(&self, v: Option<(f64, f64, f64)>) -> String {
        match v {
            Some((g, lo, hi)) if self.multi_placement() && g.is_finite() => {
                // Faster than the baseline under one layout and slower under another: the
                // figure rests on where the allocator put the arrays (issue 29 §4).
                let mark = if lo < 1.0 && hi > 1.0 { " *" } else { "" };
                format!("{g:.3} ({lo:.3}–{hi:.3}){mark}")
            }
            v => fmt_opt(v.map(|x| x.0), 3),
        }
    }

    /// The schedulers compared with the baseline (all but the baseline).
    pub fn compared(&self) -> impl Iterator<Item = &str> {
        self.schedulers
            .iter()
            .map(String::as_str)
            .filter(move |s| *s != self.baseline)
    }
}

/// Geometric mean of the positive, finite values; None when there are none.
pub fn geomean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
        sum += v.ln();
        n += 1;
    }
    (n > 0).then(|| (sum / n as f64).exp())
}

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values {
        sum += v;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// Scheduler names of `records`, in report order.
fn scheduler_order(records: &[RunRecord]) -> Vec<String> {
    let mut names: Vec<String> = SCHEDULER_ORDER
        .iter()
        .filter(|s| records.iter().any(|r| r.scheduler == **s))
        .map(|s| s.to_string())
        .collect();
    for r in records {
        if !names.contains(&r.scheduler) {
            names.push(r.scheduler.clone());
        }
    }
    names
}

/// Kernel names in first-seen order.
fn kernel_order(records: &[RunRecord]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for r in records {
        if !names.contains(&r.kernel.as_str()) {
            names.push(&r.kernel);
        }
    }
    names
}

fn kernel_run(rec: &RunRecord, base: &RunRecord) -> KernelRun {
    let s = &rec.stats;
    let base_energy = base.energy.total_nj;
    let speedup = base.stats.cycles.max(1) as f64 / s.cycles.max(1) as f64;
    KernelRun {
        scheduler: rec.scheduler.clone(),
        speedup,
        speedup_min: speedup,
        speedup_max: speedup,
        placements: vec![PlacementSpeedup {
            placement: rec.placement,
            speedup,
        }],
        energy_rel: (base_energy > 0.0).then(|| rec.energy.total_nj / base_energy),
        cycles: s.cycles,
        ipc: s.ipc,
        peak_ipc: s.peak_ipc,
        l1_hit_rate: s.l1_hit_rate,
        lsu_stall_fraction: s.lsu_stall_fraction,
        dram_utilization: s.dram_utilization,
        mp_fraction: s.mp_fraction,
        owner_changes: s.mas.owner_changes,
        reexecutions: s.car.reexecutions,
        hits_under_miss: s.car.hits_under_miss,
    }
}

/// Placements of `records`, in order.
fn placement_order<'a>(records: impl IntoIterator<Item = &'a RunRecord>) -> Vec<u32> {
    let mut p: Vec<u32> = records.into_iter().map(|r| r.placement).collect();
    p.sort_unstable();
    p.dedup();
    p
}

/// The row of one kernel, or a note saying why it is left out. Each run is compared with the
/// baseline run under the same placement.
fn kernel_row(
    kernel: &str,
    records: &[RunRecord],
    schedulers: &[String],
    baseline: &str,
    notes: &mut Vec<String>,
) -> Option<KernelRow> {
    let mine: Vec<&RunRecord> = records.iter().filter(|r| r.kernel == kernel).collect();
    let placements = placement_order(mine.iter().copied());
    let many = placements.len() > 1;
    let under = |p: u32| {
        if many {
            format!(" under placement {p}")
        } else {
            String::new()
        }
    };
    let mut bases: Vec<(u32, &RunRecord)> = Vec::new();
    for &p in &placements {
        match mine.iter().find(|r| r.scheduler == baseline && r.placement == p) {
            Some(b) => bases.push((p, b)),
            None if many => notes.push(format!(
                "{kernel}: no {baseline} run under placement {p}, its runs there are left out"
            )),
            None => {}
        }
    }
    let Some(&(_, first_base)) = bases.first() else {
        notes.push(format!("{kernel}: no {baseline} run, left out of the speedups"));
        return None;
    };
    let mut runs = Vec::new();
    for sched in schedulers {
        let mut per: Vec<KernelRun> = Vec::new();
        for &(p, base) in &bases {
            let same: Vec<&&RunRecord> = mine
                .iter()
                .filter(|r| &r.scheduler == sched && r.placement == p)
                .collect();
            if same.len() > 1 {
                notes.push(format!(
                    "{kernel}: {} runs with {sched}{}, the first is used",
                    same.len(),
                    under(p)
                ));
            }
            if let Some(rec) = same.first() {
                per.push(kernel_run(rec, base));
            }
        }
        let Some(first) = per.first() else { continue };
        let speedups: Vec<f64> = per.iter().map(|r| r.speedup).collect();
        runs.push(KernelRun {
            speedup: geomean(speedups.iter().copied()).unwrap_or(f64::NAN),
            speedup_min: speedups.iter().copied().fold(f64::INFINITY, f64::min),
            speedup_max: speedups.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            placements: per.iter().flat_map(|r| r.placements.iter().copied()).collect(),
            energy_rel: if per.iter().all(|r| r.energy_rel.is_some()) {
                geomean(per.iter().filter_map(|r| r.energy_rel))
            } else {
                None
            },
            ..first.clone()
        });
    }
    Some(KernelRow {
        kernel: kernel.to_string(),
        class: first_base.class,
        runs,
    })
}

fn class_cell(group: ClassGroup, scheduler: &str, runs: &[&KernelRun], placements: &[u32]) -> ClassCell {
    let speedup = geomean(runs.iter().map(|r| r.speedup)).unwrap_or(f64::NAN);
    // The class's geometric mean under each placement, over the kernels that ran under it.
    let per: Vec<f64> = placements
        .iter()
        .filter_map(|&p| {
            geomean(runs.iter().flat_map(|r| {
                r.placements
                    .iter()
                    .filter(move |x| x.placement == p)
                    .map(|x| x.speedup)
            }))
        })
        .collect();
    let (speedup_min, speedup_max) = if per.is_empty() {
        (speedup, speedup)
    } else {
        (
            per.iter().copied().fold(f64::INFINITY, f64::min),
            per.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    ClassCell {
        scheduler: scheduler.to_string(),
        kernels: runs.len(),
        speedup,
        speedup_min,
        speedup_max,
        energy_rel: geomean(runs.iter().filter_map(|r| r.energy_rel)),
        paper_speedup: paper_speedup(group, scheduler),
        paper_energy_rel: paper_energy_rel(group, scheduler),
        mean_ipc: mean(runs.iter().map(|r| r.ipc)),
        mean_l1_hit_rate: mean(runs.iter().map(|r| r.l1_hit_rate)),
        mean_lsu_stall_fraction: mean(runs.iter().map(|r| r.lsu_stall_fraction)),
        mean_mp_fraction: mean(runs.iter().map(|r| r.mp_fraction)),
        total_cycles: runs.iter().map(|r| r.cycles).sum(),
    }
}

fn class_row(
    group: ClassGroup,
    kernels: &[KernelRow],
    schedulers: &[String],
    placements: &[u32],
) -> Option<ClassRow> {
    let members: Vec<&KernelRow> = kernels.iter().filter(|k| group.contains(k.class)).collect();
    if members.is_empty() {
        return None;
    }
    let cells = schedulers
        .iter()
        .filter_map(|s| {
            let runs: Vec<&KernelRun> = members.iter().filter_map(|k| k.run(s)).collect();
            (!runs.is_empty()).then(|| class_cell(group, s, &runs, placements))
        })
        .collect();
    Some(ClassRow {
        group,
        label: group.label().to_string(),
        kernels: members.len(),
        cells,
    })
}

/// Speedups (baseline cycles / scheduler cycles) and relative energies, per kernel and per class.
pub fn speedup_table(records: &[RunRecord], baseline: &str) -> SpeedupTable {
    let mut notes = Vec::new();
    let placements = placement_order(records.iter());
    let all = scheduler_order(records);
    let kernels: Vec<KernelRow> = kernel_order(records)
        .into_iter()
        .filter_map(|k| kernel_row(k, records, &all, baseline, &mut notes))
        .collect();
    let schedulers: Vec<String> = all
        .into_iter()
        .filter(|s| kernels.iter().any(|k| k.run(s).is_some()))
        .collect();
    let classes = ClassGroup::ALL
        .iter()
        .filter_map(|g| class_row(*g, &kernels, &schedulers, &placements))
        .collect();
    let measured: Vec<&str> = kernels
        .iter()
        .filter(|k| k.class == KernelClass::MemoryIntensive)
        .map(|k| k.kernel.as_str())
        .collect();
    if !measured.is_empty() {
        notes.push(format!(
            "{}: memory intensive by warp instructions per L1 data miss under {baseline} \
             (below {}, `mascar kernels --characterise`), so counted in the all-memory-intensive \
             row only",
            measured.join(", "),
            crate::report::intensity::MEMORY_INTENSIVE_BELOW
        ));
    }
    SpeedupTable {
        baseline: baseline.to_string(),
        schedulers,
        kernels,
        classes,
        placements,
        notes,
    }
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "–".to_string(),
    }
}

/// The paper's figure for a class cell, as printed: compute kernels are "≈ 1.0".
fn paper_text(group: ClassGroup, scheduler: &str) -> String {
    match (group, paper_speedup(group, scheduler)) {
        (ClassGroup::Compute, Some(_)) => "≈1.0".to_string(),
        (_, v) => fmt_opt(v, 2),
    }
}

/// `1–5`, or `1, 3, 4` when not consecutive.
fn placement_list(p: &[u32]) -> String {
    match (p.first(), p.last()) {
        (Some(a), Some(b)) if (*b - *a) as usize + 1 == p.len() => format!("{a}–{b}"),
        _ => p.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
    }
}

fn has_paper(scheduler: &str) -> bool {
    paper_speedup(ClassGroup::Bandwidth, scheduler).is_some()
}

fn md_row(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

fn md_header(out: &mut String, cells: &[String]) {
    md_row(out, cells);
    md_row(out, &vec!["---".to_string(); cells.len()]);
}

fn md_class_speedups(out: &mut String, t: &SpeedupTable) {
    let _ = writeln!(
        out,
        "## Speedup over {}, per class (geometric mean)\n",
        t.baseline
    );
    let mut head = vec!["kernels".to_string(), "n".to_string()];
    for s in t.compared() {
        head.push(s.to_string());
        if has_paper(s) {
            head.push(format!("{s} (paper)"));
        }
    }
    md_header(out, &head);
    for row in &t.classes {
        let mut cells = vec![row.label.clone(), row.kernels.to_string()];
        for s in t.compared() {
            cells.push(t.speedup_text(row.cell(s).map(|c| (c.speedup, c.speedup_min, c.speedup_max))));
            if has_paper(s) {
                cells.push(paper_text(row.group, s));
            }
        }
        md_row(out, &cells);
    }
    out.push('\n');
}

fn md_kernel_speedups(out: &mut String, t: &SpeedupTable) {
    let _ = writeln!(out, "## Speedup over {}, per kernel\n", t.baseline);
    let mut head = vec![
        "kernel".to_string(),
        "class".to_string(),
        format!("{} cycles", t.baseline),
    ];
    head.extend(t.compared().map(str::to_string));
    md_header(out, &head);
    for k in &t.kernels {
        let base = k.run(&t.baseline).map_or(0, |r| r.cycles);
        let mut cells = vec![k.kernel.clone(), k.class.label().to_string(), base.to_string()];
        cells.extend(
            t.compared()
                .map(|s| t.speedup_text(k.run(s).map(|r| (r.speedup, r.speedup_min, r.speedup_max)))),
        );
        md_row(out, &cells);
    }
    out.push('\n');
}

/// Per-kernel activity of the Mascar hardware: MAS (MP fraction, owner changes) and CAR
/// (re-executions, hits under miss), for the schedulers that have them.
fn md_mechanisms(out: &mut String, t: &SpeedupTable) {
    type Col = (String, String, fn(&KernelRun) -> String);
    let mut cols: Vec<Col> = Vec::new();
    for s in &t.schedulers {
        if has_mas(s) {
            cols.push((s.clone(), format!("{s} MP fraction"), |r| {
                format!("{:.3}", r.mp_fraction)
            }));
            cols.push((s.clone(), format!("{s} owner changes"), |r| {
                r.owner_changes.to_string()
            }));
        }
        if has_car(s) {
            cols.push((s.clone(), format!("{s} re-executions"), |r| {
                r.reexecutions.to_string()
            }));
            cols.push((s.clone(), format!("{s} hits under miss"), |r| {
                r.hits_under_miss.to_string()
            }));
        }
    }
    if cols.is_empty() {
        return;
    }
    out.push_str("## MAS and CAR activity, per kernel\n\n");
    let mut head = vec!["kernel".to_string()];
    head.extend(cols.iter().map(|c| c.1.clone()));
    md_header(out, &head);
    for k in &t.kernels {
        let mut cells = vec![k.kernel.clone()];
        cells.extend(cols.iter().map(|(s, _, f)| k.run(s).map_or("–".to_string(), f)));
        md_row(out, &cells);
    }
    out.push('\n');
}

/// How close each kernel's baseline run already is to the machine's limits, beside the best
/// speedup any scheduler reached: it tells a scheduler that cannot win from one whose run
/// leaves room.
fn md_headroom(out: &mut String, t: &SpeedupTable) {
    let _ = writeln!(
        out,
        "## Headroom of the {b} runs, per kernel\n\n\
         Headroom = 1 / max(DRAM utilization, fraction of peak IPC) of the {b} run: the largest \
         speedup a scheduler can reach without reducing the kernel's DRAM traffic. A speedup \
         beyond it means the scheduler cut DRAM accesses (more L1 hits).\n",
        b = t.baseline
    );
    let head = [
        "kernel",
        "class",
        "DRAM utilization",
        "fraction of peak IPC",
        "LSU stalled",
        "headroom",
        "best speedup",
    ]
    .map(str::to_string);
    md_header(out, &head);
    for k in &t.kernels {
        let Some(base) = k.run(&t.baseline) else { continue };
        let best = t
            .compared()
            .filter_map(|s| k.run(s))
            .max_by(|a, b| a.speedup.total_cmp(&b.speedup))
            .map_or("–".to_string(), |r| {
                format!("{:.3} ({})", r.speedup, r.scheduler)
            });
        md_row(
            out,
            &[
                k.kernel.clone(),
                k.class.label().to_string(),
                format!("{:.3}", base.dram_utilization),
                format!("{:.3}", base.peak_fraction()),
                format!("{:.3}", base.lsu_stall_fraction),
                fmt_opt(base.headroom(), 2),
                best,
            ],
        );
    }
    out.push('\n');
}

fn md_energy(out: &mut String, t: &SpeedupTable) {
    let _ = writeln!(
        out,
        "## Energy relative to {} (geometric mean; below 1 saves energy)\n\n\
         Event-energy model of `docs/energy.md`. Paper: Mascar saves 12% energy on \
         memory-intensive kernels (0.88).\n",
        t.baseline
    );
    let mut head = vec!["kernels".to_string()];
    for s in t.compared() {
        head.push(s.to_string());
        if s == "mascar" {
            head.push("mascar (paper)".to_string());
        }
    }
    md_header(out, &head);
    for row in &t.classes {
        let mut cells = vec![row.label.clone()];
        for s in t.compared() {
            cells.push(fmt_opt(row.cell(s).and_then(|c| c.energy_rel), 3));
            if s == "mascar" {
                cells.push(fmt_opt(paper_energy_rel(row.group, s), 2));
            }
        }
        md_row(out, &cells);
    }
    out.push('\n');
}

/// The full report as Markdown: per-class speedups beside the paper's, per-kernel speedups,
/// MAS/CAR activity, relative energy, and notes.
pub fn to_markdown(t: &SpeedupTable) -> String {
    let mut out = String::from("# Scheduler comparison\n\n");
    let _ = writeln!(
        out,
        "Speedup = {b} cycles / scheduler cycles. Paper figures: Sethia et al., HPCA 2015 \
         (slide 17), speedup over RR.\n",
        b = t.baseline
    );
    if t.multi_placement() {
        let _ = writeln!(
            out,
            "Every kernel ran under buffer placements {} (docs/kernel-format.md); each \
             speedup is the geometric mean over them, with the smallest and largest in \
             parentheses (for a class: of the class's geometric mean under one placement); \
             `*` marks a speedup above 1 under one placement and below 1 under another, a \
             figure that rests on the layout. The other figures are placement {}'s.\n",
            placement_list(&t.placements),
            t.placements[0]
        );
    }
    md_class_speedups(&mut out, t);
    md_kernel_speedups(&mut out, t);
    md_mechanisms(&mut out, t);
    md_headroom(&mut out, t);
    md_energy(&mut out, t);
    if !t.notes.is_empty() {
        out.push_str("## Notes\n\n");
        for n in &t.notes {
            let _ = writeln!(out, "- {n}");
        }
    }
    out
}

/// The CSV header; the column names are stable.
/// `speedup` is the geometric mean over buffer placements, `speedup_min`/`speedup_max` its
/// range and `placements` how many there were; the rest is the first placement's.
pub const CSV_HEADER: &str = "row,kind,scheduler,speedup,paper_speedup,energy_rel,cycles,ipc,l1_hit_rate,lsu_stall_fraction,mp_fraction,speedup_min,speedup_max,placements";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.6}"),
        _ => String::new(),
    }
}

/// One line per (class or kernel) × scheduler, baseline included. Class rows carry geometric
/// means of speedup and energy, summed cycles and arithmetic means of the rates.
pub fn to_csv(t: &SpeedupTable) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for row in &t.classes {
        for c in &row.cells {
            let fields = [
                csv_field(&row.label),
                "class".to_string(),
                csv_field(&c.scheduler),
                csv_num(Some(c.speedup)),
                csv_num(c.paper_speedup),
                csv_num(c.energy_rel),
                c.total_cycles.to_string(),
                csv_num(Some(c.mean_ipc)),
                csv_num(Some(c.mean_l1_hit_rate)),
                csv_num(Some(c.mean_lsu_stall_fraction)),
                csv_num(Some(c.mean_mp_fraction)),
                csv_num(Some(c.speedup_min)),
                csv_num(Some(c.speedup_max)),
                t.placements.len().to_string(),
            ];
            let _ = writeln!(out, "{}", fields.join(","));
        }
    }
    for k in &t.kernels {
        for r in &k.runs {
            let fields = [
                csv_field(&k.kernel),
                "kernel".to_string(),
                csv_field(&r.scheduler),
                csv_num(Some(r.speedup)),
                String::new(),
                csv_num(r.energy_rel),
                r.cycles.to_string(),
                csv_num(Some(r.ipc)),
                csv_num(Some(r.l1_hit_rate)),
                csv_num(Some(r.lsu_stall_fraction)),
                csv_num(Some(r.mp_fraction)),
                csv_num(Some(r.speedup_min)),
                csv_num(Some(r.speedup_max)),
                r.placements.len().to_string(),
            ];
            let _ = writeln!(out, "{}", fields.join(","));
        }
    }
    out
}

/// A compact terminal table: per-class speedups with the paper's line under each, then the
/// per-kernel speedups.
pub fn to_stdout_table(t: &SpeedupTable) -> String {
    let compared: Vec<&str> = t.compared().collect();
    let class_text = |row: &ClassRow, s: &str| {
        t.speedup_text(row.cell(s).map(|c| (c.speedup, c.speedup_min, c.speedup_max)))
    };
    let kernel_text =
        |k: &KernelRow, s: &str| t.speedup_text(k.run(s).map(|r| (r.speedup, r.speedup_min, r.speedup_max)));
    // Each column as wide as its name and its cells (at least 8), so columns stay apart.
    let widths: Vec<usize> = compared
        .iter()
        .map(|s| {
            let cells = t
                .classes
                .iter()
                .map(|r| class_text(r, s))
                .chain(t.kernels.iter().map(|k| kernel_text(k, s)));
            cells
                .map(|c| c.chars().count())
                .chain([s.len()])
                .max()
                .unwrap_or(0)
                .saturating_add(2)
                .max(8)
        })
        .collect();
    // The label columns: kernel name and class, wider for long names (trace paths).
    let name_w = t
        .kernels
        .iter()
        .map(|k| k.kernel.chars().count() + 1)
        .max()
        .unwrap_or(0)
        .max(12);
    let class_w = t
        .kernels
        .iter()
        .map(|k| k.class.label().len() + 1)
        .max()
        .unwrap_or(0)
        .max(16);
    let first = name_w + class_w;
    let mut out = String::new();
    let _ = write!(out, "{:<first$}", format!("speedup over {}", t.baseline));
    for (s, w) in compared.iter().zip(&widths) {
        let _ = write!(out, "{s:>w$}");
    }
    out.push('\n');
    for row in &t.classes {
        let _ = write!(out, "{:<first$}", format!("{} ({})", row.label, row.kernels));
        for (s, w) in compared.iter().zip(&widths) {
            let _ = write!(out, "{:>w$}", class_text(row, s));
        }
        out.push('\n');
        if compared.iter().any(|s| has_paper(s)) {
            let _ = write!(out, "{:<first$}", "  paper");
            for (s, w) in compared.iter().zip(&widths) {
                let text = if has_paper(s) {
                    paper_text(row.group, s)
                } else {
                    String::new()
                };
                let _ = write!(out, "{text:>w$}");
            }
            out.push('\n');
        }
    }
    out.push('\n');
    for k in &t.kernels {
        let _ = write!(out, "{:<name_w$}{:<class_w$}", k.kernel, k.class.label());
        for (s, w) in compared.iter().zip(&widths) {
            let _ = write!(out, "{:>w$}", kernel_text(k, s));
        }
        out.push('\n');
    }
    if t.multi_placement() {
        let _ = writeln!(
            out,
            "speedups: geometric mean over buffer placements {} (min–max)",
            placement_list(&t.placements)
        );
    }
    for n in &t.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_measured_memory_intensive_kernel_counts_in_the_all_memory_row_only() {
        let recs = vec![
            rec("bw1", KernelClass::Bandwidth, "lrr", 100),
            rec("bw1", KernelClass::Bandwidth, "mascar", 50),
            rec("trace", KernelClass::MemoryIntensive, "lrr", 100),
            rec("trace", KernelClass::MemoryIntensive, "mascar", 25),
        ];
        let t = speedup_table(&recs, "lrr");
        let row = |g: ClassGroup| t.classes.iter().find(|c| c.group == g);
        assert_eq!(row(ClassGroup::Bandwidth).unwrap().kernels, 1);
        assert_eq!(row(ClassGroup::MemoryIntensive).unwrap().kernels, 2);
        assert!(row(ClassGroup::CacheSensitive).is_none());
        let all = row(ClassGroup::MemoryIntensive).unwrap().cell("mascar").unwrap();
        assert!((all.speedup - (2.0f64 * 4.0).sqrt()).abs() < 1e-12);
        assert!(
            t.notes.iter().any(|n| n.starts_with("trace: memory intensive")),
            "{:?}",
            t.notes
        );
        let printed = to_stdout_table(&t);
        assert!(printed.contains("trace       memory-intensive "), "{printed}");
    }

    pub(crate) fn rec(kernel: &str, class: KernelClass, scheduler: &str, cycles: u64) -> RunRecord {
        let stats = RunStats {
            kernel: kernel.to_string(),
            scheduler: scheduler.to_string(),
            cycles,
            ..RunStats::default()
        };
        let energy = EnergyBreakdown {
            total_nj: cycles as f64,
            ..EnergyBreakdown::default()
        };
        RunRecord {
            kernel: kernel.to_string(),
            class,
            scheduler: scheduler.to_string(),
            stats,
            energy,
            placement: 1,
        }
    }

    /// Two bandwidth kernels, one cache-sensitive, one compute; lrr, gto and mascar.
    pub(crate) fn sample() -> Vec<RunRecord> {
        use KernelClass::*;
        vec![
            rec("bw1", Bandwidth, "lrr", 1000),
            rec("bw1", Bandwidth, "gto", 1000),
            rec("bw1", Bandwidth, "mascar", 500),
            rec("bw2", Bandwidth, "lrr", 800),
            rec("bw2", Bandwidth, "gto", 400),
            rec("bw2", Bandwidth, "mascar", 100),
            rec("cs1", CacheSensitive, "lrr", 900),
            rec("cs1", CacheSensitive, "gto", 300),
            rec("cs1", CacheSensitive, "mascar", 300),
            rec("c1", Compute, "mascar", 100),
            rec("c1", Compute, "lrr", 100),
            rec("c1", Compute, "gto", 100),
        ]
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn geometric_means_per_class() {
        let t = speedup_table(&sample(), "lrr");
        assert_eq!(t.schedulers, ["lrr", "gto", "mascar"]);
        let labels: Vec<&str> = t.classes.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "bandwidth intensive",
                "cache sensitive",
                "all memory intensive",
                "compute intensive"
            ]
        );
        let bw = &t.classes[0];
        assert_eq!(bw.kernels, 2);
        // gto: 1.0 and 2.0 -> sqrt(2); mascar: 2 and 8 -> 4.
        assert!(close(bw.cell("gto").unwrap().speedup, 2f64.sqrt()));
        assert!(close(bw.cell("mascar").unwrap().speedup, 4.0));
        assert!(close(bw.cell("lrr").unwrap().speedup, 1.0));
        // all memory intensive, mascar: (2 * 8 * 3)^(1/3).
        let mem = &t.classes[2];
        assert_eq!(mem.kernels, 3);
        assert!(close(mem.cell("mascar").unwrap().speedup, 48f64.powf(1.0 / 3.0)));
        // energy here is proportional to cycles, so energy_rel = 1 / speedup.
        assert!(close(
            mem.cell("mascar").unwrap().energy_rel.unwrap(),
            48f64.powf(-1.0 / 3.0)
        ));
        assert!(close(t.classes[3].cell("mascar").unwrap().speedup, 1.0));
        assert_eq!(mem.cell("mascar").unwrap().paper_speedup, Some(1.34));
        assert_eq!(mem.cell("mascar").unwrap().paper_energy_rel, Some(0.88));
        assert!(t.notes.is_empty());
    }

    #[test]
    fn geomean_ignores_non_positive_values() {
        assert!(close(geomean([2.0, 8.0]).unwrap(), 4.0));
        assert!(close(geomean([4.0, 0.0, f64::NAN]).unwrap(), 4.0));
        assert_eq!(geomean(std::iter::empty()), None);
    }

    #[test]
    fn missing_baseline_leaves_kernel_out_with_a_note() {
        let mut recs = sample();
        recs.retain(|r| !(r.kernel == "cs1" && r.scheduler == "lrr"));
        let t = speedup_table(&recs, "lrr");
        assert!(t.kernels.iter().all(|k| k.kernel != "cs1"));
        assert!(t.classes.iter().all(|c| c.group != ClassGroup::CacheSensitive));
        assert_eq!(t.classes.len(), 3);
        assert_eq!(t.notes.len(), 1);
        assert!(t.notes[0].contains("cs1") && t.notes[0].contains("lrr"));
        assert!(to_markdown(&t).contains("cs1: no lrr run"));
    }

    #[test]
    fn class_without_kernels_is_skipped() {
        let recs: Vec<RunRecord> = sample()
            .into_iter()
            .filter(|r| r.class == KernelClass::Compute)
            .collect();
        let t = speedup_table(&recs, "lrr");
        assert_eq!(t.classes.len(), 1);
        assert_eq!(t.classes[0].group, ClassGroup::Compute);
    }

    #[test]
    fn zero_baseline_energy_gives_no_ratio() {
        let mut recs = sample();
        for r in &mut recs {
            r.energy.total_nj = 0.0;
        }
        let t = speedup_table(&recs, "lrr");
        assert!(t.kernels[0].run("gto").unwrap().energy_rel.is_none());
        assert!(t.classes[0].cell("gto").unwrap().energy_rel.is_none());
        assert!(to_csv(&t)
            .lines()
            .any(|l| l.starts_with("bw1,kernel,gto,1.000000,,,1000,")));
    }

    #[test]
    fn csv_header_is_stable() {
        let csv = to_csv(&speedup_table(&sample(), "lrr"));
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "row,kind,scheduler,speedup,paper_speedup,energy_rel,cycles,ipc,l1_hit_rate,\
             lsu_stall_fraction,mp_fraction,speedup_min,speedup_max,placements"
        );
        // 4 class rows x 3 schedulers + 4 kernels x 3 schedulers.
        assert_eq!(lines.clone().count(), 24);
        assert!(lines.all(|l| l.split(',').count() == 14));
        assert!(csv.contains("all memory intensive,class,mascar,3.634241,1.340000,"));
        assert!(csv.contains("bw2,kernel,mascar,8.000000,,0.125000,100,"));
        assert!(csv.contains("bandwidth intensive,class,lrr,1.000000,,"));
    }

    #[test]
    fn markdown_shows_the_papers_numbers() {
        use KernelClass::*;
        let mut recs = sample();
        for s in ["owl", "ccws", "mas", "car"] {
            for (k, c) in [
                ("bw1", Bandwidth),
                ("bw2", Bandwidth),
                ("cs1", CacheSensitive),
                ("c1", Compute),
            ] {
                recs.push(rec(k, c, s, 700));
            }
        }
        let md = to_markdown(&speedup_table(&recs, "lrr"));
        for col in ["gto (paper)", "owl (paper)", "ccws (paper)", "mascar (paper)"] {
            assert!(md.contains(col), "missing column {col}");
        }
        for v in [
            "1.04", "1.17", "1.24", "1.55", "1.56", "1.13", "1.34", "≈1.0", "0.88",
        ] {
            assert!(md.contains(v), "missing paper figure {v}");
        }
        assert!(md.contains("| bandwidth intensive | 2 |"));
        assert!(md.contains("mascar MP fraction") && md.contains("car hits under miss"));
        assert!(md.contains("mas owner changes") && !md.contains("gto MP fraction"));
        assert!(!md.contains("(paper) | mas (paper)"));
    }

    #[test]
    fn headroom_is_bounded_by_the_busiest_of_dram_and_issue() {
        use KernelClass::*;
        let mut base = rec("bw", Bandwidth, "lrr", 1000);
        base.stats.dram_utilization = 0.8;
        base.stats.ipc = 6.0;
        base.stats.peak_ipc = 30.0;
        let recs = vec![base, rec("bw", Bandwidth, "gto", 900)];
        let t = speedup_table(&recs, "lrr");
        let lrr = t.kernels[0].run("lrr").unwrap();
        assert!(close(lrr.headroom().unwrap(), 1.25), "DRAM 80% busy");
        let md = to_markdown(&t);
        assert!(
            md.contains("| bw | bandwidth | 0.800 | 0.200 | 0.000 | 1.25 | 1.111 (gto) |"),
            "{md}"
        );
        assert_eq!(
            t.kernels[0].run("gto").unwrap().headroom(),
            None,
            "no activity recorded"
        );
    }

    #[test]
    fn stdout_table_lists_classes_and_kernels() {
        let out = to_stdout_table(&speedup_table(&sample(), "lrr"));
        assert!(out.starts_with("speedup over lrr"));
        assert!(out.contains("bandwidth intensive (2)"));
        assert!(out.contains("  paper") && out.contains("1.17"));
        assert!(out.lines().any(|l| l.starts_with("bw2") && l.contains("8.000")));
    }

    #[test]
    fn placements_give_geomean_with_min_max() {
        use KernelClass::*;
        let at = |k, c, s, cycles, p| RunRecord {
            placement: p,
            ..rec(k, c, s, cycles)
        };
        let recs = vec![
            at("bw1", Bandwidth, "lrr", 1000, 1),
            at("bw1", Bandwidth, "gto", 500, 1),
            at("bw1", Bandwidth, "lrr", 1000, 2),
            at("bw1", Bandwidth, "gto", 2000, 2),
            at("bw2", Bandwidth, "lrr", 800, 1),
            at("bw2", Bandwidth, "gto", 800, 1),
            at("bw2", Bandwidth, "lrr", 400, 2),
            at("bw2", Bandwidth, "gto", 100, 2),
        ];
        let t = speedup_table(&recs, "lrr");
        assert_eq!(t.placements, [1, 2]);
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        // bw1: 2.0 under placement 1, 0.5 under 2 -> geomean 1.0, range 0.5–2.0.
        let g = t.kernels[0].run("gto").unwrap();
        assert!(close(g.speedup, 1.0) && close(g.speedup_min, 0.5) && close(g.speedup_max, 2.0));
        assert_eq!(g.cycles, 500, "other figures are placement 1's");
        // Class: placement 1 -> sqrt(2 * 1), placement 2 -> sqrt(0.5 * 4); mean of kernels' means.
        let c = t.classes[0].cell("gto").unwrap();
        assert!(close(c.speedup, 2f64.sqrt()));
        assert!(close(c.speedup_min, 2f64.sqrt()) && close(c.speedup_max, 2f64.sqrt()));
        let md = to_markdown(&t);
        assert!(
            md.contains("| bw1 | bandwidth | 1000 | 1.000 (0.500–2.000) * |"),
            "bw1 is faster under one placement and slower under the other: marked. {md}"
        );
        assert!(md.contains("`*` marks a speedup above 1"), "{md}");
        assert!(
            md.contains("2.000 (1.000–4.000) |"),
            "bw2 is never slower: not marked"
        );
        assert!(md.contains("placements 1–2"));
        let out = to_stdout_table(&t);
        assert!(
            out.lines()
                .any(|l| l.starts_with("bw2") && l.contains("2.000 (1.000–4.000)")),
            "{out}"
        );
        assert!(to_csv(&t).contains("bw1,kernel,gto,1.000000,,"));
        assert!(to_csv(&t)
            .lines()
            .any(|l| l.starts_with("bw1,kernel,gto,") && l.ends_with(",0.500000,2.000000,2")));
        // A single placement prints plain numbers.
        let one = to_stdout_table(&speedup_table(&sample(), "lrr"));
        assert!(!one.contains('–') && !one.contains("placements"), "{one}");
    }

    #[test]
    fn duplicate_runs_use_the_first_and_say_so() {
        let mut recs = sample();
        recs.push(rec("bw1", KernelClass::Bandwidth, "gto", 10));
        let t = speedup_table(&recs, "lrr");
        assert!(close(t.kernels[0].run("gto").unwrap().speedup, 1.0));
        assert_eq!(t.notes.len(), 1);
    }
}
