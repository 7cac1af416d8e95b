//! A memory partition: one memory channel's DRAM shared by its L2 sub-partitions
//! (GPGPU-Sim 3.2.2 l2cache.cc `memory_partition_unit`, `memory_sub_partition`).
//!
//! Each sub-partition (`l2_sub_partitions` per channel, picked by the address map's
//! sub-partition bank bits, 3.2.2 addrdec.cc `addrdec_tlx`) is its own interconnect
//! destination with its own L2 slice (write-back, write-allocate: GTX480's `L:B:m:W`), MSHRs
//! and cache miss queue, and its own queues (3.2.2 `memory_sub_partition::memory_sub_partition`,
//! sizes from `-gpgpu_dram_partition_queues` `i2$:$2d:d2$:$2i`): a request leaves the network
//! when the icnt→L2 queue has room (`full()`; gpu-sim.cc `gpgpu_sim::cycle`), waits out the
//! ROP delay `l2_latency` (`push`, `m_rop`), enters the icnt→L2 queue, and is looked up when
//! the L2→DRAM queue and the L2→icnt queue both have room (`cache_cycle`). The slice indexes
//! its sets by 3.2.2's `partition_address` (channel and sub-partition bits removed).
//!
//! L2 access rules (gpu-cache.cc): a read hit answers at once into the L2→icnt queue; a read
//! miss or a read of a reserved line is `rd_miss_base` (refused at `miss_queue_full(1)`, then
//! `send_read_request` merges into the line's MSHR or opens one; a dirty victim's write-back
//! is queued after the read). A write hit marks the line dirty and is acknowledged
//! (`wr_hit_wb`); a write miss is `wr_miss_wa`: refused at `miss_queue_full(2)` or without an
//! MSHR to merge into / open, else the write goes on to DRAM (acknowledged when DRAM has
//! written it), a read of the whole line allocates it (its fill answers nobody:
//! `L2_WR_ALLOC_R`), and a dirty victim is written back. An all-reserved set refuses any
//! miss first (`tag_array::probe` RESERVATION_FAIL). A refused request stays at the head of
//! the icnt→L2 queue.
//!
//! A global atomic is performed as GPGPU-Sim 3.2.2 does it: the request is a read
//! (`atom` is a `LOAD_OP`, its access `GLOBAL_ACC_R`) that leaves the line dirty: at once on
//! a hit (gpu-cache.cc `data_cache::rd_hit_base`), at the fill when any request merged into
//! the MSHR is atomic (`mshr_table::add` sets `m_has_atomic`, `baseline_cache::fill` marks
//! the line `MODIFIED`). Its reply carries the access's data back to the SM (l2cache.cc
//! `memory_sub_partition::pop` runs the operation as the reply leaves; no other cost).
//!
//! The DRAM runs on its own clock: with `gddr5`, each core cycle steps it
//! `dram_clock_mhz / core_clock_mhz` command cycles on average, carried in an accumulator
//! (GPGPU-Sim 3.2.2 `gpgpu_sim::next_clock_domain`); each command cycle does what
//! `memory_partition_unit::dram_cycle` does: the return queue's head moves to its
//! sub-partition's DRAM→L2 queue if that has room (else the return path stalls), the
//! channel's cycle, then one request from the sub-partitions' L2→DRAM queues, round robin
//! after the last one served, subject to the DRAM→L2 queue having room and a DRAM credit
//! (`can_issue_to_dram`, `arbitration_metadata`), into the `dram_latency` queue, and one from
//! that queue into the DRAM while the DRAM has room.

use std::collections::VecDeque;

use super::cache::{LineState, MshrTable, Probe, TagArray};
use super::dram::{Ack, Dram, DramRequest, FixedDram, Gddr5, Gddr5Params};
use super::icnt::Network;
use super::{ChannelMap, MemReply, MemRequest};
use crate::config::{Config, DramModel};
use crate::stats::CacheStats;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Waiter {
    id: u32,
    sm: u16,
    warp: u8,
    /// False for the line read of a write miss: its fill answers nobody.
    reply: bool,
    /// An atomic (its SM slot) and the bytes its reply carries.
    atomic: Option<u16>,
    bytes: u16,
}

/// GPGPU-Sim 3.2.2 l2cache.cc `memory_partition_unit::arbitration_metadata`: DRAM credits.
/// Each sub-partition has one private credit; the rest (`dram_queue + dram_return_queue −
/// (sub-partitions − 1)`, unlimited when either is 0) is shared. A request borrows one as it
/// leaves for the DRAM and returns it when its reply enters the DRAM→L2 queue (a write-back:
/// when DRAM has written it, `set_done`).
#[derive(Clone, Debug)]
struct Credits {
    private: Vec<u32>,
    shared: u32,
    /// 0: no limit.
    shared_limit: u32,
    last_borrower: usize,
}

impl Credits {
    fn new(c: &Config) -> Self {
        let n = c.l2_sub_partitions;
        let shared_limit = if c.dram_queue == 0 || c.dram_return_queue == 0 {
            0
        } else {
            c.dram_queue + c.dram_return_queue - (n - 1)
        };
        Credits {
            private: vec![0; n as usize],
            shared: 0,
            shared_limit,
            last_borrower: n as usize - 1,
        }
    }
    fn has(&self, s: usize) -> bool {
        self.private[s] < 1 || self.shared_limit == 0 || self.shared < self.shared_limit
    }
    fn borrow(&mut self, s: usize) {
        if self.private[s] < 1 {
            self.private[s] += 1;
        } else {
            debug_assert!(self.shared_limit == 0 || self.shared < self.shared_limit);
            self.shared += 1;
        }
        self.last_borrower = s;
    }
    fn give_back(&mut self, s: usize) {
        if self.private[s] > 0 {
            self.private[s] -= 1;
        } else {
            debug_assert!(self.shared > 0, "returning more credits than borrowed");
            self.shared = self.shared.saturating_sub(1);
        }
    }
}

