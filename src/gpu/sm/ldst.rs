//! The LD/ST unit: the dispatch register that takes a warp's global memory instruction, the
//! coalescer that turns it into line requests, the one L1 port those requests (and CAR's
//! retries) take one per cycle, parking of refused requests in the re-execution queue, and
//! the miss queue's exit into the interconnect.

use super::coalescer::{Coalesced, LineRequest};
use super::l1::Outcome;
use super::warp::IbufEntry;
use super::{Event, InflightLoad, Sm};
use crate::config::{CarEntry, CarRetry};
use crate::gpu::mem::icnt::Network;
use crate::gpu::mem::MemRequest;
use crate::mascar::QueueIn;
use crate::workload::program::{LaneEnv, OpKind, NO_REG};
use crate::workload::Kernel;

/// The instruction the LD/ST unit is working on.
#[derive(Clone, Debug, Default)]
pub(super) struct LsuOp {
    pub(super) busy: bool,
    pub(super) warp: u8,
    pub(super) store: bool,
    pub(super) load: u16,
    pub(super) next: usize,
    pub(super) lines: Coalesced,
    /// CAR access entries: some line of this instruction is parked in the queue.
    pub(super) parked: bool,
    /// CAR: the head's last access was refused and it could not park; it waits at the head.
    pub(super) waiting: bool,
}

