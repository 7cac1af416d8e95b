//! Instruction lines: the mnemonic table, register operands, and memory operands with their
//! address expressions.

use super::check::{sources, Scope};
use super::expr::{parse_expr, RegRead};
use super::lexer::{Cursor, Tok};
use super::lower::{DefKind, Src};
use super::parser::Parser;
use super::{show, Diag, PResult};
use crate::workload::program::{AddrExpr, AluKind, Inst, IntOp, OpKind, Reg};

const SIMPLE_ALU: [&str; 16] = [
    "alu", "add", "sub", "mul", "fma", "mad", "mov", "and", "or", "xor", "shl", "shr", "min", "max", "setp",
    "cvt",
];
const SFU_OPS: [&str; 8] = ["sfu", "sin", "cos", "ex2", "lg2", "rcp", "rsqrt", "sqrt"];

/// The double-precision class of an arithmetic mnemonic with a `.f64` suffix (`cvt.f64`,
/// `mov.f64`, `setp.f64` keep the simple class: 3.2.2 gives them no DP latency either).
fn dp_kind(base: &str) -> Option<AluKind> {
    match base {
        "add" | "sub" => Some(AluKind::DAdd),
        "min" | "max" => Some(AluKind::DMinMax),
        "mul" => Some(AluKind::DMul),
        "fma" | "mad" => Some(AluKind::DFma),
        "div" => Some(AluKind::DDiv),
        _ => None,
    }
}

/// Every keyword, for the message on an unknown one.
const KNOWN_LIST: &str = "directives: kernel grid block regs shared buffer loop if break; \
SP: alu add sub mul fma mad mov and or xor shl shr min max setp cvt cvt.rzi.s32.f32 \
cvt.rzi.u32.f32 imul idiv; \
SFU: sfu sin cos ex2 lg2 rcp rsqrt sqrt div.f64; \
double precision (SP): add.f64 sub.f64 min.f64 max.f64 mul.f64 fma.f64 mad.f64; memory: ld.global st.global ld.shared st.shared \
ld.tex ld.const; \
atomics: atom.global red.global; \
barrier: bar";

/// The integer operation a mnemonic computes on values (`setp` needs a comparison suffix).
fn int_op(base: &str, suffixes: &[&str]) -> Option<IntOp> {
    Some(match base {
        "add" => IntOp::Add,
        "sub" => IntOp::Sub,
        "mul" | "imul" => IntOp::Mul,
        "shl" => IntOp::Shl,
        "shr" => IntOp::Shr,
        "and" => IntOp::And,
        "or" => IntOp::Or,
        "xor" => IntOp::Xor,
        "min" => IntOp::Min,
        "max" => IntOp::Max,
        "mov" => IntOp::Mov,
        "setp" => match suffixes.first().copied() {
            Some("lt") => IntOp::Lt,
            Some("le") => IntOp::Le,
            Some("gt") => IntOp::Gt,
            Some("ge") => IntOp::Ge,
            Some("eq") => IntOp::Eq,
            Some("ne") => IntOp::Ne,
            _ => return None,
        },
        _ => return None,
    })
}

/// The conversion a `cvt.rzi.TYPE.TYPE` mnemonic computes (`suffixes` after `cvt`, starting
/// with `rzi`): only float-to-32-bit-integer from `f32` has a value; any other type pair is an
/// error (a plain `cvt` keeps its timing without a value).
fn cvt_rzi(word: &str, suffixes: &[&str]) -> Result<IntOp, String> {
    match suffixes {
        ["rzi", "s32", "f32"] => Ok(IntOp::CvtRziS32F32),
        ["rzi", "u32", "f32"] => Ok(IntOp::CvtRziU32F32),
        _ => Err(format!(
            "`{}`: the conversions that compute a value are `cvt.rzi.s32.f32` and \
             `cvt.rzi.u32.f32` (f32 to a 32-bit integer, rounding toward zero); write `cvt` \
             without `.rzi` for an instruction that only takes time",
            show(word)
        )),
    }
}

/// Mnemonics that may compute values, and so take expression operands.
const VALUE_OPS: [&str; 13] = [
    "add", "sub", "mul", "imul", "shl", "shr", "and", "or", "xor", "min", "max", "mov", "setp",
];

enum MemSpace {
    Global,
    Shared,
    /// Read-only spaces: a buffer read through the texture or the constant cache.
    Tex,
    Const,
}