/// One L2 sub-partition: an L2 slice and its queues.
#[derive(Clone, Debug)]
pub struct SubPartition {
    /// Global sub-partition id: channel × sub-partitions + sub (its network port).
    pub id: usize,
    /// Tags and MSHRs are keyed by the slice line (3.2.2 `partition_address`).
    tags: TagArray,
    mshrs: MshrTable<Waiter>,
    /// ROP delay queue: (ready cycle, request) (unbounded in 3.2.2; at most one joins per
    /// cycle, and only while the icnt→L2 queue has room).
    rop: VecDeque<(u64, MemRequest)>,
    icnt_l2: VecDeque<MemRequest>,
    icnt_l2_cap: usize,
    /// The L2 cache's miss queue (`baseline_cache::m_miss_queue`).
    miss_queue: VecDeque<DramRequest>,
    miss_queue_cap: usize,
    l2_dram: VecDeque<DramRequest>,
    l2_dram_cap: usize,
    dram_l2: VecDeque<DramRequest>,
    dram_l2_cap: usize,
    /// The L2→icnt queue. Fills add every merged waiter's reply at once (3.2.2 holds them in
    /// the cache until the queue has room) [design]; requests and acknowledgements wait
    /// for room.
    pub replies: VecDeque<MemReply>,
    reply_cap: usize,
    latency: u64,
    line_bytes: u32,
    /// The L2's data and fill ports (3.2.2 gpu-cache.cc, `bandwidth_management`): bytes a
    /// port moves per cycle, and the first cycle each is free again. A read hit holds the
    /// data port for (data bytes / width) cycles, an access that writes a dirty victim back
    /// for (line / width); a fill holds the fill port for (line / width). 3.2.2 counts the
    /// cycles down once a cycle, between the fill and the new access (`cache_cycle` calls
    /// `m_L2cache->cycle()` there), so a port used at cycle t is free again at t + cycles.
    port_bytes: u32,
    data_port_free_at: u64,
    fill_port_free_at: u64,
    pub stats: CacheStats,
}

/// What an L2 access did, as far as the data port is concerned (3.2.2 `use_data_port`
/// switches on the same outcomes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// RESERVATION_FAIL: the request stays at the head of the icnt→L2 queue.
    Refused,
    Hit,
    /// A miss or a merge into a pending fill; `wrote_back` when it evicted a dirty line.
    Queued {
        wrote_back: bool,
    },
}

#[derive(Clone, Debug)]
pub struct Partition {
    /// The memory channel.
    index: usize,
    map: ChannelMap,
    pub subs: Vec<SubPartition>,
    credits: Credits,
    /// `gddr5`: requests waiting out `dram_latency` before the DRAM queue (3.2.2's
    /// `m_dram_latency_queue`): (ready core cycle, request).
    latency_queue: VecDeque<(u64, DramRequest)>,
    dram_latency: u64,
    pub dram: Dram,
    /// DRAM clock accumulator: DRAM MHz added per core cycle, a command cycle per core MHz.
    clock_acc: u64,
    core_mhz: u64,
    dram_mhz: u64,
}

impl SubPartition {
    fn new(id: usize, c: &Config) -> Self {
        let merge_room = (c.l2_mshrs * c.l2_mshr_merge) as usize;
        SubPartition {
            id,
            tags: TagArray::new(c.l2_sets, c.l2_ways),
            mshrs: MshrTable::new(c.l2_mshrs, c.l2_mshr_merge),
            rop: VecDeque::with_capacity(c.l2_latency as usize + 2),
            icnt_l2: VecDeque::with_capacity(c.l2_icnt_queue as usize),
            icnt_l2_cap: c.l2_icnt_queue as usize,
            // A request adds at most three entries past a check of `size - 3`.
            miss_queue: VecDeque::with_capacity(c.l2_miss_queue as usize + 3),
            miss_queue_cap: c.l2_miss_queue as usize,
            l2_dram: VecDeque::with_capacity(c.l2_dram_queue as usize),
            l2_dram_cap: c.l2_dram_queue as usize,
            dram_l2: VecDeque::with_capacity(c.l2_fill_queue as usize),
            dram_l2_cap: c.l2_fill_queue as usize,
            replies: VecDeque::with_capacity(c.l2_response_queue as usize + merge_room + 1),
            reply_cap: c.l2_response_queue as usize,
            latency: c.l2_latency as u64,
            line_bytes: c.line_bytes,
            port_bytes: c.l2_data_port_bytes,
            data_port_free_at: 0,
            fill_port_free_at: 0,
            stats: CacheStats::default(),
        }
    }

    fn is_empty(&self) -> bool {
        self.rop.is_empty()
            && self.icnt_l2.is_empty()
            && self.miss_queue.is_empty()
            && self.l2_dram.is_empty()
            && self.dram_l2.is_empty()
    }

    /// `miss_queue_full(n)` (gpu-cache.h): `size + n >= m_miss_queue_size`.
    fn miss_queue_full(&self, n: usize) -> bool {
        self.miss_queue.len() + n >= self.miss_queue_cap
    }

