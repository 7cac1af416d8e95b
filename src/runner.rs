//! Workloads as a user names them (a built-in, a `.kern` file, an Accel-Sim trace): loaded,
//! described for the results' provenance, and run back to back on one GPU.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::config::Config;
use crate::gpu::Gpu;
use crate::report::energy::{energy, EnergyModel};
use crate::results::{config_sha256, scheduler_info, Input, RunResult, Workload, WorkloadKind};
use crate::stats::RunStats;
use crate::workload::builtin::{self, Builtin};
use crate::workload::kernel_format::{self, Scale};
use crate::workload::trace::{kernelslist, ListEntry};
use crate::workload::trace_kernel::{self, TraceKernel};
use crate::workload::Kernel;

/// One kernel of a workload.
enum Piece {
    Plain(Kernel),
    /// Read from its trace as its CTAs launch; the trace's instruction count is checked.
    Trace(TraceKernel),
}

/// A workload ready to run, with what it was made from.
pub struct LoadedWorkload {
    pub info: Workload,
    pieces: Vec<Piece>,
    /// Things the user should know (unknown opcodes, memcpys not simulated).
    pub notes: Vec<String>,
}

impl LoadedWorkload {
    pub fn builtin(b: &'static Builtin) -> LoadedWorkload {
        Self::builtin_at(b, Scale::Default)
    }

    /// A built-in at `scale` (the `kernel_scale` setting).
    pub fn builtin_at(b: &'static Builtin, scale: Scale) -> LoadedWorkload {
        LoadedWorkload {
            info: Workload {
                kind: WorkloadKind::Builtin,
                name: b.name.to_string(),
                class: Some(b.class),
                inputs: vec![Input::of_text(&format!("builtin:{}", b.name), &b.sources())],
            },
            pieces: b.launches_at(scale).into_iter().map(Piece::Plain).collect(),
            notes: vec![],
        }
    }

    /// A built-in name, or a path to a `.kern` file.
    pub fn kernel(name: &str) -> Result<LoadedWorkload> {
        Self::kernel_at(name, Scale::Default)
    }

    /// A built-in name, or a path to a `.kern` file, at `scale` (the `kernel_scale` setting).
    pub fn kernel_at(name: &str, scale: Scale) -> Result<LoadedWorkload> {
        if let Some(b) = builtin::find(name) {
            return Ok(Self::builtin_at(b, scale));
        }
        let path = Path::new(name);
        if !path.exists() {
            let names: Vec<&str> = builtin::builtins().iter().map(|b| b.name).collect();
            bail!(
                "unknown kernel `{name}`: not a built-in ({}) and no such file",
                names.join(", ")
            );
        }
        let text = crate::input::read_text_capped(path, crate::input::MAX_KERNEL_BYTES, "kernel file")?;
        let kernel = kernel_format::parse_kernel_file_at(&text, path, scale)?;
        Ok(LoadedWorkload {
            info: Workload {
                kind: WorkloadKind::KernelFile,
                name: name.to_string(),
                class: None,
                inputs: vec![Input::of_text(&path.display().to_string(), &text)],
            },
            pieces: vec![Piece::Plain(kernel)],
            notes: vec![],
        })
    }

    /// An Accel-Sim trace: a directory with `kernelslist.g`, a kernel list, or one `.traceg`.
    pub fn trace(path: &Path) -> Result<LoadedWorkload> {
        let entries = kernelslist::resolve(path)?;
        let mut inputs = vec![];
        if !path.is_dir() && path.extension().is_none_or(|e| e != "traceg") {
            inputs.push(hash(path)?);
        } else if path.is_dir() {
            inputs.push(hash(&path.join(kernelslist::KERNELSLIST))?);
        }
        let mut pieces = vec![];
        let mut notes = vec![];
        let mut memcpys = 0;
        for e in &entries {
            match e {
                ListEntry::Kernel(p) => {
                    let t = trace_kernel::load(p)?;
                    let input = hash(p)?;
                    if !inputs.contains(&input) {
                        inputs.push(input);
                    }
                    for (name, count) in &t.unknown_opcodes {
                        notes.push(format!(
                            "{}: unknown opcode {name} ({count} times) runs as ALU",
                            t.kernel.name
                        ));
                    }
                    pieces.push(Piece::Trace(t));
                }
                ListEntry::Memcpy { .. } => memcpys += 1,
            }
        }
        if pieces.is_empty() {
            bail!("{}: the trace lists no kernel", path.display());
        }
        if memcpys > 0 {
            notes.push(format!(
                "{memcpys} memcpy line(s) of the kernel list are not simulated"
            ));
        }
        Ok(LoadedWorkload {
            info: Workload {
                kind: WorkloadKind::Trace,
                name: path.display().to_string(),
                class: None,
                inputs,
            },
            pieces,
            notes,
        })
    }

