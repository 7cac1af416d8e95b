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
    /// Tag / MSHR lookups made at the LD/ST port (every access, whatever its outcome).
    lookups: u64,
    /// An MSHR was released / a miss-queue slot freed since the LD/ST unit last took these
    /// pulses (the re-execution queue's retry triggers).
    mshr_freed: bool,
    miss_queue_freed: bool,
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
            lookups: 0,
            mshr_freed: false,
            miss_queue_freed: false,
        }
    }

    /// Tag / MSHR lookups made at the LD/ST port so far (one per access: the port takes one
    /// access per cycle).
    pub fn lookups(&self) -> u64 {
        self.lookups
    }

    /// The MSHR-free and miss-queue-free pulses since the last call, cleared.
    pub fn take_free_pulses(&mut self) -> (bool, bool) {
        let p = (self.mshr_freed, self.miss_queue_freed);
        (self.mshr_freed, self.miss_queue_freed) = (false, false);
        p
    }

    /// The miss queue's head leaves for the interconnect.
    pub fn pop_request(&mut self) -> Option<MemRequest> {
        let r = self.miss_queue.pop_front();
        self.miss_queue_freed |= r.is_some();
        r
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

    /// GPGPU-Sim 3.2.2 gpu-cache.h `baseline_cache::miss_queue_full(num_miss)`:
    /// `m_miss_queue.size() + num_miss >= m_miss_queue_size`. Reads ask with 1
    /// (`data_cache::rd_miss_base`: "might need to generate two requests"), so a read is
    /// refused at `size - 1` entries; stores ask with 0 (`wr_hit_we`, `wr_miss_no_wa`).
    fn miss_queue_full(&self, num_miss: usize) -> bool {
        self.miss_queue.len() + num_miss >= self.miss_queue_size
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

    /// Hit-only service (a non-owner's access in MP): a load that hits is served as
    /// [`load`](Self::load) serves it; anything else is refused (`None`) without touching the
    /// cache, the MSHRs or the miss queue. Still one access of the port.
    pub fn load_hit_only(&mut self, line: u64, store: bool, now: u64) -> Option<Outcome> {
        self.lookups += 1;
        if store || self.tags.probe(line) != Probe::Hit {
            return None;
        }
        self.stats.accesses += 1;
        self.tags.touch(line, now);
        self.stats.hits += 1;
        Some(Outcome::Hit)
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
        self.lookups += 1;
        self.stats.accesses += 1;
        match self.tags.probe(line) {
            Probe::Hit => {
                self.tags.touch(line, now);
                self.stats.hits += 1;
                Outcome::Hit
            }
            // GPGPU-Sim 3.2.2 gpu-cache.cc `data_cache::process_tag_probe`: a read whose
            // probe is HIT_RESERVED is not a HIT, so it takes `m_rd_miss` =
            // `rd_miss_base`, which refuses it when `miss_queue_full(1)` before
            // `send_read_request` merges it (MSHR hit and `!m_mshrs.full(block)`, else
            // RESERVATION_FAIL: the merge limit).
            Probe::Reserved => {
                if self.miss_queue_full(1) {
                    self.fail(FailCause::MissQueueFull)
                } else if self.mshrs.can_merge(line) {
                    self.mshrs.merge(line, load);
                    self.tags.touch(line, now);
                    self.stats.hit_reserved += 1;
                    Outcome::HitReserved
                } else {
                    self.fail(FailCause::MergeLimit)
                }
            }
            Probe::Miss => {
                if self.miss_queue_full(1) {
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
    ///
    /// GTX480's `-gpgpu_cache:dl1 ...,L:L:m:N,...`: write policy `L` is
    /// `LOCAL_WB_GLOBAL_WT`, whose hit handler `wr_hit_global_we_local_wb` sends a global
    /// store (`GLOBAL_ACC_W`) to `wr_hit_we` (write-evict); write-allocate `N` is
    /// `wr_miss_no_wa` (GPGPU-Sim 3.2.2 gpu-cache.h `cache_config::init`, `data_cache`
    /// constructor). Both refuse the store only when `miss_queue_full(0)`: the queue holds
    /// `size` entries (gpu-cache.cc).
    pub fn store(&mut self, line: u64, request: impl FnOnce() -> MemRequest) -> Outcome {
        self.lookups += 1;
        self.stats.accesses += 1;
        if self.miss_queue_full(0) {
            return self.fail(FailCause::MissQueueFull);
        }
        // `wr_miss_no_wa` returns MISS for a store to a reserved line too, but
        // `select_stats_status` counts it as HIT_RESERVED (gpu-cache.cc).
        match self.tags.probe(line) {
            Probe::Hit => {
                self.tags.invalidate(line);
                self.stats.write_hits += 1;
            }
            Probe::Reserved => self.stats.write_hit_reserved += 1,
            Probe::Miss => self.stats.write_misses += 1,
        }
        self.miss_queue.push_back(request());
        Outcome::Miss
    }

    /// The data for `line` arrived: the line becomes valid and every load waiting on it is
    /// handed to `done`. Returns the cycles since the miss went out.
    pub fn fill(&mut self, line: u64, now: u64, done: impl FnMut(u16)) -> u64 {
        self.tags.fill(line);
        self.stats.fills += 1;
        let opened = self
            .mshrs
            .release(line, done)
            .expect("a fill answers an open MSHR");
        self.mshr_freed = true;
        now - opened
    }

    /// Per-cycle occupancy counters.
    pub fn sample(&mut self) {
        self.sample_for(1);
    }

    /// `cycles` calls of [`sample`](Self::sample) with nothing changing in between.
    pub fn sample_for(&mut self, cycles: u64) {
        if self.mshrs.is_full() {
            self.stats.cycles_mshr_full += cycles;
        }
        if self.miss_queue_full(1) {
            self.stats.cycles_miss_queue_full += cycles;
        }
    }

    /// An MSHR or miss-queue slot was freed since the LD/ST unit last looked.
    pub fn has_free_pulses(&self) -> bool {
        self.mshr_freed || self.miss_queue_freed
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
            atomic: None,
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
        // size - 1 = 2 entries used: full for a read (`miss_queue_full(1)`).
        assert_eq!(
            l1.load(3, 0, 0, 0, || req(3)),
            Outcome::Fail(FailCause::MissQueueFull)
        );
    }

    /// 3.2.2 `wr_hit_we` / `wr_miss_no_wa` check `miss_queue_full(0)`: a store is taken at
    /// `size - 1` entries and refused at `size`.
    #[test]
    fn a_store_is_refused_only_when_the_miss_queue_is_full() {
        let c = Config {
            l1_miss_queue: 3,
            ..Config::default()
        };
        let mut l1 = L1::new(&c);
        assert_eq!(l1.load(1, 0, 0, 0, || req(1)), Outcome::Miss);
        assert_eq!(l1.load(2, 0, 0, 0, || req(2)), Outcome::Miss);
        assert_eq!(l1.miss_queue_used(), 2);
        assert_eq!(l1.store(3, || req(3)), Outcome::Miss, "size - 1 entries: taken");
        assert_eq!(l1.miss_queue_used(), 3);
        assert_eq!(
            l1.store(4, || req(4)),
            Outcome::Fail(FailCause::MissQueueFull),
            "size entries: refused"
        );
        // A store hit (write-evict) obeys the same bound.
        let mut l1 = L1::new(&c);
        l1.load(9, 0, 0, 0, || req(9));
        l1.fill(9, 1, |_| {});
        l1.pop_request();
        l1.load(1, 0, 0, 2, || req(1));
        l1.load(2, 0, 0, 2, || req(2));
        l1.store(5, || req(5));
        assert_eq!(l1.store(9, || req(9)), Outcome::Fail(FailCause::MissQueueFull));
        assert_eq!(
            l1.load(9, 0, 0, 3, || req(9)),
            Outcome::Hit,
            "a refused store evicts nothing"
        );
    }

    /// 3.2.2 `rd_miss_base` checks `miss_queue_full(1)` before `send_read_request` merges a
    /// HIT_RESERVED read into its MSHR.
    #[test]
    fn a_hit_on_a_reserved_line_fails_at_a_full_miss_queue() {
        let c = Config {
            l1_miss_queue: 3,
            ..Config::default()
        };
        let mut l1 = L1::new(&c);
        assert_eq!(l1.load(1, 0, 0, 0, || req(1)), Outcome::Miss);
        assert_eq!(
            l1.load(1, 0, 1, 0, || req(1)),
            Outcome::HitReserved,
            "one entry: merged"
        );
        assert_eq!(l1.load(2, 0, 2, 0, || req(2)), Outcome::Miss);
        assert_eq!(
            l1.load(1, 0, 3, 0, || req(1)),
            Outcome::Fail(FailCause::MissQueueFull),
            "size - 1 entries: the merge is refused"
        );
        l1.pop_request();
        assert_eq!(l1.load(1, 0, 3, 1, || req(1)), Outcome::HitReserved);
        assert_eq!(l1.stats.fail_miss_queue_full, 1);
        assert_eq!(l1.stats.accesses, l1.stats.outcomes());
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
    fn free_pulses_and_hit_only_service_and_one_lookup_per_access() {
        let mut l1 = L1::new(&Config::default());
        assert_eq!(l1.take_free_pulses(), (false, false));
        assert_eq!(l1.load_hit_only(5, false, 0), None, "a miss is refused");
        assert_eq!(l1.load(5, 0, 0, 0, || req(5)), Outcome::Miss);
        assert!(l1.pop_request().is_some());
        assert_eq!(l1.take_free_pulses(), (false, true), "a request left");
        assert_eq!(l1.take_free_pulses(), (false, false), "pulses are taken once");
        l1.fill(5, 1, |_| {});
        assert_eq!(l1.take_free_pulses(), (true, false), "the fill released the MSHR");
        assert_eq!(l1.load_hit_only(5, false, 2), Some(Outcome::Hit));
        assert_eq!(l1.load_hit_only(5, true, 2), None, "stores are never hit-only");
        assert_eq!(l1.lookups(), 4, "every access is one lookup, refused or not");
        assert_eq!(l1.stats.accesses, l1.stats.outcomes());
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

    /// GPGPU-Sim 3.2.2 `cache_stats::select_stats_status`: a store whose probe is
    /// HIT_RESERVED is counted as HIT_RESERVED, not as the MISS `wr_miss_no_wa` returns; it
    /// still goes out, and the pending fill is untouched.
    #[test]
    fn a_store_to_a_reserved_line_is_counted_hit_reserved_not_miss() {
        let mut l1 = L1::new(&Config::default());
        assert_eq!(l1.load(4, 0, 0, 0, || req(4)), Outcome::Miss);
        assert_eq!(l1.store(4, || req(4)), Outcome::Miss);
        assert_eq!(l1.store(6, || req(6)), Outcome::Miss);
        let s = &l1.stats;
        assert_eq!(
            (s.misses, s.write_hit_reserved, s.write_misses, s.write_hits),
            (1, 1, 1, 0)
        );
        assert_eq!(s.accesses, s.outcomes());
        assert_eq!(l1.miss_queue_used(), 3, "the load and both stores go out");
        let mut woken = vec![];
        l1.fill(4, 5, |l| woken.push(l));
        assert_eq!(woken, vec![0], "the load's fill still answers it");
    }
}
