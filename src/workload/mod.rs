//! Workloads: the instruction-stream type, the kernel text format and the built-in kernels.

pub mod builtin;
pub mod kernel_format;
pub mod program;

pub use program::{Kernel, Program};
