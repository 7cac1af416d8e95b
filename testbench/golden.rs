//! Golden snapshots (insta, kept in `golden/`): a readable table of the statistics of every
//! built-in kernel under LRR, GTO and Mascar on a small machine. Any change to the model's
//! timing shows up here as a diff to review; accept intended changes with
//! `cargo insta review` (or `INSTA_UPDATE=always cargo test --release --test golden`).

use std::fmt::Write as _;

use mascar::config::Config;
use mascar::gpu::simulate;
use mascar::sched::SchedulerKind;
use mascar::workload::builtin::builtins;

#[test]
fn builtin_statistics_on_two_sms() {
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<11} {:<7} {:>8} {:>8} {:>6} {:>8} {:>8} {:>8} {:>7} {:>7}",
        "kernel", "sched", "cycles", "insts", "l1hit", "l1miss", "resfail", "dram_rd", "mp", "reexec"
    );
    for b in builtins() {
        // The first 8 CTAs: every kernel's pattern, in a CI-sized run.
        let mut k = b.kernel();
        k.grid = k.grid.min(8);
        for s in [SchedulerKind::Lrr, SchedulerKind::Gto, SchedulerKind::Mascar] {
            let cfg = Config {
                sms: 2,
                scheduler: s,
                ..Config::default()
            };
            let r = simulate(&cfg, &k, None).unwrap();
            let _ = writeln!(
                table,
                "{:<11} {:<7} {:>8} {:>8} {:>6.3} {:>8} {:>8} {:>8} {:>7} {:>7}",
                b.name,
                s.name(),
                r.cycles,
                r.warp_instructions,
                r.l1_hit_rate,
                r.l1.misses,
                r.l1_reservation_fails,
                r.dram.reads,
                r.mas.mp_cycles,
                r.car.reexecutions
            );
        }
    }
    insta::with_settings!({ snapshot_path => "../golden", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("builtin_statistics_2sm", table);
    });
}
