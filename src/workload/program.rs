//! The one instruction-stream type every workload source produces.
//!
//! A [`Kernel`] is a grid of CTAs that all run the same [`Program`]: a flat list of
//! [`Item`]s in which loops are zero-overhead markers handled by the fetch stage (they are
//! not warp instructions and are not counted). Addresses of memory instructions are
//! [`AddrExpr`]s evaluated per lane at issue time from the lane's thread/CTA indices and
//! the iteration counters of the enclosing loops.
//!
//! Divergent control flow is explicit: [`OpKind::Branch`] instructions whose targets and
//! reconvergence points are in [`Program::branches`], run by a per-warp [`SimtStack`] (after
//! GPGPU-Sim 3.2.2's `simt_stack`). [`Flow`] is a warp's control flow (SIMT stack and loop
//! counters); the fetch stage and [`Program::warp_counts`] both walk a program with it.

use serde::Serialize;

/// A register number. `NO_REG` marks an unused operand slot.
pub type Reg = u8;
pub const NO_REG: Reg = u8::MAX;
/// Highest usable register number (r0 ..= r254).
pub const MAX_REG: Reg = 254;
/// Deepest loop nesting a program may use (the fetch stage keeps one counter per level).
pub const MAX_LOOP_DEPTH: usize = 4;
/// Deepest nesting of divergent blocks (`if`/`else` and per-lane loops) a program may use.
pub const MAX_DIVERGENT_NESTING: usize = 8;
/// SIMT stack entries per warp. A divergent branch turns the top entry into a reconvergence
/// entry and pushes at most two paths, so each nesting level adds at most two entries above
/// the base entry. A per-lane loop pushes one path (its other path is its exit); a `break`
/// adds at most the loop's exit entry below it ([`SimtStack::break_out`]), still two.
pub const SIMT_STACK_CAPACITY: usize = 2 * MAX_DIVERGENT_NESTING + 1;
/// The reconvergence pc of the base SIMT stack entry: none.
pub const NO_PC: u32 = u32::MAX;
/// Longest address expression, in bytecode nodes.
pub const MAX_EXPR_NODES: usize = 32;

/// Which execution pipeline an instruction goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Pipe {
    Sp,
    Sfu,
    Mem,
}

/// Latency class of an SP instruction (latencies come from the config).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum AluKind {
    /// Ordinary integer / floating-point op (add, fma, mov, setp, ...).
    Simple,
    /// Integer multiply.
    IMul,
    /// Integer divide.
    IDiv,
    /// Double-precision add/sub (PTX `add.f64`). The five DP classes are GPGPU-Sim 3.2.2's
    /// (`cuda-sim.cc`, `ptx_instruction::set_opcode_and_latency`: an `F64_TYPE` op takes
    /// `-ptx_opcode_latency_dp` / `-ptx_opcode_initiation_dp` entry 0 ADD, 1 MAX/MIN, 2 MUL,
    /// 3 MAD, 4 DIV).
    DAdd,
    /// Double-precision min/max.
    DMinMax,
    /// Double-precision multiply. [design] 3.2.2 makes it `ALU_SFU_OP` (the SP pipe when its
    /// register is free, else the SFU); the model always sends it to the SP pipe.
    DMul,
    /// Double-precision fused multiply-add (`fma.f64`, `mad.f64`).
    DFma,
    /// Double-precision divide: runs on the SFU (3.2.2 makes every `DIV_OP` an `SFU_OP`).
    DDiv,
    /// A trace's `EXIT`: an SP op of latency 1. Accel-Sim's `trace_config::set_latency`
    /// (trace_driven.cc) leaves `EXIT_OPS` at its default latency and interval of 1, where
    /// the ALU, integer and branch classes take `-trace_opcode_latency_initiation_int`.
    Exit,
}

impl AluKind {
    /// Index into GPGPU-Sim's five-entry DP latency / initiation lists, for a DP class.
    pub fn dp_index(self) -> Option<usize> {
        match self {
            AluKind::DAdd => Some(0),
            AluKind::DMinMax => Some(1),
            AluKind::DMul => Some(2),
            AluKind::DFma => Some(3),
            AluKind::DDiv => Some(4),
            AluKind::Simple | AluKind::IMul | AluKind::IDiv | AluKind::Exit => None,
        }
    }
}

/// What an instruction does, as far as timing is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum OpKind {
    Alu(AluKind),
    Sfu,
    LoadGlobal,
    StoreGlobal,
    LoadShared,
    StoreShared,
    /// CTA-wide barrier (`bar.sync`).
    Barrier,
    /// A branch (`bra`): [`Inst::addr`] indexes [`Program::branches`]. It issues on the SP
    /// pipe like an ALU op without a destination, as GPGPU-Sim 3.2.2 times `BRANCH_OP`, and
    /// updates the warp's SIMT stack when it issues.
    Branch,
    /// A load through the texture cache (`ld.tex`): read-only data, as CUDA's `tex1Dfetch`.
    LoadTex,
    /// A load through the constant cache (`ld.const`): a `__constant__` array.
    LoadConst,
    /// A global atomic (`atom.global`, `red.global`): bypasses the L1D and is performed at
    /// the L2; its destination (if any) is a scoreboard dependency without a value.
    AtomGlobal,
}

impl OpKind {
    pub fn pipe(self) -> Pipe {
        match self {
            OpKind::Alu(AluKind::DDiv) | OpKind::Sfu => Pipe::Sfu,
            OpKind::Alu(_) | OpKind::Barrier | OpKind::Branch => Pipe::Sp,
            OpKind::LoadGlobal
            | OpKind::StoreGlobal
            | OpKind::LoadShared
            | OpKind::StoreShared
            | OpKind::LoadTex
            | OpKind::LoadConst
            | OpKind::AtomGlobal => Pipe::Mem,
        }
    }
    pub fn is_memory(self) -> bool {
        self.pipe() == Pipe::Mem
    }
    pub fn is_global(self) -> bool {
        matches!(
            self,
            OpKind::LoadGlobal | OpKind::StoreGlobal | OpKind::AtomGlobal
        )
    }
    /// A load through a read-only cache (texture or constant), not the L1D.
    pub fn is_read_only(self) -> bool {
        matches!(self, OpKind::LoadTex | OpKind::LoadConst)
    }
    /// A load whose value comes from a buffer (global, texture or constant space).
    pub fn loads_buffer(self) -> bool {
        matches!(self, OpKind::LoadGlobal | OpKind::LoadTex | OpKind::LoadConst)
    }
}

/// One warp instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Inst {
    pub op: OpKind,
    /// Destination register, or `NO_REG`.
    pub dst: Reg,
    /// Source registers; unused slots are `NO_REG`.
    pub src: [Reg; 3],
    /// A traced instruction reads RZ (SASS R255), which no write makes pending but which the
    /// operand collector reads from its bank like any register (Accel-Sim numbers it 256:
    /// `trace_warp_inst_t::parse_from_trace_struct` adds 1 to every source).
    pub reads_rz: bool,
    /// Index into [`Program::exprs`] for memory instructions, into [`Program::branches`] for
    /// branches.
    pub addr: u16,
    /// Bytes accessed per lane (1, 2, 4, 8 or 16) for memory instructions.
    pub width: u8,
}

impl Inst {
    pub fn new(op: OpKind) -> Self {
        Inst {
            op,
            dst: NO_REG,
            src: [NO_REG; 3],
            reads_rz: false,
            addr: 0,
            width: 4,
        }
    }
}

/// A program element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Item {
    Inst(Inst),
    /// Start of a loop of `count` iterations whose matching `LoopEnd` is at index `end`.
    /// With `count == 0` the body is skipped.
    LoopStart {
        count: u32,
        end: u32,
    },
    /// End of the loop whose `LoopStart` is at index `start`.
    LoopEnd {
        start: u32,
    },
}

/// Where a branch instruction sends its lanes (see [`OpKind::Branch`]). Lanes for which the
/// branch is taken go to `target`, the others to the next item; the paths reconverge at
/// `reconv`, the branch's immediate post-dominator (for the structured blocks of the kernel
/// format it is known statically: the item after the block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Branch {
    pub kind: BranchKind,
    pub target: u32,
    pub reconv: u32,
}

/// The condition of a [`Branch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BranchKind {
    /// Taken by every active lane (`bra.uni`: the jump over an `else` block).
    Always,
    /// Taken by the lanes where the expression `exprs[cond]` is 0 (an `if` whose condition is
    /// false skips the `then` block).
    IfNot { cond: u16 },
    /// Entry of a per-lane loop at nesting `depth`: each active lane's trip count is
    /// `exprs[count]` (clamped to 0 ..= 2³²−1); lanes with a count of 0 are taken (skip the
    /// loop).
    LoopEnter { count: u16, depth: u8 },
    /// Back edge of the per-lane loop at nesting `depth`: the iteration counter steps, and
    /// the lanes whose trip count is not reached yet are taken (back to the body).
    LoopBack { depth: u8 },
    /// `break` out of the innermost per-lane loop (nesting `depth`, body from item `start`,
    /// `target` = `reconv` = the item after its back edge): the lanes where `exprs[cond]` is
    /// not 0 (every active lane when `cond` is `None`) leave the loop and wait at its exit
    /// for the others (a predicated `bra` to the exit; Fermi's `@P BRK`).
    Break {
        cond: Option<u16>,
        depth: u8,
        start: u32,
    },
}

/// One SIMT stack entry: the next pc of its lanes, where they reconverge with the entry
/// below, and which lanes they are (GPGPU-Sim 3.2.2 `simt_stack_entry`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimtEntry {
    pub pc: u32,
    pub rpc: u32,
    pub mask: u32,
}

/// A warp's SIMT reconvergence stack, after GPGPU-Sim 3.2.2 `simt_stack`
/// (abstract_hardware_model.cc): the top entry's pc and mask are the warp's next pc and
/// active mask. Fixed capacity, no allocation.
#[derive(Clone, Debug, Default)]
pub struct SimtStack {
    entries: [SimtEntry; SIMT_STACK_CAPACITY],
    len: u8,
}

impl SimtStack {
    /// One entry at pc 0 with `mask` active (`simt_stack::launch`); empty if no lane is.
    pub fn launch(&mut self, mask: u32) {
        self.entries[0] = SimtEntry {
            pc: 0,
            rpc: NO_PC,
            mask,
        };
        self.len = (mask != 0) as u8;
    }

    pub fn top(&self) -> Option<SimtEntry> {
        self.len.checked_sub(1).map(|i| self.entries[i as usize])
    }

