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
        (8, 8, 6, 64, 8)
    );
    // The dl2 string is one sub-partition's slice (3.2.2 builds one l2_cache per
    // memory_sub_partition): our defaults are the same.
    assert_eq!(
        (
            c.l2_sub_partitions,
            c.l2_mshrs,
            c.l2_mshr_merge,
            c.l2_miss_queue,
            c.dram_return_queue
        ),
        (2, 32, 4, 4, 116)
    );
    let diff = differences(&Config::default(), c);
    for (k, ours, theirs) in &diff {
        println!("{k}: ours {ours}, GTX480 {theirs}");
    }
    let keys: Vec<&str> = diff.iter().map(|(k, _, _)| k.as_str()).collect();
    // Where they differ, and why: the file's L1 is the 16 KB configuration with 32 MSHRs (our
    // default is the paper's 32 KB, 64 MSHRs); its scheduler line is GTO (ours LRR, the
    // paper's baseline); its raw ROP/DRAM latencies and instruction latencies replace the
    // calibrated ones; it has a 16-entry DRAM scheduler queue.
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

/// `-ptx_opcode_latency_dp` / `-ptx_opcode_initiation_dp` give the five DP classes in 3.2.2's
/// order (ADD, MAX, MUL, MAD, DIV); the GTX480 file's are the defaults.
#[test]
fn double_precision_latencies_come_from_the_ptx_opcode_lists() {
    let c = &import(&gtx480(), "gtx480.config", &Config::default())
        .unwrap()
        .config;
    let d = Config::default();
    let lat = |c: &Config| {
        [
            c.dp_add_latency,
            c.dp_minmax_latency,
            c.dp_mul_latency,
            c.dp_fma_latency,
            c.dp_div_latency,
        ]
    };
    let ini = |c: &Config| {
        [
            c.dp_add_initiation,
            c.dp_minmax_initiation,
            c.dp_mul_initiation,
            c.dp_fma_initiation,
            c.dp_div_initiation,
        ]
    };
    assert_eq!((lat(c), ini(c)), ([8, 19, 8, 8, 330], [8, 16, 8, 8, 130]));
    assert_eq!((lat(&d), ini(&d)), (lat(c), ini(c)));
    let text = gtx480()
        .replace(
            "-ptx_opcode_latency_dp 8,19,8,8,330",
            "-ptx_opcode_latency_dp 1,2,3,4,5",
        )
        .replace(
            "-ptx_opcode_initiation_dp 8,16,8,8,130",
            "-ptx_opcode_initiation_dp 6,7,8,9,10",
        );
    let c = import(&text, "dp.config", &Config::default()).unwrap().config;
    assert_eq!((lat(&c), ini(&c)), ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]));
    let text = gtx480().replace(
        "-ptx_opcode_latency_dp 8,19,8,8,330",
        "-ptx_opcode_latency_dp 8,19",
    );
    let e = import(&text, "short.config", &Config::default()).unwrap_err();
    assert_eq!(e.option, "ptx_opcode_latency_dp");
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

#[test]
fn the_sm_count_and_l2_geometry_use_checked_arithmetic() {
    // 4294967295² wraps to 1 in 32 bits: once silently one SM.
    let text = "-gpgpu_n_clusters 4294967295\n-gpgpu_n_cores_per_cluster 4294967295\n";
    let e = import(text, "wrap.config", &Config::default()).unwrap_err();
    assert_eq!(
        (e.line, e.option.as_str()),
        (2, "gpgpu_n_cores_per_cluster"),
        "{e}"
    );
    assert!(e.reason.contains("overflows"), "{e}");
    // The dl2 sets are per sub-partition, taken as they are (no product to wrap): 2^31 + 64
    // sets is refused by l2_sets' range, naming the option.
    let text = "-gpgpu_n_sub_partition_per_mchannel 2\n-gpgpu_cache:dl2 N:2147483712:128:8,L:B:m:W:L,A:32:4,4:0,32\n";
    let e = import(text, "wrap.config", &Config::default()).unwrap_err();
    assert_eq!((e.line, e.option.as_str()), (2, "gpgpu_cache:dl2"), "{e}");
    assert!(e.to_string().contains("l2_sets"), "{e}");
    let e = import(
        "-gpgpu_n_sub_partition_per_mchannel 0\n",
        "z.config",
        &Config::default(),
    )
    .unwrap_err();
    assert_eq!(e.option, "gpgpu_n_sub_partition_per_mchannel");
}

#[test]
fn a_value_out_of_range_names_the_option_and_line_that_gave_it() {
    let text = "-gpgpu_n_clusters 15\n-gpgpu_n_mem 100000\n";
    let e = import(text, "big.config", &Config::default()).unwrap_err();
    assert_eq!((e.line, e.option.as_str()), (2, "gpgpu_n_mem"), "{e}");
    assert!(
        e.to_string()
            .contains("config key `l2_partitions`: 100000 is out of range 1..=128"),
        "{e}"
    );
}

