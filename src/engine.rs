//! Where a run's engine is chosen, once, at the top: the SM takes its Mascar blocks through
//! [`BlockEngine`] and never knows whether they are the behavioural twins, the RTL, or both
//! in lockstep. This is the only module below the runners that sees both `gpu` and `rtl`.

use std::sync::Arc;

use crate::config::{Config, ConfigError, Engine, NonOwnerMem};
use crate::gpu::{Gpu, Progress, SimError};
use crate::mascar::blocks::{BlockEngine, MascarBlocks, RefBlocks};
use crate::mascar::lockstep::Lockstep;
use crate::mascar::reexec_queue::ReexecQueue;
use crate::mascar::scheduler::Scheduler;
use crate::mascar::wrc::Wrc;
use crate::mascar::{BaseOrder, SchedParams};
use crate::rtl::harness::{RtlBlocks, ENTRIES, LANES};
use crate::sched::SchedulerKind;
use crate::stats::RunStats;
use crate::workload::Kernel;

/// The behavioural twins of SM `sm`'s blocks for `cfg`.
pub fn reference_blocks(cfg: &Config, sm: usize) -> RefBlocks {
    use SchedulerKind as K;
    let base_kind = if cfg.scheduler.uses_mas() {
        cfg.mas_base_order
    } else {
        cfg.scheduler
    };
    let base = match base_kind {
        K::Lrr => BaseOrder::Lrr,
        K::Owl => BaseOrder::Owl,
        // CCWS and CAR issue in GTO order (CCWS adds throttling, CAR changes the LSU).
        _ => BaseOrder::Gto,
    };
    let params = SchedParams {
        base,
        mas: cfg.scheduler.uses_mas(),
        mode_check: cfg.mas_mode_check,
        mp_exit_hold: cfg.mas_mp_exit_hold,
    };
    let sched = Scheduler::new(
        params,
        cfg.warps_per_sm as usize,
        cfg.schedulers_per_sm as usize,
        cfg.owl_blp_parity.then_some(sm as u32 % 2),
    );
    let hit_only = cfg.scheduler.uses_car() && cfg.mascar_non_owner_mem == NonOwnerMem::HitOnly;
    RefBlocks::new(
        Wrc {
            stall_non_owners: !hit_only,
        },
        sched,
        cfg.scheduler
            .uses_car()
            .then(|| ReexecQueue::new(cfg.car_queue_depth)),
    )
}

/// Whether the RTL blocks can stand in for `cfg`'s behavioural ones; the reason if not.
pub fn rtl_supports(cfg: &Config) -> Result<(), String> {
    use crate::config::CarEntry;
    use SchedulerKind as K;
    let base = if cfg.scheduler.uses_mas() {
        cfg.mas_base_order
    } else {
        cfg.scheduler
    };
    if cfg.schedulers_per_sm != 2 {
        return Err(format!(
            "the RTL scheduler block has 2 schedulers (schedulers_per_sm = {})",
            cfg.schedulers_per_sm
        ));
    }
    if cfg.warps_per_sm as usize > 2 * LANES {
        return Err(format!(
            "the RTL blocks hold {} warps (warps_per_sm = {})",
            2 * LANES,
            cfg.warps_per_sm
        ));
    }
    if cfg.scheduler.uses_car() && cfg.car_queue_depth as usize > ENTRIES {
        return Err(format!(
            "the RTL re-execution queue has {ENTRIES} entries (car_queue_depth = {})",
            cfg.car_queue_depth
        ));
    }
    if cfg.scheduler.uses_car() && cfg.car_entry != CarEntry::Instruction {
        return Err(
            "the RTL re-execution queue keeps one holder bit per warp, so one entry per warp \
             (car_entry = access)"
                .to_string(),
        );
    }
    if cfg.scheduler.uses_mas() && cfg.mas_mp_exit_hold > u16::MAX as u32 {
        // Refused rather than cut down to what the 16-bit hold counter can count.
        return Err(format!(
            "the RTL scheduler block counts the MP hold in 16 bits (mas_mp_exit_hold = {} > {})",
            cfg.mas_mp_exit_hold,
            u16::MAX
        ));
    }
    if !matches!(base, K::Lrr | K::Gto | K::Ccws | K::Car) {
        return Err(format!(
            "the RTL scheduler block orders warps by LRR or GTO, not {base} (scheduler {})",
            cfg.scheduler
        ));
    }
    Ok(())
}

/// The behavioural twins.
struct Reference(Config);

impl BlockEngine for Reference {
    fn blocks(&self, sm: usize) -> Box<dyn MascarBlocks + Send> {
        Box::new(reference_blocks(&self.0, sm))
    }
}

/// The rust-hdl blocks, configured like the behavioural twins.
struct Rtl(Config);

impl BlockEngine for Rtl {
    fn blocks(&self, sm: usize) -> Box<dyn MascarBlocks + Send> {
        Box::new(RtlBlocks::like(&reference_blocks(&self.0, sm)))
    }
}

/// Both, compared port by port every cycle.
struct Both(Config);