impl Parser {
    /// An instruction whose mnemonic `word` is at `col`.
    pub(super) fn instruction(&mut self, word: &str, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        let mut parts = word.split('.');
        let base = parts.next().unwrap_or("");
        let suffixes: Vec<&str> = parts.collect();
        if suffixes.iter().any(|s| s.is_empty()) {
            return Err(Diag::new(
                line,
                col,
                format!("malformed mnemonic `{}`", show(word)),
            ));
        }
        let f64 = suffixes.contains(&"f64");
        let alu = if let (true, Some(kind)) = (f64, dp_kind(base)) {
            // A `.f64` type selects the double-precision timing, as the PTX type does in
            // GPGPU-Sim 3.2.2 (`set_opcode_and_latency`, `F64_TYPE`).
            Some(OpKind::Alu(kind))
        } else if base == "div" {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "`{}`: only `div.f64` is an instruction (write `idiv` for an integer divide, \
                     `rcp` and a multiply for a single-precision one)",
                    show(word)
                ),
            ));
        } else if SIMPLE_ALU.contains(&base) {
            Some(OpKind::Alu(AluKind::Simple))
        } else if base == "imul" {
            Some(OpKind::Alu(AluKind::IMul))
        } else if base == "idiv" {
            Some(OpKind::Alu(AluKind::IDiv))
        } else if SFU_OPS.contains(&base) {
            Some(OpKind::Sfu)
        } else {
            None
        };
        if let Some(op) = alu {
            // Type/modifier suffixes (`add.f32`, `setp.lt`) do not change the timing.
            return self.alu(op, word, base, &suffixes, cur, col);
        }
        match base {
            "bar" => {
                if !(suffixes.is_empty() || suffixes == ["sync"]) {
                    return Err(Diag::new(
                        line,
                        col,
                        format!("expected `bar` or `bar.sync`, found `{}`", show(word)),
                    ));
                }
                cur.expect_end()?;
                self.decls.barrier_allowed(line, col)?;
                self.low.push_inst(Inst::new(OpKind::Barrier));
                Ok(())
            }
            "ld" | "st" => {
                let space = match suffixes.first() {
                    Some(&"global") => MemSpace::Global,
                    Some(&"shared") => MemSpace::Shared,
                    Some(&"tex") if base == "ld" => MemSpace::Tex,
                    Some(&"const") if base == "ld" => MemSpace::Const,
                    Some(&s @ ("tex" | "const")) => {
                        return Err(Diag::new(
                            line,
                            col,
                            format!("`st.{s}`: {s} memory is read-only (use `st.global`)"),
                        ))
                    }
                    _ => {
                        return Err(Diag::new(
                            line,
                            col,
                            format!(
                                "expected `{base}.global` or `{base}.shared`{}, found `{}`",
                                if base == "ld" {
                                    " (or `ld.tex`, `ld.const`)"
                                } else {
                                    ""
                                },
                                show(word)
                            ),
                        ))
                    }
                };
                let width = match suffixes.get(1..).unwrap_or(&[]) {
                    [] => 4,
                    [w] => match *w {
                        "1" => 1,
                        "2" => 2,
                        "4" => 4,
                        "8" => 8,
                        "16" => 16,
                        _ => {
                            return Err(Diag::new(
                                line,
                                col,
                                format!(
                                    "expected a width suffix .1 .2 .4 .8 or .16 (bytes per lane), \
                                     found `.{}`",
                                    show(w)
                                ),
                            ))
                        }
                    },
                    _ => {
                        return Err(Diag::new(
                            line,
                            col,
                            format!("malformed memory mnemonic `{}`", show(word)),
                        ))
                    }
                };
                self.memory(base == "ld", space, width, cur)
            }
            "atom" | "red" => self.atomic(base, word, &suffixes, cur, col),
            _ => Err(Diag::new(
                line,
                col,
                format!(
                    "unknown instruction or directive `{}`; known: {KNOWN_LIST}",
                    show(word)
                ),
            )),
        }
    }

    /// `OP rD[, A[, B[, C]]]`: sources are registers, or per-lane expressions for the
    /// integer ops that compute values (`add r4, r2, gtid`, `mov r1, 4 * gtid`).
    fn alu(
        &mut self,
        op: OpKind,
        word: &str,
        base: &str,
        suffixes: &[&str],
        cur: &mut Cursor<'_>,
        col: usize,
    ) -> PResult<()> {
        let line = cur.line;
        // `cvt.rzi.{s32,u32}.f32`: a value from one register, read as an f32.
        let cvt = if base == "cvt" && suffixes.first() == Some(&"rzi") {
            Some(cvt_rzi(word, suffixes).map_err(|m| Diag::new(line, col, m))?)
        } else {
            None
        };
        let mut inst = Inst::new(op);
        inst.dst = cur.expect_reg()?;
        let valued = VALUE_OPS.contains(&base);
        let mut direct: Vec<Reg> = Vec::new();
        let mut operands: Vec<Src> = Vec::new();
        let mut reads: Vec<RegRead> = Vec::new();
        let mut expr_reads: Vec<RegRead> = Vec::new();
        let mut expr_col = None;
        while cur.eat_punct(',') {
            if operands.len() == 3 {
                return Err(cur.err(format!("too many source operands for `{base}`: at most 3")));
            }
            if cvt.is_some() && !cur.at_lone_register() {
                // The source is f32 bits in a register; an expression is an integer.
                return Err(cur.err(format!(
                    "`{}` converts the f32 in a register: its source must be one register like \
                     `r3`, not an expression",
                    show(word)
                )));
            }
            if !valued || cur.at_lone_register() {
                let rcol = cur.col();
                let r = cur.expect_reg()?;
                direct.push(r);
                reads.push((r, rcol));
                operands.push(Src::Reg(r));
            } else {
                let ecol = cur.col();
                expr_col.get_or_insert(ecol);
                let nodes = parse_expr(cur, Scope::Addr(&self.decls.loops), &mut expr_reads)?;
                let e = self.low.lane_expr(nodes, line, ecol)?;
                operands.push(Src::Expr(e));
            }
        }
        if cur.peek().is_some() {
            return Err(cur.expected("`,` or end of line"));
        }
        let float = suffixes.iter().any(|s| matches!(*s, "f16" | "f32" | "f64"));
        // The conversions read an f32; every other value op is on integers.
        let iop = cvt.or_else(|| int_op(base, suffixes).filter(|_| !float));
        let arity = iop.map_or(2, IntOp::arity);
        let kind = match iop {
            Some(iop) if operands.len() == arity => DefKind::Int {
                op: iop,
                a: operands[0],
                b: operands[arity - 1],
            },
            _ if cvt.is_some() => {
                return Err(Diag::new(
                    line,
                    col,
                    format!(
                        "`{}` takes 1 source register, found {}",
                        show(word),
                        operands.len()
                    ),
                ))
            }
            _ => {
                let why = if !valued {
                    format!("`{base}` computes no integer value")
                } else if float {
                    format!("`{}` is a floating-point operation", show(word))
                } else if iop.is_none() {
                    "`setp` computes a value only with a comparison suffix: `setp.lt` `.le` `.gt` \
                     `.ge` `.eq` `.ne`"
                        .to_string()
                } else {
                    format!(
                        "`{base}` takes {arity} source{} to compute a value, found {}",
                        if arity == 1 { "" } else { "s" },
                        operands.len()
                    )
                };
                if let Some(ecol) = expr_col {
                    // An expression operand only makes sense in a value computation.
                    return Err(Diag::new(
                        line,
                        ecol,
                        format!("`{}` has an expression operand but {why}", show(word)),
                    ));
                }
                DefKind::Opaque(why)
            }
        };
        inst.src = sources(&direct, &expr_reads, line)?;
        self.low.push_inst(inst);
        self.low.def(inst.dst, line, col, word, kind);
        self.low.reads(line, &reads, false);
        self.low.reads(line, &expr_reads, true);
        Ok(())
    }

    /// `ld.SPACE rD, ADDR` or `st.SPACE ADDR, rS`.
    fn memory(&mut self, load: bool, space: MemSpace, width: u8, cur: &mut Cursor<'_>) -> PResult<()> {
        let op = match (load, &space) {
            (true, MemSpace::Global) => OpKind::LoadGlobal,
            (false, MemSpace::Global) => OpKind::StoreGlobal,
            (true, MemSpace::Shared) => OpKind::LoadShared,
            (false, MemSpace::Shared) => OpKind::StoreShared,
            (_, MemSpace::Tex) => OpKind::LoadTex,
            (_, MemSpace::Const) => OpKind::LoadConst,
        };
        let line = cur.line;
        let mnemonic_col = cur.toks.first().map_or(1, |t| t.col);
        let mut inst = Inst::new(op);
        inst.width = width;
        if load {
            inst.dst = cur.expect_reg()?;
            cur.expect_punct(',')?;
        }
        let mut reads = Vec::new();
        let (expr, buffer) = self.address(&space, cur, &mut reads)?;
        let mut direct = Vec::new();
        if !load {
            cur.expect_punct(',')?;
            direct.push(cur.expect_reg()?);
        }
        cur.expect_end()?;
        inst.src = sources(&direct, &reads, line)?;
        self.low.push_memory(inst, expr, line, cur.col())?;
        self.low.reads(line, &reads, true);
        if load {
            let what = match (&space, width) {
                (MemSpace::Global, 4) => "ld.global".to_string(),
                (MemSpace::Global, w) => format!("ld.global.{w}"),
                (MemSpace::Shared, _) => "ld.shared".to_string(),
                (MemSpace::Tex, 4) => "ld.tex".to_string(),
                (MemSpace::Tex, w) => format!("ld.tex.{w}"),
                (MemSpace::Const, 4) => "ld.const".to_string(),
                (MemSpace::Const, w) => format!("ld.const.{w}"),
            };
            let kind = match buffer {
                Some(i) => {
                    let b = &self.decls.buffers[i].0;
                    DefKind::Load {
                        buffer: i as u16,
                        name: b.name.clone(),
                        width,
                        has_data: b.data.is_some(),
                    }
                }
                None => DefKind::Opaque("shared memory has no contents".to_string()),
            };
            self.low.def(inst.dst, line, mnemonic_col, &what, kind);
        }
        Ok(())
    }

    /// `BUFFER[EXPR]` (global; with the buffer's index) or `[EXPR]` (shared); the registers
    /// the expression reads go to `reads`.
    fn address(
        &self,
        space: &MemSpace,
        cur: &mut Cursor<'_>,
        reads: &mut Vec<RegRead>,
    ) -> PResult<(AddrExpr, Option<usize>)> {
        let (base, buffer) = match space {
            MemSpace::Global | MemSpace::Tex | MemSpace::Const => {
                let (name, ncol) = cur.expect_ident("a buffer name like `A[…]`")?;
                let (i, base) = self.decls.buffer_index(name, cur.line, ncol)?;
                (base, Some(i))
            }
            MemSpace::Shared => {
                if matches!(cur.peek_tok(), Some(Tok::Ident(_))) {
                    return Err(cur.expected("`[` (shared addresses take no buffer name)"));
                }
                (0, None)
            }
        };
        cur.expect_punct('[')?;
        let nodes = parse_expr(cur, Scope::Addr(&self.decls.loops), reads)?;
        if !cur.is_punct(']') {
            return Err(cur.expected("`]` or an operator"));
        }
        cur.bump();
        Ok((
            AddrExpr {
                base,
                nodes,
                lanes: None,
            },
            buffer,
        ))
    }
}

