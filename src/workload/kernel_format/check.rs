//! Semantic rules: names and scopes, duplicate and misplaced directives, value ranges, and
//! what a complete kernel needs. The parser calls each rule at the token it concerns, so
//! errors come in file order; [`Decls`] holds what has been declared so far.

use std::fmt::Write as _;

use super::lexer::{is_register_name, register, Cursor};
use super::{show, Diag, PResult, MAX_BLOCK_THREADS, MAX_BUFFER_BYTES, MAX_REGS_PER_THREAD};
use crate::workload::program::{Buffer, Reg, Var, MAX_DIVERGENT_NESTING, MAX_LOOP_DEPTH};

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

/// `[A-Za-z_][A-Za-z0-9_]*`: buffer and loop variable names (identifier tokens may also
/// contain `.`).
fn is_plain_ident(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A loop whose `}` has not been seen yet.
#[derive(Debug)]
pub(super) struct OpenLoop {
    pub(super) name: String,
    pub(super) line: usize,
}

/// What kind of block a `{` opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BlockKind {
    /// `loop NAME COUNT {`: zero-overhead loop markers.
    Loop,
    /// `loop NAME < EXPR {`: a per-lane loop at this loop nesting depth.
    LaneLoop { depth: u8 },
    /// `if COND {`; `jump` is the jump over the `else` block once `} else {` is seen.
    If { jump: Option<usize> },
}

/// A block whose `}` has not been seen yet. Loops also have an [`OpenLoop`] (their name).
#[derive(Debug)]
pub(super) struct OpenBlock {
    pub(super) kind: BlockKind,
    /// The item that opened it: `LoopStart`, the loop-entry branch or the `if` branch.
    pub(super) start: usize,
    /// Position of the line that opened it (`} else {` for an `else` block).
    pub(super) line: usize,
    pub(super) col: usize,
    /// Line of the `loop` or `if` keyword.
    pub(super) first_line: usize,
    /// A per-lane loop: the `break` branches that leave it (patched at its `}`).
    pub(super) breaks: Vec<usize>,
    /// Line of an unconditional `break` in this block: nothing may follow it.
    pub(super) ended: Option<usize>,
}

impl OpenBlock {
    fn divergent(&self) -> bool {
        self.kind != BlockKind::Loop
    }
    fn describe(&self) -> String {
        match self.kind {
            BlockKind::If { .. } => format!("the `if` of line {}", self.first_line),
            _ => format!("the per-lane loop of line {}", self.first_line),
        }
    }
}

