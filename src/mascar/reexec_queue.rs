//! CAR's re-execution queue (slides 13–14, spec §5), behavioural twin of its control: memory
//! instructions the L1 could not accept leave the LD/ST head and wait here, so later requests
//! reach the cache. An entry holds the refused instruction's remaining line requests
//! (`car_entry = instruction`, one entry per warp) or a single refused line request
//! (`access`: a warp's entries then all belong to one instruction); either keeps each warp's
//! memory order. The oldest entry that can progress is offered for retry; the LD/ST unit
//! decides whether it or the head uses the port (`car_retry`). With MAS in MP a non-owner
//! entry gets hit-only service.
//!
//! The control holds valid bits, each entry's warp and arrival stamp; the entries' line
//! requests live beside it in [`Parked`], indexed by entry, where the LD/ST unit reads them.

use super::ports::{QueueIn, QueueOut};
use crate::gpu::sm::coalescer::{Coalesced, LineRequest};

#[derive(Clone, Debug)]
pub struct ReexecQueue {
    depth: usize,
    valid: u64,
    warp: [u8; 64],
    /// Arrival order (smaller = older); distinct for valid entries.
    stamp: [u32; 64],
    next_stamp: u32,
}

impl ReexecQueue {
    pub fn new(depth: u32) -> Self {
        ReexecQueue {
            depth: depth as usize,
            valid: 0,
            warp: [0; 64],
            stamp: [0; 64],
            next_stamp: 0,
        }
    }
    pub fn depth(&self) -> usize {
        self.depth
    }
    /// Valid entries.
    pub fn valid(&self) -> u64 {
        self.valid
    }
    pub fn warp_of(&self, entry: usize) -> u8 {
        self.warp[entry]
    }
    pub fn occupancy(&self) -> usize {
        self.valid.count_ones() as usize
    }
    pub fn is_empty(&self) -> bool {
        self.valid == 0
    }
    pub fn is_full(&self) -> bool {
        self.occupancy() == self.depth
    }
    /// Warps holding an entry.
    pub fn warp_mask(&self) -> u64 {
        let mut m = self.valid;
        let mut warps = 0;
        while m != 0 {
            warps |= 1u64 << self.warp[m.trailing_zeros() as usize];
            m &= m - 1;
        }
        warps
    }

    /// Settles: hit-only marking, the oldest entry that can progress, the slot a push takes.
    pub fn eval(&self, i: &QueueIn) -> QueueOut {
        let mut hit_only = 0u64;
        let mut select: Option<u8> = None;
        let mut m = self.valid;
        while m != 0 {
            let e = m.trailing_zeros() as usize;
            m &= m - 1;
            let bit = 1u64 << e;
            let restricted = i.mp && i.owner != Some(self.warp[e]);
            if restricted {
                hit_only |= bit;
            }
            let can = if restricted {
                i.hit & !i.store & bit != 0
            } else {
                i.accept & bit != 0
            };
            if can && select.is_none_or(|s| self.stamp[e] < self.stamp[s as usize]) {
                select = Some(e as u8);
            }
        }
        let free = !self.valid & low_mask(self.depth);
        let occupancy = self.occupancy();
        QueueOut {
            select,
            alloc: (free != 0).then(|| free.trailing_zeros() as u8),
            hit_only,
            warps: self.warp_mask(),
            occupancy: occupancy as u8,
            full: occupancy == self.depth,
            almost_full: occupancy + 1 >= self.depth,
        }
    }

    /// Clock edge: free the finished entry, take the pushed one.
    pub fn clock(&mut self, i: &QueueIn) {
        let alloc = self.eval(i).alloc;
        if let Some(e) = i.free {
            self.valid &= !(1u64 << e);
        }
        if let (Some(w), Some(e)) = (i.push, alloc) {
            self.valid |= 1u64 << e;
            self.warp[e as usize] = w;
            self.stamp[e as usize] = self.next_stamp;
            self.next_stamp = self.next_stamp.wrapping_add(1);
        }
    }
}

fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// A parked memory instruction's data, beside the queue's control.
#[derive(Clone, Debug, Default)]
pub struct Parked {
    pub warp: u8,
    pub store: bool,
    /// In-flight load id (loads).
    pub load: u16,
    /// Its line requests and the next one to send.
    pub lines: Coalesced,
    pub next: usize,
}

impl Parked {
    pub fn next_line(&self) -> LineRequest {
        self.lines.lines[self.next]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(q: &mut ReexecQueue, warp: u8) -> u8 {
        let i = QueueIn {
            push: Some(warp),
            ..QueueIn::default()
        };
        let e = q.eval(&i).alloc.expect("room");
        q.clock(&i);
        e
    }

    #[test]
    fn oldest_first_lowest_free_slot_and_hit_only_for_non_owners_in_mp() {
        let mut q = ReexecQueue::new(3);
        assert_eq!(push(&mut q, 5), 0);
        assert_eq!(push(&mut q, 3), 1);
        let all = QueueIn {
            accept: 0b111,
            ..QueueIn::default()
        };
        assert_eq!(q.eval(&all).select, Some(0), "warp 5 arrived first");
        q.clock(&QueueIn { free: Some(0), ..all });
        assert_eq!(push(&mut q, 7), 0, "the freed slot is reused");
        let out = q.eval(&all);
        assert_eq!(
            (out.select, out.warps, out.full),
            (Some(1), 1 << 3 | 1 << 7, false)
        );
        let mp = QueueIn {
            accept: 0b011,
            hit: 0b001,
            mp: true,
            owner: Some(3),
            ..QueueIn::default()
        };
        let out = q.eval(&mp);
        assert_eq!(out.hit_only, 0b001, "warp 7's entry is not the owner's");
        assert_eq!(out.select, Some(1), "the owner's entry is older and accepted");
        let mp_miss = QueueIn { accept: 0b001, ..mp };
        assert_eq!(q.eval(&mp_miss).select, Some(0), "non-owner hit");
        let mp_store = QueueIn {
            store: 0b001,
            ..mp_miss
        };
        assert_eq!(q.eval(&mp_store).select, None, "stores never hit-only");
        push(&mut q, 9);
        let out = q.eval(&QueueIn::default());
        assert!(out.full && out.alloc.is_none() && out.almost_full);
    }
}
