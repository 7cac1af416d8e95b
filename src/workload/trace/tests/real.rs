//! The real traces in `testbench/data/traces`: every CTA and warp parses, the instruction count
//! matches the trace's own `insts =` lines, and the counts the peers (Accel-Sim's log, the
//! tracer's stats.csv) report where they are exactly comparable.

use std::collections::HashMap;
use std::path::Path;

use super::traces_dir;
use crate::workload::trace::{kernelslist, ListEntry, OpClass, TraceReader};

/// What one full pass over a kernel trace counted.
#[derive(Debug, Default)]
struct Counts {
    ctas: usize,
    warps: usize,
    /// Warp instructions.
    insts: u64,
    /// Thread instructions: active lanes summed over warp instructions.
    lane_insts: u64,
    /// Warp instructions and active lanes per class.
    by_class: HashMap<OpClass, (u64, u64)>,
}

/// Parses every CTA of a kernel trace.
fn count(path: &Path) -> (Counts, TraceReader<std::io::BufReader<std::fs::File>>) {
    let mut r = TraceReader::open(path).unwrap_or_else(|e| panic!("{e}"));
    let mut c = Counts::default();
    while let Some(cta) = r.next_cta() {
        let cta = cta.unwrap_or_else(|e| panic!("{e}"));
        c.ctas += 1;
        for warp in cta.warps.iter().filter(|w| !w.is_empty()) {
            c.warps += 1;
            for inst in warp {
                c.insts += 1;
                c.lane_insts += u64::from(inst.active_lanes());
                let e = c.by_class.entry(inst.class).or_default();
                e.0 += 1;
                e.1 += u64::from(inst.active_lanes());
                if inst.is_mem() {
                    assert_eq!(
                        inst.addrs.len(),
                        inst.active_lanes() as usize,
                        "one address per active lane"
                    );
                    assert!(inst.mem_width > 0);
                }
            }
        }
    }
    (c, r)
}

/// Sum of the `insts = n` lines, read without the parser.
fn declared_insts(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("insts ="))
        .map(|n| n.trim().parse::<u64>().unwrap())
        .sum()
}

/// The single kernel of a trace directory, through its kernelslist.
fn only_kernel(dir: &str) -> std::path::PathBuf {
    let entries = kernelslist::resolve(traces_dir().join(dir)).unwrap_or_else(|e| panic!("{e}"));
    let kernels: Vec<_> = entries
        .into_iter()
        .filter_map(|e| match e {
            ListEntry::Kernel(p) => Some(p),
            ListEntry::Memcpy { .. } => None,
        })
        .collect();
    assert_eq!(kernels.len(), 1, "{dir}");
    kernels.into_iter().next().unwrap()
}

/// `value` of `stat` in an Accel-Sim `accelsim_log.csv` (`kernel,kernel_id,stat,value`).
fn accelsim_stat(path: &Path, stat: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 4 && f[2] == stat).then(|| f[3].trim().parse().unwrap())
        })
        .unwrap_or_else(|| panic!("{stat} not in {}", path.display()))
}

#[test]
fn vectoradd_matches_accelsim() {
    let path = only_kernel("vectoradd-100-32-trace");
    let (c, r) = count(&path);
    let h = r.header();
    assert_eq!(
        (h.kernel_name.as_str(), h.grid_dim, h.block_dim),
        ("_Z6vecAddIfEvPT_S1_S1_i", [1, 1, 1], [1024, 1, 1])
    );
    assert_eq!((h.tracer_version, h.binary_version), (4, Some(61)));
    assert_eq!((c.ctas, c.warps), (1, 32));
    assert_eq!(c.insts, declared_insts(&path));

    let log = traces_dir().join("vectoradd-100-32-trace/accelsim_log.csv");
    let peer = |s| accelsim_stat(&log, s);
    println!(
        "vectoradd: {} warp insts (Accel-Sim warp_instruction_count {}), {} thread insts (gpu_total_instructions {})",
        c.insts,
        peer("warp_instruction_count"),
        c.lane_insts,
        peer("gpu_total_instructions")
    );
    // Accel-Sim counts one per warp instruction, and one per active lane, as we do.
    assert_eq!(c.insts, peer("warp_instruction_count"));
    assert_eq!(c.lane_insts, peer("gpu_total_instructions"));
    // Its memory counters: per lane for num_load/store_inst, per warp for num_global_mem_*.
    let loads = c.by_class[&OpClass::LoadGlobal];
    let stores = c.by_class[&OpClass::StoreGlobal];
    assert_eq!(
        (loads.1, stores.1),
        (peer("num_load_inst"), peer("num_store_inst"))
    );
    assert_eq!(
        (loads.0, stores.0),
        (peer("num_global_mem_read"), peer("num_global_mem_write"))
    );
    assert!(r.unknown_opcodes().is_empty(), "{:?}", r.unknown_opcodes());
}