impl Sm {
    /// The re-execution queue's valid entries as (warp, store, load id), for checks.
    pub fn parked_entries(&self) -> impl Iterator<Item = (u8, bool, u16)> + '_ {
        self.car
            .iter()
            .flatten()
            .filter(|p| p.lines.len > 0)
            .map(|p| (p.warp, p.store, p.load))
    }

    /// The dispatch register: warp `w`'s global memory instruction `entry` enters the LD/ST
    /// unit; the coalescer turns its lanes' addresses into line requests.
    pub(super) fn ldst_dispatch(&mut self, w: usize, entry: &IbufEntry, k: &Kernel) {
        let inst = entry.inst;
        let warp = &self.warps[w];
        let env = LaneEnv {
            tid: warp.tid_base as i64,
            cta: warp.cta as i64,
            block: k.block as i64,
            grid: k.grid as i64,
            loops: entry.loops,
        };
        let lanes = warp.lanes;
        let expr = &warp.program.as_deref().unwrap_or(&k.program).exprs[inst.addr as usize];
        self.lsu.lines.build_in(
            expr,
            env,
            warp.values.file(),
            lanes,
            entry.mask,
            inst.width as u32,
            self.cfg.line_bytes,
        );
        self.stats.coalesced_requests += self.lsu.lines.len as u64;
        self.lsu.busy = true;
        self.lsu.warp = w as u8;
        self.lsu.next = 0;
        self.lsu.parked = false;
        self.lsu.waiting = false;
        self.lsu.store = inst.op == OpKind::StoreGlobal;
        let warp = &mut self.warps[w];
        warp.in_pipeline += 1;
        if self.lsu.store {
            self.stats.global_stores += 1;
        } else {
            self.stats.global_loads += 1;
            let id = self.free_loads.pop().expect("unit_free checked");
            self.loads[id as usize] = InflightLoad {
                warp: w as u8,
                dst: inst.dst,
                remaining: self.lsu.lines.len as u16,
            };
            self.lsu.load = id;
            if inst.dst != NO_REG {
                warp.pending.insert(inst.dst);
                warp.pending_global.insert(inst.dst);
            }
        }
    }

    /// The LD/ST unit: one L1 access per cycle, whatever its outcome. Without CAR the head
    /// line request goes to the L1, and a refused access stays at the head, blocking
    /// everything behind it (retried every cycle). With CAR the re-execution queue decides
    /// who takes the port from its own state: its oldest entry worth retrying (armed by the
    /// L1's free pulses since its last try), else the head; with `car_retry = head_first` the
    /// head first unless it waits behind a refusal. A refused head request moves into the
    /// queue (if it has room and the warp holds no entry of another instruction): with
    /// `car_entry = access` just that line request, and the head goes on with its next one;
    /// with `instruction` the rest of the instruction, freeing the unit for the next one.
    /// Without room the head waits and retries. In MP a non-owner's access (head or entry) is
    /// served hit-only.
    pub(super) fn ldst(&mut self, now: u64) {
        let (mp, owner) = self.blocks.registers();
        let (mshr_freed, miss_queue_freed) = self.l1.take_free_pulses();
        if self.car.is_none() {
            self.ldst_head(now, false, None);
            return;
        }
        let mut qin = QueueIn {
            mp,
            owner,
            mshr_freed,
            miss_queue_freed,
            head_first: self.cfg.car_retry == CarRetry::HeadFirst,
            head_ready: self.lsu.busy && !self.lsu.waiting,
            ..QueueIn::default()
        };
        let q = self.blocks.queue_eval(&qin);
        let restricted = mp.then(|| owner.unwrap_or(u8::MAX));
        if let Some(e) = q.select {
            let e = e as usize;
            let p = &self.car.as_ref().expect("CAR")[e];
            let (warp, store, load, req) = (p.warp, p.store, p.load, p.next_line());
            let hit_only = q.hit_only >> e & 1 == 1;
            let outcome = self.access_line(warp, store, load, req, now, true, hit_only);
            self.stats.car.retries += 1;
            if !outcome.is_some_and(Outcome::accepted) {
                // Wasted: the entry goes back behind the others and waits for a pulse.
                self.stats.car.failed_retries += 1;
                qin.refused = true;
                self.blocks.queue_clock(now, &qin);
                return;
            }
            self.stats.car.reexecutions += 1;
            if let Some(ev) = &mut self.events {
                ev.push(crate::gpu::events::SmEvent::Reexec { warp, entry: e as u8 });
            }
            let p = &mut self.car.as_mut().expect("CAR")[e];
            p.next += 1;
            if p.next == p.lines.len {
                p.lines.len = 0;
                qin.free = Some(e as u8);
                match self.cfg.car_entry {
                    CarEntry::Instruction => self.mem_instruction_sent(warp, store),
                    CarEntry::Access => {
                        let w = warp as usize;
                        self.parked_lines[w] -= 1;
                        if self.parked_lines[w] == 0 && self.store_parked >> w & 1 == 1 {
                            self.store_parked &= !(1u64 << w);
                            self.mem_instruction_sent(warp, true);
                        }
                    }
                }
            }
        } else if let Some(warp) = self.ldst_head(now, true, restricted) {
            // Refused: park it when the queue has room and the warp holds no entry (or, for
            // access entries, only entries of this same instruction).
            let w = warp as usize;
            let own_entries = self.cfg.car_entry == CarEntry::Access && self.lsu.parked;
            if let Some(e) = q.alloc.filter(|_| q.warps >> warp & 1 == 0 || own_entries) {
                qin.push = Some(warp);
                self.stats.car.enqueued += 1;
                if let Some(ev) = &mut self.events {
                    ev.push(crate::gpu::events::SmEvent::Park { warp, entry: e });
                }
                self.stats.car.peak_occupancy = self.stats.car.peak_occupancy.max(q.occupancy as u64 + 1);
                let p = &mut self.car.as_mut().expect("CAR")[e as usize];
                p.warp = warp;
                p.store = self.lsu.store;
                p.load = self.lsu.load;
                match self.cfg.car_entry {
                    CarEntry::Instruction => {
                        p.lines.clone_from(&self.lsu.lines);
                        p.next = self.lsu.next;
                    }
                    CarEntry::Access => {
                        p.lines.lines[0] = self.lsu.lines.lines[self.lsu.next];
                        p.lines.len = 1;
                        p.next = 0;
                        self.parked_lines[w] += 1;
                        self.lsu.parked = true;
                    }
                }
                match self.cfg.car_entry {
                    CarEntry::Instruction => self.lsu.busy = false,
                    // The head goes on with its next line; this may have been its last.
                    CarEntry::Access => self.lsu_line_done(),
                }
            } else {
                // No room: the head waits and retries (yielding the port to armed entries
                // under `head_first`).
                self.lsu.waiting = true;
                self.stats.lsu_stall_cycles += 1;
            }
        }
        self.blocks.queue_clock(now, &qin);
    }

    /// The LD/ST head sends its next line. `restricted`: in MP with CAR, `Some(owner)` (or
    /// `Some(u8::MAX)` without one): a non-owner head gets hit-only service. Returns the warp
    /// when its access was refused and it may move into the queue (`car`); without CAR a
    /// refusal is counted as an LSU stall here.
    fn ldst_head(&mut self, now: u64, car: bool, restricted: Option<u8>) -> Option<u8> {
        if !self.lsu.busy {
            return None;
        }
        let req = self.lsu.lines.lines[self.lsu.next];
        let (warp, store, load) = (self.lsu.warp, self.lsu.store, self.lsu.load);
        let hit_only = restricted.is_some_and(|o| o != warp);
        let outcome = self.access_line(warp, store, load, req, now, false, hit_only);
        if !outcome.is_some_and(Outcome::accepted) {
            if car {
                self.stats.car.nacks += 1;
                self.stats.car.hit_only_nacks += outcome.is_none() as u64;
                return Some(warp);
            }
            self.stats.lsu_stall_cycles += 1;
            return None;
        }
        self.lsu.waiting = false;
        self.lsu_line_done();
        None
    }

    /// The LD/ST head's current line request has been accepted or parked. After its last
    /// line the instruction leaves the unit; a store counts as sent once no line of it is
    /// still parked.
    fn lsu_line_done(&mut self) {
        self.lsu.next += 1;
        if self.lsu.next < self.lsu.lines.len {
            return;
        }
        self.lsu.busy = false;
        let (warp, store) = (self.lsu.warp, self.lsu.store);
        if self.parked_lines[warp as usize] == 0 {
            self.mem_instruction_sent(warp, store);
        } else if store {
            self.store_parked |= 1u64 << warp;
        }
    }

    /// Presents one line request of warp `warp` to the L1 and books its outcome: a miss sent
    /// below, a hit answered after the hit latency, a merge into an open MSHR. `None`: refused
    /// by hit-only service (`hit_only`: only a load that hits is served).
    #[allow(clippy::too_many_arguments)]
    fn access_line(
        &mut self,
        warp: u8,
        store: bool,
        load: u16,
        req: LineRequest,
        now: u64,
        from_queue: bool,
        hit_only: bool,
    ) -> Option<Outcome> {
        let (sm, id) = (self.id as u16, self.next_request_id);
        let outcome = if hit_only {
            self.l1.load_hit_only(req.line, store, now)?
        } else if store {
            self.l1.store(req.line, || MemRequest {
                id,
                line: req.line,
                sm,
                warp,
                write: true,
                bytes: req.bytes,
            })
        } else {
            self.l1.load(req.line, warp, load, now, || MemRequest {
                id,
                line: req.line,
                sm,
                warp,
                write: false,
                bytes: 0,
            })
        };
        if let Some(ev) = &mut self.events {
            ev.push(crate::gpu::events::SmEvent::L1 {
                warp,
                line: req.line,
                store,
                outcome,
                from_queue,
            });
            if outcome == Outcome::Miss && !store {
                ev.push(crate::gpu::events::SmEvent::MshrAlloc { line: req.line });
            }
        }
        // Every store access drops its line from all warps' VTAs, whatever its outcome.
        // ccws-2012 gpu-cache.cc, high_locality_protected_cache::access ("Evict writes from the VC")
        if let (true, Some(c)) = (store, &mut self.ccws) {
            c.store(req.line);
        }
        match outcome {
            Outcome::Fail(_) => {}
            Outcome::Miss => {
                self.next_request_id = self.next_request_id.wrapping_add(1);
                self.stats.requests_sent += 1;
                if let Some(log) = &mut self.request_log {
                    log.push((now, warp, from_queue));
                }
                if store {
                    self.warps[warp as usize].stores_in_flight += 1;
                } else if let Some(c) = &mut self.ccws {
                    if let Some(ev) = self.l1.last_eviction.take() {
                        c.evicted(ev.owner, ev.line);
                    }
                    c.load_missed(warp, req.line, self.active.count_ones());
                }
            }
            Outcome::Hit => {
                if self.car.is_some() && self.blocks.queue_state().2 > 0 {
                    self.stats.car.hits_under_miss += 1;
                }
                self.wheel
                    .schedule(now + self.cfg.l1_hit_latency as u64, Event::LoadLine { load });
            }
            Outcome::HitReserved => {}
        }
        Some(outcome)
    }

    /// Every line request of a memory instruction has been accepted by the L1.
    fn mem_instruction_sent(&mut self, warp: u8, store: bool) {
        if store {
            self.warps[warp as usize].in_pipeline -= 1;
            self.try_finish(warp as usize);
        }
    }

    /// Moves the head of the miss queue into the request network when the port and the
    /// destination's buffer allow it.
    pub fn inject(
        &mut self,
        now: u64,
        requests: &mut Network<MemRequest>,
        partitions: &crate::gpu::mem::ChannelMap,
        flit_bytes: u32,
    ) {
        let Some(req) = self.l1.miss_queue.front() else {
            return;
        };
        let dst = crate::gpu::mem::partition_of(req.line, partitions);
        if requests.can_send(self.id, dst, now) {
            let req = self.l1.pop_request().expect("front exists");
            requests.send(self.id, dst, req.flits(flit_bytes), now, req);
        }
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
