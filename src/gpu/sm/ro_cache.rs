//! The SM's two read-only caches beside the L1D: the texture cache (`ld.tex`) and the
//! constant cache (`ld.const`), with GPGPU-Sim 3.2.2's access rules.
//!
//! - [`TexCache`] is 3.2.2's `tex_cache` (gpu-cache.h/.cc): tags allocated on miss and marked
//!   valid at once, every accepted access queued in order in a *fragment FIFO*, misses in a
//!   *request FIFO* (towards the interconnect) and a *reorder buffer* (waiting for data); the
//!   fragment at the head leaves for the *result FIFO* when its data is there. An access is
//!   refused when the fragment FIFO, request FIFO or reorder buffer is full.
//! - [`ConstCache`] is 3.2.2's `read_only_cache`: LRU tags allocated on fill (`L:R:f:N`),
//!   MSHRs with merging, a miss queue; a hit is served at once.
//!
//! Lines here are in units of the cache's own line size; the request sent below carries the
//! memory line (`line_bytes`) that holds it. [design] A configured line larger than
//! `line_bytes` is cut to `line_bytes`: one miss is one memory request. Replies are matched
//! to a cache by request id.

use std::collections::VecDeque;

use crate::config::Config;
use crate::gpu::mem::cache::{LineState, MshrTable, Probe, TagArray};
use crate::gpu::mem::MemRequest;
use crate::stats::RoCacheStats;

/// Which read-only cache an access goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoKind {
    Tex,
    Const,
}

/// What one access to a read-only cache did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoOutcome {
    /// The line is present (texture: its data comes through the fragment FIFO).
    Hit,
    /// Merged into the MSHR of a line being fetched (constant cache).
    Merged,
    /// A request for the line was queued for the interconnect.
    Miss,
    /// Refused (a full MSHR table, miss queue or FIFO): the LD/ST unit retries next cycle.
    Fail,
}

impl RoOutcome {
    pub fn accepted(self) -> bool {
        self != RoOutcome::Fail
    }
}

#[derive(Clone, Copy, Debug)]
struct Fragment {
    load: u16,
    miss: bool,
    /// A hit's data is ready from this cycle (the hit latency after the access).
    ready_at: u64,
}

#[derive(Clone, Copy, Debug)]
struct RobEntry {
    id: u32,
    ready: bool,
}

/// GPGPU-Sim 3.2.2 `tex_cache`.
#[derive(Clone, Debug)]
pub struct TexCache {
    tags: TagArray,
    /// log2(memory line ÷ texture line).
    mem_shift: u32,
    hit_latency: u64,
    fragments: VecDeque<Fragment>,
    fragment_cap: usize,
    /// Misses waiting to enter the interconnect.
    pub requests: VecDeque<MemRequest>,
    request_cap: usize,
    rob: VecDeque<RobEntry>,
    rob_cap: usize,
    /// In-flight load ids whose line is ready for writeback.
    results: VecDeque<u16>,
    result_cap: usize,
}

impl TexCache {
    pub fn new(c: &Config) -> Self {
        TexCache {
            tags: TagArray::new(c.tex_sets, c.tex_ways),
            mem_shift: (c.line_bytes / c.tex_line_bytes.min(c.line_bytes)).trailing_zeros(),
            hit_latency: c.l1_hit_latency as u64,
            fragments: VecDeque::with_capacity(c.tex_fragment_fifo as usize),
            fragment_cap: c.tex_fragment_fifo as usize,
            requests: VecDeque::with_capacity(c.tex_request_fifo as usize),
            request_cap: c.tex_request_fifo as usize,
            rob: VecDeque::with_capacity(c.tex_rob as usize),
            rob_cap: c.tex_rob as usize,
            results: VecDeque::with_capacity(c.tex_result_fifo as usize),
            result_cap: c.tex_result_fifo as usize,
        }
    }

    /// The memory line holding texture line `line`.
    pub fn mem_line(&self, line: u64) -> u64 {
        line >> self.mem_shift
    }

