//! GPGPU-Sim configuration files (`gpgpusim.config`): the options that map onto the model
//! are read into a [`Config`]; every other option is listed as ignored, with the reason.
//!
//! [design] Mapping notes:
//! - SMs = `-gpgpu_n_clusters` × `-gpgpu_n_cores_per_cluster`.
//! - The model's L2 partitions are GPGPU-Sim's memory channels (`-gpgpu_n_mem`), each with
//!   `-gpgpu_n_sub_partition_per_mchannel` sub-partitions; the `dl2` string describes one
//!   sub-partition's slice (sets, MSHRs, merge limit, miss queue), as in 3.2.2 (l2cache.cc
//!   builds one `l2_cache` per `memory_sub_partition`).
//! - `-gpgpu_dram_partition_queues i2$:$2d:d2$:$2i` (3.2.2 default 8:8:8:8) sets
//!   `l2_icnt_queue`, `l2_dram_queue`, `l2_fill_queue` and `l2_response_queue`;
//!   `-gpgpu_dram_return_queue_size` sets `dram_return_queue`.
//! - Cache strings `[N|S:]sets:line:assoc,rep:wr:alloc:wr_alloc[:index],mshr:entries:merge,mq`
//!   give sets, ways, line size, MSHRs, merge limit and miss queue; the policy letters are
//!   reported but not modelled (the model's L1 is LRU, write-through with linear set index).
//! - DRAM: `-gpgpu_dram_timing_opt`, `-gpgpu_mem_addr_mapping`, `-gpgpu_dram_burst_length`,
//!   `-gpgpu_dram_buswidth`, `-gpgpu_n_mem_per_ctrlr`, `-dram_data_command_freq_ratio`,
//!   `-gpgpu_clock_domains` (core and DRAM fields) and `-gpgpu_n_sub_partition_per_mchannel`
//!   set the GDDR5 model's keys (docs/dram.md).
//! - `-rop_latency` (the ROP delay before the L2) and `-dram_latency` map onto `l2_latency`
//!   and `dram_latency` as they are (the model's defaults are the GTX480 file's 120 / 100).
//! - `-gpgpu_flush_l1_cache` / `-gpgpu_flush_l2_cache` (GPGPU-Sim 3.2.2 `gpu-sim.cc`, both
//!   default 0) map onto `flush_l1_between_kernels` / `flush_l2_between_kernels`.
//! - `-gpgpu_kernel_launch_latency` (4.x only; 3.2.2 files lack it, so it stays 0) maps onto
//!   `kernel_launch_latency`.
//! - A setting group whose option the file lacks keeps the base configuration's value and
//!   is listed in [`Imported::defaulted`]; arithmetic on file values is checked.

use crate::config::Config;
use crate::gpu::sm::collector::{ID_OC_WIDTHS, OC_EX_WIDTHS, RESULT_BUSES, SP_PORTS};
use crate::sched::SchedulerKind;
use std::fmt;

/// An option that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: option `{option}`: {reason}")]
pub struct GpgpusimError {
    pub file: String,
    pub line: usize,
    pub option: String,
    pub reason: String,
}

/// What happened to one option of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionUse {
    pub line: usize,
    pub option: String,
    pub value: String,
    /// What it set (used) or why it was left alone (ignored).
    pub note: String,
}

/// A model setting group the file did not give: it keeps the base configuration's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defaulted {
    /// What the group is, e.g. `L1 data cache`.
    pub setting: &'static str,
    /// The option(s) that would have given it, without the leading `-`.
    pub options: &'static [&'static str],
    /// The values kept, as `key = value` pairs.
    pub kept: String,
}

/// The configuration read from a GPGPU-Sim file.
#[derive(Debug, Clone)]
pub struct Imported {
    pub config: Config,
    pub used: Vec<OptionUse>,
    pub ignored: Vec<OptionUse>,
    /// Setting groups no used option gave (absent from the file, or present but ignored).
    pub defaulted: Vec<Defaulted>,
}

