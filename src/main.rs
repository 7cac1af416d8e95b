//! The `mascar` command line: parse, call the library, print.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use mascar::config::Config;
use mascar::gpu::{simulate, Gpu};
use mascar::report;
use mascar::sched::SchedulerKind;
use mascar::stats::RunStats;
use mascar::waves::WaveOptions;
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
    /// Configuration file: TOML (keys as printed by `mascar config --dump`) or a GPGPU-Sim
    /// `gpgpusim.config` (the options that map onto the model are read, the rest listed).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Number of SMs (shorthand for --set sms=N).
    #[arg(long, value_name = "N")]
    sms: Option<u32>,
    /// Override one configuration key, e.g. --set l1_mshrs=32 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Which twin of the Mascar blocks runs (shorthand for --set engine=…): behavioural,
    /// rust-hdl RTL in the loop, or both compared every cycle.
    #[arg(long, value_enum)]
    engine: Option<mascar::config::Engine>,
}

impl MachineArgs {
    fn config(&self) -> Result<Config> {
        let mut c = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                if mascar::gpgpusim_config::looks_like_gpgpusim(&text) {
                    let name = path.display().to_string();
                    let imported = mascar::gpgpusim_config::import(&text, &name, &Config::default())?;
                    eprint!("{imported}");
                    imported.config
                } else {
                    Config::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
                }
            }
            None => Config::default(),
        };
        if let Some(n) = self.sms {
            c.sms = n;
        }
        for s in &self.set {
            c.set(s)?;
        }
        if let Some(e) = self.engine {
            c.engine = e;
        }
        // The engine's limits depend on the scheduler, which `run` sets later.
        let engine = std::mem::take(&mut c.engine);
        c.validate()?;
        c.engine = engine;
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
        #[arg(long, short, required_unless_present = "trace", conflicts_with = "trace")]
        kernel: Option<String>,
        /// An Accel-Sim trace instead: a directory with kernelslist.g, a kernelslist.g, or
        /// one .traceg; its kernels run in launch order on one machine.
        #[arg(long, value_name = "PATH")]
        trace: Option<PathBuf>,
        /// Scheduler(s): lrr, gto, owl, ccws, mas, car, mascar; a comma-separated list runs each
        /// and prints them side by side.
        #[arg(long, short, default_value = "lrr", value_delimiter = ',')]
        scheduler: Vec<String>,
        #[command(flatten)]
        machine: MachineArgs,
        /// Also write the statistics as JSON (one object, or an array for several schedulers).
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        /// Also write one CSV row per run (columns in the README).
        #[arg(long, value_name = "PATH")]
        csv: Option<PathBuf>,
        /// Write a VCD waveform (1 ns per cycle) of the run, and a GTKWave save file beside
        /// it (same name, .gtkw). One scheduler only.
        #[arg(long, value_name = "PATH")]
        vcd: Option<PathBuf>,
        /// Cycles the VCD covers, START..END (end exclusive; either side may be left out).
        #[arg(long, value_name = "START..END", requires = "vcd", value_parser = mascar::waves::parse_window)]
        vcd_window: Option<(u64, u64)>,
        /// SMs the VCD covers (default: all), e.g. 0,3.
        #[arg(long, value_name = "LIST", requires = "vcd", value_delimiter = ',')]
        vcd_sms: Option<Vec<usize>>,
        /// Write one line per event (issue, L1 outcome, MSHR alloc/free, owner change,
        /// re-execution) to PATH; one scheduler only, not with --trace.
        #[arg(long, value_name = "PATH", conflicts_with = "trace")]
        trace_events: Option<PathBuf>,
        /// Cycles --trace-events covers, START..END.
        #[arg(long, value_name = "START..END", requires = "trace_events", value_parser = mascar::waves::parse_window)]
        window: Option<(u64, u64)>,
        /// Record the RTL blocks' ports (one SM, from cycle 0) into DIR, for `mascar rtl
        /// replay` against the Verilog. Needs --engine rtl or lockstep.
        #[arg(long, value_name = "DIR")]
        record: Option<PathBuf>,
        /// The SM whose blocks --record writes.
        #[arg(long, value_name = "N", default_value_t = 0, requires = "record")]
        record_sm: usize,
        /// Cycles --record writes (from the first).
        #[arg(long, value_name = "N", default_value_t = 5000, requires = "record")]
        record_cycles: u64,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run built-in kernels under several schedulers in parallel and write the paper's
    /// comparison: speedup.md/.csv/.svg/.png, stalls.svg, results.json.
    Compare {
        /// Kernels to run (default: every built-in).
        #[arg(long, value_delimiter = ',')]
        kernels: Vec<String>,
        /// Schedulers to compare (default: all; lrr is always added as the baseline).
        #[arg(long, value_delimiter = ',')]
        schedulers: Vec<String>,
        /// Output directory.
        #[arg(long, default_value = "results")]
        out: PathBuf,
        /// The "unbuildable" resources study of slide 7 on the memory-intensive kernels
        /// instead: RR with 4x MSHRs and queues, a fully associative L1, +20% DRAM bandwidth,
        /// all three, beside Mascar on the normal machine.
        #[arg(long)]
        resources: bool,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Run only slice K of N of the experiment matrix (1-based, e.g. 3/8) and write its
        /// records (`results.json` / `resources.json`) to --out; `mascar merge` combines
        /// the slices into the report.
        #[arg(long, value_name = "K/N", value_parser = parse_shard)]
        shard: Option<(usize, usize)>,
        /// Also write every run's record as JSON to PATH (as results.json).
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        /// Also write one CSV row per run to PATH (as runs.csv).
        #[arg(long, value_name = "PATH")]
        csv: Option<PathBuf>,
        #[command(flatten)]
        machine: MachineArgs,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Combine the slices written by `mascar compare --shard K/N` into one report.
    Merge {
        /// Output directories of the slices.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the combined report goes.
        #[arg(long, default_value = "results")]
        out: PathBuf,
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
    /// Print a shell completion script (e.g. `mascar completions bash > /etc/bash_completion.d/mascar`).
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff), e.g. `mascar man > mascar.1 && man ./mascar.1`.
    Man,
    /// The RTL blocks: write their Verilog, or synthesise it and report its size.
    Rtl {
        #[command(subcommand)]
        action: RtlAction,
    },
}

