//! Expressions: recursive descent over `^`, `+ -`, `* / %`, unary `-`, numbers, variables,
//! `rand(seed, n)` and parentheses, emitting postfix [`ExprNode`] bytecode as it goes, with
//! constant operands folded. Names are resolved through a [`Scope`].

use super::check::Scope;
use super::lexer::{parse_number, Cursor, Tok};
use super::{show, Diag, PResult, MAX_EXPR_NESTING};
use crate::workload::program::{compare, ExprNode, Reg, Var, MAX_EXPR_NODES};

/// A register an expression reads, with the column where it is named.
pub(super) type RegRead = (Reg, usize);

/// Hard cap on intermediate bytecode while folding (the final check is `MAX_EXPR_NODES`).
const EXPR_BUILD_CAP: usize = 4 * MAX_EXPR_NODES + 2 * MAX_EXPR_NESTING;

struct ExprParser<'c, 't, 's, 'r> {
    cur: &'c mut Cursor<'t>,
    scope: Scope<'s>,
    out: Vec<ExprNode>,
    depth: usize,
    /// Registers read, in source order.
    reads: &'r mut Vec<RegRead>,
}

impl ExprParser<'_, '_, '_, '_> {
    fn push(&mut self, n: ExprNode, col: usize) -> PResult<()> {
        if self.out.len() >= EXPR_BUILD_CAP {
            return Err(Diag::new(
                self.cur.line,
                col,
                format!("expression too long: more than {MAX_EXPR_NODES} nodes"),
            ));
        }
        self.out.push(n);
        Ok(())
    }

    fn last_const(&self, back: usize) -> Option<i64> {
        let i = self.out.len().checked_sub(back)?;
        match self.out.get(i) {
            Some(ExprNode::Const(c)) => Some(*c),
            _ => None,
        }
    }

    /// Emits a binary operator, folding two constant operands.
    fn binary(&mut self, op: ExprNode, col: usize) -> PResult<()> {
        let line = self.cur.line;
        if matches!(op, ExprNode::Div | ExprNode::Rem) && self.last_const(1) == Some(0) {
            let what = if op == ExprNode::Div { "division" } else { "modulo" };
            return Err(Diag::new(line, col, format!("{what} by zero")));
        }
        if let (Some(a), Some(b)) = (self.last_const(2), self.last_const(1)) {
            let v = match op {
                ExprNode::Add => a.checked_add(b),
                ExprNode::Sub => a.checked_sub(b),
                ExprNode::Mul => a.checked_mul(b),
                ExprNode::Div => a.checked_div(b),
                ExprNode::Rem => a.checked_rem_euclid(b),
                ExprNode::Xor => Some(a ^ b),
                _ => None,
            };
            let v = v.ok_or_else(|| Diag::new(line, col, "constant arithmetic overflows 64-bit integers"))?;
            let n = self.out.len();
            self.out.truncate(n - 2);
            self.out.push(ExprNode::Const(v));
            return Ok(());
        }
        self.push(op, col)
    }

    fn xor(&mut self) -> PResult<()> {
        self.add()?;
        while self.cur.is_punct('^') {
            let col = self.cur.col();
            self.cur.bump();
            self.add()?;
            self.binary(ExprNode::Xor, col)?;
        }
        Ok(())
    }

    fn add(&mut self) -> PResult<()> {
        self.mul()?;
        loop {
            let op = if self.cur.is_punct('+') {
                ExprNode::Add
            } else if self.cur.is_punct('-') {
                ExprNode::Sub
            } else {
                return Ok(());
            };
            let col = self.cur.col();
            self.cur.bump();
            self.mul()?;
            self.binary(op, col)?;
        }
    }

    fn mul(&mut self) -> PResult<()> {
        self.unary()?;
        loop {
            let op = if self.cur.is_punct('*') {
                ExprNode::Mul
            } else if self.cur.is_punct('/') {
                ExprNode::Div
            } else if self.cur.is_punct('%') {
                ExprNode::Rem
            } else {
                return Ok(());
            };
            let col = self.cur.col();
            self.cur.bump();
            self.unary()?;
            self.binary(op, col)?;
        }
    }

