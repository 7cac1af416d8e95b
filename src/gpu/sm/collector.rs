//! The operand collector: the register banks, the collector units and the pipeline registers
//! around them, as GPGPU-Sim builds them (3.2.2 and 4.x `shader.cc`:
//! `shader_core_ctx::create_pipeline` / `create_exec_pipeline`, `opndcoll_rfu_t`).
//!
//! An issued instruction waits in its class's ID_OC register (SP, SFU or MEM) until an input
//! port of the collector hands it to a free collector unit (`allocate_cu`); the unit queues one
//! read per distinct source register at that register's bank, `(reg + warp) mod banks`
//! (`register_bank`). Each cycle every bank serves the front of its queue, unless a writeback
//! took the bank this cycle (`arbiter_t::allocate_reads`: writes first). A unit whose operands
//! are all read is ready; a dispatch unit of its set moves it into the class's OC_EX register
//! when that has room (`dispatch_ready_cu`), and the functional unit takes it from there
//! (`shader_core_ctx::execute`). One step runs, in GPGPU-Sim's order, dispatch, then reads,
//! then allocation, so an instruction with operands issued at t is allocated at t+1, read at
//! t+2, dispatched at t+3 and taken by its unit at t+4 (`pipeline.rs`).
//!
//! Collector units come in sets: SP, SFU and MEM units serve their own input port, and the
//! *generic* units (4.x only; `-gpgpu_operand_collector_num_units_gen`, which Accel-Sim's
//! port322 `trace.config` sets to 2) serve a port of their own that comes first and reads the
//! SP, SFU and MEM registers in that order, and are every other port's second choice.

use crate::workload::program::{Inst, OpKind, Reg, NO_REG};

/// Which ID_OC / OC_EX register pair an instruction passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Port {
    #[default]
    Sp = 0,
    Sfu = 1,
    Mem = 2,
}

const PORTS: [Port; 3] = [Port::Sp, Port::Sfu, Port::Mem];

/// Register widths per port (SP, SFU, MEM): the GTX480 file's `-gpgpu_pipeline_widths`
/// (3.2.2 `2,1,1,2,1,1,2`; port322's 4.x form `2,0,0,1,1,2,0,0,1,1,2`), ID_OC then OC_EX.
pub const ID_OC_WIDTHS: [usize; 3] = [2, 1, 1];
pub const OC_EX_WIDTHS: [usize; 3] = [2, 1, 1];
/// EX_WB's width: results the SP and SFU pipelines may hand to writeback per cycle (4.x
/// `num_result_bus`, reserved at the latency when a unit takes an instruction).
pub const RESULT_BUSES: u8 = 2;
/// Input ports and dispatch units of the SP set (`-gpgpu_operand_collector_num_in_ports_sp`
/// and `_out_ports_sp`, 2 in the GTX480 file); the SFU, MEM and generic sets have one each
/// (their defaults, which neither file changes).
pub const SP_PORTS: usize = 2;

/// An instruction in the collector, with what its unit needs.
#[derive(Clone, Copy, Debug)]
pub struct OcInst {
    pub warp: u8,
    pub port: Port,
    pub op: OpKind,
    pub dst: Reg,
    /// MEM: the SM's slot holding the coalesced instruction.
    pub mem_slot: u8,
    /// Distinct source registers read from the banks (`collector_unit_t::allocate` drops
    /// repeats), `nsrc` of them; RZ is [`RZ_READ`].
    pub srcs: [Reg; 4],
    pub nsrc: u8,
    /// Issue order (GPGPU-Sim's uid): a register hands on its oldest entry first.
    age: u64,
}

/// RZ as a collector operand. Accel-Sim numbers SASS registers from 1 and RZ (R255) becomes
/// R256, read like any other (4.x `collector_unit_t::allocate` reads every distinct source
/// register); [`bank_of`]'s `reg + 1` puts 255 in R256's bank.
pub const RZ_READ: Reg = 255;

impl OcInst {
    /// Instruction `inst` of warp `warp`, entering through `port`.
    pub fn of(warp: u8, port: Port, inst: &Inst, mem_slot: u8) -> Self {
        Self::new(warp, port, inst.op, inst.dst, inst.src, inst.reads_rz, mem_slot)
    }