    pub fn depth(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries, bottom first.
    pub fn entries(&self) -> &[SimtEntry] {
        &self.entries[..self.len as usize]
    }

    /// Pops entries whose lanes reached their reconvergence pc, or walked past the program's
    /// `end` (those lanes have exited).
    fn settle(&mut self, end: u32) {
        while let Some(t) = self.top() {
            if t.pc == t.rpc || t.pc >= end {
                self.len -= 1;
            } else {
                break;
            }
        }
    }

    /// Every active lane goes on to `next` (any instruction but a branch, or a loop marker).
    /// Reaching the top entry's reconvergence pc pops it (`simt_stack::update` with one group
    /// whose next pc is the entry's `m_recvg_pc`).
    pub fn advance(&mut self, next: u32, end: u32) {
        if let Some(i) = self.len.checked_sub(1) {
            self.entries[i as usize].pc = next;
            self.settle(end);
        }
    }

    /// A `break`: the lanes `lanes` of the top entry leave the per-lane loop whose body is
    /// items `start .. exit` and wait at `exit`, its reconvergence point, until every lane has
    /// left the loop; the others go on to `next`. They are removed from every entry of the
    /// loop (the top run of entries whose pc is in the body: the loop's own entry, the paths
    /// of `if`s inside it and their reconvergence entries) and stay in the entry that waits
    /// at `exit`. When there is none yet (no lane has skipped or left the loop so far: it was
    /// entered, and iterated, by all its lanes together), the loop's entry becomes it and its
    /// lanes go on in a new entry above, as a divergent back edge would do. That adds at most
    /// one entry per loop, within the two per divergent level the capacity allows (see
    /// [`SIMT_STACK_CAPACITY`]). Fixed capacity, no allocation.
    pub fn break_out(&mut self, lanes: u32, next: u32, start: u32, exit: u32, end: u32) {
        let Some(top) = self.top() else {
            return;
        };
        let lanes = lanes & top.mask;
        self.entries[self.len as usize - 1].pc = next;
        if lanes == 0 {
            self.settle(end);
            return;
        }
        let in_body = |e: &SimtEntry| (start..exit).contains(&e.pc);
        let mut k = self.len as usize - 1;
        while k > 0 && in_body(&self.entries[k - 1]) {
            k -= 1;
        }
        if self.entries[k].rpc != exit {
            let len = self.len as usize;
            debug_assert!(len < SIMT_STACK_CAPACITY, "validated nesting bounds the stack");
            self.entries.copy_within(k..len, k + 1);
            self.entries[k] = SimtEntry {
                pc: exit,
                ..self.entries[k + 1]
            };
            self.entries[k + 1].rpc = exit;
            self.len += 1;
            k += 1;
        }
        // Entries above a reconvergence entry hold subsets of its lanes, so the entries
        // emptied here are a top run; compacting keeps the order either way.
        let mut w = k;
        for r in k..self.len as usize {
            let mut e = self.entries[r];
            e.mask &= !lanes;
            if e.mask != 0 {
                self.entries[w] = e;
                w += 1;
            }
        }
        self.len = w as u8;
        self.settle(end);
    }

    /// A branch: the active lanes in `taken` go to `target`, the others to `fallthrough`;
    /// diverged paths reconverge at `reconv`. This is GPGPU-Sim 3.2.2's
    /// `simt_stack::update` for two groups of lanes: a group whose next pc is the top
    /// entry's reconvergence pc is dropped (its lanes wait in the entry below); on divergence
    /// the top entry becomes the reconvergence entry (pc = `reconv`, unless that is the top's
    /// own reconvergence pc) and each path is pushed, the group holding the highest active
    /// lane first, so the other path runs first.
    pub fn branch(&mut self, taken: u32, target: u32, fallthrough: u32, reconv: u32, end: u32) {
        let Some(top) = self.top() else {
            return;
        };
        let taken = taken & top.mask;
        let fall = top.mask & !taken;
        let high = 31 - top.mask.leading_zeros();
        let groups = if taken >> high & 1 == 1 {
            [(taken, target), (fall, fallthrough)]
        } else {
            [(fall, fallthrough), (taken, target)]
        };
        let mut cur = self.len as usize - 1;
        let mut diverged = false;
        for (k, &(mask, pc)) in groups.iter().enumerate() {
            if mask == 0 || pc == top.rpc {
                continue;
            }
            if k == 0 && groups[1].0 != 0 && !diverged {
                diverged = true;
                if reconv != top.rpc {
                    self.entries[cur].pc = reconv;
                    cur += 1;
                }
            }
            if diverged && pc == reconv {
                continue;
            }
            self.entries[cur] = SimtEntry {
                pc,
                rpc: if diverged { reconv } else { top.rpc },
                mask,
            };
            cur += 1;
        }
        self.len = cur as u8;
        self.settle(end);
    }
}

/// An instruction handed out by [`Flow::next`], with the loop counters and active mask it
/// runs under.
#[derive(Clone, Copy, Debug)]
pub struct Fetched {
    pub inst: Inst,
    /// Its index in the program.
    pub pc: u32,
    pub loops: [u32; MAX_LOOP_DEPTH],
    pub mask: u32,
}

/// A warp's control flow through a [`Program`]: the SIMT stack, the loop counters and each
/// lane's trip count of the per-lane loops it is in. Loop markers are stepped over for free;
/// branches are handed out and resolved by [`Flow::resolve`] when they issue.
#[derive(Clone, Debug, Default)]
pub struct Flow {
    pub stack: SimtStack,
    depth: u8,
    iter: [u32; MAX_LOOP_DEPTH],
    /// Per loop depth and lane: the trip count of a per-lane loop.
    counts: [[u32; WARP_LANES]; MAX_LOOP_DEPTH],
    /// A branch was handed out and is not resolved yet: nothing more to fetch until it is.
    pending_branch: bool,
}

impl Flow {
    /// Starts a warp of `lanes` threads at pc 0.
    pub fn launch(&mut self, lanes: u32) {
        *self = Flow::default();
        let mask = if lanes >= 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        };
        self.stack.launch(mask);
    }

    /// Every lane has finished.
    pub fn done(&self) -> bool {
        self.stack.is_empty()
    }

    /// Waiting for a fetched branch to issue.
    pub fn at_branch(&self) -> bool {
        self.pending_branch
    }

    /// The next instruction of the top entry's path, stepping over loop markers; `None` when
    /// the warp has finished or waits for its last branch to resolve.
    pub fn next(&mut self, program: &Program) -> Option<Fetched> {
        if self.pending_branch {
            return None;
        }
        let items = &program.items;
        let end = items.len() as u32;
        self.stack.settle(end);
        loop {
            let top = self.stack.top()?;
            let pc = top.pc;
            match items[pc as usize] {
                Item::Inst(inst) => {
                    if inst.op == OpKind::Branch {
                        self.pending_branch = true;
                    } else {
                        self.stack.advance(pc + 1, end);
                    }
                    return Some(Fetched {
                        inst,
                        pc,
                        loops: self.iter,
                        mask: top.mask,
                    });
                }
                Item::LoopStart { count, end: e } => {
                    if count == 0 {
                        self.stack.advance(e + 1, end);
                    } else {
                        self.iter[self.depth as usize] = 0;
                        self.depth += 1;
                        self.stack.advance(pc + 1, end);
                    }
                }
                Item::LoopEnd { start } => {
                    let d = self.depth as usize - 1;
                    self.iter[d] += 1;
                    let Item::LoopStart { count, .. } = items[start as usize] else {
                        unreachable!("validated: LoopEnd points at its LoopStart")
                    };
                    if self.iter[d] < count {
                        self.stack.advance(start + 1, end);
                    } else {
                        self.depth -= 1;
                        self.stack.advance(pc + 1, end);
                    }
                }
            }
        }
    }

    /// Resolves the branch at `pc` (handed out by [`next`](Self::next)) for the top entry's
    /// lanes, `env` being lane 0's values; returns the lanes for which it was taken.
    pub fn resolve(&mut self, program: &Program, pc: u32, env: &LaneEnv) -> u32 {
        self.resolve_in(program, pc, env, &[])
    }

    /// [`resolve`](Self::resolve) for a warp whose register values are `values` (conditions
    /// and trip counts may read registers).
    pub fn resolve_in(
        &mut self,
        program: &Program,
        pc: u32,
        env: &LaneEnv,
        values: &[[i64; WARP_LANES]],
    ) -> u32 {
        let mut stack: LaneStack = [[0; WARP_LANES]; MAX_EXPR_STACK];
        self.resolve_with(program, pc, env, values, &mut stack)
    }

    /// [`resolve_in`](Self::resolve_in) with scratch space for the branch's expression,
    /// which is evaluated for all 32 lanes in one pass ([`AddrExpr::eval_lanes_in`]; the
    /// inactive lanes' values are not used).
    pub fn resolve_with(
        &mut self,
        program: &Program,
        pc: u32,
        env: &LaneEnv,
        values: &[[i64; WARP_LANES]],
        stack: &mut LaneStack,
    ) -> u32 {
        self.pending_branch = false;
        let Some(top) = self.stack.top() else {
            return 0;
        };
        let Some(&Item::Inst(inst)) = program.items.get(pc as usize) else {
            return 0;
        };
        let b = program.branches[inst.addr as usize];
        // Every lane's value of expression `e`, with this flow's loop counters.
        // (A recorded per-lane table is an address, not a condition: such an expression is
        // evaluated from its nodes, as `eval_in` does.)
        let mut values_of = |e: &AddrExpr, loops| {
            let env = LaneEnv { loops, ..*env };
            let mut out = [0u64; WARP_LANES];
            if e.lanes.is_some() {
                for (l, o) in out.iter_mut().enumerate() {
                    let lane = LaneEnv {
                        tid: env.tid + l as i64,
                        ..env
                    };
                    *o = e.eval_in(&lane, values, l);
                }
            } else {
                e.eval_lanes_in(&env, values, WARP_LANES, stack, &mut out);
            }
            out
        };
        let lanes = || (0..32u32).filter(move |l| top.mask >> l & 1 == 1);
        let mut taken = 0u32;
        match b.kind {
            BranchKind::Always => taken = top.mask,
            BranchKind::IfNot { cond } => {
                let e = &program.exprs[cond as usize];
                let v = values_of(e, self.iter);
                for l in lanes() {
                    if v[l as usize] == e.base {
                        taken |= 1 << l;
                    }
                }
            }
            BranchKind::LoopEnter { count, depth } => {
                let e = &program.exprs[count as usize];
                let d = depth as usize;
                let v = values_of(e, self.iter);
                for l in lanes() {
                    let n = (v[l as usize].wrapping_sub(e.base) as i64).clamp(0, u32::MAX as i64);
                    self.counts[d][l as usize] = n as u32;
                    if n == 0 {
                        taken |= 1 << l;
                    }
                }
                if taken != top.mask {
                    self.iter[d] = 0;
                    self.depth = depth + 1;
                }
            }
            BranchKind::LoopBack { depth } => {
                let d = depth as usize;
                self.iter[d] += 1;
                for l in lanes() {
                    if self.iter[d] < self.counts[d][l as usize] {
                        taken |= 1 << l;
                    }
                }
                if taken == 0 {
                    self.depth = depth;
                }
            }
            BranchKind::Break { cond, depth, start } => {
                match cond {
                    None => taken = top.mask,
                    Some(c) => {
                        let e = &program.exprs[c as usize];
                        let v = values_of(e, self.iter);
                        for l in lanes() {
                            if v[l as usize] != e.base {
                                taken |= 1 << l;
                            }
                        }
                    }
                }
                self.stack
                    .break_out(taken, pc + 1, start, b.target, program.items.len() as u32);
                // Every lane has left the loop (the rest of the warp runs outside it).
                if !self
                    .stack
                    .top()
                    .is_some_and(|t| (start..b.target).contains(&t.pc))
                {
                    self.depth = depth;
                }
                return taken;
            }
        }
        self.stack
            .branch(taken, b.target, pc + 1, b.reconv, program.items.len() as u32);
        taken
    }
}