    /// 3.2.2 `memory_sub_partition::cache_cycle` then the network's hand-over
    /// (`gpgpu_sim::cycle`: `if (!full()) push(icnt_pop(...))`, before `cache_cycle`).
    fn cycle(&mut self, now: u64, input: &mut Network<MemRequest>, map: &ChannelMap, subs: usize) {
        if self.icnt_l2.len() < self.icnt_l2_cap {
            if let Some(req) = input.pop(self.id, now) {
                self.rop.push_back((now + self.latency, req));
            }
        }
        // DRAM → L2: a read fills when the fill port is free, a write's acknowledgement goes
        // to the L2→icnt queue when that has room.
        if let Some(&d) = self.dram_l2.front() {
            if !d.write {
                if now >= self.fill_port_free_at {
                    self.dram_l2.pop_front();
                    self.fill(d, map);
                    self.fill_port_free_at = now + (self.line_bytes / self.port_bytes) as u64;
                }
            } else if self.replies.len() < self.reply_cap {
                self.dram_l2.pop_front();
                if let Some(a) = d.ack {
                    self.replies.push_back(MemReply {
                        id: a.id,
                        line: d.line,
                        sm: a.sm,
                        warp: a.warp,
                        write: true,
                        atomic: None,
                        bytes: 0,
                    });
                }
            }
        }
        // `baseline_cache::cycle`: the miss queue's head to the L2→DRAM queue.
        if let Some(&r) = self.miss_queue.front() {
            if self.l2_dram.len() < self.l2_dram_cap {
                self.miss_queue.pop_front();
                self.l2_dram.push_back(r);
            }
        }
        if self.mshrs.is_full() {
            self.stats.cycles_mshr_full += 1;
        }
        if self.miss_queue_full(1) {
            self.stats.cycles_miss_queue_full += 1;
        }
        // A new access when the L2→DRAM and L2→icnt queues have room and the data port is
        // free.
        let room = self.l2_dram.len() < self.l2_dram_cap && self.replies.len() < self.reply_cap;
        if room && now >= self.data_port_free_at {
            if let Some(&req) = self.icnt_l2.front() {
                let outcome = self.access(req, now, map, subs);
                if outcome != Access::Refused {
                    self.icnt_l2.pop_front();
                    self.stats.atomics += req.atomic.is_some() as u64;
                }
                self.data_port_free_at = now + self.data_port_cycles(req, outcome);
            }
        }
        // The ROP delay queue's head into the icnt→L2 queue.
        if let Some(&(ready, req)) = self.rop.front() {
            if ready <= now && self.icnt_l2.len() < self.icnt_l2_cap {
                self.rop.pop_front();
                self.icnt_l2.push_back(req);
            }
        }
    }

    /// Cycles the access just made holds the data port (3.2.2 `use_data_port`): a hit
    /// reads or writes its data (a read from an L1 or read-only cache is a whole line; a
    /// write or an atomic its own bytes); a miss reads out a dirty victim it writes back;
    /// a refused access uses nothing.
    fn data_port_cycles(&self, req: MemRequest, outcome: Access) -> u64 {
        let width = self.port_bytes;
        match outcome {
            Access::Hit => {
                let bytes = if req.write || req.atomic.is_some() {
                    req.bytes as u32
                } else {
                    self.line_bytes
                };
                bytes.div_ceil(width) as u64
            }
            Access::Queued { wrote_back: true } => (self.line_bytes / width) as u64,
            Access::Queued { wrote_back: false } | Access::Refused => 0,
        }
    }

    /// A DRAM read came back: the line becomes valid and answers everyone merged into its
    /// MSHR.
    fn fill(&mut self, done: DramRequest, map: &ChannelMap) {
        let local = map.slice_line(done.line);
        self.tags.fill(local);
        let replies = &mut self.replies;
        let line = done.line;
        let mut has_atomic = false;
        self.mshrs.release(local, |w| {
            has_atomic |= w.atomic.is_some();
            if w.reply {
                replies.push_back(MemReply {
                    id: w.id,
                    line,
                    sm: w.sm,
                    warp: w.warp,
                    write: false,
                    atomic: w.atomic,
                    bytes: w.bytes,
                })
            }
        });
        // GPGPU-Sim 3.2.2 gpu-cache.cc, baseline_cache::fill: an MSHR holding an atomic
        // leaves the filled line MODIFIED.
        if has_atomic {
            self.tags.mark_dirty(local);
        }
        self.stats.fills += 1;
    }

