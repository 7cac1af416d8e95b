//! The RTL twins of the Mascar blocks (rust-hdl), the single-threaded harness that runs them
//! inside the SM, lockstep against the behavioural twins, and Verilog generation.

pub mod area;
pub mod emit;
pub mod harness;
pub mod prove;
pub mod record;
pub mod reexec_queue;
pub mod scheduler;
pub mod top;
#[cfg(feature = "verilator")]
pub mod verilator;
pub mod wrc;
pub mod wst;