/// Instructions one warp executes: warp instructions, and thread instructions (active lanes
/// summed over them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpCounts {
    pub warp: u64,
    pub thread: u64,
}

/// A per-lane value an address expression can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Var {
    /// Thread index within the CTA (0 .. block).
    Tid,
    /// Lane within the warp (0 .. 32).
    Lane,
    /// Warp index within the CTA.
    Warp,
    /// CTA index within the grid.
    Cta,
    /// Global thread id: cta * block + tid.
    Gtid,
    /// Global warp id: gtid / 32.
    Gwarp,
    /// Threads per CTA.
    Block,
    /// CTAs in the grid.
    Grid,
    /// Threads in the grid (grid * block).
    Gthreads,
    /// Iteration counter (0-based) of the enclosing loop at this nesting depth (0 = outermost).
    Loop(u8),
    /// The lane's value of a register, kept in this slot of the warp's value file
    /// ([`Values`]); see [`Program::values`]. (While the kernel format's parser builds an
    /// expression it holds the register number; lowering renumbers it to the slot.)
    Reg(u8),
}

/// One node of an address expression in postfix (stack) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ExprNode {
    Const(i64),
    Var(Var),
    Add,
    Sub,
    Mul,
    /// Integer division; division by zero yields 0 (the parser rejects literal zero divisors).
    Div,
    /// Euclidean remainder; modulo zero yields 0.
    Rem,
    Xor,
    /// Comparisons (branch conditions): 1 when `a OP b` holds, else 0.
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    /// `rand(seed, n)`: pops `n` then `seed`, pushes a deterministic pseudo-random number in
    /// `0 .. n` that depends on the seed, the global thread id and every loop counter. Used to
    /// model irregular gathers.
    Rand,
}

impl ExprNode {
    /// An operator (pops two values), not an operand.
    pub fn is_operator(&self) -> bool {
        !matches!(self, ExprNode::Const(_) | ExprNode::Var(_))
    }
}

/// A compiled address expression: `base + value(nodes)` bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AddrExpr {
    /// Base address of the buffer the expression indexes (0 for shared memory).
    pub base: u64,
    pub nodes: Vec<ExprNode>,
    /// Explicit per-lane addresses instead of `base + nodes` (kernels from traces, whose
    /// addresses were recorded); [`INACTIVE_LANE`] marks a lane that does not access.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes: Option<Box<[u64; WARP_LANES]>>,
}

/// In [`AddrExpr::lanes`]: the lane is inactive (masked off in the trace).
pub const INACTIVE_LANE: u64 = u64::MAX;

/// Per-lane values that [`AddrExpr::eval`] reads (register values come separately: see
/// [`AddrExpr::eval_in`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct LaneEnv {
    pub tid: i64,
    pub cta: i64,
    pub block: i64,
    pub grid: i64,
    pub loops: [u32; MAX_LOOP_DEPTH],
}

/// SplitMix64 finaliser: a cheap, well-mixed, deterministic hash.
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The part of `rand` that is the same for every lane of a warp: the loop counters.
fn loops_hash(loops: &[u32; MAX_LOOP_DEPTH]) -> u64 {
    loops.iter().fold(0x5EED, |h, &l| mix64(h ^ l as u64))
}

/// `rand(seed, n)` for one thread: a value in `0 .. n` (n > 0).
fn rand_value(seed: i64, n: i64, loops: u64, gtid: u64) -> i64 {
    let h = mix64(mix64(seed as u64 ^ loops) ^ gtid);
    (h % n as u64) as i64
}

/// Operator node `op` applied lane by lane: `a[l] = a[l] op b[l]` (`env` and lane 0's global
/// thread id `gtid0` for `rand`).
fn apply_lanes(op: ExprNode, a: &mut [i64; WARP_LANES], b: &[i64; WARP_LANES], env: &LaneEnv, gtid0: i64) {
    let each = |a: &mut [i64; WARP_LANES], f: fn(i64, i64) -> i64| {
        for (x, &y) in a.iter_mut().zip(b) {
            *x = f(*x, y);
        }
    };
    match op {
        ExprNode::Add => each(a, i64::wrapping_add),
        ExprNode::Sub => each(a, i64::wrapping_sub),
        ExprNode::Mul => each(a, i64::wrapping_mul),
        ExprNode::Div => each(a, |x, y| x.checked_div(y).unwrap_or(0)),
        ExprNode::Rem => each(a, |x, y| x.checked_rem_euclid(y).unwrap_or(0)),
        ExprNode::Xor => each(a, |x, y| x ^ y),
        ExprNode::Lt => each(a, |x, y| (x < y) as i64),
        ExprNode::Le => each(a, |x, y| (x <= y) as i64),
        ExprNode::Gt => each(a, |x, y| (x > y) as i64),
        ExprNode::Ge => each(a, |x, y| (x >= y) as i64),
        ExprNode::Eq => each(a, |x, y| (x == y) as i64),
        ExprNode::Ne => each(a, |x, y| (x != y) as i64),
        ExprNode::Rand => {
            let lh = loops_hash(&env.loops);
            for (l, (x, &n)) in a.iter_mut().zip(b).enumerate() {
                *x = if n <= 0 {
                    0
                } else {
                    rand_value(*x, n, lh, (gtid0 + l as i64) as u64)
                };
            }
        }
        ExprNode::Const(_) | ExprNode::Var(_) => unreachable!("not an operator"),
    }
}

/// [`apply_lanes`] with the same `b` in every lane; a power-of-two divisor divides by
/// shifting (the same quotient and Euclidean remainder as the division instruction).
fn apply_scalar(op: ExprNode, a: &mut [i64; WARP_LANES], b: i64, env: &LaneEnv, gtid0: i64) {
    match op {
        ExprNode::Div if b > 0 && (b as u64).is_power_of_two() => {
            let k = b.trailing_zeros();
            // Rounds toward zero: a negative dividend is biased by b - 1 first.
            a.iter_mut().for_each(|x| *x = (*x + (*x >> 63 & (b - 1))) >> k);
        }
        ExprNode::Rem if b > 0 && (b as u64).is_power_of_two() => a.iter_mut().for_each(|x| *x &= b - 1),
        _ => apply_lanes(op, a, &[b; WARP_LANES], env, gtid0),
    }
}

/// A comparison node applied to `a` and `b`: 1 or 0 (other nodes give 0).
pub fn compare(op: ExprNode, a: i64, b: i64) -> i64 {
    let r = match op {
        ExprNode::Lt => a < b,
        ExprNode::Le => a <= b,
        ExprNode::Gt => a > b,
        ExprNode::Ge => a >= b,
        ExprNode::Eq => a == b,
        ExprNode::Ne => a != b,
        _ => false,
    };
    r as i64
}

/// Deepest evaluation stack an address expression may need.
pub const MAX_EXPR_STACK: usize = 16;
/// Lanes per warp.
pub const WARP_LANES: usize = 32;

/// Scratch space for [`AddrExpr::eval_lanes`]: one stack slot holds a value per lane.
pub type LaneStack = [[i64; WARP_LANES]; MAX_EXPR_STACK];

impl AddrExpr {
    /// Evaluates the expression for lanes `0..lanes` of a warp whose lane 0 is thread
    /// `env.tid`, all at once (one pass over the bytecode, a tight loop per node), writing
    /// `out[lane]`. Gives the same values as [`eval`](Self::eval) lane by lane.
    pub fn eval_lanes(
        &self,
        env: &LaneEnv,
        lanes: usize,
        stack: &mut LaneStack,
        out: &mut [u64; WARP_LANES],
    ) {
        self.eval_lanes_in(env, &[], lanes, stack, out)
    }

