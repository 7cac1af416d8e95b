//! The LD/ST unit's path through the texture and constant caches (`ld.tex`, `ld.const`):
//! dispatch into the LD/ST unit's one dispatch register, one cache access per cycle, fills
//! routed back by request id, the result FIFO's writeback, and the caches' requests into the
//! SM's interconnect port.
//!
//! GPGPU-Sim 3.2.2 shader.cc, ldst_unit::cycle: a texture or constant instruction holds the
//! dispatch register (`m_dispatch_reg`) like a global one until its access queue is empty;
//! `texture_cycle` / `constant_cycle` present one access per cycle to `m_L1T` / `m_L1C`
//! (`process_memory_access_queue`), and a refused access is retried the next cycle. The
//! accesses are one per distinct line of the cache's line size (abstract_hardware_model.cc,
//! `generate_mem_accesses`, `cache_block_size`), so a constant read whose lanes touch k
//! lines takes k cycles: the per-address serialisation of constant memory.
//!
//! [design] Texture and constant reads are memory instructions for MAS (the WST's op type
//! and the owner rule apply to them, and the owner hands over when it waits on one), but
//! they never enter CAR's re-execution queue (a refused access waits at the head, as in
//! GPGPU-Sim), they are not served hit-only in MP, and their caches' MSHRs and queues do not
//! feed the L1D saturation flag: they have their own caches and do not compete for the L1D's
//! MSHRs, which is what Mascar protects.

use super::coalescer::LineRequest;
use super::ro_cache::{RoKind, RoOutcome};
use super::warp::IbufEntry;
use super::{Event, InflightLoad, Sm};
use crate::gpu::mem::icnt::Network;
use crate::gpu::mem::{MemReply, MemRequest};
use crate::workload::program::{OpKind, NO_REG};
use crate::workload::Kernel;

impl Sm {
    /// Warp `w`'s `ld.tex` / `ld.const` instruction `entry` enters the LD/ST unit's dispatch
    /// register; its lanes' addresses become one access per line of the cache.
    pub(super) fn ro_dispatch(&mut self, w: usize, entry: &IbufEntry, k: &Kernel, now: u64) {
        let inst = entry.inst;
        let kind = if inst.op == OpKind::LoadTex {
            RoKind::Tex
        } else {
            RoKind::Const
        };
        // A read-only line larger than a memory line is cut to one (ro_cache.rs).
        let line_bytes = match kind {
            RoKind::Tex => self.cfg.tex_line_bytes,
            RoKind::Const => self.cfg.const_line_bytes,
        }
        .min(self.cfg.line_bytes);
        let warp = &self.warps[w];
        let env = warp.lane_env(entry, k.block, k.grid);
        let expr = &warp.program.as_deref().unwrap_or(&k.program).exprs[inst.addr as usize];
        self.lsu.lines.build_in(
            expr,
            env,
            warp.values.file(),
            warp.lanes,
            entry.mask,
            inst.width as u32,
            line_bytes,
        );
        match kind {
            RoKind::Tex => self.stats.tex.instructions += 1,
            RoKind::Const => self.stats.constant.instructions += 1,
        }
        let id = self.free_loads.pop().expect("unit_free checked");
        let n = self.lsu.lines.len as u16;
        self.loads[id as usize] = InflightLoad {
            warp: w as u8,
            dst: inst.dst,
            remaining: n.max(1),
            ..InflightLoad::default()
        };
        let warp = &mut self.warps[w];
        warp.in_pipeline += 1;
        if inst.dst != NO_REG {
            warp.pending.insert(inst.dst);
            // MAS's hand-over test ("waits on its own load") counts these loads too.
            warp.pending_global.insert(inst.dst);
        }
        if n == 0 {
            // No active lane has an address: nothing to fetch (GPGPU-Sim: `active_count() == 0`).
            self.wheel.schedule(now + 1, Event::LoadLine { load: id });
            return;
        }
        self.lsu.busy = true;
        self.lsu.warp = w as u8;
        self.lsu.store = false;
        self.lsu.load = id;
        self.lsu.next = 0;
        self.lsu.parked = false;
        self.lsu.waiting = false;
        self.lsu.ro = Some(kind);
        self.lsu.shared = 0;
        self.lsu.atomic = false;
    }

