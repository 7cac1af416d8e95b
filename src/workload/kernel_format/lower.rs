//! Lowering: builds the [`Kernel`] as the lines are parsed — buffer bases in the default
//! placement, the flat [`Item`] list with each loop's start and end linked, the table of
//! address expressions, and the highest register used.
//!
//! Values: every instruction that writes a register is recorded as a [`Def`], every register
//! an expression (or an integer op) reads as a [`Read`]. At the end of the file
//! [`Lowering::values`] decides which registers carry values, refuses an expression that reads
//! one that does not, gives the registers whose values are needed compact slots, and emits the
//! program's [`ValueOp`]s.

use super::check::Header;
use super::expr::RegRead;
use super::{Diag, PResult};
use crate::workload::placement::Allocator;
use crate::workload::program::{
    AddrExpr, Branch, BranchKind, ExprNode, Inst, IntOp, Item, Kernel, OpKind, Operand, Program, Reg,
    ValueKind, ValueOp, Var, MAX_VALUE_SLOTS, NO_REG,
};

/// A source of an integer operation: a register or an expression (its
/// index in the expression table).
#[derive(Clone, Copy, Debug)]
pub(super) enum Src {
    Reg(Reg),
    Expr(u16),
}

/// How an instruction writes its destination register.
#[derive(Clone, Debug)]
pub(super) enum DefKind {
    /// `ld.global`: a value when the buffer has contents and the width is 1, 2, 4 or 8.
    Load {
        buffer: u16,
        name: String,
        width: u8,
        has_data: bool,
    },
    /// An integer op with the right number of sources: a value when its register sources
    /// carry values.
    Int { op: IntOp, a: Src, b: Src },
    /// Never a value; the string says why.
    Opaque(String),
}

/// An instruction that writes a register.
#[derive(Debug)]
struct Def {
    item: usize,
    dst: Reg,
    line: usize,
    col: usize,
    /// The mnemonic, for messages.
    what: String,
    kind: DefKind,
}

/// A register read by an expression (`expr`) or as an integer op's source.
#[derive(Debug)]
struct Read {
    reg: Reg,
    line: usize,
    col: usize,
    expr: bool,
}

#[derive(Default)]
pub(super) struct Lowering {
    /// Bases in the default placement (GPGPU-Sim's packing); a run under another placement
    /// moves them (`placement::place`).
    alloc: Allocator,
    items: Vec<Item>,
    exprs: Vec<AddrExpr>,
    branches: Vec<Branch>,
    /// Instructions emitted.
    pub(super) insts: usize,
    /// Highest register used.
    pub(super) max_reg: Option<Reg>,
    defs: Vec<Def>,
    reads: Vec<Read>,
}

impl Lowering {
    /// The base of the next buffer, of `bytes` bytes (error at `line:col`).
    pub(super) fn alloc_buffer(&mut self, bytes: u64, line: usize, col: usize) -> PResult<u64> {
        self.alloc
            .alloc(bytes)
            .ok_or_else(|| Diag::new(line, col, "buffers exceed the 64-bit address space"))
    }

    /// Index the next item will have.
    pub(super) fn next_item(&self) -> usize {
        self.items.len()
    }

    /// Emits a `LoopStart` whose end is patched by [`Lowering::loop_end`]; returns its index.
    pub(super) fn loop_start(&mut self, count: u32) -> usize {
        let start = self.items.len();
        self.items.push(Item::LoopStart { count, end: u32::MAX });
        start
    }

    /// Emits the `LoopEnd` of the loop started at item `start` and links the two.
    pub(super) fn loop_end(&mut self, start: usize, line: usize, col: usize) -> PResult<()> {
        let end = self.items.len();
        let (Ok(start32), Ok(end32)) = (u32::try_from(start), u32::try_from(end)) else {
            return Err(Diag::new(line, col, "program too long"));
        };
        self.items.push(Item::LoopEnd { start: start32 });
        if let Some(Item::LoopStart { end: e, .. }) = self.items.get_mut(start) {
            *e = end32;
        }
        Ok(())
    }

    /// Adds a branch condition or trip count to the expression table (error at `line:col`
    /// when it is full); returns its index.
    pub(super) fn lane_expr(&mut self, nodes: Vec<ExprNode>, line: usize, col: usize) -> PResult<u16> {
        let idx = self.expr_index(line, col)?;
        self.exprs.push(AddrExpr {
            base: 0,
            nodes,
            lanes: None,
        });
        Ok(idx)
    }