/// The model settings GPGPU-Sim options give: what, by which options, which keys.
const GROUPS: &[(&str, &[&str], &[&str])] = &[
    (
        "SM count",
        &["gpgpu_n_clusters", "gpgpu_n_cores_per_cluster"],
        &["sms"],
    ),
    (
        "threads and warps per SM",
        &["gpgpu_shader_core_pipeline"],
        &["threads_per_sm", "warps_per_sm"],
    ),
    ("registers per SM", &["gpgpu_shader_registers"], &["regs_per_sm"]),
    ("CTAs per SM", &["gpgpu_shader_cta"], &["ctas_per_sm"]),
    ("shared memory per SM", &["gpgpu_shmem_size"], &["shared_per_sm"]),
    (
        "shared-memory banks",
        &["gpgpu_shmem_num_banks"],
        &["shared_banks"],
    ),
    (
        "schedulers per SM",
        &["gpgpu_num_sched_per_core"],
        &["schedulers_per_sm"],
    ),
    ("warp scheduler", &["gpgpu_scheduler"], &["scheduler"]),
    ("SP pipelines", &["gpgpu_num_sp_units"], &["sp_units"]),
    ("SFU pipelines", &["gpgpu_num_sfu_units"], &["sfu_units"]),
    ("register banks", &["gpgpu_num_reg_banks"], &["reg_banks"]),
    (
        "operand-collector units",
        &[
            "gpgpu_operand_collector_num_units_sp",
            "gpgpu_operand_collector_num_units_sfu",
            "gpgpu_operand_collector_num_units_mem",
            "gpgpu_operand_collector_num_units_gen",
        ],
        &[
            "collector_units_sp",
            "collector_units_sfu",
            "collector_units_mem",
            "collector_units_gen",
        ],
    ),
    (
        "integer latencies",
        &["ptx_opcode_latency_int"],
        &["alu_latency", "imul_latency", "idiv_latency"],
    ),
    (
        "double-precision latencies",
        &["ptx_opcode_latency_dp"],
        &[
            "dp_add_latency",
            "dp_minmax_latency",
            "dp_mul_latency",
            "dp_fma_latency",
            "dp_div_latency",
        ],
    ),
    (
        "double-precision initiation intervals",
        &["ptx_opcode_initiation_dp"],
        &[
            "dp_add_initiation",
            "dp_minmax_initiation",
            "dp_mul_initiation",
            "dp_fma_initiation",
            "dp_div_initiation",
        ],
    ),
    (
        "L1 data cache",
        &["gpgpu_cache:dl1"],
        &[
            "l1_sets",
            "l1_ways",
            "line_bytes",
            "l1_mshrs",
            "l1_mshr_merge",
            "l1_miss_queue",
        ],
    ),
    (
        "texture cache",
        &["gpgpu_tex_cache:l1"],
        &[
            "tex_sets",
            "tex_line_bytes",
            "tex_ways",
            "tex_fragment_fifo",
            "tex_request_fifo",
            "tex_rob",
            "tex_result_fifo",
        ],
    ),
    (
        "constant cache",
        &["gpgpu_const_cache:l1"],
        &[
            "const_sets",
            "const_line_bytes",
            "const_ways",
            "const_mshrs",
            "const_mshr_merge",
            "const_miss_queue",
        ],
    ),
    (
        "L2 cache",
        &["gpgpu_cache:dl2"],
        &[
            "l2_sets",
            "l2_ways",
            "l2_mshrs",
            "l2_mshr_merge",
            "l2_miss_queue",
            "l2_data_port_bytes",
        ],
    ),
    ("L2 partitions", &["gpgpu_n_mem"], &["l2_partitions"]),
    ("L2 latency", &["rop_latency"], &["l2_latency"]),
    ("DRAM latency", &["dram_latency"], &["dram_latency"]),
    (
        "DRAM queue",
        &["gpgpu_frfcfs_dram_sched_queue_size"],
        &["dram_queue"],
    ),
    (
        "L2 sub-partitions",
        &["gpgpu_n_sub_partition_per_mchannel"],
        &["l2_sub_partitions"],
    ),
    (
        "partition queues",
        &["gpgpu_dram_partition_queues"],
        &[
            "l2_icnt_queue",
            "l2_dram_queue",
            "l2_fill_queue",
            "l2_response_queue",
        ],
    ),
    (
        "DRAM return queue",
        &["gpgpu_dram_return_queue_size"],
        &["dram_return_queue"],
    ),
    (
        "DRAM timing",
        &["gpgpu_dram_timing_opt"],
        &[
            "dram_banks",
            "dram_bank_groups",
            "dram_tccd",
            "dram_trrd",
            "dram_trcd",
            "dram_tras",
            "dram_trp",
            "dram_trc",
            "dram_cl",
            "dram_wl",
            "dram_tcdlr",
            "dram_twr",
            "dram_tccdl",
            "dram_trtpl",
        ],
    ),
    (
        "DRAM burst length",
        &["gpgpu_dram_burst_length"],
        &["dram_burst_length"],
    ),
    ("DRAM bus width", &["gpgpu_dram_buswidth"], &["dram_bus_bytes"]),
    (
        "DRAM chips per channel",
        &["gpgpu_n_mem_per_ctrlr"],
        &["dram_chips"],
    ),
    (
        "DRAM data/command ratio",
        &["dram_data_command_freq_ratio"],
        &["dram_data_command_ratio"],
    ),
    (
        "clocks",
        &["gpgpu_clock_domains"],
        &["core_clock_mhz", "dram_clock_mhz"],
    ),
    ("address map", &["gpgpu_mem_addr_mapping"], &["dram_address_map"]),
    (
        "L1 flush between kernels",
        &["gpgpu_flush_l1_cache"],
        &["flush_l1_between_kernels"],
    ),
    (
        "L2 flush between kernels",
        &["gpgpu_flush_l2_cache"],
        &["flush_l2_between_kernels"],
    ),
    (
        "kernel launch latency",
        &["gpgpu_kernel_launch_latency"],
        &["kernel_launch_latency"],
    ),
];

impl fmt::Display for Imported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "GPGPU-Sim options used:")?;
        for u in &self.used {
            writeln!(f, "  line {:>3}  -{} {}  → {}", u.line, u.option, u.value, u.note)?;
        }
        writeln!(f, "GPGPU-Sim options ignored:")?;
        for u in &self.ignored {
            writeln!(f, "  line {:>3}  -{} {}  ({})", u.line, u.option, u.value, u.note)?;
        }
        writeln!(f, "Model settings the file does not give (defaults kept):")?;
        for d in &self.defaulted {
            let options: Vec<String> = d.options.iter().map(|o| format!("-{o}")).collect();
            writeln!(f, "  {} ({}): {}", d.setting, options.join(", "), d.kept)?;
        }
        writeln!(
            f,
            "  (interconnect, MAS, CAR, OWL, CCWS and run-control keys have no GPGPU-Sim option; see `mascar config --reference`)"
        )
    }
}

