//! One partition's DRAM channel.
//!
//! The default model is GDDR5 as GPGPU-Sim 3.2.2 models it (`dram.cc` `dram_t::cycle`,
//! `dram_sched.cc` `frfcfs_scheduler`): banks with open rows and bank groups, an FR-FCFS
//! scheduler over a bounded queue, a column-command pipeline of CL (reads) or WL (writes)
//! cycles, and the GDDR5 timing constraints. It is stepped once per DRAM command clock.
//! The old fixed-rate pipe (one line every `dram_cycles_per_line` core cycles, no banks)
//! stays as `dram_model = fixed`, stepped once per core cycle.
//!
//! Interface the partition uses: [`Dram::has_room`], [`Dram::push`], [`Dram::cycle`],
//! [`Dram::pop_writeback`], [`Dram::return_top`] / [`Dram::return_pop`], [`Dram::is_idle`],
//! and the counters in [`Dram::stats`].
//!
//! The return queue is bounded (GPGPU-Sim 3.2.2 dram.cc: `returnq` holds
//! `-gpgpu_dram_return_queue_size` entries, 1024 when 0): while it is full the column
//! pipeline does not drain (`dram_t::cycle` pops `rwq` only `if (!returnq->full())`), and
//! the partition takes its head only when the sub-partition's DRAM→L2 queue has room
//! (l2cache.cc `memory_partition_unit::dram_cycle`), so a slow L2 pushes back on the DRAM.
//! Write-backs (requests without an acknowledgement: 3.2.2's `L2_WRBK_ACC`) never enter it:
//! `dram_t::cycle` hands them to `memory_partition_unit::set_done` at once.
//! Nothing allocates after construction.

use std::collections::VecDeque;

use super::addrdec::AddrDec;

/// A DRAM access: `bytes` of line `line` (line address = byte address / line size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramRequest {
    pub line: u64,
    pub write: bool,
    /// Bytes moved; column commands = bytes / the atom (64 B on GTX480), at least one.
    pub bytes: u32,
    /// Who gets an acknowledgement when it completes (an L2 write miss's store).
    pub ack: Option<Ack>,
}

/// The requester of a write that is acknowledged once DRAM has written it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub id: u32,
    pub sm: u16,
    pub warp: u8,
}

impl DramRequest {
    pub fn read(line: u64, bytes: u32) -> Self {
        DramRequest {
            line,
            write: false,
            bytes,
            ack: None,
        }
    }
    pub fn write(line: u64, bytes: u32) -> Self {
        DramRequest {
            line,
            write: true,
            bytes,
            ack: None,
        }
    }
}

/// GDDR5 timing in DRAM command cycles (GPGPU-Sim's `-gpgpu_dram_timing_opt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DramTiming {
    pub nbk: u32,
    pub ccd: u32,
    pub rrd: u32,
    pub rcd: u32,
    pub ras: u32,
    pub rp: u32,
    pub rc: u32,
    pub cl: u32,
    pub wl: u32,
    pub cdlr: u32,
    pub wr: u32,
    pub nbkgrp: u32,
    pub ccdl: u32,
    pub rtpl: u32,
}

impl DramTiming {
    /// GTX480 in GPGPU-Sim 3.2.2's `configs/GTX480/gpgpusim.config`.
    pub const GTX480: DramTiming = DramTiming {
        nbk: 16,
        ccd: 2,
        rrd: 6,
        rcd: 12,
        ras: 28,
        rp: 12,
        rc: 40,
        cl: 12,
        wl: 4,
        cdlr: 5,
        wr: 12,
        nbkgrp: 4,
        ccdl: 3,
        rtpl: 2,
    };