    /// An access to texture line `line` for in-flight load `load`. On `Miss` the request
    /// built by `request` (for the memory line) joins the request FIFO.
    /// GPGPU-Sim 3.2.2 gpu-cache.cc, tex_cache::access
    pub fn access(
        &mut self,
        line: u64,
        load: u16,
        now: u64,
        st: &mut RoCacheStats,
        request: impl FnOnce(u64) -> MemRequest,
    ) -> RoOutcome {
        st.accesses += 1;
        if self.fragments.len() >= self.fragment_cap
            || self.requests.len() >= self.request_cap
            || self.rob.len() >= self.rob_cap
        {
            st.reservation_fails += 1;
            return RoOutcome::Fail;
        }
        if self.tags.probe(line) == Probe::Hit {
            self.tags.touch(line, now);
            st.hits += 1;
            self.fragments.push_back(Fragment {
                load,
                miss: false,
                ready_at: now + self.hit_latency,
            });
            return RoOutcome::Hit;
        }
        // Allocated on miss and valid at once (`m_tags.fill(cache_index)`): later accesses to
        // the line hit, and their fragments wait behind this one in the FIFO.
        self.tags.allocate(line, LineState::Valid, false, now);
        let r = request(self.mem_line(line));
        self.rob.push_back(RobEntry {
            id: r.id,
            ready: false,
        });
        self.requests.push_back(r);
        self.fragments.push_back(Fragment {
            load,
            miss: true,
            ready_at: u64::MAX,
        });
        st.misses += 1;
        RoOutcome::Miss
    }

    /// Whether reply `id` answers one of this cache's misses.
    pub fn owns(&self, id: u32) -> bool {
        self.rob.iter().any(|e| e.id == id && !e.ready)
    }

    /// The data for request `id` arrived: its reorder-buffer entry is ready.
    /// GPGPU-Sim 3.2.2 gpu-cache.cc, tex_cache::fill
    pub fn fill(&mut self, id: u32, st: &mut RoCacheStats) {
        if let Some(e) = self.rob.iter_mut().find(|e| e.id == id && !e.ready) {
            e.ready = true;
            st.fills += 1;
        }
    }

    /// One cycle: the head fragment moves to the result FIFO once its data is there (a miss:
    /// the reorder buffer's head is ready).
    /// GPGPU-Sim 3.2.2 gpu-cache.cc, tex_cache::cycle
    pub fn cycle(&mut self, now: u64) {
        let Some(f) = self.fragments.front().copied() else {
            return;
        };
        if self.results.len() >= self.result_cap {
            return;
        }
        let ready = if f.miss {
            self.rob.front().is_some_and(|r| r.ready)
        } else {
            f.ready_at <= now
        };
        if ready {
            if f.miss {
                self.rob.pop_front();
            }
            self.fragments.pop_front();
            self.results.push_back(f.load);
        }
    }

    /// The next load line ready for writeback.
    pub fn pop_result(&mut self) -> Option<u16> {
        self.results.pop_front()
    }

    pub fn is_quiet(&self) -> bool {
        self.fragments.is_empty()
            && self.requests.is_empty()
            && self.rob.is_empty()
            && self.results.is_empty()
    }
}

/// GPGPU-Sim 3.2.2 `read_only_cache` (the constant cache).
#[derive(Clone, Debug)]
pub struct ConstCache {
    tags: TagArray,
    mem_shift: u32,
    mshrs: MshrTable<u16>,
    /// Request id and line of each outstanding miss.
    outstanding: Vec<(u32, u64)>,
    pub miss_queue: VecDeque<MemRequest>,
    miss_queue_cap: usize,
}

impl ConstCache {
    pub fn new(c: &Config) -> Self {
        ConstCache {
            tags: TagArray::new(c.const_sets, c.const_ways),
            mem_shift: (c.line_bytes / c.const_line_bytes.min(c.line_bytes)).trailing_zeros(),
            mshrs: MshrTable::new(c.const_mshrs, c.const_mshr_merge),
            outstanding: Vec::with_capacity(c.const_mshrs as usize),
            miss_queue: VecDeque::with_capacity(c.const_miss_queue as usize),
            miss_queue_cap: c.const_miss_queue as usize,
        }
    }

