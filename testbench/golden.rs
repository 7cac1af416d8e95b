//! Golden snapshots (insta, kept in `golden/`), readable in review:
//! - the statistics of every built-in kernel under every scheduler on a small machine;
//! - a per-cycle table of the Mascar blocks' ports over a short window, and the SHA-256 of
//!   the VCD of the same window;
//! - the generated Verilog of each block at small parameters;
//! - the CLI's `--help` and its error messages for bad input.
//!
//! Any change to the model's timing, the blocks or the CLI shows up as a diff to review;
//! accept intended changes with `cargo insta review` (or
//! `INSTA_UPDATE=always cargo test --release --test testbench golden::` and read `git diff golden/`).

use std::fmt::Write as _;

use mascar::config::Config;
use mascar::engine::reference_blocks;
use mascar::gpu::waves::WaveOptions;
use mascar::gpu::SimError;
use mascar::mascar::blocks::{IssueIn, IssueView, MascarBlocks, RefBlocks};
use mascar::mascar::{QueueIn, QueueOut};
use mascar::sched::SchedulerKind;
use mascar::workload::builtin;
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};

use crate::builtin_runs::{builtin_runs, stats_of};

#[test]
fn builtin_statistics_on_two_sms() {
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<11} {:<7} {:>8} {:>8} {:>6} {:>8} {:>8} {:>8} {:>7} {:>7}",
        "kernel", "sched", "cycles", "insts", "l1hit", "l1miss", "resfail", "dram_rd", "mp", "reexec"
    );
    // One row per kernel × scheduler (the first 8 CTAs: every kernel's pattern in a
    // CI-sized run), from the runs the skip and invariant tests also read.
    let rows: Vec<String> = builtin_runs()
        .iter()
        .map(|run| {
            let r = stats_of(run);
            format!(
                "{:<11} {:<7} {:>8} {:>8} {:>6.3} {:>8} {:>8} {:>8} {:>7} {:>7}\n",
                run.name,
                run.scheduler.name(),
                r.cycles,
                r.warp_instructions,
                r.l1_hit_rate,
                r.l1.misses,
                r.l1_reservation_fails,
                r.dram.reads,
                r.mas.mp_cycles,
                r.car.reexecutions
            )
        })
        .collect();
    table.extend(rows);
    insta::with_settings!({ snapshot_path => "../golden", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("builtin_statistics_2sm", table);
    });
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({ snapshot_path => "../golden", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, text);
    });
}

/// The behavioural blocks, with every cycle's ports written down.
struct Tabulated {
    inner: RefBlocks,
    rows: Arc<Mutex<Vec<String>>>,
    window: std::ops::Range<u64>,
    queue: Option<(QueueIn, QueueOut)>,
}

fn opt(v: Option<u8>) -> String {
    v.map_or("-".to_string(), |x| x.to_string())
}

impl MascarBlocks for Tabulated {
    fn registers(&self) -> (bool, Option<u8>) {
        self.inner.registers()
    }
    fn queue_eval(&mut self, i: &QueueIn) -> QueueOut {
        self.inner.queue_eval(i)
    }
    fn queue_clock(&mut self, cycle: u64, i: &QueueIn) {
        self.queue = Some((*i, self.inner.queue_eval(i)));
        self.inner.queue_clock(cycle, i)
    }
    fn queue_state(&self) -> (u64, bool, usize) {
        self.inner.queue_state()
    }
    fn issue_eval(&mut self, i: &IssueIn) -> IssueView {
        self.inner.issue_eval(i)
    }
    fn issue_clock(&mut self, cycle: u64, i: &IssueIn) {
        if self.window.contains(&cycle) {
            let v = self.inner.issue_eval(i);
            let (qi, qo) = self.queue.take().unwrap_or_default();
            self.rows.lock().unwrap().push(format!(
                "{cycle:>5} | {:>12x} {:>12x} {:>12x} {:>12x} | {:>3} {:>12x} | {:>12x} {:>12x} | {:>3} {:>3} {:>2} {:>5} | {:>2} {:>5} {:>5} {:>3} {:>8x} {:>4}",
                i.warps.has_inst & i.warps.active,
                i.warps.is_mem & i.warps.has_inst,
                i.warps.sb_ready & i.warps.has_inst,
                i.warps.dep_load & i.warps.has_inst,
                v.wrc.release_owner as u8,
                v.wrc.owner_candidates,
                v.wst.mem,
                v.wst.stall,
                opt(v.sched.issue[0]),
                opt(v.sched.issue[1]),
                if v.sched.mp { "MP" } else { "EP" },
                opt(v.sched.owner),
                qo.occupancy,
                opt(qi.push),
                opt(qo.select),
                opt(qi.free),
                qo.hit_only,
                if qo.full { "full" } else { "-" },
            ));
        }
        self.inner.issue_clock(cycle, i)
    }
}