impl BlockEngine for Both {
    fn blocks(&self, sm: usize) -> Box<dyn MascarBlocks + Send> {
        let reference = reference_blocks(&self.0, sm);
        let rtl = Box::new(RtlBlocks::like(&reference));
        Box::new(Lockstep::new(sm, reference, rtl))
    }
}

/// The Verilated Verilog, configured like the behavioural twins.
#[cfg(feature = "verilator")]
struct Verilated(Config);

#[cfg(feature = "verilator")]
impl BlockEngine for Verilated {
    fn blocks(&self, sm: usize) -> Box<dyn MascarBlocks + Send> {
        Box::new(crate::rtl::verilator::VerilatorBlocks::like(&reference_blocks(
            &self.0, sm,
        )))
    }
}

/// The behavioural twins and the Verilated Verilog, compared port by port every cycle.
#[cfg(feature = "verilator")]
struct BothVerilated(Config);

#[cfg(feature = "verilator")]
impl BlockEngine for BothVerilated {
    fn blocks(&self, sm: usize) -> Box<dyn MascarBlocks + Send> {
        let reference = reference_blocks(&self.0, sm);
        let verilated = Box::new(crate::rtl::verilator::VerilatorBlocks::like(&reference));
        Box::new(Lockstep::new(sm, reference, verilated))
    }
}

/// What `--engine verilator` says in a build without the feature.
pub const NO_VERILATOR: &str = "this mascar was built without the Verilator engine: rebuild with \
     `cargo build --release --features verilator` (needs Verilator: `apt-get install -y verilator`)";

/// Whether this build has `engine`.
fn built_with(engine: Engine) -> Result<(), String> {
    match engine {
        Engine::Verilator | Engine::LockstepVerilator if !cfg!(feature = "verilator") => {
            Err(NO_VERILATOR.to_string())
        }
        _ => Ok(()),
    }
}

/// Checks `cfg` as a whole: its own rules, then whether its engine can run it.
pub fn validate(cfg: &Config) -> Result<(), ConfigError> {
    cfg.validate()?;
    crate::gpu::mem::addrdec::check_map(cfg)?;
    built_with(cfg.engine).map_err(|reason| ConfigError::new("engine", reason))?;
    // Every engine but the reference runs the RTL blocks (rust-hdl or their Verilog).
    if cfg.engine != Engine::Ref {
        rtl_supports(cfg).map_err(|reason| ConfigError::new("engine", reason))?;
    }
    Ok(())
}

/// The engine `cfg` asks for, after checking that it can run `cfg`.
pub fn for_config(cfg: &Config) -> Result<Arc<dyn BlockEngine>, ConfigError> {
    validate(cfg)?;
    let c = cfg.clone();
    Ok(match cfg.engine {
        Engine::Ref => Arc::new(Reference(c)),
        Engine::Rtl => Arc::new(Rtl(c)),
        Engine::Lockstep => Arc::new(Both(c)),
        #[cfg(feature = "verilator")]
        Engine::Verilator => Arc::new(Verilated(c)),
        #[cfg(feature = "verilator")]
        Engine::LockstepVerilator => Arc::new(BothVerilated(c)),
        #[cfg(not(feature = "verilator"))]
        Engine::Verilator | Engine::LockstepVerilator => {
            return Err(ConfigError::new("engine", NO_VERILATOR.to_string()))
        }
    })
}

/// A GPU built from `cfg` with the engine it asks for.
pub fn gpu(cfg: &Config) -> Result<Gpu, ConfigError> {
    Gpu::new(cfg, for_config(cfg)?)
}

/// Runs `k` on a fresh GPU built from `cfg`.
pub fn simulate(cfg: &Config, k: &Kernel, progress: Option<Progress>) -> Result<RunStats, SimError> {
    gpu(cfg)?.run(k, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_rule_in_the_reference_states_the_harness_limits() {
        let engine = crate::config::setting("engine").unwrap().rule;
        assert!(
            engine.contains(&format!("warps_per_sm ≤ {}", 2 * LANES)),
            "{engine}"
        );
        assert!(
            engine.contains(&format!("car_queue_depth ≤ {ENTRIES}")),
            "{engine}"
        );
    }

    #[cfg(not(feature = "verilator"))]
    #[test]
    fn the_verilator_engines_in_a_build_without_the_feature_say_how_to_enable_it() {
        for engine in [Engine::Verilator, Engine::LockstepVerilator] {
            let cfg = Config {
                engine,
                ..Config::default()
            };
            let e = for_config(&cfg).err().expect("no Verilator engine in this build");
            assert_eq!(e.key, "engine");
            let text = e.to_string();
            assert!(text.contains("--features verilator"), "{text}");
            assert!(text.contains("apt-get install -y verilator"), "{text}");
        }
    }

    #[test]
    fn an_engine_that_cannot_run_the_configuration_is_refused_naming_the_key() {
        let cfg = Config {
            scheduler: SchedulerKind::Owl,
            engine: Engine::Rtl,
            ..Config::default()
        };
        assert!(cfg.validate().is_ok(), "the configuration itself is valid");
        let e = for_config(&cfg)
            .err()
            .expect("the RTL scheduler has no OWL order");
        assert_eq!(e.key, "engine");
        assert!(
            e.to_string().contains("OWL") || e.to_string().contains("owl"),
            "{e}"
        );
    }
}