#[derive(Subcommand)]
enum RtlAction {
    /// Write one Verilog file per block into DIR.
    Emit {
        #[arg(long, default_value = "rtl")]
        out: PathBuf,
    },
    /// Synthesise each block with yosys (`synth; stat`) and print its cell count.
    Area,
    /// Replay ports recorded with `mascar run --record DIR` into the Verilog under iverilog
    /// and compare every output every cycle.
    Replay {
        /// The recording.
        dir: PathBuf,
        /// Where the Verilog is.
        #[arg(long, default_value = "rtl")]
        rtl: PathBuf,
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
            trace,
            scheduler,
            machine,
            json,
            csv,
            vcd,
            vcd_window,
            vcd_sms,
            record,
            record_sm,
            record_cycles,
            trace_events,
            window,
            quiet,
        } => {
            let base = machine.config()?;
            if let Some(path) = trace {
                return run_trace(&path, &scheduler, &base, json.as_deref(), csv.as_deref());
            }
            let k = load_kernel(kernel.as_deref().expect("clap requires --kernel or --trace"))?;
            let waves = vcd.map(|path| WaveOptions {
                path,
                window: vcd_window,
                sms: vcd_sms,
            });
            if waves.is_some() && scheduler.len() > 1 {
                bail!(
                    "--vcd records one run: give one scheduler, not {}",
                    scheduler.join(",")
                );
            }
            if record.is_some() && scheduler.len() > 1 {
                bail!(
                    "--record records one run: give one scheduler, not {}",
                    scheduler.join(",")
                );
            }
            let record = record.map(|dir| (dir, record_sm, record_cycles));
            if trace_events.is_some() && scheduler.len() > 1 {
                bail!(
                    "--trace-events logs one run: give one scheduler, not {}",
                    scheduler.join(",")
                );
            }
            let events = trace_events.map(|p| (p, window));
            let mut runs = vec![];
            for name in &scheduler {
                let kind: SchedulerKind = name.parse().map_err(anyhow::Error::msg)?;
                let cfg = Config {
                    scheduler: kind,
                    ..base.clone()
                };
                let start = Instant::now();
                let stats =
                    run_with_progress(&cfg, &k, quiet, waves.as_ref(), record.as_ref(), events.as_ref())?;
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
            if let Some(path) = csv {
                report::write_atomic(&path, report::runs_csv(runs.iter().map(|(s, _)| s)).as_bytes())?;
            }
            if !quiet {
                for (s, wall) in &runs {
                    eprintln!("{}", report::exit_summary(s, *wall));
                }
            }
            Ok(())
        }
        Command::Compare {
            kernels,
            schedulers,
            out,
            resources,
            threads,
            shard,
            json,
            csv,
            machine,
            quiet,
        } => {
            let records = compare(
                kernels, schedulers, out, resources, threads, shard, machine, quiet,
            )?;
            if let Some(p) = json {
                report::write_atomic(&p, serde_json::to_string_pretty(&records)?.as_bytes())?;
            }
            if let Some(p) = csv {
                report::write_atomic(&p, report::runs_csv(records.iter().map(|r| &r.stats)).as_bytes())?;
            }
            Ok(())
        }
        Command::Merge { dirs, out } => merge(&dirs, &out),
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
        Command::Rtl { action } => rtl(action),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "mascar", &mut std::io::stdout());
            Ok(())
        }
        Command::Man => {
            use clap::CommandFactory;
            clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?;
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

/// `K/N` with 1 ≤ K ≤ N.
fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}`: expected K/N, e.g. 2/8"))?;
    let k: usize = k
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: K is not a number"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: N is not a number"))?;
    if k == 0 || k > n {
        return Err(format!("`{s}`: need 1 ≤ K ≤ N"));
    }
    Ok((k, n))
}

#[allow(clippy::too_many_arguments)]
fn compare(
    kernels: Vec<String>,
    schedulers: Vec<String>,
    out: PathBuf,
    resources: bool,
    threads: usize,
    shard: Option<(usize, usize)>,
    machine: MachineArgs,
    quiet: bool,
) -> Result<Vec<mascar::report::compare::RunRecord>> {
    use mascar::experiment;
    let base = machine.config()?;
    let mut picked = vec![];
    if kernels.is_empty() {
        picked.extend(
            builtin::builtins()
                .iter()
                .filter(|b| !resources || b.class.is_memory_intensive()),
        );
    } else {
        for name in &kernels {
            let b = builtin::find(name)
                .ok_or_else(|| anyhow::anyhow!("unknown kernel `{name}` (see `mascar kernels`)"))?;
            picked.push(b);
        }
    }
    let jobs = if resources {
        experiment::variant_matrix(&picked, &experiment::resource_variants(&base))
    } else {
        let mut kinds: Vec<SchedulerKind> = vec![SchedulerKind::Lrr];
        let names: Vec<String> = if schedulers.is_empty() {
            SchedulerKind::ALL.iter().map(|k| k.name().to_string()).collect()
        } else {
            schedulers
        };
        for n in &names {
            let k: SchedulerKind = n.parse().map_err(anyhow::Error::msg)?;
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        experiment::scheduler_matrix(&picked, &kinds, &base)
    };
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(jobs.len() as u64);
        let style =
            ProgressStyle::with_template("[{elapsed_precise}] [{bar:30}] {pos}/{len} runs, eta {eta}");
        b.set_style(style.expect("valid template"));
        b
    };
    let mut jobs = jobs;
    if let Some((k, n)) = shard {
        // Slice K takes every N-th job: each slice gets a mix of long and short runs.
        jobs = jobs
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % n == k - 1)
            .map(|(_, j)| j)
            .collect();
        bar.set_length(jobs.len() as u64);
    }
    let records = experiment::run_jobs(&jobs, threads, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let json_name = if resources {
        "resources.json"
    } else {
        "results.json"
    };
    if let Some((k, n)) = shard {
        let json = serde_json::to_string_pretty(&records)?;
        report::write_atomic(&out.join(json_name), json.as_bytes())?;
        eprintln!(
            "slice {k}/{n}: {} runs written to {}; combine the slices with `mascar merge DIR...`",
            records.len(),
            out.join(json_name).display()
        );
        return Ok(records);
    }
    write_report(&records, &out, resources)?;
    Ok(records)
}

/// `mascar merge`: the records of every slice, one report.
fn merge(dirs: &[PathBuf], out: &Path) -> Result<()> {
    use mascar::report::compare::RunRecord;
    let mut records: Vec<RunRecord> = vec![];
    let mut resources = None;
    for d in dirs {
        let (path, is_resources) = if d.join("results.json").is_file() {
            (d.join("results.json"), false)
        } else if d.join("resources.json").is_file() {
            (d.join("resources.json"), true)
        } else {
            bail!(
                "{}: no results.json or resources.json (a `compare --shard` output)",
                d.display()
            );
        };
        if resources.is_some_and(|r| r != is_resources) {
            bail!(
                "{}: mixes a --resources slice with a scheduler-comparison slice",
                d.display()
            );
        }
        resources = Some(is_resources);
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let part: Vec<RunRecord> = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a slice's records", path.display()))?;
        records.extend(part);
    }
    // The same run in two slices is a mistake (overlapping slices), not more data.
    let mut seen = std::collections::HashSet::new();
    for r in &records {
        if !seen.insert((r.kernel.clone(), r.scheduler.clone())) {
            bail!(
                "{} under {} appears in more than one slice",
                r.kernel,
                r.scheduler
            );
        }
    }
    write_report(&records, out, resources.unwrap_or(false))
}

/// Writes the comparison report of `records` into `out`.
fn write_report(records: &[mascar::report::compare::RunRecord], out: &Path, resources: bool) -> Result<()> {
    use mascar::report::{compare as cmp, plots};
    let records = records.to_vec();
    let json_name = if resources {
        "resources.json"
    } else {
        "results.json"
    };
    let table = cmp::speedup_table(&records, "lrr");
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let stem = if resources { "resources" } else { "speedup" };
    report::write_atomic(
        &out.join(format!("{stem}.md")),
        cmp::to_markdown(&table).as_bytes(),
    )?;
    report::write_atomic(&out.join(format!("{stem}.csv")), cmp::to_csv(&table).as_bytes())?;
    plots::speedup_svg(&table, &out.join(format!("{stem}.svg")))?;
    plots::speedup_png(&table, &out.join(format!("{stem}.png")))?;
    if !resources {
        plots::stalls_svg(&records, &out.join("stalls.svg"))?;
    }
    let json = serde_json::to_string_pretty(&records)?;
    report::write_atomic(&out.join(json_name), json.as_bytes())?;
    let runs_name = if resources {
        "resources-runs.csv"
    } else {
        "runs.csv"
    };
    report::write_atomic(
        &out.join(runs_name),
        report::runs_csv(records.iter().map(|r| &r.stats)).as_bytes(),
    )?;
    print!("{}", cmp::to_stdout_table(&table));
    eprintln!(
        "wrote {stem}.md, .csv, .svg, .png, {json_name} and {runs_name} to {}",
        out.display()
    );
    Ok(())
}

/// `mascar run --trace`: the trace's kernels in launch order, one machine per scheduler.
fn run_trace(
    path: &Path,
    schedulers: &[String],
    base: &Config,
    json: Option<&Path>,
    csv: Option<&Path>,
) -> Result<()> {
    use mascar::workload::trace::{kernelslist, ListEntry};
    use mascar::workload::trace_kernel;
    let entries = kernelslist::resolve(path)?;
    let mut kernels = vec![];
    let mut memcpys = 0;
    for e in &entries {
        match e {
            ListEntry::Kernel(p) => kernels.push(trace_kernel::load(p)?),
            ListEntry::Memcpy { .. } => memcpys += 1,
        }
    }
    if kernels.is_empty() {
        bail!("{}: the trace lists no kernel", path.display());
    }
    for t in &kernels {
        for (name, count) in &t.unknown_opcodes {
            eprintln!(
                "warning: {}: unknown opcode {name} ({count} times) runs as ALU",
                t.kernel.name
            );
        }
    }
    if memcpys > 0 {
        eprintln!("note: {memcpys} memcpy line(s) of the kernel list are not simulated");
    }
    // runs[kernel][scheduler]
    let mut runs: Vec<Vec<(RunStats, Duration)>> = vec![vec![]; kernels.len()];
    for name in schedulers {
        let kind: SchedulerKind = name.parse().map_err(anyhow::Error::msg)?;
        let cfg = Config {
            scheduler: kind,
            ..base.clone()
        };
        let mut gpu = Gpu::new(&cfg)?;
        for (i, t) in kernels.iter().enumerate() {
            let start = Instant::now();
            let kernel = t.fresh_kernel()?;
            let stats = gpu.run(&kernel, None)?;
            if stats.warp_instructions != t.trace_instructions {
                bail!(
                    "{}: simulated {} warp instructions, the trace has {}",
                    t.kernel.name,
                    stats.warp_instructions,
                    t.trace_instructions
                );
            }
            runs[i].push((stats, start.elapsed()));
        }
    }
    for (r, t) in runs.iter().zip(&kernels) {
        print!("{}", report::summary_table(r));
        println!(
            "trace: {} warp instructions, {} thread instructions (active lanes)",
            t.trace_instructions, t.thread_instructions
        );
    }
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(Path::new("."))
    };
    let peer = trace_kernel::peer_statistics(dir);
    if !peer.is_empty() {
        println!("reported for this trace by the tools that made it (another machine):");
        for (src, stat, value) in peer {
            println!("  {src}: {stat} = {value}");
        }
    }
    for (s, wall) in runs.iter().flatten() {
        eprintln!("{}", report::exit_summary(s, *wall));
    }
    let all: Vec<&RunStats> = runs.iter().flatten().map(|(s, _)| s).collect();
    if let Some(path) = json {
        report::write_atomic(path, serde_json::to_string_pretty(&all)?.as_bytes())?;
    }
    if let Some(path) = csv {
        report::write_atomic(path, report::runs_csv(all).as_bytes())?;
    }
    Ok(())
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
fn run_with_progress(
    cfg: &Config,
    k: &Kernel,
    quiet: bool,
    waves: Option<&WaveOptions>,
    record: Option<&(PathBuf, usize, u64)>,
    events: Option<&(PathBuf, Option<(u64, u64)>)>,
) -> Result<RunStats> {
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
    let mut gpu = Gpu::new(cfg)?;
    if let Some(w) = waves {
        gpu.record_waves(w)?;
    }
    if let Some((dir, sm, cycles)) = record {
        gpu.record_ports(dir, *sm, *cycles)?;
    }
    if let Some((path, window)) = events {
        gpu.record_events(path, *window)?;
    }
    let result = gpu.run(k, Some(&mut progress));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(w) = waves {
        let sms: Vec<usize> = w.sms.clone().unwrap_or_else(|| (0..cfg.sms as usize).collect());
        let (start, end) = w.window.unwrap_or((0, u64::MAX));
        let gtkw = w.path.with_extension("gtkw");
        mascar::waves::write_gtkw(
            &gtkw,
            &w.path,
            &sms,
            cfg.schedulers_per_sm as usize,
            cfg.warps_per_sm,
            (start, end.min(gpu.cycle.max(start + 1))),
        )
        .with_context(|| format!("cannot write {}", gtkw.display()))?;
        eprintln!("wrote {} and {}", w.path.display(), gtkw.display());
    }
    Ok(result?)
}

fn rtl(action: RtlAction) -> Result<()> {
    use mascar::rtl::emit;
    match action {
        RtlAction::Emit { out } => {
            for f in emit::blocks() {
                let path = out.join(&f.file);
                report::write_atomic(&path, f.text.as_bytes())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                println!("wrote {}", path.display());
            }
            Ok(())
        }
        RtlAction::Area => {
            println!("{:<22} {:>8} {:>8}", "block", "cells", "flops");
            for f in emit::blocks() {
                let (cells, flops) = emit::synth_area(&f).map_err(anyhow::Error::msg)?;
                println!("{:<22} {:>8} {:>8}", f.module, cells, flops);
            }
            Ok(())
        }
        RtlAction::Replay { dir, rtl } => {
            let results = mascar::rtl::record::replay(&dir, &rtl).map_err(anyhow::Error::msg)?;
            println!("{:<22} {:>8} {:>11}", "block", "cycles", "mismatches");
            let mut bad = 0;
            for r in &results {
                println!("{:<22} {:>8} {:>11}", r.module, r.cycles, r.mismatches);
                if r.mismatches > 0 {
                    bad += 1;
                    eprint!("{}", r.log);
                }
            }
            if bad > 0 {
                bail!("{bad} block(s) differ from the recording");
            }
            Ok(())
        }
    }
}
