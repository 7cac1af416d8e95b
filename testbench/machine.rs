//! Integration tests of the machine model: unloaded latencies, coalescing, scheduler order,
//! MSHR merging and reservation failures, CTA dispatch limits.

use mascar::config::{Config, DpUnit, IssueOrder};
use mascar::engine::simulate;
use mascar::gpu::SimError;
use mascar::sched::SchedulerKind;
use mascar::workload::kernel_format::parse_kernel;
use mascar::workload::Kernel;

use crate::parallel;

fn kernel(src: &str) -> Kernel {
    parse_kernel(src, "<test>").unwrap_or_else(|e| panic!("{e}"))
}

fn one_sm() -> Config {
    Config {
        sms: 1,
        ..Config::default()
    }
}

/// The unloaded round trips emerge from GPGPU-Sim 3.2.2's GTX480 configuration, which the
/// defaults follow (`-rop_latency 120`, `-dram_latency 100`, the interconnect's router from
/// `config_fermi_islip.icnt`), not the slides' 200 / 440 cycles (docs/correlation.md). L2
/// hit: a 1-flit request (1 cycle into the router, 2 of VC and switch allocation, 7 to the
/// destination), the ROP queue's 120, the sub-partition's queues, a 5-flit reply (1 + 2, its
/// four more flits cut through behind the head, 7). With the 5 cycles from issue to the L1
/// and the fill's writeback, a dependent load chain takes 151 cycles a step, as Accel-Sim
/// does (testbench/correlation.rs, l2-hit-chain).
#[test]
fn unloaded_l2_hit_round_trip_follows_the_3_2_2_configuration() {
    // The store allocates the line in L2 (write-allocate) but not in L1 (Fermi), so the load
    // misses in L1 and hits in L2.
    let k = kernel(
        "kernel l2hit\ngrid 1\nblock 32\nbuffer A 1M\n\
         st.global A[4*tid], r0\nloop i 100 {\n alu r3, r3\n}\nld.global r1, A[4*tid]\nalu r2, r1\n",
    );
    let s = simulate(&one_sm(), &k, None).unwrap();
    assert_eq!(s.sm.l1_miss_latency.count, 1);
    assert_eq!(s.l2.hits, 1);
    assert_eq!(s.sm.l1_miss_latency.min, 146, "{:?}", s.sm.l1_miss_latency);
}

/// A DRAM miss adds the `-dram_latency` queue (100), the GDDR5 row activation and read
/// (tRCD + CL at 924 MHz) and the burst: 270 cycles from the miss to the fill (a dependent
/// chain 277.5 a step, Accel-Sim's 277.9, testbench/correlation.rs, dram-chain).
#[test]
fn unloaded_dram_round_trip_follows_the_3_2_2_configuration() {
    let k = kernel("kernel dram\ngrid 1\nblock 32\nbuffer A 1M\nld.global r1, A[4*tid]\nalu r2, r1\n");
    let s = simulate(&one_sm(), &k, None).unwrap();
    assert_eq!(s.l2.misses, 1);
    assert_eq!(s.sm.l1_miss_latency.min, 270, "{:?}", s.sm.l1_miss_latency);
}

fn issues(cfg: &Config, k: &Kernel) -> Vec<u8> {
    let mut gpu = mascar::engine::gpu(cfg).unwrap();
    gpu.sms[0].issue_log = Some(vec![]);
    gpu.run(k, None).unwrap();
    gpu.sms[0]
        .issue_log
        .take()
        .unwrap()
        .iter()
        .map(|r| r.warp)
        .collect()
}

/// Four warps of independent ALU work on one scheduler.
const FOUR_WARPS: &str = "kernel order\ngrid 1\nblock 128\nloop i 4 {\n alu r1, r0\n alu r2, r0\n}\n";

#[test]
fn lrr_rotates_one_past_the_last_issuer() {
    let cfg = Config {
        sms: 1,
        schedulers_per_sm: 1,
        scheduler: SchedulerKind::Lrr,
        ..Config::default()
    };
    let order = issues(&cfg, &kernel(FOUR_WARPS));
    assert_eq!(order.len(), 32);
    // Warps become ready in fetch order, which starts at warp 1 (GPGPU-Sim's
    // `m_last_warp_fetched` starts at 0).
    assert_eq!(&order[..12], &[1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0]);
}

