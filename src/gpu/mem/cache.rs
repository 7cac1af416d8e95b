//! Set-associative tag array with LRU replacement and line reservation, and the MSHR table.
//! One type of each serves both the L1 and the L2; the access policies (what a miss does,
//! the write policy) live with their users.

/// State of a cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineState {
    Invalid,
    /// Allocated on a miss, data not yet filled; cannot be evicted.
    Reserved,
    Valid,
}

#[derive(Clone, Copy, Debug)]
struct Way {
    line: u64,
    state: LineState,
    dirty: bool,
    last_use: u64,
    /// Warp slot that allocated the line (CCWS's lost-locality detector reads it).
    owner: u8,
}

/// Result of looking a line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Hit,
    /// The line is allocated and waiting for its fill.
    Reserved,
    Miss,
}

/// A line pushed out by an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eviction {
    pub line: u64,
    pub dirty: bool,
    pub owner: u8,
}

#[derive(Clone, Debug)]
pub struct TagArray {
    sets: u64,
    /// Lines between consecutive lines this array holds (1, or the interleave factor).
    stride: u64,
    ways: usize,
    lines: Vec<Way>,
}

impl TagArray {
    pub fn new(sets: u32, ways: u32) -> Self {
        let empty = Way {
            line: 0,
            state: LineState::Invalid,
            dirty: false,
            last_use: 0,
            owner: 0,
        };
        TagArray {
            sets: sets as u64,
            stride: 1,
            ways: ways as usize,
            lines: vec![empty; (sets * ways) as usize],
        }
    }

    /// A tag array that holds every `stride`-th line (an L2 partition of an interleaved L2).
    pub fn interleaved(sets: u32, ways: u32, stride: u32) -> Self {
        TagArray {
            stride: stride as u64,
            ..TagArray::new(sets, ways)
        }
    }

    fn set(&self, line: u64) -> std::ops::Range<usize> {
        let s = (line / self.stride % self.sets) as usize * self.ways;
        s..s + self.ways
    }

    fn find(&self, line: u64) -> Option<usize> {
        self.set(line)
            .find(|&i| self.lines[i].state != LineState::Invalid && self.lines[i].line == line)
    }

    pub fn probe(&self, line: u64) -> Probe {
        match self.find(line).map(|i| self.lines[i].state) {
            Some(LineState::Valid) => Probe::Hit,
            Some(LineState::Reserved) => Probe::Reserved,
            _ => Probe::Miss,
        }
    }

    /// Marks a line as most recently used: a hit, or an access merged into its pending fill
    /// (3.2.2 `tag_array::access`: HIT_RESERVED falls through to HIT's
    /// `m_last_access_time = time`).
    pub fn touch(&mut self, line: u64, now: u64) {
        if let Some(i) = self.find(line) {
            self.lines[i].last_use = now;
        }
    }

    /// Whether a miss to `line` could allocate a way now (an invalid way, or a valid one to
    /// evict; reserved ways cannot be evicted).
    pub fn can_allocate(&self, line: u64) -> bool {
        self.set(line).any(|i| self.lines[i].state != LineState::Reserved)
    }

    /// The eviction an allocation of `line` would cause, without doing it.
    pub fn victim(&self, line: u64) -> Option<Eviction> {
        let i = self.victim_index(line)?;
        let w = self.lines[i];
        (w.state == LineState::Valid).then_some(Eviction {
            line: w.line,
            dirty: w.dirty,
            owner: w.owner,
        })
    }

    fn victim_index(&self, line: u64) -> Option<usize> {
        let set = self.set(line);
        if let Some(i) = set.clone().find(|&i| self.lines[i].state == LineState::Invalid) {
            return Some(i);
        }
        set.filter(|&i| self.lines[i].state == LineState::Valid)
            .min_by_key(|&i| self.lines[i].last_use)
    }

    /// Allocates a way for `line` in `state` (Reserved for a fill to come, Valid for a write
    /// allocation). Returns the evicted valid line, if any. The caller checks
    /// [`can_allocate`](Self::can_allocate) first.
    pub fn allocate(&mut self, line: u64, state: LineState, dirty: bool, now: u64) -> Option<Eviction> {
        self.allocate_for(line, state, dirty, now, 0)
    }

    /// [`allocate`](Self::allocate), recording the warp slot that allocated the line.
    pub fn allocate_for(
        &mut self,
        line: u64,
        state: LineState,
        dirty: bool,
        now: u64,
        owner: u8,
    ) -> Option<Eviction> {
        let i = self.victim_index(line).expect("caller checked can_allocate");
        let old = self.lines[i];
        self.lines[i] = Way {
            line,
            state,
            dirty,
            last_use: now,
            owner,
        };
        (old.state == LineState::Valid).then_some(Eviction {
            line: old.line,
            dirty: old.dirty,
            owner: old.owner,
        })
    }

    /// A reserved line's data arrived. Its LRU stamp stays the last access's: GPGPU-Sim
    /// 3.2.2 gpu-cache.h `cache_block_t::fill` sets `m_fill_time` only, and LRU picks by
    /// `m_last_access_time`, set at allocation and at each hit or pending hit
    /// (`tag_array::access`).
    pub fn fill(&mut self, line: u64) {
        if let Some(i) = self.find(line) {
            self.lines[i].state = LineState::Valid;
        }
    }

    /// Marks a present line dirty (write-back caches).
    pub fn mark_dirty(&mut self, line: u64) {
        if let Some(i) = self.find(line) {
            self.lines[i].dirty = true;
        }
    }

    /// Drops every valid line, as GPGPU-Sim 3.2.2's `tag_array::flush` (gpu-cache.cc) does
    /// between kernels when asked; reserved lines (fills under way) stay.
    pub fn invalidate_all(&mut self) {
        for w in &mut self.lines {
            if w.state == LineState::Valid {
                w.state = LineState::Invalid;
                w.dirty = false;
            }
        }
    }

