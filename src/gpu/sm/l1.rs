//! The L1 data cache: tag array, MSHRs and miss queue, with GPGPU-Sim 3.2.2's access rules.
//!
//! A read miss needs an MSHR (or room to merge into the line's open one), a way to reserve
//! and a miss-queue slot; lacking any, the access is a *reservation failure* and the LD/ST
//! unit must retry it. Stores follow the Fermi policy: a store hit evicts the line, every
//! store writes through to L2, and a store miss allocates nothing.

use std::collections::VecDeque;

use crate::config::Config;
use crate::gpu::mem::cache::{Eviction, LineState, MshrTable, Probe, TagArray};
use crate::gpu::mem::MemRequest;
use crate::stats::CacheStats;

/// Why an access could not be accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailCause {
    MshrFull,
    MergeLimit,
    MissQueueFull,
    LineAlloc,
}

/// What happened to one L1 access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Hit,
    /// Merged into the MSHR of a line already being fetched.
    HitReserved,
    /// Sent below: a new MSHR (reads) or a write-through (stores).
    Miss,
    Fail(FailCause),
}

impl Outcome {
    pub fn accepted(self) -> bool {
        !matches!(self, Outcome::Fail(_))
    }
}

#[derive(Clone, Debug)]
pub struct L1 {
    tags: TagArray,
    /// Waiters are in-flight load ids of the SM.
    mshrs: MshrTable<u16>,
    /// Requests waiting to enter the interconnect.
    pub miss_queue: VecDeque<MemRequest>,
    miss_queue_size: usize,
    pub stats: CacheStats,
    /// The valid line the last allocating miss evicted (CCWS reads it).
    pub last_eviction: Option<Eviction>,
}

impl L1 {
    pub fn new(c: &Config) -> Self {
        L1 {
            tags: TagArray::new(c.l1_sets, c.l1_ways),
            mshrs: MshrTable::new(c.l1_mshrs, c.l1_mshr_merge),
            miss_queue: VecDeque::with_capacity(c.l1_miss_queue as usize),
            miss_queue_size: c.l1_miss_queue as usize,
            stats: CacheStats::default(),
            last_eviction: None,
        }
    }

    /// Starts the next kernel of a sequence: the lines stay (dropped with `flush`, as
    /// `-gpgpu_flush_l1_cache` does) and the counters start from zero.
    pub fn next_kernel(&mut self, flush: bool) {
        if flush {
            self.tags.invalidate_all();
        }
        self.stats = CacheStats::default();
        self.last_eviction = None;
    }

    /// GPGPU-Sim treats the miss queue as full at `size - 1` entries.
    fn miss_queue_full(&self) -> bool {
        self.miss_queue.len() + 1 >= self.miss_queue_size
    }

    pub fn mshrs_used(&self) -> usize {
        self.mshrs.used()
    }
    pub fn miss_queue_used(&self) -> usize {
        self.miss_queue.len()
    }

    fn fail(&mut self, cause: FailCause) -> Outcome {
        match cause {
            FailCause::MshrFull => self.stats.fail_mshr_full += 1,
            FailCause::MergeLimit => self.stats.fail_merge_limit += 1,
            FailCause::MissQueueFull => self.stats.fail_miss_queue_full += 1,
            FailCause::LineAlloc => self.stats.fail_line_alloc += 1,
        }
        Outcome::Fail(cause)
    }

    /// A global load of `line` for in-flight load `load`. On `Miss` the request built by
    /// `request` enters the miss queue.
    /// Whether a load (or store) of `line` would be accepted now, without doing it.
    pub fn would_accept(&self, line: u64, store: bool) -> bool {
        if store {
            return !self.miss_queue_full();
        }
        match self.tags.probe(line) {
            Probe::Hit => true,
            Probe::Reserved => self.mshrs.can_merge(line),
            Probe::Miss => !self.miss_queue_full() && !self.mshrs.is_full() && self.tags.can_allocate(line),
        }
    }

    /// Whether a load of `line` would hit now.
    pub fn would_hit(&self, line: u64) -> bool {
        self.tags.probe(line) == Probe::Hit
    }

    /// A global load of `line` by warp `warp` for in-flight load `load`. On `Miss` the
    /// request built by `request` enters the miss queue.
    pub fn load(
        &mut self,
        line: u64,
        warp: u8,
        load: u16,
        now: u64,
        request: impl FnOnce() -> MemRequest,
    ) -> Outcome {
        self.stats.accesses += 1;
        match self.tags.probe(line) {
            Probe::Hit => {
                self.tags.touch(line, now);
                self.stats.hits += 1;
                Outcome::Hit
            }
            Probe::Reserved => {
                if self.mshrs.can_merge(line) {
                    self.mshrs.merge(line, load);
                    self.stats.hit_reserved += 1;
                    Outcome::HitReserved
                } else {
                    self.fail(FailCause::MergeLimit)
                }
            }
            Probe::Miss => {
                if self.miss_queue_full() {
                    self.fail(FailCause::MissQueueFull)
                } else if self.mshrs.is_full() {
                    self.fail(FailCause::MshrFull)
                } else if !self.tags.can_allocate(line) {
                    self.fail(FailCause::LineAlloc)
                } else {
                    self.last_eviction = self
                        .tags
                        .allocate_for(line, LineState::Reserved, false, now, warp);
                    self.mshrs.open(line, load, now);
                    self.miss_queue.push_back(request());
                    self.stats.misses += 1;
                    Outcome::Miss
                }
            }
        }
    }