    /// Parses a `-gpgpu_dram_timing_opt` value: `name=value` pairs separated by `:` (or
    /// `;`, spaces), or the legacy ordered form `nbk:CCD:RRD:RCD:RAS:RP:RC:CL:WL:CDLR:WR[:nbkgrp:CCDL:RTPL]`
    /// (GPGPU-Sim 3.2.2 `memory_config::init`). Names not given keep `base`'s values,
    /// except that bank groups default to 1 / 0 / 0 as 3.2.2 does.
    pub fn parse(text: &str, base: &DramTiming) -> Result<DramTiming, String> {
        let mut t = *base;
        t.nbkgrp = 1;
        t.ccdl = 0;
        t.rtpl = 0;
        let text = text.trim().trim_matches('"');
        let num = |s: &str, what: &str| -> Result<u32, String> {
            s.trim()
                .parse::<u32>()
                .map_err(|_| format!("{what} `{}` is not a whole number", s.trim()))
        };
        if text.contains('=') {
            let mut parts = text.split([':', ';', ' ', '\t']).filter(|p| !p.trim().is_empty());
            for p in parts.by_ref() {
                let (name, value) = p
                    .split_once('=')
                    .ok_or_else(|| format!("`{p}`: expected name=value"))?;
                let v = num(value, name)?;
                let slot = match name.trim() {
                    "nbk" => &mut t.nbk,
                    "CCD" => &mut t.ccd,
                    "RRD" => &mut t.rrd,
                    "RCD" => &mut t.rcd,
                    "RAS" => &mut t.ras,
                    "RP" => &mut t.rp,
                    "RC" => &mut t.rc,
                    "CL" => &mut t.cl,
                    "WL" => &mut t.wl,
                    "CDLR" => &mut t.cdlr,
                    "WR" => &mut t.wr,
                    "nbkgrp" => &mut t.nbkgrp,
                    "CCDL" => &mut t.ccdl,
                    "RTPL" => &mut t.rtpl,
                    other => return Err(format!("unknown timing name `{other}` (nbk CCD RRD RCD RAS RP RC CL WL CDLR WR nbkgrp CCDL RTPL)")),
                };
                *slot = v;
            }
        } else {
            let v: Vec<u32> = text
                .split(':')
                .enumerate()
                .map(|(i, s)| num(s, &format!("field {}", i + 1)))
                .collect::<Result<_, _>>()?;
            if v.len() < 11 || v.len() > 14 {
                return Err(format!(
                    "{} fields: expected nbk:CCD:RRD:RCD:RAS:RP:RC:CL:WL:CDLR:WR[:nbkgrp:CCDL:RTPL]",
                    v.len()
                ));
            }
            let slots = [
                &mut t.nbk,
                &mut t.ccd,
                &mut t.rrd,
                &mut t.rcd,
                &mut t.ras,
                &mut t.rp,
                &mut t.rc,
                &mut t.cl,
                &mut t.wl,
                &mut t.cdlr,
                &mut t.wr,
                &mut t.nbkgrp,
                &mut t.ccdl,
                &mut t.rtpl,
            ];
            for (slot, x) in slots.into_iter().zip(v) {
                *slot = x;
            }
        }
        t.check()?;
        Ok(t)
    }

    /// Whether the values make a channel the model can run.
    pub fn check(&self) -> Result<(), String> {
        if self.nbk == 0 || self.nbk > 64 {
            return Err(format!("nbk = {}: must be 1..=64", self.nbk));
        }
        if self.nbkgrp == 0 || !self.nbk.is_multiple_of(self.nbkgrp) {
            return Err(format!(
                "nbkgrp = {}: must be at least 1 and divide nbk = {}",
                self.nbkgrp, self.nbk
            ));
        }
        if self.cl == 0 || self.wl == 0 || self.cl > 1000 || self.wl > 1000 {
            return Err(format!("CL = {}, WL = {}: must be 1..=1000", self.cl, self.wl));
        }
        for (name, v) in [
            ("CCD", self.ccd),
            ("RRD", self.rrd),
            ("RCD", self.rcd),
            ("RAS", self.ras),
            ("RP", self.rp),
            ("RC", self.rc),
            ("CDLR", self.cdlr),
            ("WR", self.wr),
            ("CCDL", self.ccdl),
            ("RTPL", self.rtpl),
        ] {
            if v > 10_000 {
                return Err(format!("{name} = {v}: must be at most 10000"));
            }
        }
        Ok(())
    }

    /// The `name=value:…` form.
    pub fn to_option(&self) -> String {
        format!(
            "nbk={}:CCD={}:RRD={}:RCD={}:RAS={}:RP={}:RC={}:CL={}:WL={}:CDLR={}:WR={}:nbkgrp={}:CCDL={}:RTPL={}",
            self.nbk, self.ccd, self.rrd, self.rcd, self.ras, self.rp, self.rc, self.cl, self.wl,
            self.cdlr, self.wr, self.nbkgrp, self.ccdl, self.rtpl
        )
    }
}

/// Everything a GDDR5 channel needs.
#[derive(Clone, Debug)]
pub struct Gddr5Params {
    pub timing: DramTiming,
    /// Burst length (`-gpgpu_dram_burst_length`).
    pub burst: u32,
    /// Bytes per chip per data beat (`-gpgpu_dram_buswidth`).
    pub bus_bytes: u32,
    /// Chips per channel (`-gpgpu_n_mem_per_ctrlr`).
    pub chips: u32,
    /// Data-bus beats per command cycle (`-dram_data_command_freq_ratio`, 4 for GDDR5).
    pub data_command_ratio: u32,
    /// FR-FCFS queue entries (`-gpgpu_frfcfs_dram_sched_queue_size`).
    pub queue: u32,
    /// Return queue entries (`-gpgpu_dram_return_queue_size`; 0: 1024 as 3.2.2's
    /// `dram_t::dram_t` makes it).
    pub return_queue: u32,
    pub line_bytes: u32,
    pub map: AddrDec,
}

