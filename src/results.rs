//! The results document: one JSON shape for `run --json` (one or many schedulers, one or
//! many kernels), `compare`'s `results.json` and its shards, read back by `merge` and
//! `rerun`. Described by `docs/results.schema.json` (a test validates outputs against it).
//!
//! Every run records how it was made: the build (version, commit), the engine, the
//! scheduler with its parameters, the whole effective configuration and its hash, and each
//! input's path and content hash. A document holds no wall-clock figures, so the same runs
//! give the same bytes (a merged compare equals the unsharded one).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{Config, Engine};
use crate::report::energy::EnergyBreakdown;
use crate::sched::SchedulerKind;
use crate::stats::RunStats;
use crate::workload::builtin::KernelClass;

/// The `schema` value of documents of this shape.
pub const SCHEMA: &str = "mascar-results/1";

/// A results document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Results {
    pub schema: String,
    pub mascar: Build,
    /// `run`, `compare` or `compare --resources`.
    pub command: String,
    /// Present in a `compare --shard K/N` slice only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub runs: Vec<RunResult>,
}

/// The program that made a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    pub version: String,
    /// Git commit id (`+dirty` when built from a modified tree), or `unknown`.
    pub commit: String,
}

impl Build {
    pub fn current() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("MASCAR_GIT_COMMIT").to_string(),
        }
    }
}

/// Which slice of a compare matrix a shard document holds: jobs `index-1, index-1+count, …`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
    /// Jobs in the whole matrix.
    pub jobs: usize,
    /// SHA-256 of the machine every slice must share (before each job's scheduler or variant).
    pub base_config_sha256: String,
}

/// One run: a workload on one machine under one scheduler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// The name reports use: the scheduler, or a machine variant such as `lrr-big-mshr`.
    pub label: String,
    pub scheduler: SchedulerInfo,
    pub engine: Engine,
    pub workload: Workload,
    /// The configuration file given, if any (its settings are already in `config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_file: Option<Input>,
    /// The whole effective configuration.
    pub config: Config,
    /// SHA-256 of `config` as compact JSON.
    pub config_sha256: String,
    /// One entry per kernel, in launch order.
    pub kernels: Vec<RunStats>,
    /// The kernels together (equal to the only kernel's figures for one kernel).
    pub total: RunStats,
    /// Energy of the whole run (`docs/energy.md`).
    pub energy: EnergyBreakdown,
}

/// The scheduler and the configuration keys that shape it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerInfo {
    pub name: String,
    pub params: BTreeMap<String, serde_json::Value>,
}

/// What ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// Built-in name, kernel file path, or trace path as given.
    pub name: String,
    /// A built-in's class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<KernelClass>,
    /// Every file read (a built-in's source counts as `builtin:NAME`).
    pub inputs: Vec<Input>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    Builtin,
    KernelFile,
    Trace,
}

/// One input and its content hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

impl Input {
    /// Hashes a file, streaming (traces can be large).
    pub fn of_file(path: &Path) -> std::io::Result<Input> {
        let mut f = std::fs::File::open(path)?;
        let mut h = Sha256::new();
        let bytes = std::io::copy(&mut f, &mut h)?;
        Ok(Input {
            path: path.display().to_string(),
            sha256: hex(&h.finalize()),
            bytes,
        })
    }