#[test]
fn mascar_block_ports_cycle_by_cycle_and_the_vcd_digest() {
    // kmeans-1 at this window: warp 7 owns the memory path in MP and its parked entry
    // retries after MSHR frees; at 15026 the owner hands over with the L1 no longer
    // saturated (back to EP), at 15027 saturation puts warp 9 in charge; warps 42 and 9 park
    // refused misses and warp 9's entry retries when MSHRs free (the queue's retry bits).
    let (from, to) = (15020, 15070);
    let k = builtin::find("kmeans-1").unwrap().kernel();
    let cfg = Config {
        sms: 1,
        scheduler: SchedulerKind::Mascar,
        max_cycles: to,
        ..Config::default()
    };
    let rows = Arc::new(Mutex::new(vec![]));
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    gpu.sms[0].blocks = Box::new(Tabulated {
        inner: reference_blocks(&cfg, 0),
        rows: rows.clone(),
        window: from..to,
        queue: None,
    });
    let vcd = std::env::temp_dir().join(format!("mascar-golden-{}.vcd", std::process::id()));
    gpu.record_waves(&WaveOptions {
        path: vcd.clone(),
        window: Some((from, to)),
        sms: None,
    })
    .unwrap();
    assert!(matches!(gpu.run(&k, None), Err(SimError::MaxCycles(_))));
    let mut table = format!(
        "kmeans-1 under mascar, SM 0, cycles {from}..{to} (bit w of a mask = warp w)\n\
         WRC in: has_inst, is_mem, sb_ready, dep_load | WRC out: release, owner candidates | \
         WST: mem, stall | scheduler: issue0, issue1, mode, owner | queue: occupancy, push, \
         select, free, hit-only entries, full\n",
    );
    for r in rows.lock().unwrap().iter() {
        table.push_str(r);
        table.push('\n');
    }
    let bytes = std::fs::read(&vcd).unwrap();
    std::fs::remove_file(&vcd).unwrap();
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    table.push_str(&format!(
        "VCD of the same window: {} bytes, SHA-256 {digest}\n",
        bytes.len()
    ));
    snapshot("mascar_ports_kmeans1", &table);
}

#[test]
fn generated_verilog_at_small_parameters() {
    for f in mascar::rtl::emit::blocks_at::<2, 2>() {
        snapshot(&format!("verilog_{}_h2_d2", f.module), &f.text);
    }
}

fn cli(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mascar"))
        .args(args)
        .output()
        .unwrap();
    format!(
        "$ mascar {}\nexit: {}\n{}{}",
        args.join(" "),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn cli_help_and_error_messages() {
    let mut help = String::new();
    for cmd in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["compare", "--help"],
        vec!["bench", "--help"],
        vec!["rtl", "--help"],
        vec!["config", "--help"],
        vec!["trace", "export", "--help"],
    ] {
        help.push_str(&cli(&cmd));
        help.push('\n');
    }
    snapshot("cli_help", &help);

    let dir = std::env::temp_dir().join(format!("mascar-golden-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_kernel = dir.join("bad.kern");
    std::fs::write(
        &bad_kernel,
        "kernel k\ngrid 4\nblock 64\nbuffer A 1M\nld.global r1, A[4*gtid\n",
    )
    .unwrap();
    let bad_toml = dir.join("bad.toml");
    std::fs::write(&bad_toml, "l1_mshrs = 0\n").unwrap();
    let kernel = bad_kernel.to_str().unwrap();
    let toml = bad_toml.to_str().unwrap();
    let mut errors = String::new();
    for cmd in [
        vec!["run", "-k", "no-such-kernel"],
        vec!["run", "-k", "bfs", "-s", "fifo"],
        vec!["run", "-k", kernel],
        vec!["run", "-k", "bfs", "--set", "l1_mshrz=4"],
        vec!["run", "-k", "bfs", "--set", "l1_miss_queue=1"],
        vec!["run", "-k", "bfs", "--config", toml],
        vec!["run", "-k", "bfs", "--engine", "rtl", "-s", "owl"],
        vec!["run", "-k", "bfs", "--vcd", "x.vcd", "--vcd-window", "9..3"],
        vec!["run", "-k", "bfs", "--vcd", "x.vcd", "-s", "lrr,gto"],
        vec!["run", "-k", "srad-1", "--record", "rec"],
        vec!["run", "-k", "bfs", "--vcd", "x.vcd"],
    ] {
        // Paths of the temporary files vary from run to run.
        errors.push_str(&cli(&cmd).replace(dir.to_str().unwrap(), "$TMP"));
        errors.push('\n');
    }
    let _ = std::fs::remove_dir_all(&dir);
    snapshot("cli_errors", &errors);
}