/// What names an expression may use.
#[derive(Clone, Copy)]
pub(super) enum Scope<'a> {
    /// A constant expression; the string says what it is, for messages.
    Const(&'a str),
    /// An address expression; the names are the enclosing loops, outermost first.
    Addr(&'a [OpenLoop]),
}

impl Scope<'_> {
    /// `rand(…)` varies per lane, so constants cannot use it.
    pub(super) fn allow_rand(self, line: usize, col: usize) -> PResult<()> {
        match self {
            Scope::Const(what) => Err(Diag::new(
                line,
                col,
                format!("`rand` cannot be used here: {what} must be a constant"),
            )),
            Scope::Addr(_) => Ok(()),
        }
    }

    /// Resolves a variable name: a builtin, or the counter of an enclosing loop.
    pub(super) fn var(self, name: &str, line: usize, col: usize) -> PResult<Var> {
        let builtin = BUILTIN_VARS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        match self {
            Scope::Const(what) => {
                let msg = if is_register_name(name) {
                    format!(
                        "register `{}` cannot be used here: {what} must be a constant",
                        show(name)
                    )
                } else if builtin.is_some() {
                    format!("variable `{name}` cannot be used here: {what} must be a constant")
                } else {
                    format!(
                        "unknown name `{}`: {what} must be a constant expression (a named \
                         constant is declared before its use with `size NAME = DEFAULT full FULL`)",
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
                // A register: the lane's value (lowering checks that it carries one).
                if let Some(r) = register(name, line, col) {
                    return r.map(Var::Reg);
                }
                let mut valid: String = BUILTIN_VARS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" ");
                valid.push_str(" r0..r254");
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

/// An `input NAME = GEN(…)` directive: its generated arrays.
pub(super) struct InputDecl {
    pub(super) name: String,
    pub(super) line: usize,
    pub(super) arrays: Vec<(String, crate::workload::inputs::Array)>,
}

/// A `size NAME = DEFAULT full FULL` directive: the value at the parse's scale, and the full
/// value (buffers are laid out at their full-scale extent under every scale).
pub(super) struct SizeDecl {
    pub(super) name: String,
    pub(super) line: usize,
    pub(super) value: i64,
    pub(super) full: i64,
}

/// What the file has declared so far, with the line of each declaration for messages.
#[derive(Default)]
pub(super) struct Decls {
    /// Declared sizes (`size NAME = DEFAULT full FULL`), in file order.
    pub(super) sizes: Vec<SizeDecl>,
    /// Kernel name and the line of the `kernel` directive.
    pub(super) kernel: Option<(String, usize)>,
    pub(super) grid: Option<(u32, usize)>,
    pub(super) block: Option<(u32, usize)>,
    /// Value, line and column of the value.
    pub(super) regs: Option<(u32, usize, usize)>,
    pub(super) shared: Option<(u32, usize)>,
    /// Declared buffers with their declaration line.
    pub(super) buffers: Vec<(Buffer, usize)>,
    /// Declared inputs (`input NAME = GEN(…)`) with their line and generated arrays.
    pub(super) inputs: Vec<InputDecl>,
    /// Enclosing loops of the current line, outermost first.
    pub(super) loops: Vec<OpenLoop>,
    /// Enclosing blocks (loops and `if`s) of the current line, outermost first.
    pub(super) blocks: Vec<OpenBlock>,
    /// An instruction or loop has been seen: header directives are closed.
    pub(super) body_started: bool,
}

/// The header of a complete kernel, checked at end of file.
pub(super) struct Header {
    pub(super) name: String,
    pub(super) grid: u32,
    pub(super) block: u32,
    pub(super) regs: u32,
    pub(super) shared_bytes: u32,
    pub(super) buffers: Vec<Buffer>,
}

impl Decls {
    /// Every line but the `kernel` line needs `kernel NAME` before it.
    pub(super) fn after_kernel(&self, cur: &Cursor<'_>) -> PResult<()> {
        if self.kernel.is_none() {
            return Err(cur.expected("`kernel NAME` as the first directive"));
        }
        Ok(())
    }

    pub(super) fn kernel_once(&self, line: usize, col: usize) -> PResult<()> {
        if let Some((_, first)) = &self.kernel {
            return Err(Diag::new(
                line,
                col,
                format!("duplicate `kernel` directive (first given on line {first})"),
            ));
        }
        Ok(())
    }

    /// A header directive (`grid`, `block`, `regs`, `shared`, `buffer`) before the body, and
    /// given once (`buffer` once per name, see [`Decls::new_buffer`]).
    pub(super) fn header_directive(&self, word: &str, line: usize, col: usize) -> PResult<()> {
        if self.body_started {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "`{word}` is a header directive and must come before the first instruction \
                     or loop"
                ),
            ));
        }
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
        Ok(())
    }

    /// A valid buffer name not declared before.
    pub(super) fn new_buffer(&self, name: &str, line: usize, col: usize) -> PResult<()> {
        if !is_plain_ident(name) {
            return Err(Diag::new(
                line,
                col,
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
                col,
                format!("duplicate buffer `{name}` (first declared on line {first})"),
            ));
        }
        Ok(())
    }

    /// A valid size name: upper case (so it cannot be a builtin, a register, a mnemonic or a
    /// keyword), not a size, buffer or input declared before.
    pub(super) fn new_size(&self, name: &str, line: usize, col: usize) -> PResult<()> {
        let mut b = name.bytes();
        let upper = matches!(b.next(), Some(c) if c.is_ascii_uppercase())
            && b.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
        if !upper {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "invalid size name `{}`: sizes are upper case (`[A-Z][A-Z0-9_]*`, e.g. `ROWS`)",
                    show(name)
                ),
            ));
        }
        if let Some(first) = self.sizes.iter().find(|s| s.name == name) {
            return Err(Diag::new(
                line,
                col,
                format!("duplicate size `{name}` (first declared on line {})", first.line),
            ));
        }
        if let Some((_, first)) = self.buffers.iter().find(|(b, _)| b.name == name) {
            return Err(Diag::new(
                line,
                col,
                format!("size `{name}` has the name of the buffer declared on line {first}"),
            ));
        }
        if let Some(first) = self.inputs.iter().find(|i| i.name == name) {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "size `{name}` has the name of the input declared on line {}",
                    first.line
                ),
            ));
        }
        Ok(())
    }

    /// A valid input name not declared before.
    pub(super) fn new_input(&self, name: &str, line: usize, col: usize) -> PResult<()> {
        if !is_plain_ident(name) {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "invalid input name `{}`: use letters, digits and `_`, not starting with a \
                     digit",
                    show(name)
                ),
            ));
        }
        if let Some(first) = self.inputs.iter().find(|i| i.name == name) {
            return Err(Diag::new(
                line,
                col,
                format!("duplicate input `{name}` (first declared on line {})", first.line),
            ));
        }
        Ok(())
    }

    /// The array `array` of the declared input `input` (`buffer B from INPUT.ARRAY`), the
    /// input name at `col` and the array name at `acol`.
    pub(super) fn input_array(
        &self,
        input: &str,
        array: &str,
        line: usize,
        col: usize,
        acol: usize,
    ) -> PResult<&crate::workload::inputs::Array> {
        let Some(decl) = self.inputs.iter().find(|i| i.name == input) else {
            let declared = if self.inputs.is_empty() {
                "no inputs are declared (use `input NAME = GEN(…)` before the buffer)".to_string()
            } else {
                let names: Vec<&str> = self.inputs.iter().map(|i| i.name.as_str()).collect();
                format!("declared inputs: {}", names.join(", "))
            };
            return Err(Diag::new(
                line,
                col,
                format!("unknown input `{}`; {declared}", show(input)),
            ));
        };
        match decl.arrays.iter().find(|(n, _)| n == array) {
            Some((_, a)) => Ok(a),
            None => {
                let names: Vec<&str> = decl.arrays.iter().map(|(n, _)| n.as_str()).collect();
                Err(Diag::new(
                    line,
                    acol,
                    format!(
                        "input `{input}` (line {}) has no array `{}`; its arrays: {}",
                        decl.line,
                        show(array),
                        names.join(", ")
                    ),
                ))
            }
        }
    }

    /// The index and base address of a declared buffer.
    pub(super) fn buffer_index(&self, name: &str, line: usize, col: usize) -> PResult<(usize, u64)> {
        if let Some(i) = self.buffers.iter().position(|(b, _)| b.name == name) {
            return Ok((i, self.buffers[i].0.base));
        }
        let declared = if self.buffers.is_empty() {
            "no buffers are declared (use `buffer NAME SIZE`)".to_string()
        } else {
            let mut s = String::from("declared buffers: ");
            for (i, (b, _)) in self.buffers.iter().enumerate() {
                let _ = write!(s, "{}{}", if i > 0 { ", " } else { "" }, b.name);
            }
            s
        };
        Err(Diag::new(
            line,
            col,
            format!("unknown buffer `{}`; {declared}", show(name)),
        ))
    }

    /// Room for one more nested loop (at the `loop` keyword).
    pub(super) fn loop_depth(&self, line: usize, col: usize) -> PResult<()> {
        if self.loops.len() >= MAX_LOOP_DEPTH {
            return Err(Diag::new(
                line,
                col,
                format!("loops nested deeper than MAX_LOOP_DEPTH = {MAX_LOOP_DEPTH}"),
            ));
        }
        Ok(())
    }

    /// A valid loop variable name that hides no builtin and no enclosing loop's variable.
    pub(super) fn new_loop_var(&self, name: &str, line: usize, col: usize) -> PResult<()> {
        if !is_plain_ident(name) {
            return Err(Diag::new(
                line,
                col,
                format!("invalid loop variable name `{}`", show(name)),
            ));
        }
        if is_register_name(name) {
            return Err(Diag::new(
                line,
                col,
                format!("loop variable `{name}` looks like a register; choose another name"),
            ));
        }
        if BUILTIN_VARS.iter().any(|(n, _)| *n == name) || name == "rand" {
            return Err(Diag::new(
                line,
                col,
                format!("loop variable `{name}` shadows the builtin `{name}`; choose another name"),
            ));
        }
        if let Some(outer) = self.loops.iter().find(|l| l.name == name) {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "loop variable `{name}` shadows the enclosing loop of line {}; choose another \
                     name",
                    outer.line
                ),
            ));
        }
        Ok(())
    }

    /// Room for one more divergent block (`if`, per-lane loop) at its keyword: the SIMT
    /// stack holds two entries per level.
    pub(super) fn divergent_depth(&self, line: usize, col: usize) -> PResult<()> {
        if self.blocks.iter().filter(|b| b.divergent()).count() >= MAX_DIVERGENT_NESTING {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "divergent blocks (`if` and per-lane loops) nested deeper than \
                     MAX_DIVERGENT_NESTING = {MAX_DIVERGENT_NESTING}"
                ),
            ));
        }
        Ok(())
    }

    /// Nothing may follow an unconditional `break` in its block: no lane would run it.
    pub(super) fn reachable(&self, line: usize, col: usize) -> PResult<()> {
        if let Some(l) = self.blocks.last().and_then(|b| b.ended) {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "unreachable: every lane that gets here has left the loop at the `break` of \
                     line {l}; move the line before the `break`, or end the block"
                ),
            ));
        }
        Ok(())
    }

    /// A barrier must not be inside divergent code: the warp would reach it once per path,
    /// and the other warps of the CTA only once, so the CTA would never be released.
    pub(super) fn barrier_allowed(&self, line: usize, col: usize) -> PResult<()> {
        if let Some(b) = self.blocks.iter().rev().find(|b| b.divergent()) {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "`bar` inside divergent code ({}): a warp would wait once per path and \
                     the CTA's barrier would never release; move it out of the block",
                    b.describe()
                ),
            ));
        }
        Ok(())
    }

    /// Closes the innermost block at a `}`; a loop also leaves the loop-variable scope.
    pub(super) fn close_block(&mut self, line: usize, col: usize) -> PResult<(OpenBlock, Option<OpenLoop>)> {
        let b = self
            .blocks
            .pop()
            .ok_or_else(|| Diag::new(line, col, "stray `}`: no loop or `if` is open"))?;
        let l = match b.kind {
            BlockKind::If { .. } => None,
            _ => self.loops.pop(),
        };
        Ok((b, l))
    }

    /// The checks at end of file. `insts` counts instructions, `max_reg` is the highest
    /// register used.
    pub(super) fn end_of_file(
        self,
        insts: usize,
        max_reg: Option<Reg>,
        eof: (usize, usize),
    ) -> PResult<Header> {
        let Some((name, kline)) = self.kernel else {
            return Err(Diag::new(
                eof.0,
                eof.1,
                "expected `kernel NAME` as the first directive, found end of file",
            ));
        };
        if let Some(b) = self.blocks.last() {
            let what = match (b.kind, self.loops.last()) {
                (BlockKind::If { jump: None }, _) => "`if` block".to_string(),
                (BlockKind::If { jump: Some(_) }, _) => "`else` block".to_string(),
                (_, Some(l)) => format!("loop `{}`", l.name),
                (_, None) => "block".to_string(),
            };
            return Err(Diag::new(
                b.line,
                b.col,
                format!("{what} is never closed: expected `}}` before end of file"),
            ));
        }
        let Some((grid, _)) = self.grid else {
            return Err(Diag::new(kline, 1, "missing required `grid` directive"));
        };
        let Some((block, _)) = self.block else {
            return Err(Diag::new(kline, 1, "missing required `block` directive"));
        };
        if insts == 0 {
            return Err(Diag::new(
                eof.0,
                eof.1,
                "expected at least one instruction, found end of file",
            ));
        }
        let needed = max_reg.map_or(1, |r| r as u32 + 1);
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
        Ok(Header {
            name,
            grid,
            block,
            regs,
            shared_bytes: self.shared.map_or(0, |s| s.0),
            buffers: self.buffers.into_iter().map(|(b, _)| b).collect(),
        })
    }
}

