//! Parser for the `.kern` kernel text format (reference: `docs/kernel-format.md`).
//!
//! The format is line oriented: a header of directives (`kernel`, `grid`, `block`, `regs`,
//! `shared`, `buffer`) followed by a body of instructions and `loop NAME COUNT { … }` blocks.
//! Memory addresses are integer expressions over per-lane variables, compiled to the postfix
//! [`ExprNode`] bytecode of [`AddrExpr`].
//!
//! The parser is a hand-written line lexer plus recursive descent. It never panics: every
//! number is parsed with checked arithmetic, expression nesting is capped at
//! [`MAX_EXPR_NESTING`] and expression length at [`MAX_EXPR_NODES`], and every error carries
//! the 1-based line and column of the offending token.

use std::fmt::Write as _;

use thiserror::Error;

use crate::workload::placement::{Allocator, HEAP_START};
use crate::workload::program::{
    AddrExpr, AluKind, Buffer, ExprNode, Inst, Item, Kernel, OpKind, Program, Reg, Var, MAX_EXPR_NODES,
    MAX_LOOP_DEPTH, MAX_REG,
};

/// A parse failure, positioned at the offending token.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct ParseError {
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    pub message: String,
}

/// Deepest nesting of parentheses / `rand(…)` calls in one expression.
pub const MAX_EXPR_NESTING: usize = 32;
/// Most threads a CTA may have.
pub const MAX_BLOCK_THREADS: u32 = 1024;
/// Largest `regs` value (registers are r0 ..= r254).
pub const MAX_REGS_PER_THREAD: u32 = MAX_REG as u32 + 1;
/// Largest buffer a kernel may declare (1 TiB).
pub const MAX_BUFFER_BYTES: u64 = 1 << 40;
/// Base address of the first declared buffer in the default placement (GPGPU-Sim 3.2.2's
/// `GLOBAL_HEAP_START`); see [`crate::workload::placement`] for the layouts.
pub const BUFFER_BASE: u64 = HEAP_START;

/// Builtin per-lane variables usable in address expressions.
const BUILTIN_VARS: [(&str, Var); 9] = [
    ("tid", Var::Tid),
    ("lane", Var::Lane),
    ("warp", Var::Warp),
    ("cta", Var::Cta),
    ("gtid", Var::Gtid),
    ("gwarp", Var::Gwarp),
    ("block", Var::Block),
    ("grid", Var::Grid),
    ("gthreads", Var::Gthreads),
];

const SIMPLE_ALU: [&str; 16] = [
    "alu", "add", "sub", "mul", "fma", "mad", "mov", "and", "or", "xor", "shl", "shr", "min", "max", "setp",
    "cvt",
];
const SFU_OPS: [&str; 8] = ["sfu", "sin", "cos", "ex2", "lg2", "rcp", "rsqrt", "sqrt"];

const KNOWN_LIST: &str = "directives: kernel grid block regs shared buffer loop; \
SP: alu add sub mul fma mad mov and or xor shl shr min max setp cvt imul idiv; \
SFU: sfu sin cos ex2 lg2 rcp rsqrt sqrt; memory: ld.global st.global ld.shared st.shared; \
barrier: bar";

/// Parses one kernel source. `file` is only used in error messages.
pub fn parse_kernel(src: &str, file: &str) -> Result<Kernel, ParseError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    let mut p = Parser::default();
    let mut eof = (1usize, 1usize);
    for (i, raw) in src.lines().enumerate() {
        let line = i + 1;
        eof = (line, raw.chars().count() + 1);
        let text = match raw.find('#') {
            Some(k) => &raw[..k],
            None => raw,
        };
        p.line(text, line).map_err(|d| d.into_error(file))?;
    }
    p.finish(eof).map_err(|d| d.into_error(file))
}

// ---------------------------------------------------------------------------------------------
// Diagnostics

#[derive(Debug)]
struct Diag {
    line: usize,
    col: usize,
    message: String,
}

impl Diag {
    fn new(line: usize, col: usize, message: impl Into<String>) -> Self {
        Diag {
            line,
            col,
            message: message.into(),
        }
    }
    fn into_error(self, file: &str) -> ParseError {
        ParseError {
            file: file.to_string(),
            line: self.line,
            col: self.col,
            message: self.message,
        }
    }
}

type PResult<T> = Result<T, Diag>;

