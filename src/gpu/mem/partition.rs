//! An L2 partition: one memory channel's slice of the L2 (write-back, write-allocate) with
//! its own MSHRs and miss queue, in front of the channel's DRAM.
//!
//! Lines reach a partition by the address map ([`ChannelMap`]); the partition indexes its
//! sets by the line's channel-local index. GPGPU-Sim 3.2.2 splits a channel's L2 into
//! `-gpgpu_n_sub_partition_per_mchannel` slices; the model keeps one slice per channel
//! holding all their sets [design; the sets a line can use differ, their number does not].
//!
//! Each cycle it takes at most one request from the interconnect. A read hit or a write hit
//! answers after `l2_latency`; a read miss opens (or merges into) an MSHR and queues a DRAM
//! read; the fill answers every merged waiter. A write miss does what GPGPU-Sim 3.2.2's
//! `data_cache::wr_miss_wa` does for the GTX480 L2 (`L:B:m:W`): the write goes on to DRAM
//! (acknowledged when DRAM has written it), a read of the whole line allocates it through
//! an MSHR, and a dirty victim is written back. When it cannot take the request at the
//! head (no MSHR, full miss queue, too many replies waiting) the request stays in the
//! interconnect buffer, which pushes back on the SMs through the credit limit.
//!
//! A global atomic is performed here as GPGPU-Sim 3.2.2 does it: the request is a read
//! (`atom` is a `LOAD_OP`, its access `GLOBAL_ACC_R`), timed as one (a hit answers after
//! `l2_latency`, a miss opens or merges into an MSHR and waits for DRAM), and it leaves the
//! line dirty: at once on a hit (gpu-cache.cc `data_cache::rd_hit_base`), at the fill
//! when any request merged into the MSHR is atomic (`mshr_table::add` sets `m_has_atomic`,
//! `baseline_cache::fill` marks the line `MODIFIED`). Its reply carries the access's data
//! back to the SM (l2cache.cc `memory_sub_partition::pop` runs the operation as the reply
//! leaves; no other cost).
//!
//! The DRAM runs on its own clock: with `gddr5`, each core cycle steps it
//! `dram_clock_mhz / core_clock_mhz` command cycles on average, carried in an accumulator
//! (GPGPU-Sim 3.2.2 `gpgpu_sim::next_clock_domain`); each command cycle does what
//! `memory_partition_unit::dram_cycle` does: completions, the channel's cycle, then one
//! request from the miss queue into the `dram_latency` queue and one from that queue into
//! the DRAM while the DRAM has room.

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

#[derive(Clone, Debug)]
pub struct Partition {
    index: usize,
    map: ChannelMap,
    /// Tags and MSHRs are keyed by the channel-local line.
    tags: TagArray,
    mshrs: MshrTable<Waiter>,
    /// DRAM-bound requests still in the tag pipeline: (cycle the lookup completes, request).
    miss_pipe: VecDeque<(u64, DramRequest)>,
    /// DRAM-bound requests waiting for room in the DRAM queue.
    miss_queue: VecDeque<DramRequest>,
    miss_queue_cap: usize,
    /// `gddr5`: requests waiting out `dram_latency` before the DRAM queue (3.2.2's
    /// `m_dram_latency_queue`): (ready core cycle, request).
    latency_queue: VecDeque<(u64, DramRequest)>,
    dram_latency: u64,
    /// Hits and acknowledgements waiting out the access latency: (ready cycle, reply).
    pipe: VecDeque<(u64, MemReply)>,
    /// Replies ready to enter the interconnect.
    pub replies: VecDeque<MemReply>,
    reply_cap: usize,
    latency: u64,
    line_bytes: u32,
    pub dram: Dram,
    /// DRAM clock accumulator: DRAM MHz added per core cycle, a command cycle per core MHz.
    clock_acc: u64,
    core_mhz: u64,
    dram_mhz: u64,
    pub stats: CacheStats,
}

