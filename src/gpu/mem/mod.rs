//! The memory system below the SMs: the set-associative cache parts shared by L1 and L2, the
//! interconnect, L2 partitions and DRAM.

pub mod addrdec;
pub mod cache;
pub mod dram;
pub mod icnt;
pub mod partition;

/// A request travelling from an SM's L1 towards an L2 partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemRequest {
    /// Unique per run: lets the accounting prove that no request is lost or duplicated.
    pub id: u32,
    /// Line address (byte address / line size).
    pub line: u64,
    pub sm: u16,
    /// Warp slot that issued it (a write's acknowledgement goes back to it).
    pub warp: u8,
    pub write: bool,
    /// Data bytes a write carries (an atomic: its access size, 32, 64 or 128).
    pub bytes: u16,
    /// A global atomic: the SM's in-flight instruction slot its reply completes. The L2
    /// performs it as a read that dirties the line (GPGPU-Sim 3.2.2 gpu-cache.cc,
    /// `data_cache::rd_hit_base` and `baseline_cache::fill` with `m_has_atomic`).
    pub atomic: Option<u16>,
}

/// A reply from an L2 partition to an SM: read data, or a write acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemReply {
    pub id: u32,
    pub line: u64,
    pub sm: u16,
    pub warp: u8,
    pub write: bool,
    /// An atomic's reply (its instruction slot) and the data bytes it carries back.
    pub atomic: Option<u16>,
    pub bytes: u16,
}

pub use crate::config::PACKET_HEADER_BYTES;

impl MemRequest {
    /// Flits the request occupies on the network: a read is its 8-byte header, a write or an
    /// atomic its data and the header (GPGPU-Sim 3.2.2 mem_fetch.cc, `mem_fetch::get_num_flits`:
    /// `size()` = data + `READ_PACKET_SIZE`/`WRITE_PACKET_SIZE`, 8 bytes; a 128 B store is 5
    /// flits of 32 B, not 4).
    pub fn flits(&self, flit_bytes: u32) -> u32 {
        if self.write || self.atomic.is_some() {
            (self.bytes as u32 + PACKET_HEADER_BYTES).div_ceil(flit_bytes)
        } else {
            PACKET_HEADER_BYTES.div_ceil(flit_bytes)
        }
    }
    pub fn reply(&self) -> MemReply {
        MemReply {
            id: self.id,
            line: self.line,
            sm: self.sm,
            warp: self.warp,
            write: self.write,
            atomic: self.atomic,
            bytes: self.bytes,
        }
    }
}

impl MemReply {
    /// A read reply carries a whole line and the header, an atomic's its access's data and
    /// the header (`get_num_flits`: the L1D bypassed, the reply is the access size); an
    /// acknowledgement is the header alone.
    pub fn flits(&self, flit_bytes: u32, line_bytes: u32) -> u32 {
        let data = if self.write {
            0
        } else if self.atomic.is_some() {
            self.bytes as u32
        } else {
            line_bytes
        };
        (data + PACKET_HEADER_BYTES).div_ceil(flit_bytes)
    }
}

/// Which memory channel (L2 partition) holds a line, and where in the channel it lies, by
/// the address map (GPGPU-Sim 3.2.2 `addrdec.cc`; GTX480: 256 B chunks round six channels).
#[derive(Clone, Debug)]
pub struct ChannelMap {
    dec: addrdec::AddrDec,
    line_bytes: u64,
}

impl ChannelMap {
    /// The map of a validated configuration.
    pub fn new(c: &crate::config::Config) -> Result<ChannelMap, String> {
        Ok(ChannelMap {
            dec: addrdec::AddrDec::parse(&c.dram_address_map, c.l2_partitions, c.l2_sub_partitions)?,
            line_bytes: c.line_bytes as u64,
        })
    }
    pub fn decoder(&self) -> &addrdec::AddrDec {
        &self.dec
    }
    pub fn channel(&self, line: u64) -> usize {
        self.dec.chip(line * self.line_bytes) as usize
    }
    /// The line's index inside its channel (dense: consecutive lines of one channel).
    pub fn local_line(&self, line: u64) -> u64 {
        self.dec.local(line * self.line_bytes) / self.line_bytes
    }
    /// Inverse of [`local_line`](Self::local_line).
    pub fn global_line(&self, local: u64, channel: usize) -> u64 {
        self.dec.global(local * self.line_bytes, channel as u32) / self.line_bytes
    }
    /// The line's global L2 sub-partition (GPGPU-Sim 3.2.2 `addrdec_tlx`: channel ×
    /// sub-partitions + the sub-partition bank bits).
    pub fn sub_partition(&self, line: u64) -> usize {
        self.dec.global_sub_partition(line * self.line_bytes) as usize
    }
    /// The line's index inside its sub-partition's L2 slice (3.2.2 `partition_address`).
    pub fn slice_line(&self, line: u64) -> u64 {
        self.dec.partition_address(line * self.line_bytes) / self.line_bytes
    }
    /// Inverse of [`slice_line`](Self::slice_line) for global sub-partition `sub` of
    /// `subs` per channel.
    pub fn line_of_slice(&self, slice_line: u64, sub: usize, subs: usize) -> u64 {
        self.dec.from_partition_address(
            slice_line * self.line_bytes,
            (sub / subs) as u32,
            (sub % subs) as u32,
        ) / self.line_bytes
    }
}

/// The interconnect destination of a line: its L2 sub-partition (GPGPU-Sim 3.2.2 has
/// `n_mem × n_sub_partition_per_mchannel` memory ports on the network, gpu-sim.cc
/// `gpgpu_sim::gpgpu_sim`: `icnt_create(n_simt_clusters, m_n_mem_sub_partition)`; the request goes to `mf->get_sub_partition_id()`).
pub fn partition_of(line: u64, map: &ChannelMap) -> usize {
    map.sub_partition(line)
}
