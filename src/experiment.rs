//! Experiment matrices: many independent runs (kernel × machine variant), executed in
//! parallel across cores. Each run is itself deterministic and single-threaded, and results
//! come back in job order, so the output does not depend on the thread count.

use std::sync::Arc;

use rayon::prelude::*;

use crate::config::Config;
use crate::engine::simulate;
use crate::results::{Input, RunResult, Workload, WorkloadKind};
use crate::runner::{run_result, LoadedWorkload};
use crate::sched::SchedulerKind;
use crate::workload::builtin::Builtin;
use crate::workload::Kernel;

/// One run of the matrix.
#[derive(Clone, Debug)]
pub struct Job {
    pub kernel: Kernel,
    /// What the kernel is, for the result's provenance.
    pub workload: Workload,
    /// The name the report shows for this machine variant (a scheduler name, or e.g.
    /// `lrr-full-assoc` in the resource study).
    pub label: String,
    pub cfg: Config,
    /// The configuration file the machine was read from, if any.
    pub config_file: Option<Input>,
    /// A workload of several launches (a trace, or a built-in whose host code loops, like
    /// bfs): its kernels run back to back on one machine instead of `kernel` (its first); a
    /// trace's are read from its file as their CTAs launch, their instruction count checked.
    pub sequence: Option<SharedWorkload>,
}

/// A loaded workload shared by the jobs that run it.
#[derive(Clone)]
pub struct SharedWorkload(pub Arc<LoadedWorkload>);

impl std::fmt::Debug for SharedWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedWorkload({})", self.0.info.name)
    }
}

/// A built-in as a results workload.
fn builtin_workload(b: &Builtin) -> Workload {
    Workload {
        kind: WorkloadKind::Builtin,
        name: b.name.to_string(),
        class: Some(b.class),
        inputs: vec![Input::of_text(&format!("builtin:{}", b.name), &b.sources())],
    }
}

/// A built-in's first launch and, where its host code launches more, the whole sequence.
fn builtin_launches(b: &'static Builtin, scale: crate::config::Scale) -> (Kernel, Option<SharedWorkload>) {
    let w = LoadedWorkload::builtin_at(b, scale);
    let first = w.first_kernel().expect("a built-in has a plain first kernel");
    let sequence = (w.len() > 1).then(|| SharedWorkload(Arc::new(w)));
    (first, sequence)
}