#[test]
fn settings_the_file_does_not_give_are_listed_as_defaulted() {
    // Like the QuadroFX5600 config: no -gpgpu_cache:dl1 line.
    let text = "-gpgpu_n_clusters 8\n-gpgpu_n_cores_per_cluster 2\n-gpgpu_n_mem 6\n-gpgpu_scheduler two_level_active:6:0:1\n";
    let imported = import(text, "nodl1.config", &Config::default()).unwrap();
    assert_eq!(imported.config.sms, 16);
    let defaulted = |opt: &str| imported.defaulted.iter().find(|d| d.options.contains(&opt));
    let dl1 = defaulted("gpgpu_cache:dl1").expect("dl1 listed as defaulted");
    assert!(
        dl1.kept.contains("l1_sets = 64") && dl1.kept.contains("l1_mshrs = 64"),
        "{dl1:?}"
    );
    // Given and used: not defaulted. Given but ignored (an unmodelled scheduler): defaulted.
    assert!(defaulted("gpgpu_n_clusters").is_none());
    assert!(defaulted("gpgpu_n_mem").is_none());
    assert_eq!(defaulted("gpgpu_scheduler").unwrap().kept, "scheduler = \"lrr\"");
    assert!(defaulted("gpgpu_flush_l1_cache").is_some());
    let shown = imported.to_string();
    let at = shown
        .find("Model settings the file does not give (defaults kept):")
        .expect("printed after used and ignored");
    assert!(at > shown.find("GPGPU-Sim options ignored:").unwrap());
    assert!(
        shown[at..].contains("L1 data cache (-gpgpu_cache:dl1): l1_sets = 64"),
        "{shown}"
    );
    // Half of the SM count: the other factor is 1, and said so.
    let half = import("-gpgpu_n_clusters 8\n", "half.config", &Config::default()).unwrap();
    assert_eq!(half.config.sms, 8);
    let cores = half
        .defaulted
        .iter()
        .find(|d| d.options == ["gpgpu_n_cores_per_cluster"]);
    assert_eq!(cores.map(|d| d.kept.as_str()), Some("1, so sms = 8"));
    // The stock GTX480 file gives its caches.
    let stock = import(&gtx480(), "gpgpusim.config", &Config::default()).unwrap();
    assert!(!stock
        .defaulted
        .iter()
        .any(|d| d.options.contains(&"gpgpu_cache:dl1")));
}

#[test]
fn the_cache_flush_options_map_onto_the_between_kernel_flushes() {
    let c = Config::default();
    assert!(!c.flush_l1_between_kernels && !c.flush_l2_between_kernels);
    let imported = import(
        "-gpgpu_flush_l1_cache 1\n-gpgpu_flush_l2_cache 0\n",
        "f.config",
        &c,
    )
    .unwrap();
    assert!(imported.config.flush_l1_between_kernels);
    assert!(!imported.config.flush_l2_between_kernels);
    assert!(imported.used.iter().any(|u| u.option == "gpgpu_flush_l1_cache"));
    assert!(imported.used.iter().any(|u| u.option == "gpgpu_flush_l2_cache"));
}

/// 4.x `-gpgpu_kernel_launch_latency` (gpu-sim.cc) sets `kernel_launch_latency`; 3.2.2's
/// GTX480 file has no such option, so it stays 0 and is listed as defaulted.
#[test]
fn the_kernel_launch_latency_option_is_read() {
    let imported = import("-gpgpu_kernel_launch_latency 7\n", "l.config", &Config::default()).unwrap();
    assert_eq!(imported.config.kernel_launch_latency, 7);
    assert!(imported
        .used
        .iter()
        .any(|u| u.option == "gpgpu_kernel_launch_latency"));
    let stock = import(&gtx480(), "gpgpusim.config", &Config::default()).unwrap();
    assert_eq!(stock.config.kernel_launch_latency, 0);
    assert!(stock
        .defaulted
        .iter()
        .any(|d| d.options.contains(&"gpgpu_kernel_launch_latency")));
}

/// 3.2.2 gpu-sim.cc `-gpgpu_dram_partition_queues` (`i2$:$2d:d2$:$2i`, default 8:8:8:8) and
/// `-gpgpu_dram_return_queue_size` set the sub-partition queues and the DRAM return queue;
/// `-gpgpu_n_sub_partition_per_mchannel` no longer multiplies the dl2 geometry.
#[test]
fn partition_queues_and_the_return_queue_are_read() {
    let text = "-gpgpu_n_sub_partition_per_mchannel 2\n-gpgpu_cache:dl2 N:64:128:8,L:B:m:W:L,A:32:4,4:0,32\n-gpgpu_dram_partition_queues 4:6:10:12\n-gpgpu_dram_return_queue_size 50\n";
    let c = import(text, "q.config", &Config::default()).unwrap().config;
    assert_eq!(
        (c.l2_sets, c.l2_mshrs, c.l2_mshr_merge, c.l2_miss_queue),
        (64, 32, 4, 4)
    );
    assert_eq!(
        (
            c.l2_icnt_queue,
            c.l2_dram_queue,
            c.l2_fill_queue,
            c.l2_response_queue
        ),
        (4, 6, 10, 12)
    );
    assert_eq!(c.dram_return_queue, 50);
    let e = import(
        "-gpgpu_dram_partition_queues 8:8:8\n",
        "q.config",
        &Config::default(),
    )
    .unwrap_err();
    assert_eq!(e.option, "gpgpu_dram_partition_queues");
}