#[test]
fn gto_stays_on_the_greedy_warp_then_falls_back_to_the_oldest() {
    let cfg = Config {
        sms: 1,
        schedulers_per_sm: 1,
        scheduler: SchedulerKind::Gto,
        ..Config::default()
    };
    let order = issues(&cfg, &kernel(FOUR_WARPS));
    assert_eq!(order.len(), 32);
    // Warp 1, fetched first, issues both I-buffer entries, then (while it refetches) the
    // oldest ready warp (warp 2: warp 0 is fetched last) takes over and keeps the slot for
    // as long as it can issue.
    assert_eq!(&order[..4], &[1, 1, 2, 2]);
    // Oldest first: warp 0 comes back before warps that issued less recently than it.
    let first_return = order.iter().skip(2).position(|&w| w == 0).unwrap() + 2;
    assert!(order[..first_return].iter().all(|&w| w <= 3));
    let lrr = Config {
        scheduler: SchedulerKind::Lrr,
        ..cfg
    };
    assert_ne!(issues(&lrr, &kernel(FOUR_WARPS)), order);
}

#[test]
fn warps_alternate_between_the_two_schedulers() {
    let cfg = Config {
        sms: 1,
        ..Config::default()
    };
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    gpu.sms[0].issue_log = Some(vec![]);
    gpu.run(&kernel(FOUR_WARPS), None).unwrap();
    let log = gpu.sms[0].issue_log.take().unwrap();
    assert!(log.iter().all(|r| r.warp as usize % 2 == r.scheduler as usize));
    // Scheduler 0 picks first; both may issue in one cycle.
    assert!(log
        .windows(2)
        .any(|p| p[0].cycle == p[1].cycle && p[0].scheduler == 0 && p[1].scheduler == 1));
}

/// Two warps, one per scheduler, each a stream of independent stores: both want the one
/// LD/ST issue slot in nearly every cycle.
const TWO_STORE_STREAMS: &str =
    "kernel st\ngrid 1\nblock 64\nbuffer OUT 4 * 64 * 64\nloop i 32 {\n st.global OUT[4*(64*i + tid)], r1\n}\n";

/// `issue_order`: GPGPU-Sim 3.2.2 cycles the schedulers in index order, so scheduler 0
/// takes the LD/ST slot whenever its warp wants it; 4.x (`Issue_Prio`, Accel-Sim) lets
/// the first place move on each cycle, so both warps' stores go out from the start.
#[test]
fn the_issue_order_decides_who_takes_the_ldst_slot() {
    // Warp 1's stores issued while warp 0 issues its 32 (warp 1 is fetched first, so it
    // starts before warp 0 is ready).
    let warp_1_meanwhile = |order: IssueOrder| {
        let cfg = Config {
            sms: 1,
            issue_order: order,
            ..Config::default()
        };
        let order = issues(&cfg, &kernel(TWO_STORE_STREAMS));
        assert_eq!(order.len(), 64);
        let first = order.iter().position(|&w| w == 0).unwrap();
        let last = order.iter().rposition(|&w| w == 0).unwrap();
        order[first..last].iter().filter(|&&w| w == 1).count()
    };
    // Fixed: once warp 0 is ready, warp 1 issues only while warp 0 waits for its next fetch;
    // rotating: they share the slot, so warp 1 issues more in the same span.
    let fixed = warp_1_meanwhile(IssueOrder::Fixed);
    let rotate = warp_1_meanwhile(IssueOrder::Rotate);
    assert!(fixed < rotate, "warp 1 meanwhile: fixed {fixed}, rotate {rotate}");
}

/// Cycles between successive issues in the issue log of SM 0.
fn issue_cycles(cfg: &Config, k: &Kernel) -> Vec<u64> {
    let mut gpu = mascar::engine::gpu(cfg).unwrap();
    gpu.sms[0].issue_log = Some(vec![]);
    gpu.run(k, None).unwrap();
    gpu.sms[0]
        .issue_log
        .take()
        .unwrap()
        .iter()
        .map(|r| r.cycle)
        .collect()
}