    /// An input held in memory (a built-in kernel's source).
    pub fn of_text(name: &str, text: &str) -> Input {
        Input {
            path: name.to_string(),
            sha256: sha256_hex(text.as_bytes()),
            bytes: text.len() as u64,
        }
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of the configuration as compact JSON (field order is the struct's, so equal
/// configurations hash equally).
pub fn config_sha256(cfg: &Config) -> String {
    sha256_hex(serde_json::to_string(cfg).expect("config serialises").as_bytes())
}

/// The configuration keys a scheduler reads, with their values.
pub fn scheduler_info(cfg: &Config) -> SchedulerInfo {
    let prefixes: &[&str] = match cfg.scheduler {
        SchedulerKind::Lrr | SchedulerKind::Gto => &[],
        SchedulerKind::Owl => &["owl_"],
        SchedulerKind::Ccws => &["ccws_"],
        SchedulerKind::Mas => &["mas_"],
        SchedulerKind::Car => &["car_"],
        SchedulerKind::Mascar => &["mas_", "car_", "mascar_"],
    };
    let mut params = BTreeMap::new();
    if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(cfg) {
        for (k, v) in map {
            if prefixes.iter().any(|p| k.starts_with(p)) {
                params.insert(k, v);
            }
        }
    }
    SchedulerInfo {
        name: cfg.scheduler.name().to_string(),
        params,
    }
}

impl Results {
    pub fn new(command: &str, runs: Vec<RunResult>) -> Results {
        Results {
            schema: SCHEMA.to_string(),
            mascar: Build::current(),
            command: command.to_string(),
            shard: None,
            runs,
        }
    }

    /// The document as written to disk (pretty JSON, newline-terminated).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("results serialise");
        s.push('\n');
        s
    }

    /// Reads a document, naming the file in errors.
    pub fn read(path: &Path) -> anyhow::Result<Results> {
        use anyhow::Context;
        // A full comparison's document is a few MB.
        let text = crate::input::read_text_capped(path, 1 << 30, "results file")?;
        let doc: Results = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a mascar results document", path.display()))?;
        if doc.schema != SCHEMA {
            anyhow::bail!(
                "{}: schema `{}`, this mascar reads `{SCHEMA}`",
                path.display(),
                doc.schema
            );
        }
        Ok(doc)
    }
}

impl RunResult {
    /// The run as one row of a comparison report (its total, under its label).
    pub fn record(&self) -> crate::report::compare::RunRecord {
        crate::report::compare::RunRecord {
            kernel: self.workload.name.clone(),
            // A workload without a class of its own (a trace) is classed by its own run's
            // instructions per L1 miss; the report takes the baseline (LRR) run's class.
            class: self
                .workload
                .class
                .unwrap_or_else(|| crate::report::intensity::measured_class(&self.total)),
            scheduler: self.label.clone(),
            stats: self.total.clone(),
            energy: self.energy.clone(),
            placement: self.config.placement,
        }
    }
}

/// Provenance columns of [`to_csv`], before [`crate::report::RUN_CSV_COLUMNS`].
pub const CSV_PROVENANCE_COLUMNS: &[&str] = &[
    "mascar_version",
    "commit",
    "config_sha256",
    "workload",
    "label",
    "kernel_index",
];

/// One CSV row per kernel of every run, and a `total` row (kernel_index `total`) for each
/// run of several kernels; every row carries the build and the configuration's hash.
pub fn to_csv(runs: &[RunResult]) -> String {
    let build = Build::current();
    let mut out = CSV_PROVENANCE_COLUMNS.join(",");
    out.push(',');
    out.push_str(&crate::report::RUN_CSV_COLUMNS.join(","));
    out.push('\n');
    for r in runs {
        let mut rows: Vec<(String, &RunStats)> = r
            .kernels
            .iter()
            .enumerate()
            .map(|(i, k)| ((i + 1).to_string(), k))
            .collect();
        if r.kernels.len() > 1 {
            rows.push(("total".to_string(), &r.total));
        }
        for (index, stats) in rows {
            let row = crate::report::run_csv_row(stats);
            out.push_str(&format!(
                "{},{},{},{},{},{index},{row}\n",
                build.version,
                build.commit,
                r.config_sha256,
                csv_field(&r.workload.name),
                csv_field(&r.label)
            ));
        }
    }
    out
}

/// A CSV field, quoted when it holds a separator or a quote.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Combines the slices of one `compare --shard K/N` matrix into the document the unsharded
/// run writes, refusing slices that do not belong together: each must be a slice, all of
/// one build, command, machine and N, indices exactly 1..N, every workload × label once,
/// the matrix complete, every cycle count positive and every figure finite.
pub fn merge_shards(slices: &[(std::path::PathBuf, Results)]) -> anyhow::Result<Results> {
    use anyhow::bail;
    let Some((first_path, first)) = slices.first() else {
        bail!("no slices to merge");
    };
    let Some(s0) = first.shard.clone() else {
        bail!(
            "{}: not a slice (no `shard`; written by `compare --shard K/N`)",
            first_path.display()
        );
    };
    let mut by_index: Vec<Option<&Results>> = vec![None; s0.count];
    for (path, doc) in slices {
        let at = path.display();
        let Some(s) = &doc.shard else {
            bail!("{at}: not a slice (no `shard`; written by `compare --shard K/N`)");
        };
        if doc.mascar != first.mascar {
            bail!(
                "{at}: made by mascar {} commit {}, {} by {} commit {}",
                doc.mascar.version,
                doc.mascar.commit,
                first_path.display(),
                first.mascar.version,
                first.mascar.commit
            );
        }
        if doc.command != first.command {
            bail!(
                "{at}: a `{}` slice, {} is `{}`",
                doc.command,
                first_path.display(),
                first.command
            );
        }
        if s.count != s0.count || s.jobs != s0.jobs {
            bail!(
                "{at}: slice {}/{} of {} jobs, {} is {}/{} of {}",
                s.index,
                s.count,
                s.jobs,
                first_path.display(),
                s0.index,
                s0.count,
                s0.jobs
            );
        }
        if s.base_config_sha256 != s0.base_config_sha256 {
            bail!(
                "{at}: ran on another machine configuration than {} (config hash {} vs {})",
                first_path.display(),
                s.base_config_sha256,
                s0.base_config_sha256
            );
        }
        if s.index == 0 || s.index > s.count {
            bail!("{at}: slice index {} outside 1..={}", s.index, s.count);
        }
        if by_index[s.index - 1].replace(doc).is_some() {
            bail!("{at}: slice {}/{} given twice", s.index, s.count);
        }
        let expected = (s.jobs + s.count - s.index) / s.count;
        if doc.runs.len() != expected {
            bail!(
                "{at}: slice {}/{} holds {} runs, slice {} of {} jobs has {expected}",
                s.index,
                s.count,
                doc.runs.len(),
                s.index,
                s.jobs
            );
        }
        for r in &doc.runs {
            for k in r.kernels.iter().chain(std::iter::once(&r.total)) {
                if k.cycles == 0 {
                    bail!("{at}: {} under {} ran 0 cycles", r.workload.name, r.label);
                }
            }
            let mut bad = vec![];
            finite_check("", &serde_json::to_value(r)?, &mut bad);
            if let Some(field) = bad.first() {
                bail!(
                    "{at}: {} under {}: {field} is not a finite number",
                    r.workload.name,
                    r.label
                );
            }
        }
    }
    let missing: Vec<String> = (0..s0.count)
        .filter(|i| by_index[*i].is_none())
        .map(|i| format!("{}/{}", i + 1, s0.count))
        .collect();
    if !missing.is_empty() {
        bail!("slices missing: {}", missing.join(", "));
    }
    // Slice K holds jobs K-1, K-1+N, …: put every run back at its place in the matrix.
    let mut runs: Vec<Option<RunResult>> = vec![None; s0.jobs];
    for (k, doc) in by_index.iter().enumerate() {
        let doc = doc.expect("checked above");
        for (j, r) in doc.runs.iter().enumerate() {
            runs[j * s0.count + k] = Some(r.clone());
        }
    }
    let runs: Vec<RunResult> = runs.into_iter().map(|r| r.expect("every slot filled")).collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut workloads = std::collections::BTreeSet::new();
    let mut labels = std::collections::BTreeSet::new();
    // `compare --placements N` runs the matrix once per buffer placement.
    let mut placements = std::collections::BTreeSet::new();
    for r in &runs {
        if !seen.insert((r.workload.name.clone(), r.label.clone(), r.config.placement)) {
            bail!(
                "{} under {}{} appears in more than one slice",
                r.workload.name,
                r.label,
                if r.config.placement == 1 {
                    String::new()
                } else {
                    format!(" (placement {})", r.config.placement)
                }
            );
        }
        workloads.insert(r.workload.name.clone());
        labels.insert(r.label.clone());
        placements.insert(r.config.placement);
    }
    if runs.len() != workloads.len() * labels.len() * placements.len() {
        bail!(
            "the slices do not form a complete matrix: {} runs for {} kernels × {} schedulers × {} placements",
            runs.len(),
            workloads.len(),
            labels.len(),
            placements.len()
        );
    }
    Ok(Results {
        schema: first.schema.clone(),
        mascar: first.mascar.clone(),
        command: first.command.clone(),
        shard: None,
        runs,
    })
}

/// Names the numbers in `v` that are not finite (serde_json writes NaN and ∞ as null).
fn finite_check(path: &str, v: &serde_json::Value, bad: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                finite_check(&format!("{path}.{k}"), x, bad);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                finite_check(&format!("{path}[{i}]"), x, bad);
            }
        }
        serde_json::Value::Number(n) if n.as_f64().is_some_and(|f| !f.is_finite()) => {
            bad.push(path.to_string())
        }
        _ => {}
    }
}

