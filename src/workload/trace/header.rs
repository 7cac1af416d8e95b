//! The kernel header of a `.traceg` file: the `-key = value` lines before the first CTA.

use super::error::TraceError;
use super::lex::{parse_dec_u64, parse_hex, parse_triple, quote, split_key_value, LineCtx};

/// Newest tracer format this reader knows. Version 6 adds register values and a second
/// immediate to every line, which this reader does not parse.
pub const MAX_TRACER_VERSION: u32 = 5;

/// Most threads a CTA may have (CUDA's limit on every architecture from sm_20 to sm_90).
pub const MAX_CTA_THREADS: u64 = 1024;

/// Threads per warp.
pub const WARP_SIZE: u64 = 32;

/// The parsed header of one kernel trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHeader {
    /// `-kernel name`: the (mangled) kernel name. Required.
    pub kernel_name: String,
    /// `-kernel id`: 1-based launch index.
    pub kernel_id: Option<u64>,
    /// `-grid dim = (x,y,z)`: CTAs per dimension. Required.
    pub grid_dim: [u32; 3],
    /// `-block dim = (x,y,z)`: threads per CTA per dimension. Required.
    pub block_dim: [u32; 3],
    /// `-shmem`: shared memory bytes per CTA (static + dynamic).
    pub shmem: Option<u32>,
    /// `-nregs`: registers per thread.
    pub nregs: Option<u32>,
    /// `-binary version`: SASS architecture, e.g. 61 for sm_61, 90 for sm_90.
    pub binary_version: Option<u32>,
    /// `-cuda stream id`.
    pub cuda_stream_id: Option<u64>,
    /// `-shmem base_addr`: where the shared window starts in the generic address space.
    pub shmem_base_addr: Option<u64>,
    /// `-local mem base_addr`: where the local window starts in the generic address space.
    pub local_mem_base_addr: Option<u64>,
    /// `-nvbit version`.
    pub nvbit_version: Option<String>,
    /// `-accelsim tracer version`: selects the instruction-line layout. Required.
    pub tracer_version: u32,
    /// `-enable lineinfo = 1`: every instruction line starts with a source line number.
    pub lineinfo: bool,
    /// Header keys this reader does not know, in file order (key with whitespace collapsed).
    pub other: Vec<(String, String)>,
}

impl TraceHeader {
    /// Warps per CTA: the block's threads rounded up to whole warps.
    pub fn warps_per_cta(&self) -> usize {
        let threads: u64 = self.block_dim.iter().map(|&d| u64::from(d)).product();
        // Dimensions were checked against MAX_CTA_THREADS, so this is small.
        usize::try_from(threads.div_ceil(WARP_SIZE)).unwrap_or(usize::MAX)
    }

    /// CTAs in the grid.
    pub fn num_ctas(&self) -> u64 {
        self.grid_dim.iter().map(|&d| u64::from(d)).product()
    }
}

/// Collects header lines; [`HeaderBuilder::finish`] checks the required keys.
#[derive(Default)]
pub(crate) struct HeaderBuilder {
    kernel_name: Option<String>,
    kernel_id: Option<u64>,
    grid_dim: Option<[u32; 3]>,
    block_dim: Option<[u32; 3]>,
    shmem: Option<u32>,
    nregs: Option<u32>,
    binary_version: Option<u32>,
    cuda_stream_id: Option<u64>,
    shmem_base_addr: Option<u64>,
    local_mem_base_addr: Option<u64>,
    nvbit_version: Option<String>,
    tracer_version: Option<u32>,
    lineinfo: bool,
    other: Vec<(String, String)>,
}