    /// The LD/ST head's access to its read-only cache this cycle, if the head is a texture or
    /// constant instruction. Returns whether it was (then the L1D port is not the head's).
    pub(super) fn ro_ldst(&mut self, now: u64) -> bool {
        let Some(kind) = self.lsu.ro.filter(|_| self.lsu.busy) else {
            return false;
        };
        let LineRequest { line, .. } = self.lsu.lines.lines[self.lsu.next];
        let (warp, load) = (self.lsu.warp, self.lsu.load);
        let (sm, id) = (self.id as u16, self.next_request_id);
        let request = |mem_line| MemRequest {
            id,
            line: mem_line,
            sm,
            warp,
            write: false,
            bytes: 0,
            atomic: None,
        };
        let outcome = match kind {
            RoKind::Tex => self.tex.access(line, load, now, &mut self.stats.tex, request),
            RoKind::Const => self
                .constant
                .access(line, load, now, &mut self.stats.constant, request),
        };
        match outcome {
            RoOutcome::Fail => return true,
            RoOutcome::Miss => {
                self.next_request_id = self.next_request_id.wrapping_add(1);
                self.stats.requests_sent += 1;
                if let Some(log) = &mut self.request_log {
                    log.push((now, warp, false));
                }
            }
            // A constant hit is written back after the hit latency; texture data always
            // comes through the fragment and result FIFOs.
            RoOutcome::Hit if kind == RoKind::Const => {
                self.wheel
                    .schedule(now + self.cfg.l1_hit_latency as u64, Event::LoadLine { load });
            }
            RoOutcome::Hit | RoOutcome::Merged => {}
        }
        self.lsu.next += 1;
        if self.lsu.next == self.lsu.lines.len {
            self.lsu.busy = false;
            self.lsu.ro = None;
        }
        true
    }

    /// A read reply for one of the read-only caches' misses fills it. Returns false when the
    /// reply is the L1D's.
    pub(super) fn ro_fill(&mut self, r: &MemReply, now: u64) -> bool {
        if self.tex.owns(r.id) {
            self.tex.fill(r.id, &mut self.stats.tex);
            return true;
        }
        if !self.constant.owns(r.id) {
            return false;
        }
        let mut done = [0u16; 64];
        let mut n = 0;
        self.constant.fill(r.id, now, &mut self.stats.constant, |load| {
            if n < done.len() {
                done[n] = load;
            }
            n += 1;
        });
        for &load in &done[..n.min(done.len())] {
            self.load_line_done(load);
        }
        true
    }

    /// One cycle of the texture cache and one writeback from its result FIFO.
    /// GPGPU-Sim 3.2.2 shader.cc, ldst_unit::writeback (texture client) and tex_cache::cycle
    pub(super) fn ro_cycle(&mut self, now: u64) {
        if let Some(load) = self.tex.pop_result() {
            self.load_line_done(load);
        }
        self.tex.cycle(now);
    }

    /// The texture cache's request FIFO, then the constant cache's miss queue, send their head
    /// into the SM's interconnect port (the order `ldst_unit::cycle` clocks `m_L1T`, `m_L1C`,
    /// then `m_L1D`). Returns whether one was sent (the port is then busy).
    pub(super) fn ro_inject(
        &mut self,
        now: u64,
        requests: &mut Network<MemRequest>,
        partitions: &crate::gpu::mem::ChannelMap,
        flit_bytes: u32,
    ) -> bool {
        for kind in [RoKind::Tex, RoKind::Const] {
            let queue = match kind {
                RoKind::Tex => &mut self.tex.requests,
                RoKind::Const => &mut self.constant.miss_queue,
            };
            let Some(req) = queue.front() else {
                continue;
            };
            let flits = req.flits(flit_bytes);
            if requests.can_send(self.id, flits, now) {
                let dst = crate::gpu::mem::partition_of(req.line, partitions);
                let req = queue.pop_front().expect("front exists");
                requests.send(self.id, dst, flits, now, req);
                return true;
            }
        }
        false
    }

