//! A warp context: program counter and loop counters (the fetch state), the instruction
//! buffer, and the warp's scoreboard.

use crate::workload::program::{
    Buffer, Flow, Inst, LaneEnv, LaneStack, OpKind, Program, Reg, Values, MAX_LOOP_DEPTH, NO_REG,
};

/// A set of registers r0..=r255 as a bit-vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegSet([u64; 4]);

impl RegSet {
    pub fn insert(&mut self, r: Reg) {
        self.0[(r >> 6) as usize] |= 1 << (r & 63);
    }
    pub fn remove(&mut self, r: Reg) {
        self.0[(r >> 6) as usize] &= !(1 << (r & 63));
    }
    pub fn contains(&self, r: Reg) -> bool {
        r != NO_REG && self.0[(r >> 6) as usize] >> (r & 63) & 1 == 1
    }
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
    pub fn intersects(&self, o: &RegSet) -> bool {
        (self.0[0] & o.0[0]) | (self.0[1] & o.0[1]) | (self.0[2] & o.0[2]) | (self.0[3] & o.0[3]) != 0
    }
    /// Registers set, lowest first (for diagnostics).
    pub fn iter(&self) -> impl Iterator<Item = Reg> + '_ {
        (0..=254u8).filter(|&r| self.contains(r))
    }
}

/// A fetched instruction waiting in the I-buffer, with the loop counters it was fetched under
/// (its addresses depend on them) and the active mask it runs with.
#[derive(Clone, Copy, Debug)]
pub struct IbufEntry {
    pub inst: Inst,
    /// Index of the instruction in its program (for event logs).
    pub pc: u32,
    pub loops: [u32; MAX_LOOP_DEPTH],
    /// Active lanes (the SIMT stack's top entry when it was fetched).
    pub mask: u32,
    /// The instruction's registers (destination and sources), for one-step scoreboard checks.
    pub regs: RegSet,
}

/// Maximum I-buffer depth the model supports.
pub const MAX_IBUF: usize = 8;

#[derive(Clone, Debug)]
pub struct Warp {
    /// The slot holds a launched, unfinished warp.
    pub active: bool,
    /// Launch order on this SM (GTO's "age").
    pub dyn_id: u64,
    /// CTA slot on the SM, and the CTA's index in the grid.
    pub cta_slot: u8,
    pub cta: u32,
    /// Thread index (within the CTA) of lane 0, and how many lanes hold threads.
    pub tid_base: u32,
    pub lanes: u32,
    /// Fetch state: the SIMT stack and loop counters.
    pub flow: Flow,
    /// Every lane has finished (the SIMT stack is empty): nothing more to fetch.
    pub fetch_done: bool,
    ibuf: [Option<IbufEntry>; MAX_IBUF],
    ib_head: u8,
    ib_len: u8,
    /// Waiting at a CTA barrier.
    pub at_barrier: bool,
    /// Registers with a write in flight (any producer).
    pub pending: RegSet,
    /// Registers whose write in flight comes from a global load (long latency).
    pub pending_global: RegSet,
    /// Stores sent below L1 and not yet acknowledged.
    pub stores_in_flight: u32,
    /// Instructions in the LD/ST unit or pipelines that have not yet written back.
    pub in_pipeline: u32,
    /// The warp's own program (kernels from traces); `None`: the kernel's program.
    pub program: Option<std::sync::Arc<Program>>,
    /// Operation and program index of the last instruction taken from the I-buffer.
    pub last_issued: OpKind,
    pub last_pc: u32,
    pub last_mask: u32,
    /// Per-lane register values that expressions read (kernels with data-dependent
    /// addresses or conditions), written as instructions issue; sized at launch by
    /// [`reset_values`](Self::reset_values), empty otherwise.
    pub values: Values,
}

impl Default for Warp {
    fn default() -> Self {
        Warp {
            active: false,
            dyn_id: 0,
            cta_slot: 0,
            cta: 0,
            tid_base: 0,
            lanes: 0,
            flow: Flow::default(),
            fetch_done: false,
            ibuf: [None; MAX_IBUF],
            ib_head: 0,
            ib_len: 0,
            at_barrier: false,
            pending: RegSet::default(),
            pending_global: RegSet::default(),
            stores_in_flight: 0,
            in_pipeline: 0,
            last_issued: OpKind::Barrier,
            last_pc: 0,
            last_mask: 0,
            program: None,
            values: Values::default(),
        }
    }
}

impl Warp {
    pub fn launch(&mut self, dyn_id: u64, cta_slot: u8, cta: u32, tid_base: u32, lanes: u32) {
        // The value file keeps its allocation from the slot's previous warp.
        let mut values = std::mem::take(&mut self.values);
        values.reset(0);
        *self = Warp {
            active: true,
            dyn_id,
            cta_slot,
            cta,
            tid_base,
            lanes,
            values,
            ..Warp::default()
        };
        self.flow.launch(lanes);
        self.fetch_done = self.flow.done();
    }