    fn unary(&mut self) -> PResult<()> {
        let col = self.cur.col();
        let mut neg = false;
        while self.cur.eat_punct('-') {
            neg = !neg;
        }
        self.primary()?;
        if neg {
            if let Some(c) = self.last_const(1) {
                let v = c.checked_neg().ok_or_else(|| {
                    Diag::new(
                        self.cur.line,
                        col,
                        "constant arithmetic overflows 64-bit integers",
                    )
                })?;
                if let Some(last) = self.out.last_mut() {
                    *last = ExprNode::Const(v);
                }
            } else {
                self.push(ExprNode::Const(-1), col)?;
                self.push(ExprNode::Mul, col)?;
            }
        }
        Ok(())
    }

    fn open(&mut self, col: usize) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_NESTING {
            return Err(Diag::new(
                self.cur.line,
                col,
                format!("expression nested deeper than {MAX_EXPR_NESTING} levels"),
            ));
        }
        Ok(())
    }

    fn primary(&mut self) -> PResult<()> {
        let line = self.cur.line;
        let Some(tok) = self.cur.peek() else {
            return Err(self.cur.expected("an expression"));
        };
        let col = tok.col;
        match &tok.tok {
            Tok::Num(s) => {
                let v = parse_number(s).map_err(|m| Diag::new(line, col, m))?;
                self.cur.bump();
                self.push(ExprNode::Const(v), col)
            }
            Tok::Size(_, v) => {
                let v = *v;
                self.cur.bump();
                self.push(ExprNode::Const(v), col)
            }
            Tok::Punct('(') => {
                self.cur.bump();
                self.open(col)?;
                self.xor()?;
                if !self.cur.is_punct(')') {
                    return Err(self.cur.expected("`)` or an operator"));
                }
                self.cur.bump();
                self.depth -= 1;
                Ok(())
            }
            Tok::Ident(name) => {
                self.cur.bump();
                if self.cur.is_punct('(') {
                    if name != "rand" {
                        return Err(Diag::new(
                            line,
                            col,
                            format!(
                                "unknown function `{}`: the only function is `rand(seed, n)`",
                                show(name)
                            ),
                        ));
                    }
                    self.scope.allow_rand(line, col)?;
                    let pcol = self.cur.col();
                    self.cur.bump();
                    self.open(pcol)?;
                    self.xor()?;
                    if !self.cur.is_punct(',') {
                        return Err(self.cur.expected("`,` between the two arguments of `rand`"));
                    }
                    self.cur.bump();
                    self.xor()?;
                    if !self.cur.is_punct(')') {
                        return Err(self.cur.expected("`)` closing `rand(`"));
                    }
                    self.cur.bump();
                    self.depth -= 1;
                    return self.push(ExprNode::Rand, col);
                }
                let var = self.scope.var(name, line, col)?;
                if let Var::Reg(r) = var {
                    self.reads.push((r, col));
                }
                self.push(ExprNode::Var(var), col)
            }
            _ => Err(self.cur.expected("a number, a variable, `rand(…)` or `(`")),
        }
    }
}

