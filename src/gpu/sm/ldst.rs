//! The LD/ST unit: the dispatch register that takes a warp's global memory instruction, the
//! coalescer that turns it into line requests, the one L1 port those requests (and CAR's
//! retries) take one per cycle, parking of refused requests in the re-execution queue, and
//! the miss queue's exit into the interconnect.
//!
//! Global atomics (`OpKind::AtomGlobal`) bypass the L1D, as GPGPU-Sim 3.2.2 sends them
//! (`atom` has `cache_op = CACHE_GLOBAL`, cuda-sim.cc; shader.cc `ldst_unit::memory_cycle`
//! pushes a bypassing access straight into the interconnect): each transaction of
//! [`Coalesced::build_atomic`] takes the LD/ST unit's cycle, no L1 lookup, MSHR or miss-queue
//! slot, and waits in a one-request register for the SM's network port (refused while it is
//! taken, as 3.2.2 stalls on `ICNT_RC_FAIL`). The replies complete the instruction without
//! touching the L1 and release the warp, which issues nothing until then (`Sm::atomic_wait`).
//! [design] Under Mascar an atomic is a global memory instruction (WST op type memory, the
//! owner rule), but it never parks in the re-execution queue: it cannot hit in the L1, so
//! hit-only re-execution has nothing to serve; a non-owner's atomic refused in MP waits at the
//! LD/ST head, where it counts as a request waiting to leave, so the WRC's idle-path rule hands
//! it ownership once the L1 is quiet.

use super::coalescer::{Coalesced, LineRequest};
use super::collector::Port;
use super::l1::{FailCause, Outcome};
use super::warp::IbufEntry;
use super::{Event, InflightLoad, Sm};
use crate::config::{CarEntry, CarRetry};
use crate::gpu::mem::icnt::Network;
use crate::gpu::mem::MemRequest;
use crate::mascar::QueueIn;
use crate::workload::program::{OpKind, Reg, NO_REG};
use crate::workload::Kernel;

/// The instruction the LD/ST unit is working on.
#[derive(Clone, Debug, Default)]
pub(super) struct LsuOp {
    pub(super) busy: bool,
    pub(super) warp: u8,
    pub(super) store: bool,
    pub(super) load: u16,
    pub(super) next: usize,
    /// Boxed: the unit swaps its instruction with the collector's slots (`mem_slots`), which
    /// then moves a pointer, not the kilobyte of line requests.
    pub(super) lines: Box<Coalesced>,
    /// CAR access entries: some line of this instruction is parked in the queue.
    pub(super) parked: bool,
    /// CAR: the head's last access was refused and it could not park; it waits at the head.
    pub(super) waiting: bool,
    /// The instruction is a global atomic (its transactions bypass the L1D).
    pub(super) atomic: bool,
    /// A texture or constant instruction: the read-only cache it reads through (its
    /// accesses take that cache's port, not the L1D's).
    pub(super) ro: Option<super::ro_cache::RoKind>,
    /// A shared-memory instruction: the cycles it still holds the unit (its bank-conflict
    /// degree, counted down; 0 for any other instruction), and its destination.
    pub(super) shared: u8,
    pub(super) shared_dst: Reg,
}

