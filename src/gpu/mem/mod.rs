//! The memory system below the SMs: the set-associative cache parts shared by L1 and L2, the
//! interconnect, L2 partitions and DRAM.

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
    /// Data bytes a write carries.
    pub bytes: u16,
}

/// A reply from an L2 partition to an SM: read data, or a write acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemReply {
    pub id: u32,
    pub line: u64,
    pub sm: u16,
    pub warp: u8,
    pub write: bool,
}

impl MemRequest {
    /// Flits the request occupies on the network: a read is one header flit, a write carries
    /// its data.
    pub fn flits(&self, flit_bytes: u32) -> u32 {
        if self.write {
            (self.bytes as u32).div_ceil(flit_bytes).max(1)
        } else {
            1
        }
    }
    pub fn reply(&self) -> MemReply {
        MemReply {
            id: self.id,
            line: self.line,
            sm: self.sm,
            warp: self.warp,
            write: self.write,
        }
    }
}

impl MemReply {
    /// A read reply carries a whole line; an acknowledgement is one flit.
    pub fn flits(&self, flit_bytes: u32, line_bytes: u32) -> u32 {
        if self.write {
            1
        } else {
            line_bytes.div_ceil(flit_bytes)
        }
    }
}

/// L2 partition that owns a line: lines are interleaved across partitions.
pub fn partition_of(line: u64, partitions: u32) -> usize {
    (line % partitions as u64) as usize
}
