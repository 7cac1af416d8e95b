//! Lowering: builds the [`Kernel`] as the lines are parsed — buffer bases in the default
//! placement, the flat [`Item`] list with each loop's start and end linked, the table of
//! address expressions, and the highest register used.

use super::check::Header;
use super::{Diag, PResult};
use crate::workload::placement::Allocator;
use crate::workload::program::{
    AddrExpr, Branch, BranchKind, ExprNode, Inst, Item, Kernel, OpKind, Program, Reg, NO_REG,
};

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
    pub(super) fn finish(self, h: Header) -> PResult<Kernel> {
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
                    bytes: 16 << 20
                },
                Buffer {
                    name: "B".into(),
                    base: 0x8000_0000 + (16 << 20),
                    bytes: 4 << 20
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