/// Double precision follows the GTX480 file's `-ptx_opcode_latency_dp 8,19,8,8,330` and
/// `-ptx_opcode_initiation_dp 8,16,8,8,130` (GPGPU-Sim 3.2.2 `set_opcode_and_latency`): a
/// dependent `fma.f64` chain issues every 8 + 6 cycles (collector and writeback, pipeline.rs),
/// where an `fma` chain issues every 10.
#[test]
fn a_dependent_double_precision_chain_takes_the_dp_latency() {
    let chain = |op: &str| {
        let k = kernel(&format!(
            "kernel dp\ngrid 1\nblock 32\nloop i 20 {{\n {op} r1, r1, r2, r1\n}}\n"
        ));
        let c = issue_cycles(&one_sm(), &k);
        c.windows(2).map(|p| p[1] - p[0]).collect::<Vec<_>>()
    };
    assert!(
        chain("fma.f64").iter().all(|&d| d == 14),
        "{:?}",
        chain("fma.f64")
    );
    assert!(chain("fma").iter().all(|&d| d == 10), "{:?}", chain("fma"));
    // The file's values reach the model through `--config`'s reader too.
    let cfg = Config {
        dp_fma_latency: 20,
        ..one_sm()
    };
    let k = kernel("kernel dp\ngrid 1\nblock 32\nloop i 4 {\n fma.f64 r1, r1, r2, r1\n}\n");
    let c = issue_cycles(&cfg, &k);
    assert_eq!(c[1] - c[0], 26);
}

/// An SP pipeline that takes a DP instruction is busy for its initiation interval (8): with
/// the default two SP pipelines, 128 independent `add.f64` from many warps take 64 intervals
/// (the issue stage runs ahead only as far as the operand collector holds instructions),
/// where 128 `add` take 64 cycles. A DP divide occupies the SFU for 130 cycles.
#[test]
fn double_precision_occupies_its_pipeline_for_the_initiation_interval() {
    let run = |op: &str, n: u64| {
        let k = kernel(&format!(
            "kernel dp\ngrid 1\nblock 512\nloop i {n} {{\n {op} r1, r2, r3\n}}\n"
        ));
        let c = issue_cycles(&one_sm(), &k);
        let cycles = simulate(&one_sm(), &k, None).unwrap().cycles;
        (c, cycles)
    };
    // The last add.f64 enters a pipeline 63 intervals after the first (4 cycles after its
    // issue, pipeline.rs), and writes back its latency (8) + 2 later; the warp then exits.
    let (c, cycles) = run("add.f64", 8);
    assert_eq!(c.len(), 16 * 8);
    let units = c[0] + 4 + 63 * 8 + 8 + 2;
    assert!(
        (units..units + 8).contains(&cycles),
        "add.f64: {cycles} cycles, the pipelines {units}"
    );
    // Once the collector is full, never a third issue within 8 cycles of the one two before.
    assert!(c[16..].windows(3).all(|w| w[2] - w[0] >= 8), "{c:?}");
    let (_, cycles) = run("add", 8);
    // No interval: SP instructions flow at the issue and fetch rates, over four times faster.
    assert!(cycles < 64 * 8 / 4, "add: 128 instructions in {cycles} cycles");
    // One SFU: 16 divides, one per 130 cycles, the last one 330 + 2 cycles to writeback.
    let (c, cycles) = run("div.f64", 1);
    assert_eq!(c.len(), 16);
    let units = c[0] + 4 + 15 * 130 + 330 + 2;
    assert!(
        (units..units + 8).contains(&cycles),
        "div.f64: {cycles} cycles, the SFU {units}"
    );
}

/// `dp_unit = sfu` (GPGPU-Sim 4.x on a core without DP units, as Accel-Sim runs the Fermi
/// file): `add.f64` goes to the one SFU, so with Accel-Sim's trace timing (20, 8) the 128
/// independent adds take one interval each instead of two per interval on the SP pipelines.
#[test]
fn dp_on_the_sfu_issues_one_per_interval_on_the_one_sfu() {
    let cfg = Config {
        dp_unit: DpUnit::Sfu,
        dp_add_latency: 20,
        dp_add_initiation: 8,
        ..one_sm()
    };
    let k = kernel("kernel dp\ngrid 1\nblock 512\nloop i 8 {\n add.f64 r1, r2, r3\n}\n");
    let c = issue_cycles(&cfg, &k);
    assert_eq!(c.len(), 16 * 8);
    let cycles = simulate(&cfg, &k, None).unwrap().cycles;
    let units = c[0] + 4 + 127 * 8 + 20 + 2;
    assert!(
        (units..units + 8).contains(&cycles),
        "add.f64 on the SFU: {cycles} cycles, the SFU {units}"
    );
    assert!(c[16..].windows(2).all(|w| w[1] - w[0] >= 8), "{c:?}");
    // A dependent chain waits for the SFU's latency: 20 + 6 cycles a step.
    let k = kernel("kernel dp\ngrid 1\nblock 32\nloop i 4 {\n fma.f64 r1, r1, r2, r1\n}\n");
    let cfg = Config {
        dp_fma_latency: 20,
        ..cfg
    };
    let c = issue_cycles(&cfg, &k);
    assert!(c.windows(2).all(|w| w[1] - w[0] == 26), "{c:?}");
}