    /// Tries to serve `req`; false leaves it at the head of the icnt→L2 queue.
    fn access(&mut self, req: MemRequest, now: u64, map: &ChannelMap, subs: usize) -> Access {
        let line = req.line;
        let local = map.slice_line(line);
        let probe = self.tags.probe(local);
        self.stats.accesses += 1;
        // `tag_array::probe`: a miss in a set whose lines are all reserved.
        if probe == Probe::Miss && !self.tags.can_allocate(local) {
            self.stats.fail_line_alloc += 1;
            return Access::Refused;
        }
        if req.write {
            return self.write(req, local, probe, now, map, subs);
        }
        let waiter = Waiter {
            id: req.id,
            sm: req.sm,
            warp: req.warp,
            reply: true,
            atomic: req.atomic,
            bytes: req.bytes,
        };
        if probe == Probe::Hit {
            self.tags.touch(local, now);
            // GPGPU-Sim 3.2.2 gpu-cache.cc, data_cache::rd_hit_base: an atomic's read hit
            // marks the line MODIFIED.
            if req.atomic.is_some() {
                self.tags.mark_dirty(local);
            }
            self.stats.hits += 1;
            self.replies.push_back(req.reply());
            return Access::Hit;
        }
        // `rd_miss_base`: refused at `miss_queue_full(1)`, then `send_read_request`.
        if self.miss_queue_full(1) {
            self.stats.fail_miss_queue_full += 1;
            return Access::Refused;
        }
        if probe == Probe::Reserved {
            if self.mshrs.can_merge(local) {
                self.mshrs.merge(local, waiter);
                self.tags.touch(local, now);
                self.stats.hit_reserved += 1;
                Access::Queued { wrote_back: false }
            } else {
                self.stats.fail_merge_limit += 1;
                Access::Refused
            }
        } else if self.mshrs.is_full() {
            self.stats.fail_mshr_full += 1;
            Access::Refused
        } else {
            self.mshrs.open(local, waiter, now);
            self.miss_queue
                .push_back(DramRequest::read(line, self.line_bytes));
            let wrote_back = self.allocate(local, now, map, subs);
            self.stats.misses += 1;
            Access::Queued { wrote_back }
        }
    }

    /// A write: a hit marks the line dirty and is acknowledged (`wr_hit_wb`). A miss, or a
    /// write to a line whose fill is pending, is `data_cache::wr_miss_wa`.
    fn write(
        &mut self,
        req: MemRequest,
        local: u64,
        probe: Probe,
        now: u64,
        map: &ChannelMap,
        subs: usize,
    ) -> Access {
        if probe == Probe::Hit {
            self.tags.mark_dirty(local);
            self.tags.touch(local, now);
            self.stats.write_hits += 1;
            self.replies.push_back(req.reply());
            return Access::Hit;
        }
        // `if (miss_queue_full(2) || (!(mshr_hit && mshr_avail) && !(!mshr_hit &&
        // mshr_avail && miss_queue.size() < size))) return RESERVATION_FAIL`.
        if self.miss_queue_full(2) {
            self.stats.fail_miss_queue_full += 1;
            return Access::Refused;
        }
        let reserved = probe == Probe::Reserved;
        let mut wrote_back = false;
        if reserved && !self.mshrs.can_merge(local) {
            self.stats.fail_merge_limit += 1;
            return Access::Refused;
        }
        if !reserved && self.mshrs.is_full() {
            self.stats.fail_mshr_full += 1;
            return Access::Refused;
        }
        let store = DramRequest {
            ack: Some(Ack {
                id: req.id,
                sm: req.sm,
                warp: req.warp,
            }),
            ..DramRequest::write(req.line, req.bytes as u32)
        };
        let waiter = Waiter {
            reply: false,
            ..Waiter::default()
        };
        // In 3.2.2's order: the write, the line read (merged, or a new MSHR), the victim's
        // write-back.
        self.miss_queue.push_back(store);
        if reserved {
            self.mshrs.merge(local, waiter);
            self.tags.touch(local, now);
        } else {
            self.mshrs.open(local, waiter, now);
            self.miss_queue
                .push_back(DramRequest::read(req.line, self.line_bytes));
            wrote_back = self.allocate(local, now, map, subs);
        }
        // `select_stats_status`: a write whose probe was HIT_RESERVED counts as HIT_RESERVED.
        if reserved {
            self.stats.write_hit_reserved += 1;
        } else {
            self.stats.write_misses += 1;
        }
        Access::Queued { wrote_back }
    }

    /// Allocates (reserves) slice line `local`, queueing a DRAM write for a dirty victim;
    /// true when it did.
    fn allocate(&mut self, local: u64, now: u64, map: &ChannelMap, subs: usize) -> bool {
        match self.tags.allocate(local, LineState::Reserved, false, now) {
            Some(v) if v.dirty => {
                let line = map.line_of_slice(v.line, self.id, subs);
                self.miss_queue
                    .push_back(DramRequest::write(line, self.line_bytes));
                true
            }
            _ => false,
        }
    }
}

impl Partition {
    /// Memory channel `index` of a validated configuration, with its sub-partitions
    /// (global ids `index × l2_sub_partitions + s`).
    pub fn new(index: usize, c: &Config) -> Self {
        let map = ChannelMap::new(c).expect("validated configuration");
        let dram = match c.dram_model {
            DramModel::Gddr5 => Dram::Gddr5(Box::new(Gddr5::new(
                Gddr5Params::from_config(c).expect("validated configuration"),
            ))),
            DramModel::Fixed => Dram::Fixed(FixedDram::new(
                c.dram_queue,
                c.dram_cycles_per_line,
                c.dram_latency,
            )),
        };
        // The latency queue takes at most one request per DRAM cycle for dram_latency core cycles.
        let ratio = (c.dram_clock_mhz as u64).div_ceil(c.core_clock_mhz as u64) as usize;
        let latency_room = match c.dram_model {
            DramModel::Gddr5 => (c.dram_latency as usize + 1) * ratio + 1,
            DramModel::Fixed => 0,
        };
        let n = c.l2_sub_partitions as usize;
        Partition {
            index,
            map,
            subs: (0..n).map(|s| SubPartition::new(index * n + s, c)).collect(),
            credits: Credits::new(c),
            latency_queue: VecDeque::with_capacity(latency_room),
            dram_latency: c.dram_latency as u64,
            dram,
            clock_acc: 0,
            core_mhz: c.core_clock_mhz as u64,
            dram_mhz: c.dram_clock_mhz as u64,
        }
    }