    pub fn mem_line(&self, line: u64) -> u64 {
        line >> self.mem_shift
    }

    /// An access to constant line `line` for in-flight load `load`.
    /// GPGPU-Sim 3.2.2 gpu-cache.cc, read_only_cache::access and send_read_request
    pub fn access(
        &mut self,
        line: u64,
        load: u16,
        now: u64,
        st: &mut RoCacheStats,
        request: impl FnOnce(u64) -> MemRequest,
    ) -> RoOutcome {
        st.accesses += 1;
        if self.tags.probe(line) == Probe::Hit {
            self.tags.touch(line, now);
            st.hits += 1;
            return RoOutcome::Hit;
        }
        // `miss_queue_full(0)`: full at its size (unlike the L1D's size − 1).
        if self.miss_queue.len() >= self.miss_queue_cap {
            st.reservation_fails += 1;
            return RoOutcome::Fail;
        }
        if self.mshrs.contains(line) {
            if self.mshrs.can_merge(line) {
                self.mshrs.merge(line, load);
                st.merged += 1;
                return RoOutcome::Merged;
            }
            st.reservation_fails += 1;
            return RoOutcome::Fail;
        }
        if self.mshrs.is_full() {
            st.reservation_fails += 1;
            return RoOutcome::Fail;
        }
        self.mshrs.open(line, load, now);
        let r = request(self.mem_line(line));
        self.outstanding.push((r.id, line));
        self.miss_queue.push_back(r);
        st.misses += 1;
        RoOutcome::Miss
    }

    pub fn owns(&self, id: u32) -> bool {
        self.outstanding.iter().any(|&(i, _)| i == id)
    }

    /// The data for request `id` arrived: the line is allocated (on fill, LRU victim) and
    /// every load waiting on it is handed to `done`. Returns the cycles since the miss.
    /// GPGPU-Sim 3.2.2 gpu-cache.cc, baseline_cache::fill (`ON_FILL`)
    pub fn fill(&mut self, id: u32, now: u64, st: &mut RoCacheStats, done: impl FnMut(u16)) -> Option<u64> {
        let k = self.outstanding.iter().position(|&(i, _)| i == id)?;
        let (_, line) = self.outstanding.swap_remove(k);
        if self.tags.probe(line) == Probe::Miss {
            self.tags.allocate(line, LineState::Valid, false, now);
        }
        st.fills += 1;
        self.mshrs.release(line, done).map(|t| now - t)
    }

    pub fn is_quiet(&self) -> bool {
        self.mshrs.used() == 0 && self.miss_queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: u32) -> impl FnOnce(u64) -> MemRequest {
        move |line| MemRequest {
            id,
            line,
            sm: 0,
            warp: 0,
            write: false,
            bytes: 0,
            atomic: None,
        }
    }

    #[test]
    fn gtx480_geometry_and_memory_lines() {
        let c = Config::default();
        assert_eq!((c.tex_sets, c.tex_line_bytes, c.tex_ways), (4, 128, 24));
        assert_eq!((c.const_sets, c.const_line_bytes, c.const_ways), (64, 64, 2));
        let t = TexCache::new(&c);
        let k = ConstCache::new(&c);
        assert_eq!(t.mem_line(5), 5, "128-byte texture lines are memory lines");
        assert_eq!(
            (k.mem_line(6), k.mem_line(7)),
            (3, 3),
            "two 64-byte constant lines per 128-byte line"
        );
        // Lines larger than a memory line are cut to one: one miss, one memory line.
        let small = Config {
            line_bytes: 32,
            ..Config::default()
        };
        assert!(small.validate().is_ok());
        assert_eq!(TexCache::new(&small).mem_line(5), 5);
        assert_eq!(ConstCache::new(&small).mem_line(5), 5);
        // 24 ways of one set: 24 distinct lines of set 0 stay, the 25th evicts the oldest.
        let mut t = TexCache::new(&c);
        let mut st = RoCacheStats::default();
        for i in 0..25u64 {
            assert_eq!(t.access(i * 4, 0, i, &mut st, req(i as u32)), RoOutcome::Miss);
            t.requests.pop_front();
        }
        assert_eq!(
            t.access(4, 0, 30, &mut st, req(99)),
            RoOutcome::Hit,
            "line 4 stayed"
        );
        assert_eq!(
            t.access(0, 0, 31, &mut st, req(100)),
            RoOutcome::Miss,
            "line 0 was the LRU victim"
        );
    }