fn one_load(stride: u32) -> Kernel {
    kernel(&format!(
        "kernel c\ngrid 1\nblock 32\nbuffer A 1M\nld.global r1, A[{stride}*tid]\nalu r2, r1\n"
    ))
}

#[test]
fn unit_stride_warp_coalesces_to_one_request() {
    let s = simulate(&one_sm(), &one_load(4), None).unwrap();
    assert_eq!(s.sm.coalesced_requests, 1);
    assert_eq!(s.sm.requests_sent, 1);
}

#[test]
fn line_stride_warp_needs_32_requests() {
    let s = simulate(&one_sm(), &one_load(128), None).unwrap();
    assert_eq!(s.sm.coalesced_requests, 32);
    assert_eq!(s.l1.misses, 32);
}

#[test]
fn second_warp_merges_into_the_first_warps_mshr() {
    // Two warps read the same line at almost the same time: one miss, one merge, one request.
    let k = kernel("kernel m\ngrid 1\nblock 64\nbuffer A 1M\nld.global r1, A[4*lane]\nalu r2, r1\n");
    let s = simulate(&one_sm(), &k, None).unwrap();
    assert_eq!((s.l1.misses, s.l1.hit_reserved, s.sm.requests_sent), (1, 1, 1));
    assert_eq!(s.l1.fills, 1);
}

#[test]
fn full_mshrs_cause_reservation_failures_that_block_the_lsu() {
    let cfg = Config {
        l1_mshrs: 2,
        ..one_sm()
    };
    let s = simulate(&cfg, &one_load(128), None).unwrap();
    assert!(s.l1.fail_mshr_full > 0, "{:?}", s.l1);
    assert!(s.sm.lsu_stall_cycles > 0);
    assert_eq!(s.l1.misses, 32, "every line is still fetched once");
    assert_eq!(s.l1.accesses, s.l1.outcomes());
}

#[test]
fn merge_limit_is_a_reservation_failure() {
    // Nine warps read one line; an MSHR holds 8 requests, so the ninth must retry.
    let k = kernel("kernel m\ngrid 1\nblock 288\nbuffer A 1M\nld.global r1, A[4*lane]\nalu r2, r1\n");
    let s = simulate(&one_sm(), &k, None).unwrap();
    assert!(s.l1.fail_merge_limit > 0, "{:?}", s.l1);
}

fn peak_ctas(cfg: &Config, header: &str) -> u64 {
    let k = kernel(&format!(
        "kernel d\ngrid 64\n{header}\nloop i 50 {{\n alu r1, r1\n}}\n"
    ));
    simulate(cfg, &k, None).unwrap().sm.peak_resident_ctas
}

#[test]
fn cta_dispatch_honours_every_per_sm_limit() {
    let c = one_sm();
    assert_eq!(peak_ctas(&c, "block 32\nregs 8"), 8, "CTA slots (8)");
    assert_eq!(peak_ctas(&c, "block 512\nregs 8"), 3, "threads (1536)");
    assert_eq!(peak_ctas(&c, "block 256\nregs 48"), 2, "registers (32768)");
    assert_eq!(
        peak_ctas(&c, "block 64\nregs 8\nshared 20000"),
        2,
        "shared memory (48 KB)"
    );
    let few_warps = Config {
        warps_per_sm: 12,
        ..one_sm()
    };
    assert_eq!(peak_ctas(&few_warps, "block 128\nregs 8"), 3, "warp slots");
}