    /// [`eval_lanes`](Self::eval_lanes) with the warp's register values: `Var::Reg(s)` reads
    /// `values[s][lane]` (0 for a slot the file does not have).
    pub fn eval_lanes_in(
        &self,
        env: &LaneEnv,
        values: &[[i64; WARP_LANES]],
        lanes: usize,
        stack: &mut LaneStack,
        out: &mut [u64; WARP_LANES],
    ) {
        let lanes = lanes.min(WARP_LANES);
        if let Some(table) = &self.lanes {
            out[..lanes].copy_from_slice(&table[..lanes]);
            return;
        }
        // Every node works on all 32 lanes (fixed-width loops, no variable-length copies);
        // a lane's value depends on that lane alone and only the first `lanes` are written
        // out, so the extra lanes change nothing.
        let gtid0 = env.cta * env.block + env.tid;
        fn lane_values(f: impl Fn(i64) -> i64, slot: &mut [i64; WARP_LANES]) {
            for (l, x) in slot.iter_mut().enumerate() {
                *x = f(l as i64);
            }
        }
        let nodes = &self.nodes;
        let mut sp = 0usize;
        let mut i = 0;
        while i < nodes.len() {
            let node = nodes[i];
            i += 1;
            // A constant or register operand that the next node combines at once is read
            // where it is, not copied onto the stack first.
            if sp > 0 {
                if let Some(&op) = nodes.get(i).filter(|n| n.is_operator()) {
                    let a = &mut stack[sp - 1];
                    match node {
                        ExprNode::Const(c) => {
                            apply_scalar(op, a, c, env, gtid0);
                            i += 1;
                            continue;
                        }
                        ExprNode::Var(Var::Reg(r)) if (r as usize) < values.len() => {
                            apply_lanes(op, a, &values[r as usize], env, gtid0);
                            i += 1;
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            match node {
                ExprNode::Const(c) => {
                    stack[sp] = [c; WARP_LANES];
                    sp += 1;
                }
                ExprNode::Var(v) => {
                    let slot = &mut stack[sp];
                    match v {
                        Var::Tid => lane_values(|l| env.tid + l, slot),
                        Var::Lane => lane_values(|l| (env.tid + l) & 31, slot),
                        Var::Warp => lane_values(|l| (env.tid + l) >> 5, slot),
                        Var::Gtid => lane_values(|l| gtid0 + l, slot),
                        Var::Gwarp => lane_values(|l| (gtid0 + l) >> 5, slot),
                        Var::Cta => *slot = [env.cta; WARP_LANES],
                        Var::Block => *slot = [env.block; WARP_LANES],
                        Var::Grid => *slot = [env.grid; WARP_LANES],
                        Var::Gthreads => *slot = [env.grid * env.block; WARP_LANES],
                        Var::Loop(d) => *slot = [env.loops[d as usize] as i64; WARP_LANES],
                        Var::Reg(r) => *slot = values.get(r as usize).copied().unwrap_or([0; WARP_LANES]),
                    }
                    sp += 1;
                }
                op => {
                    sp -= 1;
                    let (lo, hi) = stack.split_at_mut(sp);
                    apply_lanes(op, &mut lo[sp - 1], &hi[0], env, gtid0);
                }
            }
        }
        for (o, &v) in out[..lanes].iter_mut().zip(&stack[0]) {
            *o = self.base.wrapping_add(v as u64);
        }
    }

    /// Evaluates the expression for one lane. Arithmetic wraps; the result is an address.
    pub fn eval(&self, env: &LaneEnv) -> u64 {
        self.eval_in(env, &[], 0)
    }

    /// [`eval`](Self::eval) for lane `lane` of a warp whose register values are `values`.
    pub fn eval_in(&self, env: &LaneEnv, values: &[[i64; WARP_LANES]], lane: usize) -> u64 {
        let mut stack = [0i64; MAX_EXPR_NODES];
        let mut sp = 0usize;
        for node in &self.nodes {
            let v = match *node {
                ExprNode::Const(c) => c,
                ExprNode::Var(v) => match v {
                    Var::Tid => env.tid,
                    Var::Lane => env.tid & 31,
                    Var::Warp => env.tid >> 5,
                    Var::Cta => env.cta,
                    Var::Gtid => env.cta * env.block + env.tid,
                    Var::Gwarp => (env.cta * env.block + env.tid) >> 5,
                    Var::Block => env.block,
                    Var::Grid => env.grid,
                    Var::Gthreads => env.grid * env.block,
                    Var::Loop(d) => env.loops[d as usize] as i64,
                    Var::Reg(r) => values.get(r as usize).map_or(0, |v| v[lane % WARP_LANES]),
                },
                op => {
                    sp -= 1;
                    let b = stack[sp];
                    sp -= 1;
                    let a = stack[sp];
                    match op {
                        ExprNode::Add => a.wrapping_add(b),
                        ExprNode::Sub => a.wrapping_sub(b),
                        ExprNode::Mul => a.wrapping_mul(b),
                        ExprNode::Div => a.checked_div(b).unwrap_or(0),
                        ExprNode::Rem => a.checked_rem_euclid(b).unwrap_or(0),
                        ExprNode::Xor => a ^ b,
                        ExprNode::Lt
                        | ExprNode::Le
                        | ExprNode::Gt
                        | ExprNode::Ge
                        | ExprNode::Eq
                        | ExprNode::Ne => compare(op, a, b),
                        ExprNode::Rand => {
                            if b <= 0 {
                                0
                            } else {
                                let gtid = (env.cta * env.block + env.tid) as u64;
                                rand_value(a, b, loops_hash(&env.loops), gtid)
                            }
                        }
                        _ => unreachable!("operands handled above"),
                    }
                }
            };
            stack[sp] = v;
            sp += 1;
        }
        self.base.wrapping_add(stack[0] as u64)
    }

    /// Checks that the postfix sequence is well formed (one value left, no underflow, fits
    /// the evaluation stack). The parser only builds valid expressions; this guards other
    /// producers.
    pub fn validate(&self) -> Result<(), String> {
        if self.lanes.is_some() {
            return Ok(());
        }
        if self.nodes.len() > MAX_EXPR_NODES {
            return Err(format!("address expression longer than {MAX_EXPR_NODES} nodes"));
        }
        let mut depth = 0i32;
        for n in &self.nodes {
            depth += match n {
                ExprNode::Const(_) | ExprNode::Var(_) => 1,
                _ => -1,
            };
            if depth < 1 {
                return Err("malformed address expression".into());
            }
            if depth as usize > MAX_EXPR_STACK {
                return Err(format!(
                    "address expression needs more than {MAX_EXPR_STACK} stack slots"
                ));
            }
        }
        if depth != 1 {
            return Err("malformed address expression".into());
        }
        Ok(())
    }
}

/// Most value slots (registers whose values expressions read) a program may use.
pub const MAX_VALUE_SLOTS: usize = 16;

/// An integer operation on per-lane values (`add r3, r1, r2` in the kernel format). Every
/// operation is on 64-bit signed integers and wraps, except the conversions, which read the
/// low 32 bits of their source as an `f32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    /// `a << (b & 63)`.
    Shl,
    /// Arithmetic shift right: `a >> (b & 63)`, the sign kept.
    Shr,
    And,
    Or,
    Xor,
    Min,
    Max,
    /// `a` (the second operand is ignored).
    Mov,
    /// `setp.CMP`: 1 when `a CMP b` holds, else 0.
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    /// `cvt.rzi.s32.f32`: the low 32 bits of `a` as an IEEE `f32`, truncated toward zero to
    /// an `i32`; out-of-range values saturate to `i32::MIN ..= i32::MAX` and NaN gives 0 (PTX
    /// ISA, `cvt`: float-to-integer conversions clamp to the destination range by default).
    /// Unary like `Mov`: `b` is ignored.
    CvtRziS32F32,
    /// `cvt.rzi.u32.f32`: as [`CvtRziS32F32`](Self::CvtRziS32F32) into `0 ..= u32::MAX`, so
    /// negative values give 0; the result is never negative.
    CvtRziU32F32,
}

impl IntOp {
    /// Sources the operation reads: 1 for `Mov` and the conversions, else 2.
    pub fn arity(self) -> usize {
        match self {
            IntOp::Mov | IntOp::CvtRziS32F32 | IntOp::CvtRziU32F32 => 1,
            _ => 2,
        }
    }

    pub fn apply(self, a: i64, b: i64) -> i64 {
        match self {
            IntOp::Add => a.wrapping_add(b),
            IntOp::Sub => a.wrapping_sub(b),
            IntOp::Mul => a.wrapping_mul(b),
            IntOp::Shl => a.wrapping_shl((b & 63) as u32),
            IntOp::Shr => a.wrapping_shr((b & 63) as u32),
            IntOp::And => a & b,
            IntOp::Or => a | b,
            IntOp::Xor => a ^ b,
            IntOp::Min => a.min(b),
            IntOp::Max => a.max(b),
            IntOp::Mov => a,
            IntOp::Lt => (a < b) as i64,
            IntOp::Le => (a <= b) as i64,
            IntOp::Gt => (a > b) as i64,
            IntOp::Ge => (a >= b) as i64,
            IntOp::Eq => (a == b) as i64,
            IntOp::Ne => (a != b) as i64,
            // Rust's float-to-integer `as` truncates toward zero, saturates and maps NaN to
            // 0: exactly `cvt.rzi` with its default clamping.
            IntOp::CvtRziS32F32 => f32::from_bits(a as u32) as i32 as i64,
            IntOp::CvtRziU32F32 => f32::from_bits(a as u32) as u32 as i64,
        }
    }
}

/// A source of an [`IntOp`]: a value slot, or a per-lane expression (`exprs[i]`, base 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Operand {
    Slot(u8),
    Expr(u16),
}

/// How a [`ValueOp`] computes its lanes' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ValueKind {
    /// A global load: the `width` bytes (1, 2, 4 or 8) at each lane's address (the load's
    /// own expression, `exprs[inst.addr]`) in the *initial* contents of `Kernel::buffers
    /// [buffer]`, little-endian and sign-extended. An access not wholly inside the contents
    /// reads 0.
    Load {
        buffer: u16,
        width: u8,
    },
    Int {
        op: IntOp,
        a: Operand,
        b: Operand,
    },
}

/// The value an instruction writes: the instruction at item `pc` writes slot `slot` of its
/// warp's value file, for its active lanes, when it issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ValueOp {
    pub pc: u32,
    pub slot: u8,
    pub kind: ValueKind,
}

/// A warp's value file: [`Program::value_slots`] rows of one `i64` per lane, followed by
/// the scratch stack for evaluating expressions over all lanes. Sized when a warp launches
/// ([`reset`](Self::reset)); it keeps its capacity, so later launches do not allocate.
#[derive(Clone, Debug, Default)]
pub struct Values {
    rows: Vec<[i64; WARP_LANES]>,
    slots: usize,
}

impl Values {
    /// Every value 0, `slots` slots (no rows at all for programs without values).
    pub fn reset(&mut self, slots: usize) {
        self.rows.clear();
        self.slots = slots;
        if slots > 0 {
            self.rows.resize(slots + MAX_EXPR_STACK, [0; WARP_LANES]);
        }
    }

    /// The value slots (what `Var::Reg` reads).
    pub fn file(&self) -> &[[i64; WARP_LANES]] {
        &self.rows[..self.slots.min(self.rows.len())]
    }

    /// Runs the value operation of the instruction `inst` at item `pc`, if it has one, for
    /// the lanes of `mask` below `lanes`: they read the file as it is, then the destination
    /// slot is written (so `ld r2, A[r2]` reads the old r2). Called in program order as the
    /// warp issues; `env` is lane 0's environment with the instruction's loop counters.
    #[allow(clippy::too_many_arguments)]
    pub fn exec(
        &mut self,
        program: &Program,
        inst: &Inst,
        pc: u32,
        env: &LaneEnv,
        lanes: usize,
        mask: u32,
        buffers: &[Buffer],
    ) {
        let Some(op) = program.value_op(pc) else {
            return;
        };
        if self.slots == 0 || op.slot as usize >= self.slots {
            return;
        }
        let lanes = lanes.min(WARP_LANES);
        let (file, scratch) = self.rows.split_at_mut(self.slots);
        let Ok(stack) = <&mut LaneStack>::try_from(&mut scratch[..MAX_EXPR_STACK]) else {
            return;
        };
        let mut out = [0u64; WARP_LANES];
        let mut result = [0i64; WARP_LANES];
        match op.kind {
            ValueKind::Load { buffer, width } => {
                let Some(e) = program.exprs.get(inst.addr as usize) else {
                    return;
                };
                let data = buffers
                    .get(buffer as usize)
                    .and_then(|b| b.data.as_deref())
                    .unwrap_or(&[]);
                e.eval_lanes_in(env, file, lanes, stack, &mut out);
                for (r, &a) in result.iter_mut().zip(&out[..lanes]) {
                    *r = read_le(data, a.wrapping_sub(e.base), width);
                }
            }
            ValueKind::Int { op: iop, a, b } => {
                // A slot operand is read in place (not copied); an expression operand's
                // values are computed into `av` / `bv`.
                let (mut av, mut bv) = ([0i64; WARP_LANES], [0i64; WARP_LANES]);
                for (operand, dst) in [(a, &mut av), (b, &mut bv)] {
                    if let Operand::Expr(i) = operand {
                        if let Some(e) = program.exprs.get(i as usize) {
                            e.eval_lanes_in(env, file, lanes, stack, &mut out);
                            for (d, &v) in dst[..lanes].iter_mut().zip(&out[..lanes]) {
                                *d = v.wrapping_sub(e.base) as i64;
                            }
                        }
                    }
                }
                const ZERO: [i64; WARP_LANES] = [0; WARP_LANES];
                let row = |operand, computed| match operand {
                    Operand::Slot(s) => file.get(s as usize).unwrap_or(&ZERO),
                    Operand::Expr(_) => computed,
                };
                let (ra, rb) = (row(a, &av), row(b, &bv));
                for (x, (&p, &q)) in result[..lanes].iter_mut().zip(ra.iter().zip(rb)) {
                    *x = iop.apply(p, q);
                }
            }
        }
        let row = &mut file[op.slot as usize];
        for (l, (d, &v)) in row[..lanes].iter_mut().zip(&result[..lanes]).enumerate() {
            if mask >> l & 1 == 1 {
                *d = v;
            }
        }
    }
}