impl Partition {
    /// A partition of a validated configuration (the address map and timing parse).
    pub fn new(index: usize, c: &Config) -> Self {
        let map = ChannelMap::new(c).expect("validated configuration");
        let reply_room = (c.l2_response_queue + c.l2_mshrs * c.l2_mshr_merge) as usize;
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
        Partition {
            index,
            map,
            tags: TagArray::new(c.l2_sets, c.l2_ways),
            mshrs: MshrTable::new(c.l2_mshrs, c.l2_mshr_merge),
            miss_pipe: VecDeque::with_capacity(3 * (c.l2_miss_queue + c.l2_latency) as usize),
            miss_queue: VecDeque::with_capacity(3 * c.l2_miss_queue as usize + 3),
            miss_queue_cap: c.l2_miss_queue as usize,
            latency_queue: VecDeque::with_capacity(latency_room),
            dram_latency: c.dram_latency as u64,
            pipe: VecDeque::with_capacity(c.l2_response_queue as usize + c.l2_latency as usize),
            // Write acknowledgements from DRAM come on top of the replies the cap allows.
            replies: VecDeque::with_capacity(reply_room + latency_room + 2 * c.dram_queue as usize + 64),
            reply_cap: c.l2_response_queue as usize,
            latency: c.l2_latency as u64,
            line_bytes: c.line_bytes,
            dram,
            clock_acc: 0,
            core_mhz: c.core_clock_mhz as u64,
            dram_mhz: c.dram_clock_mhz as u64,
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
        self.dram.reset_stats();
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

    /// One core cycle, in reverse pipeline order: the DRAM's cycles (fills, DRAM issue),
    /// finished hits, then one new request from `input` (the network whose destination
    /// `self.index` is this partition).
    pub fn cycle(&mut self, now: u64, input: &mut Network<MemRequest>) {
        let ticks = self.dram_ticks();
        // Nothing inside and nothing waiting at the input: the cycle changes no state but
        // the DRAM's timing counters.
        if self.dram.is_idle()
            && self.miss_pipe.is_empty()
            && self.miss_queue.is_empty()
            && self.latency_queue.is_empty()
            && self.pipe.is_empty()
            && input.pending(self.index) == 0
        {
            match &mut self.dram {
                Dram::Gddr5(d) => d.skip(ticks),
                Dram::Fixed(d) => d.cycle(now),
            }
            if self.mshrs.is_full() {
                self.stats.cycles_mshr_full += 1;
            }
            return;
        }
        for _ in 0..ticks {
            self.dram_cycle(now);
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
                // Atomics performed (accepted; an atomic is also counted as the read it is).
                self.stats.atomics += req.atomic.is_some() as u64;
            }
        }
    }

    /// One DRAM cycle (GPGPU-Sim 3.2.2 `memory_partition_unit::dram_cycle`).
    fn dram_cycle(&mut self, now: u64) {
        while let Some(done) = self.dram.pop_done(now) {
            self.dram_done(done, now);
        }
        self.dram.cycle(now);
        match self.dram {
            Dram::Fixed(_) => {
                if self.dram.has_room() {
                    if let Some(r) = self.miss_queue.pop_front() {
                        self.dram.push(r);
                    }
                }
            }
            Dram::Gddr5(_) => {
                if self.dram.has_room() {
                    if let Some(r) = self.miss_queue.pop_front() {
                        self.latency_queue.push_back((now + self.dram_latency, r));
                    }
                }
                if let Some(&(ready, r)) = self.latency_queue.front() {
                    if ready <= now && self.dram.has_room() {
                        self.latency_queue.pop_front();
                        self.dram.push(r);
                    }
                }
            }
        }
    }

    /// A finished DRAM request: a read fills the line and answers everyone merged into its
    /// MSHR; a write miss's store is acknowledged.
    fn dram_done(&mut self, done: DramRequest, now: u64) {
        if done.write {
            if let Some(a) = done.ack {
                self.replies.push_back(MemReply {
                    id: a.id,
                    line: done.line,
                    sm: a.sm,
                    warp: a.warp,
                    write: true,
                    atomic: None,
                    bytes: 0,
                });
            }
            return;
        }
        let local = self.map.local_line(done.line);
        self.tags.fill(local, now);
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

    /// Tries to serve `req`; false leaves it at the head of the input buffer.
    fn access(&mut self, req: MemRequest, now: u64) -> bool {
        let line = req.line;
        let local = self.map.local_line(line);
        let probe = self.tags.probe(local);
        self.stats.accesses += 1;
        if req.write {
            return self.write(req, local, probe, now);
        }
        let waiter = Waiter {
            id: req.id,
            sm: req.sm,
            warp: req.warp,
            reply: true,
            atomic: req.atomic,
            bytes: req.bytes,
        };
        match probe {
            Probe::Hit => {
                self.tags.touch(local, now);
                // GPGPU-Sim 3.2.2 gpu-cache.cc, data_cache::rd_hit_base: an atomic's read
                // hit marks the line MODIFIED.
                if req.atomic.is_some() {
                    self.tags.mark_dirty(local);
                }
                self.stats.hits += 1;
                self.pipe.push_back((now + self.latency, req.reply()));
                true
            }
            Probe::Reserved => {
                if self.mshrs.can_merge(local) {
                    self.mshrs.merge(local, waiter);
                    self.stats.hit_reserved += 1;
                    true
                } else {
                    self.stats.fail_merge_limit += 1;
                    false
                }
            }
            Probe::Miss => {
                let writeback = self.tags.victim(local).filter(|v| v.dirty).is_some();
                let slots = 1 + writeback as usize;
                if self.mshrs.is_full() {
                    self.stats.fail_mshr_full += 1;
                    false
                } else if !self.miss_room(slots) {
                    self.stats.fail_miss_queue_full += 1;
                    false
                } else if !self.tags.can_allocate(local) {
                    self.stats.fail_line_alloc += 1;
                    false
                } else {
                    self.allocate(local, now);
                    self.mshrs.open(local, waiter, now);
                    self.miss_pipe
                        .push_back((now + self.latency, DramRequest::read(line, self.line_bytes)));
                    self.stats.misses += 1;
                    true
                }
            }
        }
    }

    /// A write: a hit marks the line dirty and is acknowledged after the access latency. A
    /// miss, or a write to a line whose fill is pending, is GPGPU-Sim 3.2.2's
    /// `data_cache::wr_miss_wa`: the write is sent on to DRAM (its acknowledgement comes
    /// when DRAM has written it), and a read of the whole line (`set_data_size(line size)`
    /// in `send_read_request`) allocates it: a new MSHR and a DRAM read on a miss, a merge
    /// into the pending MSHR otherwise; a dirty victim is written back. The filled line is
    /// clean (the write already went below).
    fn write(&mut self, req: MemRequest, local: u64, probe: Probe, now: u64) -> bool {
        if probe == Probe::Hit {
            self.tags.mark_dirty(local);
            self.tags.touch(local, now);
            self.stats.write_hits += 1;
            self.pipe.push_back((now + self.latency, req.reply()));
            return true;
        }
        let waiter = Waiter {
            reply: false,
            ..Waiter::default()
        };
        let store = DramRequest {
            ack: Some(Ack {
                id: req.id,
                sm: req.sm,
                warp: req.warp,
            }),
            ..DramRequest::write(req.line, req.bytes as u32)
        };
        if probe == Probe::Reserved {
            if !self.mshrs.can_merge(local) {
                self.stats.fail_merge_limit += 1;
                return false;
            }
            if !self.miss_room(1) {
                self.stats.fail_miss_queue_full += 1;
                return false;
            }
            self.mshrs.merge(local, waiter);
            self.miss_pipe.push_back((now + self.latency, store));
            self.stats.write_misses += 1;
            return true;
        }
        let writeback = self.tags.victim(local).filter(|v| v.dirty).is_some();
        if self.mshrs.is_full() {
            self.stats.fail_mshr_full += 1;
            return false;
        }
        if !self.miss_room(2 + writeback as usize) {
            self.stats.fail_miss_queue_full += 1;
            return false;
        }
        if !self.tags.can_allocate(local) {
            self.stats.fail_line_alloc += 1;
            return false;
        }
        // In 3.2.2's order: the write, the line read, then the victim's write-back.
        self.miss_pipe.push_back((now + self.latency, store));
        self.miss_pipe
            .push_back((now + self.latency, DramRequest::read(req.line, self.line_bytes)));
        self.allocate(local, now);
        self.mshrs.open(local, waiter, now);
        self.stats.write_misses += 1;
        true
    }

    /// Allocates (reserves) local line `local`, queueing a DRAM write for a dirty victim.
    fn allocate(&mut self, local: u64, now: u64) {
        if let Some(v) = self.tags.allocate(local, LineState::Reserved, false, now) {
            if v.dirty {
                let line = self.map.global_line(v.line, self.index);
                self.miss_pipe
                    .push_back((now + self.latency, DramRequest::write(line, self.line_bytes)));
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

#[cfg(test)]
mod tests {
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
            if let Some(r) = p.replies.pop_front() {
                return (now - start, r);
            }
        }
        panic!("no reply");
    }

    /// Lines of channel 0, the partition under test.
    fn lines_of_channel_0(c: &Config) -> impl Iterator<Item = u64> {
        let map = ChannelMap::new(c).unwrap();
        (0u64..).filter(move |&l| map.channel(l) == 0)
    }

    #[test]
    fn an_atomic_is_a_read_at_the_l2_a_miss_waits_for_dram_and_the_line_turns_dirty() {
        let c = Config {
            l2_ways: 1,
            ..Config::default()
        };
        let mut p = Partition::new(0, &c);
        let mut net = Network::new(1, c.l2_partitions as usize, 1, 2, 1, 8);
        let mut lines = lines_of_channel_0(&c);
        let (x, y) = (lines.next().unwrap(), lines.next().unwrap());
        let (miss, r) = serve(&mut p, &mut net, request(1, x, true), 0);
        assert_eq!((r.atomic, r.bytes, r.write, r.warp), (Some(7), 32, false, 3));
        assert_eq!((p.stats.misses, p.stats.atomics, p.stats.fills), (1, 1, 1));
        let (hit, _) = serve(&mut p, &mut net, request(2, x, true), 10_000);
        assert_eq!((p.stats.hits, p.stats.atomics), (1, 2));
        assert!(
            hit < miss && miss > hit + 100,
            "a hit answers after the L2 latency ({hit}), a miss after DRAM ({miss})"
        );
        // The atomic's fill left the line dirty (3.2.2 `m_has_atomic`), and so does a hit.
        let lx = p.map.local_line(x);
        assert!(p.tags.victim(lx).is_some_and(|v| v.dirty));
        // A plain read of another line leaves it clean.
        let (_, r) = serve(&mut p, &mut net, request(3, y, false), 20_000);
        assert_eq!(r.atomic, None);
        let ly = p.map.local_line(y);
        assert!(p.tags.victim(ly).is_some_and(|v| !v.dirty));
        assert_eq!(p.stats.atomics, 2);
        assert_eq!(p.stats.accesses, p.stats.outcomes());
    }

    #[test]
    fn an_atomic_hit_marks_a_clean_line_dirty_and_atomics_merging_into_a_fill_too() {
        let c = Config {
            l2_ways: 1,
            ..Config::default()
        };
        let mut p = Partition::new(0, &c);
        let mut net = Network::new(1, c.l2_partitions as usize, 1, 2, 1, 8);
        let x = lines_of_channel_0(&c).next().unwrap();
        let lx = p.map.local_line(x);
        serve(&mut p, &mut net, request(1, x, false), 0);
        assert!(
            p.tags.victim(lx).is_some_and(|v| !v.dirty),
            "a read fills it clean"
        );
        serve(&mut p, &mut net, request(2, x, true), 10_000);
        assert!(
            p.tags.victim(lx).is_some_and(|v| v.dirty),
            "an atomic hit dirties it"
        );
        // A read miss with an atomic merged into its MSHR: the fill dirties the line.
        let mut p = Partition::new(0, &c);
        net.send(0, 0, 1, 0, request(3, x, false));
        net.send(0, 0, 1, 0, request(4, x, true));
        let mut replies = vec![];
        for now in 0..100_000 {
            p.cycle(now, &mut net);
            replies.extend(p.replies.drain(..));
            if replies.len() == 2 {
                break;
            }
        }
        assert_eq!(p.stats.hit_reserved, 1);
        assert_eq!(
            replies.iter().map(|r| r.atomic).collect::<Vec<_>>(),
            [None, Some(7)]
        );
        assert!(p.tags.victim(lx).is_some_and(|v| v.dirty));
    }

    #[test]
    fn an_atomic_carries_its_data_both_ways() {
        let a = request(1, 0, true);
        let r = MemRequest { bytes: 128, ..a };
        assert_eq!((a.flits(32), r.flits(32)), (1, 4));
        assert_eq!(request(1, 0, false).flits(32), 1);
        assert_eq!((a.reply().flits(32, 128), r.reply().flits(32, 128)), (1, 4));
        assert_eq!(
            request(1, 0, false).reply().flits(32, 128),
            4,
            "a read's reply is a line"
        );
    }
}
