//! An L2 partition: a slice of the L2 (write-back, write-allocate) with its own MSHRs and
//! miss queue, in front of one DRAM channel.
//!
//! Each cycle it takes at most one request from the interconnect. A read hit or a write
//! answers after `l2_latency`; a read miss opens (or merges into) an MSHR and queues a DRAM
//! read; the fill answers every merged waiter. [design] A write miss allocates the line
//! without fetching it (the model carries no data), and a dirty eviction queues a DRAM
//! write. When it cannot take the request at the head (no MSHR, full miss queue, too many
//! replies waiting) the request stays in the interconnect buffer, which pushes back on the
//! SMs through the credit limit.

use std::collections::VecDeque;

use super::cache::{LineState, MshrTable, Probe, TagArray};
use super::dram::{Dram, DramRequest};
use super::icnt::Network;
use super::{MemReply, MemRequest};
use crate::config::Config;
use crate::stats::CacheStats;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Waiter {
    id: u32,
    sm: u16,
    warp: u8,
}

#[derive(Clone, Debug)]
pub struct Partition {
    index: usize,
    tags: TagArray,
    mshrs: MshrTable<Waiter>,
    /// DRAM-bound requests still in the tag pipeline: (cycle the lookup completes, request).
    miss_pipe: VecDeque<(u64, DramRequest)>,
    /// DRAM-bound requests waiting for room in the DRAM queue.
    miss_queue: VecDeque<DramRequest>,
    miss_queue_cap: usize,
    /// Hits and acknowledgements waiting out the access latency: (ready cycle, reply).
    pipe: VecDeque<(u64, MemReply)>,
    /// Replies ready to enter the interconnect.
    pub replies: VecDeque<MemReply>,
    reply_cap: usize,
    latency: u64,
    pub dram: Dram,
    pub stats: CacheStats,
}

impl Partition {
    pub fn new(index: usize, c: &Config) -> Self {
        let reply_room = (c.l2_response_queue + c.l2_mshrs * c.l2_mshr_merge) as usize;
        Partition {
            index,
            // Lines are interleaved over partitions, so a partition indexes its sets by line / partitions.
            tags: TagArray::interleaved(c.l2_sets, c.l2_ways, c.l2_partitions),
            mshrs: MshrTable::new(c.l2_mshrs, c.l2_mshr_merge),
            miss_pipe: VecDeque::with_capacity((c.l2_miss_queue + c.l2_latency) as usize),
            miss_queue: VecDeque::with_capacity(c.l2_miss_queue as usize),
            miss_queue_cap: c.l2_miss_queue as usize,
            pipe: VecDeque::with_capacity(c.l2_response_queue as usize + c.l2_latency as usize),
            replies: VecDeque::with_capacity(reply_room),
            reply_cap: c.l2_response_queue as usize,
            latency: c.l2_latency as u64,
            dram: Dram::new(c.dram_queue, c.dram_cycles_per_line, c.dram_latency),
            stats: CacheStats::default(),
        }
    }

    /// Starts the next kernel of a sequence: the L2 keeps its lines (dropped with `flush`,
    /// as `-gpgpu_flush_l2_cache` does; GPGPU-Sim 3.2.2's `flushL2` writes nothing back) and
    /// the counters start from zero.
    pub fn next_kernel(&mut self, flush: bool) {
        if flush {
            self.tags.invalidate_all();
        }
        self.stats = CacheStats::default();
        self.dram.reads = 0;
        self.dram.writes = 0;
        self.dram.busy_cycles = 0.0;
    }