    /// Starts the next kernel of a sequence: the L2 keeps its lines (dropped with `flush`,
    /// as `-gpgpu_flush_l2_cache` does; GPGPU-Sim 3.2.2's `flushL2` writes nothing back) and
    /// the counters start from zero.
    pub fn next_kernel(&mut self, flush: bool) {
        for s in &mut self.subs {
            if flush {
                s.tags.invalidate_all();
            }
            s.stats = CacheStats::default();
        }
        self.dram.reset_stats();
    }

    /// The L2 counters of all the channel's sub-partitions.
    pub fn stats(&self) -> CacheStats {
        let mut t = CacheStats::default();
        for s in &self.subs {
            t.add(&s.stats);
        }
        t
    }

    /// DRAM command cycles in this core cycle.
    fn dram_ticks(&mut self) -> u64 {
        match self.dram {
            Dram::Fixed(_) => 1,
            Dram::Gddr5(_) => {
                self.clock_acc += self.dram_mhz;
                let n = self.clock_acc / self.core_mhz;
                self.clock_acc -= n * self.core_mhz;
                n
            }
        }
    }

    /// One core cycle: the DRAM's cycles, then each sub-partition's cycle (taking from
    /// `input`, whose destinations are the global sub-partition ids).
    pub fn cycle(&mut self, now: u64, input: &mut Network<MemRequest>) {
        let ticks = self.dram_ticks();
        // Nothing inside and nothing waiting at the inputs: the cycle changes no state but
        // the DRAM's timing counters.
        if self.dram.is_idle() && self.queues_idle(input) {
            match &mut self.dram {
                Dram::Gddr5(d) => d.skip(ticks),
                Dram::Fixed(d) => d.cycle(now),
            }
            for s in &mut self.subs {
                if s.mshrs.is_full() {
                    s.stats.cycles_mshr_full += 1;
                }
            }
            return;
        }
        for _ in 0..ticks {
            self.dram_cycle(now);
        }
        let n = self.subs.len();
        for s in &mut self.subs {
            s.cycle(now, input, &self.map, n);
        }
    }

    /// Sub-partition (index inside the channel) of a line of this channel.
    fn sub_of(&self, line: u64) -> usize {
        self.map.sub_partition(line) % self.subs.len()
    }

    /// One DRAM cycle (GPGPU-Sim 3.2.2 l2cache.cc `memory_partition_unit::dram_cycle`).
    fn dram_cycle(&mut self, now: u64) {
        // Finished write-backs return their credit (`set_done`).
        while let Some(w) = self.dram.pop_writeback() {
            let s = self.sub_of(w.line);
            self.credits.give_back(s);
        }
        // The return queue's head to its sub-partition's DRAM→L2 queue, if that has room;
        // otherwise it stays and the return path stalls.
        if let Some(r) = self.dram.return_top(now) {
            let s = self.sub_of(r.line);
            if r.write && r.ack.is_none() {
                // `fixed` returns write-backs in order too.
                self.dram.return_pop(now);
                self.credits.give_back(s);
            } else if self.subs[s].dram_l2.len() < self.subs[s].dram_l2_cap {
                self.dram.return_pop(now);
                self.subs[s].dram_l2.push_back(r);
                self.credits.give_back(s);
            }
        }
        self.dram.cycle(now);
        if self.dram.has_room() {
            // Round robin after the last borrower; one request per DRAM cycle.
            let n = self.subs.len();
            let last = self.credits.last_borrower;
            for k in 0..n {
                let s = (k + last + 1) % n;
                let sub = &self.subs[s];
                let can_issue = sub.dram_l2.len() < sub.dram_l2_cap && self.credits.has(s);
                if !sub.l2_dram.is_empty() && can_issue {
                    let r = self.subs[s].l2_dram.pop_front().expect("not empty");
                    match self.dram {
                        Dram::Fixed(_) => self.dram.push(r),
                        Dram::Gddr5(_) => self.latency_queue.push_back((now + self.dram_latency, r)),
                    }
                    self.credits.borrow(s);
                    break;
                }
            }
        }
        if let Some(&(ready, r)) = self.latency_queue.front() {
            if ready <= now && self.dram.has_room() {
                self.latency_queue.pop_front();
                self.dram.push(r);
            }
        }
    }

    /// The first cycle from `now` on in which this partition can change (the global cycle
    /// skip, `gpu/skip.rs`): `now` while its DRAM holds a request or a queue holds one that
    /// can move; else when the head of the ROP or DRAM-latency queue is due; `u64::MAX`
    /// when empty. Requests still in the network are the network's to report.
    pub fn next_act(&self, now: u64) -> u64 {
        if !self.dram.is_idle() {
            return now;
        }
        let mut due = self
            .latency_queue
            .front()
            .map_or(u64::MAX, |&(ready, _)| ready.max(now));
        for s in &self.subs {
            let moving = !(s.icnt_l2.is_empty()
                && s.miss_queue.is_empty()
                && s.l2_dram.is_empty()
                && s.dram_l2.is_empty()
                && s.replies.is_empty());
            if moving {
                return now;
            }
            if let Some(&(ready, _)) = s.rop.front() {
                due = due.min(ready.max(now));
            }
        }
        due
    }

    /// Nothing waits in the DRAM-latency queue, the sub-partitions' queues or the network
    /// towards them.
    fn queues_idle(&self, input: &Network<MemRequest>) -> bool {
        self.latency_queue.is_empty() && self.subs.iter().all(|s| s.is_empty() && input.pending(s.id) == 0)
    }