#[test]
fn ctas_beyond_the_first_wave_launch_as_others_finish() {
    let k = kernel("kernel w\ngrid 40\nblock 512\nloop i 20 {\n alu r1, r1\n}\n");
    let s = simulate(
        &Config {
            sms: 2,
            ..Config::default()
        },
        &k,
        None,
    )
    .unwrap();
    assert_eq!(s.sm.ctas_completed, 40);
    assert_eq!(s.warp_instructions, k.total_warp_instructions());
}

/// (first cycle seen, SM) of each CTA of a run on the default machine, and the GPU after it.
fn cta_placement(gpu: &mut mascar::gpu::Gpu, k: &Kernel) -> Vec<(u64, usize)> {
    let mut seen: Vec<Option<(u64, usize)>> = vec![None; k.grid as usize];
    let mut watch = |cycle: u64, sms: &[mascar::gpu::sm::Sm]| {
        for (s, sm) in sms.iter().enumerate() {
            for w in sm.warps.iter().filter(|w| w.active) {
                seen[w.cta as usize].get_or_insert((cycle, s));
            }
        }
    };
    gpu.run_observed(k, None, Some(&mut watch)).unwrap();
    seen.into_iter().map(|c| c.expect("every CTA ran")).collect()
}

#[test]
fn a_small_grid_gets_one_cta_per_sm_per_cycle_and_the_pointer_carries_over() {
    // GPGPU-Sim gpgpu_sim::issue_block2core: each SM takes at most one CTA per cycle, round
    // robin from one past the last SM that took one, and the pointer outlives the kernel.
    let cfg = Config::default();
    assert_eq!(cfg.sms, 15);
    let k = kernel("kernel eight\ngrid 8\nblock 64\nloop i 20 {\n alu r1, r1\n}\n");
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    let first = cta_placement(&mut gpu, &k);
    let sms: Vec<usize> = first.iter().map(|&(_, s)| s).collect();
    assert_eq!(sms, (0..8).collect::<Vec<_>>(), "{first:?}");
    assert!(
        first.iter().all(|&(c, _)| c == first[0].0),
        "all in one cycle: {first:?}"
    );
    // The next kernel starts at SM 8 and wraps round: 8..15, then 0.
    let second = cta_placement(&mut gpu, &k);
    let sms: Vec<usize> = second.iter().map(|&(_, s)| s).collect();
    assert_eq!(sms, vec![8, 9, 10, 11, 12, 13, 14, 0], "{second:?}");
    // A grid larger than the machine: the 16th CTA waits a cycle for SM 0's second turn.
    let k16 = kernel("kernel sixteen\ngrid 16\nblock 64\nloop i 20 {\n alu r1, r1\n}\n");
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    let p = cta_placement(&mut gpu, &k16);
    assert_eq!(p[15].1, 0, "{p:?}");
    assert_eq!(p[15].0, p[0].0 + 1, "{p:?}");
}

/// GPGPU-Sim 3.2.2 `shader_core_ctx::issue_block2core` puts a CTA in the first free CTA
/// context `i` and its threads at `i × padded CTA size`: its warps are contiguous from
/// `i × warps per CTA`, whatever warp slots of other CTAs have freed meanwhile. Here odd CTAs
/// finish first while even CTAs' first warps are done and their second still run, so a CTA
/// that took the lowest free warp slots would straddle two contexts.
#[test]
fn a_cta_takes_the_warp_slots_of_its_cta_context() {
    let k = kernel(
        "kernel ctas\ngrid 24\nblock 64\nloop i < (1 - cta % 2) * (tid / 32) * 200 + 10 {\n alu r1, r1\n}\n",
    );
    let wpc = k.warps_per_cta() as usize;
    let mut gpu = mascar::engine::gpu(&one_sm()).unwrap();
    let (mut checked, mut launched_above_a_free_slot) = (0u64, false);
    let mut before = [false; 48];
    let mut watch = |_cycle: u64, sms: &[mascar::gpu::sm::Sm]| {
        let warps = &sms[0].warps;
        for (slot, w) in warps.iter().enumerate().filter(|(_, w)| w.active) {
            let home = w.cta_slot as usize * wpc + (w.tid_base / 32) as usize;
            assert_eq!(
                slot,
                home,
                "CTA {} warp {} in slot {slot}",
                w.cta,
                w.tid_base / 32
            );
            checked += 1;
            let lower_free = (0..slot).any(|s| !warps[s].active);
            launched_above_a_free_slot |= !before[slot] && w.cta >= 8 && lower_free;
        }
        for (b, w) in before.iter_mut().zip(warps) {
            *b = w.active;
        }
    };
    gpu.run_observed(&k, None, Some(&mut watch)).unwrap();
    assert!(checked > 1000, "{checked}");
    assert!(
        launched_above_a_free_slot,
        "the case that tells the two rules apart never happened"
    );
}