/// Whether `text` reads like a GPGPU-Sim option file (its first option line starts with `-`).
pub fn looks_like_gpgpusim(text: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with('-'))
}

/// `(line, option, value)` for every option, comments removed, quoted values joined across
/// lines.
fn options(text: &str, file: &str) -> Result<Vec<(usize, String, String)>, GpgpusimError> {
    let mut out = vec![];
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some(rest) = line.strip_prefix('-') else {
            return Err(GpgpusimError {
                file: file.into(),
                line: i + 1,
                option: line.split_whitespace().next().unwrap_or("").into(),
                reason: "expected `-option value`".into(),
            });
        };
        let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let mut value = value.trim().to_string();
        // A quoted value may continue on the next lines.
        if value.starts_with('"') && value.matches('"').count() % 2 == 1 {
            for (_, more) in lines.by_ref() {
                value.push(' ');
                value.push_str(more.trim());
                if more.contains('"') {
                    break;
                }
            }
        }
        out.push((
            i + 1,
            name.to_string(),
            value.trim_matches('"').trim().to_string(),
        ));
    }
    Ok(out)
}

/// A cache geometry string, e.g. `N:32:128:4,L:L:m:N:H,A:32:8,8`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheGeometry {
    pub sets: u32,
    pub line_bytes: u32,
    pub ways: u32,
    /// Replacement, write, allocation, write-allocate and set-index policy letters.
    pub policies: String,
    pub mshrs: u32,
    pub merge: u32,
    pub miss_queue: u32,
    /// Bytes the data array moves per cycle (the last field; 0 or absent: the line size, as
    /// 3.2.2's `cache_config::init` sets it).
    pub data_port_bytes: u32,
}

pub fn parse_cache(value: &str) -> Result<CacheGeometry, String> {
    let parts: Vec<&str> = value.split(',').collect();
    let geom: Vec<&str> = parts[0].split(':').collect();
    // Newer files start with the cache type (N normal, S sectored).
    let geom = match geom.first() {
        Some(&"N") | Some(&"S") => &geom[1..],
        _ => &geom[..],
    };
    let num = |s: &str, what: &str| -> Result<u32, String> {
        s.trim()
            .parse()
            .map_err(|_| format!("{what} `{s}` is not a number (expected sets:line:assoc,...)"))
    };
    let [sets, line, ways] = geom else {
        return Err(format!("`{}`: expected sets:line:assoc", parts[0]));
    };
    let mshr: Vec<&str> = parts
        .get(2)
        .ok_or("no MSHR field (e.g. A:32:8)")?
        .split(':')
        .collect();
    let (mshrs, merge) = match mshr.as_slice() {
        [_, n, m, ..] => (num(n, "MSHR entries")?, num(m, "MSHR merge")?),
        _ => return Err(format!("MSHR field `{}`: expected type:entries:merge", parts[2])),
    };
    let mq = parts.get(3).ok_or("no miss-queue field")?;
    let line_bytes = num(line, "line size")?;
    let data_port_bytes = match parts.get(4) {
        Some(w) => num(w, "data port width")?,
        None => 0,
    };
    Ok(CacheGeometry {
        sets: num(sets, "sets")?,
        line_bytes,
        data_port_bytes: if data_port_bytes == 0 {
            line_bytes
        } else {
            data_port_bytes
        },
        ways: num(ways, "associativity")?,
        policies: parts.get(1).unwrap_or(&"").to_string(),
        mshrs,
        merge,
        miss_queue: num(mq.split(':').next().unwrap_or(""), "miss queue")?,
    })
}