/// Parses an expression starting at the cursor; stops at the first token that cannot continue
/// it. Returns the postfix bytecode (at most `MAX_EXPR_NODES` nodes); the registers it reads
/// are appended to `reads`.
pub(super) fn parse_expr(
    cur: &mut Cursor<'_>,
    scope: Scope<'_>,
    reads: &mut Vec<RegRead>,
) -> PResult<Vec<ExprNode>> {
    let start_col = cur.col();
    let line = cur.line;
    let mut p = ExprParser {
        cur,
        scope,
        out: Vec::new(),
        depth: 0,
        reads,
    };
    p.xor()?;
    let out = p.out;
    if out.len() > MAX_EXPR_NODES {
        return Err(Diag::new(
            line,
            start_col,
            format!(
                "expression too long: {} nodes after constant folding, the limit is \
                 MAX_EXPR_NODES = {MAX_EXPR_NODES}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// A comparison operator at the cursor (`<`, `<=`, `>`, `>=`, `==`, `!=`), consumed, with its
/// column; `None` if the next token starts none.
fn compare_op(cur: &mut Cursor<'_>) -> PResult<Option<(ExprNode, usize)>> {
    let col = cur.col();
    let (op, len) = match cur.peek_tok() {
        Some(Tok::Punct('<')) if cur.joined_punct('=') => (ExprNode::Le, 2),
        Some(Tok::Punct('<')) => (ExprNode::Lt, 1),
        Some(Tok::Punct('>')) if cur.joined_punct('=') => (ExprNode::Ge, 2),
        Some(Tok::Punct('>')) => (ExprNode::Gt, 1),
        Some(Tok::Punct('=')) if cur.joined_punct('=') => (ExprNode::Eq, 2),
        Some(Tok::Punct('!')) if cur.joined_punct('=') => (ExprNode::Ne, 2),
        Some(Tok::Punct('=' | '!')) => {
            return Err(cur.expected("a comparison `<`, `<=`, `>`, `>=`, `==` or `!=`"))
        }
        _ => return Ok(None),
    };
    for _ in 0..len {
        cur.bump();
    }
    Ok(Some((op, col)))
}

/// Parses a branch condition: `EXPR` (true when not 0) or `EXPR CMP EXPR` with one
/// comparison, emitted as one postfix expression that is 0 when the condition is false.
pub(super) fn parse_condition(
    cur: &mut Cursor<'_>,
    scope: Scope<'_>,
    reads: &mut Vec<RegRead>,
) -> PResult<Vec<ExprNode>> {
    let start_col = cur.col();
    let line = cur.line;
    let mut nodes = parse_expr(cur, scope, reads)?;
    if let Some((op, _)) = compare_op(cur)? {
        let rhs = parse_expr(cur, scope, reads)?;
        if let ([ExprNode::Const(a)], [ExprNode::Const(b)]) = (nodes.as_slice(), rhs.as_slice()) {
            nodes = vec![ExprNode::Const(compare(op, *a, *b))];
        } else {
            nodes.extend(rhs);
            nodes.push(op);
        }
        if nodes.len() > MAX_EXPR_NODES {
            return Err(Diag::new(
                line,
                start_col,
                format!(
                    "condition too long: {} nodes after constant folding, the limit is \
                     MAX_EXPR_NODES = {MAX_EXPR_NODES}",
                    nodes.len()
                ),
            ));
        }
    }
    Ok(nodes)
}

/// Parses a constant expression (directive argument).
pub(super) fn parse_const(cur: &mut Cursor<'_>, what: &str) -> PResult<(i64, usize)> {
    let col = cur.col();
    let nodes = parse_expr(cur, Scope::Const(what), &mut Vec::new())?;
    match nodes.as_slice() {
        [ExprNode::Const(v)] => Ok((*v, col)),
        // Unreachable: constant scope admits only literals, which always fold.
        _ => Err(Diag::new(
            cur.line,
            col,
            format!("{what} must be a constant expression"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::workload::program::LaneEnv;

    #[test]
    fn expressions_precedence_and_folding() {
        let src = body(
            "loop i 3 {\nloop j 2 {\n\
             ld.global r0, A[1 + 2*3 - 8/2 % 3]\n\
             ld.global r0, A[2 ^ 1 + 1]\n\
             ld.global r0, A[-tid * 2 + 0x10 + 1_000 + 1K]\n\
             ld.global r0, A[(i - j) * lane + warp + cta + gwarp + block + grid]\n\
             ld.global r0, A[--3 + -(2) - -tid]\n\
             ld.global r0, A[tid / 3 + (tid - 40) % 7]\n\
             }\n}\n",
        );
        let k = parse(&src).unwrap();
        let ex = &k.program.exprs;
        let base = k.buffers[0].base;
        // Fully constant expressions fold to a single node.
        assert_eq!(ex[0].nodes, vec![ExprNode::Const(1 + 6 - (8 / 2) % 3)]);
        assert_eq!(ex[1].nodes, vec![ExprNode::Const(2 ^ 2)]);
        let e = LaneEnv {
            tid: 37,
            cta: 2,
            block: 32,
            grid: 1,
            loops: [2, 1, 0, 0],
        };
        let v = |i: usize| ex[i].eval(&e).wrapping_sub(base) as i64;
        assert_eq!(v(2), -37 * 2 + 16 + 1000 + 1024);
        let (i, j) = (2, 1);
        assert_eq!(
            v(3),
            (i - j) * (37 & 31) + (37 >> 5) + 2 + ((2 * 32 + 37) >> 5) + 32 + 1
        );
        assert_eq!(v(4), 3 - 2 + 37);
        assert_eq!(v(5), 37 / 3 + (-3i64).rem_euclid(7));
        for x in ex {
            x.validate().unwrap();
        }
    }

    #[test]
    fn expression_errors() {
        check_err(&body("ld.global r1, A[tid / 0]\n"), 5, 21, "division by zero");
        check_err(&body("ld.global r1, A[tid % (3 - 3)]\n"), 5, 21, "modulo by zero");
        check_err(
            &body("ld.global r1, A[foo + 1]\n"),
            5,
            17,
            "unknown variable `foo`",
        );
        check_err(
            &body("ld.global r1, A[foo]\n"),
            5,
            17,
            "tid lane warp cta gtid gwarp block grid gthreads",
        );
        check_err(
            &body("loop i 2 {\nld.global r1, A[j]\n}\n"),
            6,
            17,
            "loop variables: i",
        );
        check_err(
            &body("ld.global r1, A[sin(3)]\n"),
            5,
            17,
            "unknown function `sin`",
        );
        check_err(
            &body("ld.global r1, A[rand(1 2)]\n"),
            5,
            24,
            "expected `,` between",
        );
        check_err(
            &body("ld.global r1, A[rand(1, 2]\n"),
            5,
            26,
            "expected `)` closing `rand(`",
        );
        check_err(
            &body("ld.global r1, A[(1 + tid]\n"),
            5,
            25,
            "expected `)` or an operator",
        );
        check_err(
            &body("ld.global r1, A[1 + ]\n"),
            5,
            21,
            "expected a number, a variable",
        );
        check_err(
            &body("ld.global r1, A[]\n"),
            5,
            17,
            "expected a number, a variable",
        );
        check_err(&body("ld.global r1, A[12abc]\n"), 5, 17, "expected a number");
        check_err(&body("ld.global r1, A[0x]\n"), 5, 17, "expected a number");
        check_err(
            &body("ld.global r1, A[99999999999999999999]\n"),
            5,
            17,
            "does not fit",
        );
        check_err(&body("ld.global r1, A[2G * 2G * 4G]\n"), 5, 25, "overflows");
        let deep = format!("ld.global r1, A[{}tid{}]\n", "(".repeat(40), ")".repeat(40));
        check_err(&body(&deep), 5, 17 + MAX_EXPR_NESTING, "nested deeper than 32");
        let deep_rand = format!("ld.global r1, A[{}0{}]\n", "rand(1, ".repeat(40), ")".repeat(40));
        check_err(&body(&deep_rand), 5, 17 + 8 * 32 + 4, "nested deeper");
        let long = format!("ld.global r1, A[{}]\n", vec!["tid"; 20].join(" + "));
        check_err(&body(&long), 5, 17, "the limit is MAX_EXPR_NODES = 32");
        // A long expression that folds to a constant is fine.
        let long_const = format!("ld.global r1, A[{}]\n", vec!["1"; 200].join(" + "));
        assert_eq!(
            parse(&body(&long_const)).unwrap().program.exprs[0].nodes,
            vec![ExprNode::Const(200)]
        );
        // Very long non-constant expressions stop early, without blowing memory.
        let huge = format!("ld.global r1, A[{}]\n", vec!["tid"; 100_000].join("+"));
        check_err(
            &body(&huge),
            5,
            17 + 4 * (EXPR_BUILD_CAP / 2) - 1,
            "expression too long",
        );
        // Unary minus chains are iterative, not recursive.
        let minus = format!("ld.global r1, A[{}tid]\n", "-".repeat(100_000));
        assert!(parse(&body(&minus)).is_ok());
    }
}