    /// `reads_rz`: one more read, of RZ's bank (`Inst::reads_rz`).
    pub fn new(
        warp: u8,
        port: Port,
        op: OpKind,
        dst: Reg,
        src: [Reg; 3],
        reads_rz: bool,
        mem_slot: u8,
    ) -> Self {
        let mut srcs = [NO_REG; 4];
        let mut n = 0;
        for r in src {
            if r != NO_REG && !srcs[..n].contains(&r) {
                srcs[n] = r;
                n += 1;
            }
        }
        if reads_rz {
            srcs[n] = RZ_READ;
            n += 1;
        }
        OcInst {
            warp,
            port,
            op,
            dst,
            mem_slot,
            srcs,
            nsrc: n as u8,
            age: 0,
        }
    }
}

/// The bank register `reg` of warp `warp` lives in. GPGPU-Sim numbers registers from 1
/// (Accel-Sim adds 1 to the SASS number, `trace_warp_inst_t::parse_from_trace_struct`), and
/// shifts each warp's registers by its slot (`register_bank`).
pub fn bank_of(reg: Reg, warp: u8, banks: u32) -> usize {
    ((reg as u32 + 1 + warp as u32) % banks) as usize
}

/// The collector's dimensions (`Config`: `reg_banks`, `collector_units_*`).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub banks: u32,
    /// Units per set: SP, SFU, MEM, generic.
    pub units: [u32; 4],
}

#[derive(Clone, Copy, Debug)]
struct Unit {
    inst: Option<OcInst>,
    /// Operands (bit i: `srcs[i]`) whose bank read is still queued.
    pending: u8,
}

/// A set of collector units: `first..first + len` in `units`.
#[derive(Clone, Copy, Debug)]
struct Set {
    first: usize,
    len: usize,
}

impl Set {
    /// The set's units in a mask over `units` shifted down to the set (bit c: unit first + c).
    fn of(self, units: u64) -> u64 {
        (units >> self.first) & ((1u64 << self.len) - 1)
    }
}

/// A dispatch unit: round robin over its set from the unit after the last it dispatched
/// (`dispatch_unit_t::find_ready`).
#[derive(Clone, Copy, Debug)]
struct Dispatcher {
    set: Set,
    last: usize,
}

/// One pipeline register of a few slots.
#[derive(Clone, Debug)]
struct Register {
    slots: Vec<Option<OcInst>>,
    /// Slots holding an entry.
    len: usize,
}

impl Register {
    fn new(width: usize) -> Self {
        Register {
            slots: vec![None; width],
            len: 0,
        }
    }
    fn has_free(&self) -> bool {
        self.len < self.slots.len()
    }
    fn free(&self) -> usize {
        self.slots.len() - self.len
    }
    fn is_empty(&self) -> bool {
        self.len == 0
    }
    fn put(&mut self, i: OcInst) {
        let s = self
            .slots
            .iter_mut()
            .find(|s| s.is_none())
            .expect("has_free checked");
        *s = Some(i);
        self.len += 1;
    }
    /// Takes the oldest entry.
    fn take_oldest(&mut self) -> Option<OcInst> {
        let s = self.oldest()?;
        self.len -= 1;
        self.slots[s].take()
    }
    /// The oldest entry's slot (`register_set::get_ready`).
    fn oldest(&self) -> Option<usize> {
        let mut best: Option<(usize, u64)> = None;
        for (n, s) in self.slots.iter().enumerate() {
            if let Some(i) = s {
                if best.is_none_or(|(_, a)| i.age < a) {
                    best = Some((n, i.age));
                }
            }
        }
        best.map(|(n, _)| n)
    }
}

