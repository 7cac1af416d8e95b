//! GPGPU-Sim configuration files: the stock GTX480 `gpgpusim.config` (test data, with its
//! licence, in `testbench/data/gpgpusim/`) is read; its machine matches our defaults where
//! the model follows the same Fermi machine, and every difference is one we expect and list.
//! Malformed files give file, line and option; mutated files never panic.

use mascar::config::Config;
use mascar::gpgpusim_config::{differences, import};
use std::path::Path;

fn gtx480() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbench/data/gpgpusim/GTX480/gpgpusim.config");
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn the_stock_gtx480_config_reads_and_differs_from_our_defaults_only_where_expected() {
    let imported = import(&gtx480(), "gpgpusim.config", &Config::default()).unwrap();
    let c = &imported.config;
    // The same Fermi SM and memory system as our defaults.
    assert_eq!(
        (
            c.sms,
            c.warps_per_sm,
            c.threads_per_sm,
            c.regs_per_sm,
            c.ctas_per_sm,
            c.shared_per_sm
        ),
        (15, 48, 1536, 32768, 8, 49152)
    );
    assert_eq!(
        (c.schedulers_per_sm, c.sp_units, c.sfu_units, c.line_bytes),
        (2, 2, 1, 128)
    );
    assert_eq!(
        (
            c.l1_mshr_merge,
            c.l1_miss_queue,
            c.l2_partitions,
            c.l2_sets,
            c.l2_ways
        ),
        (8, 8, 6, 128, 8)
    );
    let diff = differences(&Config::default(), c);
    for (k, ours, theirs) in &diff {
        println!("{k}: ours {ours}, GTX480 {theirs}");
    }
    let keys: Vec<&str> = diff.iter().map(|(k, _, _)| k.as_str()).collect();
    // Where they differ, and why: the file's L1 is the 16 KB configuration with 32 MSHRs (our
    // default is the paper's 32 KB, 64 MSHRs); its scheduler line is GTO (ours LRR, the
    // paper's baseline); its raw ROP/DRAM latencies and instruction latencies replace the
    // calibrated ones; its L2 has 32 MSHRs and a 4-entry miss queue per sub-partition, and a
    // 16-entry DRAM scheduler queue.
    assert_eq!(
        keys,
        [
            "alu_latency",
            "dram_latency",
            "dram_queue",
            "idiv_latency",
            "imul_latency",
            "l1_mshrs",
            "l1_sets",
            "l2_latency",
            "l2_miss_queue",
            "l2_mshr_merge",
            "l2_mshrs",
            "scheduler",
        ]
        .iter()
        .copied()
        .filter(|k| diff.iter().any(|(d, _, _)| d == k))
        .collect::<Vec<_>>(),
        "unexpected differences: {diff:?}"
    );
    assert!(!imported.ignored.is_empty());
    assert!(imported.ignored.iter().all(|u| !u.note.is_empty()));
    assert!(imported.used.iter().any(|u| u.option == "gpgpu_cache:dl1"));
}

#[test]
fn a_malformed_config_names_file_line_and_option() {
    let text = gtx480().replace("-gpgpu_shader_cta 8", "-gpgpu_shader_cta eight");
    let e = import(&text, "bad.config", &Config::default()).unwrap_err();
    assert_eq!(e.option, "gpgpu_shader_cta");
    assert_eq!(e.line, 28);
    let text = gtx480().replace("N:32:128:4,L:L:m:N:H,A:32:8,8", "N:32:128,L:L:m:N:H");
    let e = import(&text, "bad.config", &Config::default()).unwrap_err();
    assert_eq!((e.option.as_str(), e.line), ("gpgpu_cache:dl1", 53));
    let e = import("-gpgpu_n_clusters 0\n", "zero.config", &Config::default()).unwrap_err();
    assert!(e.to_string().contains("sms"), "{e}");
}

#[test]
fn mutated_configs_give_errors_not_panics() {
    let original = gtx480();
    let bytes = original.as_bytes();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let junk = [b'-', b':', b',', b'#', b'"', b'0', b'9', b'x', b' ', b'\n'];
    for _ in 0..500 {
        let mut m = bytes.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = (next() % m.len() as u64) as usize;
            match next() % 3 {
                0 => {
                    m.remove(at);
                }
                1 => m.insert(at, junk[(next() % junk.len() as u64) as usize]),
                _ => m[at] = junk[(next() % junk.len() as u64) as usize],
            }
        }
        let text = String::from_utf8_lossy(&m);
        let r = std::panic::catch_unwind(|| import(&text, "mutated.config", &Config::default()));
        assert!(r.is_ok(), "panic on:\n{text}");
    }
}
