//! The integration tests: one module per area of the product, each in its own file
//! (see the table in docs/verification.md). They build one binary, so libtest keeps both
//! cores busy across areas; filter by area with `cargo test --release --test testbench AREA::`.

/// The long form of the suite, `MASCAR_LONG_TESTS=1 cargo test --release --features verilator`
/// (docs/verification.md, "Short and long form"): CI runs the short form within its 30-minute
/// budget on 2 cores; a test with a long form runs a part of the same check in the short one
/// and says which. Run the long form before an issue that touches its area is resolved.
pub fn long_form() -> bool {
    std::env::var_os("MASCAR_LONG_TESTS").is_some_and(|v| !v.is_empty() && v != "0")
}

// Helpers shared by several areas.
mod builtin_runs;
mod issue_stimulus;
mod parallel;
mod shared_traces;

// The areas.
mod ccws;
mod cli;
mod correlation;
mod coverage;
mod divergence;
mod docs;
mod dram;
mod formal;
mod golden;
mod gpgpusim_config;
mod layers;
mod machine;
mod mascar;
mod outputs;
mod placement;
mod properties;
mod robustness;
mod rtl;
mod runs;
mod settings_ranges;
mod skip;
mod trace_export;
mod traces;
// `--engine verilator` needs the Verilated Verilog (build.rs, `--features verilator`).
#[cfg(feature = "verilator")]
mod verilator;
mod waves;
mod workloads;