/// The operand collector of one SM.
#[derive(Clone, Debug)]
pub struct Collector {
    banks: u32,
    units: Vec<Unit>,
    /// SP, SFU, MEM, generic.
    sets: [Set; 4],
    dispatchers: Vec<Dispatcher>,
    /// Per bank, the queued reads as (unit, operand), oldest first.
    queues: Vec<std::collections::VecDeque<(u8, u8)>>,
    /// Banks with a queued read.
    queued: u64,
    /// Banks a writeback took this cycle.
    writes: u64,
    /// Units holding an instruction, and those of them whose reads are all done.
    busy: u64,
    collected: u64,
    /// Memory instructions anywhere in the collector.
    mem_len: usize,
    id_oc: [Register; 3],
    oc_ex: [Register; 3],
    next_age: u64,
    /// Instructions anywhere in the collector.
    len: usize,
}

const GEN: usize = 3;

impl Collector {
    pub fn new(shape: Shape) -> Self {
        assert!(
            shape.banks >= 1 && shape.banks <= 64,
            "reg_banks is checked to 1..=64"
        );
        // 4.x adds the generic set first, then SP, (DP, tensor: none), SFU, MEM.
        let order = [GEN, 0, 1, 2];
        let mut sets = [Set { first: 0, len: 0 }; 4];
        let mut first = 0;
        for s in order {
            let len = shape.units[s] as usize;
            sets[s] = Set { first, len };
            first += len;
        }
        let mut dispatchers = Vec::new();
        for (s, n) in [(GEN, 1), (0, SP_PORTS), (1, 1), (2, 1)] {
            if sets[s].len > 0 {
                for _ in 0..n {
                    dispatchers.push(Dispatcher {
                        set: sets[s],
                        last: 0,
                    });
                }
            }
        }
        let reads = first * 3;
        Collector {
            banks: shape.banks,
            units: vec![
                Unit {
                    inst: None,
                    pending: 0
                };
                first
            ],
            sets,
            dispatchers,
            queues: (0..shape.banks)
                .map(|_| std::collections::VecDeque::with_capacity(reads))
                .collect(),
            queued: 0,
            writes: 0,
            busy: 0,
            collected: 0,
            mem_len: 0,
            id_oc: ID_OC_WIDTHS.map(Register::new),
            oc_ex: OC_EX_WIDTHS.map(Register::new),
            next_age: 0,
            len: 0,
        }
    }

    /// Whether nothing is in the collector.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Free slots of `port`'s ID_OC register: how many instructions of that class the
    /// schedulers may issue this cycle (`scheduler_unit::cycle` checks `has_free`).
    pub fn free(&self, port: Port) -> usize {
        self.id_oc[port as usize].free()
    }

    /// Issues `i` into its ID_OC register (the caller checked `free`).
    pub fn issue(&mut self, mut i: OcInst) {
        i.age = self.next_age;
        self.next_age += 1;
        self.id_oc[i.port as usize].put(i);
        self.len += 1;
        self.mem_len += (i.port == Port::Mem) as usize;
    }

    /// A writeback of `reg` for warp `warp` takes its bank this cycle
    /// (`opndcoll_rfu_t::writeback`; a second write to a taken bank is dropped there, as the
    /// 4.x writeback ignores the refusal).
    pub fn write(&mut self, reg: Reg, warp: u8) {
        if reg != NO_REG {
            self.writes |= 1 << bank_of(reg, warp, self.banks);
        }
    }

    /// The oldest instruction in `port`'s OC_EX register, for its unit to consider.
    pub fn ready(&self, port: Port) -> Option<&OcInst> {
        let r = &self.oc_ex[port as usize];
        r.oldest().and_then(|s| r.slots[s].as_ref())
    }

    /// The unit takes the oldest instruction of `port`'s OC_EX register.
    pub fn take(&mut self, port: Port) -> Option<OcInst> {
        let i = self.oc_ex[port as usize].take_oldest()?;
        self.len -= 1;
        self.mem_len -= (port == Port::Mem) as usize;
        Some(i)
    }

    /// Whether `port`'s OC_EX register holds an instruction.
    pub fn has_ready(&self, port: Port) -> bool {
        !self.oc_ex[port as usize].is_empty()
    }

