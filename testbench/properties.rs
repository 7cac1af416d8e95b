//! Property tests (proptest): random kernels on random machines under every scheduler. Every
//! warp finishes with the kernel's instruction count, every request below L1 is answered
//! exactly once, the cache counters add up, and CAR's queue stays within its depth.
//! `PROPTEST_CASES=N` runs more cases than the CI default.

use mascar::config::Config;
use mascar::gpu::simulate;
use mascar::sched::SchedulerKind;
use mascar::workload::kernel_format::parse_kernel;
use proptest::prelude::*;

fn instruction() -> impl Strategy<Value = String> {
    let reg = 0u8..12;
    prop_oneof![
        (reg.clone(), reg.clone(), reg.clone()).prop_map(|(a, b, c)| format!("add r{a}, r{b}, r{c}")),
        (reg.clone(), reg.clone()).prop_map(|(a, b)| format!("sfu r{a}, r{b}")),
        (reg.clone(), reg.clone()).prop_map(|(a, b)| format!("imul r{a}, r{b}")),
        (reg.clone(), address()).prop_map(|(a, e)| format!("ld.global r{a}, A[{e}]")),
        (reg.clone(), address()).prop_map(|(a, e)| format!("st.global A[{e}], r{a}")),
        reg.clone().prop_map(|a| format!("ld.shared r{a}, [4*tid]")),
        reg.prop_map(|a| format!("st.shared [4*tid], r{a}")),
        Just("bar".to_string()),
    ]
}

/// Unit stride, line stride, per-warp reuse windows and irregular gathers.
fn address() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("4*gtid".to_string()),
        Just("128*tid".to_string()),
        (1u32..64).prop_map(|w| format!("(4*lane + 128*gwarp + 4096*i) % ({w} * 4096)")),
        (0u32..100).prop_map(|s| format!("4*rand({s}, 1048576)")),
        Just("8*gtid + 4*i".to_string()),
        // Every warp on one line: exercises MSHR merging and its limit.
        Just("4*lane".to_string()),
    ]
}

fn kernel_source() -> impl Strategy<Value = String> {
    (
        1u32..6,
        1u32..9,
        1u32..5,
        prop::collection::vec(instruction(), 1..12),
    )
        .prop_map(|(grid, warps, iters, body)| {
            let mut s = format!(
                "kernel prop\ngrid {grid}\nblock {}\nregs 16\nshared 4096\nbuffer A 8M\n",
                warps * 32 - 7
            );
            s += &format!("loop i {iters} {{\n");
            for line in body {
                s += &format!("  {line}\n");
            }
            s += "}\n";
            s
        })
}

fn machine() -> impl Strategy<Value = Config> {
    (
        1u32..4,
        prop::sample::select(vec![8u32, 16, 32, 48]),
        1u32..64,
        2u32..16,
        1u32..64,
        prop::sample::select(SchedulerKind::ALL.to_vec()),
        0u32..4,
    )
        .prop_map(|(sms, warps, mshrs, missq, depth, scheduler, margin)| Config {
            sms,
            warps_per_sm: warps,
            l1_mshrs: mshrs,
            l1_miss_queue: missq,
            car_queue_depth: depth,
            scheduler,
            mas_sat_margin: margin,
            ..Config::default()
        })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_kernels_finish_with_every_request_answered(src in kernel_source(), cfg in machine()) {
        let k = parse_kernel(&src, "<prop>").unwrap();
        // A CTA of up to 8 warps needs at least that many slots.
        prop_assume!(k.warps_per_cta() <= cfg.warps_per_sm);
        let s = simulate(&cfg, &k, None).map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
        prop_assert_eq!(s.warp_instructions, k.total_warp_instructions());
        prop_assert_eq!(s.sm.requests_sent, s.sm.replies_received);
        prop_assert_eq!(s.l1.accesses, s.l1.outcomes());
        prop_assert_eq!(s.l2.accesses, s.l2.outcomes());
        prop_assert!(s.car.peak_occupancy <= cfg.car_queue_depth as u64);
        prop_assert_eq!(s.sm.ctas_completed, k.grid as u64);
        // Deterministic: the same run again gives the same statistics.
        let again = simulate(&cfg, &k, None).unwrap();
        prop_assert_eq!(again, s);
    }
}