impl HeaderBuilder {
    /// Parses one header line (its first non-blank character is `-`). A repeated key
    /// overrides the earlier value, as in Accel-Sim.
    pub fn add_line(&mut self, ctx: &LineCtx) -> Result<(), TraceError> {
        let dash = ctx.text.find('-').unwrap_or(0);
        let body = &ctx.text[dash + 1..];
        let (key, value_at, value) = split_key_value(body)
            .ok_or_else(|| ctx.err_end("header line has no `=`: expected -key = value"))?;
        let at = dash + 1 + value_at;
        let dec_u64 = |what: &str| {
            parse_dec_u64(value).ok_or_else(|| {
                ctx.err(
                    at,
                    format!("bad {what} `{}`: expected a decimal number", quote(value)),
                )
            })
        };
        let dec_u32 = |what: &str| {
            dec_u64(what).and_then(|v| {
                u32::try_from(v).map_err(|_| ctx.err(at, format!("{what} {v} does not fit 32 bits")))
            })
        };
        let hex = |what: &str| {
            parse_hex(value).ok_or_else(|| ctx.err(at, format!("bad hex {what} `{}`", quote(value))))
        };
        match key.as_str() {
            "kernel name" => self.kernel_name = Some(value.to_string()),
            "kernel id" => self.kernel_id = Some(dec_u64("kernel id")?),
            "grid dim" => self.grid_dim = Some(dims(ctx, at, value, "grid dim")?),
            "block dim" => {
                let d = dims(ctx, at, value, "block dim")?;
                let threads: u64 = d.iter().map(|&v| u64::from(v)).product();
                if threads > MAX_CTA_THREADS {
                    return Err(ctx.err(
                        at,
                        format!("block dim has {threads} threads, more than {MAX_CTA_THREADS}"),
                    ));
                }
                self.block_dim = Some(d);
            }
            "shmem" => self.shmem = Some(dec_u32("shmem")?),
            "nregs" => self.nregs = Some(dec_u32("nregs")?),
            "binary version" => self.binary_version = Some(dec_u32("binary version")?),
            "cuda stream id" => self.cuda_stream_id = Some(dec_u64("cuda stream id")?),
            "shmem base_addr" => self.shmem_base_addr = Some(hex("shmem base_addr")?),
            "local mem base_addr" => self.local_mem_base_addr = Some(hex("local mem base_addr")?),
            "nvbit version" => self.nvbit_version = Some(value.to_string()),
            "accelsim tracer version" => {
                let v = dec_u32("tracer version")?;
                if v == 0 || v > MAX_TRACER_VERSION {
                    return Err(ctx.err(
                        at,
                        format!(
                            "accelsim tracer version {v} is not supported (known: 1 to {MAX_TRACER_VERSION})"
                        ),
                    ));
                }
                self.tracer_version = Some(v);
            }
            "enable lineinfo" => self.lineinfo = dec_u32("enable lineinfo")? != 0,
            _ => self.other.push((key, value.to_string())),
        }
        Ok(())
    }

    /// The header, or an error at byte `at` of `end` (where the header stopped: the first
    /// body line, or the end of the file) naming every missing required key.
    pub fn finish(self, end: &LineCtx, at: usize) -> Result<TraceHeader, TraceError> {
        let mut missing = Vec::new();
        if self.kernel_name.is_none() {
            missing.push("-kernel name");
        }
        if self.grid_dim.is_none() {
            missing.push("-grid dim");
        }
        if self.block_dim.is_none() {
            missing.push("-block dim");
        }
        if self.tracer_version.is_none() {
            missing.push("-accelsim tracer version");
        }
        match (
            self.kernel_name,
            self.grid_dim,
            self.block_dim,
            self.tracer_version,
        ) {
            (Some(kernel_name), Some(grid_dim), Some(block_dim), Some(tracer_version)) => Ok(TraceHeader {
                kernel_name,
                kernel_id: self.kernel_id,
                grid_dim,
                block_dim,
                shmem: self.shmem,
                nregs: self.nregs,
                binary_version: self.binary_version,
                cuda_stream_id: self.cuda_stream_id,
                shmem_base_addr: self.shmem_base_addr,
                local_mem_base_addr: self.local_mem_base_addr,
                nvbit_version: self.nvbit_version,
                tracer_version,
                lineinfo: self.lineinfo,
                other: self.other,
            }),
            _ => Err(end.err(
                at,
                format!("header ends without required key(s): {}", missing.join(", ")),
            )),
        }
    }
}

/// A grid or block dimension triple; every component at least 1.
fn dims(ctx: &LineCtx, at: usize, value: &str, what: &str) -> Result<[u32; 3], TraceError> {
    let d = parse_triple(ctx, at, value, what)?;
    if d.contains(&0) {
        return Err(ctx.err(
            at,
            format!("{what} ({},{},{}) has a zero dimension", d[0], d[1], d[2]),
        ));
    }
    Ok(d)
}