    /// Sizes the value file for a program of `slots` value slots, every value 0 (at launch;
    /// allocates only the first time a slot holds a warp with values).
    pub fn reset_values(&mut self, slots: u8) {
        self.values.reset(slots as usize);
    }

    /// The instruction `e` issues: if it writes a value (a value load, an integer op), its
    /// active lanes' values are computed now, in program order, so later addresses and
    /// conditions of this warp read them. Value loads read the buffers' initial contents.
    pub fn exec_values(
        &mut self,
        program: &Program,
        e: &IbufEntry,
        block: u32,
        grid: u32,
        buffers: &[Buffer],
    ) {
        let env = self.lane_env(e, block, grid);
        self.values
            .exec(program, &e.inst, e.pc, &env, self.lanes as usize, e.mask, buffers);
    }

    /// What the lanes of this warp's instruction `e` see: thread, CTA and loop counters.
    pub fn lane_env(&self, e: &IbufEntry, block: u32, grid: u32) -> LaneEnv {
        LaneEnv {
            tid: self.tid_base as i64,
            cta: self.cta as i64,
            block: block as i64,
            grid: grid as i64,
            loops: e.loops,
        }
    }

    /// The next instruction to issue, if the I-buffer holds one.
    pub fn head(&self) -> Option<&IbufEntry> {
        if self.ib_len == 0 {
            None
        } else {
            self.ibuf[self.ib_head as usize].as_ref()
        }
    }

    pub fn pop_head(&mut self) -> IbufEntry {
        let e = self.ibuf[self.ib_head as usize]
            .take()
            .expect("pop_head on an empty I-buffer");
        self.last_issued = e.inst.op;
        self.last_pc = e.pc;
        self.last_mask = e.mask;
        self.ib_head += 1;
        self.ib_len -= 1;
        e
    }

    pub fn ibuf_empty(&self) -> bool {
        self.ib_len == 0
    }

    /// Fetches up to `n` instructions into an empty I-buffer along the SIMT stack's top
    /// path, stepping over loop markers (they cost nothing and are not instructions). Fetch
    /// stops after a branch: what follows depends on how it resolves when it issues
    /// ([`resolve_branch`](Self::resolve_branch)).
    pub fn fetch(&mut self, program: &Program, n: usize) {
        debug_assert!(self.ib_len == 0);
        self.ib_head = 0;
        while (self.ib_len as usize) < n {
            let Some(f) = self.flow.next(program) else {
                break;
            };
            let inst = f.inst;
            let mut regs = RegSet::default();
            for r in inst.src.into_iter().chain([inst.dst]).filter(|&r| r != NO_REG) {
                regs.insert(r);
            }
            self.ibuf[self.ib_len as usize] = Some(IbufEntry {
                inst,
                pc: f.pc,
                loops: f.loops,
                // A traced instruction runs with the mask the trace recorded (its predicate
                // and the real SIMT stack's path), within the warp's lanes.
                mask: program
                    .lane_masks
                    .get(f.pc as usize)
                    .map_or(f.mask, |&m| m & f.mask),
                regs,
            });
            self.ib_len += 1;
            if inst.op == OpKind::Branch {
                break;
            }
        }
        self.fetch_done = self.flow.done();
    }

    /// The branch `e` issues: its lanes' conditions update the SIMT stack (GPGPU-Sim 3.2.2
    /// updates it at issue, shader.cc `shader_core_ctx::issue_warp` → `updateSIMTStack`).
    pub fn resolve_branch(
        &mut self,
        program: &Program,
        e: &IbufEntry,
        block: u32,
        grid: u32,
        stack: &mut LaneStack,
    ) {
        let env = LaneEnv {
            tid: self.tid_base as i64,
            cta: self.cta as i64,
            block: block as i64,
            grid: grid as i64,
            loops: e.loops,
        };
        self.flow
            .resolve_with(program, e.pc, &env, self.values.file(), stack);
        self.fetch_done = self.flow.done();
    }

    /// Whether `e` must wait on the scoreboard (RAW on a source, WAW on the destination).
    pub fn blocked_by_scoreboard(&self, e: &IbufEntry) -> bool {
        self.pending.intersects(&e.regs)
    }

    /// Whether `e` waits on a global load this warp already issued (MAS's hand-over test).
    pub fn depends_on_pending_load(&self, e: &IbufEntry) -> bool {
        self.pending_global.intersects(&e.regs)
    }