/// The `width` bytes at byte `offset` of `data`, little-endian and sign-extended; 0 when they
/// are not all inside `data`.
fn read_le(data: &[u8], offset: u64, width: u8) -> i64 {
    let w = width as usize;
    let Some(bytes) = usize::try_from(offset)
        .ok()
        .and_then(|o| data.get(o..o.checked_add(w)?))
    else {
        return 0;
    };
    if !(1..=8).contains(&w) {
        return 0;
    }
    // Fixed-width reads for the widths loads use (a variable-length copy is a memmove call,
    // 6 % of an spmv run); other widths are assembled byte by byte.
    match *bytes {
        [a] => a as i8 as i64,
        [a, b] => i16::from_le_bytes([a, b]) as i64,
        [a, b, c, d] => i32::from_le_bytes([a, b, c, d]) as i64,
        [a, b, c, d, e, f, g, h] => i64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => {
            let v = bytes.iter().rev().fold(0u64, |v, &b| v << 8 | b as u64);
            let shift = 64 - 8 * w as u32;
            ((v << shift) as i64) >> shift
        }
    }
}

/// The instruction stream shared by every thread of a kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Program {
    pub items: Vec<Item>,
    pub exprs: Vec<AddrExpr>,
    /// The targets of the branch instructions (indexed by [`Inst::addr`]); empty for
    /// programs without divergence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<Branch>,
    /// Traced programs: the recorded PC of each item (event logs print it); empty otherwise.
    #[serde(skip)]
    pub pcs: Vec<u64>,
    /// Traced programs: the recorded active mask of each item, which the warp's issue takes
    /// as the instruction's mask (thread instructions, SIMD efficiency); empty otherwise.
    #[serde(skip)]
    pub lane_masks: Vec<u32>,
    /// The values instructions write, sorted by `pc` (at most one per instruction); empty
    /// for programs whose expressions read no register.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ValueOp>,
    /// Value slots a warp needs (at most [`MAX_VALUE_SLOTS`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub value_slots: u8,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

impl Program {
    /// The value operation of the instruction at item `pc`, if it writes a value.
    pub fn value_op(&self, pc: u32) -> Option<&ValueOp> {
        if self.values.is_empty() {
            return None;
        }
        self.values
            .binary_search_by_key(&pc, |v| v.pc)
            .ok()
            .map(|i| &self.values[i])
    }

    /// Structural checks: address expressions in range and well formed, loops matched, and
    /// branches forming structured blocks (each `if` / per-lane loop region nested in the
    /// enclosing ones, no deeper than [`MAX_DIVERGENT_NESTING`]) so that the SIMT stack
    /// never needs more than [`SIMT_STACK_CAPACITY`] entries.
    pub fn validate(&self) -> Result<(), String> {
        /// An open block: a uniform loop or the region of a forward conditional branch.
        struct Open {
            /// Index at which the block closes (exclusive end).
            close: usize,
            /// Furthest exclusive end a nested block may have.
            limit: usize,
            /// Region of a per-lane loop: the index of its `LoopEnter`; `None` for others.
            div_loop: Option<usize>,
            region: bool,
        }
        let n = self.items.len();
        let mut open: Vec<Open> = Vec::new();
        let loops_open = |open: &[Open]| open.iter().filter(|o| !o.region || o.div_loop.is_some()).count();
        for (i, item) in self.items.iter().enumerate() {
            while open.last().is_some_and(|o| o.close <= i) {
                open.pop();
            }
            let limit = open.last().map_or(n, |o| o.limit);
            match *item {
                Item::Inst(inst) if inst.op == OpKind::Branch => {
                    let Some(b) = self.branches.get(inst.addr as usize) else {
                        return Err(format!("instruction {i}: branch index out of range"));
                    };
                    let (t, r) = (b.target as usize, b.reconv as usize);
                    if t > n || r > n {
                        return Err(format!("instruction {i}: branch target out of range"));
                    }
                    let expr_ok = |e: u16| (e as usize) < self.exprs.len();
                    match b.kind {
                        BranchKind::IfNot { cond } => {
                            if !expr_ok(cond) {
                                return Err(format!("instruction {i}: condition expression out of range"));
                            }
                            if !(i < t && t <= r && r <= limit) {
                                return Err(format!("instruction {i}: `if` region not nested in its block"));
                            }
                            if t != r {
                                // The `then` block ends with the jump over the `else` block.
                                let jump = match self.items[t - 1] {
                                    Item::Inst(j) if j.op == OpKind::Branch => {
                                        self.branches.get(j.addr as usize)
                                    }
                                    _ => None,
                                };
                                if !matches!(jump, Some(j) if j.kind == BranchKind::Always && j.target as usize == r)
                                {
                                    return Err(format!("instruction {i}: `else` block without its jump"));
                                }
                            }
                            open.push(Open {
                                close: r,
                                limit: r,
                                div_loop: None,
                                region: true,
                            });
                        }
                        BranchKind::LoopEnter { count, depth } => {
                            if !expr_ok(count) {
                                return Err(format!("instruction {i}: trip count expression out of range"));
                            }
                            if !(i < t && t == r && r <= limit) {
                                return Err(format!("instruction {i}: loop region not nested in its block"));
                            }
                            if depth as usize != loops_open(&open) || depth as usize >= MAX_LOOP_DEPTH {
                                return Err(format!(
                                    "instruction {i}: loop depth {depth} does not match its nesting"
                                ));
                            }
                            open.push(Open {
                                close: r,
                                limit: r - 1,
                                div_loop: Some(i),
                                region: true,
                            });
                        }
                        BranchKind::LoopBack { depth } => {
                            let enter = open.last().and_then(|o| o.div_loop.filter(|_| o.close == i + 1));
                            let ok = enter.is_some_and(|s| {
                                t == s + 1
                                    && r == i + 1
                                    && matches!(self.items[s], Item::Inst(e)
                                        if matches!(self.branches.get(e.addr as usize),
                                            Some(Branch { kind: BranchKind::LoopEnter { depth: d, .. }, .. }) if *d == depth))
                            });
                            if !ok {
                                return Err(format!("instruction {i}: loop back edge without its loop"));
                            }
                        }
                        BranchKind::Break { cond, depth, start } => {
                            if cond.is_some_and(|c| !expr_ok(c)) {
                                return Err(format!("instruction {i}: condition expression out of range"));
                            }
                            // The innermost open loop is the per-lane loop it leaves.
                            let inner = open.iter().rev().find(|o| !o.region || o.div_loop.is_some());
                            let ok = inner.and_then(|o| o.div_loop.map(|s| (s, o.close))).is_some_and(|(s, close)| {
                                start as usize == s + 1
                                    && t == close
                                    && r == close
                                    && matches!(self.items[s], Item::Inst(e)
                                        if matches!(self.branches.get(e.addr as usize),
                                            Some(Branch { kind: BranchKind::LoopEnter { depth: d, .. }, .. }) if *d == depth))
                            });
                            if !ok {
                                return Err(format!("instruction {i}: `break` outside its per-lane loop"));
                            }
                        }
                        BranchKind::Always => {
                            if !(t == r
                                && open
                                    .last()
                                    .is_some_and(|o| o.region && o.div_loop.is_none() && o.close == r))
                            {
                                return Err(format!(
                                    "instruction {i}: jump that does not close its `if` block"
                                ));
                            }
                        }
                    }
                    let regions = open.iter().filter(|o| o.region).count();
                    if regions > MAX_DIVERGENT_NESTING {
                        return Err(format!(
                            "divergent blocks nested deeper than MAX_DIVERGENT_NESTING = {MAX_DIVERGENT_NESTING}"
                        ));
                    }
                }
                Item::Inst(inst) => {
                    if inst.op.is_memory() && inst.addr as usize >= self.exprs.len() {
                        return Err(format!("instruction {i}: address expression out of range"));
                    }
                }
                Item::LoopStart { end, .. } => {
                    match self.items.get(end as usize) {
                        Some(Item::LoopEnd { start }) if *start as usize == i => {}
                        _ => return Err(format!("item {i}: loop start without matching end")),
                    }
                    if end as usize + 1 > limit {
                        return Err(format!("item {i}: loop not nested in its block"));
                    }
                    if loops_open(&open) + 1 > MAX_LOOP_DEPTH {
                        return Err(format!("loops nested deeper than {MAX_LOOP_DEPTH}"));
                    }
                    open.push(Open {
                        close: end as usize + 1,
                        limit: end as usize,
                        div_loop: None,
                        region: false,
                    });
                }
                Item::LoopEnd { start } => {
                    if !matches!(open.last(), Some(o) if !o.region && o.close == i + 1) {
                        return Err(format!("item {i}: loop end {start} without its start"));
                    }
                }
            }
        }
        for e in &self.exprs {
            e.validate()?;
            for n in &e.nodes {
                if let ExprNode::Var(Var::Reg(s)) = n {
                    if *s >= self.value_slots {
                        return Err(format!("expression reads value slot {s} of {}", self.value_slots));
                    }
                }
            }
        }
        if self.value_slots as usize > MAX_VALUE_SLOTS {
            return Err(format!("more than {MAX_VALUE_SLOTS} value slots"));
        }
        for (k, v) in self.values.iter().enumerate() {
            if k > 0 && self.values[k - 1].pc >= v.pc {
                return Err("value operations not sorted by pc".into());
            }
            let Some(Item::Inst(inst)) = self.items.get(v.pc as usize) else {
                return Err(format!("value operation at item {} that is no instruction", v.pc));
            };
            let slot_ok = |s: u8| s < self.value_slots;
            let ok = slot_ok(v.slot)
                && match v.kind {
                    ValueKind::Load { width, .. } => inst.op.loads_buffer() && matches!(width, 1 | 2 | 4 | 8),
                    ValueKind::Int { a, b, .. } => [a, b].iter().all(|o| match *o {
                        Operand::Slot(s) => slot_ok(s),
                        Operand::Expr(e) => (e as usize) < self.exprs.len(),
                    }),
                };
            if !ok {
                return Err(format!("instruction {}: malformed value operation", v.pc));
            }
        }
        Ok(())
    }

    /// What one warp of `lanes` threads, whose lane 0 has the values `env`, executes: the
    /// control flow of the machine's fetch stage, run functionally.
    pub fn warp_counts(&self, env: &LaneEnv, lanes: u32) -> WarpCounts {
        self.warp_counts_in(env, lanes, &[], &mut Values::default())
    }

    /// [`warp_counts`](Self::warp_counts) with the kernel's `buffers` (value loads read their
    /// contents); `values` is scratch, reused across warps so that it allocates once.
    pub fn warp_counts_in(
        &self,
        env: &LaneEnv,
        lanes: u32,
        buffers: &[Buffer],
        values: &mut Values,
    ) -> WarpCounts {
        let mut c = WarpCounts::default();
        self.walk(env, lanes, buffers, values, |f, _, _| {
            c.warp += 1;
            c.thread += f.mask.count_ones() as u64;
        });
        c
    }

    /// Runs one warp through the program functionally (the SIMT stack, per-lane loops and
    /// the value registers, as the machine issues it), calling `visit` with each warp
    /// instruction, its lanes' environment and the value file before the instruction's own
    /// branch and value effects.
    pub fn walk(
        &self,
        env: &LaneEnv,
        lanes: u32,
        buffers: &[Buffer],
        values: &mut Values,
        mut visit: impl FnMut(&Fetched, &LaneEnv, &Values),
    ) {
        let mut flow = Flow::default();
        flow.launch(lanes);
        values.reset(self.value_slots as usize);
        while let Some(f) = flow.next(self) {
            let lane_env = LaneEnv {
                loops: f.loops,
                ..*env
            };
            visit(&f, &lane_env, values);
            if f.inst.op == OpKind::Branch {
                flow.resolve_in(self, f.pc, &lane_env, values.file());
            }
            values.exec(self, &f.inst, f.pc, &lane_env, lanes as usize, f.mask, buffers);
        }
    }