    /// A global store to `line`: write-through, evict on hit, no allocation on miss.
    pub fn store(&mut self, line: u64, request: impl FnOnce() -> MemRequest) -> Outcome {
        self.stats.accesses += 1;
        if self.miss_queue_full() {
            return self.fail(FailCause::MissQueueFull);
        }
        if self.tags.probe(line) == Probe::Hit {
            self.tags.invalidate(line);
            self.stats.write_hits += 1;
        } else {
            self.stats.write_misses += 1;
        }
        self.miss_queue.push_back(request());
        Outcome::Miss
    }

    /// The data for `line` arrived: the line becomes valid and every load waiting on it is
    /// handed to `done`. Returns the cycles since the miss went out.
    pub fn fill(&mut self, line: u64, now: u64, done: impl FnMut(u16)) -> u64 {
        self.tags.fill(line, now);
        self.stats.fills += 1;
        let opened = self
            .mshrs
            .release(line, done)
            .expect("a fill answers an open MSHR");
        now - opened
    }

    /// Per-cycle occupancy counters.
    pub fn sample(&mut self) {
        if self.mshrs.is_full() {
            self.stats.cycles_mshr_full += 1;
        }
        if self.miss_queue_full() {
            self.stats.cycles_miss_queue_full += 1;
        }
    }

    pub fn is_quiet(&self) -> bool {
        self.mshrs.used() == 0 && self.miss_queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(line: u64) -> MemRequest {
        MemRequest {
            id: 0,
            line,
            sm: 0,
            warp: 0,
            write: false,
            bytes: 0,
        }
    }

    #[test]
    fn merge_then_merge_limit_then_fill() {
        let c = Config {
            l1_mshr_merge: 2,
            ..Config::default()
        };
        let mut l1 = L1::new(&c);
        assert_eq!(l1.load(7, 0, 1, 0, || req(7)), Outcome::Miss);
        assert_eq!(l1.load(7, 0, 2, 1, || req(7)), Outcome::HitReserved);
        assert_eq!(
            l1.load(7, 0, 3, 2, || req(7)),
            Outcome::Fail(FailCause::MergeLimit)
        );
        let mut woken = vec![];
        l1.fill(7, 3, |l| woken.push(l));
        assert_eq!(woken, vec![1, 2]);
        assert_eq!(l1.load(7, 0, 4, 4, || req(7)), Outcome::Hit);
        let s = &l1.stats;
        assert_eq!(
            s.accesses,
            s.hits + s.hit_reserved + s.misses + s.reservation_fails()
        );
    }

    #[test]
    fn reservation_fails_when_mshrs_or_miss_queue_run_out() {
        let c = Config {
            l1_mshrs: 2,
            l1_miss_queue: 8,
            ..Config::default()
        };
        let mut l1 = L1::new(&c);
        assert_eq!(l1.load(1, 0, 0, 0, || req(1)), Outcome::Miss);
        assert_eq!(l1.load(2, 0, 0, 0, || req(2)), Outcome::Miss);
        assert_eq!(l1.load(3, 0, 0, 0, || req(3)), Outcome::Fail(FailCause::MshrFull));
        let c = Config {
            l1_miss_queue: 3,
            ..Config::default()
        };
        let mut l1 = L1::new(&c);
        assert_eq!(l1.load(1, 0, 0, 0, || req(1)), Outcome::Miss);
        assert_eq!(l1.load(2, 0, 0, 0, || req(2)), Outcome::Miss);
        // size - 1 = 2 entries used: full.
        assert_eq!(
            l1.load(3, 0, 0, 0, || req(3)),
            Outcome::Fail(FailCause::MissQueueFull)
        );
        assert_eq!(l1.store(3, || req(3)), Outcome::Fail(FailCause::MissQueueFull));
    }

    #[test]
    fn all_ways_reserved_is_a_line_allocation_failure() {
        let c = Config {
            l1_sets: 1,
            l1_ways: 2,
            ..Config::default()
        };
        let mut l1 = L1::new(&c);
        l1.load(1, 0, 0, 0, || req(1));
        l1.load(2, 0, 0, 0, || req(2));
        assert_eq!(
            l1.load(3, 0, 0, 0, || req(3)),
            Outcome::Fail(FailCause::LineAlloc)
        );
    }

    #[test]
    fn store_hit_evicts_fermi_style() {
        let mut l1 = L1::new(&Config::default());
        l1.load(9, 0, 0, 0, || req(9));
        l1.fill(9, 1, |_| {});
        assert_eq!(l1.load(9, 0, 0, 2, || req(9)), Outcome::Hit);
        l1.store(9, || req(9));
        assert_eq!(
            l1.load(9, 0, 0, 3, || req(9)),
            Outcome::Miss,
            "the store evicted the line"
        );
    }
}