    /// Drops a valid line (the Fermi L1 on a store hit). Reserved lines stay.
    pub fn invalidate(&mut self, line: u64) {
        if let Some(i) = self.find(line) {
            if self.lines[i].state == LineState::Valid {
                self.lines[i].state = LineState::Invalid;
            }
        }
    }
}

/// Miss status holding registers: one entry per missing line, each holding up to `merge`
/// waiters (the first miss and the requests merged into it).
#[derive(Clone, Debug)]
pub struct MshrTable<W: Copy + Default> {
    /// Line of each entry, `FREE` when unused (a flat array the lookup scans quickly).
    lines: Vec<u64>,
    opened_at: Vec<u64>,
    counts: Vec<u8>,
    waiters: Vec<W>,
    merge: usize,
    used: usize,
}

/// Marks an unused MSHR entry (no real line address is this large).
const FREE: u64 = u64::MAX;

impl<W: Copy + Default> MshrTable<W> {
    pub fn new(entries: u32, merge: u32) -> Self {
        MshrTable {
            lines: vec![FREE; entries as usize],
            opened_at: vec![0; entries as usize],
            counts: vec![0; entries as usize],
            waiters: vec![W::default(); (entries * merge) as usize],
            merge: merge as usize,
            used: 0,
        }
    }
    pub fn entries(&self) -> usize {
        self.lines.len()
    }
    pub fn used(&self) -> usize {
        self.used
    }
    pub fn is_full(&self) -> bool {
        self.used == self.lines.len()
    }
    fn find(&self, line: u64) -> Option<usize> {
        self.lines.iter().position(|&l| l == line)
    }
    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
    }
    /// Whether another request to `line` can merge into its entry.
    pub fn can_merge(&self, line: u64) -> bool {
        self.find(line)
            .is_some_and(|i| (self.counts[i] as usize) < self.merge)
    }
    /// Opens an entry for `line`. The caller checks it is absent and the table not full.
    pub fn open(&mut self, line: u64, waiter: W, now: u64) {
        debug_assert!(line != FREE && !self.contains(line));
        let i = self.find(FREE).expect("caller checked is_full");
        self.lines[i] = line;
        self.opened_at[i] = now;
        self.counts[i] = 1;
        self.waiters[i * self.merge] = waiter;
        self.used += 1;
    }
    /// Adds a waiter to `line`'s entry. The caller checks [`can_merge`](Self::can_merge).
    pub fn merge(&mut self, line: u64, waiter: W) {
        let i = self.find(line).expect("caller checked can_merge");
        let n = self.counts[i] as usize;
        self.waiters[i * self.merge + n] = waiter;
        self.counts[i] += 1;
    }
    /// Closes `line`'s entry, handing each waiter to `f`. Returns the cycle the entry was
    /// opened, or None if there was no entry.
    pub fn release(&mut self, line: u64, mut f: impl FnMut(W)) -> Option<u64> {
        let i = self.find(line)?;
        let n = self.counts[i] as usize;
        for k in 0..n {
            f(self.waiters[i * self.merge + k]);
        }
        self.counts[i] = 0;
        self.lines[i] = FREE;
        self.used -= 1;
        Some(self.opened_at[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_least_recently_used_and_skips_reserved() {
        let mut t = TagArray::new(1, 2);
        assert_eq!(t.allocate(10, LineState::Valid, false, 1), None);
        assert_eq!(t.allocate(11, LineState::Valid, false, 2), None);
        t.touch(10, 3);
        assert_eq!(
            t.allocate(12, LineState::Reserved, false, 4),
            Some(Eviction {
                line: 11,
                dirty: false,
                owner: 0
            })
        );
        assert_eq!(t.probe(12), Probe::Reserved);
        // 10 is the only evictable way now.
        assert_eq!(
            t.victim(13),
            Some(Eviction {
                line: 10,
                dirty: false,
                owner: 0
            })
        );
        t.allocate(13, LineState::Reserved, false, 5);
        assert!(!t.can_allocate(14), "both ways reserved");
        t.fill(12);
        assert_eq!(t.probe(12), Probe::Hit);
    }

    /// 3.2.2's LRU order is by last access (allocation, hit, pending hit), not by fill: a line
    /// allocated early and filled late is still the older one.
    #[test]
    fn lru_ignores_the_fill_and_counts_a_pending_hit_as_a_use() {
        let mut t = TagArray::new(1, 2);
        t.allocate(10, LineState::Reserved, false, 1);
        t.allocate(11, LineState::Valid, false, 2);
        t.fill(10);
        assert_eq!(t.victim(12).map(|e| e.line), Some(10), "filled last, used first");
        // A pending hit on 20 (allocated before 21) makes 21 the older line.
        let mut t = TagArray::new(1, 2);
        t.allocate(20, LineState::Reserved, false, 1);
        t.allocate(21, LineState::Valid, false, 2);
        t.touch(20, 3);
        t.fill(20);
        assert_eq!(t.victim(22).map(|e| e.line), Some(21));
    }

    #[test]
    fn mshr_merges_up_to_limit_and_releases_all() {
        let mut m: MshrTable<u16> = MshrTable::new(2, 3);
        m.open(5, 1, 0);
        assert!(m.can_merge(5));
        m.merge(5, 2);
        m.merge(5, 3);
        assert!(!m.can_merge(5), "merge limit counts the first request");
        m.open(6, 9, 0);
        assert!(m.is_full());
        let mut got = vec![];
        assert_eq!(m.release(5, |w| got.push(w)), Some(0));
        assert_eq!(got, vec![1, 2, 3]);
        assert_eq!(m.used(), 1);
    }
}
