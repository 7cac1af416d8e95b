//! CCWS (Rogers et al., MICRO 2012) on the kernel it was made for: every thread walks its
//! own row (`testbench/data/row_walk.kern`), so each warp's 32 lines are reused by its next
//! 31 loads, and 48 warps' lines do not fit the L1 together.

use mascar::config::Config;
use mascar::engine::simulate;
use mascar::sched::SchedulerKind;
use mascar::workload::kernel_format::parse_kernel;

fn cycles(scheduler: SchedulerKind) -> u64 {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testbench/data/row_walk.kern");
    let src = std::fs::read_to_string(path).unwrap();
    let mut k = parse_kernel(&src, path).unwrap_or_else(|e| panic!("{e}"));
    k.grid = 6; // one SM's wave: 48 warps
    let cfg = Config {
        sms: 1,
        scheduler,
        ..Config::default()
    };
    simulate(&cfg, &k, None).unwrap().cycles
}

/// Throttling keeps each warp's lines in the L1 until it reuses them, so CCWS beats the
/// schedulers that let every warp load. Before the crossing-warp fix, a warp whose own
/// score passed the cutoff was held back too, so no warp could load until its score
/// decayed: CCWS ran 13× slower than LRR here.
#[test]
fn ccws_beats_lrr_and_gto_on_row_walk() {
    let (lrr, gto, ccws) = (
        cycles(SchedulerKind::Lrr),
        cycles(SchedulerKind::Gto),
        cycles(SchedulerKind::Ccws),
    );
    assert!(ccws < gto && gto < lrr, "lrr {lrr}, gto {gto}, ccws {ccws}");
}
