//! `mascar kernels --characterise`: each workload's warp instructions per L1 data miss under
//! LRR, the paper's own measure for splitting memory- from compute-intensive kernels, beside
//! the paper's value (spec §7). `compare` classifies traces by the same measure.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

pub use crate::report::intensity::{
    insts_per_l1_miss, l1_data_misses, measured_class, Intensity, MEMORY_INTENSIVE_BELOW,
};
use crate::results::{Build, RunResult, WorkloadKind};
use crate::workload::builtin::KernelClass;

/// The `schema` value of the `--json` document.
pub const SCHEMA: &str = "mascar-characterise/1";

/// A memory-intensive kernel's measure counts as matching the paper's within this factor,
/// either way (issue 16 §3).
pub const WITHIN_FACTOR: f64 = 3.0;

/// What the output says the measure is.
pub const MEASURE: &str = "warp instructions ÷ L1 data misses, whole GPU, under LRR; an L1 data \
miss is a global load that allocates an L1 MSHR (`l1.misses`) or merges into one already open \
for its line (`l1.hit_reserved`). Stores (write-through, no allocation) and accesses the L1 \
refused and retried (reservation failures) are not misses. Beside it, the same ratio with the texture and constant caches' misses (and merges) added, since the paper's column may count every L1 of the SM.";

/// The paper's "instructions per L1 miss" (Sethia et al., HPCA 2015, Table III), as the
/// public reproduction quoted in `../shared/spec/mascar.md` §7 reads it; our built-in names.
/// The paper's Rodinia "histogram" (91.2) has no built-in.
pub const PAPER_INSTS_PER_L1_MISS: &[(&str, f64)] = &[
    // Memory intensive.
    ("bp-2", 19.0),
    ("bfs", 2.4),
    ("histo-1", 15.3),
    ("histo-3", 14.3),
    ("kmeans-1", 0.27),
    ("lbm", 10.4),
    ("leuko-1", 28.0),
    ("mrig-1", 13.4),
    ("mrig-2", 22.4),
    ("mummer", 4.9),
    ("particle", 3.5),
    ("sad-2", 10.2),
    ("spmv", 4.2),
    ("srad-1", 25.0),
    ("srad-2", 22.0),
    // Compute intensive.
    ("bp-1", 107.0),
    ("cutcp", 949.0),
    ("histo-2", 35.9),
    ("kmeans-2", 88.0),
    ("lavamd", 512.0),
    ("leuko-2", 173.0),
    ("leuko-3", 5289.0),
    ("mri-q", 3479.0),
    ("mrig-3", 147.0),
    ("pathfinder", 55.83),
    ("sad-1", 2563.0),
    ("sgemm", 75.0),
    ("stencil", 38.0),
    ("tpacf", 10816.0),
];

/// The paper's value for a built-in kernel name.
pub fn paper_insts_per_l1_miss(name: &str) -> Option<f64> {
    PAPER_INSTS_PER_L1_MISS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
}

/// One workload's characterisation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Built-in name, kernel file path or trace path, as given.
    pub kernel: String,
    pub kind: WorkloadKind,
    /// A built-in's class (by construction of its access pattern).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin_class: Option<KernelClass>,
    pub cycles: u64,
    pub warp_instructions: u64,
    /// `l1.misses`: loads that allocated an MSHR.
    pub l1_misses: u64,
    /// `l1.hit_reserved`: loads merged into an open MSHR.
    pub l1_hit_reserved: u64,
    /// Their sum, the measure's denominator.
    pub l1_data_misses: u64,
    /// Warp instructions ÷ L1 data misses (absent without a miss).
    pub insts_per_l1_miss: Option<f64>,
    /// Texture and constant cache misses plus merges (`ld.tex`, `ld.const`).
    #[serde(default)]
    pub ro_misses: u64,
    /// Warp instructions ÷ (L1 data + texture + constant misses): the spec reads the
    /// paper's column as L1 data only, but it may count every L1 of the SM.
    #[serde(default)]
    pub insts_per_any_l1_miss: Option<f64>,
    pub class: Intensity,
    /// The paper's value (absent for kernels it does not list).
    pub paper: Option<f64>,
    pub paper_class: Option<Intensity>,
    /// Our class equals the paper's.
    pub classes_agree: Option<bool>,
    /// Ours ÷ the paper's, for kernels the paper calls memory intensive.
    pub ratio_to_paper: Option<f64>,
    /// That ratio lies within [1/3, 3].
    pub within_3x: Option<bool>,
    pub simd_efficiency: f64,
    pub ipc: f64,
    /// Warps per SM in the first wave, averaged over the SMs, at the run's scale (absent for
    /// traces): see [`crate::gpu::first_wave_warps_per_sm`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warps_per_sm: Option<f64>,
    /// The same for the real run: the kernel at `kernel_scale = full` (issue 30 §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warps_per_sm_full: Option<f64>,
}