    /// What `cycles` calls of [`cycle`](Self::cycle) do to a partition whose
    /// [`next_act`](Self::next_act) is beyond them: its DRAM's clock and timing counters
    /// advance, and the per-cycle full-queue counters count.
    pub fn skip_quiet(&mut self, cycles: u64, input: &Network<MemRequest>) {
        // The same path `cycle` takes (the idle one counts no miss-queue-full cycles); the
        // DRAM is idle here.
        let idle = self.queues_idle(input);
        let ticks = match self.dram {
            Dram::Fixed(_) => cycles,
            Dram::Gddr5(_) => {
                // `cycles` steps of `dram_ticks`, summed: the accumulator stays below
                // `core_mhz`, so the floors add up to one floor.
                self.clock_acc += cycles * self.dram_mhz;
                let n = self.clock_acc / self.core_mhz;
                self.clock_acc -= n * self.core_mhz;
                n
            }
        };
        match &mut self.dram {
            Dram::Gddr5(d) => d.skip(ticks),
            Dram::Fixed(d) => d.stats.cycles += ticks,
        }
        for s in &mut self.subs {
            if s.mshrs.is_full() {
                s.stats.cycles_mshr_full += cycles;
            }
            if !idle && s.miss_queue_full(1) {
                s.stats.cycles_miss_queue_full += cycles;
            }
        }
    }

    /// Nothing buffered or in flight inside the partition (its DRAM writes excepted).
    pub fn is_quiet(&self) -> bool {
        self.subs
            .iter()
            .all(|s| s.mshrs.used() == 0 && s.replies.is_empty() && s.rop.is_empty() && s.icnt_l2.is_empty())
    }

    pub fn mshrs_used(&self) -> usize {
        self.subs.iter().map(|s| s.mshrs.used()).sum()
    }

    /// The channel index.
    pub fn index(&self) -> usize {
        self.index
    }
}

#[cfg(test)]
mod tests {
    use super::super::icnt::RouterShape;
    use super::*;

    /// A request to partition 0 for `line`: a read, or an atomic of instruction slot 7.
    fn request(id: u32, line: u64, atomic: bool) -> MemRequest {
        MemRequest {
            id,
            line,
            sm: 0,
            warp: 3,
            write: false,
            bytes: if atomic { 32 } else { 0 },
            atomic: atomic.then_some(7),
        }
    }

    /// Sends `req` at `start` and runs the partition until it answers: (cycles, reply).
    fn serve(
        p: &mut Partition,
        net: &mut Network<MemRequest>,
        req: MemRequest,
        start: u64,
    ) -> (u64, MemReply) {
        net.send(0, 0, req.flits(32), start, req);
        for now in start..start + 100_000 {
            p.cycle(now, net);
            if let Some(r) = p.subs[0].replies.pop_front() {
                return (now - start, r);
            }
        }
        panic!("no reply");
    }

    /// A request network from one SM to every sub-partition, with the configuration's router.
    fn network(c: &Config) -> Network<MemRequest> {
        let subs = (c.l2_partitions * c.l2_sub_partitions) as usize;
        Network::new(1, subs, 1, 2, 1, RouterShape::of(c))
    }

    /// Lines of sub-partition 0 (of channel 0, the partition under test).
    fn lines_of_channel_0(c: &Config) -> impl Iterator<Item = u64> {
        let map = ChannelMap::new(c).unwrap();
        (0u64..).filter(move |&l| map.sub_partition(l) == 0)
    }

    #[test]
    fn an_atomic_is_a_read_at_the_l2_a_miss_waits_for_dram_and_the_line_turns_dirty() {
        let c = Config {
            l2_ways: 1,
            ..Config::default()
        };
        let mut p = Partition::new(0, &c);
        let mut net = network(&c);
        let mut lines = lines_of_channel_0(&c);
        let (x, y) = (lines.next().unwrap(), lines.next().unwrap());
        let (miss, r) = serve(&mut p, &mut net, request(1, x, true), 0);
        assert_eq!((r.atomic, r.bytes, r.write, r.warp), (Some(7), 32, false, 3));
        assert_eq!(
            (
                p.subs[0].stats.misses,
                p.subs[0].stats.atomics,
                p.subs[0].stats.fills
            ),
            (1, 1, 1)
        );
        let (hit, _) = serve(&mut p, &mut net, request(2, x, true), 10_000);
        assert_eq!((p.subs[0].stats.hits, p.subs[0].stats.atomics), (1, 2));
        assert!(
            hit < miss && miss > hit + 100,
            "a hit answers after the L2 latency ({hit}), a miss after DRAM ({miss})"
        );
        // The atomic's fill left the line dirty (3.2.2 `m_has_atomic`), and so does a hit.
        let lx = p.map.slice_line(x);
        assert!(p.subs[0].tags.victim(lx).is_some_and(|v| v.dirty));
        // A plain read of another line leaves it clean.
        let (_, r) = serve(&mut p, &mut net, request(3, y, false), 20_000);
        assert_eq!(r.atomic, None);
        let ly = p.map.slice_line(y);
        assert!(p.subs[0].tags.victim(ly).is_some_and(|v| !v.dirty));
        assert_eq!(p.subs[0].stats.atomics, 2);
        assert_eq!(p.subs[0].stats.accesses, p.subs[0].stats.outcomes());
    }