    /// Nothing in the read-only caches is outstanding.
    pub(super) fn ro_quiet(&self) -> bool {
        self.lsu.ro.is_none() && self.tex.is_quiet() && self.constant.is_quiet()
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::gpu::sm::{IssueRecord, MasRecord};
    use crate::sched::SchedulerKind;
    use crate::stats::RunStats;
    use crate::workload::kernel_format::parse_kernel;
    use crate::workload::program::OpKind;
    use crate::workload::Kernel;

    fn kernel(src: &str) -> Kernel {
        parse_kernel(src, "<test>").unwrap_or_else(|e| panic!("{e}"))
    }

    fn run(cfg: &Config, k: &Kernel) -> (RunStats, Vec<IssueRecord>, Vec<MasRecord>) {
        let mut gpu = crate::engine::gpu(cfg).unwrap();
        gpu.sms[0].issue_log = Some(vec![]);
        gpu.sms[0].mas_log = Some(vec![]);
        let stats = gpu.run(k, None).unwrap();
        assert_eq!(stats.warp_instructions, k.total_warp_instructions());
        assert_eq!(
            stats.sm.requests_sent, stats.sm.replies_received,
            "no request lost"
        );
        let sm = &mut gpu.sms[0];
        (stats, sm.issue_log.take().unwrap(), sm.mas_log.take().unwrap())
    }

    fn one_sm(s: SchedulerKind) -> Config {
        Config {
            sms: 1,
            scheduler: s,
            ..Config::default()
        }
    }

    #[test]
    fn constant_reads_with_k_distinct_lines_hold_the_ld_st_unit_k_cycles() {
        // One warp; the second constant read hits its k lines, and the global load behind
        // it reaches the L1 (and sends its miss) once the LD/ST unit has served those k
        // lines, one per cycle (GPGPU-Sim 3.2.2 ldst_unit::constant_cycle).
        let gap = |k: u32| {
            let src = format!(
                "kernel c\ngrid 1\nblock 32\nbuffer C 4K\nbuffer A 4K\n\
                 ld.const r1, C[64 * (lane % {k})]\nadd r2, r1\n\
                 ld.const r3, C[64 * (lane % {k})]\nld.global r4, A[4 * lane]\nadd r5, r3, r4\n"
            );
            let mut gpu = crate::engine::gpu(&one_sm(SchedulerKind::Lrr)).unwrap();
            gpu.sms[0].issue_log = Some(vec![]);
            gpu.sms[0].request_log = Some(vec![]);
            let stats = gpu.run(&kernel(&src), None).unwrap();
            assert_eq!(stats.sm.constant.hits, k as u64, "the second read hits");
            let issues = gpu.sms[0].issue_log.take().unwrap();
            let c = issues
                .iter()
                .rev()
                .find(|r| r.op == OpKind::LoadConst)
                .unwrap()
                .cycle;
            // The last request sent below L1 is the global load's miss.
            let (g, _, _) = *gpu.sms[0].request_log.take().unwrap().last().unwrap();
            g - c
        };
        let base = gap(1);
        for k in [2, 4, 8] {
            assert_eq!(gap(k), base + k as u64 - 1, "k = {k}");
        }
    }

    #[test]
    fn misses_go_to_l2_and_each_fill_returns_to_its_own_cache() {
        // Texture, constant and global reads of the same addresses: every cache's misses are
        // filled by their own replies, and the second texture pass hits.
        let k = kernel(
            "kernel t\ngrid 4\nblock 128\nbuffer T 64K\nbuffer C 4K\nbuffer A 64K\n\
             loop i 2 {\nld.tex r1, T[4 * gtid]\nld.const r2, T[4 * lane]\nld.global r3, T[4 * gtid]\n\
             add r4, r1, r2\nadd r5, r4, r3\n}\n",
        );
        let (s, _, _) = run(&one_sm(SchedulerKind::Gto), &k);
        let (t, c) = (&s.sm.tex, &s.sm.constant);
        assert_eq!((t.instructions, c.instructions), (32, 32));
        assert!(t.misses > 0 && c.misses > 0 && s.l1.misses > 0, "{t:?} {c:?}");
        assert_eq!(t.fills, t.misses, "{t:?}");
        assert_eq!(c.fills, c.misses, "{c:?}");
        assert_eq!(s.l1.fills, s.l1.misses);
        assert!(t.hits > 0, "second pass hits the texture cache: {t:?}");
        assert_eq!(t.accesses, t.hits + t.merged + t.misses + t.reservation_fails);
        assert_eq!(c.accesses, c.hits + c.merged + c.misses + c.reservation_fails);
        assert_eq!(s.sm.requests_sent, t.misses + c.misses + s.l1.misses);
        assert!(s.l2.accesses >= s.sm.requests_sent);
    }

    /// Eight warps stream 32 lines each per instruction: through the L1D this saturates a
    /// 16-MSHR L1 and parks refused misses in CAR's queue.
    fn streaming(space: &str) -> Kernel {
        kernel(&format!(
            "kernel s\ngrid 1\nblock 256\nbuffer A 4M\nloop i 4 {{\n\
             ld.{space} r1, A[128 * tid + 32K * i]\nadd r2, r1, r1\n}}\n"
        ))
    }

    #[test]
    fn texture_and_constant_misses_neither_saturate_the_l1d_nor_park_in_the_queue() {
        let cfg = Config {
            l1_mshrs: 16,
            ..one_sm(SchedulerKind::Mascar)
        };
        let (g, _, gmas) = run(&cfg, &streaming("global"));
        assert!(gmas.iter().any(|r| r.saturated), "the global version saturates");
        assert!(g.car.enqueued > 0, "and parks: {:?}", g.car);
        for space in ["tex", "const"] {
            let (s, _, mas) = run(&cfg, &streaming(space));
            assert!(s.sm.tex.misses + s.sm.constant.misses > 0);
            assert!(
                s.sm.tex.reservation_fails + s.sm.constant.reservation_fails > 0,
                "{space}: its own cache refuses accesses"
            );
            assert!(!mas.iter().any(|r| r.saturated), "{space}: saturation flag set");
            assert_eq!(s.car.enqueued, 0, "{space}: parked {:?}", s.car);
            assert_eq!(s.mas.mp_cycles, 0, "{space}");
        }
    }

    #[test]
    fn in_mp_only_the_owner_issues_texture_and_constant_reads() {
        // Global loads saturate the L1D; the texture and constant reads in between are memory
        // instructions for MAS, so only the owner issues them in MP.
        let k = kernel(
            "kernel o\ngrid 1\nblock 256\nbuffer A 4M\nbuffer T 4M\nloop i 2 {\n\
             ld.global r1, A[128 * tid + 32K * i]\nld.tex r2, T[128 * tid + 32K * i]\n\
             ld.const r3, T[64 * lane + 8K * i]\nadd r4, r1, r2\nadd r5, r4, r3\n}\n",
        );
        let cfg = Config {
            l1_mshrs: 16,
            ..one_sm(SchedulerKind::Mas)
        };
        let (_, issues, mas) = run(&cfg, &k);
        let mut in_mp = 0;
        for r in issues.iter().filter(|r| r.op.is_read_only()) {
            let m = mas.iter().find(|m| m.cycle == r.cycle).unwrap();
            if m.mp {
                assert_eq!(
                    m.owner,
                    Some(r.warp),
                    "cycle {}: non-owner {} issued {:?}",
                    r.cycle,
                    r.warp,
                    r.op
                );
                in_mp += 1;
            }
        }
        assert!(in_mp > 0, "some read-only loads issue in MP");
    }
}