/// An instruction's source registers: `direct` operands first (in order, as written), then
/// the registers its expressions read (`reads`), each once; an error at the first register
/// that finds no free slot.
pub(super) fn sources(direct: &[Reg], reads: &[(Reg, usize)], line: usize) -> PResult<[Reg; 3]> {
    let mut src = [crate::workload::program::NO_REG; 3];
    src[..direct.len()].copy_from_slice(direct);
    let mut n = direct.len();
    for &(r, col) in reads {
        if src[..n].contains(&r) {
            continue;
        }
        if n == 3 {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "`r{r}` is one register too many: an instruction reads at most 3 registers \
                     (its scoreboard sources)"
                ),
            ));
        }
        src[n] = r;
        n += 1;
    }
    Ok(src)
}

/// `grid` or `block` (`word`): one or two dimensions `(value, column)`, each at least 1, and a
/// total within the limit; returns the total.
pub(super) fn dims(word: &str, x: (i64, usize), y: Option<(i64, usize)>, line: usize) -> PResult<u32> {
    let (x, xcol) = x;
    let total = match y {
        Some((y, _)) => x.checked_mul(y),
        None => Some(x),
    };
    for (d, dcol) in std::iter::once((x, xcol)).chain(y) {
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
    Ok(total as u32)
}

pub(super) fn regs(n: i64, line: usize, col: usize) -> PResult<u32> {
    if !(1..=MAX_REGS_PER_THREAD as i64).contains(&n) {
        return Err(Diag::new(
            line,
            col,
            format!("regs must be in 1 ..= {MAX_REGS_PER_THREAD}, found {n}"),
        ));
    }
    Ok(n as u32)
}

pub(super) fn shared_bytes(n: i64, line: usize, col: usize) -> PResult<u32> {
    if !(0..=u32::MAX as i64).contains(&n) {
        return Err(Diag::new(
            line,
            col,
            format!("shared must be in 0 ..= {}, found {n}", u32::MAX),
        ));
    }
    Ok(n as u32)
}

pub(super) fn buffer_size(size: i64, line: usize, col: usize) -> PResult<u64> {
    if size <= 0 || size as u64 > MAX_BUFFER_BYTES {
        return Err(Diag::new(
            line,
            col,
            format!("buffer size must be in 1 ..= {MAX_BUFFER_BYTES} bytes (1 TiB), found {size}"),
        ));
    }
    Ok(size as u64)
}

pub(super) fn loop_count(count: i64, line: usize, col: usize) -> PResult<u32> {
    if !(0..=u32::MAX as i64).contains(&count) {
        return Err(Diag::new(
            line,
            col,
            format!("loop count must be in 0 ..= {}, found {count}", u32::MAX),
        ));
    }
    Ok(count as u32)
}

/// A block whose body runs from item `first` to `end` (exclusive) has at least one item;
/// `what` names it (e.g. "loop `i` (line 3)").
pub(super) fn block_body(what: &str, first: usize, end: usize, line: usize, col: usize) -> PResult<()> {
    if end == first {
        return Err(Diag::new(line, col, format!("{what} has an empty body")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

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
}