    #[test]
    fn an_atomic_hit_marks_a_clean_line_dirty_and_atomics_merging_into_a_fill_too() {
        let c = Config {
            l2_ways: 1,
            ..Config::default()
        };
        let mut p = Partition::new(0, &c);
        let mut net = network(&c);
        let x = lines_of_channel_0(&c).next().unwrap();
        let lx = p.map.slice_line(x);
        serve(&mut p, &mut net, request(1, x, false), 0);
        assert!(
            p.subs[0].tags.victim(lx).is_some_and(|v| !v.dirty),
            "a read fills it clean"
        );
        serve(&mut p, &mut net, request(2, x, true), 10_000);
        assert!(
            p.subs[0].tags.victim(lx).is_some_and(|v| v.dirty),
            "an atomic hit dirties it"
        );
        // A read miss with an atomic merged into its MSHR: the fill dirties the line.
        let mut p = Partition::new(0, &c);
        net.send(0, 0, 1, 0, request(3, x, false));
        net.send(0, 0, 1, 0, request(4, x, true));
        let mut replies = vec![];
        for now in 0..100_000 {
            p.cycle(now, &mut net);
            replies.extend(p.subs[0].replies.drain(..));
            if replies.len() == 2 {
                break;
            }
        }
        assert_eq!(p.subs[0].stats.hit_reserved, 1);
        assert_eq!(
            replies.iter().map(|r| r.atomic).collect::<Vec<_>>(),
            [None, Some(7)]
        );
        assert!(p.subs[0].tags.victim(lx).is_some_and(|v| v.dirty));
    }

    /// GPGPU-Sim 3.2.2 `cache_stats::select_stats_status`: a write whose probe is
    /// HIT_RESERVED (the line's fill is pending) counts as HIT_RESERVED, not as the MISS
    /// `wr_miss_wa` returns; it still goes to DRAM and merges into the line's MSHR.
    #[test]
    fn a_write_to_a_line_being_filled_is_counted_hit_reserved_not_miss() {
        let c = Config::default();
        let mut p = Partition::new(0, &c);
        let mut net = network(&c);
        let mut lines = lines_of_channel_0(&c);
        let (x, y) = (lines.next().unwrap(), lines.next().unwrap());
        let write = |id, line| MemRequest {
            write: true,
            bytes: 32,
            ..request(id, line, false)
        };
        for r in [request(1, x, false), write(2, x), write(3, y)] {
            net.send(0, 0, r.flits(32), 0, r);
        }
        let mut replies = 0;
        for now in 0..20_000 {
            p.cycle(now, &mut net);
            replies += p.subs[0].replies.drain(..).count();
        }
        assert_eq!(replies, 3, "the read and both writes are answered");
        let s = &p.subs[0].stats;
        assert_eq!(
            (s.misses, s.write_hit_reserved, s.write_misses, s.hit_reserved),
            (1, 1, 1, 0)
        );
        assert_eq!(s.accesses, s.outcomes());
    }

    #[test]
    fn an_atomic_carries_its_data_both_ways() {
        let a = request(1, 0, true);
        let r = MemRequest { bytes: 128, ..a };
        // Data and the 8-byte header (3.2.2 mem_fetch::get_num_flits): 32 + 8 B is 2 flits,
        // 128 + 8 B is 5.
        assert_eq!((a.flits(32), r.flits(32)), (2, 5));
        assert_eq!(request(1, 0, false).flits(32), 1);
        assert_eq!((a.reply().flits(32, 128), r.reply().flits(32, 128)), (2, 5));
        assert_eq!(
            request(1, 0, false).reply().flits(32, 128),
            5,
            "a read's reply is a line and its header"
        );
    }

    /// Reads to distinct lines of one sub-partition: (sub-partition index, lines).
    fn lines_of(c: &Config, sub: usize) -> impl Iterator<Item = u64> {
        let map = ChannelMap::new(c).unwrap();
        (0u64..).filter(move |&l| map.sub_partition(l) == sub)
    }

    /// The cycles at which `n` read hits of one warm line, queued at once at sub-partition 0,
    /// are answered, and those of the DRAM fills of `n` misses queued likewise.
    fn hit_and_fill_cycles(c: &Config, n: usize) -> (Vec<u64>, Vec<u64>) {
        let mut p = Partition::new(0, c);
        let mut net = network(c);
        let mut lines = lines_of_channel_0(c);
        let warm = lines.next().unwrap();
        serve(&mut p, &mut net, request(0, warm, false), 0);
        let start = 10_000;
        for k in 0..n {
            p.subs[0].icnt_l2.push_back(request(1 + k as u32, warm, false));
        }
        let mut hits = vec![];
        for now in start..start + 1_000 {
            p.cycle(now, &mut net);
            while p.subs[0].replies.pop_front().is_some() {
                hits.push(now - start);
            }
        }
        // Misses: their DRAM reads come back together (taken from the L2→DRAM queue and put
        // straight into the DRAM→L2 queue, the sub-partition stepped alone).
        let Partition { subs, map, .. } = &mut p;
        let sub = &mut subs[0];
        for (k, line) in lines.take(n).enumerate() {
            sub.icnt_l2.push_back(request(100 + k as u32, line, false));
        }
        let mut reads = vec![];
        for now in 20_000..20_100 {
            sub.cycle(now, &mut net, map, 2);
            reads.extend(sub.l2_dram.drain(..));
        }
        assert_eq!(reads.len(), n, "every miss reads its line");
        sub.dram_l2.extend(reads);
        let fills_before = sub.stats.fills;
        let mut fills = vec![];
        for now in 30_000..30_100 {
            sub.cycle(now, &mut net, map, 2);
            if sub.stats.fills > fills_before + fills.len() as u64 {
                fills.push(now - 30_000);
            }
        }
        (hits, fills)
    }