impl DramTiming {
    /// The timing keys of a configuration.
    pub fn from_config(c: &crate::config::Config) -> DramTiming {
        DramTiming {
            nbk: c.dram_banks,
            ccd: c.dram_tccd,
            rrd: c.dram_trrd,
            rcd: c.dram_trcd,
            ras: c.dram_tras,
            rp: c.dram_trp,
            rc: c.dram_trc,
            cl: c.dram_cl,
            wl: c.dram_wl,
            cdlr: c.dram_tcdlr,
            wr: c.dram_twr,
            nbkgrp: c.dram_bank_groups,
            ccdl: c.dram_tccdl,
            rtpl: c.dram_trtpl,
        }
    }
}

impl Gddr5Params {
    /// The channel a (validated) configuration describes.
    pub fn from_config(c: &crate::config::Config) -> Result<Gddr5Params, String> {
        let timing = DramTiming::from_config(c);
        timing.check()?;
        Ok(Gddr5Params {
            timing,
            burst: c.dram_burst_length,
            bus_bytes: c.dram_bus_bytes,
            chips: c.dram_chips,
            data_command_ratio: c.dram_data_command_ratio,
            queue: c.dram_queue,
            return_queue: c.dram_return_queue,
            line_bytes: c.line_bytes,
            map: AddrDec::parse(&c.dram_address_map, c.l2_partitions, c.l2_sub_partitions)?,
        })
    }
}

pub use crate::stats::DramChannelStats;

/// GPGPU-Sim's `fifo_pipeline` as `dram_t` uses it for `rwq`: a FIFO kept at least
/// `min` long with empty slots, so an entry pushed into it pops `min` pops later; a push
/// fills the last empty slot rather than growing the FIFO (GPGPU-Sim 3.2.2 `delayqueue.h`).
#[derive(Clone, Debug)]
struct DelayPipe {
    q: VecDeque<Option<u32>>,
    min: usize,
    max: usize,
}