    /// One cycle, in reverse pipeline order: DRAM fills, DRAM issue, finished hits, then one
    /// new request from `input` (the network whose destination `self.index` is this partition).
    pub fn cycle(&mut self, now: u64, input: &mut Network<MemRequest>) {
        // Nothing inside and nothing waiting at the input: the cycle changes no state.
        if self.dram.is_idle()
            && self.miss_pipe.is_empty()
            && self.miss_queue.is_empty()
            && self.pipe.is_empty()
            && input.pending(self.index) == 0
        {
            if self.mshrs.is_full() {
                self.stats.cycles_mshr_full += 1;
            }
            return;
        }
        // DRAM completions: a read fills the line and answers everyone merged into its MSHR.
        while let Some(done) = self.dram.pop_done(now) {
            if !done.write {
                self.tags.fill(done.line, now);
                let replies = &mut self.replies;
                let line = done.line;
                self.mshrs.release(line, |w| {
                    replies.push_back(MemReply {
                        id: w.id,
                        line,
                        sm: w.sm,
                        warp: w.warp,
                        write: false,
                    })
                });
                self.stats.fills += 1;
            }
        }
        self.dram.cycle(now);
        if self.dram.has_room() {
            if let Some(r) = self.miss_queue.pop_front() {
                self.dram.push(r);
            }
        }
        if let Some(&(ready, r)) = self.miss_pipe.front() {
            if ready <= now && self.miss_queue.len() < self.miss_queue_cap {
                self.miss_pipe.pop_front();
                self.miss_queue.push_back(r);
            }
        }
        while let Some(&(ready, reply)) = self.pipe.front() {
            if ready > now {
                break;
            }
            self.pipe.pop_front();
            self.replies.push_back(reply);
        }
        if self.mshrs.is_full() {
            self.stats.cycles_mshr_full += 1;
        }
        if self.miss_queue.len() >= self.miss_queue_cap {
            self.stats.cycles_miss_queue_full += 1;
        }
        // The access pipeline itself is fully pipelined; only replies the network has not
        // taken yet push back.
        if self.replies.len() >= self.reply_cap {
            return;
        }
        if let Some(&req) = input.peek(self.index, now) {
            if self.access(req, now) {
                input.pop(self.index, now);
            }
        }
    }

    /// Tries to serve `req`; false leaves it at the head of the input buffer.
    fn access(&mut self, req: MemRequest, now: u64) -> bool {
        let line = req.line;
        let probe = self.tags.probe(line);
        self.stats.accesses += 1;
        if req.write {
            if probe == Probe::Miss {
                let writeback = self.tags.victim(line).filter(|v| v.dirty);
                if !self.tags.can_allocate(line) || (writeback.is_some() && !self.miss_room(1)) {
                    self.stats.fail_line_alloc += 1;
                    return false;
                }
                self.allocate(line, LineState::Valid, true, now);
                self.stats.write_misses += 1;
            } else {
                self.tags.mark_dirty(line);
                self.tags.touch(line, now);
                self.stats.write_hits += 1;
            }
            self.pipe.push_back((now + self.latency, req.reply()));
            return true;
        }
        let waiter = Waiter {
            id: req.id,
            sm: req.sm,
            warp: req.warp,
        };
        match probe {
            Probe::Hit => {
                self.tags.touch(line, now);
                self.stats.hits += 1;
                self.pipe.push_back((now + self.latency, req.reply()));
                true
            }
            Probe::Reserved => {
                if self.mshrs.can_merge(line) {
                    self.mshrs.merge(line, waiter);
                    self.stats.hit_reserved += 1;
                    true
                } else {
                    self.stats.fail_merge_limit += 1;
                    false
                }
            }
            Probe::Miss => {
                let writeback = self.tags.victim(line).filter(|v| v.dirty).is_some();
                let slots = 1 + writeback as usize;
                if self.mshrs.is_full() {
                    self.stats.fail_mshr_full += 1;
                    false
                } else if !self.miss_room(slots) {
                    self.stats.fail_miss_queue_full += 1;
                    false
                } else if !self.tags.can_allocate(line) {
                    self.stats.fail_line_alloc += 1;
                    false
                } else {
                    self.allocate(line, LineState::Reserved, false, now);
                    self.mshrs.open(line, waiter, now);
                    self.miss_pipe
                        .push_back((now + self.latency, DramRequest { line, write: false }));
                    self.stats.misses += 1;
                    true
                }
            }
        }
    }

    /// Allocates `line`, queueing a DRAM write for a dirty victim.
    fn allocate(&mut self, line: u64, state: LineState, dirty: bool, now: u64) {
        if let Some(v) = self.tags.allocate(line, state, dirty, now) {
            if v.dirty {
                self.miss_pipe.push_back((
                    now + self.latency,
                    DramRequest {
                        line: v.line,
                        write: true,
                    },
                ));
            }
        }
    }

    /// Whether `n` more DRAM-bound requests fit: the miss queue plus what the tag pipeline
    /// can hold (one lookup per cycle).
    fn miss_room(&self, n: usize) -> bool {
        self.miss_pipe.len() + self.miss_queue.len() + n <= self.miss_queue_cap + self.latency as usize
    }

    /// Nothing buffered or in flight inside the partition (its DRAM writes excepted).
    pub fn is_quiet(&self) -> bool {
        self.mshrs.used() == 0 && self.pipe.is_empty() && self.replies.is_empty()
    }

    pub fn mshrs_used(&self) -> usize {
        self.mshrs.used()
    }
}
