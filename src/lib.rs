//! mascar: a cycle-level model of GPU streaming multiprocessors and their memory system, in
//! which the warp-scheduling hardware of *Mascar* (Sethia et al., HPCA 2015) is modelled.

pub mod characterise;
pub mod config;
pub mod dram_replay;
pub mod engine;
pub mod experiment;
pub mod gpgpusim_config;
pub mod gpu;
pub mod input;
pub mod mascar;
pub mod output;
pub mod report;
pub mod results;
pub mod rtl;
pub mod runner;
pub mod sched;
pub mod stats;
pub mod workload;