    fn expr_index(&self, line: usize, col: usize) -> PResult<u16> {
        u16::try_from(self.exprs.len()).map_err(|_| {
            Diag::new(
                line,
                col,
                format!(
                    "too many memory instructions or branch conditions: at most {}",
                    u16::MAX as usize + 1
                ),
            )
        })
    }

    /// Emits a branch instruction whose target and reconvergence point are set later by
    /// [`Lowering::patch_branch`]; returns its item index.
    pub(super) fn branch(&mut self, kind: BranchKind, line: usize, col: usize) -> PResult<usize> {
        self.branch_reading(kind, [NO_REG; 3], line, col)
    }

    /// [`branch`](Self::branch) whose condition or trip count reads the registers `src` (the
    /// scoreboard makes it wait for them).
    pub(super) fn branch_reading(
        &mut self,
        kind: BranchKind,
        src: [Reg; 3],
        line: usize,
        col: usize,
    ) -> PResult<usize> {
        let idx = u16::try_from(self.branches.len()).map_err(|_| {
            Diag::new(
                line,
                col,
                format!("too many branches: at most {}", u16::MAX as usize + 1),
            )
        })?;
        self.branches.push(Branch {
            kind,
            target: u32::MAX,
            reconv: u32::MAX,
        });
        let item = self.items.len();
        let mut inst = Inst::new(OpKind::Branch);
        inst.addr = idx;
        inst.src = src;
        self.push_inst(inst);
        Ok(item)
    }

    /// Sets the target and reconvergence item of the branch at item `at` (`None` keeps it).
    pub(super) fn patch_branch(&mut self, at: usize, target: Option<usize>, reconv: Option<usize>) {
        if let Some(Item::Inst(inst)) = self.items.get(at) {
            if let Some(b) = self.branches.get_mut(inst.addr as usize) {
                if let Some(t) = target {
                    b.target = t as u32;
                }
                if let Some(r) = reconv {
                    b.reconv = r as u32;
                }
            }
        }
    }

    fn note_reg(&mut self, r: Reg) {
        self.max_reg = Some(self.max_reg.map_or(r, |m| m.max(r)));
    }

    pub(super) fn push_inst(&mut self, inst: Inst) {
        if inst.dst != NO_REG {
            self.note_reg(inst.dst);
        }
        for s in inst.src {
            if s != NO_REG {
                self.note_reg(s);
            }
        }
        self.items.push(Item::Inst(inst));
        self.insts += 1;
    }

    /// The instruction just emitted writes `dst` as `kind` says (mnemonic `what` at
    /// `line:col`).
    pub(super) fn def(&mut self, dst: Reg, line: usize, col: usize, what: &str, kind: DefKind) {
        self.defs.push(Def {
            item: self.items.len().saturating_sub(1),
            dst,
            line,
            col,
            what: what.to_string(),
            kind,
        });
    }

    /// Registers read on `line`: by expressions (`expr`) or as integer-op sources.
    pub(super) fn reads(&mut self, line: usize, reads: &[RegRead], expr: bool) {
        self.reads
            .extend(reads.iter().map(|&(reg, col)| Read { reg, line, col, expr }));
    }