    #[test]
    fn texture_miss_then_hit_come_out_in_order_after_the_fill() {
        let c = Config {
            l1_hit_latency: 3,
            ..Config::default()
        };
        let mut t = TexCache::new(&c);
        let mut st = RoCacheStats::default();
        assert_eq!(t.access(7, 1, 0, &mut st, req(10)), RoOutcome::Miss);
        assert_eq!(t.requests.len(), 1);
        assert_eq!(
            t.access(7, 2, 1, &mut st, req(11)),
            RoOutcome::Hit,
            "tags are valid at once"
        );
        assert_eq!(t.requests.len(), 1, "a hit sends nothing");
        for now in 0..50 {
            t.cycle(now);
        }
        assert_eq!(t.pop_result(), None, "the hit waits behind the miss");
        assert!(t.owns(10) && !t.owns(11));
        t.fill(10, &mut st);
        t.cycle(51);
        t.cycle(52);
        assert_eq!((t.pop_result(), t.pop_result()), (Some(1), Some(2)));
        t.requests.clear();
        assert!(t.is_quiet());
        assert_eq!((st.accesses, st.hits, st.misses, st.fills), (2, 1, 1, 1));
    }

    #[test]
    fn texture_refuses_when_its_request_fifo_is_full() {
        let mut t = TexCache::new(&Config::default());
        let mut st = RoCacheStats::default();
        for i in 0..4 {
            assert_eq!(t.access(i, 0, 0, &mut st, req(i as u32)), RoOutcome::Miss);
        }
        assert_eq!(
            t.access(9, 0, 0, &mut st, req(9)),
            RoOutcome::Fail,
            "request FIFO of 4 is full"
        );
        t.requests.pop_front();
        assert_eq!(t.access(9, 0, 0, &mut st, req(9)), RoOutcome::Miss);
        assert_eq!(st.reservation_fails, 1);
    }

    #[test]
    fn constant_hit_after_fill_merge_and_mshr_limits() {
        let mut k = ConstCache::new(&Config::default());
        let mut st = RoCacheStats::default();
        assert_eq!(k.access(3, 1, 0, &mut st, req(20)), RoOutcome::Miss);
        assert_eq!(k.access(3, 2, 1, &mut st, req(21)), RoOutcome::Merged);
        assert_eq!(k.access(5, 3, 1, &mut st, req(22)), RoOutcome::Miss);
        assert_eq!(k.access(9, 4, 1, &mut st, req(23)), RoOutcome::Fail, "2 MSHRs");
        assert!(k.owns(20) && k.owns(22) && !k.owns(21));
        let mut woken = vec![];
        assert_eq!(k.fill(20, 10, &mut st, |l| woken.push(l)), Some(10));
        assert_eq!(woken, vec![1, 2]);
        assert_eq!(
            k.access(3, 5, 11, &mut st, req(24)),
            RoOutcome::Hit,
            "allocated on fill"
        );
        assert_eq!(k.fill(77, 12, &mut st, |_| {}), None, "not ours");
        let s = &st;
        assert_eq!(
            (s.accesses, s.hits, s.merged, s.misses, s.reservation_fails),
            (5, 1, 1, 2, 1)
        );
    }

    #[test]
    fn constant_miss_queue_full_at_its_size() {
        let c = Config {
            const_mshrs: 8,
            ..Config::default()
        };
        let mut k = ConstCache::new(&c);
        let mut st = RoCacheStats::default();
        for i in 0..4 {
            assert_eq!(k.access(i, 0, 0, &mut st, req(i as u32)), RoOutcome::Miss);
        }
        assert_eq!(k.access(4, 0, 0, &mut st, req(4)), RoOutcome::Fail);
        k.miss_queue.pop_front();
        assert_eq!(k.access(4, 0, 0, &mut st, req(4)), RoOutcome::Miss);
    }
}
