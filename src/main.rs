//! The `mascar` command line: parse, call the library, print.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use mascar::config::Config;
use mascar::gpu::waves::WaveOptions;
use mascar::report;
use mascar::results::Results;
use mascar::runner::LoadedWorkload;
use mascar::sched::SchedulerKind;
use mascar::stats::RunStats;
use mascar::workload::builtin;

/// `println!` and `print!` that end the program quietly when stdout is a closed pipe
/// (`mascar run … | head`), as Unix tools do, instead of panicking.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            stdout_closed();
        }
    }};
}
macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout(), $($arg)*).is_err() {
            stdout_closed();
        }
    }};
}

/// Stdout is gone: leave no temporaries and exit as a process killed by SIGPIPE would
/// appear to a shell (128 + 13).
fn stdout_closed() -> ! {
    report::remove_live_temporaries();
    std::process::exit(141)
}

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

/// The machine a command runs on, and where its settings came from.
struct Machine {
    cfg: Config,
    /// The configuration file, hashed, for the results' provenance.
    config_file: Option<mascar::results::Input>,
    /// `scheduler` was set by the configuration file or `--set` (not left at its default).
    scheduler_set: bool,
}

impl MachineArgs {
    /// The effective configuration. One precedence rule for every command (docs/cli.md):
    /// an explicit command-line flag > `--set` > the configuration file > built-in
    /// defaults; a flag left at its default counts as not given.
    fn machine(&self) -> Result<Machine> {
        use mascar::input::{read_text_capped, MAX_CONFIG_BYTES};
        let mut scheduler_set = false;
        let mut config_file = None;
        let mut c = match &self.config {
            Some(path) => {
                let text = read_text_capped(path, MAX_CONFIG_BYTES, "configuration file")?;
                config_file = Some(mascar::results::Input::of_text(
                    &path.display().to_string(),
                    &text,
                ));
                if mascar::gpgpusim_config::looks_like_gpgpusim(&text) {
                    let name = path.display().to_string();
                    let imported = mascar::gpgpusim_config::import(&text, &name, &Config::default())?;
                    eprint!("{imported}");
                    scheduler_set = imported.used.iter().any(|u| u.option == "gpgpu_scheduler");
                    imported.config
                } else {
                    let cfg =
                        Config::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                    scheduler_set = text
                        .parse::<toml::Table>()
                        .is_ok_and(|t| t.contains_key("scheduler"));
                    cfg
                }
            }
            None => Config::default(),
        };
        for s in &self.set {
            c.set(s)?;
            scheduler_set |= s.split('=').next().is_some_and(|k| k.trim() == "scheduler");
        }
        if let Some(n) = self.sms {
            c.sms = n;
        }
        if let Some(e) = self.engine {
            c.engine = e;
        }
        // The engine's limits depend on the scheduler, which the command may still set.
        let engine = std::mem::take(&mut c.engine);
        c.validate()?;
        c.engine = engine;
        Ok(Machine {
            cfg: c,
            config_file,
            scheduler_set,
        })
    }

    fn config(&self) -> Result<Config> {
        Ok(self.machine()?.cfg)
    }
}