    /// The warps with a memory instruction in the collector, as a mask.
    pub fn mem_warps(&self) -> u64 {
        if self.mem_len == 0 {
            return 0;
        }
        let mut m = 0u64;
        let mut add = |i: &OcInst| {
            if i.port == Port::Mem {
                m |= 1 << i.warp
            }
        };
        self.id_oc[2]
            .slots
            .iter()
            .chain(&self.oc_ex[2].slots)
            .flatten()
            .for_each(&mut add);
        self.units.iter().filter_map(|u| u.inst.as_ref()).for_each(add);
        m
    }

    /// One read-operands stage (`opndcoll_rfu_t::step`).
    pub fn step(&mut self) {
        if self.len > 0 {
            self.dispatch_ready();
            self.read_banks();
            self.allocate();
        }
        self.writes = 0;
    }

    /// `dispatch_ready_cu`: each dispatch unit moves one ready unit's instruction into its
    /// OC_EX register, if that has room.
    fn dispatch_ready(&mut self) {
        if self.collected == 0 {
            return;
        }
        for d in 0..self.dispatchers.len() {
            let Dispatcher { set, last } = self.dispatchers[d];
            let ready = set.of(self.collected);
            if ready == 0 {
                continue;
            }
            // Round robin from the unit after the last: the ready units from last + 1 on,
            // then those from the set's start.
            let from = (last + 1) % set.len;
            let order = [ready & (u64::MAX << from), ready & !(u64::MAX << from)];
            'search: for mut m in order {
                while m != 0 {
                    let c = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let u = set.first + c;
                    let i = self.units[u].inst.expect("a collected unit holds an instruction");
                    if self.oc_ex[i.port as usize].has_free() {
                        self.oc_ex[i.port as usize].put(i);
                        self.units[u].inst = None;
                        self.busy &= !(1 << u);
                        self.collected &= !(1 << u);
                        self.dispatchers[d].last = c;
                        break 'search;
                    }
                }
            }
        }
    }

    /// `arbiter_t::allocate_reads`: every bank not taken by a write serves its oldest read.
    fn read_banks(&mut self) {
        let mut serve = self.queued & !self.writes;
        while serve != 0 {
            let b = serve.trailing_zeros() as usize;
            serve &= serve - 1;
            let q = &mut self.queues[b];
            let (unit, operand) = q.pop_front().expect("queued bank has a read");
            if q.is_empty() {
                self.queued &= !(1 << b);
            }
            let u = &mut self.units[unit as usize];
            u.pending &= !(1 << operand);
            if u.pending == 0 {
                self.collected |= 1 << unit;
            }
        }
    }

    /// `allocate_cu`, port by port: the generic port first (its inputs SP, SFU, MEM in that
    /// order), then the SP ports, the SFU port and the MEM port, each trying its own set and
    /// then the generic one. An allocated unit queues its reads at once.
    fn allocate(&mut self) {
        if self.sets[GEN].len > 0 {
            for p in PORTS {
                if !self.id_oc[p as usize].is_empty() {
                    self.allocate_from(p, &[GEN]);
                }
            }
        }
        for p in [Port::Sp; SP_PORTS].into_iter().chain([Port::Sfu, Port::Mem]) {
            if !self.id_oc[p as usize].is_empty() {
                self.allocate_from(p, &[p as usize, GEN]);
            }
        }
    }

    fn allocate_from(&mut self, port: Port, sets: &[usize]) {
        for &s in sets {
            let set = self.sets[s];
            let free = set.of(!self.busy);
            if free == 0 {
                continue;
            }
            let u = set.first + free.trailing_zeros() as usize;
            let i = self.id_oc[port as usize]
                .take_oldest()
                .expect("non-empty register");
            let mut pending = 0u8;
            for (op, &reg) in i.srcs[..i.nsrc as usize].iter().enumerate() {
                let b = bank_of(reg, i.warp, self.banks);
                self.queues[b].push_back((u as u8, op as u8));
                self.queued |= 1 << b;
                pending |= 1 << op;
            }
            self.units[u] = Unit {
                inst: Some(i),
                pending,
            };
            self.busy |= 1 << u;
            if pending == 0 {
                self.collected |= 1 << u;
            }
            return;
        }
    }

    /// Whether a step can change nothing, given that the LD/ST unit takes nothing
    /// (`lsu_busy`, or MEM's OC_EX register empty): only memory instructions are held,
    /// every read is done, no ready unit can dispatch and no waiting instruction can get a
    /// unit (the quiet-cycle check, `quiet.rs`).
    pub fn settled(&self, lsu_busy: bool) -> bool {
        if self.len == 0 {
            return true;
        }
        if self.queued != 0 || !self.id_oc[0].is_empty() || !self.id_oc[1].is_empty() {
            return false;
        }
        if !self.oc_ex[0].is_empty() || !self.oc_ex[1].is_empty() {
            return false;
        }
        if !lsu_busy && !self.oc_ex[2].is_empty() {
            return false;
        }
        // Ready memory units wait for OC_EX_MEM; anything else held would move.
        let mem_out_full = !self.oc_ex[2].has_free();
        let held_ok = self.units.iter().all(|u| match u.inst {
            None => true,
            Some(i) => i.port == Port::Mem && mem_out_full,
        });
        if !held_ok {
            return false;
        }
        // A waiting memory instruction has no unit to go to.
        self.id_oc[2].is_empty() || {
            let full = |s: usize| self.sets[s].of(!self.busy) == 0;
            full(2) && full(GEN)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::program::AluKind;

    const ALU: OpKind = OpKind::Alu(AluKind::Simple);

    fn gtx480(gen: u32) -> Collector {
        Collector::new(Shape {
            banks: 16,
            units: [6, 8, 2, gen],
        })
    }

    /// Steps until `port`'s OC_EX holds something; returns the steps taken.
    fn steps_to_dispatch(c: &mut Collector, port: Port) -> u32 {
        for n in 1..20 {
            c.step();
            if c.has_ready(port) {
                return n;
            }
        }
        panic!("never dispatched");
    }

    #[test]
    fn an_instruction_with_operands_is_dispatched_in_the_third_step() {
        // Issued at t: allocated at t+1, read at t+2, dispatched at t+3 (pipeline.rs).
        let mut c = gtx480(0);
        c.issue(OcInst::new(0, Port::Sp, ALU, 1, [2, 3, NO_REG], false, 0));
        assert_eq!(steps_to_dispatch(&mut c, Port::Sp), 3);
        let i = c.take(Port::Sp).unwrap();
        assert_eq!(i.dst, 1);
        assert!(c.is_empty());
    }

    #[test]
    fn without_operands_it_is_dispatched_in_the_second_step() {
        let mut c = gtx480(0);
        c.issue(OcInst::new(0, Port::Sp, ALU, 1, [NO_REG; 3], false, 0));
        assert_eq!(steps_to_dispatch(&mut c, Port::Sp), 2);
    }

    #[test]
    fn two_operands_in_one_bank_take_two_reads() {
        // Registers 2 and 18 of warp 0 are both in bank 3 of 16: one read per bank a cycle.
        let mut c = gtx480(0);
        assert_eq!(bank_of(2, 0, 16), bank_of(18, 0, 16));
        c.issue(OcInst::new(0, Port::Sp, ALU, 1, [2, 18, NO_REG], false, 0));
        assert_eq!(steps_to_dispatch(&mut c, Port::Sp), 4);
        // A repeated register is read once.
        let mut c = gtx480(0);
        c.issue(OcInst::new(0, Port::Sp, ALU, 1, [2, 2, 2], false, 0));
        assert_eq!(steps_to_dispatch(&mut c, Port::Sp), 3);
    }

    #[test]
    fn the_warp_shifts_the_bank() {
        assert_eq!(bank_of(0, 0, 16), 1);
        assert_eq!(bank_of(0, 15, 16), 0);
        assert_eq!(bank_of(14, 1, 16), 0);
    }

    #[test]
    fn a_writeback_takes_its_bank_before_the_reads() {
        let mut c = gtx480(0);
        c.issue(OcInst::new(0, Port::Sp, ALU, 1, [2, NO_REG, NO_REG], false, 0));
        c.step(); // allocated, read queued
        c.write(18, 0); // same bank as register 2 of warp 0
        c.step(); // the read waits
        assert!(!c.has_ready(Port::Sp));
        c.step(); // read
        assert!(!c.has_ready(Port::Sp));
        c.step(); // dispatched
        assert!(c.has_ready(Port::Sp));
    }

    /// Accel-Sim reads RZ as R256: in warp 0 it shares bank 0 with R15, so the two reads take
    /// two cycles, as two registers of one bank do; R5 and RZ are read together.
    #[test]
    fn rz_is_read_from_its_bank() {
        assert_eq!(bank_of(RZ_READ, 0, 16), 0);
        assert_eq!(bank_of(RZ_READ, 3, 16), bank_of(15, 3, 16));
        let cycles_to_dispatch = |src: [Reg; 3], rz: bool| {
            let mut c = gtx480(0);
            c.issue(OcInst::new(0, Port::Sp, ALU, 1, src, rz, 0));
            steps_to_dispatch(&mut c, Port::Sp)
        };
        let plain = cycles_to_dispatch([15, NO_REG, NO_REG], false);
        assert_eq!(cycles_to_dispatch([5, NO_REG, NO_REG], true), plain);
        assert_eq!(cycles_to_dispatch([15, NO_REG, NO_REG], true), plain + 1);
        assert_eq!(
            cycles_to_dispatch([15, NO_REG, NO_REG], true),
            cycles_to_dispatch([15, 31, NO_REG], false),
            "RZ conflicts like a register of R15's bank"
        );
        let i = OcInst::new(0, Port::Sp, ALU, 1, [NO_REG; 3], true, 0);
        assert_eq!((i.nsrc, i.srcs[0]), (1, RZ_READ), "RZ RZ is one read");
    }

    #[test]
    fn oc_ex_hands_on_the_oldest_and_a_full_register_holds_ready_units() {
        let mut c = gtx480(0);
        for w in 0..3u8 {
            c.issue(OcInst::new(
                w,
                Port::Mem,
                OpKind::LoadGlobal,
                NO_REG,
                [w * 4, NO_REG, NO_REG],
                false,
                w,
            ));
            c.step();
        }
        // ID_OC_MEM is one wide: the third waited for the second to get a unit.
        for _ in 0..3 {
            c.step();
        }
        assert_eq!(c.take(Port::Mem).unwrap().warp, 0);
        assert!(!c.settled(true), "the next ready unit can dispatch now");
        c.step();
        assert_eq!(c.take(Port::Mem).unwrap().warp, 1);
        assert_eq!(c.mem_warps(), 1 << 2);
    }

    #[test]
    fn memory_instructions_settle_behind_a_busy_ldst_unit() {
        let mut c = gtx480(0);
        for w in 0..4u8 {
            assert_eq!(c.free(Port::Mem), 1);
            c.issue(OcInst::new(
                w,
                Port::Mem,
                OpKind::LoadGlobal,
                NO_REG,
                [1, NO_REG, NO_REG],
                false,
                w,
            ));
            for _ in 0..4 {
                c.step();
            }
        }
        // OC_EX_MEM (1) and both MEM units (2) hold one each, ID_OC_MEM the fourth.
        assert_eq!(c.free(Port::Mem), 0);
        assert!(c.settled(true));
        assert!(!c.settled(false), "a free LD/ST unit would take OC_EX_MEM");
    }

    #[test]
    fn generic_units_take_memory_instructions_when_the_mem_set_is_full() {
        // Port322: two generic units, reached first through their own port.
        let mut plain = gtx480(0);
        let mut gen = gtx480(2);
        for c in [&mut plain, &mut gen] {
            for w in 0..6u8 {
                if c.free(Port::Mem) > 0 {
                    c.issue(OcInst::new(
                        w,
                        Port::Mem,
                        OpKind::LoadGlobal,
                        NO_REG,
                        [1, NO_REG, NO_REG],
                        false,
                        w,
                    ));
                }
                c.step();
            }
        }
        // Nothing leaves OC_EX_MEM: 1 + 2 units + 1 waiting without generic units, 1 + 4 + 1 with.
        assert_eq!(plain.len, 4);
        assert_eq!(gen.len, 6);
    }
}