/// Differences between two JSON values, as `path: recorded → now` lines (at most `limit`).
pub fn diff_values(path: &str, recorded: &serde_json::Value, now: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (recorded, now) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(vb) => diff_values(&p, va, vb, out),
                    None => out.push(format!("{p}: {va} → (absent)")),
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("{path}.{k}: (absent) → {}", b[k]));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff_values(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        (a, b) if a != b => out.push(format!("{path}: {a} → {b}")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_params_are_the_keys_it_reads() {
        let cfg = Config {
            scheduler: SchedulerKind::Mascar,
            ..Config::default()
        };
        let info = scheduler_info(&cfg);
        assert_eq!(info.name, "mascar");
        assert!(info.params.contains_key("mas_sat_margin"));
        assert!(info.params.contains_key("car_queue_depth"));
        assert!(info.params.contains_key("mascar_non_owner_mem"));
        assert!(!info.params.contains_key("ccws_k_throttle"));
        let lrr = scheduler_info(&Config::default());
        assert!(lrr.params.is_empty());
    }

    #[test]
    fn config_hash_changes_with_any_key() {
        let a = Config::default();
        let b = Config {
            l1_mshrs: 32,
            ..Config::default()
        };
        assert_eq!(config_sha256(&a), config_sha256(&a.clone()));
        assert_ne!(config_sha256(&a), config_sha256(&b));
        assert_eq!(config_sha256(&a).len(), 64);
    }

    #[test]
    fn diff_names_the_changed_field() {
        let a = serde_json::json!({"cycles": 10, "l1": {"hits": 3}, "k": [1, 2]});
        let b = serde_json::json!({"cycles": 10, "l1": {"hits": 4}, "k": [1, 3]});
        let mut out = vec![];
        diff_values("total", &a, &b, &mut out);
        // serde_json maps are sorted by key.
        assert_eq!(out, vec!["total.k[1]: 2 → 3", "total.l1.hits: 3 → 4"]);
    }
}