/// The schedulers a command runs: the `--scheduler` flag when given, else the configured one.
fn schedulers_of(flag: &[String], cfg: &Config) -> Result<Vec<SchedulerKind>> {
    if flag.is_empty() {
        return Ok(vec![cfg.scheduler]);
    }
    flag.iter()
        .map(|n| n.parse().map_err(anyhow::Error::msg))
        .collect()
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in kernels: name, class, description; or, with --characterise, run
    /// them under LRR and print each one's warp instructions per L1 data miss beside the
    /// paper's (docs/workloads.md).
    Kernels {
        /// Run every built-in (or the --kernel/--trace workloads) under LRR and print its
        /// warp instructions per L1 data miss, the paper's value, the class each implies,
        /// SIMD efficiency and IPC, as a markdown table.
        #[arg(long)]
        characterise: bool,
        /// Characterise these instead: built-in names or .kern files (repeatable or
        /// comma-separated).
        #[arg(
            long,
            short,
            value_delimiter = ',',
            value_name = "NAME|FILE",
            requires = "characterise"
        )]
        kernel: Vec<String>,
        /// Characterise these Accel-Sim traces too (a directory, a kernelslist.g or one
        /// .traceg; repeatable); each is measured over all its kernels.
        #[arg(long, value_name = "PATH", requires = "characterise")]
        trace: Vec<PathBuf>,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0, requires = "characterise")]
        threads: usize,
        /// Also write the table as JSON to PATH.
        #[arg(long, value_name = "PATH", requires = "characterise")]
        json: Option<PathBuf>,
        #[command(flatten)]
        machine: MachineArgs,
        /// No progress bar.
        #[arg(long, short, requires = "characterise")]
        quiet: bool,
    },
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
        /// and prints them side by side [default: the configuration's `scheduler`, lrr].
        #[arg(long, short, value_delimiter = ',', value_name = "LIST")]
        scheduler: Vec<String>,
        #[command(flatten)]
        machine: MachineArgs,
        /// Write the results document (docs/results.md: provenance, per-kernel statistics
        /// and totals) to PATH.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        /// Write one CSV row per kernel and run (columns in docs/results.md) to PATH.
        #[arg(long, value_name = "PATH")]
        csv: Option<PathBuf>,
        /// Write a VCD waveform (1 ns per cycle) of the run, and a GTKWave save file beside
        /// it (same name, .gtkw). A PATH ending in .fst writes FST, GTKWave's compressed
        /// format, instead. One scheduler only.
        #[arg(long, value_name = "PATH")]
        vcd: Option<PathBuf>,
        /// Cycles the VCD covers, START..END (end exclusive; either side may be left out).
        #[arg(long, value_name = "START..END", requires = "vcd", value_parser = mascar::gpu::waves::parse_window)]
        vcd_window: Option<(u64, u64)>,
        /// SMs the VCD covers (default: all), e.g. 0,3.
        #[arg(long, value_name = "LIST", requires = "vcd", value_delimiter = ',')]
        vcd_sms: Option<Vec<usize>>,
        /// Write one line per event (issue, L1 outcome, MSHR alloc/free, owner change,
        /// re-execution) to PATH; one scheduler and one kernel only.
        #[arg(long, value_name = "PATH", alias = "trace-events")]
        events: Option<PathBuf>,
        /// Cycles --events covers, START..END.
        #[arg(long, value_name = "START..END", alias = "window", requires = "events", value_parser = mascar::gpu::waves::parse_window)]
        events_window: Option<(u64, u64)>,
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
        /// Threads stepping the SMs of each cycle (results are identical for any count;
        /// 0 = every core). One by default: see docs/speed.md for when more pay.
        #[arg(long, value_name = "N", default_value_t = 1)]
        threads: usize,
        /// Step every cycle, even those in which nothing can change (the skip changes no
        /// statistic; docs/speed.md).
        #[arg(long)]
        no_cycle_skip: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run built-in kernels under several schedulers in parallel and write the paper's
    /// comparison: speedup.md/.csv/.svg/.png, stalls.svg, results.json.
    Compare {
        /// Built-in kernels to run, comma-separated (default: every built-in, unless --trace
        /// is given).
        #[arg(long, short, alias = "kernels", value_delimiter = ',', value_name = "LIST")]
        kernel: Vec<String>,
        /// Accel-Sim traces to run as well (a directory, a kernelslist.g or one .traceg;
        /// repeatable). Each is one row, classed by its warp instructions per L1 data miss
        /// under LRR (below 30: memory intensive).
        #[arg(long, value_name = "PATH")]
        trace: Vec<PathBuf>,
        /// Schedulers to compare, comma-separated (default: all; lrr is always added as the
        /// baseline). A scheduler in the configuration is ignored here.
        #[arg(long, short, alias = "schedulers", value_delimiter = ',', value_name = "LIST")]
        scheduler: Vec<String>,
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
        /// Run every kernel under buffer placements 1..=N (`placement`, docs/kernel-format.md)
        /// and report each speedup as the geometric mean over them with its min–max, marked
        /// `*` where it is above 1 under one placement and below under another. With 1, the
        /// configuration's placement is used.
        #[arg(long, value_name = "N", default_value_t = 3,
              value_parser = clap::value_parser!(u32).range(1..=1000))]
        placements: u32,
        /// Run only slice K of N of the experiment matrix (1-based, e.g. 3/8) and write its
        /// records (`results.json` / `resources.json`) to --out; `mascar merge` combines
        /// the slices into the report.
        #[arg(long, value_name = "K/N", value_parser = parse_shard)]
        shard: Option<(usize, usize)>,
        /// Also write the results document to PATH (as results.json).
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
        /// Kernels to time, built-in names or .kern files (default: kmeans-1, cache-sensitive;
        /// srad-1, bandwidth-bound; sgemm, compute-bound).
        #[arg(
            long,
            short,
            alias = "kernels",
            value_delimiter = ',',
            value_name = "LIST",
            default_value = "kmeans-1,srad-1,sgemm"
        )]
        kernel: Vec<String>,
        /// Schedulers, comma-separated [default: the configuration's `scheduler`, lrr].
        #[arg(long, short, value_delimiter = ',', value_name = "LIST")]
        scheduler: Vec<String>,
        /// Every built-in kernel under every scheduler (overrides --kernel and --scheduler;
        /// about 25 minutes with the default 5 repeats on 2 cores).
        #[arg(long)]
        all: bool,
        /// Runs per kernel and scheduler; the median wall time is reported.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        /// Threads stepping the SMs of each cycle; a list (`1,2`) times each count and
        /// prints the scaling against the first.
        #[arg(long, value_delimiter = ',', value_name = "LIST", default_value = "1")]
        threads: Vec<usize>,
        /// Step every cycle, even those in which nothing can change (to measure the skip).
        #[arg(long)]
        no_cycle_skip: bool,
        #[command(flatten)]
        machine: MachineArgs,
    },
    /// Run the runs of a results document (`--json`, `results.json`) again and report
    /// whether every number matches; refuses when an input file has changed.
    Rerun {
        /// The results document.
        results: PathBuf,
        /// No progress output.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Show the effective configuration.
    Config {
        /// Print the configuration as TOML (the format `--config` reads).
        #[arg(long)]
        dump: bool,
        /// Print the configuration reference as Markdown: every key with its unit, valid
        /// values, default and description (docs/configuration.md is this output).
        #[arg(long, conflicts_with = "dump")]
        reference: bool,
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
    /// Accel-Sim traces: write a kernel out as one (docs/traces.md).
    Trace {
        #[command(subcommand)]
        action: TraceAction,
    },
    /// Replay a memory trace (Ramulator format: `0x<hex address> R|W` per line, `#`
    /// comments) through the DRAM model alone and report bus utilisation, activations and
    /// row hit rate (docs/dram.md).
    Dram {
        /// The trace.
        #[arg(long, value_name = "FILE")]
        trace: PathBuf,
        /// Also write the report as JSON.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        #[command(flatten)]
        machine: MachineArgs,
    },
}

#[derive(Subcommand)]
enum TraceAction {
    /// Write a kernel as an Accel-Sim trace directory (kernelslist.g, kernel-1.traceg;
    /// tracer version 4, sm_61 opcodes) holding exactly the instruction stream `mascar run`
    /// executes for it under the same settings, plus one EXIT per warp.
    Export {
        /// A built-in kernel name (see `mascar kernels`) or a path to a .kern file.
        #[arg(long, short)]
        kernel: String,
        /// The trace directory to write (created if missing; its two files are replaced).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[command(flatten)]
        machine: MachineArgs,
    },
}

#[derive(Subcommand)]
enum RtlAction {
    /// Write one Verilog file per block into DIR.
    Emit {
        #[arg(long, default_value = "rtl")]
        out: PathBuf,
    },
    /// Synthesise each block with yosys at 48 and 16 warps: cells, flip-flops, storage bits,
    /// longest path in AIG levels (`abc -g AND; ltp -noff`), LUTs and flip-flops after
    /// `synth_xilinx`.
    Area {
        /// Skip `synth_xilinx` (the slow part): generic cells and depth only.
        #[arg(long)]
        no_xilinx: bool,
    },
    /// Replay ports recorded with `mascar run --record DIR` into the Verilog under iverilog
    /// and compare every output every cycle.
    Replay {
        /// The recording.
        dir: PathBuf,
        /// Where the Verilog is.
        #[arg(long, default_value = "rtl")]
        rtl: PathBuf,
    },
    /// Prove the blocks' properties with yosys (`sat -tempinduct`) at 8 warps / 8 entries
    /// and at 48 warps / 32 entries; print property, size, result and time (docs/verification.md).
    Prove {
        /// Read the default-size Verilog (and `formal/` wrappers) from DIR instead of
        /// generating it from src/rtl.
        #[arg(long, value_name = "DIR")]
        rtl: Option<PathBuf>,
        /// Only this size: small or default.
        #[arg(long)]
        size: Option<String>,
        /// Only these proofs (by name, comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Keep each proof's Verilog, yosys script, log and counterexample VCD under DIR.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
        /// Time limit per proof, seconds.
        #[arg(long, default_value_t = 900)]
        timeout: u64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // SIGINT/SIGTERM: remove the temporaries of unfinished output files, say so, exit 130.
    if let Err(e) = report::remove_temporaries_on_interrupt() {
        eprintln!("warning: cannot install the interrupt handler: {e}");
    }
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                stdout_closed();
            }
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(cmd: Command) -> Result<()> {
    match cmd {
        Command::Kernels {
            characterise,
            kernel,
            trace,
            threads,
            json,
            machine,
            quiet,
        } => {
            if characterise {
                return characterise_kernels(&kernel, &trace, threads, json.as_deref(), &machine, quiet);
            }
            if machine.config.is_some()
                || machine.sms.is_some()
                || !machine.set.is_empty()
                || machine.engine.is_some()
            {
                bail!("machine options apply to `kernels --characterise` only");
            }
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
            events,
            events_window,
            threads,
            no_cycle_skip,
            quiet,
        } => {
            let m = machine.machine()?;
            let workload = match (&kernel, &trace) {
                (_, Some(path)) => LoadedWorkload::trace(path)?,
                (Some(name), None) => LoadedWorkload::kernel_at(name, m.cfg.kernel_scale)?,
                (None, None) => bail!("give --kernel NAME|FILE or --trace PATH"),
            };
            for note in &workload.notes {
                eprintln!("note: {note}");
            }
            let kinds = schedulers_of(&scheduler, &m.cfg)?;
            let hooks = Hooks {
                threads,
                cycle_skip: !no_cycle_skip,
                waves: vcd.map(|path| WaveOptions {
                    path,
                    window: vcd_window,
                    sms: vcd_sms,
                }),
                record: record.map(|dir| (dir, record_sm, record_cycles)),
                events: events.map(|p| (p, events_window)),
            };
            for (flag, given) in [
                ("--vcd", hooks.waves.is_some()),
                ("--record", hooks.record.is_some()),
                ("--events", hooks.events.is_some()),
            ] {
                if given && kinds.len() > 1 {
                    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                    bail!(
                        "{flag} records one run: give one scheduler, not {}",
                        names.join(",")
                    );
                }
                if given && workload.len() > 1 {
                    if workload.info.kind == mascar::results::WorkloadKind::Builtin {
                        bail!(
                            "{flag} records one kernel; the built-in `{}` launches {} as its host code does: \
                             record one of them, e.g. its kernel file alone \
                             (`-k src/workload/kernels/{}.kern`, its representative launch)",
                            workload.info.name,
                            workload.len(),
                            workload.info.name
                        );
                    }
                    bail!(
                        "{flag} records one kernel; the trace has {} ({})",
                        workload.len(),
                        workload.kernel_names().join(", ")
                    );
                }
            }
            // The schedulers' runs are independent: they run side by side, one per core (as
            // `compare`'s jobs do), each stepping its SMs on `--threads` threads. Results stay
            // in the order given.
            let cfgs: Vec<Config> = kinds
                .iter()
                .map(|&kind| Config {
                    scheduler: kind,
                    ..m.cfg.clone()
                })
                .collect();
            let bars = MultiProgress::new();
            let runs: Vec<Vec<(RunStats, Duration)>> = {
                use rayon::prelude::*;
                let workers = thread_count(0).min(cfgs.len()).max(1);
                rayon::ThreadPoolBuilder::new()
                    .num_threads(workers)
                    .build()
                    .context("starting the runs' threads")?
                    .install(|| {
                        cfgs.par_iter()
                            .map(|cfg| run_workload(cfg, &workload, quiet, &hooks, &bars))
                            .collect::<Result<_>>()
                    })?
            };
            let mut results = vec![];
            // Per run, each kernel's wall time.
            let mut walls: Vec<Vec<Duration>> = vec![];
            for (cfg, run) in cfgs.iter().zip(runs) {
                let (kernels, wall) = run.into_iter().unzip();
                walls.push(wall);
                results.push(workload.result(cfg, cfg.scheduler.name(), m.config_file.clone(), kernels));
            }
            print_run_summary(&workload, &results, &walls);
            let mut files = report::OutputSet::new();
            if let Some(path) = &json {
                files.write(path, Results::new("run", results.clone()).to_json().as_bytes())?;
            }
            if let Some(path) = &csv {
                files.write(path, mascar::results::to_csv(&results).as_bytes())?;
            }
            files.commit()?;
            if !quiet {
                for (r, wall) in results.iter().zip(&walls) {
                    eprintln!("{}", report::exit_summary(&r.total, wall.iter().sum()));
                }
            }
            Ok(())
        }
        Command::Compare {
            kernel,
            trace,
            scheduler,
            out,
            resources,
            threads,
            placements,
            shard,
            json,
            csv,
            machine,
            quiet,
        } => {
            let mut files = report::OutputSet::new();
            let (doc, wrote) = compare(
                kernel, trace, scheduler, &out, resources, threads, placements, shard, machine, quiet,
                &mut files,
            )?;
            if let Some(p) = &json {
                files.write(p, doc.to_json().as_bytes())?;
            }
            if let Some(p) = &csv {
                files.write(p, mascar::results::to_csv(&doc.runs).as_bytes())?;
            }
            files.commit()?;
            if doc.shard.is_none() {
                print!("{}", report_table(&doc));
            }
            eprintln!("{wrote}");
            Ok(())
        }
        Command::Merge { dirs, out } => merge(&dirs, &out),
        Command::Rerun { results, quiet } => rerun(&results, quiet),
        Command::Bench {
            kernel,
            scheduler,
            all,
            repeat,
            threads,
            no_cycle_skip,
            machine,
        } => bench(kernel, scheduler, all, repeat, &threads, !no_cycle_skip, &machine),
        Command::Trace {
            action: TraceAction::Export { kernel, out, machine },
        } => trace_export(&kernel, &out, &machine),
        Command::Rtl { action } => rtl(action),
        Command::Dram { trace, json, machine } => dram_trace(&trace, json.as_deref(), &machine),
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
        Command::Config {
            dump,
            reference,
            machine,
        } => {
            if reference {
                print!("{}", mascar::config::reference_markdown());
                return Ok(());
            }
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

/// One kernel of a built-in or kernel file: a built-in whose host code launches several
/// (bfs's levels) gives its representative launch (`Builtin::kernel_at`: bfs's largest
/// frontier), which `trace export` and `bench` take.
fn representative_kernel(
    name: &str,
    scale: mascar::workload::kernel_format::Scale,
) -> Result<mascar::workload::Kernel> {
    match builtin::find(name) {
        Some(b) => Ok(b.kernel_at(scale)),
        None => LoadedWorkload::kernel_at(name, scale)?.first_kernel(),
    }
}

/// `mascar trace export`: the kernel at the configuration's `kernel_scale` and placement,
/// as `mascar run` would run it.
fn trace_export(name: &str, out: &Path, machine: &MachineArgs) -> Result<()> {
    use mascar::workload::trace_export::{export_dir, KERNEL_FILE};
    let cfg = machine.config()?;
    let kernel = representative_kernel(name, cfg.kernel_scale)?;
    let s = export_dir(&kernel, &cfg, out)?;
    let read_only = s.tex_loads + s.const_loads;
    if read_only > 0 {
        eprintln!(
            "warning: {}: {read_only} texture/constant load(s) have no faithful trace form \
             ({} ld.tex written as LDG.E.CI global loads, {} ld.const as LDC without \
             addresses; docs/traces.md)",
            kernel.name, s.tex_loads, s.const_loads
        );
    }
    println!(
        "wrote {} and {KERNEL_FILE} to {}: kernel {}, {} warp instructions ({} and one EXIT \
         per warp, {}), {} thread instructions",
        mascar::workload::trace::kernelslist::KERNELSLIST,
        out.display(),
        kernel.name,
        s.warp_instructions,
        s.kernel_warp_instructions(),
        s.exit_warps,
        s.thread_instructions
    );
    Ok(())
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
    traces: Vec<PathBuf>,
    schedulers: Vec<String>,
    out: &Path,
    resources: bool,
    threads: usize,
    placements: u32,
    shard: Option<(usize, usize)>,
    machine: MachineArgs,
    quiet: bool,
    files: &mut report::OutputSet,
) -> Result<(Results, String)> {
    use mascar::experiment;
    let m = machine.machine()?;
    let base = m.cfg;
    if m.scheduler_set {
        eprintln!(
            "note: the configuration's scheduler ({}) is ignored: compare runs {}",
            base.scheduler,
            if resources {
                "the resource study's machines"
            } else {
                "the schedulers given by --scheduler (default: all)"
            }
        );
    }
    let mut picked = vec![];
    if kernels.is_empty() && traces.is_empty() {
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
    let loaded = load_traces(&traces)?;
    let mut jobs = if resources {
        let variants = experiment::resource_variants(&base);
        let mut jobs = experiment::variant_matrix(&picked, &variants);
        jobs.extend(experiment::workload_matrix(&loaded, &variants)?);
        jobs
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
        let mut jobs = experiment::scheduler_matrix(&picked, &kinds, &base);
        jobs.extend(experiment::workload_matrix(
            &loaded,
            &experiment::scheduler_variants(&kinds, &base),
        )?);
        jobs
    };
    for j in &mut jobs {
        j.config_file = m.config_file.clone();
    }
    // Traces keep their recorded addresses: other placements would only repeat their runs.
    let placements = if picked.is_empty() { 1 } else { placements };
    if placements > 1 {
        if base.placement != 1 {
            eprintln!(
                "note: the configuration's placement ({}) is ignored: --placements runs 1..={placements}",
                base.placement
            );
        }
        // Each placement's runs in turn, each a whole matrix of its own.
        jobs = (1..=placements)
            .flat_map(|p| {
                jobs.iter().map(move |j| {
                    let mut j = j.clone();
                    j.cfg.placement = p;
                    j
                })
            })
            .collect();
    }
    let command = if resources {
        "compare --resources"
    } else {
        "compare"
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
    let all_jobs = jobs.len();
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
    let runs = experiment::run_jobs(&jobs, threads, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let mut doc = Results::new(command, runs);
    let json_name = json_name(resources);
    if let Some((k, n)) = shard {
        doc.shard = Some(mascar::results::Shard {
            index: k,
            count: n,
            jobs: all_jobs,
            base_config_sha256: mascar::results::config_sha256(&base),
        });
        files.write(&out.join(json_name), doc.to_json().as_bytes())?;
        let wrote = format!(
            "slice {k}/{n}: {} runs written to {}; combine the slices with `mascar merge DIR...`",
            doc.runs.len(),
            out.join(json_name).display()
        );
        return Ok((doc, wrote));
    }
    let wrote = write_report(&doc, out, resources, files)?;
    Ok((doc, wrote))
}

/// Loads the traces a command names, printing their notes.
fn load_traces(paths: &[PathBuf]) -> Result<Vec<std::sync::Arc<LoadedWorkload>>> {
    paths
        .iter()
        .map(|p| {
            let w = LoadedWorkload::trace(p)?;
            for note in &w.notes {
                eprintln!("note: {}: {note}", p.display());
            }
            Ok(std::sync::Arc::new(w))
        })
        .collect()
}

/// `mascar kernels --characterise`: every workload once under LRR, in parallel, and the
/// table of warp instructions per L1 data miss beside the paper's.
fn characterise_kernels(
    kernels: &[String],
    traces: &[PathBuf],
    threads: usize,
    json: Option<&Path>,
    machine: &MachineArgs,
    quiet: bool,
) -> Result<()> {
    use mascar::characterise::Characterisation;
    use mascar::experiment;
    use std::sync::Arc;
    let m = machine.machine()?;
    if m.scheduler_set && m.cfg.scheduler != SchedulerKind::Lrr {
        eprintln!(
            "note: the configuration's scheduler ({}) is ignored: the measure is taken under lrr",
            m.cfg.scheduler
        );
    }
    let mut workloads: Vec<Arc<LoadedWorkload>> = vec![];
    if kernels.is_empty() && traces.is_empty() {
        workloads.extend(
            builtin::builtins()
                .iter()
                .map(|b| Arc::new(LoadedWorkload::builtin_at(b, m.cfg.kernel_scale))),
        );
    }
    for k in kernels {
        workloads.push(Arc::new(LoadedWorkload::kernel_at(k, m.cfg.kernel_scale)?));
    }
    workloads.extend(load_traces(traces)?);
    let lrr = experiment::scheduler_variants(&[SchedulerKind::Lrr], &m.cfg);
    let mut jobs = experiment::workload_matrix(&workloads, &lrr)?;
    for j in &mut jobs {
        j.config_file = m.config_file.clone();
    }
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(jobs.len() as u64);
        let style = ProgressStyle::with_template("[{elapsed_precise}] [{bar:30}] {pos}/{len} kernels");
        b.set_style(style.expect("valid template"));
        b
    };
    let runs = experiment::run_jobs(&jobs, threads, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let mut doc = Characterisation::new(&runs);
    // Occupancy at the run's scale and at full scale (the real run's), for built-ins and
    // kernel files (issue 30 §4).
    for (row, w) in doc.kernels.iter_mut().zip(&workloads) {
        if row.kernel != w.info.name || w.info.kind == mascar::results::WorkloadKind::Trace {
            continue;
        }
        row.warps_per_sm = w
            .first_kernel()
            .ok()
            .map(|k| mascar::gpu::first_wave_warps_per_sm(&m.cfg, &k));
        // One kernel at full scale, not the whole workload again (bfs has 20 launches).
        row.warps_per_sm_full =
            representative_kernel(&w.info.name, mascar::workload::kernel_format::Scale::Full)
                .ok()
                .map(|k| mascar::gpu::first_wave_warps_per_sm(&m.cfg, &k));
    }
    if let Some(path) = json {
        let mut files = report::OutputSet::new();
        files.write(path, doc.to_json().as_bytes())?;
        files.commit()?;
    }
    print!("{}", doc.to_markdown());
    Ok(())
}

fn json_name(resources: bool) -> &'static str {
    if resources {
        "resources.json"
    } else {
        "results.json"
    }
}

/// `mascar merge`: the slices of one `compare --shard K/N` matrix, one report, identical to
/// the report of the unsharded run. Slices that do not belong together are refused.
fn merge(dirs: &[PathBuf], out: &Path) -> Result<()> {
    let mut slices: Vec<(PathBuf, Results)> = vec![];
    for d in dirs {
        let path = [json_name(false), json_name(true)]
            .iter()
            .map(|n| d.join(n))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: no results.json or resources.json (a `compare --shard` output)",
                    d.display()
                )
            })?;
        let doc = Results::read(&path)?;
        slices.push((path, doc));
    }
    let merged = mascar::results::merge_shards(&slices)?;
    let mut files = report::OutputSet::new();
    let wrote = write_report(&merged, out, merged.command == "compare --resources", &mut files)?;
    files.commit()?;
    print!("{}", report_table(&merged));
    eprintln!("{wrote}");
    Ok(())
}

/// The comparison table of `doc`, as printed.
fn report_table(doc: &Results) -> String {
    let records: Vec<_> = doc.runs.iter().map(|r| r.record()).collect();
    mascar::report::compare::to_stdout_table(&mascar::report::compare::speedup_table(&records, "lrr"))
}

/// Stages the comparison report of `doc` into `out` in `files`: the caller's commit puts
/// every file in place at once, so a failure (a full disk, an unwritable target) leaves the
/// previous report as it was.
fn write_report(doc: &Results, out: &Path, resources: bool, files: &mut report::OutputSet) -> Result<String> {
    use mascar::report::{compare as cmp, plots};
    let records: Vec<_> = doc.runs.iter().map(|r| r.record()).collect();
    let json_name = json_name(resources);
    let runs_name = if resources {
        "resources-runs.csv"
    } else {
        "runs.csv"
    };
    let stem = if resources { "resources" } else { "speedup" };
    let table = cmp::speedup_table(&records, "lrr");
    let mut markdown = cmp::to_markdown(&table);
    markdown.push_str(&format!(
        "\nMade by mascar {} (commit {}); every run's configuration, inputs and statistics are in {json_name}.\n",
        doc.mascar.version, doc.mascar.commit
    ));
    files.write(&out.join(format!("{stem}.md")), markdown.as_bytes())?;
    files.write(&out.join(format!("{stem}.csv")), cmp::to_csv(&table).as_bytes())?;
    files.write(
        &out.join(format!("{stem}.svg")),
        plots::speedup_svg(&table)?.as_bytes(),
    )?;
    files.write(&out.join(format!("{stem}.png")), &plots::speedup_png(&table)?)?;
    if !resources {
        // One bar per kernel: the first placement's runs.
        let first = records.iter().map(|r| r.placement).min().unwrap_or(1);
        let stalls: Vec<_> = records.iter().filter(|r| r.placement == first).cloned().collect();
        files.write(&out.join("stalls.svg"), plots::stalls_svg(&stalls)?.as_bytes())?;
    }
    files.write(&out.join(json_name), doc.to_json().as_bytes())?;
    files.write(
        &out.join(runs_name),
        mascar::results::to_csv(&doc.runs).as_bytes(),
    )?;
    Ok(format!(
        "wrote {stem}.md, .csv, .svg, .png, {}{json_name} and {runs_name} to {}",
        if resources { "" } else { "stalls.svg, " },
        out.display()
    ))
}

/// What `mascar run` records besides statistics (one scheduler, one kernel).
struct Hooks {
    /// Threads stepping the SMs (0: every core).
    threads: usize,
    /// Jump over cycles in which nothing can change (`Gpu::set_cycle_skip`).
    cycle_skip: bool,
    waves: Option<WaveOptions>,
    record: Option<(PathBuf, usize, u64)>,
    events: Option<(PathBuf, Option<(u64, u64)>)>,
}

/// `--threads`: 0 means every core.
fn thread_count(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Runs a workload's kernels back to back on one GPU built from `cfg`, with a progress bar
/// (one line of `bars`, shared by runs side by side) on a terminal once it has taken a second.
fn run_workload(
    cfg: &Config,
    w: &LoadedWorkload,
    quiet: bool,
    hooks: &Hooks,
    bars: &MultiProgress,
) -> Result<Vec<(RunStats, Duration)>> {
    let show = !quiet && std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let names = w.kernel_names();
    let many = names.len() > 1;
    let mut progress = |kernel: usize, cycle: u64, done: u64, total: u64| {
        if !show {
            return;
        }
        if bar.is_none() && start.elapsed() > Duration::from_secs(1) {
            let b = bars.add(ProgressBar::new(total));
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} CTAs, cycle {prefix}")
                    .expect("valid template"),
            );
            bar = Some(b);
        }
        if let Some(b) = &bar {
            let label = if many {
                format!(
                    "kernel {}/{} {} / {}",
                    kernel + 1,
                    names.len(),
                    names[kernel],
                    cfg.scheduler
                )
            } else {
                format!("{} / {}", names[kernel], cfg.scheduler)
            };
            b.set_message(label);
            b.set_length(total);
            b.set_position(done);
            b.set_prefix(cycle.to_string());
        }
    };
    let mut gpu = mascar::engine::gpu(cfg)?;
    gpu.set_threads(thread_count(hooks.threads));
    gpu.set_cycle_skip(hooks.cycle_skip);
    if let Some(w) = &hooks.waves {
        gpu.record_waves(w)?;
    }
    if let Some((dir, sm, cycles)) = &hooks.record {
        gpu.record_ports(dir, *sm, *cycles)?;
    }
    if let Some((path, window)) = &hooks.events {
        gpu.record_events(path, *window)?;
    }
    let result = w.run_on(&mut gpu, &mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(w) = &hooks.waves {
        // The waveform's writer writes the .gtkw beside it (gpu::waves::Waves::finish).
        let gtkw = w.path.with_extension("gtkw");
        eprintln!("wrote {} and {}", w.path.display(), gtkw.display());
    }
    result
}

/// The run's tables: one per kernel (schedulers side by side), and the total of a
/// multi-kernel workload.
fn print_run_summary(w: &LoadedWorkload, results: &[mascar::results::RunResult], walls: &[Vec<Duration>]) {
    let counts = w.trace_counts();
    for (i, count) in counts.iter().enumerate() {
        let runs: Vec<(RunStats, Duration)> = results
            .iter()
            .zip(walls)
            .map(|(r, wall)| (r.kernels[i].clone(), wall[i]))
            .collect();
        if counts.len() > 1 {
            println!("== kernel {} of {}", i + 1, counts.len());
        }
        print!("{}", report::summary_table(&runs));
        if let Some((warp, thread)) = count {
            println!("trace: {warp} warp instructions, {thread} thread instructions (active lanes)");
        }
    }
    if counts.len() > 1 {
        println!("== total of {} kernels, back to back", counts.len());
        let runs: Vec<(RunStats, Duration)> = results
            .iter()
            .zip(walls)
            .map(|(r, wall)| (r.total.clone(), wall.iter().sum()))
            .collect();
        print!("{}", report::summary_table(&runs));
    }
    if w.info.kind == mascar::results::WorkloadKind::Trace {
        let path = Path::new(&w.info.name);
        let dir = if path.is_dir() {
            path
        } else {
            path.parent().unwrap_or(Path::new("."))
        };
        let peer = mascar::workload::trace_kernel::peer_statistics(dir);
        if !peer.is_empty() {
            println!("reported for this trace by the tools that made it (another machine):");
            for (src, stat, value) in peer {
                println!("  {src}: {stat} = {value}");
            }
        }
    }
}

/// `mascar rerun`: every run of a results document again, every number compared.
fn rerun(path: &Path, quiet: bool) -> Result<()> {
    use rayon::prelude::*;
    let doc = Results::read(path)?;
    let build = mascar::results::Build::current();
    if doc.mascar != build {
        eprintln!(
            "note: recorded by mascar {} (commit {}), rerun by {} (commit {})",
            doc.mascar.version, doc.mascar.commit, build.version, build.commit
        );
    }
    // Inputs first, so a changed file is refused before anything runs.
    for r in &doc.runs {
        mascar::runner::check_inputs(&r.workload.inputs)?;
        if let Some(f) = &r.config_file {
            mascar::runner::check_inputs(std::slice::from_ref(f))?;
        }
    }
    let outcomes: Vec<Result<Vec<String>>> = doc
        .runs
        .par_iter()
        .map(|r| {
            let w = mascar::runner::reload(&r.workload, r.config.kernel_scale)?;
            let now = w.run(&r.config, &r.label, r.config_file.clone())?;
            let mut diffs = vec![];
            for (name, a, b) in [
                (
                    "kernels",
                    serde_json::to_value(&r.kernels)?,
                    serde_json::to_value(&now.kernels)?,
                ),
                (
                    "total",
                    serde_json::to_value(&r.total)?,
                    serde_json::to_value(&now.total)?,
                ),
                (
                    "energy",
                    serde_json::to_value(&r.energy)?,
                    serde_json::to_value(&now.energy)?,
                ),
            ] {
                mascar::results::diff_values(name, &a, &b, &mut diffs);
            }
            Ok(diffs)
        })
        .collect();
    let mut differing = 0;
    for (r, outcome) in doc.runs.iter().zip(outcomes) {
        let diffs = outcome.with_context(|| format!("{} under {}", r.workload.name, r.label))?;
        if diffs.is_empty() {
            if !quiet {
                println!("same    {} under {}", r.workload.name, r.label);
            }
        } else {
            differing += 1;
            println!("DIFFERS {} under {}:", r.workload.name, r.label);
            for d in diffs.iter().take(20) {
                println!("  {d}");
            }
            if diffs.len() > 20 {
                println!("  … and {} more", diffs.len() - 20);
            }
        }
    }
    if differing > 0 {
        bail!(
            "{differing} of {} runs of {} differ from the record",
            doc.runs.len(),
            path.display()
        );
    }
    println!(
        "all {} runs of {} match the record, every number",
        doc.runs.len(),
        path.display()
    );
    Ok(())
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
        RtlAction::Area { no_xilinx } => {
            let blocks = mascar::rtl::area::measure(!no_xilinx).map_err(anyhow::Error::msg)?;
            println!(
                "{:<22} {:>5} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8}",
                "block", "warps", "cells", "flops", "storage", "levels", "luts", "xc-flops"
            );
            let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
            for b in &blocks {
                println!(
                    "{:<22} {:>5} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8}",
                    b.module,
                    b.warps,
                    b.cells,
                    b.flops,
                    b.storage_bits,
                    b.levels,
                    opt(b.luts),
                    opt(b.xilinx_flops)
                );
            }
            Ok(())
        }
        RtlAction::Prove {
            rtl,
            size,
            only,
            keep,
            timeout,
        } => mascar::rtl::prove::cli(rtl, size.as_deref(), &only, keep, timeout).map_err(anyhow::Error::msg),
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

/// `mascar dram --trace FILE`: the trace through the configured DRAM channels alone.
fn dram_trace(trace: &Path, json: Option<&Path>, machine: &MachineArgs) -> Result<()> {
    let cfg = machine.config()?;
    let name = trace.display().to_string();
    let text = mascar::input::read_text_capped(trace, 1 << 30, "trace")?;
    let requests = mascar::dram_replay::parse_trace(&text, &name)?;
    let report = mascar::dram_replay::replay(&requests, &cfg).map_err(anyhow::Error::msg)?;
    print!("{report}");
    if let Some(path) = json {
        let mut files = report::OutputSet::new();
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        files.write(path, text.as_bytes())?;
        files.commit()?;
    }
    Ok(())
}

/// The speed targets of `mascar bench` (issue 15 §8), per kernel × scheduler.
const BENCH_SM_CYCLES_TARGET: f64 = 5e6;
const BENCH_COMPUTE_INSTS_TARGET: f64 = 1.5e6;

/// The SM-cycles/s target of an engine's `mascar bench` (the reference's above; the Verilog
/// in the loop: issue 17 §5, ≥ 200 k, goal 500 k); `None`: measured, no target.
fn bench_sm_cycles_target(engine: mascar::config::Engine) -> Option<f64> {
    use mascar::config::Engine as E;
    match engine {
        E::Ref => Some(BENCH_SM_CYCLES_TARGET),
        E::Verilator => Some(2e5),
        E::Rtl | E::Lockstep | E::LockstepVerilator => None,
    }
}

/// `mascar bench`: median wall time of `repeat` runs per kernel × scheduler, one core
/// (runs are sequential and each is single-threaded), and the slowest pair against the
/// targets.
fn bench(
    kernels: Vec<String>,
    schedulers: Vec<String>,
    all: bool,
    repeat: u32,
    threads: &[usize],
    cycle_skip: bool,
    machine: &MachineArgs,
) -> Result<()> {
    let base = machine.config()?;
    let threads: Vec<usize> = threads.iter().map(|&t| thread_count(t)).collect();
    let scaling = threads.len() > 1;
    if cfg!(debug_assertions) {
        eprintln!("warning: debug build; measure with `cargo run --release -- bench`");
    }
    let kernels: Vec<String> = if all {
        mascar::workload::builtin::builtins()
            .iter()
            .map(|b| b.name.to_string())
            .collect()
    } else {
        kernels
    };
    let schedulers: Vec<SchedulerKind> = if all {
        SchedulerKind::ALL.to_vec()
    } else if schedulers.is_empty() {
        vec![base.scheduler]
    } else {
        schedulers
            .iter()
            .map(|n| n.parse().map_err(anyhow::Error::msg))
            .collect::<Result<_>>()?
    };
    if base.engine != mascar::config::Engine::Ref {
        use clap::ValueEnum;
        let engine = base.engine.to_possible_value();
        println!("engine: {}", engine.as_ref().map_or("?", |v| v.get_name()));
    }
    print!(
        "{:<12} {:<7} {:>10} {:>12} {:>9} {:>14} {:>14} {:>8}",
        "kernel", "sched", "cycles", "warp-insts", "wall s", "SM-cycles/s", "warp-insts/s", "quiet"
    );
    if scaling {
        print!(" {:>7} {:>7}", "threads", "speedup");
    }
    println!();
    // (SM-cycles/s, kernel, scheduler) of the slowest pair, and of the slowest compute one.
    let mut slowest: Option<(f64, String, SchedulerKind)> = None;
    let mut slowest_compute: Option<(f64, String, SchedulerKind)> = None;
    for name in &kernels {
        let k = representative_kernel(name, base.kernel_scale)?;
        let compute =
            mascar::workload::builtin::find(&k.name).is_some_and(|b| !b.class.is_memory_intensive());
        for &sched in &schedulers {
            let mut cfg = base.clone();
            cfg.scheduler = sched;
            if let Err(e) = mascar::engine::validate(&cfg) {
                println!("{:<12} {:<7} skipped: {e}", k.name, sched.name());
                continue;
            }
            // (SM-cycles/s, warp instructions/s) at the first thread count: the verdicts'.
            let mut first: Option<(f64, f64)> = None;
            for &t in &threads {
                let mut walls = Vec::with_capacity(repeat as usize);
                let mut stats = None;
                let mut skipped = 0;
                for _ in 0..repeat {
                    let start = Instant::now();
                    let mut gpu = mascar::engine::gpu(&cfg)?;
                    gpu.set_threads(t);
                    gpu.set_cycle_skip(cycle_skip);
                    let s = gpu.run(&k, None)?;
                    walls.push(start.elapsed().as_secs_f64());
                    stats = Some(s);
                    skipped = gpu.sm_cycles_skipped();
                }
                let s = stats.expect("repeat ≥ 1");
                walls.sort_by(f64::total_cmp);
                let wall = walls[walls.len() / 2].max(1e-9);
                let sm_rate = s.cycles as f64 * cfg.sms as f64 / wall;
                let inst_rate = s.warp_instructions as f64 / wall;
                print!(
                    "{:<12} {:<7} {:>10} {:>12} {:>9.3} {:>14.0} {:>14.0} {:>7.1}%",
                    k.name,
                    sched.name(),
                    s.cycles,
                    s.warp_instructions,
                    wall,
                    sm_rate,
                    inst_rate,
                    100.0 * skipped as f64 / (s.cycles * cfg.sms as u64).max(1) as f64
                );
                let base_rate = first.get_or_insert((sm_rate, inst_rate)).0;
                if scaling {
                    print!(" {:>7} {:>7.2}", t, sm_rate / base_rate);
                }
                println!();
            }
            let (sm_rate, inst_rate) = first.expect("at least one thread count");
            if slowest.as_ref().is_none_or(|w| sm_rate < w.0) {
                slowest = Some((sm_rate, k.name.clone(), sched));
            }
            if compute && slowest_compute.as_ref().is_none_or(|w| inst_rate < w.0) {
                slowest_compute = Some((inst_rate, k.name.clone(), sched));
            }
        }
    }
    let verdict = |rate: f64, target: f64| {
        if rate >= target {
            "met".to_string()
        } else {
            format!("not met, {:.0} % of it", 100.0 * rate / target)
        }
    };
    let target = bench_sm_cycles_target(base.engine);
    if let Some((rate, k, sched)) = slowest {
        match target {
            Some(target) => println!(
                "slowest: {k} × {} at {:.2} M SM-cycles/s (target ≥ {:.1} M: {})",
                sched.name(),
                rate / 1e6,
                target / 1e6,
                verdict(rate, target)
            ),
            None => println!(
                "slowest: {k} × {} at {:.3} M SM-cycles/s",
                sched.name(),
                rate / 1e6
            ),
        }
    }
    // The instruction-rate target is the reference engine's.
    if let Some((rate, k, sched)) = slowest_compute.filter(|_| base.engine == mascar::config::Engine::Ref) {
        println!(
            "slowest compute kernel: {k} × {} at {:.2} M warp-insts/s (target ≥ {:.1} M: {})",
            sched.name(),
            rate / 1e6,
            BENCH_COMPUTE_INSTS_TARGET / 1e6,
            verdict(rate, BENCH_COMPUTE_INSTS_TARGET)
        );
    }
    Ok(())
}