impl DelayPipe {
    fn new(min: usize, max: usize) -> Self {
        let mut p = DelayPipe {
            q: VecDeque::with_capacity(max.max(min) + 2),
            min,
            max,
        };
        while p.q.len() < min {
            p.q.push_back(None);
        }
        p
    }
    fn full(&self) -> bool {
        self.q.len() >= self.max
    }
    fn push(&mut self, d: Option<u32>) {
        let long_enough = self.q.len() >= self.min;
        match self.q.back_mut() {
            Some(tail) if tail.is_none() && long_enough => *tail = d,
            _ => self.q.push_back(d),
        }
    }
    fn pop(&mut self) -> Option<u32> {
        let d = self.q.pop_front()?;
        if self.min > 0 && self.q.len() < self.min {
            self.q.push_back(None);
        }
        d
    }
    fn set_min(&mut self, min: usize) {
        if min > self.min {
            self.min = min;
            while self.q.len() < min {
                self.q.push_back(None);
            }
        } else {
            self.min = min;
            while self.q.len() > min && matches!(self.q.back(), Some(None)) {
                self.q.pop_back();
            }
        }
    }
    fn is_empty_of_commands(&self) -> bool {
        self.q.iter().all(|e| e.is_none())
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Req {
    req: Option<DramRequest>,
    bank: u32,
    row: u32,
    /// Bytes whose column command has issued / whose data has moved.
    tx: u32,
    dq: u32,
}

/// Timing constraints are kept as the command cycle from which they no longer hold, rather
/// than 3.2.2's counters that count down every cycle: `x == 0` there is `now >= x` here.
#[derive(Clone, Copy, Debug, Default)]
struct Bank {
    active: bool,
    row: u32,
    /// The request the bank is serving (slab index).
    mrq: Option<u32>,
    rcd: u64,
    rcdwr: u64,
    ras: u64,
    rc: u64,
    rp: u64,
    wtp: u64,
    rtp: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct BankGroup {
    ccdl: u64,
    rtpl: u64,
}

/// One GDDR5 channel (GPGPU-Sim 3.2.2 `dram_t` with `frfcfs_scheduler`).
#[derive(Clone, Debug)]
pub struct Gddr5 {
    p: Gddr5Params,
    // Derived timing (GPGPU-Sim 3.2.2 `memory_config::init`).
    t_rcdwr: u32,
    t_rtw: u32,
    t_wtr: u32,
    t_wtp: u32,
    /// Data-bus cycles of one column command: BL / data-command ratio.
    burst_cycles: u32,
    /// Bytes of one column command: BL × bus width × chips.
    atom: u32,
    /// 3.2.2 computes a bank's group for the timing checks as `bank >> bk_tag_length`,
    /// with `bk_tag_length` one more than log2(banks per group) (`memory_config::init`):
    /// GTX480's 16 banks in "4 groups" act as 2 groups of 8. Kept, to match its figures.
    bk_tag_length: u32,
    slab: Vec<Req>,
    free: Vec<u32>,
    /// Bit b: bank b holds a request (`mrq` is set), and bank b's scheduler queue is not
    /// empty. They let a cycle visit only the banks that can act (banks ≤ 64).
    busy: u64,
    queued: u64,
    /// Accepted, not yet in the scheduler (`mrqq`).
    incoming: VecDeque<u32>,
    /// FR-FCFS: per bank, requests oldest first, and the row being drained.
    per_bank: Vec<VecDeque<u32>>,
    last_row: Vec<Option<u32>>,
    pending: usize,
    banks: Vec<Bank>,
    groups: Vec<BankGroup>,
    rwq: DelayPipe,
    returnq: VecDeque<DramRequest>,
    return_cap: usize,
    /// Finished write-backs, for the partition's credit accounting (3.2.2 `set_done`).
    writebacks_done: VecDeque<DramRequest>,
    writing: bool,
    prio: usize,
    /// Command cycles so far (the timing constraints' clock).
    now: u64,
    ccd: u64,
    rrd: u64,
    rtw: u64,
    wtr: u64,
    pub stats: DramChannelStats,
}

impl Gddr5 {
    pub fn new(p: Gddr5Params) -> Self {
        let t = p.timing;
        let nbk = t.nbk as usize;
        let burst_cycles = (p.burst / p.data_command_ratio.max(1)).max(1);
        let per_group = (t.nbk / t.nbkgrp).max(1);
        let mut bk_tag_length = 0;
        let mut n = per_group;
        while n > 0 {
            n >>= 1;
            bk_tag_length += 1;
        }
        let queue = p.queue.max(1) as usize;
        // Every request is in one place at a time: incoming, the scheduler queue, a bank,
        // or the column pipeline; the bound below is never reached.
        let slots = queue + nbk + (t.cl.max(t.wl) as usize + 2) + 8;
        Gddr5 {
            t_rcdwr: t.rcd.saturating_sub(t.wl + 1),
            t_rtw: (t.cl + burst_cycles + 2).saturating_sub(t.wl),
            t_wtr: t.wl + burst_cycles + t.cdlr,
            t_wtp: t.wl + burst_cycles + t.wr,
            burst_cycles,
            atom: (p.burst * p.bus_bytes * p.chips).max(1),
            bk_tag_length,
            slab: Vec::with_capacity(slots),
            free: Vec::with_capacity(slots),
            busy: 0,
            queued: 0,
            incoming: VecDeque::with_capacity(slots),
            per_bank: (0..nbk).map(|_| VecDeque::with_capacity(queue)).collect(),
            last_row: vec![None; nbk],
            pending: 0,
            banks: vec![Bank::default(); nbk],
            groups: vec![BankGroup::default(); t.nbkgrp as usize],
            rwq: DelayPipe::new(t.cl as usize, t.cl as usize + 1),
            returnq: VecDeque::with_capacity(Self::return_cap_of(&p)),
            return_cap: Self::return_cap_of(&p),
            writebacks_done: VecDeque::with_capacity(slots),
            writing: false,
            prio: 0,
            now: 0,
            ccd: 0,
            rrd: 0,
            rtw: 0,
            wtr: 0,
            stats: DramChannelStats::default(),
            p,
        }
    }

    /// 3.2.2 dram.cc `dram_t::dram_t`: `returnq` of `gpgpu_dram_return_queue_size`
    /// entries, 1024 when it is 0.
    fn return_cap_of(p: &Gddr5Params) -> usize {
        if p.return_queue == 0 {
            1024
        } else {
            p.return_queue as usize
        }
    }

    /// Bytes one column command moves.
    pub fn atom_bytes(&self) -> u32 {
        self.atom
    }

    /// Whether the FR-FCFS queue takes another request (`dram_t::full`).
    pub fn has_room(&self) -> bool {
        self.pending < self.p.queue.max(1) as usize
    }

    pub fn push(&mut self, r: DramRequest) {
        let addr = r.line * self.p.line_bytes as u64;
        let tlx = self.p.map.tlx(addr);
        let slot = Req {
            req: Some(r),
            bank: tlx.bank % self.p.timing.nbk,
            row: tlx.row,
            tx: 0,
            dq: 0,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = slot;
                i
            }
            None => {
                self.slab.push(slot);
                (self.slab.len() - 1) as u32
            }
        };
        self.incoming.push_back(i);
        if r.write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
        }
    }

    /// A completed request (reads and writes alike): finished write-backs first, then the
    /// return queue's head.
    pub fn pop_done(&mut self) -> Option<DramRequest> {
        self.writebacks_done
            .pop_front()
            .or_else(|| self.returnq.pop_front())
    }

    /// A finished write-back (3.2.2: handed to `set_done`, never in `returnq`).
    pub fn pop_writeback(&mut self) -> Option<DramRequest> {
        self.writebacks_done.pop_front()
    }

    /// The return queue's head (`dram_t::return_queue_top`).
    pub fn return_top(&self) -> Option<&DramRequest> {
        self.returnq.front()
    }

    /// Requests in the return queue.
    pub fn returns_waiting(&self) -> usize {
        self.returnq.len()
    }

    pub fn is_idle(&self) -> bool {
        self.incoming.is_empty()
            && self.pending == 0
            && self.busy == 0
            && self.rwq.is_empty_of_commands()
            && self.returnq.is_empty()
            && self.writebacks_done.is_empty()
    }

    /// `n` command cycles in which nothing is queued or in flight ([`is_idle`](Self::is_idle)):
    /// only the timing counters count down, exactly as `n` calls of [`cycle`](Self::cycle)
    /// would (the column pipeline holds only empty slots and keeps its length).
    pub fn skip(&mut self, n: u64) {
        debug_assert!(self.is_idle());
        if n == 0 {
            return;
        }
        self.now += n;
        self.stats.cycles += n;
    }

    /// Bytes a request moves, rounded up to whole column commands.
    fn bytes_of(&self, r: &DramRequest) -> u32 {
        r.bytes.max(1).div_ceil(self.atom) * self.atom
    }

    /// FR-FCFS pick for `bank` whose open row is `row` (`frfcfs_scheduler::schedule`): keep
    /// draining the row chosen last; else the open row if anything wants it; else the
    /// oldest request's row. Oldest first within the row.
    fn schedule(&mut self, bank: usize, row: u32) -> Option<u32> {
        let q = &self.per_bank[bank];
        if q.is_empty() {
            return None;
        }
        let slab = &self.slab;
        let want = match self.last_row[bank] {
            Some(r) => r,
            None => {
                if q.iter().any(|&i| slab[i as usize].row == row) {
                    row
                } else {
                    slab[q[0] as usize].row
                }
            }
        };
        let pos = q.iter().position(|&i| slab[i as usize].row == want)?;
        let i = self.per_bank[bank].remove(pos).expect("position exists");
        let more = self.per_bank[bank]
            .iter()
            .any(|&j| self.slab[j as usize].row == want);
        self.last_row[bank] = more.then_some(want);
        if self.per_bank[bank].is_empty() {
            self.queued &= !(1 << bank);
        }
        self.pending -= 1;
        Some(i)
    }

    /// `dram_t::scheduler_frfcfs`: moves accepted requests into the scheduler, then gives
    /// one idle bank (round robin from `prio`) its next request.
    fn scheduler(&mut self) {
        let cap = self.p.queue.max(1) as usize;
        while self.pending < cap {
            let Some(i) = self.incoming.pop_front() else { break };
            let b = self.slab[i as usize].bank as usize;
            self.per_bank[b].push_back(i);
            self.queued |= 1 << b;
            self.pending += 1;
        }
        let nbk = self.banks.len();
        // Only an idle bank with queued requests can take one.
        for b in rotated(self.queued & !self.busy, self.prio) {
            let row = self.banks[b].row;
            if let Some(i) = self.schedule(b, row) {
                self.prio = (self.prio + 1) % nbk;
                self.banks[b].mrq = Some(i);
                self.busy |= 1 << b;
                break;
            }
        }
    }

    /// One DRAM command cycle (GPGPU-Sim 3.2.2 `dram_t::cycle`): data leaving the column
    /// pipeline, scheduling, at most one command (column, activate or precharge), then
    /// every timing counter counts down.
    pub fn cycle(&mut self) {
        // 3.2.2 dram.cc `dram_t::cycle`: `if (!returnq->full()) { cmd = rwq->pop(); ... }`:
        // a full return queue holds the column pipeline.
        let popped = if self.returnq.len() < self.return_cap {
            self.rwq.pop()
        } else {
            None
        };
        if let Some(i) = popped {
            let atom = self.atom;
            let s = &mut self.slab[i as usize];
            s.dq += atom;
            let r = s.req.expect("a live request");
            if s.dq >= self.bytes_of(&r) {
                self.slab[i as usize].req = None;
                self.free.push(i);
                if r.write && r.ack.is_none() {
                    // An L2 write-back: `m_memory_partition_unit->set_done(data)`.
                    self.writebacks_done.push_back(r);
                } else {
                    self.returnq.push_back(r);
                }
            }
        }
        self.scheduler();
        let nbk = self.banks.len();
        let t = self.p.timing;
        let now = self.now;
        let ok = |until: u64| now >= until;
        let mut issued = false;
        // Banks holding a request, round robin from `prio`; the first command issued ends
        // the search (every branch below needs `!issued`).
        for j in rotated(self.busy, self.prio) {
            if issued {
                break;
            }
            let Some(i) = self.banks[j].mrq else { continue };
            let grp = j >> self.bk_tag_length;
            let (row, write) = {
                let s = &self.slab[i as usize];
                (s.row, s.req.expect("a live request").write)
            };
            let b = self.banks[j];
            let g = self.groups[grp];
            let open_here = b.active && b.row == row;
            if !issued
                && ok(self.ccd)
                && ok(b.rcd)
                && ok(g.ccdl)
                && open_here
                && !write
                && ok(self.wtr)
                && !self.rwq.full()
            {
                if self.writing {
                    self.writing = false;
                    self.stats.write_to_read += 1;
                    self.rwq.set_min(t.cl as usize);
                }
                self.column(i, j, grp);
                self.ccd = now + t.ccd as u64;
                self.groups[grp].ccdl = now + t.ccdl as u64;
                self.rtw = now + self.t_rtw as u64;
                self.banks[j].rtp = now + self.burst_cycles as u64;
                self.groups[grp].rtpl = now + t.rtpl as u64;
                self.stats.column_reads += 1;
                issued = true;
            } else if !issued
                && ok(self.ccd)
                && ok(b.rcdwr)
                && ok(g.ccdl)
                && open_here
                && write
                && ok(self.rtw)
                && !self.rwq.full()
            {
                if !self.writing {
                    self.writing = true;
                    self.stats.read_to_write += 1;
                    self.rwq.set_min(t.wl as usize);
                }
                self.column(i, j, grp);
                self.ccd = now + t.ccd as u64;
                self.groups[grp].ccdl = now + t.ccdl as u64;
                self.wtr = now + self.t_wtr as u64;
                self.banks[j].wtp = now + self.t_wtp as u64;
                self.stats.column_writes += 1;
                issued = true;
            } else if !issued && ok(self.rrd) && !b.active && ok(b.rp) && ok(b.rc) {
                let bk = &mut self.banks[j];
                bk.row = row;
                bk.active = true;
                bk.rcd = now + t.rcd as u64;
                bk.rcdwr = now + self.t_rcdwr as u64;
                bk.ras = now + t.ras as u64;
                bk.rc = now + t.rc as u64;
                self.rrd = now + t.rrd as u64;
                self.prio = (j + 1) % nbk;
                self.stats.activations += 1;
                issued = true;
            } else if !issued && b.active && b.row != row && ok(b.ras) && ok(b.wtp) && ok(b.rtp) && ok(g.rtpl)
            {
                self.banks[j].active = false;
                self.banks[j].rp = now + t.rp as u64;
                self.prio = (j + 1) % nbk;
                self.stats.precharges += 1;
                issued = true;
            }
        }
        self.stats.cycles += 1;
        self.now += 1;
    }

    /// A column command for request `i` on bank `j`: into the column pipeline; the bank
    /// is free again once the request's last column has issued.
    fn column(&mut self, i: u32, j: usize, _grp: usize) {
        self.rwq.push(Some(i));
        let atom = self.atom;
        let bytes = self.bytes_of(&self.slab[i as usize].req.expect("live"));
        let s = &mut self.slab[i as usize];
        s.tx += atom;
        if s.tx >= bytes {
            self.banks[j].mrq = None;
            self.busy &= !(1 << j);
        }
        self.stats.busy_cycles += self.burst_cycles as f64;
    }
}

/// The set bits of `mask` in round-robin order from `start` (< 64): `start`, `start + 1`, …,
/// then from 0 — the order 3.2.2 visits banks in, without visiting the empty ones.
fn rotated(mask: u64, start: usize) -> impl Iterator<Item = usize> {
    let low = (1u64 << start) - 1;
    Bits(mask & !low).chain(Bits(mask & low))
}

struct Bits(u64);

impl Iterator for Bits {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(b)
    }
}