/// A line access waiting in the L1's one-entry latency queue (`l1_access_queue`): the last
/// access of an instruction that has left the LD/ST unit, refused by the L1 so far.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlotLine {
    req: LineRequest,
    warp: u8,
    store: bool,
    load: u16,
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

    /// The dispatch register: warp `w`'s shared-memory instruction `entry` enters the LD/ST
    /// unit, where it stays one cycle per access its most-asked bank serves (GPGPU-Sim 3.2.2
    /// `ldst_unit::shared_cycle`: the bank conflicts are the instruction's dispatch delay,
    /// and nothing else enters the unit meanwhile); then its value is written back
    /// `shared_latency` cycles on.
    pub(super) fn shared_dispatch(&mut self, w: usize, entry: &IbufEntry, k: &Kernel) {
        let inst = entry.inst;
        let warp = &self.warps[w];
        let env = warp.lane_env(entry, k.block, k.grid);
        let expr = &warp.program.as_deref().unwrap_or(&k.program).exprs[inst.addr as usize];
        let cycles = self.lsu.lines.shared_bank_cycles(
            expr,
            env,
            warp.values.file(),
            warp.lanes,
            entry.mask,
            self.cfg.shared_banks,
        );
        self.stats.shared_accesses += 1;
        self.stats.shared_bank_conflict_cycles += cycles as u64 - 1;
        self.lsu.lines.len = 0;
        self.lsu.shared = cycles;
        self.lsu.shared_dst = if inst.op == OpKind::LoadShared {
            inst.dst
        } else {
            NO_REG
        };
        self.lsu.atomic = false;
        self.lsu.ro = None;
        self.lsu.busy = true;
        self.lsu.warp = w as u8;
        self.lsu.next = 0;
        self.lsu.parked = false;
        self.lsu.waiting = false;
        self.lsu.store = false;
        let warp = &mut self.warps[w];
        warp.in_pipeline += 1;
        if inst.op == OpKind::LoadShared && inst.dst != NO_REG {
            warp.pending.insert(inst.dst);
        }
    }

    /// A shared-memory instruction at the head counts down its bank-conflict cycles; after
    /// the last it leaves the unit, its register written back `shared_latency` cycles on (a
    /// store completes then). Returns whether the head is a shared instruction.
    fn shared_ldst(&mut self, now: u64) -> bool {
        if !self.lsu.busy || self.lsu.shared == 0 {
            return false;
        }
        self.lsu.shared -= 1;
        if self.lsu.shared > 0 {
            return true;
        }
        self.lsu.busy = false;
        let (warp, reg) = (self.lsu.warp, self.lsu.shared_dst);
        if reg == NO_REG {
            // A store (or a load without a destination) is done as it leaves the unit.
            self.writeback_done(warp as usize, NO_REG);
        } else {
            self.wheel.schedule(
                now + self.cfg.shared_latency as u64,
                Event::Writeback { warp, reg },
            );
        }
        true
    }

    /// The dispatch register: warp `w`'s global memory instruction `entry` enters the LD/ST
    /// unit; the coalescer turns its lanes' addresses into line requests.
    pub(super) fn ldst_dispatch(&mut self, w: usize, entry: &IbufEntry, k: &Kernel) {
        let inst = entry.inst;
        let warp = &self.warps[w];
        let env = warp.lane_env(entry, k.block, k.grid);
        let lanes = warp.lanes;
        let expr = &warp.program.as_deref().unwrap_or(&k.program).exprs[inst.addr as usize];
        let atomic = inst.op == OpKind::AtomGlobal;
        let build = if atomic {
            Coalesced::build_atomic
        } else {
            Coalesced::build_global
        };
        build(
            &mut self.lsu.lines,
            expr,
            env,
            warp.values.file(),
            lanes,
            entry.mask,
            inst.width as u32,
            self.cfg.line_bytes,
        );
        self.lsu.atomic = atomic;
        self.lsu.ro = None;
        self.lsu.shared = 0;
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
            if atomic {
                self.stats.global_atomics += 1;
                // GPGPU-Sim 3.2.2 counts the lanes' atomics at issue (shader.cc,
                // checkExecutionStatusAndUpdate: inc_n_atomic) and holds the warp until they
                // are back.
                self.atomic_wait |= 1u64 << w;
            } else {
                self.stats.global_loads += 1;
            }
            let id = self.free_loads.pop().expect("unit_free checked");
            self.loads[id as usize] = InflightLoad {
                warp: w as u8,
                dst: inst.dst,
                remaining: self.lsu.lines.len as u16,
                atomic,
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
        // Whether the stage changed nothing but counters (`quiet.rs`): no instruction entered
        // the unit, the head (if any) was refused and stays as it was (with CAR it waits, as
        // it already did), no request or L1 hit went out; the re-execution queue reports its
        // own (`MascarBlocks::settled`).
        // (Every accepted access moves the head or a queue entry, or sends a request, or
        // schedules a hit; a merge into an MSHR moves the head or the entry.)
        let fingerprint = |sm: &Sm| {
            (
                sm.lsu.busy,
                sm.lsu.next,
                sm.lsu.shared,
                sm.lsu.waiting,
                sm.l1_slot.is_some(),
                sm.next_request_id,
                sm.wheel.pending,
            )
        };
        let before = fingerprint(self);
        self.ldst_stage(now);
        self.ldst_still = self.lsu.ro.is_none() && fingerprint(self) == before;
        // Then a free unit takes the oldest instruction of OC_EX_MEM into its dispatch
        // register, to make its first access next cycle (`shader_core_ctx::execute` after
        // `ldst_unit::cycle`; pipeline.rs, t+4).
        if !self.lsu.busy {
            if let Some(i) = self.collector.take(Port::Mem) {
                let s = i.mem_slot as usize;
                std::mem::swap(&mut self.lsu, &mut self.mem_slots[s]);
                self.mem_slots_free |= 1 << s;
                self.ldst_still = false;
            }
        }
    }

    fn ldst_stage(&mut self, now: u64) {
        let (mp, owner) = self.blocks.registers();
        let (mut mshr_freed, miss_queue_freed) = self.l1.take_free_pulses();
        // [design] A quiet L1 (no MSHR held, nothing queued) can take any parked miss, so it
        // arms the queue's entries as a free pulse does: an entry refused while the MSHRs
        // drained would otherwise wait for a pulse that never comes. (It does not cure the
        // bp-2 MP-hold livelock of issue 29 §2, which is an ownership ping-pong between
        // warps at a barrier.)
        mshr_freed |= self.l1.is_quiet();
        // A shared-memory head takes the unit for its bank cycles and no L1D port; a texture
        // or constant head uses its own cache's port (ro_ldst.rs), not the L1D's.
        let ro_head = self.shared_ldst(now) || self.ro_ldst(now);
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
            head_ready: self.lsu.busy && !self.lsu.waiting && !ro_head,
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
            // An atomic never parks (module doc): it waits at the head.
            let parks = !self.lsu.atomic && (q.warps >> warp & 1 == 0 || own_entries);
            if let Some(e) = q.alloc.filter(|_| parks) {
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
                        p.lines.copy_requests_from(&self.lsu.lines);
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
        // Accel-Sim's latency queue (`l1_access_queue`): its entry goes to the L1 first, and
        // until the L1 takes it no other access enters (GPGPU-Sim 4.x shader.cc
        // `ldst_unit::cycle`: `L1_latency_queue_cycle` before `memory_cycle`).
        if let Some(s) = self.l1_slot {
            let outcome = self.access_line(s.warp, s.store, s.load, s.req, now, false, false);
            if outcome.is_some_and(Outcome::accepted) {
                self.l1_slot = None;
                if s.store {
                    self.mem_instruction_sent(s.warp, true);
                }
            } else {
                self.stats.lsu_stall_cycles += self.lsu.busy as u64;
            }
            return None;
        }
        if !self.lsu.busy || self.lsu.ro.is_some() || self.lsu.shared > 0 {
            return None;
        }
        let req = self.lsu.lines.lines[self.lsu.next];
        let (warp, store, load) = (self.lsu.warp, self.lsu.store, self.lsu.load);
        let hit_only = restricted.is_some_and(|o| o != warp);
        let outcome = if self.lsu.atomic {
            self.send_atomic(warp, load, req, now, hit_only)
        } else {
            self.access_line(warp, store, load, req, now, false, hit_only)
        };
        if !outcome.is_some_and(Outcome::accepted) {
            if car {
                self.stats.car.nacks += 1;
                self.stats.car.hit_only_nacks += outcome.is_none() as u64;
                return Some(warp);
            }
            // With the latency queue the refused access waited in its entry, and the
            // instruction left the unit when its last access entered it
            // (`process_memory_access_queue_l1cache` pops the access on entry): a store counts
            // as sent once the L1 takes it. Not with CAR, whose queue takes refused accesses.
            if !car
                && self.cfg.l1_access_queue
                && outcome.is_some()
                && !self.lsu.atomic
                && self.lsu.next + 1 == self.lsu.lines.len
            {
                self.l1_slot = Some(SlotLine {
                    req,
                    warp,
                    store,
                    load,
                });
                self.lsu.busy = false;
                return None;
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
        // Sent unless lines of *this* instruction are still parked. The warp's entries may
        // belong to its previous store (it left the unit with lines parked, and this one
        // followed it through the operand collector without parking any): deferring this
        // one too would fold two completions into one `store_parked` bit and the warp would
        // never finish.
        if !self.lsu.parked || self.parked_lines[warp as usize] == 0 {
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
                atomic: None,
            })
        } else {
            self.l1.load(req.line, warp, load, now, || MemRequest {
                id,
                line: req.line,
                sm,
                warp,
                write: false,
                bytes: 0,
                atomic: None,
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

    /// One transaction of a global atomic leaves the LD/ST unit for the L2, bypassing the L1D
    /// (module doc). Refused while the previous one still waits for the network port
    /// (reported as a full miss queue: 3.2.2's `ICNT_RC_FAIL`), and under hit-only service
    /// (`None`): an atomic never hits in the L1.
    fn send_atomic(
        &mut self,
        warp: u8,
        load: u16,
        req: LineRequest,
        now: u64,
        hit_only: bool,
    ) -> Option<Outcome> {
        if hit_only {
            return None;
        }
        if self.atomic_port.is_some() {
            return Some(Outcome::Fail(FailCause::MissQueueFull));
        }
        self.atomic_port = Some(MemRequest {
            id: self.next_request_id,
            line: req.line,
            sm: self.id as u16,
            warp,
            write: false,
            bytes: req.bytes,
            atomic: Some(load),
        });
        self.next_request_id = self.next_request_id.wrapping_add(1);
        self.stats.requests_sent += 1;
        if let Some(log) = &mut self.request_log {
            log.push((now, warp, false));
        }
        Some(Outcome::Miss)
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
        if self.ro_inject(now, requests, partitions, flit_bytes) {
            return;
        }
        // The L1's misses first, then an atomic that bypassed it: one port, one request a
        // cycle (while an atomic's transactions go out the LD/ST unit makes no L1 misses).
        let from_l1 = !self.l1.miss_queue.is_empty();
        let Some(&req) = self.l1.miss_queue.front().or(self.atomic_port.as_ref()) else {
            return;
        };
        // Room first: a blocked head is retried every cycle, its route needed once.
        let flits = req.flits(flit_bytes);
        if requests.can_send(self.id, flits, now) {
            let dst = crate::gpu::mem::partition_of(req.line, partitions);
            if from_l1 {
                self.l1.pop_request().expect("front exists");
            } else {
                self.atomic_port = None;
            }
            requests.send(self.id, dst, flits, now, req);
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

#[cfg(test)]
mod atomic_tests {
    use crate::config::{Config, NonOwnerMem};
    use crate::sched::SchedulerKind;
    use crate::workload::kernel_format::parse_kernel;
    use crate::workload::program::OpKind;

    fn kernel(src: &str) -> crate::workload::Kernel {
        parse_kernel(src, "<test>").unwrap_or_else(|e| panic!("{e}"))
    }

    fn one_sm() -> Config {
        Config {
            sms: 1,
            ..Config::default()
        }
    }

    #[test]
    fn atomics_bypass_the_l1_and_are_performed_at_the_l2() {
        // Two warps per CTA, histogram-like: 8 lanes per word (8 transactions per half-warp).
        let k = kernel(
            "kernel h\ngrid 4\nblock 64\nbuffer BINS 4K\nbuffer A 64K\n\
             ld.global r1, A[4*gtid]\natom.global.add r2, BINS[4*(tid / 8)], r1\n\
             red.global.add BINS[512 + 4*(tid / 8)], r1\n",
        );
        let s = crate::engine::simulate(&one_sm(), &k, None).unwrap();
        assert_eq!(s.sm.global_atomics, 2 * 8, "two atomics per warp");
        assert_eq!(s.sm.global_loads, 8);
        // Only the loads looked up the L1 (one line per warp); no atomic allocated there.
        assert_eq!(s.l1.accesses, 8);
        assert_eq!(s.l1.misses, 8);
        // 16 transactions per warp instruction, all performed at the L2.
        assert_eq!(s.l2.atomics, 2 * 8 * 16);
        assert_eq!(s.sm.coalesced_requests, 8 + s.l2.atomics);
        assert_eq!(s.sm.requests_sent, 8 + s.l2.atomics);
        assert_eq!(s.sm.requests_sent, s.sm.replies_received, "every atomic answered");
        assert_eq!(s.l2.accesses, s.l2.outcomes());
    }

    /// GPGPU-Sim 3.2.2 holds a warp that issued an atomic until its replies are back (also a
    /// `red`, which 3.2.2 runs as an `atom` whose result is dropped); after a store the warp
    /// goes on at once.
    #[test]
    fn a_warp_waits_for_its_atomic_but_not_for_its_store() {
        let gap = |mem: &str| {
            let k = kernel(&format!(
                "kernel w\ngrid 1\nblock 32\nbuffer A 4K\n{mem}\nalu r5\n"
            ));
            let mut gpu = crate::engine::gpu(&one_sm()).unwrap();
            gpu.sms[0].issue_log = Some(vec![]);
            let s = gpu.run(&k, None).unwrap();
            assert_eq!(s.sm.requests_sent, s.sm.replies_received);
            let log = gpu.sms[0].issue_log.take().unwrap();
            assert_eq!(log.len(), 2);
            log[1].cycle - log[0].cycle
        };
        let store = gap("st.global A[4*tid], r1");
        let red = gap("red.global.add A[4*tid], r1");
        let atom = gap("atom.global.add r2, A[4*tid], r1");
        assert!(store < 10, "a store does not hold the warp ({store} cycles)");
        // The L2's latency alone is 111 cycles, a DRAM miss several hundred.
        assert!(red > 200 && atom > 200, "red {red}, atom {atom}");
        assert!(red.abs_diff(atom) < 10, "red {red}, atom {atom}: timed alike");
    }

    #[test]
    fn atomics_never_park_and_no_mp_setting_deadlocks_on_them() {
        // Loads that saturate a small L1 and atomics between them, under every MAS / CAR
        // scheduler with MP held, hit-only non-owners and a one-entry queue.
        let k = kernel(
            "kernel m\ngrid 8\nblock 256\nbuffer A 16M\nbuffer BINS 4K\nloop i 4 {\n\
             ld.global r1, A[128*gtid + 4096*128*i]\natom.global.add r2, BINS[4*(gtid % 64)], r1\n\
             add r3, r2, r1\nred.global.max BINS[2048 + 4*(tid / 32)], r3\n}\n",
        );
        let lrr = crate::engine::simulate(
            &Config {
                sms: 1,
                ..Config::default()
            },
            &k,
            None,
        )
        .unwrap();
        for s in [SchedulerKind::Mas, SchedulerKind::Car, SchedulerKind::Mascar] {
            for non_owner in [NonOwnerMem::Stall, NonOwnerMem::HitOnly] {
                for (depth, hold) in [(1, 0), (1, 1_000_000), (8, 1_000_000)] {
                    let cfg = Config {
                        sms: 1,
                        l1_mshrs: 8,
                        scheduler: s,
                        mascar_non_owner_mem: non_owner,
                        car_queue_depth: depth,
                        mas_mp_exit_hold: hold,
                        ..Config::default()
                    };
                    let what = format!("{s} {non_owner:?} depth {depth} hold {hold}");
                    let st =
                        crate::engine::simulate(&cfg, &k, None).unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(st.warp_instructions, k.total_warp_instructions(), "{what}");
                    assert_eq!(st.sm.requests_sent, st.sm.replies_received, "{what}");
                    assert_eq!(st.sm.global_atomics, 2 * 4 * 64, "{what}");
                    if s.uses_mas() {
                        assert!(st.mas.mp_cycles > 0, "{what}: MP was entered");
                    }
                    // Every atomic transaction reached the L2 as one: none was parked and
                    // re-executed through the L1 as a load.
                    assert_eq!(st.l2.atomics, lrr.l2.atomics, "{what}");
                    assert_eq!(st.l1.accesses, st.l1.outcomes(), "{what}");
                }
            }
        }
        // The kind the parser gives them.
        assert!(k
            .program
            .items
            .iter()
            .any(|i| matches!(i, crate::workload::program::Item::Inst(x) if x.op == OpKind::AtomGlobal)));
    }
}

#[cfg(test)]
mod latency_queue_tests {
    use crate::config::Config;
    use crate::workload::kernel_format::parse_kernel;
    use crate::workload::program::OpKind;

    /// Issue cycles of one warp's instructions: a 32-line gather with 31 MSHRs (its last
    /// line is refused until the first fill frees one, a round trip later), then independent
    /// one-line stores, which queue in the operand collector behind it.
    fn issue_cycles(queue: bool) -> (Vec<u64>, crate::stats::RunStats) {
        let mut src =
            String::from("kernel q\ngrid 1\nblock 32\nbuffer A 1M\nbuffer B 64K\nld.global r1, A[128*tid]\n");
        for i in 0..8 {
            src += &format!("st.global B[{} + 4*tid], r2\n", 128 * i);
        }
        let k = parse_kernel(&src, "<test>").unwrap_or_else(|e| panic!("{e}"));
        let cfg = Config {
            sms: 1,
            l1_mshrs: 31,
            l1_access_queue: queue,
            ..Config::default()
        };
        let mut gpu = crate::engine::gpu(&cfg).unwrap();
        gpu.sms[0].issue_log = Some(vec![]);
        let s = gpu.run(&k, None).unwrap();
        let log = gpu.sms[0].issue_log.take().unwrap();
        assert!(matches!(log[0].op, OpKind::LoadGlobal), "{:?}", log[0].op);
        (log.iter().map(|r| r.cycle).collect(), s)
    }

    /// Accel-Sim's one-entry L1 latency queue (GPGPU-Sim 4.x shader.cc
    /// `process_memory_access_queue_l1cache` pops an access when it enters the queue): the
    /// gather leaves the LD/ST unit when its last access enters the queue, although the L1
    /// refuses it until a fill comes back, so a store waiting for its collector entry issues
    /// a round trip sooner. Without the queue (3.2.2) the gather holds the unit until the L1
    /// takes its last access. Everything is still answered and counted alike.
    #[test]
    fn with_the_latency_queue_an_instruction_leaves_when_its_last_access_enters_it() {
        let (off, s_off) = issue_cycles(false);
        let (on, s_on) = issue_cycles(true);
        assert_eq!(off.len(), 9);
        assert_eq!(on.len(), 9);
        assert!(s_off.l1.reservation_fails() > 0, "the gather outran the MSHRs");
        // The fifth store needs the collector entry the gather's instruction frees when it
        // leaves the unit: a round trip sooner with the queue. The stores after it wait for
        // the unit, whose next access waits behind the refused one in the queue.
        assert!(
            on[5] + 100 < off[5],
            "fifth store issued at {} with the queue, {} without",
            on[5],
            off[5]
        );
        assert!(on[8] <= off[8], "{on:?} / {off:?}");
        for s in [&s_on, &s_off] {
            assert_eq!(s.sm.requests_sent, s.sm.replies_received);
            assert_eq!(s.l1.accesses, s.l1.outcomes());
        }
        assert_eq!(
            s_on.l1.misses + s_on.l1.write_misses,
            s_off.l1.misses + s_off.l1.write_misses
        );
    }

    #[test]
    fn the_latency_queue_is_modelled_with_one_entry() {
        let cfg = Config {
            l1_access_queue: true,
            l1_hit_latency: 2,
            ..Config::default()
        };
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("l1_hit_latency") && e.contains("valid: 1"), "{e}");
    }
}
