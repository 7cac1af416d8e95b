//! Workloads: the instruction-stream type, the kernel text format and the built-in kernels.

pub mod builtin;
pub mod inputs;
pub mod kernel_format;
pub mod placement;
pub mod program;
pub mod trace;
pub mod trace_export;
pub mod trace_kernel;

pub use program::{Kernel, Program};