#[test]
fn matrixmul_matches_the_tracer_stats() {
    let path = only_kernel("matrixmul-32-32-trace");
    let (c, r) = count(&path);
    let h = r.header();
    assert_eq!(
        (h.block_dim, h.shmem, h.nregs, h.tracer_version),
        ([32, 32, 1], Some(8192), Some(30), 4)
    );
    assert_eq!((c.ctas, c.warps), (1, 32));
    assert_eq!(c.insts, declared_insts(&path));

    // stats.csv: the tracer's own count of the warp instructions it executed and reported.
    let text = std::fs::read_to_string(traces_dir().join("matrixmul-32-32-trace/stats.csv")).unwrap();
    let mut rows = text
        .lines()
        .map(|l| l.split(',').map(str::trim).collect::<Vec<_>>());
    let names = rows.next().unwrap();
    let row = rows.next().unwrap();
    let col = |name| {
        row[names.iter().position(|n| *n == name).unwrap()]
            .parse::<u64>()
            .unwrap()
    };
    println!(
        "matrixmul: {} warp insts (tracer total_insts {}, total_reported_insts {})",
        c.insts,
        col("total_insts"),
        col("total_reported_insts")
    );
    assert_eq!(c.insts, col("total_reported_insts"));
    assert_eq!(c.insts, col("total_insts"));
    assert!(c.by_class.contains_key(&OpClass::LoadShared) && c.by_class.contains_key(&OpClass::Barrier));
    assert!(r.unknown_opcodes().is_empty(), "{:?}", r.unknown_opcodes());
}

#[test]
fn hopper_ffma_trace_parses() {
    let path = only_kernel("simtune-ffmakernel-1-32-10");
    let (c, r) = count(&path);
    let h = r.header();
    assert_eq!(
        (h.kernel_name.as_str(), h.binary_version, h.tracer_version),
        ("_Z10ffmaKerneli", Some(90), 5)
    );
    assert_eq!((c.ctas, c.warps), (1, 1));
    assert_eq!(c.insts, declared_insts(&path));
    // No peer count here: `gt` holds one number (9576) that is not an instruction count
    // (presumably the measured cycles on the H100), and there is no stats.csv.
    println!(
        "simtune ffma: {} warp insts, {} thread insts",
        c.insts, c.lane_insts
    );
    assert!(c.by_class[&OpClass::Alu].0 > 1000, "FFMA-dominated");
    assert!(r.unknown_opcodes().is_empty(), "{:?}", r.unknown_opcodes());
}

#[test]
fn every_shared_trace_reads_through_its_kernelslist() {
    let mut total = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(traces_dir())
        .expect("testbench/data/traces holds the real traces")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 3);
    for dir in dirs {
        for entry in kernelslist::resolve(&dir).unwrap_or_else(|e| panic!("{e}")) {
            if let ListEntry::Kernel(path) = entry {
                let (c, _) = count(&path);
                assert_eq!(c.insts, declared_insts(&path), "{}", path.display());
                total += c.insts;
            }
        }
    }
    assert_eq!(total, 344 + 4416 + 1328);
}
