//! Instruction lines: the mnemonic table, register operands, and memory operands with their
//! address expressions.

use super::check::Scope;
use super::expr::parse_expr;
use super::lexer::{Cursor, Tok};
use super::parser::Parser;
use super::{show, Diag, PResult};
use crate::workload::program::{AddrExpr, AluKind, Inst, OpKind};

const SIMPLE_ALU: [&str; 16] = [
    "alu", "add", "sub", "mul", "fma", "mad", "mov", "and", "or", "xor", "shl", "shr", "min", "max", "setp",
    "cvt",
];
const SFU_OPS: [&str; 8] = ["sfu", "sin", "cos", "ex2", "lg2", "rcp", "rsqrt", "sqrt"];

/// Every keyword, for the message on an unknown one.
const KNOWN_LIST: &str = "directives: kernel grid block regs shared buffer loop if; \
SP: alu add sub mul fma mad mov and or xor shl shr min max setp cvt imul idiv; \
SFU: sfu sin cos ex2 lg2 rcp rsqrt sqrt; memory: ld.global st.global ld.shared st.shared; \
barrier: bar";

enum MemSpace {
    Global,
    Shared,
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
        let alu = if SIMPLE_ALU.contains(&base) {
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
            // Type/modifier suffixes (`add.f32`, `setp.lt`) are accepted and ignored.
            return self.alu(op, base, cur);
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
                    _ => {
                        return Err(Diag::new(
                            line,
                            col,
                            format!(
                                "expected `{base}.global` or `{base}.shared`, found `{}`",
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

    /// `OP rD[, rA[, rB[, rC]]]`.
    fn alu(&mut self, op: OpKind, base: &str, cur: &mut Cursor<'_>) -> PResult<()> {
        let mut inst = Inst::new(op);
        inst.dst = cur.expect_reg()?;
        let mut n = 0;
        while cur.eat_punct(',') {
            if n == 3 {
                return Err(cur.err(format!("too many source operands for `{base}`: at most 3")));
            }
            inst.src[n] = cur.expect_reg()?;
            n += 1;
        }
        if cur.peek().is_some() {
            return Err(cur.expected("`,` or end of line"));
        }
        self.low.push_inst(inst);
        Ok(())
    }

    /// `ld.SPACE rD, ADDR` or `st.SPACE ADDR, rS`.
    fn memory(&mut self, load: bool, space: MemSpace, width: u8, cur: &mut Cursor<'_>) -> PResult<()> {
        let op = match (load, &space) {
            (true, MemSpace::Global) => OpKind::LoadGlobal,
            (false, MemSpace::Global) => OpKind::StoreGlobal,
            (true, MemSpace::Shared) => OpKind::LoadShared,
            (false, MemSpace::Shared) => OpKind::StoreShared,
        };
        let mut inst = Inst::new(op);
        inst.width = width;
        if load {
            inst.dst = cur.expect_reg()?;
            cur.expect_punct(',')?;
        }
        let expr = self.address(&space, cur)?;
        if !load {
            cur.expect_punct(',')?;
            inst.src[0] = cur.expect_reg()?;
        }
        cur.expect_end()?;
        self.low.push_memory(inst, expr, cur.line, cur.col())
    }

    /// `BUFFER[EXPR]` (global) or `[EXPR]` (shared).
    fn address(&self, space: &MemSpace, cur: &mut Cursor<'_>) -> PResult<AddrExpr> {
        let base = match space {
            MemSpace::Global => {
                let (name, ncol) = cur.expect_ident("a buffer name like `A[…]`")?;
                self.decls.buffer_base(name, cur.line, ncol)?
            }
            MemSpace::Shared => {
                if matches!(cur.peek_tok(), Some(Tok::Ident(_))) {
                    return Err(cur.expected("`[` (shared addresses take no buffer name)"));
                }
                0
            }
        };
        cur.expect_punct('[')?;
        let nodes = parse_expr(cur, Scope::Addr(&self.decls.loops))?;
        if !cur.is_punct(']') {
            return Err(cur.expected("`]` or an operator"));
        }
        cur.bump();
        Ok(AddrExpr {
            base,
            nodes,
            lanes: None,
        })
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
        check_err(
            &body("add r1, 5\n"),
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