    /// Kernels in launch order.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The kernels' names, in launch order.
    pub fn kernel_names(&self) -> Vec<&str> {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Plain(k) => k.name.as_str(),
                Piece::Trace(t) => t.kernel.name.as_str(),
            })
            .collect()
    }

    /// The first kernel (built-ins and kernel files have exactly one).
    pub fn first_kernel(&self) -> Result<Kernel> {
        match &self.pieces[0] {
            Piece::Plain(k) => Ok(k.clone()),
            Piece::Trace(t) => Ok(t.fresh_kernel()?),
        }
    }

    /// Warp and thread instructions a trace holds, per kernel (`None` for other workloads).
    pub fn trace_counts(&self) -> Vec<Option<(u64, u64)>> {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Plain(_) => None,
                Piece::Trace(t) => Some((t.trace_instructions, t.thread_instructions)),
            })
            .collect()
    }

    /// Runs every kernel back to back on `gpu` (see [`Gpu::run`]), returning each kernel's
    /// statistics and wall time; `progress` is called with (kernel index, cycle, CTAs done,
    /// CTAs in the grid).
    pub fn run_on(
        &self,
        gpu: &mut Gpu,
        progress: &mut dyn FnMut(usize, u64, u64, u64),
    ) -> Result<Vec<(RunStats, Duration)>> {
        let mut out = Vec::with_capacity(self.pieces.len());
        for (i, piece) in self.pieces.iter().enumerate() {
            let mut p = |c, d, t| progress(i, c, d, t);
            let start = Instant::now();
            match piece {
                Piece::Plain(k) => out.push((gpu.run(k, Some(&mut p))?, start.elapsed())),
                Piece::Trace(t) => {
                    let stats = gpu.run(&t.fresh_kernel()?, Some(&mut p))?;
                    if stats.warp_instructions != t.trace_instructions {
                        bail!(
                            "{}: simulated {} warp instructions, the trace has {}",
                            t.path.display(),
                            stats.warp_instructions,
                            t.trace_instructions
                        );
                    }
                    // Each instruction runs with the active mask the trace recorded.
                    if stats.sm.thread_instructions != t.thread_instructions {
                        bail!(
                            "{}: simulated {} thread instructions, the trace has {} (an active \
                             mask with lanes beyond its warp's CTA?)",
                            t.path.display(),
                            stats.sm.thread_instructions,
                            t.thread_instructions
                        );
                    }
                    out.push((stats, start.elapsed()));
                }
            }
        }
        Ok(out)
    }

    /// Runs the workload on a fresh GPU built from `cfg` and returns its result.
    pub fn run(&self, cfg: &Config, label: &str, config_file: Option<Input>) -> Result<RunResult> {
        let mut gpu = crate::engine::gpu(cfg)?;
        let kernels = self.run_on(&mut gpu, &mut |_, _, _, _| {})?;
        let kernels = kernels.into_iter().map(|(s, _)| s).collect();
        Ok(self.result(cfg, label, config_file, kernels))
    }

    /// The result record of runs made under `cfg`.
    pub fn result(
        &self,
        cfg: &Config,
        label: &str,
        config_file: Option<Input>,
        kernels: Vec<RunStats>,
    ) -> RunResult {
        run_result(&self.info, cfg, label, config_file, kernels)
    }
}

/// The result record of `kernels`, run back to back under `cfg`: each named `label`, their
/// total, its energy, and the run's provenance.
pub fn run_result(
    info: &Workload,
    cfg: &Config,
    label: &str,
    config_file: Option<Input>,
    mut kernels: Vec<RunStats>,
) -> RunResult {
    for k in &mut kernels {
        k.scheduler = label.to_string();
    }
    let mut total = if kernels.len() == 1 {
        kernels[0].clone()
    } else {
        RunStats::total(&info.name, &kernels)
    };
    total.scheduler = label.to_string();
    let energy = energy(&total, cfg.sms, cfg.l2_partitions, &EnergyModel::default());
    RunResult {
        label: label.to_string(),
        scheduler: scheduler_info(cfg),
        engine: cfg.engine,
        workload: info.clone(),
        config_file,
        config: cfg.clone(),
        config_sha256: config_sha256(cfg),
        kernels,
        total,
        energy,
    }
}

fn hash(path: &Path) -> Result<Input> {
    Input::of_file(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Checks that the inputs a result recorded are unchanged, naming the first that is not.
pub fn check_inputs(recorded: &[Input]) -> Result<()> {
    for i in recorded {
        let now = if let Some(name) = i.path.strip_prefix("builtin:") {
            let b = builtin::find(name)
                .ok_or_else(|| anyhow::anyhow!("{}: no such built-in kernel any more", i.path))?;
            Input::of_text(&i.path, &b.sources())
        } else {
            hash(Path::new(&i.path))?
        };
        if now.sha256 != i.sha256 {
            bail!(
                "{}: the input has changed since the run was recorded (sha256 {} then, {} now)",
                i.path,
                i.sha256,
                now.sha256
            );
        }
    }
    Ok(())
}

/// Loads a recorded workload again, at the recorded configuration's `kernel_scale`.
pub fn reload(w: &Workload, scale: Scale) -> Result<LoadedWorkload> {
    check_inputs(&w.inputs)?;
    match w.kind {
        WorkloadKind::Builtin | WorkloadKind::KernelFile => LoadedWorkload::kernel_at(&w.name, scale),
        WorkloadKind::Trace => LoadedWorkload::trace(Path::new(&w.name)),
    }
}