    /// Warp instructions one warp executes (loops expanded), for programs without branches
    /// (with branches it depends on the warp: see [`warp_counts`](Self::warp_counts)).
    pub fn dynamic_instructions(&self) -> u64 {
        fn count(items: &[Item], mut i: usize, end: usize) -> u64 {
            let mut n = 0u64;
            while i < end {
                match items[i] {
                    Item::Inst(_) => {
                        n += 1;
                        i += 1;
                    }
                    Item::LoopStart { count: c, end: e } => {
                        n += c as u64 * count(items, i + 1, e as usize);
                        i = e as usize + 1;
                    }
                    Item::LoopEnd { .. } => i += 1,
                }
            }
            n
        }
        count(&self.items, 0, self.items.len())
    }
}

/// A global-memory buffer a kernel declares; its base is assigned by the loader.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct Buffer {
    pub name: String,
    pub base: u64,
    pub bytes: u64,
    /// Bytes its allocation takes: its size at `kernel_scale = full` (issue 29 §4), so the
    /// layout, and with it every channel, bank and set mapping, is the full-size run's at
    /// every scale. At least `bytes`.
    pub extent: u64,
    /// Initial contents (`buffer NAME from INPUT.ARRAY`), which value loads read; `None`: no
    /// contents (loads from it carry no value). Not serialized: results and snapshots name
    /// the input instead.
    #[serde(skip)]
    pub data: Option<std::sync::Arc<[u8]>>,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Buffer");
        d.field("name", &self.name)
            .field("base", &self.base)
            .field("bytes", &self.bytes)
            .field("extent", &self.extent);
        if let Some(data) = &self.data {
            d.field("data", &format_args!("{} bytes", data.len()));
        }
        d.finish()
    }
}

/// A kernel launch: grid, CTA shape, per-CTA resources and the program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Kernel {
    pub name: String,
    /// CTAs in the grid.
    pub grid: u32,
    /// Threads per CTA.
    pub block: u32,
    /// Registers per thread.
    pub regs: u32,
    /// Shared memory bytes per CTA.
    pub shared_bytes: u32,
    pub buffers: Vec<Buffer>,
    pub program: Program,
    /// Kernels from traces: each CTA's warps run their own programs, handed out when the
    /// CTA launches, instead of `program`. `None` for kernels written in the kernel format.
    #[serde(skip)]
    pub per_cta: Option<PerCta>,
}

/// Per-CTA programs, handed out at CTA launch (kernels from traces: the trace is read as the
/// CTAs launch, so memory holds the resident CTAs, not the whole trace).
pub trait CtaPrograms: Send + Sync {
    /// The programs of CTA `cta`'s warps (index = warp within the CTA). Called once per CTA.
    fn take(&self, cta: u32) -> Vec<std::sync::Arc<Program>>;
    /// Warp instructions of the whole grid.
    fn warp_instructions(&self) -> u64;
}

/// A shared [`CtaPrograms`]; two kernels are equal only if they share the same source.
#[derive(Clone)]
pub struct PerCta(pub std::sync::Arc<dyn CtaPrograms>);

impl PartialEq for PerCta {
    fn eq(&self, o: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &o.0)
    }
}
impl Eq for PerCta {}
impl std::fmt::Debug for PerCta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PerCta({} warp instructions)", self.0.warp_instructions())
    }
}

impl Kernel {
    /// The lane environment a warp of this grid starts in: warp `warp` of CTA `cta`, outside
    /// every loop.
    pub fn warp_start_env(&self, cta: u32, warp: u32) -> LaneEnv {
        LaneEnv {
            tid: warp as i64 * 32,
            cta: cta as i64,
            block: self.block as i64,
            grid: self.grid as i64,
            loops: [0; MAX_LOOP_DEPTH],
        }
    }

    pub fn warps_per_cta(&self) -> u32 {
        self.block.div_ceil(32)
    }
    /// Warp instructions the whole grid executes.
    pub fn total_warp_instructions(&self) -> u64 {
        if let Some(p) = &self.per_cta {
            return p.0.warp_instructions();
        }
        if !self.program.branches.is_empty() {
            return self.divergent_counts().warp;
        }
        self.program.dynamic_instructions() * self.warps_per_cta() as u64 * self.grid as u64
    }

    /// Thread instructions (active lanes of every warp instruction) of the whole grid;
    /// `None` for kernels from traces.
    pub fn total_thread_instructions(&self) -> Option<u64> {
        if self.per_cta.is_some() {
            return None;
        }
        if !self.program.branches.is_empty() {
            return Some(self.divergent_counts().thread);
        }
        Some(self.program.dynamic_instructions() * self.block as u64 * self.grid as u64)
    }

    /// Every warp of the grid run functionally through its control flow.
    fn divergent_counts(&self) -> WarpCounts {
        let mut total = WarpCounts::default();
        let mut values = Values::default();
        for cta in 0..self.grid {
            for w in 0..self.warps_per_cta() {
                let env = self.warp_start_env(cta, w);
                let c = self.program.warp_counts_in(
                    &env,
                    (self.block - w * 32).min(32),
                    &self.buffers,
                    &mut values,
                );
                total.warp += c.warp;
                total.thread += c.thread;
            }
        }
        total
    }

    /// CTA `cta`'s per-warp programs, for kernels that have them (see [`Kernel::per_cta`]).
    pub fn cta_programs(&self, cta: u32) -> Option<Vec<std::sync::Arc<Program>>> {
        self.per_cta.as_ref().map(|p| p.0.take(cta))
    }