/// The fixed-rate pipe (`dram_model = fixed`): a bounded queue served in order at one line
/// every `cycles_per_line` core cycles with a fixed latency [design; the model before
/// GDDR5].
#[derive(Clone, Debug)]
pub struct FixedDram {
    queue: VecDeque<DramRequest>,
    capacity: usize,
    in_service: VecDeque<(u64, DramRequest)>,
    next_start: f64,
    cycles_per_line: f64,
    latency: u64,
    pub stats: DramChannelStats,
}

impl FixedDram {
    pub fn new(capacity: u32, cycles_per_line: f64, latency: u32) -> Self {
        FixedDram {
            queue: VecDeque::with_capacity(capacity as usize),
            capacity: capacity as usize,
            in_service: VecDeque::with_capacity(capacity as usize + latency as usize),
            next_start: 0.0,
            cycles_per_line,
            latency: latency as u64,
            stats: DramChannelStats::default(),
        }
    }

    pub fn has_room(&self) -> bool {
        self.queue.len() < self.capacity
    }

    pub fn push(&mut self, r: DramRequest) {
        self.queue.push_back(r);
    }

    /// Starts the next transfer when the channel is free (`now` in core cycles).
    pub fn cycle(&mut self, now: u64) {
        self.stats.cycles += 1;
        if now as f64 >= self.next_start {
            if let Some(r) = self.queue.pop_front() {
                // Back to back, the fractional remainder carries over, so 2.5 cycles per
                // line averages 2.5; after an idle gap the channel starts afresh.
                let now_f = now as f64;
                let base = if self.next_start > now_f - 1.0 {
                    self.next_start
                } else {
                    now_f
                };
                self.next_start = base + self.cycles_per_line;
                self.stats.busy_cycles += self.cycles_per_line;
                if r.write {
                    self.stats.writes += 1;
                } else {
                    self.stats.reads += 1;
                }
                self.in_service.push_back((now + self.latency, r));
            }
        }
    }