    /// Which registers carry values, the check that expressions read only those, the value
    /// slots, and the value operations; rewrites `Var::Reg` from register to slot numbers.
    fn values(&mut self) -> PResult<(Vec<ValueOp>, u8)> {
        if !self.reads.iter().any(|r| r.expr) {
            return Ok((Vec::new(), 0));
        }
        const N: usize = 256;
        // Greatest fixed point: start from every written register and drop those with a
        // writer that gives no value, until nothing changes (a loop-carried `add r1, r1, 1`
        // keeps its value).
        let mut value = [false; N];
        for d in &self.defs {
            value[d.dst as usize] = true;
        }
        let gives = |d: &Def, value: &[bool; N]| match &d.kind {
            DefKind::Load { width, has_data, .. } => *has_data && matches!(width, 1 | 2 | 4 | 8),
            DefKind::Int { a, b, .. } => [a, b]
                .iter()
                .all(|s| !matches!(s, Src::Reg(r) if !value[*r as usize])),
            DefKind::Opaque(_) => false,
        };
        loop {
            let mut changed = false;
            for d in &self.defs {
                if value[d.dst as usize] && !gives(d, &value) {
                    value[d.dst as usize] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for r in self.reads.iter().filter(|r| r.expr) {
            if value[r.reg as usize] {
                continue;
            }
            let why = match self.defs.iter().find(|d| d.dst == r.reg && !gives(d, &value)) {
                None => "no instruction writes it".to_string(),
                Some(d) => {
                    let at = format!("`{}` at line {}:{}", d.what, d.line, d.col);
                    match &d.kind {
                        DefKind::Load {
                            name,
                            has_data: false,
                            ..
                        } => format!(
                            "{at} loads it from buffer `{name}`, which has no contents (declare it \
                             `buffer {name} from INPUT.ARRAY`)"
                        ),
                        DefKind::Load { width, .. } => {
                            format!("{at} loads {width} bytes per lane; a value is 1, 2, 4 or 8 bytes")
                        }
                        DefKind::Int { a, b, .. } => {
                            let src = [a, b].into_iter().find_map(|s| match s {
                                Src::Reg(x) if !value[*x as usize] => Some(*x),
                                _ => None,
                            });
                            format!(
                                "{at} computes it from `r{}`, which carries no value",
                                src.unwrap_or(r.reg)
                            )
                        }
                        DefKind::Opaque(why) => format!("{at} writes it without a value ({why})"),
                    }
                }
            };
            return Err(Diag::new(
                r.line,
                r.col,
                format!(
                    "`r{}` carries no value, so an expression cannot read it: {why}",
                    r.reg
                ),
            ));
        }
        // The registers whose values are needed: those expressions read, and the sources of
        // the integer ops that compute them.
        let mut needed = [false; N];
        for r in self.reads.iter().filter(|r| r.expr) {
            needed[r.reg as usize] = true;
        }
        loop {
            let mut changed = false;
            for d in &self.defs {
                if let (true, DefKind::Int { a, b, .. }) = (needed[d.dst as usize], &d.kind) {
                    for s in [a, b] {
                        if let Src::Reg(x) = s {
                            changed |= !needed[*x as usize];
                            needed[*x as usize] = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Slots in order of first read.
        let mut slot = [u8::MAX; N];
        let mut slots = 0usize;
        for r in &self.reads {
            let reg = r.reg as usize;
            if !needed[reg] || slot[reg] != u8::MAX {
                continue;
            }
            if slots == MAX_VALUE_SLOTS {
                return Err(Diag::new(
                    r.line,
                    r.col,
                    format!(
                        "too many registers with values: `r{reg}` would be the {}th register \
                         whose value is read, the limit is MAX_VALUE_SLOTS = {MAX_VALUE_SLOTS}",
                        MAX_VALUE_SLOTS + 1
                    ),
                ));
            }
            slot[reg] = slots as u8;
            slots += 1;
        }
        let operand = |s: Src| match s {
            Src::Reg(x) => Operand::Slot(slot[x as usize]),
            Src::Expr(e) => Operand::Expr(e),
        };
        let mut ops = Vec::new();
        for d in &self.defs {
            if !needed[d.dst as usize] {
                continue;
            }
            let kind = match d.kind {
                DefKind::Load { buffer, width, .. } => ValueKind::Load { buffer, width },
                DefKind::Int { op, a, b } => ValueKind::Int {
                    op,
                    a: operand(a),
                    b: operand(b),
                },
                DefKind::Opaque(_) => continue,
            };
            ops.push(ValueOp {
                pc: d.item as u32,
                slot: slot[d.dst as usize],
                kind,
            });
        }
        for e in &mut self.exprs {
            for n in &mut e.nodes {
                if let ExprNode::Var(Var::Reg(r)) = n {
                    *r = slot[*r as usize];
                }
            }
        }
        Ok((ops, slots as u8))
    }

    /// Emits a memory instruction with its address expression (error at `line:col` when the
    /// expression table is full).
    pub(super) fn push_memory(
        &mut self,
        mut inst: Inst,
        expr: AddrExpr,
        line: usize,
        col: usize,
    ) -> PResult<()> {
        inst.addr = self.expr_index(line, col)?;
        self.exprs.push(expr);
        self.push_inst(inst);
        Ok(())
    }

    /// The kernel, from the checked header and the emitted program.
    pub(super) fn finish(mut self, h: Header) -> PResult<Kernel> {
        let (values, value_slots) = self.values()?;
        let kernel = Kernel {
            name: h.name,
            grid: h.grid,
            block: h.block,
            regs: h.regs,
            shared_bytes: h.shared_bytes,
            buffers: h.buffers,
            program: Program {
                items: self.items,
                exprs: self.exprs,
                branches: self.branches,
                pcs: Vec::new(),
                lane_masks: Vec::new(),
                values,
                value_slots,
            },
            per_cta: None,
        };
        kernel
            .validate()
            .map_err(|m| Diag::new(1, 1, format!("internal error: {m}")))?;
        Ok(kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::BUFFER_BASE;
    use crate::workload::program::{AluKind, Buffer, ExprNode, Item, LaneEnv, OpKind, Var, NO_REG};

    #[test]
    fn full_example() {
        let k = parse(EXAMPLE).unwrap();
        assert_eq!(k.name, "kmeans-1");
        assert_eq!((k.grid, k.block, k.regs, k.shared_bytes), (240, 256, 20, 4096));
        assert_eq!(
            k.buffers,
            vec![
                // Default (packed) placement: B right after A's 16 MiB.
                Buffer {
                    name: "A".into(),
                    base: 0x8000_0000,
                    bytes: 16 << 20,
                    extent: 16 << 20,
                    data: None,
                },
                Buffer {
                    name: "B".into(),
                    base: 0x8000_0000 + (16 << 20),
                    bytes: 4 << 20,
                    extent: 4 << 20,
                    data: None,
                },
            ]
        );
        let items = &k.program.items;
        assert_eq!(items.len(), 10);
        assert_eq!(items[0], Item::LoopStart { count: 34, end: 9 });
        assert_eq!(items[9], Item::LoopEnd { start: 0 });
        let inst = |i: usize| match items[i] {
            Item::Inst(x) => x,
            other => panic!("item {i} is {other:?}"),
        };
        let ld = inst(1);
        assert_eq!(
            (ld.op, ld.dst, ld.src, ld.addr, ld.width),
            (OpKind::LoadGlobal, 1, [NO_REG; 3], 0, 4)
        );
        let ld8 = inst(2);
        assert_eq!(
            (ld8.op, ld8.dst, ld8.addr, ld8.width),
            (OpKind::LoadGlobal, 2, 1, 8)
        );
        let add = inst(3);
        assert_eq!(
            (add.op, add.dst, add.src),
            (OpKind::Alu(AluKind::Simple), 3, [1, 2, NO_REG])
        );
        let sfu = inst(4);
        assert_eq!((sfu.op, sfu.dst, sfu.src), (OpKind::Sfu, 4, [3, NO_REG, NO_REG]));
        let st = inst(5);
        assert_eq!(
            (st.op, st.dst, st.src[0], st.addr),
            (OpKind::StoreGlobal, NO_REG, 4, 2)
        );
        let sts = inst(6);
        assert_eq!((sts.op, sts.src[0], sts.addr), (OpKind::StoreShared, 3, 3));
        assert_eq!(inst(7).op, OpKind::Barrier);
        let lds = inst(8);
        assert_eq!((lds.op, lds.dst, lds.addr), (OpKind::LoadShared, 5, 4));

        let ex = &k.program.exprs;
        assert_eq!(ex.len(), 5);
        assert_eq!(ex[0].base, BUFFER_BASE);
        assert_eq!(ex[1].base, k.buffers[1].base);
        assert_eq!(ex[3].base, 0);
        assert_eq!(ex[4].base, 0);
        // A[4*gtid + 4*gthreads*i] for tid 5, cta 3, i = 7.
        let e = env(5, 3, [7, 0, 0, 0]);
        let gtid = 3 * 256 + 5;
        let gthreads = 240 * 256;
        assert_eq!(ex[0].eval(&e), BUFFER_BASE + 4 * gtid + 4 * gthreads * 7);
        assert_eq!(ex[2].eval(&e), k.buffers[1].base + 4 * gtid);
        assert_eq!(ex[3].eval(&e), 4 * 5);
        assert_eq!(ex[4].eval(&e), 4 * (5 ^ 1));
        // rand: in range, deterministic, and varies with the thread and the loop counter.
        let r = |tid, i| ex[1].eval(&env(tid, 0, [i, 0, 0, 0])) - k.buffers[1].base;
        assert_eq!(r(1, 2), r(1, 2));
        let vals: Vec<u64> = (0..64).map(|t| r(t, 0)).collect();
        assert!(vals.iter().all(|&v| v % 8 == 0 && v < 8 * 65536));
        assert!(vals.iter().any(|&v| v != vals[0]));
        assert_ne!((0..16).map(|i| r(0, i)).collect::<Vec<_>>(), vec![r(0, 0); 16]);
        assert_eq!(k.program.dynamic_instructions(), 34 * 8);
        assert_eq!(k.total_warp_instructions(), 34 * 8 * 8 * 240);
    }

    #[test]
    fn nested_loops_indices() {
        let src = body(
            "add r1, r2\nloop a 2 {\n add r1, r1\n loop b 3 {\n  loop c 4 {\n   loop d 5 {\n\
             ld.global r3, A[a + b + c + d]\n   }\n  }\n  add r1, r1\n }\n}\nloop a 6 {\n bar\n}\n",
        );
        let k = parse(&src).unwrap();
        let items = &k.program.items;
        for (i, item) in items.iter().enumerate() {
            match *item {
                Item::LoopStart { end, .. } => {
                    assert_eq!(items[end as usize], Item::LoopEnd { start: i as u32 })
                }
                Item::LoopEnd { start } => {
                    assert!(matches!(items[start as usize], Item::LoopStart { end, .. } if end as usize == i))
                }
                Item::Inst(_) => {}
            }
        }
        assert_eq!(
            k.program.dynamic_instructions(),
            1 + 2 * (1 + 3 * (4 * 5 + 1)) + 6
        );
        let e = LaneEnv {
            loops: [1, 2, 3, 4],
            ..Default::default()
        };
        assert_eq!(k.program.exprs[0].eval(&e) - k.buffers[0].base, 10);
        assert_eq!(
            k.program.exprs[0].nodes[..4],
            [
                ExprNode::Var(Var::Loop(0)),
                ExprNode::Var(Var::Loop(1)),
                ExprNode::Add,
                ExprNode::Var(Var::Loop(2))
            ]
        );
    }

    /// The parser places buffers as GPGPU-Sim 3.2.2's `gpu_malloc` does (packed placement
    /// 1): from GLOBAL_HEAP_START, each size rounded up to 256 B.
    #[test]
    fn buffer_bases_packed_placement_1() {
        let k = parse("kernel k\ngrid 1\nblock 1\nbuffer A 1\nbuffer B 1M\nbuffer C 3M\nbuffer D 5\nbar\n")
            .unwrap();
        let mib = 1u64 << 20;
        let bases: Vec<u64> = k.buffers.iter().map(|b| b.base).collect();
        assert_eq!(
            bases,
            vec![
                0x8000_0000,
                0x8000_0000 + 256,
                0x8000_0000 + 256 + mib,
                0x8000_0000 + 256 + 4 * mib
            ]
        );
    }

    /// The old layout, kept as `buffer_placement = spread` (placement 1).
    #[test]
    fn buffer_bases_spread_placement_1() {
        use crate::config::BufferPlacement;
        use crate::workload::placement::{place, Placement, SPREAD_SKEW};
        let k = parse("kernel k\ngrid 1\nblock 1\nbuffer A 1\nbuffer B 1M\nbuffer C 3M\nbuffer D 5\nbar\n")
            .unwrap();
        let spread = Placement {
            scheme: BufferPlacement::Spread,
            index: 1,
        };
        let k = place(&k, spread).unwrap();
        let mib = 1u64 << 20;
        let bases: Vec<u64> = k.buffers.iter().map(|b| b.base).collect();
        assert_eq!(
            bases,
            vec![
                0x1000_0000,
                0x1000_0000 + 2 * mib + SPREAD_SKEW,
                // B ends past 3 MiB, so C's region starts at 4 MiB + the 1 MiB gap.
                0x1000_0000 + 5 * mib + 2 * SPREAD_SKEW,
                0x1000_0000 + 10 * mib + 3 * SPREAD_SKEW
            ]
        );
    }

    #[test]
    fn too_many_memory_instructions() {
        let mut src = body("");
        for _ in 0..=u16::MAX as usize {
            src.push_str("ld.shared r1, [0]\n");
        }
        let k = parse(&src).unwrap();
        assert_eq!(k.program.exprs.len(), 65536);
        src.push_str("ld.shared r1, [0]\n");
        let e = err(&src);
        assert_eq!(e.line, 5 + 65536);
        assert!(e.message.contains("too many memory instructions"), "{e}");
    }
}

/// Values: which registers carry them, their semantics when a warp runs, and the errors.
#[cfg(test)]
mod value_tests {
    use super::super::test_util::*;
    use crate::workload::program::{
        Flow, Item, Kernel, LaneEnv, OpKind, Values, MAX_LOOP_DEPTH, NO_REG, WARP_LANES,
    };

    /// Runs warp `warp` of CTA `cta` functionally (fetch order = issue order) and returns
    /// each register's per-lane values, for the registers that have a value slot.
    fn run(k: &Kernel, cta: u32, warp: u32) -> impl Fn(u8) -> [i64; WARP_LANES] {
        let p = &k.program;
        let lanes = (k.block - warp * 32).min(32);
        let mut flow = Flow::default();
        flow.launch(lanes);
        let mut v = Values::default();
        v.reset(p.value_slots as usize);
        let env = LaneEnv {
            tid: warp as i64 * 32,
            cta: cta as i64,
            block: k.block as i64,
            grid: k.grid as i64,
            loops: [0; MAX_LOOP_DEPTH],
        };
        while let Some(f) = flow.next(p) {
            let e = LaneEnv {
                loops: f.loops,
                ..env
            };
            if f.inst.op == OpKind::Branch {
                flow.resolve_in(p, f.pc, &e, v.file());
            }
            v.exec(p, &f.inst, f.pc, &e, lanes as usize, f.mask, &k.buffers);
        }
        let file = v.file().to_vec();
        let slots: Vec<(u8, u8)> = p
            .values
            .iter()
            .map(|op| match p.items[op.pc as usize] {
                Item::Inst(i) => (i.dst, op.slot),
                _ => unreachable!(),
            })
            .collect();
        move |r: u8| {
            let s = slots
                .iter()
                .find(|(d, _)| *d == r)
                .expect("register has a slot")
                .1;
            file[s as usize]
        }
    }

    fn lanes(f: impl Fn(i64) -> i64) -> [i64; WARP_LANES] {
        std::array::from_fn(|l| f(l as i64))
    }

    #[test]
    fn integer_operations_compute_per_lane_values() {
        let k = parse(
            "kernel k\ngrid 2\nblock 64\nbuffer A 1M\n\
             mov r1, lane\nadd r2, r1, 3\nsub r3, r1, 40\nimul r4, r1, r1\nshl r5, r1, 2\n\
             shr r6, r3, 1\nand r7, r1, 6\nor r8, r1, 1\nxor r9, r1, 5\nmin r10, r1, 7\n\
             max r11, r1, 7\nsetp.lt r12, r1, 9\nsetp.ge.s32 r13, r1, 9\nmov r14, r1 * 2 + gtid\n\
             ld.global r20, A[r2 + r3 + r4]\nld.global r20, A[r5 + r6 + r7]\n\
             ld.global r20, A[r8 + r9 + r10]\nld.global r20, A[r11 + r12 + r13]\n\
             ld.global r20, A[r14]\n",
        )
        .unwrap();
        assert_eq!(k.program.value_slots, 14);
        let v = run(&k, 1, 1);
        assert_eq!(v(1), lanes(|l| l));
        assert_eq!(v(2), lanes(|l| l + 3));
        assert_eq!(v(3), lanes(|l| l - 40));
        assert_eq!(v(4), lanes(|l| l * l));
        assert_eq!(v(5), lanes(|l| l << 2));
        assert_eq!(v(6), lanes(|l| (l - 40) >> 1), "arithmetic shift keeps the sign");
        assert_eq!(v(7), lanes(|l| l & 6));
        assert_eq!(v(8), lanes(|l| l | 1));
        assert_eq!(v(9), lanes(|l| l ^ 5));
        assert_eq!(v(10), lanes(|l| l.min(7)));
        assert_eq!(v(11), lanes(|l| l.max(7)));
        assert_eq!(v(12), lanes(|l| (l < 9) as i64));
        assert_eq!(v(13), lanes(|l| (l >= 9) as i64));
        assert_eq!(v(14), lanes(|l| 2 * l + (64 + 32 + l)), "gtid of CTA 1, warp 1");
        // Expressions that read registers make them scoreboard sources.
        let Item::Inst(ld) = k.program.items[14] else {
            panic!()
        };
        assert_eq!((ld.op, ld.src), (OpKind::LoadGlobal, [2, 3, 4]));
        let Item::Inst(mov) = k.program.items[13] else {
            panic!()
        };
        assert_eq!(mov.src, [1, NO_REG, NO_REG]);
    }

    /// Values are written for the active lanes only; loop-carried values, per-lane loop
    /// bounds and `if` conditions read registers.
    #[test]
    fn values_under_divergence_and_loops() {
        let k = parse(&body(
            "mov r1, 100\nif lane < 4 {\n  mov r1, lane\n}\nmov r2, 0\nloop i 3 {\n  add r2, r2, i\n}\n\
             mov r3, 0\nloop j < r1 % 5 {\n  add r3, r3, 1\n}\nif r3 {\n  add r30, r30\n}\n\
             ld.global r9, A[r1 + r2 + r3]\n",
        ))
        .unwrap();
        let v = run(&k, 0, 0);
        assert_eq!(v(1), lanes(|l| if l < 4 { l } else { 100 }));
        assert_eq!(v(2), [3; WARP_LANES]);
        assert_eq!(v(3), lanes(|l| if l < 4 { l } else { 0 }));
        // Per warp: mov, if (32), mov (4 lanes), mov, 3 adds, mov, loop entry (32), the
        // iterations (lanes 1..4, 2..4, 3: add + back edge each), if (32), add (lanes 1..4),
        // load.
        assert_eq!(
            k.total_warp_instructions(),
            1 + 1 + 1 + 1 + 3 + 1 + 1 + 6 + 1 + 1 + 1
        );
        assert_eq!(
            k.total_thread_instructions(),
            Some(32 + 32 + 4 + 32 + 96 + 32 + 32 + 2 * (3 + 2 + 1) + 32 + 3 + 32)
        );
        // The branches wait for the registers their conditions read.
        let srcs: Vec<[u8; 3]> = k
            .program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Inst(x) if x.op == OpKind::Branch => Some(x.src),
                _ => None,
            })
            .collect();
        assert_eq!(
            srcs,
            vec![[NO_REG; 3], [1, NO_REG, NO_REG], [NO_REG; 3], [3, NO_REG, NO_REG]]
        );
    }

    /// Value loads read the buffer's initial contents, little-endian and sign-extended, 0
    /// past the end; a load's address reads the old value of its own destination.
    #[test]
    fn value_loads_read_initial_contents() {
        let k = parse(&body(
            "input S = seq(n=64, start=-5, step=3)\nbuffer V from S.values\n\
             ld.global r1, V[4*lane]\nld.global r2, V[4*(r1 + 5)]\nld.global.1 r3, V[4*lane]\n\
             ld.global.2 r4, V[4*lane + 2]\nld.global.8 r5, V[8*lane]\nmov r6, lane + 1\n\
             ld.global r6, V[4*r6]\nst.global V[0], r1\nld.global r7, V[0]\n\
             ld.global r20, A[r1 + r2 + r3]\nld.global r20, A[r4 + r5 + r6]\nld.global r20, A[r7]\n",
        ))
        .unwrap();
        assert_eq!(k.buffers[1].bytes, 256);
        let seq = |i: i64| if (0..64).contains(&i) { -5 + 3 * i } else { 0 };
        let v = run(&k, 0, 0);
        assert_eq!(v(1), lanes(|l| -5 + 3 * l));
        // Element 3l: past the 64 elements (l >= 22) a load reads 0.
        assert_eq!(v(2), lanes(|l| seq(3 * l)));
        assert_eq!(v(3), lanes(|l| (seq(l) as i8) as i64), "one byte, sign-extended");
        assert_eq!(v(4), lanes(|l| if seq(l) < 0 { -1 } else { 0 }), "upper half");
        assert_eq!(
            v(5),
            lanes(|l| (seq(2 * l) as u32 as i64) | (seq(2 * l + 1) << 32))
        );
        assert_eq!(v(6), lanes(|l| seq(l + 1)), "the address read the old r6");
        assert_eq!(v(7), [-5; WARP_LANES], "stores do not change what loads see");
        assert!(format!("{:?}", k.buffers[1]).contains("data: 256 bytes"));
    }

    #[test]
    fn value_errors() {
        check_err(
            &body("ld.global r2, A[4*gtid]\nld.global r3, A[4*r2]\n"),
            6,
            19,
            "`r2` carries no value, so an expression cannot read it: `ld.global` at line 5:1 \
             loads it from buffer `A`, which has no contents",
        );
        check_err(
            &body("if r7 < 3 {\nadd r1\n}\n"),
            5,
            4,
            "`r7` carries no value, so an expression cannot read it: no instruction writes it",
        );
        check_err(
            &body("mov r2, gtid\nsfu r2, r1\nld.global r3, A[r2]\n"),
            7,
            17,
            "`sfu` at line 6:1 writes it without a value (`sfu` computes no integer value)",
        );
        check_err(
            &body("ld.global r1, A[0]\nadd r2, r1, 4\nloop i < r2 {\nadd r3\n}\n"),
            7,
            10,
            "`add` at line 6:1 computes it from `r1`, which carries no value",
        );
        check_err(
            &body("mov r1, gtid\nadd r2, r1\nld.global r3, A[r2]\n"),
            7,
            17,
            "`add` takes 2 sources to compute a value, found 1",
        );
        check_err(
            &body("mov r1, gtid\nsetp r2, r1, 3\nld.global r3, A[r2]\n"),
            6,
            14,
            "`setp` computes a value only with a comparison suffix",
        );
        check_err(
            &body("mov r1, gtid\nadd.f32 r2, r1, r1\nld.global r3, A[r2]\n"),
            7,
            17,
            "`add.f32` is a floating-point operation",
        );
        check_err(
            &body("ld.shared r2, [4*tid]\nld.global r3, A[r2]\n"),
            6,
            17,
            "shared memory has no contents",
        );
        check_err(
            &body("input S = seq(n=8)\nbuffer V from S.values\nld.global.16 r2, V[0]\nld.global r3, V[r2]\n"),
            8,
            17,
            "`ld.global.16` at line 7:1 loads 16 bytes per lane",
        );
        check_err(
            &body("mov r1, gtid, 3\n"),
            5,
            9,
            "`mov` takes 1 source to compute a value, found 2",
        );
        check_err(&body("fma r1, r2, 3\n"), 5, 13, "expected a register");
        // Four registers do not fit the scoreboard's three sources.
        check_err(
            &body("mov r1, 1\nmov r2, 2\nmov r3, 3\nmov r4, 4\nld.global r5, A[r1 + r2 + r3 + r4]\n"),
            9,
            32,
            "`r4` is one register too many",
        );
        check_err(
            &body("mov r1, 1\nmov r2, 2\nmov r3, 3\nst.global A[r1 + r2 + r3], r9\n"),
            8,
            23,
            "`r3` is one register too many",
        );
        // A register counts once.
        assert!(parse(&body("mov r1, 1\nld.global r5, A[r1 + r1 + r1 + r1]\n")).is_ok());
        // More registers with values than slots.
        let mut many = String::new();
        for r in 1..=17 {
            many.push_str(&format!("mov r{r}, {r}\nld.global r100, A[r{r}]\n"));
        }
        check_err(&body(&many), 5 + 33, 19, "the limit is MAX_VALUE_SLOTS = 16");
        // Registers are per-lane names, not constants or loop variables.
        check_err(
            "kernel k\nbuffer A r1\n",
            2,
            10,
            "register `r1` cannot be used here",
        );
        check_err(&body("loop r2 4 {\nadd r1\n}\n"), 5, 6, "looks like a register");
        check_err(
            &body("ld.global r1, A[r300]\n"),
            5,
            17,
            "register `r300` out of range",
        );
    }

    /// A value computed in a loop from itself keeps its value (the greatest fixed point);
    /// registers that only feed timing need no slot and emit no value operation.
    #[test]
    fn value_analysis_fixed_point_and_slots() {
        let k = parse(&body(
            "mov r1, 0\nloop i 4 {\n  add r1, r1, 2\n  fma r7, r1, r1, r7\n}\nld.global r2, A[r1]\nadd r3, r2, r2\n",
        ))
        .unwrap();
        assert_eq!(k.program.value_slots, 1, "only r1 is read by an expression");
        assert_eq!(k.program.values.len(), 2, "the two writes of r1");
        assert_eq!(run(&k, 0, 0)(1), [8; WARP_LANES]);
        // Kernels without register reads are unchanged: no values, no slots.
        let k = parse(EXAMPLE).unwrap();
        assert!(k.program.values.is_empty() && k.program.value_slots == 0);
    }
}