/// Reads a GPGPU-Sim option file on top of `base` (options it does not set keep `base`'s).
pub fn import(text: &str, file: &str, base: &Config) -> Result<Imported, GpgpusimError> {
    let opts = options(text, file)?;
    let mut c = base.clone();
    let mut used = vec![];
    let mut ignored = vec![];
    // (value, line) of each half of the SM count.
    let mut clusters: Option<(u32, usize)> = None;
    let mut cores_per_cluster: Option<(u32, usize)> = None;
    // Which line and option last set each key, to place a refused value.
    let mut set_by: Vec<(&str, usize, &str)> = vec![];
    for (line, name, value) in &opts {
        let err = |reason: String| GpgpusimError {
            file: file.into(),
            line: *line,
            option: name.clone(),
            reason,
        };
        let num = |v: &str| -> Result<u32, GpgpusimError> {
            v.trim()
                .parse()
                .map_err(|_| err(format!("`{v}` is not a whole number")))
        };
        let list = |v: &str| -> Result<Vec<u32>, GpgpusimError> { v.split(',').map(num).collect() };
        let note: Result<String, String> = match name.as_str() {
            "gpgpu_n_clusters" => {
                clusters = Some((num(value)?, *line));
                Ok("SMs = clusters × cores per cluster".into())
            }
            "gpgpu_n_cores_per_cluster" => {
                cores_per_cluster = Some((num(value)?, *line));
                Ok("SMs = clusters × cores per cluster".into())
            }
            "gpgpu_shader_core_pipeline" => {
                let v: Vec<&str> = value.split(':').collect();
                let threads = num(v[0])?;
                let warp = v.get(1).map(|w| num(w)).transpose()?.unwrap_or(32);
                if warp != 32 {
                    return Err(err(format!("warp size {warp}: the model's warps have 32 lanes")));
                }
                c.threads_per_sm = threads;
                c.warps_per_sm = threads / 32;
                Ok(format!(
                    "threads_per_sm = {threads}, warps_per_sm = {}",
                    threads / 32
                ))
            }
            "gpgpu_shader_registers" => {
                c.regs_per_sm = num(value)?;
                Ok(format!("regs_per_sm = {}", c.regs_per_sm))
            }
            "gpgpu_shader_cta" => {
                c.ctas_per_sm = num(value)?;
                Ok(format!("ctas_per_sm = {}", c.ctas_per_sm))
            }
            "gpgpu_shmem_size" => {
                c.shared_per_sm = num(value)?;
                Ok(format!("shared_per_sm = {}", c.shared_per_sm))
            }
            "gpgpu_shmem_num_banks" => {
                c.shared_banks = num(value)?;
                Ok(format!("shared_banks = {}", c.shared_banks))
            }
            "gpgpu_num_sched_per_core" => {
                c.schedulers_per_sm = num(value)?;
                Ok(format!("schedulers_per_sm = {}", c.schedulers_per_sm))
            }
            "gpgpu_scheduler" => match value.split(':').next().unwrap_or("") {
                "lrr" => {
                    c.scheduler = SchedulerKind::Lrr;
                    Ok("scheduler = lrr".into())
                }
                "gto" => {
                    c.scheduler = SchedulerKind::Gto;
                    Ok("scheduler = gto".into())
                }
                other => Err(format!(
                    "scheduler `{other}` is not modelled; `--scheduler` chooses one"
                )),
            },
            "gpgpu_num_sp_units" => {
                c.sp_units = num(value)?;
                Ok(format!("sp_units = {}", c.sp_units))
            }
            "gpgpu_num_sfu_units" => {
                c.sfu_units = num(value)?;
                Ok(format!("sfu_units = {}", c.sfu_units))
            }
            "ptx_opcode_latency_int" => {
                let v = list(value)?;
                if v.len() < 5 {
                    return Err(err("expected ADD,MAX,MUL,MAD,DIV".into()));
                }
                c.alu_latency = v[0];
                c.imul_latency = v[2];
                c.idiv_latency = v[4];
                Ok(format!(
                    "alu_latency = {} (ADD), imul_latency = {} (MUL), idiv_latency = {} (DIV)",
                    v[0], v[2], v[4]
                ))
            }
            // 3.2.2 `ptx_instruction::set_opcode_and_latency`: entries ADD, MAX, MUL, MAD, DIV
            // of an F64_TYPE op.
            "ptx_opcode_latency_dp" | "ptx_opcode_initiation_dp" => {
                let v = list(value)?;
                if v.len() < 5 {
                    return Err(err("expected ADD,MAX,MUL,MAD,DIV".into()));
                }
                let (kind, slots) = if name == "ptx_opcode_latency_dp" {
                    (
                        "latency",
                        [
                            &mut c.dp_add_latency,
                            &mut c.dp_minmax_latency,
                            &mut c.dp_mul_latency,
                            &mut c.dp_fma_latency,
                            &mut c.dp_div_latency,
                        ],
                    )
                } else {
                    (
                        "initiation",
                        [
                            &mut c.dp_add_initiation,
                            &mut c.dp_minmax_initiation,
                            &mut c.dp_mul_initiation,
                            &mut c.dp_fma_initiation,
                            &mut c.dp_div_initiation,
                        ],
                    )
                };
                for (slot, &x) in slots.into_iter().zip(&v) {
                    *slot = x;
                }
                Ok(format!(
                    "dp_add_{kind} = {}, dp_minmax_{kind} = {}, dp_mul_{kind} = {}, dp_fma_{kind} = {}, dp_div_{kind} = {}",
                    v[0], v[1], v[2], v[3], v[4]
                ))
            }
            "gpgpu_cache:dl1" => {
                let g = parse_cache(value).map_err(err)?;
                c.l1_sets = g.sets;
                c.l1_ways = g.ways;
                c.line_bytes = g.line_bytes;
                c.l1_mshrs = g.mshrs;
                c.l1_mshr_merge = g.merge;
                c.l1_miss_queue = g.miss_queue;
                Ok(format!(
                    "l1_sets = {}, l1_ways = {}, line_bytes = {}, l1_mshrs = {}, l1_mshr_merge = {}, l1_miss_queue = {} (policies {} not modelled: LRU, write-through, linear set index)",
                    g.sets, g.ways, g.line_bytes, g.mshrs, g.merge, g.miss_queue, g.policies
                ))
            }
            // `F:frag:req,rob:result`: 3.2.2's cache_config::init reads the MSHR fields into
            // the texture FIFOs' sizes (unions in gpu-cache.h) and a 12th number, the result FIFO.
            "gpgpu_tex_cache:l1" => {
                let g = parse_cache(value).map_err(err)?;
                let result = value
                    .split(',')
                    .nth(3)
                    .and_then(|f| f.split(':').nth(1))
                    .ok_or_else(|| err("no result-FIFO size (expected …,F:frag:req,rob:result)".into()))?;
                c.tex_sets = g.sets;
                c.tex_line_bytes = g.line_bytes;
                c.tex_ways = g.ways;
                c.tex_fragment_fifo = g.mshrs;
                c.tex_request_fifo = g.merge;
                c.tex_rob = g.miss_queue;
                c.tex_result_fifo = num(result)?;
                Ok(format!(
                    "tex_sets = {}, tex_line_bytes = {}, tex_ways = {}, tex_fragment_fifo = {}, tex_request_fifo = {}, tex_rob = {}, tex_result_fifo = {} (policies {}: LRU, allocate on miss)",
                    g.sets, g.line_bytes, g.ways, g.mshrs, g.merge, g.miss_queue, c.tex_result_fifo, g.policies
                ))
            }
            "gpgpu_const_cache:l1" => {
                let g = parse_cache(value).map_err(err)?;
                c.const_sets = g.sets;
                c.const_line_bytes = g.line_bytes;
                c.const_ways = g.ways;
                c.const_mshrs = g.mshrs;
                c.const_mshr_merge = g.merge;
                c.const_miss_queue = g.miss_queue;
                Ok(format!(
                    "const_sets = {}, const_line_bytes = {}, const_ways = {}, const_mshrs = {}, const_mshr_merge = {}, const_miss_queue = {} (policies {}: LRU, allocate on fill)",
                    g.sets, g.line_bytes, g.ways, g.mshrs, g.merge, g.miss_queue, g.policies
                ))
            }
            "gpgpu_cache:dl2" => {
                let g = parse_cache(value).map_err(err)?;
                c.l2_sets = g.sets;
                c.l2_ways = g.ways;
                c.l2_mshrs = g.mshrs;
                c.l2_mshr_merge = g.merge;
                c.l2_miss_queue = g.miss_queue;
                c.l2_data_port_bytes = g.data_port_bytes;
                Ok(format!(
                    "l2_sets = {}, l2_ways = {}, l2_mshrs = {}, l2_mshr_merge = {}, l2_miss_queue = {}, l2_data_port_bytes = {} (per sub-partition; policies {})",
                    g.sets, g.ways, g.mshrs, g.merge, g.miss_queue, g.data_port_bytes, g.policies
                ))
            }
            "gpgpu_n_mem" => {
                c.l2_partitions = num(value)?;
                Ok(format!("l2_partitions = {}", c.l2_partitions))
            }
            "gpgpu_n_sub_partition_per_mchannel" => {
                if num(value)? == 0 {
                    return Err(err("must be at least 1".into()));
                }
                c.l2_sub_partitions = num(value)?;
                Ok(format!("l2_sub_partitions = {}", c.l2_sub_partitions))
            }
            "gpgpu_dram_timing_opt" => {
                let base = crate::gpu::mem::dram::DramTiming::from_config(&c);
                let t = crate::gpu::mem::dram::DramTiming::parse(value, &base).map_err(err)?;
                c.dram_banks = t.nbk;
                c.dram_bank_groups = t.nbkgrp;
                c.dram_tccd = t.ccd;
                c.dram_trrd = t.rrd;
                c.dram_trcd = t.rcd;
                c.dram_tras = t.ras;
                c.dram_trp = t.rp;
                c.dram_trc = t.rc;
                c.dram_cl = t.cl;
                c.dram_wl = t.wl;
                c.dram_tcdlr = t.cdlr;
                c.dram_twr = t.wr;
                c.dram_tccdl = t.ccdl;
                c.dram_trtpl = t.rtpl;
                Ok(format!(
                    "dram_banks, dram_bank_groups, dram_t* = {}",
                    t.to_option()
                ))
            }
            "gpgpu_mem_addr_mapping" => {
                c.dram_address_map = value.clone();
                Ok(format!("dram_address_map = {value}"))
            }
            "gpgpu_dram_burst_length" => {
                c.dram_burst_length = num(value)?;
                Ok(format!("dram_burst_length = {}", c.dram_burst_length))
            }
            "gpgpu_dram_buswidth" => {
                c.dram_bus_bytes = num(value)?;
                Ok(format!("dram_bus_bytes = {}", c.dram_bus_bytes))
            }
            "gpgpu_n_mem_per_ctrlr" => {
                c.dram_chips = num(value)?;
                Ok(format!("dram_chips = {}", c.dram_chips))
            }
            "dram_data_command_freq_ratio" => {
                c.dram_data_command_ratio = num(value)?;
                Ok(format!("dram_data_command_ratio = {}", c.dram_data_command_ratio))
            }
            "gpgpu_dram_scheduler" => match value.trim() {
                "1" => Ok("FR-FCFS (dram_model = gddr5)".into()),
                other => Err(format!("scheduler {other}: only FR-FCFS (1) is modelled")),
            },
            "gpgpu_dram_return_queue_size" => {
                c.dram_return_queue = num(value)?;
                Ok(format!("dram_return_queue = {}", c.dram_return_queue))
            }
            "gpgpu_dram_partition_queues" => {
                let q: Vec<&str> = value.trim().split(':').collect();
                if q.len() != 4 {
                    return Err(err("expected i2$:$2d:d2$:$2i (four sizes)".into()));
                }
                c.l2_icnt_queue = num(q[0])?;
                c.l2_dram_queue = num(q[1])?;
                c.l2_fill_queue = num(q[2])?;
                c.l2_response_queue = num(q[3])?;
                Ok(format!(
                    "l2_icnt_queue = {}, l2_dram_queue = {}, l2_fill_queue = {}, l2_response_queue = {}",
                    c.l2_icnt_queue, c.l2_dram_queue, c.l2_fill_queue, c.l2_response_queue
                ))
            }
            "gpgpu_mem_address_mask" => Err(
                "the address map comes from -gpgpu_mem_addr_mapping (or dram_address_map's default)".into(),
            ),
            "rop_latency" => {
                c.l2_latency = num(value)?;
                Ok(format!("l2_latency = {}", c.l2_latency))
            }
            "dram_latency" => {
                c.dram_latency = num(value)?;
                Ok(format!("dram_latency = {}", c.dram_latency))
            }
            "gpgpu_frfcfs_dram_sched_queue_size" => {
                // 0 means unlimited in GPGPU-Sim; the model needs a bound.
                let v = num(value)?;
                if v > 0 {
                    c.dram_queue = v;
                    Ok(format!("dram_queue = {v}"))
                } else {
                    Err("0 (unlimited) has no counterpart: dram_queue keeps its value".into())
                }
            }
            "gpgpu_flush_l1_cache" => {
                c.flush_l1_between_kernels = num(value)? != 0;
                Ok(format!(
                    "flush_l1_between_kernels = {}",
                    c.flush_l1_between_kernels
                ))
            }
            "gpgpu_kernel_launch_latency" => {
                c.kernel_launch_latency = u64::from(num(value)?);
                Ok(format!("kernel_launch_latency = {}", c.kernel_launch_latency))
            }
            "gpgpu_flush_l2_cache" => {
                c.flush_l2_between_kernels = num(value)? != 0;
                Ok(format!(
                    "flush_l2_between_kernels = {}",
                    c.flush_l2_between_kernels
                ))
            }
            "gpgpu_pipeline_widths" => {
                // 3.2.2's seven widths (SP, SFU, MEM), 4.0's nine (with DP) or 4.x's eleven
                // (with DP and INT): the model's registers have the GTX480 widths, with no DP
                // or INT register (gpu/sm/collector.rs).
                let v = list(value)?;
                let sp_sfu_mem = match v.len() {
                    7 => Some(([v[0], v[3]], [v[1], v[4]], [v[2], v[5]])),
                    9 if v[1] == 0 && v[5] == 0 => Some(([v[0], v[4]], [v[2], v[6]], [v[3], v[7]])),
                    11 if [v[1], v[2], v[6], v[7]] == [0; 4] => {
                        Some(([v[0], v[5]], [v[3], v[8]], [v[4], v[9]]))
                    }
                    _ => None,
                };
                let fixed = |w: [u32; 2], i: usize| w == [ID_OC_WIDTHS[i] as u32, OC_EX_WIDTHS[i] as u32];
                match sp_sfu_mem {
                    Some((sp, sfu, mem))
                        if fixed(sp, 0)
                            && fixed(sfu, 1)
                            && fixed(mem, 2)
                            && v[v.len() - 1] == RESULT_BUSES as u32 =>
                    {
                        Ok("the model's ID_OC / OC_EX / EX_WB widths (fixed: SP 2, SFU 1, MEM 1, EX_WB 2)".into())
                    }
                    _ => Err("the model's pipeline registers have the GTX480 widths (SP 2, SFU 1, MEM 1, EX_WB 2; no DP or INT register) and keep them".into()),
                }
            }
            "gpgpu_num_reg_banks" => {
                c.reg_banks = num(value)?;
                Ok(format!("reg_banks = {}", c.reg_banks))
            }
            "gpgpu_operand_collector_num_units_sp" => {
                c.collector_units_sp = num(value)?;
                Ok(format!("collector_units_sp = {}", c.collector_units_sp))
            }
            "gpgpu_operand_collector_num_units_sfu" => {
                c.collector_units_sfu = num(value)?;
                Ok(format!("collector_units_sfu = {}", c.collector_units_sfu))
            }
            "gpgpu_operand_collector_num_units_mem" => {
                c.collector_units_mem = num(value)?;
                Ok(format!("collector_units_mem = {}", c.collector_units_mem))
            }
            "gpgpu_operand_collector_num_units_gen" => {
                c.collector_units_gen = num(value)?;
                Ok(format!("collector_units_gen = {}", c.collector_units_gen))
            }
            "gpgpu_operand_collector_num_in_ports_sp" | "gpgpu_operand_collector_num_out_ports_sp" => {
                if num(value)? as usize == SP_PORTS {
                    Ok(format!("the model's SP collector ports (fixed: {SP_PORTS})"))
                } else {
                    Err(format!("the model's SP collector set has {SP_PORTS} ports (fixed)"))
                }
            }
            "gpgpu_clock_domains" => {
                // core:icnt:L2:DRAM in MHz; the model's interconnect and L2 run at the core clock.
                let f: Vec<&str> = value.split(':').collect();
                let mhz = |s: &str| -> Result<u32, GpgpusimError> {
                    let x: f64 = s
                        .trim()
                        .parse()
                        .map_err(|_| err(format!("`{}` is not a frequency in MHz", s.trim())))?;
                    if !(1.0..=100_000.0).contains(&x) {
                        return Err(err(format!("{x} MHz is out of range 1..=100000")));
                    }
                    Ok(x.round() as u32)
                };
                if f.len() != 4 {
                    return Err(err("expected core:icnt:L2:DRAM".into()));
                }
                c.core_clock_mhz = mhz(f[0])?;
                c.dram_clock_mhz = mhz(f[3])?;
                if mhz(f[1])? != c.core_clock_mhz || mhz(f[2])? != c.core_clock_mhz {
                    Ok(format!(
                        "core_clock_mhz = {}, dram_clock_mhz = {} (interconnect and L2 run at the core clock in the model)",
                        c.core_clock_mhz, c.dram_clock_mhz
                    ))
                } else {
                    Ok(format!(
                        "core_clock_mhz = {}, dram_clock_mhz = {}",
                        c.core_clock_mhz, c.dram_clock_mhz
                    ))
                }
            }
            n if n.starts_with("gpgpu_dram") || n.starts_with("dram_") => {
                Err("no counterpart in the DRAM model".into())
            }
            n if n.starts_with("ptx_opcode_") => Err(
                "only the integer ADD / MUL / DIV latencies are modelled (one ALU latency, pipelined)".into(),
            ),
            n if n.starts_with("gpgpu_ptx") || n.starts_with("ptx_") => {
                Err("functional-simulation / PTX option".into())
            }
            n if n.starts_with("gpgpu_cache:") || n.contains("_cache") => {
                Err("the instruction cache is not modelled".into())
            }
            n if n.contains("power") || n.contains("wattch") => {
                Err("power model: see `mascar compare` energy".into())
            }
            "inter_config_file" => Err(
                "not read: the router's icnt_* keys default to 3.2.2's config_fermi_islip.icnt (one VC, vc_buf_size 8, allocation 1 + 1); set them with --set"
                    .into(),
            ),
            _ => Err("no counterpart in the model".into()),
        };
        let u = OptionUse {
            line: *line,
            option: name.clone(),
            value: value.clone(),
            note: match &note {
                Ok(n) | Err(n) => n.clone(),
            },
        };
        match note {
            Ok(_) => {
                if let Some((_, _, keys)) = GROUPS.iter().find(|(_, o, _)| o.contains(&name.as_str())) {
                    set_by.extend(keys.iter().map(|k| (*k, *line, name.as_str())));
                }
                used.push(u)
            }
            Err(_) => ignored.push(u),
        }
    }
    if clusters.is_some() || cores_per_cluster.is_some() {
        let (n, n_line) = clusters.unwrap_or((1, 0));
        let (m, m_line) = cores_per_cluster.unwrap_or((1, 0));
        // The product is made at the later of the two lines.
        let (line, option) = if n_line > m_line {
            (n_line, "gpgpu_n_clusters")
        } else {
            (m_line, "gpgpu_n_cores_per_cluster")
        };
        c.sms = n.checked_mul(m).ok_or_else(|| GpgpusimError {
            file: file.into(),
            line,
            option: option.into(),
            reason: format!(
                "SMs = gpgpu_n_clusters × gpgpu_n_cores_per_cluster = {n} × {m} overflows 32 bits"
            ),
        })?;
    }
    c.validate().map_err(|e| {
        // Placed at the option that set the refused key, when one did.
        let (line, option) = set_by
            .iter()
            .rev()
            .find(|(k, _, _)| *k == e.key)
            .map_or((0, e.key.clone()), |(_, l, o)| (*l, o.to_string()));
        let reason = if line > 0 {
            format!("sets {}", e)
        } else {
            format!("the imported machine is invalid: {}", e.reason)
        };
        GpgpusimError {
            file: file.into(),
            line,
            option,
            reason,
        }
    })?;
    let mut defaulted = defaulted_groups(&c, &used);
    // One half of the SM count without the other: the missing factor is taken as 1.
    match (clusters, cores_per_cluster) {
        (Some(_), None) => defaulted.push(Defaulted {
            setting: "cores per cluster",
            options: &["gpgpu_n_cores_per_cluster"],
            kept: format!("1, so sms = {}", c.sms),
        }),
        (None, Some(_)) => defaulted.push(Defaulted {
            setting: "clusters",
            options: &["gpgpu_n_clusters"],
            kept: format!("1, so sms = {}", c.sms),
        }),
        _ => {}
    }
    Ok(Imported {
        config: c,
        used,
        ignored,
        defaulted,
    })
}

