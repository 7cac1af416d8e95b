//! CAR's re-execution queue (slides 13–14, spec §5): memory instructions the L1 could not
//! accept leave the LD/ST head and wait here with their generated line requests, so later
//! requests reach the cache. At most one entry per warp (keeps each warp's memory order);
//! entries are retried oldest first; with MAS in MP a non-owner entry gets hit-only service.

use crate::gpu::sm::coalescer::{Coalesced, LineRequest};

/// A parked memory instruction.
#[derive(Clone, Debug, Default)]
pub struct Entry {
    pub valid: bool,
    pub warp: u8,
    pub store: bool,
    /// In-flight load id (loads).
    pub load: u16,
    /// Its line requests and the next one to send.
    pub lines: Coalesced,
    pub next: usize,
    /// Arrival order, for oldest-first retry.
    pub seq: u64,
}

impl Entry {
    pub fn next_line(&self) -> LineRequest {
        self.lines.lines[self.next]
    }
}

#[derive(Clone, Debug)]
pub struct ReexecQueue {
    entries: Vec<Entry>,
    /// Bit w: warp w has an entry.
    warps: u64,
    used: usize,
    next_seq: u64,
}

impl ReexecQueue {
    pub fn new(depth: u32) -> Self {
        ReexecQueue {
            entries: vec![Entry::default(); depth as usize],
            warps: 0,
            used: 0,
            next_seq: 0,
        }
    }
    pub fn depth(&self) -> usize {
        self.entries.len()
    }
    pub fn occupancy(&self) -> usize {
        self.used
    }
    pub fn is_full(&self) -> bool {
        self.used == self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }
    /// Warps holding an entry.
    pub fn warp_mask(&self) -> u64 {
        self.warps
    }
    pub fn holds(&self, warp: u8) -> bool {
        self.warps >> warp & 1 == 1
    }

    /// Parks an instruction: `lines[next..]` are still to be sent. The caller checks there
    /// is room and the warp holds no entry.
    pub fn push(&mut self, warp: u8, store: bool, load: u16, lines: &Coalesced, next: usize) {
        debug_assert!(!self.is_full() && !self.holds(warp));
        let slot = self
            .entries
            .iter()
            .position(|e| !e.valid)
            .expect("caller checked is_full");
        let e = &mut self.entries[slot];
        e.valid = true;
        e.warp = warp;
        e.store = store;
        e.load = load;
        e.lines.clone_from(lines);
        e.next = next;
        e.seq = self.next_seq;
        self.next_seq += 1;
        self.warps |= 1 << warp;
        self.used += 1;
    }

    /// The oldest entry for which `can_progress` holds, if any.
    pub fn select(&self, mut can_progress: impl FnMut(&Entry) -> bool) -> Option<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.valid && can_progress(e))
            .min_by_key(|(_, e)| e.seq)
            .map(|(i, _)| i)
    }

    pub fn entry(&self, slot: usize) -> &Entry {
        &self.entries[slot]
    }

    /// One line of entry `slot` was accepted. Returns the entry when it has sent its last
    /// line (and frees it).
    pub fn advance(&mut self, slot: usize) -> Option<(u8, bool, u16)> {
        let e = &mut self.entries[slot];
        e.next += 1;
        if e.next < e.lines.len {
            return None;
        }
        e.valid = false;
        self.warps &= !(1 << e.warp);
        self.used -= 1;
        Some((e.warp, e.store, e.load))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Coalesced {
        let mut c = Coalesced::default();
        for i in 0..n {
            c.lines[i] = LineRequest {
                line: i as u64,
                bytes: 4,
            };
        }
        c.len = n;
        c
    }

    #[test]
    fn one_entry_per_warp_oldest_first_and_frees_when_done() {
        let mut q = ReexecQueue::new(2);
        q.push(5, false, 1, &lines(2), 1);
        q.push(3, false, 2, &lines(3), 0);
        assert!(q.is_full() && q.holds(5) && q.holds(3));
        assert_eq!(q.select(|_| true), Some(0), "warp 5 arrived first");
        assert_eq!(q.select(|e| e.warp == 3), Some(1));
        assert_eq!(
            q.advance(0),
            Some((5, false, 1)),
            "its one remaining line was sent"
        );
        assert!(!q.holds(5) && q.occupancy() == 1);
        assert_eq!(q.advance(1), None);
        assert_eq!(q.entry(1).next_line().line, 1);
    }
}