impl Row {
    /// The row of a run (its total over the workload's kernels).
    pub fn of(run: &RunResult) -> Row {
        let s = &run.total;
        let ours = insts_per_l1_miss(s);
        let class = Intensity::of(ours);
        let sm = &s.sm;
        let ro_misses = sm.tex.misses + sm.tex.merged + sm.constant.misses + sm.constant.merged;
        let any_misses = l1_data_misses(s) + ro_misses;
        let paper = match run.workload.kind {
            WorkloadKind::Builtin => paper_insts_per_l1_miss(&run.workload.name),
            _ => None,
        };
        let paper_class = paper.map(|p| Intensity::of(Some(p)));
        let ratio = match (ours, paper, paper_class) {
            (Some(o), Some(p), Some(Intensity::Memory)) => Some(o / p),
            // No miss at all against a memory-intensive paper value: infinitely far off.
            (None, Some(_), Some(Intensity::Memory)) => Some(f64::INFINITY),
            _ => None,
        };
        Row {
            kernel: run.workload.name.clone(),
            kind: run.workload.kind,
            builtin_class: run.workload.class,
            cycles: s.cycles,
            warp_instructions: s.warp_instructions,
            l1_misses: s.l1.misses,
            l1_hit_reserved: s.l1.hit_reserved,
            l1_data_misses: l1_data_misses(s),
            insts_per_l1_miss: ours,
            ro_misses,
            insts_per_any_l1_miss: (any_misses > 0).then(|| s.warp_instructions as f64 / any_misses as f64),
            class,
            paper,
            paper_class,
            classes_agree: paper_class.map(|p| p == class),
            // JSON has no infinity: an infinite ratio is written as absent.
            ratio_to_paper: ratio.filter(|r| r.is_finite()),
            within_3x: ratio.map(|r| (1.0 / WITHIN_FACTOR..=WITHIN_FACTOR).contains(&r)),
            simd_efficiency: s.simd_efficiency,
            ipc: s.ipc,
            warps_per_sm: None,
            warps_per_sm_full: None,
        }
    }
}

/// The `--json` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Characterisation {
    pub schema: String,
    pub mascar: Build,
    /// The measure's definition, as printed.
    pub measure: String,
    pub memory_intensive_below: f64,
    /// SMs of the machine the runs used (every other key: `config_sha256`).
    pub sms: u32,
    pub config_sha256: String,
    pub kernels: Vec<Row>,
}

impl Characterisation {
    pub fn new(runs: &[RunResult]) -> Characterisation {
        Characterisation {
            schema: SCHEMA.to_string(),
            mascar: Build::current(),
            measure: MEASURE.to_string(),
            memory_intensive_below: MEMORY_INTENSIVE_BELOW,
            sms: runs.first().map_or(0, |r| r.config.sms),
            config_sha256: runs.first().map_or(String::new(), |r| r.config_sha256.clone()),
            kernels: runs.iter().map(Row::of).collect(),
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("serialisable");
        s.push('\n');
        s
    }

    /// Kernels the paper lists whose class differs from ours, or (memory intensive) whose
    /// measure is more than 3× off.
    pub fn off_target(&self) -> Vec<&Row> {
        self.kernels
            .iter()
            .filter(|r| r.classes_agree == Some(false) || r.within_3x == Some(false))
            .collect()
    }

    /// The markdown table, with the measure's definition above it and a count below.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Instructions per L1 miss = {MEASURE} Class: memory intensive below \
             {MEMORY_INTENSIVE_BELOW}, else compute intensive. Paper: Sethia et al., HPCA 2015, \
             Table III (spec §7); `—`: not listed. Ratio and within 3×: memory-intensive \
             kernels of the paper only. Warps/SM: warps per SM in the first wave, averaged over \
             the SMs; real run: the same at `kernel_scale = full`. {} SMs.\n",
            self.sms
        );
        let head = [
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
            "real run",
        ];
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
        let dash = || "—".to_string();
        let yes_no = |b: Option<bool>| b.map_or_else(dash, |b| if b { "yes" } else { "no" }.to_string());
        for r in &self.kernels {
            let cells = [
                r.kernel.clone(),
                r.builtin_class.map_or_else(dash, |c| c.label().to_string()),
                r.warp_instructions.to_string(),
                r.l1_data_misses.to_string(),
                r.insts_per_l1_miss.map_or("∞".to_string(), fmt_measure),
                if r.ro_misses == 0 {
                    dash()
                } else {
                    r.insts_per_any_l1_miss.map_or("∞".to_string(), fmt_measure)
                },
                r.paper.map_or_else(dash, fmt_measure),
                r.class.label().to_string(),
                r.paper_class.map_or_else(dash, |c| c.label().to_string()),
                yes_no(r.classes_agree),
                match (r.ratio_to_paper, r.within_3x) {
                    (Some(x), _) => format!("{x:.2}"),
                    (None, Some(_)) => "∞".to_string(),
                    (None, None) => dash(),
                },
                yes_no(r.within_3x),
                format!("{:.3}", r.simd_efficiency),
                format!("{:.3}", r.ipc),
                r.warps_per_sm.map_or_else(dash, |w| format!("{w:.1}")),
                r.warps_per_sm_full.map_or_else(dash, |w| format!("{w:.1}")),
            ];
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let listed = self.kernels.iter().filter(|r| r.paper.is_some()).count();
        let agree = self
            .kernels
            .iter()
            .filter(|r| r.classes_agree == Some(true))
            .count();
        let memory = self.kernels.iter().filter(|r| r.within_3x.is_some()).count();
        let within = self.kernels.iter().filter(|r| r.within_3x == Some(true)).count();
        let _ = writeln!(
            out,
            "\nClasses agree for {agree} of {listed} kernels the paper lists; {within} of its \
             {memory} memory-intensive kernels are within 3× of its value."
        );
        let off: Vec<&str> = self.off_target().iter().map(|r| r.kernel.as_str()).collect();
        if !off.is_empty() {
            let _ = writeln!(out, "Off target: {}.", off.join(", "));
        }
        out
    }
}