/// Shortens user text quoted in a message.
fn show(s: &str) -> String {
    const MAX: usize = 32;
    if s.chars().count() > MAX {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}…")
    } else {
        s.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_.]*` (dots allow mnemonics like `ld.global.8`).
    Ident(String),
    /// `[0-9][A-Za-z0-9_]*`, validated by [`parse_number`].
    Num(String),
    Punct(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    col: usize,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Ident(s) | Tok::Num(s) => format!("`{}`", show(s)),
        Tok::Punct(c) => format!("`{c}`"),
    }
}

fn lex_line(text: &str, line: usize) -> PResult<(Vec<Token>, usize)> {
    let mut toks = Vec::new();
    let mut chars = text.chars().peekable();
    let mut col = 0usize;
    while let Some(c) = chars.next() {
        col += 1;
        let start = col;
        if c.is_whitespace() {
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' || c.is_ascii_digit() {
            let ident = !c.is_ascii_digit();
            let mut s = String::new();
            s.push(c);
            while let Some(&n) = chars.peek() {
                let ok = n.is_ascii_alphanumeric() || n == '_' || (ident && n == '.');
                if !ok {
                    break;
                }
                s.push(n);
                chars.next();
                col += 1;
            }
            let tok = if ident { Tok::Ident(s) } else { Tok::Num(s) };
            toks.push(Token { tok, col: start });
            continue;
        }
        if ",[](){}+-*/%^".contains(c) {
            toks.push(Token {
                tok: Tok::Punct(c),
                col: start,
            });
            continue;
        }
        return Err(Diag::new(
            line,
            start,
            format!("unexpected character `{}`", c.escape_debug()),
        ));
    }
    Ok((toks, col + 1))
}

/// Parses an integer literal: decimal or `0x` hex, `_` separators, optional K/M/G suffix
/// (1024-based).
fn parse_number(text: &str) -> Result<i64, String> {
    let invalid = || {
        format!(
            "expected a number (decimal or 0x hex, optional `_` separators and K/M/G suffix), \
             found `{}`",
            show(text)
        )
    };
    let too_large = || format!("number `{}` does not fit in 63 bits", show(text));
    let (body, mult): (&str, u64) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 1 << 10),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let (digits, radix) = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(h) => (h, 16u32),
        None => (body, 10u32),
    };
    let mut v: u64 = 0;
    let mut any = false;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        let d = c.to_digit(radix).ok_or_else(invalid)?;
        v = v
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or_else(too_large)?;
        any = true;
    }
    if !any {
        return Err(invalid());
    }
    let v = v.checked_mul(mult).ok_or_else(too_large)?;
    i64::try_from(v).map_err(|_| too_large())
}

/// A cursor over one line's tokens.
struct Cursor<'t> {
    toks: &'t [Token],
    pos: usize,
    line: usize,
    eol_col: usize,
}

impl<'t> Cursor<'t> {
    fn peek(&self) -> Option<&'t Token> {
        self.toks.get(self.pos)
    }
    fn peek_tok(&self) -> Option<&'t Tok> {
        self.peek().map(|t| &t.tok)
    }
    fn bump(&mut self) -> Option<&'t Token> {
        let t = self.toks.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    fn col(&self) -> usize {
        self.peek().map_or(self.eol_col, |t| t.col)
    }
    fn found(&self) -> String {
        self.peek_tok()
            .map_or_else(|| "end of line".to_string(), describe)
    }
    fn err(&self, msg: impl Into<String>) -> Diag {
        Diag::new(self.line, self.col(), msg)
    }
    fn expected(&self, what: &str) -> Diag {
        self.err(format!("expected {what}, found {}", self.found()))
    }
    fn is_punct(&self, c: char) -> bool {
        self.peek_tok() == Some(&Tok::Punct(c))
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{c}`")))
        }
    }
    fn expect_end(&self) -> PResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.expected("end of line")),
        }
    }
    /// An identifier token, with its column.
    fn expect_ident(&mut self, what: &str) -> PResult<(&'t str, usize)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Ident(s),
                col,
            }) => {
                self.pos += 1;
                Ok((s.as_str(), *col))
            }
            _ => Err(self.expected(what)),
        }
    }
    /// An integer literal token.
    fn expect_number(&mut self, what: &str) -> PResult<(i64, usize)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Num(s),
                col,
            }) => {
                let v = parse_number(s).map_err(|m| Diag::new(self.line, *col, m))?;
                self.pos += 1;
                Ok((v, *col))
            }
            _ => Err(self.expected(what)),
        }
    }
    fn expect_reg(&mut self) -> PResult<Reg> {
        let what = "a register like `r3`";
        let Some(Token {
            tok: Tok::Ident(s),
            col,
        }) = self.peek()
        else {
            return Err(self.expected(what));
        };
        let Some(digits) = s.strip_prefix('r') else {
            return Err(self.expected(what));
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.expected(what));
        }
        let n = digits
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= MAX_REG as u32)
            .ok_or_else(|| {
                Diag::new(
                    self.line,
                    *col,
                    format!(
                        "register `{}` out of range: registers are r0 ..= r{MAX_REG}",
                        show(s)
                    ),
                )
            })?;
        self.pos += 1;
        Ok(n as Reg)
    }
}

