//! The shared Accel-Sim traces of `testbench/data/traces/` and their kernels, for the test
//! crates that run them (`mod shared_traces;`).

use mascar::workload::trace::{kernelslist, ListEntry};
use mascar::workload::trace_kernel::{self, TraceKernel};
use std::path::{Path, PathBuf};

/// The trace directories (each with a `kernelslist.g`), sorted.
pub fn traces() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbench/data/traces");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("kernelslist.g").is_file())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 3,
        "expected the three shared traces in {}",
        root.display()
    );
    dirs
}

/// A trace directory's kernels in launch order (memory copies left out).
pub fn kernels(dir: &Path) -> Vec<TraceKernel> {
    kernelslist::resolve(dir)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e {
            ListEntry::Kernel(p) => Some(trace_kernel::load(&p).unwrap_or_else(|e| panic!("{e}"))),
            ListEntry::Memcpy { .. } => None,
        })
        .collect()
}