    /// Structural checks every producer's output must pass before simulation.
    pub fn validate(&self) -> Result<(), String> {
        if self.grid == 0 {
            return Err(format!("kernel `{}`: grid must have at least one CTA", self.name));
        }
        if self.block == 0 {
            return Err(format!(
                "kernel `{}`: block must have at least one thread",
                self.name
            ));
        }
        for v in &self.program.values {
            if let ValueKind::Load { buffer, .. } = v.kind {
                if buffer as usize >= self.buffers.len() {
                    return Err(format!(
                        "instruction {}: value load from buffer {buffer} out of range",
                        v.pc
                    ));
                }
            }
        }
        self.program.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width reads `width` little-endian bytes, sign-extended, and a read past the end
    /// of the data gives 0 (as an unmapped load does).
    #[test]
    fn read_le_sign_extends_every_width() {
        let data: Vec<u8> = (0..16u8).map(|i| i.wrapping_mul(37).wrapping_add(0x80)).collect();
        for w in 1..=8u8 {
            for off in 0..=(16 - w as u64) {
                let mut v: i64 = 0;
                for i in (0..w as u64).rev() {
                    v = v << 8 | data[(off + i) as usize] as i64;
                }
                let shift = 64 - 8 * w as u32;
                let want = (v << shift) >> shift;
                assert_eq!(read_le(&data, off, w), want, "width {w} offset {off}");
            }
            assert_eq!(read_le(&data, 17 - w as u64, w), 0, "width {w} past the end");
        }
        assert_eq!(read_le(&data, 0, 0), 0);
        assert_eq!(read_le(&data, 0, 9), 0);
    }

    /// `cvt.rzi.{s32,u32}.f32` on the low 32 bits of the source: truncation toward zero,
    /// NaN to 0, saturation to the destination type; the high bits are ignored.
    #[test]
    fn cvt_rzi_truncates_and_saturates_like_ptx() {
        let bits = |x: f32| x.to_bits() as i64;
        let s = |x: f32| IntOp::CvtRziS32F32.apply(bits(x), 0);
        let u = |x: f32| IntOp::CvtRziU32F32.apply(bits(x), 0);
        // Exact integers.
        for x in [0.0f32, 1.0, 12.0, 255.0, 16_777_216.0] {
            assert_eq!(s(x), x as i64, "{x}");
            assert_eq!(u(x), x as i64, "{x}");
        }
        assert_eq!(s(-12.0), -12);
        assert_eq!(s(-0.0), 0);
        assert_eq!(u(-0.0), 0);
        // Fractions go toward zero; negatives give 0 for u32.
        assert_eq!((s(2.7), u(2.7)), (2, 2));
        assert_eq!((s(-2.7), u(-2.7)), (-2, 0));
        assert_eq!((s(0.999_999), u(0.999_999)), (0, 0));
        assert_eq!((s(-0.5), u(-0.5)), (0, 0));
        assert_eq!(s(f32::MIN_POSITIVE / 2.0), 0, "subnormal");
        // NaN (either sign, any payload) gives 0.
        assert_eq!((s(f32::NAN), u(f32::NAN)), (0, 0));
        assert_eq!((s(-f32::NAN), u(-f32::NAN)), (0, 0));
        assert_eq!(IntOp::CvtRziU32F32.apply(0x7fc0_1234, 0), 0);
        // Infinities and out-of-range values saturate to the destination range.
        let (smin, smax, umax) = (i32::MIN as i64, i32::MAX as i64, u32::MAX as i64);
        assert_eq!((s(f32::INFINITY), u(f32::INFINITY)), (smax, umax));
        assert_eq!((s(f32::NEG_INFINITY), u(f32::NEG_INFINITY)), (smin, 0));
        assert_eq!((s(3e9), u(3e9)), (smax, 3_000_000_000));
        assert_eq!((s(5e9), u(5e9)), (smax, umax));
        assert_eq!((s(-3e9), u(-3e9)), (smin, 0));
        assert_eq!(s(f32::MAX), smax);
        assert_eq!(s(f32::MIN), smin);
        // The largest f32 below 2^31 converts exactly; 2^31 itself saturates for s32 only.
        assert_eq!(s(2_147_483_520.0), 2_147_483_520);
        assert_eq!((s(2_147_483_648.0), u(2_147_483_648.0)), (smax, 1 << 31));
        assert_eq!(s(-2_147_483_648.0), smin, "i32::MIN is representable");
        assert_eq!(u(4_294_967_040.0), 4_294_967_040, "largest f32 below 2^32");
        assert!(u(f32::INFINITY) > 0, "u32 stays non-negative as an i64");
        // Only the low 32 bits are the f32: a sign-extended load of negative bits, or junk in
        // the high half, reads the same float.
        assert_eq!(IntOp::CvtRziS32F32.apply(bits(-2.7) as u32 as i32 as i64, 0), -2);
        assert_eq!(
            IntOp::CvtRziS32F32.apply(bits(12.0) | 0x5555_0000_0000_0000, 0),
            12
        );
        // The second operand is ignored; both are unary.
        assert_eq!(IntOp::CvtRziS32F32.apply(bits(7.5), 99), 7);
        assert_eq!(IntOp::CvtRziS32F32.arity(), 1);
        assert_eq!(IntOp::CvtRziU32F32.arity(), 1);
        assert_eq!((IntOp::Mov.arity(), IntOp::Add.arity()), (1, 2));
    }

    #[test]
    fn lane_evaluation_matches_scalar_evaluation() {
        use ExprNode::*;
        // (4*tid + rand(7, 1000) * 128) % 4096 + 3 * (gwarp ^ loop0) / 2 - cta
        let e = AddrExpr {
            base: 0x1000,
            nodes: vec![
                Const(4),
                Var(super::Var::Tid),
                Mul,
                Const(7),
                Const(1000),
                Rand,
                Const(128),
                Mul,
                Add,
                Const(4096),
                Rem,
                Const(3),
                Var(super::Var::Gwarp),
                Var(super::Var::Loop(0)),
                Xor,
                Mul,
                Const(2),
                Div,
                Add,
                Var(super::Var::Cta),
                Sub,
            ],
            lanes: None,
        };
        e.validate().unwrap();
        let env = LaneEnv {
            tid: 64,
            cta: 3,
            block: 256,
            grid: 10,
            loops: [5, 1, 0, 0],
        };
        let mut stack = Box::new([[0; WARP_LANES]; MAX_EXPR_STACK]);
        let mut out = [0u64; WARP_LANES];
        e.eval_lanes(&env, 32, &mut stack, &mut out);
        for (lane, &v) in out.iter().enumerate() {
            let scalar = e.eval(&LaneEnv {
                tid: env.tid + lane as i64,
                ..env
            });
            assert_eq!(v, scalar, "lane {lane}");
        }
    }

    /// Random expressions (every operator, register and lane variables, negative values,
    /// power-of-two and other divisors, a missing register) give the same lane values all
    /// at once as one lane at a time, for whole and partial warps.
    #[test]
    fn lane_evaluation_matches_the_scalar_one_on_random_expressions() {
        use ExprNode::*;
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let ops = [Add, Sub, Mul, Div, Rem, Xor, Lt, Le, Gt, Ge, Eq, Ne, Rand];
        let consts = [0, 1, 2, 3, 4, 7, 64, 1024, 24576, -1, -4, -9, i64::MIN, i64::MAX];
        let vars = [
            super::Var::Tid,
            super::Var::Lane,
            super::Var::Warp,
            super::Var::Gtid,
            super::Var::Gwarp,
            super::Var::Cta,
            super::Var::Block,
            super::Var::Grid,
            super::Var::Gthreads,
            super::Var::Loop(1),
            super::Var::Reg(0),
            super::Var::Reg(1),
            super::Var::Reg(5),
        ];
        let mut values = [[0i64; WARP_LANES]; 2];
        for (r, row) in values.iter_mut().enumerate() {
            for (l, v) in row.iter_mut().enumerate() {
                *v = ((l as i64 - 9) * (r as i64 * 1000 + 37)) ^ (l as i64 * 7);
            }
        }
        let env = LaneEnv {
            tid: 32,
            cta: 5,
            block: 128,
            grid: 9,
            loops: [2, 3, 0, 0],
        };
        let mut stack = Box::new([[0; WARP_LANES]; MAX_EXPR_STACK]);
        for _ in 0..3000 {
            // A random postfix expression of up to 7 operators.
            let mut nodes = Vec::new();
            let mut depth = 0;
            let operators = next(8);
            let mut done = 0;
            while done < operators || depth != 1 {
                if depth >= 2 && (done >= operators || depth >= 6 || next(2) == 0) {
                    nodes.push(ops[next(ops.len() as u64) as usize]);
                    depth -= 1;
                    done += 1;
                } else if next(2) == 0 {
                    nodes.push(Const(consts[next(consts.len() as u64) as usize]));
                    depth += 1;
                } else {
                    nodes.push(Var(vars[next(vars.len() as u64) as usize]));
                    depth += 1;
                }
            }
            let e = AddrExpr {
                base: next(1 << 20) << 7,
                nodes,
                lanes: None,
            };
            e.validate().unwrap();
            for lanes in [32, 17] {
                let mut out = [7u64; WARP_LANES];
                e.eval_lanes_in(&env, &values, lanes, &mut stack, &mut out);
                for (lane, &v) in out.iter().enumerate() {
                    let want = if lane < lanes {
                        e.eval_in(
                            &LaneEnv {
                                tid: env.tid + lane as i64,
                                ..env
                            },
                            &values,
                            lane,
                        )
                    } else {
                        7
                    };
                    assert_eq!(v, want, "{:?} lane {lane} of {lanes}", e.nodes);
                }
            }
        }
    }

    const LO: u32 = 0x0000_FFFF;
    const HI: u32 = 0xFFFF_0000;

    fn entry(pc: u32, rpc: u32, mask: u32) -> SimtEntry {
        SimtEntry { pc, rpc, mask }
    }

    #[test]
    fn simt_stack_diverges_and_reconverges_at_the_post_dominator() {
        let mut s = SimtStack::default();
        s.launch(u32::MAX);
        // if/else at pc 0: lanes 0..16 take the branch to the `else` block at 5, the rest fall
        // through to the `then` block at 1; both reconverge at 9.
        s.branch(LO, 5, 1, 9, 20);
        assert_eq!(
            s.entries(),
            [entry(9, NO_PC, u32::MAX), entry(1, 9, HI), entry(5, 9, LO)],
            "top becomes the reconvergence entry; the path without the highest lane runs first"
        );
        s.advance(6, 20);
        assert_eq!(s.top(), Some(entry(6, 9, LO)));
        s.advance(9, 20);
        assert_eq!(s.top(), Some(entry(1, 9, HI)), "else path reached 9: popped");
        s.advance(9, 20);
        assert_eq!(s.entries(), [entry(9, NO_PC, u32::MAX)], "reconverged");
        // A branch every lane takes the same way does not push.
        s.branch(u32::MAX, 15, 10, 16, 20);
        assert_eq!(s.entries(), [entry(15, NO_PC, u32::MAX)]);
        s.branch(0, 18, 16, 18, 20);
        assert_eq!(s.entries(), [entry(16, NO_PC, u32::MAX)]);
        // Walking past the end retires the lanes.
        s.advance(20, 20);
        assert!(s.is_empty());
    }

    #[test]
    fn simt_stack_nests_and_loops_do_not_grow_it() {
        let mut s = SimtStack::default();
        s.launch(0xFF);
        // Outer if at 0 (reconverge at 30): lanes 0..4 skip to 30, lanes 4..8 run the body.
        s.branch(0x0F, 30, 1, 30, 40);
        assert_eq!(
            s.entries(),
            [entry(30, NO_PC, 0xFF), entry(1, 30, 0xF0)],
            "the skipping lanes wait"
        );
        // Nested if at 1 (reconverge at 10): lane 4 takes it.
        s.branch(0x10, 6, 2, 10, 40);
        assert_eq!(s.depth(), 4);
        assert_eq!(s.top(), Some(entry(6, 10, 0x10)));
        // A per-lane loop inside the nested path: back edge at 8 to 7, exit and reconverge at 9.
        s.advance(8, 40);
        s.branch(0x10, 7, 9, 9, 40);
        assert_eq!(s.depth(), 4, "uniform back edge: no push");
        s.branch(0, 7, 9, 9, 40);
        assert_eq!(s.top(), Some(entry(9, 10, 0x10)), "loop left, path goes on");
        s.advance(10, 40);
        assert_eq!(s.top(), Some(entry(2, 10, 0xE0)), "other nested path");
        s.advance(10, 40);
        assert_eq!(s.top(), Some(entry(10, 30, 0xF0)), "nested if reconverged");
        // A per-lane loop whose lanes leave one by one: the top's mask shrinks in place.
        s.advance(20, 40);
        s.branch(0x30, 11, 21, 21, 40);
        assert_eq!(
            s.entries()[s.depth() - 2..],
            [entry(21, 30, 0xF0), entry(11, 21, 0x30)]
        );
        s.advance(20, 40);
        s.branch(0x20, 11, 21, 21, 40);
        assert_eq!(s.top(), Some(entry(11, 21, 0x20)));
        s.advance(20, 40);
        s.branch(0, 11, 21, 21, 40);
        assert_eq!(s.top(), Some(entry(21, 30, 0xF0)));
        s.advance(30, 40);
        assert_eq!(s.entries(), [entry(30, NO_PC, 0xFF)]);
    }

    #[test]
    fn simt_stack_break_waits_at_the_loop_exit() {
        // A per-lane loop entered by all lanes: body 1..6, back edge at 6, exit 7; the program
        // ends at 20. An `if` inside it at 2 runs 3..5 and reconverges at 5; a `break` at 3.
        let mut s = SimtStack::default();
        s.launch(0xFF);
        s.advance(1, 20);
        s.advance(2, 20);
        s.branch(0x0F, 5, 3, 5, 20);
        assert_eq!(
            s.entries(),
            [entry(5, NO_PC, 0xFF), entry(3, 5, 0xF0)],
            "lanes 0..4 skip the `then` block"
        );
        s.break_out(0x30, 4, 1, 7, 20);
        assert_eq!(
            s.entries(),
            [entry(7, NO_PC, 0xFF), entry(5, 7, 0xCF), entry(4, 5, 0xC0)],
            "no entry waited at the exit: the loop's entry becomes it; lanes 4, 5 leave every \
             entry of the loop"
        );
        s.advance(5, 20);
        assert_eq!(
            s.top(),
            Some(entry(5, 7, 0xCF)),
            "the `if` reconverges without them"
        );
        // A second break, outside the `if`: the exit entry exists, nothing is pushed.
        s.break_out(0x03, 6, 1, 7, 20);
        assert_eq!(s.entries(), [entry(7, NO_PC, 0xFF), entry(6, 7, 0xCC)]);
        // The back edge: lanes 2, 3 iterate, 6, 7 leave normally and wait with the others.
        s.branch(0x0C, 1, 7, 7, 20);
        assert_eq!(s.entries(), [entry(7, NO_PC, 0xFF), entry(1, 7, 0x0C)]);
        // Every lane left breaks: the warp goes on past the loop with all its lanes.
        s.advance(2, 20);
        s.break_out(0x0C, 3, 1, 7, 20);
        assert_eq!(s.entries(), [entry(7, NO_PC, 0xFF)]);
        // No lane breaks: the lanes just go on.
        s.launch(0x3);
        s.break_out(0, 1, 0, 4, 20);
        assert_eq!(s.entries(), [entry(1, NO_PC, 0x3)]);
    }

    /// Warp 0 of CTA 0 of `src` (one warp of 32 lanes), walked functionally: each
    /// instruction's pc, active mask and loop counters, in issue order.
    fn walk(src: &str) -> (Kernel, Vec<(u32, u32, [u32; MAX_LOOP_DEPTH])>) {
        let k = crate::workload::kernel_format::parse_kernel(src, "w.kern").unwrap_or_else(|e| panic!("{e}"));
        let mut flow = Flow::default();
        flow.launch(32);
        let env = k.warp_start_env(0, 0);
        let mut out = Vec::new();
        while let Some(f) = flow.next(&k.program) {
            out.push((f.pc, f.mask, f.loops));
            if f.inst.op == OpKind::Branch {
                flow.resolve(
                    &k.program,
                    f.pc,
                    &LaneEnv {
                        loops: f.loops,
                        ..env
                    },
                );
            }
        }
        assert_eq!(
            k.total_warp_instructions(),
            out.len() as u64,
            "warp_counts walks the same way"
        );
        (k, out)
    }

    fn lane_count(trace: &[(u32, u32, [u32; MAX_LOOP_DEPTH])], lane: u32) -> usize {
        trace.iter().filter(|t| t.1 >> lane & 1 == 1).count()
    }

    #[test]
    fn lanes_that_break_wait_at_the_loop_exit_while_the_others_go_on() {
        // 0 enter, 1 add, 2 break, 3 add, 4 back edge, 5 add (the exit).
        let (_, t) = walk(
            "kernel k\ngrid 1\nblock 32\n\
             loop i < 4 {\n add r1\n break if lane < 8 + 8 * i\n add r2\n}\nadd r3\n",
        );
        let m = |lo: u32| u32::MAX << lo;
        let pcs: Vec<(u32, u32)> = t.iter().map(|x| (x.0, x.1)).collect();
        assert_eq!(
            pcs,
            [
                (0, !0),
                (1, !0),
                (2, !0),
                (3, m(8)),
                (4, m(8)),
                (1, m(8)),
                (2, m(8)),
                (3, m(16)),
                (4, m(16)),
                (1, m(16)),
                (2, m(16)),
                (3, m(24)),
                (4, m(24)),
                (1, m(24)),
                (2, m(24)),
                (5, !0),
            ],
            "iteration i: lanes below 8 + 8i leave and wait at the exit; the back edge of the \
             last iteration is never reached: every lane has left"
        );
        // While the others iterate, lanes 0..8 wait in the entry at the exit (pc 5).
        let k = crate::workload::kernel_format::parse_kernel(
            "kernel k\ngrid 1\nblock 32\nloop i < 4 {\n add r1\n break if lane < 8 + 8 * i\n add r2\n}\nadd r3\n",
            "w.kern",
        )
        .unwrap();
        let mut flow = Flow::default();
        flow.launch(32);
        let env = k.warp_start_env(0, 0);
        for _ in 0..3 {
            let f = flow.next(&k.program).unwrap();
            if f.inst.op == OpKind::Branch {
                flow.resolve(
                    &k.program,
                    f.pc,
                    &LaneEnv {
                        loops: f.loops,
                        ..env
                    },
                );
            }
        }
        assert_eq!(flow.stack.entries(), [entry(5, NO_PC, !0), entry(3, 5, m(8))]);
        // Per lane: entry, then add + break (+ add + back edge when it stays), then the exit.
        for lane in 0..32 {
            let iters = lane / 8;
            assert_eq!(
                lane_count(&t, lane),
                1 + 4 * iters as usize + 2 + 1,
                "lane {lane}"
            );
        }
    }

    #[test]
    fn a_loop_whose_lanes_all_break_exits_early() {
        // Trip count 100, every lane leaves in iteration `lane % 3`: the loop ends after
        // three iterations, and the next loop's counter is at depth 0 again.
        let (_, t) = walk(
            "kernel k\ngrid 1\nblock 32\nbuffer A 1M\n\
             loop i < 100 {\n add r1\n break if i == lane % 3\n}\n\
             loop j < 2 {\n ld.global r2, A[4*j]\n}\n",
        );
        // 0 enter i, 1 add, 2 break, 3 back i, 4 enter j, 5 load, 6 back j.
        let pcs: Vec<u32> = t.iter().map(|x| x.0).collect();
        assert_eq!(pcs, [0, 1, 2, 3, 1, 2, 3, 1, 2, 4, 5, 6, 5, 6]);
        let loads: Vec<[u32; MAX_LOOP_DEPTH]> = t.iter().filter(|x| x.0 == 5).map(|x| x.2).collect();
        assert_eq!(loads, [[0, 0, 0, 0], [1, 0, 0, 0]], "`j` is loop depth 0");
        // An unconditional `break` in an `if`/`else` taken by every lane.
        let (_, t) = walk(
            "kernel k\ngrid 1\nblock 32\n\
             loop i < 1000 {\n if lane < 5 {\n  break\n } else {\n  add r1\n  break\n }\n}\nadd r2\n",
        );
        // 0 enter, 1 if, 2 break, 3 jump over else, 4 add, 5 break, 6 back edge, 7 exit.
        let pcs: Vec<(u32, u32)> = t.iter().map(|x| (x.0, x.1)).collect();
        // The `then` path runs first (the other path holds the highest lane, so it is pushed
        // first); its lanes wait at the exit while the `else` path runs.
        assert_eq!(
            pcs,
            [(0, !0), (1, !0), (2, 0x1F), (4, !0 << 5), (5, !0 << 5), (7, !0)]
        );
    }

    #[test]
    fn break_leaves_only_the_innermost_loop() {
        // 0 enter i, 1 enter j, 2 add, 3 break, 4 back j, 5 add, 6 back i, 7 exit.
        let (_, t) = walk(
            "kernel k\ngrid 1\nblock 32\n\
             loop i < 3 {\n loop j < 5 {\n  add r1\n  break if j == (lane + i) % 4\n }\n add r2\n}\nadd r3\n",
        );
        for lane in 0..32u32 {
            let on = |pc: u32| t.iter().filter(|x| x.0 == pc && x.1 >> lane & 1 == 1).count();
            let inner: usize = (0..3).map(|i| (lane as usize + i) % 4 + 1).sum();
            assert_eq!(on(2), inner, "lane {lane}: inner iterations");
            assert_eq!(on(3), inner, "lane {lane}: one `break` per inner iteration");
            assert_eq!(on(4), inner - 3, "lane {lane}: back edges of the inner loop");
            assert_eq!(on(5), 3, "lane {lane}: every outer iteration runs");
            assert_eq!(on(6), 3, "lane {lane}: outer back edges");
            assert_eq!(on(7), 1);
        }
        // The outer counter is unchanged by the inner loop's breaks.
        let outer: Vec<u32> = t.iter().filter(|x| x.0 == 5).map(|x| x.2[0]).collect();
        assert_eq!(outer, [0, 1, 2]);
    }

    #[test]
    fn break_keeps_the_stack_within_its_capacity() {
        // Deepest nesting the validator accepts, breaks everywhere: per-lane loops at four
        // depths, each holding an `if` that holds a `break` and the next loop (8 divergent
        // levels). Every warp of 32 lanes with trip counts from its tid must stay within
        // SIMT_STACK_CAPACITY: at most two entries per divergent region holding its top
        // entry's pc, above the base entry.
        let src = "kernel deep\ngrid 1\nblock 1024\n\
            loop a < tid % 3 + 1 {\n if (tid + a) % 2 {\n  break if tid % 5 == a\n\
            loop b < (tid / 3) % 3 + 1 {\n  if (tid + b) % 3 != 1 {\n   break if (tid / 7 + b) % 4 == 0\n\
            loop c < (tid / 9) % 3 + 1 {\n   if (tid / 2 + c) % 2 {\n    break if (tid / 5 + c) % 3 == 0\n\
            loop d < (tid / 27) % 3 + 1 {\n    if (tid / 4 + d) % 2 {\n     break if (tid / 11 + d) % 2 == 0\n\
            add r1\n    } else {\n     break\n    }\n    add r2\n   }\n   add r3\n   }\n  add r4\n  }\n  add r5\n  }\n add r6\n }\n add r7\n }\n}\n";
        let k =
            crate::workload::kernel_format::parse_kernel(src, "deep.kern").unwrap_or_else(|e| panic!("{e}"));
        let p = &k.program;
        // Divergent regions (`if` and per-lane loop, from the branch to its reconvergence
        // point) that hold item `pc`.
        let nesting = |pc: u32| {
            p.items[..pc as usize]
                .iter()
                .enumerate()
                .filter(|&(i, it)| match *it {
                    Item::Inst(x) if x.op == OpKind::Branch => {
                        let b = p.branches[x.addr as usize];
                        matches!(b.kind, BranchKind::IfNot { .. } | BranchKind::LoopEnter { .. })
                            && (i as u32) < pc
                            && pc < b.reconv
                    }
                    _ => false,
                })
                .count()
        };
        let check = |s: &SimtStack, deepest: &mut usize| {
            if let Some(t) = s.top() {
                let n = nesting(t.pc);
                assert!(s.depth() <= 1 + 2 * n, "{:?} at nesting {n}", s.entries());
                *deepest = (*deepest).max(s.depth());
            }
        };
        let mut deepest = 0;
        for w in 0..32 {
            let mut flow = Flow::default();
            flow.launch(32);
            let env = k.warp_start_env(0, w);
            while let Some(f) = flow.next(p) {
                check(&flow.stack, &mut deepest);
                if f.inst.op == OpKind::Branch {
                    flow.resolve(
                        p,
                        f.pc,
                        &LaneEnv {
                            loops: f.loops,
                            ..env
                        },
                    );
                    check(&flow.stack, &mut deepest);
                }
            }
        }
        // The walk went deep (base entry + 8), so the bound was tested where it matters.
        assert!(deepest >= 9, "{deepest}");
    }

    #[test]
    fn validate_refuses_unstructured_branches() {
        let mut bra = Inst::new(OpKind::Branch);
        let alu = Item::Inst(Inst::new(OpKind::Alu(AluKind::Simple)));
        let cond = AddrExpr {
            base: 0,
            nodes: vec![ExprNode::Var(Var::Lane)],
            lanes: None,
        };
        let mut p = Program {
            items: vec![Item::Inst(bra), alu, alu],
            exprs: vec![cond],
            branches: vec![Branch {
                kind: BranchKind::IfNot { cond: 0 },
                target: 2,
                reconv: 2,
            }],
            pcs: vec![],
            ..Default::default()
        };
        p.validate().unwrap();
        // `else` target without the jump that closes the `then` block.
        p.branches[0].target = 1;
        assert!(p
            .validate()
            .unwrap_err()
            .contains("`else` block without its jump"));
        p.branches[0] = Branch {
            kind: BranchKind::IfNot { cond: 0 },
            target: 9,
            reconv: 9,
        };
        assert!(p.validate().unwrap_err().contains("out of range"));
        // A back edge outside its loop.
        p.branches[0] = Branch {
            kind: BranchKind::LoopBack { depth: 0 },
            target: 0,
            reconv: 1,
        };
        assert!(p.validate().unwrap_err().contains("back edge"));
        // Nesting beyond the SIMT stack's capacity.
        let n = MAX_DIVERGENT_NESTING + 1;
        p.items.clear();
        p.branches.clear();
        for i in 0..n {
            bra.addr = i as u16;
            p.items.push(Item::Inst(bra));
            p.branches.push(Branch {
                kind: BranchKind::IfNot { cond: 0 },
                target: (2 * n - i) as u32,
                reconv: (2 * n - i) as u32,
            });
        }
        p.items.extend(std::iter::repeat_n(alu, n + 1));
        assert!(p.validate().unwrap_err().contains("MAX_DIVERGENT_NESTING"));
        p.items.remove(0);
        p.branches.remove(0);
        for (i, b) in p.branches.iter_mut().enumerate() {
            b.target -= 1;
            b.reconv -= 1;
            if let Item::Inst(x) = &mut p.items[i] {
                x.addr = i as u16;
            }
        }
        p.validate().unwrap();
    }
}