fn is_plain_ident(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

// ---------------------------------------------------------------------------------------------
// Expressions

/// What names an expression may use.
#[derive(Clone, Copy)]
enum Scope<'a> {
    /// A constant expression; the string says what it is, for messages.
    Const(&'a str),
    /// An address expression; the names are the enclosing loops, outermost first.
    Addr(&'a [OpenLoop]),
}

struct ExprParser<'c, 't, 's> {
    cur: &'c mut Cursor<'t>,
    scope: Scope<'s>,
    out: Vec<ExprNode>,
    depth: usize,
}

/// Hard cap on intermediate bytecode while folding (the final check is `MAX_EXPR_NODES`).
const EXPR_BUILD_CAP: usize = 4 * MAX_EXPR_NODES + 2 * MAX_EXPR_NESTING;

impl ExprParser<'_, '_, '_> {
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
                    if let Scope::Const(what) = self.scope {
                        return Err(Diag::new(
                            line,
                            col,
                            format!("`rand` cannot be used here: {what} must be a constant"),
                        ));
                    }
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
                let var = self.lookup(name, col)?;
                self.push(ExprNode::Var(var), col)
            }
            _ => Err(self.cur.expected("a number, a variable, `rand(…)` or `(`")),
        }
    }

    fn lookup(&self, name: &str, col: usize) -> PResult<Var> {
        let line = self.cur.line;
        let builtin = BUILTIN_VARS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        match self.scope {
            Scope::Const(what) => {
                let msg = if builtin.is_some() {
                    format!("variable `{name}` cannot be used here: {what} must be a constant")
                } else {
                    format!(
                        "unknown name `{}`: {what} must be a constant expression",
                        show(name)
                    )
                };
                Err(Diag::new(line, col, msg))
            }
            Scope::Addr(loops) => {
                if let Some(v) = builtin {
                    return Ok(v);
                }
                if let Some(d) = loops.iter().position(|l| l.name == name) {
                    return Ok(Var::Loop(d as u8));
                }
                let mut valid: String = BUILTIN_VARS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" ");
                if loops.is_empty() {
                    valid.push_str(" (no loop variables in scope)");
                } else {
                    valid.push_str("; loop variables: ");
                    let names: Vec<&str> = loops.iter().map(|l| l.name.as_str()).collect();
                    valid.push_str(&names.join(" "));
                }
                Err(Diag::new(
                    line,
                    col,
                    format!("unknown variable `{}`; valid here: {valid}", show(name)),
                ))
            }
        }
    }
}