/// Operation suffixes of `atom` / `red`: all timed alike (GPGPU-Sim 3.2.2 performs every
/// atomic as one read-modify-write at the L2), so they only document the kernel.
const ATOMIC_OPS: [&str; 11] = [
    "add", "sub", "inc", "dec", "min", "max", "and", "or", "xor", "exch", "cas",
];

impl Parser {
    /// `atom.global[.OP][.W] rD, BUF[ADDR][, rS[, rS]]` or `red.global[.OP][.W] BUF[ADDR][,
    /// rS[, rS]]`: a global atomic (`OpKind::AtomGlobal`), 4 or 8 bytes per lane. `atom`'s
    /// destination receives the old value in the real kernel; here it is a scoreboard
    /// dependency only (it carries no value). `red` returns nothing.
    fn atomic(
        &mut self,
        base: &str,
        word: &str,
        suffixes: &[&str],
        cur: &mut Cursor<'_>,
        col: usize,
    ) -> PResult<()> {
        let line = cur.line;
        let err = |msg: String| Err(Diag::new(line, col, msg));
        match suffixes.first() {
            Some(&"global") => {}
            Some(&"shared") => {
                return err(format!(
                    "`{}`: shared-memory atomics are modelled as `ld.shared` + `st.shared` \
                     (only global atomics are timed at the L2)",
                    show(word)
                ))
            }
            _ => return err(format!("expected `{base}.global`, found `{}`", show(word))),
        }
        let mut rest = &suffixes[1..];
        if let Some(op) = rest.first().filter(|s| s.parse::<u8>().is_err()) {
            if !ATOMIC_OPS.contains(op) {
                return err(format!(
                    "unknown atomic operation `.{}`; known: {}",
                    show(op),
                    ATOMIC_OPS.join(" ")
                ));
            }
            rest = &rest[1..];
        }
        let width = match rest {
            [] => 4,
            ["4"] => 4,
            ["8"] => 8,
            [w] => {
                return err(format!(
                    "an atomic is 4 or 8 bytes per lane: expected `.4` or `.8`, found `.{}`",
                    show(w)
                ))
            }
            _ => return err(format!("malformed atomic mnemonic `{}`", show(word))),
        };
        let mut inst = Inst::new(OpKind::AtomGlobal);
        inst.width = width;
        if base == "atom" {
            inst.dst = cur.expect_reg()?;
            cur.expect_punct(',')?;
        } else if cur.at_lone_register() {
            return Err(cur.err(format!(
                "`{}` returns nothing, so it takes no destination: `red.global BUF[ADDR], rS` \
                 (`atom.global rD, BUF[ADDR], rS` returns the old value)",
                show(word)
            )));
        }
        let mut reads = Vec::new();
        let (expr, _) = self.address(&MemSpace::Global, cur, &mut reads)?;
        let mut direct = Vec::new();
        while cur.eat_punct(',') {
            if direct.len() == 2 {
                return Err(cur.err(format!(
                    "too many source operands for `{base}`: at most 2 registers after the address"
                )));
            }
            direct.push(cur.expect_reg()?);
        }
        cur.expect_end()?;
        inst.src = sources(&direct, &reads, line)?;
        self.low.push_memory(inst, expr, line, cur.col())?;
        self.low.reads(line, &reads, true);
        if base == "atom" {
            self.low.def(
                inst.dst,
                line,
                col,
                word,
                DefKind::Opaque("an atomic's old value is not modelled".to_string()),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    #[test]
    fn operand_errors() {
        check_err(
            &body("add x, r1\n"),
            5,
            5,
            "expected a register like `r3`, found `x`",
        );
        // An expression source needs a value computation of the right arity.
        check_err(
            &body("add r1, 5\n"),
            5,
            9,
            "`add` has an expression operand but `add` takes 2 sources to compute a value, found 1",
        );
        check_err(
            &body("sfu r1, 5\n"),
            5,
            9,
            "expected a register like `r3`, found `5`",
        );
        check_err(
            &body("add\n"),
            5,
            4,
            "expected a register like `r3`, found end of line",
        );
        check_err(&body("add r255\n"), 5, 5, "out of range");
        check_err(
            &body("add r1, r2, r3, r4, r5\n"),
            5,
            21,
            "too many source operands",
        );
        check_err(
            &body("add r1 r2\n"),
            5,
            8,
            "expected `,` or end of line, found `r2`",
        );
        check_err(&body("add r1,\n"), 5, 8, "found end of line");
        check_err(
            &body("frob r1\n"),
            5,
            1,
            "unknown instruction or directive `frob`",
        );
        check_err(&body("frob r1\n"), 5, 1, "ld.global");
        check_err(
            &body("ld.local r1, A[0]\n"),
            5,
            1,
            "expected `ld.global` or `ld.shared`",
        );
        check_err(&body("ld.global.3 r1, A[0]\n"), 5, 1, "width suffix");
        check_err(&body("ld.local r1, A[0]\n"), 5, 1, "(or `ld.tex`, `ld.const`)");
        check_err(
            &body("st.tex A[0], r1\n"),
            5,
            1,
            "`st.tex`: tex memory is read-only",
        );
        check_err(
            &body("st.const.8 A[0], r1\n"),
            5,
            1,
            "`st.const`: const memory is read-only",
        );
        check_err(&body("ld.tex.3 r1, A[0]\n"), 5, 1, "width suffix");
        check_err(&body("ld.const r1, [0]\n"), 5, 14, "expected a buffer name");
        check_err(&body("ld.tex r1, C[tid]\n"), 5, 12, "unknown buffer `C`");
        check_err(&body("ld.global r1 A[0]\n"), 5, 14, "expected `,`");
        check_err(
            &body("ld.global r1, C[0]\n"),
            5,
            15,
            "unknown buffer `C`; declared buffers: A",
        );
        check_err(&body("ld.global r1, [0]\n"), 5, 15, "expected a buffer name");
        check_err(
            &body("ld.shared r1, A[0]\n"),
            5,
            15,
            "shared addresses take no buffer name",
        );
        check_err(&body("st.global A[0]\n"), 5, 15, "expected `,`");
        check_err(&body("st.shared [0], x\n"), 5, 16, "expected a register");
        check_err(
            &body("ld.global r1, A[0] r2\n"),
            5,
            20,
            "expected end of line, found `r2`",
        );
        check_err(&body("ld.global r1, A[0\n"), 5, 18, "expected `]` or an operator");
        check_err(&body("bar r1\n"), 5, 5, "expected end of line");
        check_err(&body("bar.wait\n"), 5, 1, "expected `bar` or `bar.sync`");
        check_err(&body("add r1, r2 $\n"), 5, 12, "unexpected character `$`");
        check_err(
            &body("[ r1\n"),
            5,
            1,
            "expected a directive or an instruction, found `[`",
        );
        check_err(
            "kernel k\ngrid 1\nblock 1\nbar\nld.global r1, A[0]\n",
            5,
            15,
            "no buffers are declared",
        );
    }
}

#[cfg(test)]
mod atomic_tests {
    use super::super::test_util::*;
    use crate::workload::program::{Item, OpKind, NO_REG};

    #[test]
    fn atomics_parse_to_the_global_atomic_kind() {
        let k = parse(&body(
            "atom.global r1, A[4*tid]\natom.global.add.8 r2, A[8*tid], r1\n\
             red.global.max A[0], r3\nred.global A[tid]\n",
        ))
        .unwrap();
        let insts: Vec<_> = k
            .program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Inst(x) => Some(*x),
                _ => None,
            })
            .collect();
        assert!(insts.iter().all(|i| i.op == OpKind::AtomGlobal));
        assert_eq!((insts[0].dst, insts[0].width), (1, 4));
        assert_eq!((insts[1].dst, insts[1].width, insts[1].src[0]), (2, 8, 1));
        assert_eq!((insts[2].dst, insts[2].src[0]), (NO_REG, 3));
        assert_eq!((insts[3].dst, insts[3].src), (NO_REG, [NO_REG; 3]));
    }

    #[test]
    fn atomic_errors_point_at_line_and_column() {
        check_err(&body("atom r1, A[0]\n"), 5, 1, "expected `atom.global`");
        check_err(&body("red.local A[0]\n"), 5, 1, "expected `red.global`");
        check_err(
            &body("atom.shared r1, [0]\n"),
            5,
            1,
            "shared-memory atomics are modelled as `ld.shared` + `st.shared`",
        );
        check_err(
            &body("atom.global.foo r1, A[0]\n"),
            5,
            1,
            "unknown atomic operation `.foo`; known: add sub inc dec",
        );
        check_err(
            &body("atom.global.2 r1, A[0]\n"),
            5,
            1,
            "an atomic is 4 or 8 bytes per lane",
        );
        check_err(
            &body("atom.global.add.4.4 r1, A[0]\n"),
            5,
            1,
            "malformed atomic mnemonic",
        );
        check_err(
            &body("atom.global A[0]\n"),
            5,
            13,
            "expected a register like `r3`, found `A`",
        );
        check_err(&body("atom.global r1 A[0]\n"), 5, 16, "expected `,`");
        check_err(&body("atom.global r1, [0]\n"), 5, 17, "expected a buffer name");
        check_err(&body("atom.global r1, C[0]\n"), 5, 17, "unknown buffer `C`");
        check_err(
            &body("red.global r1, A[0]\n"),
            5,
            12,
            "returns nothing, so it takes no destination",
        );
        check_err(
            &body("red.global A[0], r1, r2, r3\n"),
            5,
            26,
            "too many source operands for `red`",
        );
        check_err(&body("red.global A[0], 5\n"), 5, 18, "expected a register");
        check_err(
            &body("red.global A[0] r1\n"),
            5,
            17,
            "expected end of line, found `r1`",
        );
        // The old value is a scoreboard dependency, not a value an address may use.
        check_err(
            &body("atom.global r1, A[0]\nld.global r2, A[4*r1]\n"),
            6,
            19,
            "`atom.global` at line 5:1 writes it without a value (an atomic's old value is not modelled)",
        );
    }
}

#[cfg(test)]
mod double_precision_tests {
    use super::super::test_util::*;
    use crate::workload::program::{AluKind, Item, OpKind, Pipe};

