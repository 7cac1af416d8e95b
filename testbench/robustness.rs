//! Hostile machines and inputs: the smallest legal machines finish every kernel under every
//! scheduler; the parsers (kernel format, TOML config, `--set`) survive thousands of mutated
//! inputs with an error, never a panic; parallel experiments give the same results whatever
//! the thread count. `PROPTEST_CASES=N` runs more mutated inputs.

use mascar::config::Config;
use mascar::engine::simulate;
use mascar::experiment::{run_jobs, scheduler_matrix};
use mascar::sched::SchedulerKind;
use mascar::workload::builtin::{self, builtins};
use mascar::workload::kernel_format::parse_kernel;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// One warp per CTA with every kind of instruction, so a one-warp SM can run it.
const ONE_WARP: &str = "kernel tiny\ngrid 6\nblock 32\nregs 16\nshared 1024\nbuffer A 1M\nbuffer B 1M\n\
loop i 3 {\n  ld.global r1, A[4*gtid + 4096*i]\n  ld.global r2, B[4*rand(i, 65536)]\n  add r3, r1, r2\n  \
sfu r4, r3\n  st.shared [4*tid], r4\n  bar\n  ld.shared r5, [4*tid]\n  st.global A[4*gtid], r5\n}\n";

#[test]
fn the_smallest_legal_machines_finish_under_every_scheduler() {
    let k = parse_kernel(ONE_WARP, "<one-warp>").unwrap();
    let extremes: [(&str, Config); 5] = [
        (
            "1 MSHR",
            Config {
                l1_mshrs: 1,
                ..Config::default()
            },
        ),
        (
            "miss queue 2 (the minimum)",
            Config {
                l1_miss_queue: 2,
                ..Config::default()
            },
        ),
        (
            "re-execution queue 1",
            Config {
                car_queue_depth: 1,
                ..Config::default()
            },
        ),
        (
            "1 warp per SM (and so 1 scheduler)",
            Config {
                warps_per_sm: 1,
                schedulers_per_sm: 1,
                ..Config::default()
            },
        ),
        (
            "all of them on 1 SM",
            Config {
                sms: 1,
                warps_per_sm: 1,
                schedulers_per_sm: 1,
                l1_mshrs: 1,
                l1_miss_queue: 2,
                car_queue_depth: 1,
                l1_mshr_merge: 1,
                l2_mshrs: 1,
                dram_queue: 1,
                ..Config::default()
            },
        ),
    ];
    for (what, base) in extremes {
        for &s in SchedulerKind::ALL {
            let cfg = Config {
                scheduler: s,
                ..base.clone()
            };
            let r = simulate(&cfg, &k, None).unwrap_or_else(|e| panic!("{what}, {s}: {e}"));
            assert_eq!(r.warp_instructions, k.total_warp_instructions(), "{what}, {s}");
            assert_eq!(r.sm.requests_sent, r.sm.replies_received, "{what}, {s}");
            assert_eq!(r.sm.ctas_completed, k.grid as u64, "{what}, {s}");
        }
    }
}

#[test]
fn parallel_experiments_do_not_depend_on_the_thread_count() {
    let kernels: Vec<_> = ["bp-2", "kmeans-1", "sgemm"]
        .iter()
        .map(|n| builtin::find(n).unwrap())
        .collect();
    let base = Config {
        sms: 2,
        ..Config::default()
    };
    let mut jobs = scheduler_matrix(&kernels, SchedulerKind::ALL, &base);
    for j in &mut jobs {
        j.kernel.grid = j.kernel.grid.min(6);
    }
    let one = run_jobs(&jobs, 1, &|| {}).unwrap();
    let two = run_jobs(&jobs, 2, &|| {}).unwrap();
    let json = |r| serde_json::to_string(&r).unwrap();
    assert_eq!(json(&one), json(&two));
}

/// A kernel file with one random edit: a character deleted, replaced, or inserted, a line
/// dropped or duplicated.
fn mutated_kernel() -> impl Strategy<Value = String> {
    let sources: Vec<&'static str> = builtins().iter().map(|b| b.source).collect();
    (
        prop::sample::select(sources),
        0usize..4,
        any::<prop::sample::Index>(),
        prop::sample::select(vec![
            "",
            "{",
            "}",
            "[",
            "]",
            "%",
            "(",
            "r",
            "999999999999999999999",
            "-",
            ",",
            "\n",
            "ld.global",
            "loop",
            "A[",
            "*",
            "0x",
            "é",
            "\t",
            "bar",
            "st.shared",
            " i ",
            "break",
            "break if ",
        ]),
        1usize..4,
    )
        .prop_map(|(src, kind, at, text, times)| {
            let mut s = src.to_string();
            for n in 0..times {
                let mut pos = at.index(s.len().max(1) + n) % (s.len() + 1);
                while !s.is_char_boundary(pos) {
                    pos -= 1;
                }
                match kind {
                    0 => {
                        // Delete the character at `pos`.
                        if let Some(c) = s[pos..].chars().next() {
                            s.replace_range(pos..pos + c.len_utf8(), "");
                        }
                    }
                    1 => s.insert_str(pos, text),
                    2 => {
                        // Replace the rest of the line at `pos`.
                        let end = s[pos..].find('\n').map_or(s.len(), |e| pos + e);
                        s.replace_range(pos..end, text);
                    }
                    _ => {
                        // Drop or duplicate a whole line.
                        let lines: Vec<&str> = s.lines().collect();
                        if lines.is_empty() {
                            continue;
                        }
                        let i = pos % lines.len();
                        let mut v: Vec<&str> = lines.clone();
                        if n % 2 == 0 {
                            v.remove(i);
                        } else {
                            v.insert(i, lines[i]);
                        }
                        s = v.join("\n");
                    }
                }
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn the_kernel_parser_survives_mutated_kernels(src in mutated_kernel()) {
        match parse_kernel(&src, "<mutated>") {
            Ok(k) => {
                // What parses must also be checked before it runs, without a panic.
                let _ = k.validate();
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("<mutated>:"), "no file:line:column in `{}`", msg);
            }
        }
    }

    #[test]
    fn the_config_parsers_survive_mutated_input(
        key in prop::sample::select(vec![
            "sms", "warps_per_sm", "l1_mshrs", "l1_miss_queue", "scheduler", "engine",
            "car_queue_depth", "dram_cycles_per_line", "l1_ways", "mas_base_order", "nonsense",
        ]),
        value in prop::sample::select(vec![
            "0", "1", "-1", "4096", "99999999999999999999", "1.5", "nan", "inf", "\"gto\"", "gto",
            "rtl", "true", "[]", "{", "", "\"", "0x10", "1e9",
        ]),
        junk in "[ -~]{0,12}",
    ) {
        let mut c = Config::default();
        let _ = c.set(&format!("{key}={value}"));
        let _ = c.set(&junk);
        for text in [format!("{key} = {value}\n"), format!("{key} = {value}\n{junk}\n")] {
            if let Ok(cfg) = Config::from_toml(&text) {
                // Whatever parses is valid (validation runs inside from_toml) or refused.
                let _ = cfg.validate();
            }
        }
    }
}