/// Parses an expression starting at the cursor; stops at the first token that cannot continue
/// it. Returns the postfix bytecode (at most `MAX_EXPR_NODES` nodes).
fn parse_expr(cur: &mut Cursor<'_>, scope: Scope<'_>) -> PResult<Vec<ExprNode>> {
    let start_col = cur.col();
    let line = cur.line;
    let mut p = ExprParser {
        cur,
        scope,
        out: Vec::new(),
        depth: 0,
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

/// Parses a constant expression (directive argument).
fn parse_const(cur: &mut Cursor<'_>, what: &str) -> PResult<(i64, usize)> {
    let col = cur.col();
    let nodes = parse_expr(cur, Scope::Const(what))?;
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

// ---------------------------------------------------------------------------------------------
// Parser

#[derive(Debug)]
struct OpenLoop {
    name: String,
    /// Index of the `LoopStart` item.
    start: usize,
    line: usize,
    col: usize,
}

#[derive(Default)]
struct Parser {
    /// Kernel name and the line of the `kernel` directive.
    name: Option<(String, usize)>,
    grid: Option<(u32, usize)>,
    block: Option<(u32, usize)>,
    regs: Option<(u32, usize, usize)>,
    shared: Option<(u32, usize)>,
    /// Declared buffers with their declaration line.
    buffers: Vec<(Buffer, usize)>,
    /// Bases in the default placement (GPGPU-Sim's packing); a run under another placement
    /// moves them (`placement::place`).
    alloc: Allocator,
    items: Vec<Item>,
    exprs: Vec<AddrExpr>,
    loops: Vec<OpenLoop>,
    body_started: bool,
    insts: usize,
    /// Highest register used and where it first appeared.
    max_reg: Option<Reg>,
}

enum MemSpace {
    Global,
    Shared,
}

impl Parser {
    fn line(&mut self, text: &str, line: usize) -> PResult<()> {
        let trimmed = text.trim_start();
        if trimmed.is_empty() {
            return Ok(());
        }
        let lead_chars = text[..text.len() - trimmed.len()].chars().count();
        let word_end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
        if &trimmed[..word_end] == "kernel" {
            let rest = &trimmed[word_end..];
            let rest_col = lead_chars + 1 + word_end; // "kernel" is ASCII
            return self.kernel_directive(rest, line, lead_chars + 1, rest_col);
        }
        let (toks, eol_col) = lex_line(text, line)?;
        let mut cur = Cursor {
            toks: &toks,
            pos: 0,
            line,
            eol_col,
        };
        if self.name.is_none() {
            return Err(cur.expected("`kernel NAME` as the first directive"));
        }
        let Some(first) = cur.bump() else {
            return Ok(());
        };
        let col = first.col;
        match &first.tok {
            Tok::Punct('}') => self.close_loop(&mut cur, col),
            Tok::Ident(word) => match word.as_str() {
                "grid" | "block" | "regs" | "shared" | "buffer" => {
                    if self.body_started {
                        return Err(Diag::new(
                            line,
                            col,
                            format!(
                                "`{word}` is a header directive and must come before the first \
                                 instruction or loop"
                            ),
                        ));
                    }
                    self.header(word, &mut cur, col)
                }
                "loop" => {
                    self.body_started = true;
                    self.open_loop(&mut cur, col)
                }
                _ => {
                    self.body_started = true;
                    self.instruction(word, &mut cur, col)
                }
            },
            other => Err(Diag::new(
                line,
                col,
                format!(
                    "expected a directive or an instruction, found {}",
                    describe(other)
                ),
            )),
        }
    }

    fn kernel_directive(&mut self, rest: &str, line: usize, col: usize, rest_col: usize) -> PResult<()> {
        if let Some((_, first)) = &self.name {
            return Err(Diag::new(
                line,
                col,
                format!("duplicate `kernel` directive (first given on line {first})"),
            ));
        }
        let name_off = rest.len() - rest.trim_start().len();
        let name_col = rest_col + rest[..name_off].chars().count();
        let body = rest.trim_start();
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = &body[..name_end];
        if name.is_empty() {
            return Err(Diag::new(
                line,
                name_col,
                "expected a kernel name after `kernel`, found end of line",
            ));
        }
        for (i, c) in name.chars().enumerate() {
            if !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-') {
                return Err(Diag::new(
                    line,
                    name_col + i,
                    format!(
                        "invalid character `{}` in kernel name (allowed: letters, digits, `_`, \
                         `.`, `-`)",
                        c.escape_debug()
                    ),
                ));
            }
        }
        let after = &body[name_end..];
        let extra = after.trim_start();
        if !extra.is_empty() {
            let extra_col =
                name_col + name.chars().count() + after[..after.len() - extra.len()].chars().count();
            let word: String = extra.chars().take_while(|c| !c.is_whitespace()).collect();
            return Err(Diag::new(
                line,
                extra_col,
                format!(
                    "expected end of line after the kernel name, found `{}`",
                    show(&word)
                ),
            ));
        }
        self.name = Some((name.to_string(), line));
        Ok(())
    }

    fn header(&mut self, word: &str, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        let first_line = match word {
            "grid" => self.grid.map(|g| g.1),
            "block" => self.block.map(|b| b.1),
            "regs" => self.regs.map(|r| r.1),
            "shared" => self.shared.map(|s| s.1),
            _ => None,
        };
        if let Some(first) = first_line {
            return Err(Diag::new(
                line,
                col,
                format!("duplicate `{word}` directive (first given on line {first})"),
            ));
        }
        match word {
            "grid" | "block" => {
                let (x, xcol) = cur.expect_number(&format!("the {word} size (a number)"))?;
                let mut total = Some(x);
                let mut dims = vec![(x, xcol)];
                if cur.peek().is_some() {
                    let (y, ycol) =
                        cur.expect_number(&format!("a second {word} dimension or end of line"))?;
                    dims.push((y, ycol));
                    total = x.checked_mul(y);
                }
                cur.expect_end()?;
                for &(d, dcol) in &dims {
                    if d < 1 {
                        return Err(Diag::new(
                            line,
                            dcol,
                            format!("{word} dimensions must be at least 1, found {d}"),
                        ));
                    }
                }
                let max = if word == "grid" {
                    u32::MAX as i64
                } else {
                    MAX_BLOCK_THREADS as i64
                };
                let total = total.filter(|&t| t <= max).ok_or_else(|| {
                    let what = if word == "grid" {
                        format!("at most {} CTAs", u32::MAX)
                    } else {
                        format!("at most {MAX_BLOCK_THREADS} threads per CTA")
                    };
                    Diag::new(line, xcol, format!("{word} too large: {what}"))
                })?;
                let v = Some((total as u32, line));
                if word == "grid" {
                    self.grid = v;
                } else {
                    self.block = v;
                }
            }
            "regs" => {
                let (n, ncol) = cur.expect_number("the registers per thread (a number)")?;
                cur.expect_end()?;
                if !(1..=MAX_REGS_PER_THREAD as i64).contains(&n) {
                    return Err(Diag::new(
                        line,
                        ncol,
                        format!("regs must be in 1 ..= {MAX_REGS_PER_THREAD}, found {n}"),
                    ));
                }
                self.regs = Some((n as u32, line, ncol));
            }
            "shared" => {
                let (n, ncol) = cur.expect_number("the shared memory bytes per CTA (a number)")?;
                cur.expect_end()?;
                if !(0..=u32::MAX as i64).contains(&n) {
                    return Err(Diag::new(
                        line,
                        ncol,
                        format!("shared must be in 0 ..= {}, found {n}", u32::MAX),
                    ));
                }
                self.shared = Some((n as u32, line));
            }
            _ => self.buffer(cur)?,
        }
        Ok(())
    }

    fn buffer(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        let line = cur.line;
        let (name, ncol) = cur.expect_ident("a buffer name")?;
        if !is_plain_ident(name) {
            return Err(Diag::new(
                line,
                ncol,
                format!(
                    "invalid buffer name `{}`: use letters, digits and `_`, not starting with a \
                     digit",
                    show(name)
                ),
            ));
        }
        if let Some((_, first)) = self.buffers.iter().find(|(b, _)| b.name == name) {
            return Err(Diag::new(
                line,
                ncol,
                format!("duplicate buffer `{name}` (first declared on line {first})"),
            ));
        }
        if cur.peek().is_none() {
            return Err(cur.expected("the buffer size in bytes (e.g. `16M`)"));
        }
        let (size, scol) = parse_const(cur, "a buffer size")?;
        cur.expect_end()?;
        if size <= 0 || size as u64 > MAX_BUFFER_BYTES {
            return Err(Diag::new(
                line,
                scol,
                format!("buffer size must be in 1 ..= {MAX_BUFFER_BYTES} bytes (1 TiB), found {size}"),
            ));
        }
        let bytes = size as u64;
        let base = self
            .alloc
            .alloc(bytes)
            .ok_or_else(|| Diag::new(line, scol, "buffers exceed the 64-bit address space"))?;
        self.buffers.push((
            Buffer {
                name: name.to_string(),
                base,
                bytes,
            },
            line,
        ));
        Ok(())
    }

    fn open_loop(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        if self.loops.len() >= MAX_LOOP_DEPTH {
            return Err(Diag::new(
                line,
                col,
                format!("loops nested deeper than MAX_LOOP_DEPTH = {MAX_LOOP_DEPTH}"),
            ));
        }
        let (name, ncol) = cur.expect_ident("a loop variable name")?;
        if !is_plain_ident(name) {
            return Err(Diag::new(
                line,
                ncol,
                format!("invalid loop variable name `{}`", show(name)),
            ));
        }
        if BUILTIN_VARS.iter().any(|(n, _)| *n == name) || name == "rand" {
            return Err(Diag::new(
                line,
                ncol,
                format!("loop variable `{name}` shadows the builtin `{name}`; choose another name"),
            ));
        }
        if let Some(outer) = self.loops.iter().find(|l| l.name == name) {
            return Err(Diag::new(
                line,
                ncol,
                format!(
                    "loop variable `{name}` shadows the enclosing loop of line {}; choose another \
                     name",
                    outer.line
                ),
            ));
        }
        if cur.peek().is_none() || cur.is_punct('{') {
            return Err(cur.expected("the iteration count"));
        }
        let (count, ccol) = parse_const(cur, "a loop count")?;
        if !(0..=u32::MAX as i64).contains(&count) {
            return Err(Diag::new(
                line,
                ccol,
                format!("loop count must be in 0 ..= {}, found {count}", u32::MAX),
            ));
        }
        if !cur.is_punct('{') {
            return Err(cur.expected("`{` at the end of the `loop` line"));
        }
        cur.bump();
        cur.expect_end()?;
        let start = self.items.len();
        self.items.push(Item::LoopStart {
            count: count as u32,
            end: u32::MAX,
        });
        self.loops.push(OpenLoop {
            name: name.to_string(),
            start,
            line,
            col,
        });
        Ok(())
    }

    fn close_loop(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        cur.expect_end()?;
        let Some(l) = self.loops.pop() else {
            return Err(Diag::new(line, col, "stray `}`: no loop is open"));
        };
        let end = self.items.len();
        if end == l.start + 1 {
            return Err(Diag::new(
                line,
                col,
                format!("loop `{}` (line {}) has an empty body", l.name, l.line),
            ));
        }
        let (Ok(start32), Ok(end32)) = (u32::try_from(l.start), u32::try_from(end)) else {
            return Err(Diag::new(line, col, "program too long"));
        };
        self.items.push(Item::LoopEnd { start: start32 });
        if let Some(Item::LoopStart { end: e, .. }) = self.items.get_mut(l.start) {
            *e = end32;
        }
        Ok(())
    }

    fn note_reg(&mut self, r: Reg) {
        self.max_reg = Some(self.max_reg.map_or(r, |m| m.max(r)));
    }

    fn push_inst(&mut self, inst: Inst) {
        if inst.dst != crate::workload::program::NO_REG {
            self.note_reg(inst.dst);
        }
        for s in inst.src {
            if s != crate::workload::program::NO_REG {
                self.note_reg(s);
            }
        }
        self.items.push(Item::Inst(inst));
        self.insts += 1;
    }

    fn instruction(&mut self, word: &str, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
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
                self.push_inst(Inst::new(OpKind::Barrier));
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
        self.push_inst(inst);
        Ok(())
    }

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
        let idx = self.exprs.len();
        inst.addr = u16::try_from(idx).map_err(|_| {
            cur.err(format!(
                "too many memory instructions: at most {}",
                u16::MAX as usize + 1
            ))
        })?;
        self.exprs.push(expr);
        self.push_inst(inst);
        Ok(())
    }

    fn address(&self, space: &MemSpace, cur: &mut Cursor<'_>) -> PResult<AddrExpr> {
        let line = cur.line;
        let base = match space {
            MemSpace::Global => {
                let (name, ncol) = cur.expect_ident("a buffer name like `A[…]`")?;
                match self.buffers.iter().find(|(b, _)| b.name == name) {
                    Some((b, _)) => b.base,
                    None => {
                        let declared = if self.buffers.is_empty() {
                            "no buffers are declared (use `buffer NAME SIZE`)".to_string()
                        } else {
                            let mut s = String::from("declared buffers: ");
                            for (i, (b, _)) in self.buffers.iter().enumerate() {
                                let _ = write!(s, "{}{}", if i > 0 { ", " } else { "" }, b.name);
                            }
                            s
                        };
                        return Err(Diag::new(
                            line,
                            ncol,
                            format!("unknown buffer `{}`; {declared}", show(name)),
                        ));
                    }
                }
            }
            MemSpace::Shared => {
                if matches!(cur.peek_tok(), Some(Tok::Ident(_))) {
                    return Err(cur.expected("`[` (shared addresses take no buffer name)"));
                }
                0
            }
        };
        cur.expect_punct('[')?;
        let nodes = parse_expr(cur, Scope::Addr(&self.loops))?;
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

    fn finish(self, eof: (usize, usize)) -> PResult<Kernel> {
        let Some((name, kline)) = self.name else {
            return Err(Diag::new(
                eof.0,
                eof.1,
                "expected `kernel NAME` as the first directive, found end of file",
            ));
        };
        if let Some(l) = self.loops.last() {
            return Err(Diag::new(
                l.line,
                l.col,
                format!(
                    "loop `{}` is never closed: expected `}}` before end of file",
                    l.name
                ),
            ));
        }
        let Some((grid, _)) = self.grid else {
            return Err(Diag::new(kline, 1, "missing required `grid` directive"));
        };
        let Some((block, _)) = self.block else {
            return Err(Diag::new(kline, 1, "missing required `block` directive"));
        };
        if self.insts == 0 {
            return Err(Diag::new(
                eof.0,
                eof.1,
                "expected at least one instruction, found end of file",
            ));
        }
        let needed = self.max_reg.map_or(1, |r| r as u32 + 1);
        let regs = match self.regs {
            Some((r, rline, rcol)) => {
                if r < needed {
                    return Err(Diag::new(
                        rline,
                        rcol,
                        format!(
                            "regs {r} is too few: the program uses r{} (needs at least {needed})",
                            needed - 1
                        ),
                    ));
                }
                r
            }
            None => needed,
        };
        let kernel = Kernel {
            name,
            grid,
            block,
            regs,
            shared_bytes: self.shared.map_or(0, |s| s.0),
            buffers: self.buffers.into_iter().map(|(b, _)| b).collect(),
            program: Program {
                items: self.items,
                exprs: self.exprs,
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
    use super::*;
    use crate::workload::program::{LaneEnv, NO_REG};

    const EXAMPLE: &str = "\
kernel kmeans-1            # required, first directive
grid 240
block 256
regs 20
shared 4096
buffer A 16M
buffer B 4M
loop i 34 {
  ld.global r1, A[4*gtid + 4*gthreads*i]
  ld.global.8 r2, B[8*rand(7, 65536)]
  add r3, r1, r2
  sfu r4, r3
  st.global B[4*gtid], r4
  st.shared [4*tid], r3
  bar
  ld.shared r5, [4*(tid ^ 1)]
}
";

    fn parse(src: &str) -> Result<Kernel, ParseError> {
        parse_kernel(src, "t.kern")
    }

    fn err(src: &str) -> ParseError {
        match parse(src) {
            Ok(k) => panic!("expected an error, parsed {k:?}"),
            Err(e) => e,
        }
    }

    /// Asserts an error at `line:col` whose message contains `needle`.
    fn check_err(src: &str, line: usize, col: usize, needle: &str) {
        let e = err(src);
        assert_eq!((e.line, e.col), (line, col), "wrong position for: {e}");
        assert!(
            e.message.contains(needle),
            "message `{}` lacks `{needle}`",
            e.message
        );
    }

    const HDR: &str = "kernel k\ngrid 1\nblock 32\nbuffer A 1K\n";

    /// Header lines plus a body; the body starts on line 5.
    fn body(b: &str) -> String {
        format!("{HDR}{b}")
    }

    fn env(tid: i64, cta: i64, loops: [u32; MAX_LOOP_DEPTH]) -> LaneEnv {
        LaneEnv {
            tid,
            cta,
            block: 256,
            grid: 240,
            loops,
        }
    }

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
    fn defaults_dims_suffixes_and_comments() {
        let src = "# leading comment\n\n  kernel a.b_c-9   # name\n\
                   block 16 4\ngrid 3 5\nbuffer Buf 0x100 + 2K\n\
                   mov r7\nadd.f32 r1, r2, r3\nsetp.lt.s32 r9, r1\nimul r0, r1\nidiv r0, r1\n\
                   sqrt r2, r2\nbar.sync\nld.shared.16 r1, [16*tid]\nst.global.1 Buf[gtid], r1\n\
                   loop n 0 {\n  sin r1, r1, r2, r3\n}\n";
        let k = parse(src).unwrap();
        assert_eq!(k.name, "a.b_c-9");
        assert_eq!((k.grid, k.block, k.regs, k.shared_bytes), (15, 64, 10, 0));
        assert_eq!(k.buffers[0].bytes, 0x100 + 2048);
        let ops: Vec<OpKind> = k
            .program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Inst(x) => Some(x.op),
                _ => None,
            })
            .collect();
        assert_eq!(
            ops,
            vec![
                OpKind::Alu(AluKind::Simple),
                OpKind::Alu(AluKind::Simple),
                OpKind::Alu(AluKind::Simple),
                OpKind::Alu(AluKind::IMul),
                OpKind::Alu(AluKind::IDiv),
                OpKind::Sfu,
                OpKind::Barrier,
                OpKind::LoadShared,
                OpKind::StoreGlobal,
                OpKind::Sfu,
            ]
        );
        // A zero-count loop is kept (the body is skipped at run time).
        assert_eq!(k.program.dynamic_instructions(), 9);
        // Registers default to highest + 1, and at least 1.
        let k = parse("kernel k\ngrid 1\nblock 1\nbar\n").unwrap();
        assert_eq!(k.regs, 1);
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

    /// The example in docs/kernel-format.md parses and has the numbers the doc states.
    #[test]
    fn doc_example() {
        let doc = include_str!("../../docs/kernel-format.md");
        let start = doc.find("```\n# A streaming kernel").expect("example in doc") + 4;
        let len = doc[start..].find("```").expect("end of example");
        let k = parse_kernel(&doc[start..start + len], "doc").unwrap();
        assert_eq!(k.buffers[0].base, 0x8000_0000);
        assert_eq!(k.buffers[1].base, 0x8100_0000);
        assert_eq!(k.program.dynamic_instructions(), 144);
        assert_eq!(k.total_warp_instructions(), 276_480);
    }

    #[test]
    fn display_format() {
        let e = err(&body("add x, r1\n"));
        assert_eq!(
            e.to_string(),
            "t.kern:5:5: expected a register like `r3`, found `x`"
        );
        let _: &dyn std::error::Error = &e;
    }

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

    #[test]
    fn loop_errors() {
        check_err(&body("loop i 2 {\nadd r1\n"), 5, 1, "loop `i` is never closed");
        check_err(&body("add r1\n}\n"), 6, 1, "stray `}`");
        check_err(&body("loop i 2 {\nadd r1\n} x\n"), 7, 3, "expected end of line");
        check_err(&body("loop i 2 {\n}\n"), 6, 1, "empty body");
        check_err(
            &body("loop tid 2 {\nadd r1\n}\n"),
            5,
            6,
            "shadows the builtin `tid`",
        );
        check_err(&body("loop rand 2 {\nadd r1\n}\n"), 5, 6, "shadows the builtin");
        check_err(
            &body("loop i 2 {\nloop i 3 {\nadd r1\n}\n}\n"),
            6,
            6,
            "shadows the enclosing loop of line 5",
        );
        check_err(
            &body("loop i 2 {\nadd r1\n}\nld.global r1, A[i]\n"),
            8,
            17,
            "unknown variable `i`",
        );
        check_err(
            &body("loop i 2\nadd r1\n}\n"),
            5,
            9,
            "expected `{` at the end of the `loop` line",
        );
        check_err(&body("loop i 2 { add r1\n}\n"), 5, 12, "expected end of line");
        check_err(
            &body("loop i {\nadd r1\n}\n"),
            5,
            8,
            "expected the iteration count",
        );
        check_err(
            &body("loop 3 3 {\nadd r1\n}\n"),
            5,
            6,
            "expected a loop variable name",
        );
        check_err(&body("loop i -1 {\nadd r1\n}\n"), 5, 8, "loop count must be in 0");
        check_err(&body("loop i 5G {\nadd r1\n}\n"), 5, 8, "loop count must be in 0");
        check_err(&body("loop i tid {\nadd r1\n}\n"), 5, 8, "must be a constant");
        check_err(&body("loop i 4 / 0 {\nadd r1\n}\n"), 5, 10, "division by zero");
        let mut deep = String::new();
        for (d, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            deep.push_str(&format!("{}loop {name} 2 {{\n", " ".repeat(d)));
        }
        check_err(&body(&deep), 9, 5, "nested deeper than MAX_LOOP_DEPTH = 4");
        // Sibling loops may reuse a name.
        assert!(parse(&body("loop i 2 {\nadd r1\n}\nloop i 3 {\nadd r1\n}\n")).is_ok());
    }

    #[test]
    fn header_errors() {
        check_err(
            "",
            1,
            1,
            "expected `kernel NAME` as the first directive, found end of file",
        );
        check_err("# only a comment\n", 1, 17, "found end of file");
        check_err(
            "grid 4\nkernel k\n",
            1,
            1,
            "expected `kernel NAME` as the first directive, found `grid`",
        );
        check_err("kernel\n", 1, 7, "expected a kernel name");
        check_err("kernel a$b\n", 1, 9, "invalid character `$` in kernel name");
        check_err("kernel a b\n", 1, 10, "found `b`");
        check_err(
            "kernel a\nkernel b\n",
            2,
            1,
            "duplicate `kernel` directive (first given on line 1)",
        );
        check_err("kernel k\nblock 32\nbar\n", 1, 1, "missing required `grid`");
        check_err("kernel k\ngrid 32\nbar\n", 1, 1, "missing required `block`");
        check_err(
            "kernel k\ngrid 1\nblock 1\n",
            3,
            8,
            "expected at least one instruction",
        );
        check_err(
            "kernel k\ngrid 1\ngrid 2\n",
            3,
            1,
            "duplicate `grid` directive (first given on line 2)",
        );
        check_err("kernel k\ngrid 0\n", 2, 6, "at least 1");
        check_err("kernel k\ngrid 4 0\n", 2, 8, "at least 1");
        check_err("kernel k\ngrid 65536 65536\n", 2, 6, "grid too large");
        check_err(
            "kernel k\ngrid x\n",
            2,
            6,
            "expected the grid size (a number), found `x`",
        );
        check_err("kernel k\ngrid 1 2 3\n", 2, 10, "expected end of line, found `3`");
        check_err("kernel k\nblock 1025\n", 2, 7, "at most 1024 threads");
        check_err("kernel k\nblock 64 32\n", 2, 7, "at most 1024 threads");
        check_err("kernel k\nregs 0\n", 2, 6, "regs must be in 1 ..= 255");
        check_err("kernel k\nregs 300\n", 2, 6, "regs must be in 1 ..= 255");
        check_err(
            "kernel k\ngrid 1\nblock 1\nregs 4\nadd r4, r1\n",
            4,
            6,
            "regs 4 is too few: the program uses r4",
        );
        check_err("kernel k\nshared 8G\n", 2, 8, "shared must be in 0");
        check_err("kernel k\nbuffer A 0\n", 2, 10, "buffer size must be in 1");
        check_err("kernel k\nbuffer A 2 - 3\n", 2, 10, "buffer size must be in 1");
        check_err("kernel k\nbuffer A 2T\n", 2, 10, "expected a number");
        check_err("kernel k\nbuffer A\n", 2, 9, "expected the buffer size");
        check_err(
            "kernel k\nbuffer A tid\n",
            2,
            10,
            "variable `tid` cannot be used here",
        );
        check_err("kernel k\nbuffer 5 1\n", 2, 8, "expected a buffer name");
        check_err("kernel k\nbuffer a.b 1\n", 2, 8, "invalid buffer name");
        check_err(
            "kernel k\nbuffer A 1\nbuffer A 2\n",
            3,
            8,
            "duplicate buffer `A` (first declared on line 2)",
        );
        check_err(
            &body("bar\ngrid 2\n"),
            6,
            1,
            "`grid` is a header directive and must come before",
        );
        check_err(
            &body("bar\nbuffer Z 1\n"),
            6,
            1,
            "must come before the first instruction",
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

    #[test]
    fn crlf_bom_and_unicode() {
        let src = "\u{feff}kernel k\r\ngrid 1\r\nblock 1\r\nbar\r\n";
        assert!(parse(src).is_ok());
        check_err(&body("add r1, r2 é\n"), 5, 12, "unexpected character `é`");
        check_err(&body("é add r1\n"), 5, 1, "unexpected character");
        check_err("kernel kä\n", 1, 9, "invalid character `ä`");
    }

    /// Deterministic mutation fuzzing: parsing must never panic.
    #[test]
    fn fuzz_no_panic() {
        let seeds: [&[u8]; 2] = [EXAMPLE.as_bytes(), b"kernel k\ngrid 2 3\nblock 8 4\nbuffer X 0x1_000K\nloop a 3 {\nloop b 2 {\nld.global.16 r9, X[rand(a ^ b, 7) * -(lane + 1) % 5]\nst.shared [(tid / 3) + 1], r2\n}\n}\n"];
        let alphabet = b" \n\t#{}[](),+-*/%^._0123456789xKMGrabcdefgiklnoprstuvw$\xc3\xa9";
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let mut ok = 0;
        for round in 0..6000 {
            let mut buf = seeds[round % 2].to_vec();
            let n_mut = 1 + next() % 6;
            for _ in 0..n_mut {
                if buf.is_empty() {
                    break;
                }
                let pos = next() % buf.len();
                match next() % 6 {
                    0 => buf[pos] = alphabet[next() % alphabet.len()],
                    1 => {
                        buf.remove(pos);
                    }
                    2 => buf.insert(pos, alphabet[next() % alphabet.len()]),
                    3 => buf.truncate(pos),
                    4 => {
                        let end = (pos + 1 + next() % 8).min(buf.len());
                        let chunk = buf[pos..end].to_vec();
                        let at = next() % buf.len();
                        for (i, b) in chunk.into_iter().enumerate() {
                            buf.insert(at + i, b);
                        }
                    }
                    _ => buf[pos] = (next() % 256) as u8,
                }
            }
            let text = String::from_utf8_lossy(&buf);
            if parse(&text).is_ok() {
                ok += 1;
            }
        }
        // Some mutants stay valid (e.g. edits inside comments or numbers).
        assert!(ok > 0);
    }
}