    /// `.f64` on arithmetic picks 3.2.2's DP class (ADD, MAX, MUL, MAD, DIV); conversions,
    /// moves and compares keep the simple class; `div.f64` runs on the SFU.
    #[test]
    fn f64_arithmetic_selects_the_double_precision_classes() {
        let k = parse(&body(
            "add.f64 r1, r2, r3\nsub.f64 r1, r2, r3\nmax.f64 r1, r2, r3\nmul.f64 r1, r2, r3\n\
             fma.f64 r1, r2, r3, r4\nmad.f64 r1, r2, r3, r4\ndiv.f64 r1, r2, r3\n\
             cvt.f64 r1, r2\nsetp.lt.f64 r1, r2, r3\nadd.f32 r1, r2, r3\n",
        ))
        .unwrap();
        let ops: Vec<_> = k
            .program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Inst(x) => Some(x.op),
                _ => None,
            })
            .collect();
        use AluKind::*;
        let want = [
            DAdd, DAdd, DMinMax, DMul, DFma, DFma, DDiv, Simple, Simple, Simple,
        ];
        assert_eq!(ops, want.map(OpKind::Alu).to_vec());
        assert_eq!(OpKind::Alu(DDiv).pipe(), Pipe::Sfu);
        assert_eq!(OpKind::Alu(DFma).pipe(), Pipe::Sp);
        assert_eq!(
            want.map(|k| k.dp_index()),
            [
                Some(0),
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(3),
                Some(4),
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn div_without_f64_is_an_error_that_says_what_to_write() {
        check_err(
            &body("div r1, r2, r3\n"),
            5,
            1,
            "only `div.f64` is an instruction",
        );
        check_err(&body("div.f32 r1, r2, r3\n"), 5, 1, "write `idiv`");
    }
}

#[cfg(test)]
mod cvt_tests {
    use super::super::test_util::*;
    use crate::workload::program::{
        AluKind, IntOp, Item, Kernel, LaneStack, OpKind, ValueKind, Values, MAX_EXPR_STACK, NO_REG,
        WARP_LANES,
    };

    /// f32 values, one per lane of a 32-thread CTA: 24 lanes `l + 0.75`, then the edge cases.
    fn lane_floats() -> [f32; 32] {
        let mut v: [f32; 32] = std::array::from_fn(|l| l as f32 + 0.75);
        let edge = [
            -2.7,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            5e9,
            -0.0,
            1e-40, // subnormal
            3e9,
        ];
        v[24..].copy_from_slice(&edge);
        v
    }

    /// Parses `src` with `floats` as the raw f32 file `f.bin` beside it (a directory per
    /// call: tests run in parallel).
    fn parse_with_floats(src: &str, floats: &[f32]) -> Kernel {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mascar-cvt-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bytes: Vec<u8> = floats.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(dir.join("f.bin"), bytes).unwrap();
        let k = super::super::parse_kernel_file(src, &dir.join("k.kern")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::remove_dir_all(&dir).unwrap();
        k
    }

    /// The per-lane addresses of every memory instruction of the one warp of `k`, by pc, as
    /// the functional walk gives them.
    fn addresses(k: &Kernel) -> Vec<(u32, [u64; WARP_LANES])> {
        let p = &k.program;
        let mut values = Values::default();
        let mut stack: LaneStack = [[0; WARP_LANES]; MAX_EXPR_STACK];
        let mut out = Vec::new();
        p.walk(
            &k.warp_start_env(0, 0),
            32,
            &k.buffers,
            &mut values,
            |f, env, vals| {
                if f.inst.op.is_memory() {
                    let mut a = [0u64; WARP_LANES];
                    p.exprs[f.inst.addr as usize].eval_lanes_in(env, vals.file(), 32, &mut stack, &mut a);
                    out.push((f.pc, a));
                }
            },
        );
        out
    }

    /// `ld.global r1, X[4*gtid]` from an f32 input, `cvt.rzi.{u32,s32}.f32`, then addresses
    /// `Y[4*r2]`: each lane's address is Y's base plus 4 × the truncated, saturated float.
    #[test]
    fn cvt_rzi_turns_a_loaded_f32_into_an_address() {
        let src = body(
            "input F = file(path=\"f.bin\", type=f32)\nbuffer X from F.values\nbuffer Y 4K\n\
             ld.global r1, X[4*gtid]\ncvt.rzi.u32.f32 r2, r1\nld.global r3, Y[4*r2]\n\
             cvt.rzi.s32.f32 r4, r1\nld.global r5, Y[4*r4]\n",
        );
        let floats = lane_floats();
        let k = parse_with_floats(&src, &floats);
        let y = k.buffers.iter().find(|b| b.name == "Y").unwrap().base;
        let insts: Vec<_> = k
            .program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Inst(x) => Some(*x),
                _ => None,
            })
            .collect();
        // The conversions time as every cvt, read their source and feed the loads' scoreboard.
        for (i, dst) in [(1, 2), (3, 4)] {
            assert_eq!(insts[i].op, OpKind::Alu(AluKind::Simple));
            assert_eq!((insts[i].dst, insts[i].src), (dst, [1, NO_REG, NO_REG]));
            assert_eq!(insts[i + 1].src, [dst, NO_REG, NO_REG]);
        }
        let ops: Vec<_> = k.program.values.iter().map(|v| v.kind).collect();
        assert!(matches!(ops[1], ValueKind::Int { op: IntOp::CvtRziU32F32, a, b } if a == b));
        assert!(matches!(
            ops[2],
            ValueKind::Int {
                op: IntOp::CvtRziS32F32,
                ..
            }
        ));
        assert_eq!(k.program.value_slots, 3, "r1 r2 r4");
        let want_u: [i64; 32] = std::array::from_fn(|l| {
            if l < 24 {
                l as i64
            } else {
                [0, 0, u32::MAX as i64, 0, u32::MAX as i64, 0, 0, 3_000_000_000][l - 24]
            }
        });
        let (smin, smax) = (i32::MIN as i64, i32::MAX as i64);
        let want_s: [i64; 32] = std::array::from_fn(|l| {
            if l < 24 {
                l as i64
            } else {
                [-2, 0, smax, smin, smax, 0, 0, smax][l - 24]
            }
        });
        let addrs = addresses(&k);
        assert_eq!(addrs.len(), 3);
        let at =
            |want: &[i64; 32]| -> [u64; 32] { std::array::from_fn(|l| y.wrapping_add((4 * want[l]) as u64)) };
        assert_eq!(addrs[1].1, at(&want_u), "Y[4*r2], r2 = cvt.rzi.u32.f32");
        assert_eq!(addrs[2].1, at(&want_s), "Y[4*r4], r4 = cvt.rzi.s32.f32");
        // The functional walk counts them as issued instructions.
        assert_eq!(k.total_warp_instructions(), 5);
    }

    /// A converted value as a per-lane loop bound and an `if` condition; the conversion's
    /// source may also come from integer ops (the bits are what they are).
    #[test]
    fn cvt_rzi_values_drive_conditions_and_loop_bounds() {
        let src = body(
            "input F = file(path=\"f.bin\", type=f32)\nbuffer X from F.values\n\
             ld.global r1, X[4*lane]\ncvt.rzi.s32.f32 r2, r1\nloop i < r2 % 4 {\n  add r3, r3\n}\n\
             if r2 < 3 {\n  add r4, r4\n}\n",
        );
        let k = parse_with_floats(&src, &lane_floats());
        // r2: l on lanes 0..24, then -2 0 MAX MIN MAX 0 0 MAX. Trip counts r2 % 4
        // (Euclidean): 0 on 10 lanes, 1 on 6, 2 on 7, 3 on 9; so iterations of 22, 16 and 9
        // lanes. `r2 < 3` holds on lanes 0, 1, 2 and on 5 of the 8 edge cases.
        // Per warp: load, cvt, loop entry, 3 × (add + back edge), if, add.
        assert_eq!(k.total_warp_instructions(), 3 + 3 * 2 + 2);
        assert_eq!(
            k.total_thread_instructions(),
            Some(3 * 32 + 2 * (22 + 16 + 9) + 32 + 8)
        );
        // Bits built by integer ops: 0x41400000 is 12.0f32.
        let k = parse(&body(
            "mov r1, 0x41400000\ncvt.rzi.u32.f32 r2, r1\nld.global r3, A[4*r2]\n",
        ))
        .unwrap();
        let addrs = addresses(&k);
        assert_eq!(addrs[0].1, [k.buffers[0].base + 48; WARP_LANES]);
    }

    /// Other conversions keep today's timing-only behaviour; `cvt.rzi` with another type pair
    /// or an expression source is an error at the mnemonic or the operand.
    #[test]
    fn other_cvt_forms_and_cvt_rzi_errors() {
        for ok in [
            "cvt r3, r3\n",
            "cvt.f64 r1, r2\n",
            "cvt.rn.f32.s32 r1, r2\n",
            "cvt.u32.u16 r1, r2\n",
            "cvt r1, r2, r3\n",
        ] {
            let k = parse(&body(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
            let Item::Inst(i) = k.program.items[0] else {
                panic!()
            };
            assert_eq!(i.op, OpKind::Alu(AluKind::Simple), "{ok}");
        }
        // A plain cvt's destination carries no value, and the error names it.
        check_err(
            &body("mov r1, gtid\ncvt.s32.f32 r2, r1\nld.global r3, A[4*r2]\n"),
            7,
            19,
            "`r2` carries no value, so an expression cannot read it: `cvt.s32.f32` at line 6:1 \
             writes it without a value (`cvt` computes no integer value)",
        );
        check_err(
            &body("cvt.rzi.s32.f64 r2, r1\n"),
            5,
            1,
            "`cvt.rzi.s32.f64`: the conversions that compute a value are `cvt.rzi.s32.f32` and \
             `cvt.rzi.u32.f32`",
        );
        for bad in [
            "cvt.rzi.f32.f32 r2, r1\n",
            "cvt.rzi.s64.f32 r2, r1\n",
            "cvt.rzi.u32.f32.sat r2, r1\n",
            "cvt.rzi r2, r1\n",
            "cvt.rzi.ftz.s32.f32 r2, r1\n",
        ] {
            check_err(&body(bad), 5, 1, "the conversions that compute a value are");
        }
        check_err(
            &body("cvt.rzi.u32.f32 r2, 4*gtid\n"),
            5,
            21,
            "`cvt.rzi.u32.f32` converts the f32 in a register: its source must be one register \
             like `r3`, not an expression",
        );
        check_err(&body("cvt.rzi.u32.f32 r2, r1 + 1\n"), 5, 21, "not an expression");
        check_err(
            &body("cvt.rzi.s32.f32 r2\n"),
            5,
            1,
            "takes 1 source register, found 0",
        );
        check_err(
            &body("cvt.rzi.s32.f32 r2, r1, r3\n"),
            5,
            1,
            "takes 1 source register, found 2",
        );
        // A source without a value: the error names the conversion and what it reads.
        check_err(
            &body("ld.global r1, A[4*gtid]\ncvt.rzi.u32.f32 r2, r1\nld.global r3, A[4*r2]\n"),
            7,
            19,
            "`r2` carries no value, so an expression cannot read it: `cvt.rzi.u32.f32` at line \
             6:1 computes it from `r1`, which carries no value",
        );
    }
}