/// Every kernel under every scheduler, on the machine `base`.
pub fn scheduler_matrix(
    kernels: &[&'static Builtin],
    schedulers: &[SchedulerKind],
    base: &Config,
) -> Vec<Job> {
    let mut jobs = vec![];
    for b in kernels {
        let (kernel, sequence) = builtin_launches(b, base.kernel_scale);
        for &s in schedulers {
            jobs.push(Job {
                kernel: kernel.clone(),
                workload: builtin_workload(b),
                config_file: None,
                sequence: sequence.clone(),
                label: s.name().to_string(),
                cfg: Config {
                    scheduler: s,
                    ..base.clone()
                },
            });
        }
    }
    jobs
}

/// The "unbuildable" machines of slide 7 under the RR baseline, beside Mascar on the normal
/// machine: large MSHRs and queues, a fully associative L1, +20 % DRAM bandwidth, all three.
pub fn resource_variants(base: &Config) -> Vec<(String, Config)> {
    let rr = Config {
        scheduler: SchedulerKind::Lrr,
        ..base.clone()
    };
    let big_mshr = |c: Config| Config {
        l1_mshrs: c.l1_mshrs * 4,
        l1_miss_queue: c.l1_miss_queue * 4,
        l2_mshrs: c.l2_mshrs * 2,
        l2_miss_queue: c.l2_miss_queue * 4,
        ..c
    };
    let full_assoc = |c: Config| Config {
        l1_ways: c.l1_sets * c.l1_ways,
        l1_sets: 1,
        ..c
    };
    let faster_dram = |c: Config| Config {
        dram_cycles_per_line: c.dram_cycles_per_line / 1.2,
        // GDDR5 (the default model): a 20 % faster DRAM clock.
        dram_clock_mhz: c.dram_clock_mhz * 6 / 5,
        ..c
    };
    vec![
        ("lrr".into(), rr.clone()),
        ("lrr-big-mshr".into(), big_mshr(rr.clone())),
        ("lrr-full-assoc".into(), full_assoc(rr.clone())),
        ("lrr-dram+20%".into(), faster_dram(rr.clone())),
        ("lrr-all-three".into(), faster_dram(full_assoc(big_mshr(rr)))),
        (
            "mascar".into(),
            Config {
                scheduler: SchedulerKind::Mascar,
                ..base.clone()
            },
        ),
    ]
}

/// Every kernel on every (label, machine) variant.
pub fn variant_matrix(kernels: &[&'static Builtin], variants: &[(String, Config)]) -> Vec<Job> {
    let mut jobs = vec![];
    for b in kernels {
        // Every variant derives from one base machine, so they share its kernel_scale.
        let scale = variants
            .first()
            .map_or_else(Default::default, |(_, c)| c.kernel_scale);
        let (kernel, sequence) = builtin_launches(b, scale);
        for (label, cfg) in variants {
            jobs.push(Job {
                kernel: kernel.clone(),
                workload: builtin_workload(b),
                config_file: None,
                sequence: sequence.clone(),
                label: label.clone(),
                cfg: cfg.clone(),
            });
        }
    }
    jobs
}

/// The scheduler machines of [`scheduler_matrix`], as (label, machine) variants.
pub fn scheduler_variants(schedulers: &[SchedulerKind], base: &Config) -> Vec<(String, Config)> {
    schedulers
        .iter()
        .map(|&s| {
            (
                s.name().to_string(),
                Config {
                    scheduler: s,
                    ..base.clone()
                },
            )
        })
        .collect()
}

/// Every loaded workload (a built-in, a kernel file or a trace) on every (label, machine)
/// variant.
pub fn workload_matrix(
    workloads: &[Arc<LoadedWorkload>],
    variants: &[(String, Config)],
) -> anyhow::Result<Vec<Job>> {
    let mut jobs = vec![];
    for w in workloads {
        let kernel = w.first_kernel()?;
        let sequence = (w.info.kind == WorkloadKind::Trace || w.len() > 1).then(|| SharedWorkload(w.clone()));
        for (label, cfg) in variants {
            jobs.push(Job {
                kernel: kernel.clone(),
                workload: w.info.clone(),
                config_file: None,
                sequence: sequence.clone(),
                label: label.clone(),
                cfg: cfg.clone(),
            });
        }
    }
    Ok(jobs)
}

/// A run of the matrix failed.
#[derive(Debug, thiserror::Error)]
#[error("{kernel} under {label}: {source}")]
pub struct JobError {
    pub kernel: String,
    pub label: String,
    /// A simulation error, or a trace's (a file that cannot be read again, a wrong count).
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

/// Runs `jobs` on `threads` threads (0 = one per core), calling `done` after each run.
pub fn run_jobs(jobs: &[Job], threads: usize, done: &(dyn Fn() + Sync)) -> Result<Vec<RunResult>, JobError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    pool.install(|| {
        jobs.par_iter()
            .map(|j| {
                let failed = |source: Box<dyn std::error::Error + Send + Sync>| JobError {
                    kernel: match j.sequence {
                        Some(_) => j.workload.name.clone(),
                        None => j.kernel.name.clone(),
                    },
                    label: j.label.clone(),
                    source,
                };
                let result = match &j.sequence {
                    Some(w) => {
                        w.0.run(&j.cfg, &j.label, j.config_file.clone())
                            .map_err(|e| failed(e.into()))?
                    }
                    None => {
                        let stats = simulate(&j.cfg, &j.kernel, None).map_err(|e| failed(e.into()))?;
                        run_result(&j.workload, &j.cfg, &j.label, j.config_file.clone(), vec![stats])
                    }
                };
                done();
                Ok(result)
            })
            .collect()
    })
}