#[test]
fn a_cta_larger_than_an_sm_is_refused() {
    let k = kernel("kernel big\ngrid 1\nblock 1024\nregs 64\nalu r1, r1\n");
    match simulate(&one_sm(), &k, None) {
        Err(SimError::DoesNotFit { reason, .. }) => assert!(reason.contains("regs_per_sm"), "{reason}"),
        other => panic!("expected DoesNotFit, got {other:?}"),
    }
}

#[test]
fn every_request_is_answered_and_every_instruction_runs() {
    let every_fifth: Vec<_> = mascar::workload::builtin::builtins().iter().step_by(5).collect();
    parallel::on_two_workers(&every_fifth, |b| {
        let k = b.kernel();
        let cfg = Config {
            sms: 2,
            ..Config::default()
        };
        let s = simulate(&cfg, &k, None).unwrap();
        assert_eq!(s.warp_instructions, k.total_warp_instructions(), "{}", b.name);
        assert_eq!(s.sm.requests_sent, s.sm.replies_received, "{}", b.name);
        let l1 = &s.l1;
        assert_eq!(l1.accesses, l1.outcomes(), "{}", b.name);
        assert_eq!(s.l2.accesses, s.l2.outcomes(), "{}", b.name);
    });
}

#[test]
fn watchdog_stops_a_run_without_progress_and_names_the_waiting_warps() {
    // A DRAM slower than the watchdog: nothing issues or returns for longer than it allows.
    let cfg = Config {
        // The top of dram_latency's range (docs/configuration.md); the watchdog looks every
        // 4096 cycles.
        dram_latency: 10_000,
        watchdog_cycles: 4096,
        ..one_sm()
    };
    let k = kernel("kernel slow\ngrid 1\nblock 64\nbuffer A 1M\nld.global r1, A[4*tid]\nalu r2, r1\n");
    match simulate(&cfg, &k, None) {
        Err(SimError::Watchdog { warps, .. }) => {
            assert_eq!(warps.lines().count(), 2, "{warps}");
            assert!(
                warps.contains("SM 0 warp 0") && warps.contains("scoreboard (r1 pending"),
                "{warps}"
            );
        }
        other => panic!("expected the watchdog, got {other:?}"),
    }
}

/// A bandwidth-intensive kernel keeps DRAM busy most cycles under the baseline scheduler, the
/// premise of the paper's bandwidth class, but DRAM bandwidth alone does not bound it: the
/// interconnect's one virtual channel does too. Accel-Sim with the 3.2.2 GTX480 file
/// (port322) runs this kernel, exported with `mascar trace export --kernel
/// testbench/data/stream.kern`, in 59,067 cycles at `bw_util` 0.739, and in 58,845 with twice
/// the bus width (`-gpgpu_dram_buswidth 8`): 1.004x. The model gained 1.38x from twice the
/// bandwidth while its network had no head-of-line blocking (docs/correlation.md, "The
/// router"); it must stay well below that. (Before 2026-12-02, replies also waited for
/// credits of the SM's 8-entry response FIFO across the whole network trip, which left DRAM
/// 59 % busy.)
#[test]
fn bandwidth_kernel_keeps_dram_busy_and_gains_little_from_twice_the_bandwidth() {
    let src = std::fs::read_to_string("testbench/data/stream.kern").unwrap();
    let k = mascar::workload::kernel_format::parse_kernel(&src, "testbench/data/stream.kern").unwrap();
    let normal = simulate(&Config::default(), &k, None).unwrap();
    assert!(
        normal.dram_utilization > 0.7,
        "DRAM busy {:.3} of cycles",
        normal.dram_utilization
    );
    let double = Config {
        dram_bus_bytes: 2 * Config::default().dram_bus_bytes,
        ..Config::default()
    };
    let fast = simulate(&double, &k, None).unwrap();
    let gain = normal.cycles as f64 / fast.cycles as f64;
    assert!(
        (1.0..1.2).contains(&gain),
        "twice the DRAM bandwidth: speedup {gain:.3} (Accel-Sim 1.004)"
    );
}