/// Three significant digits or so: 0.270, 2.40, 19.2, 949, 10816.
fn fmt_measure(v: f64) -> String {
    if v < 1.0 {
        format!("{v:.3}")
    } else if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RunStats;

    #[test]
    fn the_paper_table_names_every_builtin_once_and_splits_at_the_threshold() {
        let builtins = crate::workload::builtin::builtins();
        assert_eq!(PAPER_INSTS_PER_L1_MISS.len(), builtins.len());
        for b in builtins {
            let n = PAPER_INSTS_PER_L1_MISS
                .iter()
                .filter(|(k, _)| *k == b.name)
                .count();
            assert_eq!(n, 1, "{}", b.name);
        }
        // The first 15 entries are the paper's memory-intensive kernels.
        for (i, (name, v)) in PAPER_INSTS_PER_L1_MISS.iter().enumerate() {
            let memory = Intensity::of(Some(*v)) == Intensity::Memory;
            assert_eq!(memory, i < 15, "{name} {v}");
        }
    }

    #[test]
    fn misses_are_mshr_allocations_and_merges_and_the_class_follows_the_threshold() {
        let mut s = RunStats {
            warp_instructions: 290,
            ..RunStats::default()
        };
        assert_eq!(insts_per_l1_miss(&s), None);
        assert_eq!(measured_class(&s), KernelClass::Compute);
        s.l1.misses = 6;
        s.l1.hit_reserved = 4;
        s.l1.write_misses = 100;
        s.l1.fail_mshr_full = 100;
        assert_eq!(l1_data_misses(&s), 10);
        assert_eq!(insts_per_l1_miss(&s), Some(29.0));
        assert_eq!(measured_class(&s), KernelClass::MemoryIntensive);
        s.warp_instructions = 300;
        assert_eq!(measured_class(&s), KernelClass::Compute);
    }

    #[test]
    fn a_trace_without_a_class_is_classed_by_its_run_and_a_builtin_keeps_its_own() {
        use crate::results::{Workload, WorkloadKind};
        let stats = |insts: u64, misses: u64| {
            let mut s = RunStats {
                warp_instructions: insts,
                cycles: 1,
                ..RunStats::default()
            };
            s.l1.misses = misses;
            s
        };
        let cfg = crate::config::Config::default();
        let trace = Workload {
            kind: WorkloadKind::Trace,
            name: "t".into(),
            class: None,
            inputs: vec![],
        };
        let run = |w: &Workload, s: RunStats| crate::runner::run_result(w, &cfg, "lrr", None, vec![s]);
        assert_eq!(
            run(&trace, stats(100, 10)).record().class,
            KernelClass::MemoryIntensive
        );
        assert_eq!(run(&trace, stats(300, 10)).record().class, KernelClass::Compute);
        let builtin = Workload {
            kind: WorkloadKind::Builtin,
            name: "srad-1".into(),
            class: Some(KernelClass::Bandwidth),
            inputs: vec![],
        };
        let r = run(&builtin, stats(300, 10));
        assert_eq!(r.record().class, KernelClass::Bandwidth);
        // The row: 30 ≥ the threshold, 30 / 25 against the paper's memory-intensive srad-1.
        let row = Row::of(&r);
        assert_eq!(row.insts_per_l1_miss, Some(30.0));
        assert_eq!(row.class, Intensity::Compute);
        assert_eq!(row.paper, Some(25.0));
        assert_eq!(row.classes_agree, Some(false));
        assert_eq!(row.ratio_to_paper, Some(1.2));
        assert_eq!(row.within_3x, Some(true));
        let far = Row::of(&run(&builtin, stats(76, 1)));
        assert_eq!(
            (far.ratio_to_paper, far.within_3x),
            (Some(76.0 / 25.0), Some(false))
        );
        let none = Row::of(&run(&builtin, stats(76, 0)));
        assert_eq!((none.ratio_to_paper, none.within_3x), (None, Some(false)));
    }

    #[test]
    fn formatting_keeps_about_three_digits() {
        assert_eq!(fmt_measure(0.27), "0.270");
        assert_eq!(fmt_measure(2.4), "2.40");
        assert_eq!(fmt_measure(19.24), "19.2");
        assert_eq!(fmt_measure(10816.0), "10816");
    }
}