    /// Issued everything and nothing of it is still outstanding.
    pub fn is_done(&self) -> bool {
        self.fetch_done
            && self.ib_len == 0
            && self.pending.is_empty()
            && self.stores_in_flight == 0
            && self.in_pipeline == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::program::{AluKind, Item, MAX_EXPR_STACK, WARP_LANES};

    /// Scratch for a branch's condition over all lanes.
    fn scratch() -> LaneStack {
        [[0; WARP_LANES]; MAX_EXPR_STACK]
    }

    /// Fetch follows the SIMT stack: it stops after a branch, and each instruction carries
    /// the active mask of its path.
    #[test]
    fn fetch_stops_at_branches_and_carries_the_active_mask() {
        let k = crate::workload::kernel_format::parse_kernel(
            "kernel k\ngrid 1\nblock 32\nif lane < 8 {\n add r1, r1\n} else {\n add r2, r2\n \
             add r2, r2\n}\nadd r3, r3\n",
            "t.kern",
        )
        .unwrap();
        let mut w = Warp::default();
        w.launch(0, 0, 0, 0, 32);
        let mut seen = vec![];
        let mut fetches = 0;
        while !w.fetch_done || !w.ibuf_empty() {
            w.fetch(&k.program, 8);
            fetches += 1;
            while !w.ibuf_empty() {
                let e = w.pop_head();
                seen.push((e.inst.op, e.mask));
                if e.inst.op == OpKind::Branch {
                    assert!(w.ibuf_empty(), "nothing is fetched past a branch");
                    w.resolve_branch(&k.program, &e, k.block, k.grid, &mut scratch());
                }
            }
        }
        let alu = OpKind::Alu(AluKind::Simple);
        assert_eq!(
            seen,
            vec![
                (OpKind::Branch, u32::MAX),
                (alu, 0xFF),
                (OpKind::Branch, 0xFF),
                (alu, !0xFF),
                (alu, !0xFF),
                (alu, u32::MAX),
            ]
        );
        assert_eq!(fetches, 3);
        assert!(w.flow.done());
    }

    #[test]
    fn fetch_walks_nested_loops() {
        let alu = Item::Inst(Inst::new(OpKind::Alu(AluKind::Simple)));
        // loop 2 { alu; loop 3 { alu } }
        let program = Program {
            items: vec![
                Item::LoopStart { count: 2, end: 5 },
                alu,
                Item::LoopStart { count: 3, end: 4 },
                alu,
                Item::LoopEnd { start: 2 },
                Item::LoopEnd { start: 0 },
            ],
            exprs: vec![],
            branches: vec![],
            pcs: vec![],
            ..Default::default()
        };
        let mut w = Warp::default();
        w.launch(0, 0, 0, 0, 32);
        let mut loops = vec![];
        while !w.fetch_done || !w.ibuf_empty() {
            if w.ibuf_empty() {
                w.fetch(&program, 2);
            }
            while !w.ibuf_empty() {
                loops.push(w.pop_head().loops[..2].to_vec());
            }
        }
        assert_eq!(loops.len() as u64, program.dynamic_instructions());
        assert_eq!(loops.len(), 8);
        assert_eq!(loops[1], vec![0, 0]);
        assert_eq!(loops[3], vec![0, 2]);
        assert_eq!(loops[4][0], 1);
    }

    /// The value file: sized at launch, written at issue for the active lanes only, read by
    /// branch conditions; a relaunch starts from zeros without reallocating.
    #[test]
    fn values_are_written_at_issue_and_steer_branches() {
        let k = crate::workload::kernel_format::parse_kernel(
            "kernel k\ngrid 1\nblock 32\nmov r1, lane % 4\nif lane < 8 {\n mov r1, 9\n}\n\
             if r1 == 1 {\n add r2, r2\n}\n",
            "t.kern",
        )
        .unwrap();
        let mut w = Warp::default();
        w.launch(0, 0, 0, 0, 32);
        w.reset_values(k.program.value_slots);
        let mut masks = vec![];
        while !w.fetch_done || !w.ibuf_empty() {
            w.fetch(&k.program, 8);
            while !w.ibuf_empty() {
                let e = w.pop_head();
                masks.push(e.mask);
                if e.inst.op == OpKind::Branch {
                    w.resolve_branch(&k.program, &e, k.block, k.grid, &mut scratch());
                }
                w.exec_values(&k.program, &e, k.block, k.grid, &k.buffers);
            }
        }
        // r1 = 9 on lanes 0..8, lane % 4 elsewhere: the `then` block has lanes 9, 13, … 29.
        let ones: u32 = (8..32).filter(|l| l % 4 == 1).map(|l| 1u32 << l).sum();
        assert_eq!(masks, vec![u32::MAX, u32::MAX, 0xFF, u32::MAX, ones]);
        let row = w.values.file()[0];
        assert_eq!(row[..9], [9, 9, 9, 9, 9, 9, 9, 9, 0]);
        let ptr = w.values.file().as_ptr();
        w.launch(1, 0, 0, 0, 32);
        w.reset_values(k.program.value_slots);
        assert_eq!(w.values.file(), &[[0; 32]], "zeros after a relaunch");
        assert_eq!(w.values.file().as_ptr(), ptr, "the allocation is reused");
    }
}