/// 4.x `-gpgpu_kernel_launch_latency`: `gpgpu_sim::select_kernel` hands out no CTA until
/// `decrement_kernel_latency` has counted the latency down, so the first CTA is resident in
/// cycle L + 1 (cycle 1 with none) and the kernel's cycles count the wait. A kernel without
/// memory accesses depends on no clock phase, so it takes exactly L cycles more. The watchdog
/// counts from the first dispatch: a latency longer than it is no stall. On one SM and on the
/// default machine.
#[test]
fn the_kernel_launch_latency_holds_back_the_first_cta() {
    let k = kernel("kernel k\ngrid 20\nblock 64\nloop i 6 {\n alu r1, r0\n}\n");
    for sms in [1, 15] {
        let mut base = None;
        for latency in [0u64, 5, 9_000] {
            let cfg = Config {
                sms,
                kernel_launch_latency: latency,
                watchdog_cycles: 4_096,
                ..Config::default()
            };
            let mut gpu = mascar::engine::gpu(&cfg).unwrap();
            let mut first = None;
            let mut watch = |cycle: u64, sms: &[mascar::gpu::sm::Sm]| {
                if first.is_none() && sms.iter().any(|s| s.warps.iter().any(|w| w.active)) {
                    first = Some(cycle);
                }
            };
            let stats = gpu
                .run_observed(&k, None, Some(&mut watch))
                .unwrap_or_else(|e| panic!("{sms} SMs, latency {latency}: {e}"));
            assert_eq!(first, Some(latency + 1), "{sms} SMs, latency {latency}");
            let base = *base.get_or_insert(stats.cycles);
            assert_eq!(stats.cycles, base + latency, "{sms} SMs, latency {latency}");
        }
    }
}

/// GPGPU-Sim sets the core's fetch pointer (`m_last_warp_fetched`), its first scheduler (4.x
/// `Issue_Prio`) and its operand collector's pointers in the constructor only, not in
/// `shader_core_ctx::reinit` between kernels: the next kernel starts where the last one left
/// them, on the default 15-SM machine as on one SM.
#[test]
fn the_fetch_pointer_and_the_first_scheduler_carry_over_to_the_next_kernel() {
    for sms in [1, 15] {
        let cfg = Config {
            sms,
            issue_order: mascar::config::IssueOrder::Rotate,
            ..Config::default()
        };
        // One CTA per SM, so that kernel 2's one CTA lands on SM 0 again (the dispatch
        // pointer carries over too). Three warps in slots 0..3, the last with the most work:
        // the last fetch is warp 2's and the pointer ends at slot 3, not at 1 where a fresh
        // SM starts.
        let k1 = kernel(&format!(
            "kernel one\ngrid {sms}\nblock 96\nloop i < 4 + 4 * (tid / 64) {{\n alu r1, r0\n}}\n"
        ));
        let k2 = kernel("kernel two\ngrid 1\nblock 64\nloop i 4 {\n alu r1, r0\n}\n");
        let mut gpu = mascar::engine::gpu(&cfg).unwrap();
        gpu.run(&k1, None).unwrap();
        let ptr = gpu.sms[0].fetch_pointer();
        let first = gpu.sms[0].first_scheduler();
        assert_eq!(ptr, 3, "{sms} SMs");
        gpu.sms[0].issue_log = Some(vec![]);
        let mut seen_first = None;
        let mut watch = |_cycle: u64, sms: &[mascar::gpu::sm::Sm]| {
            if seen_first.is_none() && sms[0].warps.iter().any(|w| w.active) {
                seen_first = Some(sms[0].first_scheduler());
            }
        };
        gpu.run_observed(&k2, None, Some(&mut watch)).unwrap();
        let log = gpu.sms[0].issue_log.take().unwrap();
        // The first fetch wraps round from slot 3 to warp 0 (a fresh SM would take warp 1).
        assert_eq!(log[0].warp, 0, "{sms} SMs: {:?}", &log[..2]);
        // The first cycle with the CTA resident moved the first scheduler on once.
        assert_eq!(seen_first, Some((first + 1) % 2), "{sms} SMs");
    }
}