/// The setting groups no used option gave, with the values they keep.
fn defaulted_groups(c: &Config, used: &[OptionUse]) -> Vec<Defaulted> {
    let values = toml::Value::try_from(c).ok();
    GROUPS
        .iter()
        .filter(|(_, options, _)| !used.iter().any(|u| options.contains(&u.option.as_str())))
        .map(|(setting, options, keys)| {
            let kept: Vec<String> = keys
                .iter()
                .map(|k| {
                    let v = values
                        .as_ref()
                        .and_then(|t| t.get(k))
                        .map_or("?".into(), |v| v.to_string());
                    format!("{k} = {v}")
                })
                .collect();
            Defaulted {
                setting,
                options,
                kept: kept.join(", "),
            }
        })
        .collect()
}

/// The keys whose value differs between two configurations: (key, a, b).
pub fn differences(a: &Config, b: &Config) -> Vec<(String, String, String)> {
    let (Ok(toml::Value::Table(ta)), Ok(toml::Value::Table(tb))) =
        (toml::Value::try_from(a), toml::Value::try_from(b))
    else {
        return vec![];
    };
    ta.iter()
        .filter_map(|(k, va)| {
            let vb = tb.get(k)?;
            (va != vb).then(|| (k.clone(), va.to_string(), vb.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_strings_of_old_and_new_files() {
        let g = parse_cache("32:128:4,L:L:m:N,A:32:8,8").unwrap();
        assert_eq!(
            (g.sets, g.line_bytes, g.ways, g.mshrs, g.merge, g.miss_queue),
            (32, 128, 4, 32, 8, 8)
        );
        let g = parse_cache("N:64:128:8,L:B:m:W:L,A:32:4,4:0,32").unwrap();
        assert_eq!(
            (g.sets, g.ways, g.mshrs, g.merge, g.miss_queue),
            (64, 8, 32, 4, 4)
        );
        assert!(parse_cache("32:x:4,L:L:m:N,A:32:8,8")
            .unwrap_err()
            .contains("line size"));
        assert!(parse_cache("32:128,L:L:m:N,A:32:8,8").is_err());
    }

    #[test]
    fn texture_and_constant_cache_strings_set_their_geometry() {
        // The GTX480 lines of 3.2.2 (configs/GTX480/gpgpusim.config) on a machine with other values.
        let base = Config {
            tex_sets: 1,
            tex_ways: 1,
            tex_result_fifo: 9,
            const_sets: 1,
            const_mshrs: 7,
            ..Config::default()
        };
        let text = "-gpgpu_tex_cache:l1 4:128:24,L:R:m:N,F:128:4,128:2\n\
                    -gpgpu_const_cache:l1 64:64:2,L:R:f:N,A:2:32,4\n";
        let c = import(text, "f", &base).unwrap().config;
        assert_eq!((c.tex_sets, c.tex_line_bytes, c.tex_ways), (4, 128, 24));
        assert_eq!(
            (
                c.tex_fragment_fifo,
                c.tex_request_fifo,
                c.tex_rob,
                c.tex_result_fifo
            ),
            (128, 4, 128, 2)
        );
        assert_eq!(
            (
                c.const_sets,
                c.const_line_bytes,
                c.const_ways,
                c.const_mshrs,
                c.const_mshr_merge,
                c.const_miss_queue
            ),
            (64, 64, 2, 2, 32, 4)
        );
        // Newer files' form (`N:` prefix, a set-index letter) reads the same.
        let newer = "-gpgpu_tex_cache:l1 N:4:128:24,L:R:m:N:L,F:128:4,128:2\n";
        assert_eq!(import(newer, "f", &base).unwrap().config.tex_ways, 24);
        let e = import(
            "-gpgpu_tex_cache:l1 4:128:24,L:R:m:N,F:128:4,128\n",
            "t.config",
            &base,
        )
        .unwrap_err();
        assert_eq!((e.line, e.option.as_str()), (1, "gpgpu_tex_cache:l1"));
        assert!(e.reason.contains("result-FIFO"), "{e}");
        let e = import(
            "-gpgpu_const_cache:l1 64:48:2,L:R:f:N,A:2:32,4\n",
            "c.config",
            &base,
        )
        .unwrap_err();
        assert_eq!((e.line, e.option.as_str()), (1, "gpgpu_const_cache:l1"));
        assert!(e.to_string().contains("const_line_bytes"), "{e}");
    }

    #[test]
    fn collector_options_set_their_keys_and_the_gtx480_widths_are_accepted_in_every_form() {
        let text = "-gpgpu_num_reg_banks 8\n-gpgpu_operand_collector_num_units_gen 2\n\
                    -gpgpu_operand_collector_num_units_mem 3\n";
        let c = import(text, "f", &Config::default()).unwrap().config;
        assert_eq!(
            (c.reg_banks, c.collector_units_gen, c.collector_units_mem),
            (8, 2, 3)
        );
        // 3.2.2, 4.0 (with DP) and 4.x (with DP and INT) spell the same widths.
        for w in ["2,1,1,2,1,1,2", "2,0,1,1,2,0,1,1,2", "2,0,0,1,1,2,0,0,1,1,2"] {
            let i = import(&format!("-gpgpu_pipeline_widths {w}\n"), "f", &Config::default()).unwrap();
            assert!(i.used.iter().any(|u| u.option == "gpgpu_pipeline_widths"), "{w}");
        }
        // Other widths are reported as not taken; a malformed list is an error.
        let i = import("-gpgpu_pipeline_widths 4,1,1,4,1,1,4\n", "f", &Config::default()).unwrap();
        assert!(i.ignored.iter().any(|u| u.option == "gpgpu_pipeline_widths"));
        assert!(import("-gpgpu_pipeline_widths 2,x\n", "f", &Config::default()).is_err());
    }

    #[test]
    fn quoted_values_continue_over_lines_and_comments_are_dropped() {
        let o = options("-a 1 # c\n-t \"x=1:\n   y=2\"\n-b 2\n", "f").unwrap();
        assert_eq!(o[0], (1, "a".into(), "1".into()));
        assert_eq!(o[1], (2, "t".into(), "x=1: y=2".into()));
        assert_eq!(o[2], (4, "b".into(), "2".into()));
    }

    #[test]
    fn a_bad_value_names_file_line_and_option() {
        let e = import(
            "-gpgpu_n_clusters 15\n-gpgpu_shader_registers lots\n",
            "g.config",
            &Config::default(),
        )
        .unwrap_err();
        assert_eq!((e.line, e.option.as_str()), (2, "gpgpu_shader_registers"));
        assert!(e
            .to_string()
            .starts_with("g.config:2: option `gpgpu_shader_registers`"));
    }
}
