//! The `mascar` command line: parse, call the library, print.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use mascar::config::Config;
use mascar::gpu::simulate;
use mascar::report;
use mascar::sched::SchedulerKind;
use mascar::stats::RunStats;
use mascar::workload::{builtin, kernel_format, Kernel};

#[derive(Parser)]
#[command(
    name = "mascar",
    version,
    about = "Cycle-level GPU SM + memory model with the Mascar warp-scheduling hardware (HPCA 2015)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct MachineArgs {
    /// TOML configuration file (keys as printed by `mascar config --dump`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Number of SMs (shorthand for --set sms=N).
    #[arg(long, value_name = "N")]
    sms: Option<u32>,
    /// Override one configuration key, e.g. --set l1_mshrs=32 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

impl MachineArgs {
    fn config(&self) -> Result<Config> {
        let mut c = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Config::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
            }
            None => Config::default(),
        };
        if let Some(n) = self.sms {
            c.sms = n;
        }
        for s in &self.set {
            c.set(s)?;
        }
        c.validate()?;
        Ok(c)
    }
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in kernels: name, class, description.
    Kernels,
    /// Run a kernel to completion and print a summary.
    Run {
        /// A built-in kernel name (see `mascar kernels`) or a path to a .kern file.
        #[arg(long, short)]
        kernel: String,
        /// Scheduler(s): lrr, gto; a comma-separated list runs each and prints them side by side.
        #[arg(long, short, default_value = "lrr", value_delimiter = ',')]
        scheduler: Vec<String>,
        #[command(flatten)]
        machine: MachineArgs,
        /// Also write the statistics as JSON (one object, or an array for several schedulers).
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Measure simulation speed (use a release build).
    Bench {
        /// Kernels to time (default: a memory-intensive and a compute-intensive built-in).
        #[arg(long, value_delimiter = ',', default_value = "kmeans-1,srad-1,sgemm")]
        kernels: Vec<String>,
        #[arg(long, short, default_value = "lrr")]
        scheduler: String,
        #[command(flatten)]
        machine: MachineArgs,
    },
    /// Show the effective configuration.
    Config {
        /// Print the configuration as TOML (the format `--config` reads).
        #[arg(long)]
        dump: bool,
        #[command(flatten)]
        machine: MachineArgs,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(cmd: Command) -> Result<()> {
    match cmd {
        Command::Kernels => {
            for b in builtin::builtins() {
                println!("{:<12} {:<16} {}", b.name, b.class.label(), b.description);
            }
            Ok(())
        }
        Command::Run {
            kernel,
            scheduler,
            machine,
            json,
            quiet,
        } => {
            let base = machine.config()?;
            let k = load_kernel(&kernel)?;
            let mut runs = vec![];
            for name in &scheduler {
                let kind: SchedulerKind = name.parse().map_err(anyhow::Error::msg)?;
                let cfg = Config {
                    scheduler: kind,
                    ..base.clone()
                };
                let start = Instant::now();
                let stats = run_with_progress(&cfg, &k, quiet)?;
                runs.push((stats, start.elapsed()));
            }
            print!("{}", report::summary_table(&runs));
            if let Some(path) = json {
                let stats: Vec<&RunStats> = runs.iter().map(|(s, _)| s).collect();
                let value = if stats.len() == 1 {
                    serde_json::to_value(stats[0])?
                } else {
                    serde_json::to_value(&stats)?
                };
                report::write_atomic(&path, serde_json::to_string_pretty(&value)?.as_bytes())?;
            }
            Ok(())
        }
        Command::Bench {
            kernels,
            scheduler,
            machine,
        } => {
            let mut cfg = machine.config()?;
            cfg.scheduler = scheduler.parse().map_err(anyhow::Error::msg)?;
            if cfg!(debug_assertions) {
                eprintln!("warning: debug build; measure with `cargo run --release -- bench`");
            }
            println!(
                "{:<12} {:>10} {:>12} {:>9} {:>16} {:>16}",
                "kernel", "cycles", "warp-insts", "wall s", "SM-cycles/s", "warp-insts/s"
            );
            for name in &kernels {
                let k = load_kernel(name)?;
                let start = Instant::now();
                let s = simulate(&cfg, &k, None)?;
                let wall = start.elapsed().as_secs_f64();
                println!(
                    "{:<12} {:>10} {:>12} {:>9.3} {:>16.0} {:>16.0}",
                    k.name,
                    s.cycles,
                    s.warp_instructions,
                    wall,
                    s.cycles as f64 * cfg.sms as f64 / wall,
                    s.warp_instructions as f64 / wall
                );
            }
            Ok(())
        }
        Command::Config { dump, machine } => {
            let cfg = machine.config()?;
            if dump {
                print!("{cfg}");
            } else {
                println!("configuration is valid; `mascar config --dump` prints it");
            }
            Ok(())
        }
    }
}

/// A built-in name, or a path to a kernel file.
fn load_kernel(name: &str) -> Result<Kernel> {
    if let Some(b) = builtin::find(name) {
        return Ok(b.kernel());
    }
    let path = Path::new(name);
    if path.exists() {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        return Ok(kernel_format::parse_kernel(&text, &path.display().to_string())?);
    }
    let names: Vec<&str> = builtin::builtins().iter().map(|b| b.name).collect();
    bail!(
        "unknown kernel `{name}`: not a built-in ({}) and no such file",
        names.join(", ")
    )
}

/// Runs one simulation with a progress bar on a terminal once it has taken a second.
fn run_with_progress(cfg: &Config, k: &Kernel, quiet: bool) -> Result<RunStats> {
    let show = !quiet && std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let label = format!("{} / {}", k.name, cfg.scheduler);
    let mut progress = |cycle: u64, done: u64, total: u64| {
        if !show {
            return;
        }
        if bar.is_none() && start.elapsed() > Duration::from_secs(1) {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} CTAs, cycle {prefix}")
                    .expect("valid template"),
            );
            b.set_message(label.clone());
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(done);
            b.set_prefix(cycle.to_string());
        }
    };
    let result = simulate(cfg, k, Some(&mut progress));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(result?)
}
