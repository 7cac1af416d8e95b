//! The paper's hardware, behavioural twins: the L1 saturation signal, the warp readiness
//! checker (WRC), the warp status table (WST), the MAS scheduler (Mem_Q / Comp_Q ordering,
//! EP/MP mode state machine, owner register) and CAR's re-execution queue.
//!
//! Every block takes a plain per-cycle input struct and returns an output struct
//! ([`ports`]); the SM drives them only through those ports, so an RTL twin that implements
//! the same contract can stand in for any of them.

pub mod blocks;
pub mod coverage;
pub mod lockstep;
pub mod ports;
pub mod reexec_queue;
pub mod saturation;
pub mod scheduler;
pub mod wrc;
pub mod wst;

pub use ports::*;