    /// 3.2.2 gpu-cache.cc `bandwidth_management`: a 128 B read hit holds the 32 B data port
    /// four cycles, and a fill the fill port four; a port as wide as the line takes one a
    /// cycle.
    #[test]
    fn the_l2_data_and_fill_ports_move_32_bytes_a_cycle() {
        let c = Config::default();
        assert_eq!(c.l2_data_port_bytes, 32, "the GTX480 file's dl2 data port");
        let (hits, fills) = hit_and_fill_cycles(&c, 4);
        assert_eq!(hits.len(), 4);
        assert!(hits.windows(2).all(|w| w[1] - w[0] == 4), "hits {hits:?}");
        assert_eq!(fills, [0, 4, 8, 12]);
        let wide = Config {
            l2_data_port_bytes: 128,
            ..Config::default()
        };
        let (hits, fills) = hit_and_fill_cycles(&wide, 4);
        assert!(hits.windows(2).all(|w| w[1] - w[0] == 1), "hits {hits:?}");
        assert_eq!(fills, [0, 1, 2, 3]);
    }

    /// GTX480's `dl2 64:128:8,L:B:m:W,A:32:4,4` is per sub-partition (3.2.2 l2cache.cc builds
    /// one `l2_cache` per `memory_sub_partition`): each of a channel's two sub-partitions
    /// opens 32 MSHRs, and a line's sub-partition is its network destination.
    #[test]
    fn two_sub_partitions_each_take_32_mshrs() {
        let c = Config::default();
        assert_eq!(
            (c.l2_sub_partitions, c.l2_mshrs, c.l2_mshr_merge, c.l2_sets),
            (2, 32, 4, 64)
        );
        let mut p = Partition::new(0, &c);
        let ports = (c.l2_partitions * c.l2_sub_partitions) as usize;
        let mut net = Network::new(100, ports, 1, 2, 1, RouterShape::of(&c));
        let (a, b): (Vec<u64>, Vec<u64>) = (
            lines_of(&c, 0).take(40).collect(),
            lines_of(&c, 1).take(40).collect(),
        );
        assert!(a.iter().chain(&b).all(|&l| p.map.channel(l) == 0));
        for (k, (&x, &y)) in a.iter().zip(&b).enumerate() {
            net.send(k, 0, 1, 0, request(k as u32, x, false));
            net.send(50 + k, 1, 1, 0, request(100 + k as u32, y, false));
        }
        // Before the first DRAM read can return (ROP + DRAM latency).
        for now in 0..(c.l2_latency + c.dram_latency) as u64 {
            p.cycle(now, &mut net);
        }
        for s in &p.subs {
            assert_eq!(s.mshrs.used(), 32, "sub-partition {}", s.id);
            assert!(s.stats.fail_mshr_full > 0);
            assert_eq!(s.stats.misses, 32);
        }
        assert_eq!(p.mshrs_used(), 64);
    }

    /// 3.2.2 `memory_partition_unit::dram_cycle` moves the return queue's head only when
    /// its sub-partition's DRAM→L2 queue has room, and `can_issue_to_dram` holds a
    /// sub-partition's L2→DRAM queue while that queue is full.
    #[test]
    fn a_full_dram_to_l2_queue_stalls_the_return_and_the_issue() {
        let c = Config::default();
        let mut p = Partition::new(0, &c);
        let x = lines_of(&c, 0).next().unwrap();
        let filler = DramRequest::read(x, 128);
        while p.subs[0].dram_l2.len() < c.l2_fill_queue as usize {
            p.subs[0].dram_l2.push_back(filler);
        }
        p.dram.push(DramRequest::read(x, 128));
        p.credits.borrow(0);
        p.subs[0].l2_dram.push_back(DramRequest::read(x + 1, 128));
        for now in 0..2000 {
            p.dram_cycle(now);
        }
        assert_eq!(
            p.dram.return_top(2000).map(|r| r.line),
            Some(x),
            "the read waits in returnq"
        );
        assert_eq!(
            p.subs[0].l2_dram.len(),
            1,
            "no issue while the DRAM→L2 queue is full"
        );
        p.subs[0].dram_l2.clear();
        p.dram_cycle(2000);
        assert_eq!(p.subs[0].dram_l2.back().map(|r| r.line), Some(x));
        assert!(p.dram.return_top(2001).is_none());
        p.dram_cycle(2001);
        assert!(p.subs[0].l2_dram.is_empty(), "then the L2→DRAM queue issues");
    }

    /// 3.2.2 `arbitration_metadata`: one private credit per sub-partition, the rest
    /// (`frfcfs queue + return queue − (subs − 1)`) shared.
    #[test]
    fn dram_credits_are_one_private_each_and_a_shared_pool() {
        let c = Config {
            dram_queue: 1,
            dram_return_queue: 1,
            ..Config::default()
        };
        let mut k = Credits::new(&c);
        assert_eq!(k.shared_limit, 1);
        assert!(k.has(0));
        k.borrow(0);
        assert!(k.has(0), "the shared credit");
        k.borrow(0);
        assert!(!k.has(0), "depleted");
        assert!(k.has(1), "the other sub-partition keeps its private credit");
        k.give_back(0);
        assert!(k.has(0));
        let unlimited = Credits::new(&Config {
            dram_return_queue: 0,
            ..Config::default()
        });
        assert_eq!(unlimited.shared_limit, 0);
    }
}