    pub fn pop_done(&mut self, now: u64) -> Option<DramRequest> {
        match self.in_service.front() {
            Some((done, _)) if *done <= now => self.in_service.pop_front().map(|(_, r)| r),
            _ => None,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.in_service.is_empty()
    }
}

/// A partition's DRAM channel, either model.
#[derive(Clone, Debug)]
pub enum Dram {
    Gddr5(Box<Gddr5>),
    Fixed(FixedDram),
}

impl Dram {
    pub fn has_room(&self) -> bool {
        match self {
            Dram::Gddr5(d) => d.has_room(),
            Dram::Fixed(d) => d.has_room(),
        }
    }
    pub fn push(&mut self, r: DramRequest) {
        match self {
            Dram::Gddr5(d) => d.push(r),
            Dram::Fixed(d) => d.push(r),
        }
    }
    /// One cycle of the channel's own clock (`now` is the core cycle, used by `fixed`).
    pub fn cycle(&mut self, now: u64) {
        match self {
            Dram::Gddr5(d) => d.cycle(),
            Dram::Fixed(d) => d.cycle(now),
        }
    }
    pub fn pop_done(&mut self, now: u64) -> Option<DramRequest> {
        match self {
            Dram::Gddr5(d) => d.pop_done(),
            Dram::Fixed(d) => d.pop_done(now),
        }
    }
    /// A finished write-back (`gddr5`; `fixed` returns everything in order through
    /// [`return_top`](Self::return_top)).
    pub fn pop_writeback(&mut self) -> Option<DramRequest> {
        match self {
            Dram::Gddr5(d) => d.pop_writeback(),
            Dram::Fixed(_) => None,
        }
    }
    /// The oldest finished request waiting to leave (`dram_t::return_queue_top`).
    pub fn return_top(&self, now: u64) -> Option<DramRequest> {
        match self {
            Dram::Gddr5(d) => d.return_top().copied(),
            Dram::Fixed(d) => match d.in_service.front() {
                Some((done, r)) if *done <= now => Some(*r),
                _ => None,
            },
        }
    }
    /// Removes [`return_top`](Self::return_top)'s request.
    pub fn return_pop(&mut self, now: u64) {
        self.pop_done_of_returnq(now);
    }
    fn pop_done_of_returnq(&mut self, now: u64) {
        match self {
            Dram::Gddr5(d) => {
                d.returnq.pop_front();
            }
            Dram::Fixed(d) => {
                d.pop_done(now);
            }
        }
    }
    pub fn is_idle(&self) -> bool {
        match self {
            Dram::Gddr5(d) => d.is_idle(),
            Dram::Fixed(d) => d.is_idle(),
        }
    }
    pub fn stats(&self) -> &DramChannelStats {
        match self {
            Dram::Gddr5(d) => &d.stats,
            Dram::Fixed(d) => &d.stats,
        }
    }
    pub fn reset_stats(&mut self) {
        match self {
            Dram::Gddr5(d) => d.stats = DramChannelStats::default(),
            Dram::Fixed(d) => d.stats = DramChannelStats::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_visits_set_bits_round_robin_from_start() {
        let order: Vec<usize> = rotated(0b1011_0101, 3).collect();
        assert_eq!(order, [4, 5, 7, 0, 2]);
        assert_eq!(rotated(1 << 63 | 1, 63).collect::<Vec<_>>(), [63, 0]);
        assert_eq!(rotated(0, 5).count(), 0);
    }
    use crate::gpu::mem::addrdec::GTX480_MAPPING;

    fn gtx480(queue: u32) -> Gddr5 {
        Gddr5::new(Gddr5Params {
            timing: DramTiming::GTX480,
            burst: 8,
            bus_bytes: 4,
            chips: 2,
            data_command_ratio: 4,
            queue,
            return_queue: 0,
            line_bytes: 128,
            map: AddrDec::parse(GTX480_MAPPING, 6, 2).unwrap(),
        })
    }

    /// Cycles until `n` completions.
    fn run_until(d: &mut Gddr5, n: usize) -> u64 {
        let mut done = 0;
        let mut c = 0;
        while done < n {
            d.cycle();
            c += 1;
            while d.pop_done().is_some() {
                done += 1;
            }
            assert!(c < 100_000, "stuck");
        }
        c
    }

    #[test]
    fn timing_options_parse_in_both_forms() {
        let named = DramTiming::parse(
            "nbk=16:CCD=2:RRD=6:RCD=12:RAS=28:RP=12:RC=40: CL=12:WL=4:CDLR=5:WR=12:nbkgrp=4:CCDL=3:RTPL=2",
            &DramTiming::GTX480,
        )
        .unwrap();
        assert_eq!(named, DramTiming::GTX480);
        let ordered = DramTiming::parse("16:2:6:12:28:12:40:12:4:5:12:4:3:2", &DramTiming::GTX480).unwrap();
        assert_eq!(ordered, DramTiming::GTX480);
        let e = DramTiming::parse("nbk=16:XYZ=2", &DramTiming::GTX480).unwrap_err();
        assert!(e.contains("XYZ"), "{e}");
        assert!(DramTiming::parse("nbk=16:CCD=x", &DramTiming::GTX480).is_err());
        assert!(DramTiming::parse("nbk=16:nbkgrp=3", &DramTiming::GTX480).is_err());
    }

    #[test]
    fn an_unloaded_read_is_activate_rcd_two_columns_and_cl() {
        let mut d = gtx480(16);
        d.push(DramRequest::read(0, 128));
        // Cycle 1: scheduled and activated; RD after RCD = 12 (cycle 13), the second column
        // CCDL = 3 later (same group, cycle 16); its data leaves CL = 12 pops later.
        let c = run_until(&mut d, 1);
        assert_eq!(c, 28);
        assert_eq!(d.stats.activations, 1);
        assert_eq!(d.stats.column_reads, 2);
        assert_eq!(d.stats.busy_cycles, 4.0);
        assert!(d.is_idle());
    }

    #[test]
    fn row_hits_go_before_an_older_row_miss() {
        let mut d = gtx480(16);
        // Lines 0 and 1 (chunk 0, channel 0) share bank 0's row 0; a line in another row of
        // bank 0 (0x10000 × 6 bytes on = same channel, row 1) comes between them.
        let other_row = 6 * 0x10000 / 128;
        let map = AddrDec::parse(GTX480_MAPPING, 6, 2).unwrap();
        let t = map.tlx(other_row * 128);
        assert_eq!((t.chip, t.bank, t.row), (0, 0, 1));
        d.push(DramRequest::read(0, 128));
        d.push(DramRequest::read(other_row, 128));
        d.push(DramRequest::read(1, 128));
        let mut order = vec![];
        for _ in 0..400 {
            d.cycle();
            while let Some(r) = d.pop_done() {
                order.push(r.line);
            }
        }
        assert_eq!(order, vec![0, 1, other_row]);
        assert_eq!(d.stats.activations, 2);
        assert_eq!(d.stats.precharges, 1);
    }

    #[test]
    fn a_write_after_reads_turns_the_bus_around() {
        let mut d = gtx480(16);
        d.push(DramRequest::read(0, 128));
        d.push(DramRequest::write(1, 128));
        d.push(DramRequest::read(2 * 6 * 2, 128));
        run_until(&mut d, 3);
        assert_eq!(d.stats.read_to_write, 1);
        assert_eq!(d.stats.write_to_read, 1);
        assert_eq!(d.stats.column_writes, 2);
        assert_eq!((d.stats.reads, d.stats.writes), (2, 1));
    }

    #[test]
    fn the_queue_bounds_what_is_accepted() {
        let mut d = gtx480(4);
        // Rows 0, 1, 2, … of channel 0's bank 0: the first goes to the bank, the rest wait
        // in the scheduler queue, which holds four.
        let mut accepted = 0;
        for r in 0..10u64 {
            if !d.has_room() {
                break;
            }
            d.push(DramRequest::read(r * 3072, 128));
            accepted += 1;
            d.cycle();
        }
        assert_eq!(accepted, 5);
        assert!(run_until(&mut d, 5) > 0);
        assert_eq!(d.stats.activations, 5);
    }

    /// 3.2.2 dram.cc `dram_t::cycle` pops `rwq` only `if (!returnq->full())`: with a
    /// one-entry return queue that nobody drains, the second read stays in the channel
    /// until the first leaves; a write-back bypasses the queue (`set_done`).
    #[test]
    fn a_full_return_queue_stalls_the_read_return() {
        let mut p = gtx480(8).p.clone();
        p.return_queue = 1;
        let mut d = Gddr5::new(p);
        // Lines 0 and 1 lie in different banks (bank bit 8).
        d.push(DramRequest::read(0, 128));
        d.push(DramRequest::read(1, 128));
        for _ in 0..1000 {
            d.cycle();
        }
        assert_eq!(d.returns_waiting(), 1, "the return queue is full");
        assert!(!d.is_idle(), "the second read is held in the channel");
        assert_eq!(d.return_top().map(|r| r.line), Some(0));
        d.returnq.pop_front();
        for _ in 0..1000 {
            d.cycle();
        }
        assert_eq!(d.return_top().map(|r| r.line), Some(1), "then it returns");
        // A write-back finishes beside a full return queue... once the pipeline may drain.
        d.returnq.pop_front();
        d.push(DramRequest::write(2, 128));
        for _ in 0..1000 {
            d.cycle();
        }
        assert_eq!(
            d.returns_waiting(),
            0,
            "a write-back never enters the return queue"
        );
        assert_eq!(d.pop_writeback().map(|r| r.line), Some(2));
        assert!(d.is_idle());
    }
}
