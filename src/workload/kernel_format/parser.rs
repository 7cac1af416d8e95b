//! The grammar of a line: the `kernel` line, header directives, `loop NAME COUNT {` and `}`;
//! instruction lines are in `inst`. Each rule of `check` is applied where its token is read,
//! and [`Lowering`] is fed as the lines are accepted.

use super::check::{self, BlockKind, Decls, InputDecl, OpenBlock, OpenLoop, Scope, SizeDecl};
use super::expr::{parse_condition, parse_const, parse_expr};
use super::lexer::{describe, lex_line, Cursor, Tok, Token};
use super::lower::Lowering;
use super::{show, Diag, PResult, Scale};
use crate::workload::inputs::{self, Arg, ArgValue};
use crate::workload::program::{BranchKind, Buffer, Kernel};

#[derive(Default)]
pub(super) struct Parser {
    pub(super) decls: Decls,
    pub(super) low: Lowering,
    /// The kernel file's directory (`file(path=…)` inputs are relative to it); `None` for
    /// built-in kernels.
    pub(super) dir: Option<std::path::PathBuf>,
    /// Which value each `size` takes.
    pub(super) scale: Scale,
    /// Sizes given a value from outside, at both scales (`parse_kernel_with`).
    pub(super) size_overrides: Vec<(String, i64)>,
}

impl Parser {
    /// One source line, comment removed.
    pub(super) fn line(&mut self, text: &str, line: usize) -> PResult<()> {
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
        let (mut toks, eol_col) = lex_line(text, line)?;
        // A declared size stands for its value wherever a number may stand.
        if !self.decls.sizes.is_empty() {
            for t in &mut toks {
                if let Tok::Ident(name) = &t.tok {
                    if let Some(sz) = self.decls.sizes.iter().find(|sz| sz.name == *name) {
                        t.tok = Tok::Size(sz.name.clone(), sz.value);
                    }
                }
            }
        }
        let mut cur = Cursor {
            toks: &toks,
            pos: 0,
            line,
            eol_col,
        };
        self.decls.after_kernel(&cur)?;
        let Some(first) = cur.bump() else {
            return Ok(());
        };
        let col = first.col;
        match &first.tok {
            Tok::Punct('}') => self.close_block(&mut cur, col),
            Tok::Ident(word) => match word.as_str() {
                "size" | "grid" | "block" | "regs" | "shared" | "buffer" | "input" => {
                    self.decls.header_directive(word, line, col)?;
                    self.header(word, &mut cur)
                }
                "loop" => {
                    self.decls.body_started = true;
                    self.decls.reachable(line, col)?;
                    self.open_loop(&mut cur, col)
                }
                "if" => {
                    self.decls.body_started = true;
                    self.decls.reachable(line, col)?;
                    self.open_if(&mut cur, col)
                }
                "break" => {
                    self.decls.body_started = true;
                    self.decls.reachable(line, col)?;
                    self.break_line(&mut cur, col)
                }
                "else" => Err(Diag::new(
                    line,
                    col,
                    "`else` must follow the `}` that closes an `if` block, on the same line: `} else {`",
                )),
                _ => {
                    self.decls.body_started = true;
                    self.decls.reachable(line, col)?;
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

    /// `kernel NAME`, read from the raw text: names may contain `-`, which is not a token.
    fn kernel_directive(&mut self, rest: &str, line: usize, col: usize, rest_col: usize) -> PResult<()> {
        self.decls.kernel_once(line, col)?;
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
        self.decls.kernel = Some((name.to_string(), line));
        Ok(())
    }

    /// The arguments of a header directive `word` (already checked to be allowed here).
    fn header(&mut self, word: &str, cur: &mut Cursor<'_>) -> PResult<()> {
        let line = cur.line;
        match word {
            "grid" | "block" => {
                let x = cur.expect_number(&format!("the {word} size (a number)"))?;
                let y = match cur.peek() {
                    Some(_) => Some(cur.expect_number(&format!("a second {word} dimension or end of line"))?),
                    None => None,
                };
                cur.expect_end()?;
                let v = Some((check::dims(word, x, y, line)?, line));
                if word == "grid" {
                    self.decls.grid = v;
                } else {
                    self.decls.block = v;
                }
            }
            "regs" => {
                let (n, ncol) = cur.expect_number("the registers per thread (a number)")?;
                cur.expect_end()?;
                self.decls.regs = Some((check::regs(n, line, ncol)?, line, ncol));
            }
            "shared" => {
                let (n, ncol) = cur.expect_number("the shared memory bytes per CTA (a number)")?;
                cur.expect_end()?;
                self.decls.shared = Some((check::shared_bytes(n, line, ncol)?, line));
            }
            "input" => self.input(cur)?,
            "size" => self.size(cur)?,
            _ => self.buffer(cur)?,
        }
        Ok(())
    }

    /// `size NAME = DEFAULT full FULL`: a named constant whose value depends on the scale
    /// (the `kernel_scale` setting); both values are constant expressions.
    fn size(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        let line = cur.line;
        let (name, ncol) = match cur.peek() {
            // Already declared: lexed as a size.
            Some(Token {
                tok: Tok::Size(n, _) | Tok::Ident(n),
                col,
            }) => (n.as_str(), *col),
            _ => return Err(cur.expected("a size name (upper case, e.g. `ROWS`)")),
        };
        cur.bump();
        self.decls.new_size(name, line, ncol)?;
        cur.expect_punct('=')?;
        let (default, _) = parse_const(cur, &format!("the default value of size `{name}`"))?;
        if cur.peek_tok() != Some(&Tok::Ident("full".to_string())) {
            return Err(cur.expected(&format!(
                "`full` and the full-scale value (`size {name} = {default} full VALUE`)"
            )));
        }
        cur.bump();
        if cur.peek().is_none() {
            return Err(cur.expected("the full-scale value after `full`"));
        }
        let what = format!("the full value of size `{name}`");
        let from = cur.pos;
        let (full, _) = parse_const(cur, &what)?;
        cur.expect_end()?;
        // The full value with the sizes it names at their full values too.
        let full = self.const_at_full(cur, from, &what)?.unwrap_or(full);
        let mut value = match self.scale {
            Scale::Default => default,
            Scale::Full => full,
        };
        let mut full = full;
        if let Some(&(_, v)) = self.size_overrides.iter().find(|(n, _)| n == name) {
            (value, full) = (v, v);
        }
        self.decls.sizes.push(SizeDecl {
            name: name.to_string(),
            line,
            value,
            full,
        });
        Ok(())
    }

    /// The constant expression `cur` just parsed from token `from`, evaluated again with every
    /// size at its full value; `None` when it names no size or the parse is already at full
    /// scale (the value just parsed is then the full one).
    fn const_at_full(&self, cur: &Cursor<'_>, from: usize, what: &str) -> PResult<Option<i64>> {
        let toks = &cur.toks[from..cur.pos];
        if self.scale == Scale::Full || !toks.iter().any(|t| matches!(t.tok, Tok::Size(..))) {
            return Ok(None);
        }
        let full: Vec<Token> = toks
            .iter()
            .map(|t| match &t.tok {
                Tok::Size(n, _) => {
                    let sz = self.decls.sizes.iter().find(|s| s.name == *n);
                    let v = sz.map_or(0, |s| s.full);
                    Token {
                        tok: Tok::Size(n.clone(), v),
                        col: t.col,
                    }
                }
                _ => t.clone(),
            })
            .collect();
        let mut fc = Cursor {
            toks: &full,
            pos: 0,
            line: cur.line,
            eol_col: cur.eol_col,
        };
        Ok(Some(parse_const(&mut fc, what)?.0))
    }

    /// `input NAME = GEN(key=value, …)`: runs the generator now; its arrays can then give
    /// buffers their contents.
    fn input(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        let line = cur.line;
        let (name, ncol) = cur.expect_ident("an input name")?;
        self.decls.new_input(name, line, ncol)?;
        cur.expect_punct('=')?;
        let (generator, gcol) = cur.expect_ident("a generator like `graph(…)`")?;
        cur.expect_punct('(')?;
        let mut args: Vec<Arg> = Vec::new();
        let mut cols: Vec<usize> = Vec::new();
        while !cur.is_punct(')') {
            if !args.is_empty() && !cur.eat_punct(',') {
                return Err(cur.expected("`,` or `)`"));
            }
            let (key, kcol) = cur.expect_ident("an argument name (`key=value`)")?;
            if let Some(i) = args.iter().position(|a| a.name == key) {
                return Err(Diag::new(
                    line,
                    kcol,
                    format!("argument `{key}` given twice (first at column {})", cols[i]),
                ));
            }
            cur.expect_punct('=')?;
            let value = match cur.peek() {
                Some(Token { tok: Tok::Str(s), .. }) => {
                    cur.bump();
                    ArgValue::Str(s.clone())
                }
                // A bare word stands alone; a name inside an expression is refused by
                // `parse_const` (sizes are lexed as `Tok::Size`, not words).
                Some(Token {
                    tok: Tok::Ident(w), ..
                }) if matches!(
                    cur.toks.get(cur.pos + 1).map(|t| &t.tok),
                    Some(Tok::Punct(',' | ')')) | None
                ) =>
                {
                    cur.bump();
                    ArgValue::Word(w.clone())
                }
                None
                | Some(Token {
                    tok: Tok::Punct(',' | ')'),
                    ..
                }) => {
                    return Err(cur.expected("an argument value (an integer, a word or a \"quoted string\")"))
                }
                _ => ArgValue::Int(parse_const(cur, &format!("argument `{key}`"))?.0),
            };
            args.push(Arg {
                name: key.to_string(),
                value,
            });
            cols.push(kcol);
        }
        cur.expect_punct(')')?;
        cur.expect_end()?;
        let arrays = inputs::generate(generator, &args, self.dir.as_deref()).map_err(|e| {
            let col = e
                .arg
                .as_deref()
                .and_then(|a| args.iter().position(|x| x.name == a))
                .map_or(gcol, |i| cols[i]);
            Diag::new(line, col, format!("input `{name}`: {}", e.message))
        })?;
        self.decls.inputs.push(InputDecl {
            name: name.to_string(),
            line,
            arrays,
        });
        Ok(())
    }

    /// `buffer NAME SIZE` or `buffer NAME from INPUT.ARRAY [reserve SIZE]`. The allocation
    /// is the buffer's extent at `kernel_scale = full` (issue 29 §4): SIZE with every size at
    /// its full value, or for contents the `reserve` (also at full), so that every buffer has
    /// the address it has in the full-size run whatever the scale; never less than the
    /// buffer's own bytes.
    fn buffer(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        let line = cur.line;
        let (name, ncol) = cur.expect_ident("a buffer name")?;
        self.decls.new_buffer(name, line, ncol)?;
        if cur.peek().is_none() {
            return Err(cur.expected("the buffer size in bytes (e.g. `16M`) or `from INPUT.ARRAY`"));
        }
        let (bytes, extent, data, scol) = if cur.peek_tok() == Some(&Tok::Ident("from".to_string())) {
            cur.bump();
            let (src, scol) = cur.expect_ident("`INPUT.ARRAY` (an input's array)")?;
            let Some((input, array)) = src.split_once('.') else {
                return Err(Diag::new(
                    line,
                    scol,
                    format!("expected `INPUT.ARRAY` (an input's array), found `{}`", show(src)),
                ));
            };
            let acol = scol + input.chars().count() + 1;
            let a = self.decls.input_array(input, array, line, scol, acol)?;
            let bytes = a.data.len() as u64;
            if bytes == 0 {
                return Err(Diag::new(
                    line,
                    acol,
                    format!("array `{input}.{array}` is empty: a buffer needs at least 1 byte"),
                ));
            }
            let data = a.data.clone();
            let mut extent = bytes;
            if cur.peek_tok() == Some(&Tok::Ident("reserve".to_string())) {
                cur.bump();
                if cur.peek().is_none() {
                    return Err(cur.expected("the bytes to reserve after `reserve`"));
                }
                let from = cur.pos;
                let (reserve, rcol) = parse_const(cur, "a buffer reserve")?;
                let reserve = self
                    .const_at_full(cur, from, "a buffer reserve")?
                    .unwrap_or(reserve);
                let reserve = check::buffer_size(reserve, line, rcol)?;
                if reserve < bytes {
                    return Err(Diag::new(
                        line,
                        rcol,
                        format!(
                            "`{input}.{array}` holds {bytes} bytes, more than the {reserve} reserved \
                             for buffer `{name}`"
                        ),
                    ));
                }
                extent = reserve;
            }
            (bytes, extent, Some(data), scol)
        } else {
            let from = cur.pos;
            let (size, scol) = parse_const(cur, "a buffer size")?;
            let bytes = check::buffer_size(size, line, scol)?;
            let full = self.const_at_full(cur, from, "a buffer size")?.unwrap_or(size);
            let extent = check::buffer_size(full, line, scol)?.max(bytes);
            (bytes, extent, None, scol)
        };
        cur.expect_end()?;
        let bytes = check::buffer_size(bytes as i64, line, scol)?;
        let base = self.low.alloc_buffer(extent, line, scol)?;
        self.decls.buffers.push((
            Buffer {
                name: name.to_string(),
                base,
                bytes,
                extent,
                data,
            },
            line,
        ));
        Ok(())
    }

    /// `loop NAME COUNT {` or `loop NAME < EXPR {` (per-lane trip count), the `loop` keyword
    /// at `col`.
    fn open_loop(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        self.decls.loop_depth(line, col)?;
        let (name, ncol) = cur.expect_ident("a loop variable name")?;
        self.decls.new_loop_var(name, line, ncol)?;
        if cur.eat_punct('<') {
            return self.open_lane_loop(name, cur, col);
        }
        if cur.peek().is_none() || cur.is_punct('{') {
            return Err(cur.expected("the iteration count"));
        }
        let (count, ccol) = parse_const(cur, "a loop count").map_err(|mut d| {
            if d.message.contains("must be a constant") {
                d.message
                    .push_str("; for a per-lane trip count write `loop NAME < EXPR {`");
            }
            d
        })?;
        let count = check::loop_count(count, line, ccol)?;
        self.open_brace(cur, "loop")?;
        let start = self.low.loop_start(count);
        self.push_block(BlockKind::Loop, Some(name), start, line, col);
        Ok(())
    }

    /// The rest of `loop NAME < EXPR {`: lowered to a loop-entry branch (lanes whose count
    /// is 0 skip the loop) and, at the `}`, a back-edge branch.
    fn open_lane_loop(&mut self, name: &str, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        self.decls.divergent_depth(line, col)?;
        if cur.peek().is_none() || cur.is_punct('{') {
            return Err(cur.expected("the per-lane trip count after `<`"));
        }
        let ecol = cur.col();
        let mut reads = Vec::new();
        let nodes = parse_expr(cur, Scope::Addr(&self.decls.loops), &mut reads)?;
        self.open_brace(cur, "loop")?;
        let src = check::sources(&[], &reads, line)?;
        let count = self.low.lane_expr(nodes, line, ecol)?;
        let depth = self.decls.loops.len() as u8;
        let enter = self
            .low
            .branch_reading(BranchKind::LoopEnter { count, depth }, src, line, col)?;
        self.low.reads(line, &reads, true);
        self.push_block(BlockKind::LaneLoop { depth }, Some(name), enter, line, col);
        Ok(())
    }

    /// `if COND {`, the `if` keyword at `col`: a branch that the lanes whose condition is
    /// false take, past the `then` block.
    fn open_if(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        self.decls.divergent_depth(line, col)?;
        if cur.peek().is_none() || cur.is_punct('{') {
            return Err(cur.expected("a condition"));
        }
        let ccol = cur.col();
        let mut reads = Vec::new();
        let nodes = parse_condition(cur, Scope::Addr(&self.decls.loops), &mut reads)?;
        self.open_brace(cur, "if")?;
        let src = check::sources(&[], &reads, line)?;
        let cond = self.low.lane_expr(nodes, line, ccol)?;
        let branch = self
            .low
            .branch_reading(BranchKind::IfNot { cond }, src, line, col)?;
        self.low.reads(line, &reads, true);
        self.push_block(BlockKind::If { jump: None }, None, branch, line, col);
        Ok(())
    }

    /// `break` or `break if COND`, the `break` at `col`: a branch that the lanes whose
    /// condition holds (every lane that reaches a bare `break`) take to the exit of the
    /// innermost loop, which must be a per-lane loop. Its target is patched at the loop's `}`.
    fn break_line(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        let blocks = &self.decls.blocks;
        let Some(bi) = blocks
            .iter()
            .rposition(|b| !matches!(b.kind, BlockKind::If { .. }))
        else {
            return Err(Diag::new(
                line,
                col,
                "`break` outside a loop: it leaves the innermost per-lane loop (`loop NAME < EXPR {`)",
            ));
        };
        let name = self.decls.loops.last().map_or(String::new(), |l| l.name.clone());
        let BlockKind::LaneLoop { depth } = blocks[bi].kind else {
            return Err(Diag::new(
                line,
                col,
                format!(
                    "`break` inside the constant loop `{name}` (line {}): only a per-lane loop \
                     (`loop NAME < EXPR {{`) can be left early, and the innermost loop is the one left",
                    blocks[bi].first_line
                ),
            ));
        };
        let start = blocks[bi].start + 1;
        let mut reads = Vec::new();
        let cond = match cur.peek() {
            Some(t) if t.tok == Tok::Ident("if".to_string()) => {
                cur.bump();
                if cur.peek().is_none() {
                    return Err(cur.expected("a condition after `break if`"));
                }
                let ccol = cur.col();
                let nodes = parse_condition(cur, Scope::Addr(&self.decls.loops), &mut reads)?;
                cur.expect_end()?;
                Some((nodes, ccol))
            }
            Some(_) => return Err(cur.expected("`if COND` or the end of the line after `break`")),
            None => {
                if bi + 1 == blocks.len() {
                    return Err(Diag::new(
                        line,
                        col,
                        format!(
                            "unconditional `break` directly in the body of loop `{name}`: no lane \
                             would run a second iteration; write `break if COND`, or put the \
                             `break` in an `if` block"
                        ),
                    ));
                }
                None
            }
        };
        let src = check::sources(&[], &reads, line)?;
        let cond = match cond {
            Some((nodes, ccol)) => Some(self.low.lane_expr(nodes, line, ccol)?),
            None => None,
        };
        let Ok(start) = u32::try_from(start) else {
            return Err(Diag::new(line, col, "program too long"));
        };
        let item = self
            .low
            .branch_reading(BranchKind::Break { cond, depth, start }, src, line, col)?;
        self.low.reads(line, &reads, true);
        self.decls.blocks[bi].breaks.push(item);
        if cond.is_none() {
            if let Some(b) = self.decls.blocks.last_mut() {
                b.ended = Some(line);
            }
        }
        Ok(())
    }

    /// `{` ending the line of a block keyword `kw`.
    fn open_brace(&self, cur: &mut Cursor<'_>, kw: &str) -> PResult<()> {
        if !cur.is_punct('{') {
            return Err(cur.expected(&format!("`{{` at the end of the `{kw}` line")));
        }
        cur.bump();
        cur.expect_end()
    }

    fn push_block(
        &mut self,
        kind: BlockKind,
        loop_name: Option<&str>,
        start: usize,
        line: usize,
        col: usize,
    ) {
        if let Some(name) = loop_name {
            self.decls.loops.push(OpenLoop {
                name: name.to_string(),
                line,
            });
        }
        self.decls.blocks.push(OpenBlock {
            kind,
            start,
            line,
            col,
            first_line: line,
            breaks: Vec::new(),
            ended: None,
        });
    }

    /// `}` or `} else {`, the `}` at `col`.
    fn close_block(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        let else_col = match cur.peek() {
            Some(t) if t.tok == Tok::Ident("else".to_string()) => {
                cur.bump();
                Some(t.col)
            }
            _ => {
                cur.expect_end()?;
                None
            }
        };
        let (b, l) = self.decls.close_block(line, col)?;
        let end = self.low.next_item();
        let what = |l: &Option<OpenLoop>| match l {
            Some(l) => format!("loop `{}` (line {})", l.name, l.line),
            None => format!("`if` block (line {})", b.first_line),
        };
        if let (Some(ecol), false) = (else_col, matches!(b.kind, BlockKind::If { jump: None })) {
            let msg = match b.kind {
                BlockKind::If { .. } => format!("the `if` of line {} already has an `else`", b.first_line),
                _ => format!("`else` after a loop: the `}}` closes {}", what(&l)),
            };
            return Err(Diag::new(line, ecol, msg));
        }
        match b.kind {
            BlockKind::Loop => {
                check::block_body(&what(&l), b.start + 1, end, line, col)?;
                self.low.loop_end(b.start, line, col)
            }
            BlockKind::LaneLoop { depth } => {
                check::block_body(&what(&l), b.start + 1, end, line, col)?;
                let back = self.low.branch(BranchKind::LoopBack { depth }, line, col)?;
                // Lanes leave the loop, and reconverge, right after the back edge.
                self.low.patch_branch(back, Some(b.start + 1), Some(back + 1));
                self.low.patch_branch(b.start, Some(back + 1), Some(back + 1));
                // A `break` goes to the loop's exit, where its lanes wait for the others.
                for &brk in &b.breaks {
                    self.low.patch_branch(brk, Some(back + 1), Some(back + 1));
                }
                Ok(())
            }
            BlockKind::If { jump: None } => {
                check::block_body(&what(&l), b.start + 1, end, line, col)?;
                if else_col.is_some() {
                    self.open_brace(cur, "else")?;
                    let jump = self.low.branch(BranchKind::Always, line, col)?;
                    // Lanes whose condition is false start the `else` block.
                    self.low.patch_branch(b.start, Some(jump + 1), None);
                    self.decls.blocks.push(OpenBlock {
                        kind: BlockKind::If { jump: Some(jump) },
                        start: b.start,
                        line,
                        col,
                        first_line: b.first_line,
                        breaks: Vec::new(),
                        ended: None,
                    });
                } else {
                    self.low.patch_branch(b.start, Some(end), Some(end));
                }
                Ok(())
            }
            BlockKind::If { jump: Some(jump) } => {
                check::block_body(
                    &format!("`else` block (line {})", b.line),
                    jump + 1,
                    end,
                    line,
                    col,
                )?;
                self.low.patch_branch(b.start, None, Some(end));
                self.low.patch_branch(jump, Some(end), Some(end));
                Ok(())
            }
        }
    }

    /// End of file at `eof` (line, column).
    pub(super) fn finish(self, eof: (usize, usize)) -> PResult<Kernel> {
        let header = self.decls.end_of_file(self.low.insts, self.low.max_reg, eof)?;
        self.low.finish(header)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use crate::workload::program::{AluKind, Item, OpKind};

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
    fn divergent_blocks_lower_to_branches() {
        use crate::workload::program::{Branch, BranchKind, WarpCounts};
        let k = parse(&body(
            "if lane < 8 {\n add r1\n} else {\n add r2\n}\nloop i < tid % 3 {\n ld.global r3, A[4*i]\n}\n",
        ))
        .unwrap();
        let p = &k.program;
        let br = |i: usize| match p.items[i] {
            Item::Inst(x) if x.op == OpKind::Branch => p.branches[x.addr as usize],
            other => panic!("item {i} is {other:?}"),
        };
        let b = |kind, target, reconv| Branch { kind, target, reconv };
        assert_eq!(br(0), b(BranchKind::IfNot { cond: 0 }, 3, 4));
        assert_eq!(br(2), b(BranchKind::Always, 4, 4));
        assert_eq!(br(4), b(BranchKind::LoopEnter { count: 1, depth: 0 }, 7, 7));
        assert_eq!(br(6), b(BranchKind::LoopBack { depth: 0 }, 5, 7));
        assert_eq!(p.items.len(), 7);
        // One warp of lanes 0..32: if (32 lanes), then + jump (8), else (24), loop entry (32),
        // iteration 0 (21 lanes with tid % 3 >= 1: load + back edge), iteration 1 (10 lanes).
        let env = crate::workload::program::LaneEnv {
            block: 32,
            grid: 1,
            ..Default::default()
        };
        assert_eq!(
            p.warp_counts(&env, 32),
            WarpCounts {
                warp: 1 + 2 + 1 + 1 + 2 + 2,
                thread: 32 + 2 * 8 + 24 + 32 + 2 * 21 + 2 * 10
            }
        );
        assert_eq!(k.total_warp_instructions(), 9);
        assert_eq!(k.total_thread_instructions(), Some(166));
        // Comparisons, and conditions without one (true when not zero).
        let k = parse(&body(
            "if tid <= 3 {\nadd r1\n}\nif tid>=3 {\nadd r1\n}\nif tid == 3 {\nadd r1\n}\n\
             if tid != 3 {\nadd r1\n}\nif tid > 3 {\nadd r1\n}\nif tid % 2 {\nadd r1\n}\nif 1 < 2 {\nadd r1\n}\n",
        ))
        .unwrap();
        let truth: Vec<Vec<bool>> = k
            .program
            .exprs
            .iter()
            .map(|e| {
                (2..5)
                    .map(|t| {
                        e.eval(&crate::workload::program::LaneEnv {
                            tid: t,
                            ..Default::default()
                        }) != 0
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            truth,
            vec![
                vec![true, true, false],
                vec![false, true, true],
                vec![false, true, false],
                vec![true, false, true],
                vec![false, false, true],
                vec![false, true, false],
                vec![true, true, true],
            ]
        );
        assert_eq!(k.program.exprs[6].nodes.len(), 1, "constant condition folded");
    }

    #[test]
    fn divergence_errors() {
        check_err(
            &body("if lane < 8 {\nbar\n}\n"),
            6,
            1,
            "`bar` inside divergent code (the `if` of line 5)",
        );
        check_err(
            &body("loop i < lane {\nloop j 2 {\nbar.sync\n}\n}\n"),
            7,
            1,
            "inside divergent code (the per-lane loop of line 5)",
        );
        check_err(&body("if {\nadd r1\n}\n"), 5, 4, "expected a condition");
        check_err(&body("if\n"), 5, 3, "expected a condition");
        check_err(
            &body("if lane < 8\nadd r1\n}\n"),
            5,
            12,
            "expected `{` at the end of the `if` line",
        );
        check_err(&body("if lane < 8 { add r1\n"), 5, 15, "expected end of line");
        check_err(&body("if lane = 8 {\n"), 5, 9, "expected a comparison");
        check_err(&body("if lane ! 8 {\n"), 5, 9, "expected a comparison");
        check_err(&body("if lane < 8 < 9 {\n"), 5, 13, "expected `{`");
        check_err(&body("if foo < 3 {\n"), 5, 4, "unknown variable `foo`");
        check_err(&body("if lane < tid / 0 {\n"), 5, 15, "division by zero");
        check_err(&body("else {\nadd r1\n}\n"), 5, 1, "`else` must follow the `}`");
        check_err(
            &body("if lane < 2 {\nadd r1\n} else {\nadd r2\n} else {\nadd r3\n}\n"),
            9,
            3,
            "the `if` of line 5 already has an `else`",
        );
        check_err(
            &body("loop i 2 {\nadd r1\n} else {\n"),
            7,
            3,
            "`else` after a loop",
        );
        check_err(&body("add r1\n} else {\n"), 6, 1, "stray `}`");
        check_err(
            &body("if lane < 2 {\nadd r1\n} else\n"),
            7,
            7,
            "expected `{` at the end of the `else` line",
        );
        check_err(
            &body("if lane < 2 {\n}\n"),
            6,
            1,
            "`if` block (line 5) has an empty body",
        );
        check_err(&body("if lane < 2 {\n} else {\nadd r1\n}\n"), 6, 1, "empty body");
        check_err(
            &body("if lane < 2 {\nadd r1\n} else {\n}\n"),
            8,
            1,
            "`else` block (line 7) has an empty body",
        );
        check_err(
            &body("loop i < lane {\n}\n"),
            6,
            1,
            "loop `i` (line 5) has an empty body",
        );
        check_err(
            &body("if lane < 2 {\nadd r1\n"),
            5,
            1,
            "`if` block is never closed",
        );
        check_err(
            &body("add r1\n  if lane < 2 {\nadd r1\n} else {\nadd r1\n"),
            8,
            1,
            "`else` block is never closed",
        );
        check_err(
            &body("loop i < lane {\nadd r1\n"),
            5,
            1,
            "loop `i` is never closed",
        );
        check_err(
            &body("loop i < {\nadd r1\n}\n"),
            5,
            10,
            "expected the per-lane trip count",
        );
        check_err(&body("loop i <\n"), 5, 9, "expected the per-lane trip count");
        check_err(
            &body("loop i < i + 1 {\nadd r1\n}\n"),
            5,
            10,
            "unknown variable `i`",
        );
        check_err(
            &body("loop i < lane\nadd r1\n}\n"),
            5,
            14,
            "expected `{` at the end of the `loop` line",
        );
        check_err(
            &body("loop i tid {\nadd r1\n}\n"),
            5,
            8,
            "for a per-lane trip count write `loop NAME < EXPR {`",
        );
        // Per-lane loops count toward the loop depth and use the outer counters.
        check_err(
            &body("loop a < 2 {\nloop b 2 {\nloop c < a + b {\nloop d 2 {\nloop e < 2 {\n"),
            9,
            1,
            "loops nested deeper than MAX_LOOP_DEPTH = 4",
        );
        // Eight divergent levels fit the SIMT stack; a ninth does not.
        let mut deep = String::new();
        for d in 0..9 {
            deep.push_str(&format!("{}if lane > {d} {{\nadd r1\n", " ".repeat(d)));
        }
        check_err(
            &body(&deep),
            5 + 2 * 8,
            9,
            "nested deeper than MAX_DIVERGENT_NESTING = 8",
        );
        let mut ok = String::new();
        for d in 0..8 {
            ok.push_str(&format!("if lane > {d} {{\nadd r1\n"));
        }
        ok.push_str(&"}\n".repeat(8));
        assert!(parse(&body(&ok)).is_ok());
        // A barrier after the block has closed is fine.
        assert!(parse(&body("if lane < 8 {\nadd r1\n}\nbar\n")).is_ok());
    }

    #[test]
    fn break_lowers_to_a_branch_to_the_innermost_loop_exit() {
        use crate::workload::program::{Branch, BranchKind};
        let k = parse(&body(
            "loop i < lane {\n add r5\n loop j < 4 {\n  break if j == i\n  if lane < 3 {\n   break\n  }\n  add r2\n }\n break if r1\n}\n",
        ));
        // `r1` carries no value: that is the value check's error, at the register.
        let e = k.unwrap_err();
        assert_eq!((e.line, e.col), (14, 11), "{e}");
        assert!(
            e.message
                .contains("`r1` carries no value, so an expression cannot read it: no instruction writes it"),
            "{e}"
        );
        let k = parse(&body(
            "mov r1, lane\nloop i < lane {\n add r5\n loop j < 4 {\n  break if j == i\n  if lane < 3 {\n   break\n  }\n  add r2\n }\n break if r1\n}\n",
        ))
        .unwrap();
        let p = &k.program;
        let br = |i: usize| match p.items[i] {
            Item::Inst(x) if x.op == OpKind::Branch => p.branches[x.addr as usize],
            other => panic!("item {i} is {other:?}"),
        };
        let b = |kind, target, reconv| Branch { kind, target, reconv };
        // 0 mov, 1 enter i, 2 add, 3 enter j, 4 break, 5 if, 6 break, 7 add, 8 back j,
        // 9 break, 10 back i, 11 end. Expressions: 0 the `mov`, 1 and 2 the trip counts.
        assert_eq!(p.items.len(), 11);
        assert_eq!(br(3), b(BranchKind::LoopEnter { count: 2, depth: 1 }, 9, 9));
        assert_eq!(
            br(4),
            b(
                BranchKind::Break {
                    cond: Some(3),
                    depth: 1,
                    start: 4
                },
                9,
                9
            ),
            "the inner loop's exit, after its back edge"
        );
        assert_eq!(br(5), b(BranchKind::IfNot { cond: 4 }, 7, 7));
        assert_eq!(
            br(6),
            b(
                BranchKind::Break {
                    cond: None,
                    depth: 1,
                    start: 4
                },
                9,
                9
            )
        );
        assert_eq!(br(8), b(BranchKind::LoopBack { depth: 1 }, 4, 9));
        assert_eq!(
            br(9),
            b(
                BranchKind::Break {
                    cond: Some(5),
                    depth: 0,
                    start: 2
                },
                11,
                11
            ),
            "after the inner loop, the outer loop is the innermost"
        );
        // The condition reads `r1`: the scoreboard waits for it.
        let Item::Inst(x) = p.items[9] else { panic!() };
        assert_eq!(x.src[0], 1);
        // `break` in an `else` block, and a bare `break` after which the block ends.
        assert!(parse(&body(
            "loop i < lane {\n if lane < i {\n  add r1\n } else {\n  add r2\n  break\n }\n}\n"
        ))
        .is_ok());
        assert!(parse(&body(
            "loop i < lane {\n if lane < i {\n  break\n } else {\n  add r2\n }\n}\n"
        ))
        .is_ok());
    }

    #[test]
    fn break_errors() {
        check_err(&body("break\n"), 5, 1, "`break` outside a loop");
        check_err(
            &body("add r1\nbreak if lane < 2\n"),
            6,
            1,
            "`break` outside a loop",
        );
        check_err(
            &body("if lane < 2 {\n break if lane < 1\n}\n"),
            6,
            2,
            "`break` outside a loop",
        );
        check_err(
            &body("loop i 4 {\n add r1\n break if lane < i\n}\n"),
            7,
            2,
            "`break` inside the constant loop `i` (line 5)",
        );
        // The innermost loop is the one left, even when an outer one is per-lane.
        check_err(
            &body("loop i < lane {\n loop j 2 {\n  if lane < j {\n   break\n  }\n }\n}\n"),
            8,
            4,
            "`break` inside the constant loop `j` (line 6)",
        );
        check_err(
            &body("loop i < lane {\n add r1\n break\n}\n"),
            7,
            2,
            "unconditional `break` directly in the body of loop `i`",
        );
        check_err(
            &body("loop i < lane {\n if lane < 3 {\n  break\n  add r1\n }\n}\n"),
            8,
            3,
            "unreachable: every lane that gets here has left the loop at the `break` of line 7",
        );
        check_err(
            &body("loop i < lane {\n if lane < 3 {\n  break\n  break if lane < 2\n }\n}\n"),
            8,
            3,
            "unreachable",
        );
        check_err(
            &body("loop i < lane {\n if lane < 3 {\n  break\n  if lane < 2 {\n"),
            8,
            3,
            "unreachable",
        );
        check_err(
            &body("loop i < lane {\n break if\n}\n"),
            6,
            10,
            "expected a condition after `break if`",
        );
        check_err(
            &body("loop i < lane {\n break when lane < 2\n}\n"),
            6,
            8,
            "expected `if COND` or the end of the line after `break`",
        );
        check_err(
            &body("loop i < lane {\n break if lane = 2\n}\n"),
            6,
            16,
            "expected a comparison",
        );
        check_err(
            &body("loop i < lane {\n break if lane < 2 < 3\n}\n"),
            6,
            20,
            "expected end of line",
        );
        check_err(
            &body("loop i < lane {\n break if lane < 2 {\n}\n"),
            6,
            20,
            "expected end of line",
        );
        check_err(
            &body("loop i < lane {\n break if k < 2\n}\n"),
            6,
            11,
            "unknown variable `k`",
        );
        check_err(
            &body("loop i < lane {\n break if i / 0\n}\n"),
            6,
            13,
            "division by zero",
        );
        // A loop whose body is a conditional `break` alone still has a body.
        assert!(parse(&body("loop i < lane {\n break if i == 2\n}\n")).is_ok());
    }

    #[test]
    fn inputs_and_buffers_with_contents() {
        let k = parse(&body(
            "input S = seq(n=8, start = 2 * 3, step=2)   # a comment\n\
             input U = uniform(n=1K, lo=0, hi=100, seed=2)\nbuffer V from S.values\nbuffer W from U.values\nbuffer X 64\nadd r1\n",
        ))
        .unwrap();
        let v = &k.buffers[1];
        assert_eq!((v.name.as_str(), v.bytes), ("V", 32));
        let data = v.data.as_deref().unwrap();
        assert_eq!(&data[..8], &[6, 0, 0, 0, 8, 0, 0, 0]);
        assert_eq!(k.buffers[2].bytes, 4096);
        assert!(k.buffers[0].data.is_none() && k.buffers[3].data.is_none());
        // Packed placement from the array sizes: X right after W.
        assert_eq!(k.buffers[3].base, k.buffers[2].base + 4096);
    }

    #[test]
    fn input_errors() {
        let hdr = "input S = seq(n=8)\n";
        check_err(
            &body(&format!("{hdr}buffer V from T.values\n")),
            6,
            15,
            "unknown input `T`; declared inputs: S",
        );
        check_err(&body("buffer V from T.values\n"), 5, 15, "no inputs are declared");
        check_err(
            &body(&format!("{hdr}buffer V from S.vals\n")),
            6,
            17,
            "input `S` (line 5) has no array `vals`; its arrays: values",
        );
        check_err(
            &body(&format!("{hdr}buffer V from S\n")),
            6,
            15,
            "expected `INPUT.ARRAY`",
        );
        check_err(
            &body(&format!("{hdr}buffer V from\n")),
            6,
            14,
            "expected `INPUT.ARRAY`",
        );
        check_err(
            &body(&format!("{hdr}buffer V from S.values 4\n")),
            6,
            24,
            "expected end of line",
        );
        // Generator errors point at the argument at fault, or at the generator.
        check_err(
            &body("input S = seq(n=8, start=2147483647, step=1)\nadd r1\n"),
            5,
            38,
            "input `S`: ",
        );
        check_err(&body("input S = seq(step=2, n=0)\n"), 5, 23, "input `S`: ");
        check_err(&body("input S = frob(n=1)\n"), 5, 11, "frob");
        check_err(
            &body("input S = seq(n=1, n=2)\n"),
            5,
            20,
            "argument `n` given twice (first at column 15)",
        );
        check_err(
            &body(&format!("{hdr}input S = seq(n=2)\n")),
            6,
            7,
            "duplicate input `S` (first declared on line 5)",
        );
        check_err(
            &body("add r1\ninput S = seq(n=2)\n"),
            6,
            1,
            "`input` is a header directive",
        );
        check_err(&body("input S seq(n=2)\n"), 5, 9, "expected `=`");
        check_err(&body("input S = seq(n=2\n"), 5, 18, "expected `,` or `)`");
        check_err(&body("input S = seq(n=)\n"), 5, 17, "expected an argument value");
        check_err(
            &body("input S = seq(n=tid + 1)\n"),
            5,
            17,
            "argument `n` must be a constant",
        );
        check_err(&body("input S = seq(n=tid)\n"), 5, 15, "`n` must be an integer");
        check_err(&body("input 9 = seq(n=2)\n"), 5, 7, "expected an input name");
        check_err(
            &body("input F = file(path=\"x.npy)\n"),
            5,
            21,
            "unterminated string",
        );
        // A `#` inside a string is no comment; built-in kernels (no directory) cannot read files.
        let e = err(&body("input F = file(path=\"a#b.npy\")  # comment\n"));
        assert_eq!((e.line, e.col), (5, 16), "{e}");
        assert!(e.message.contains("built-in kernels cannot read files"), "{e}");
    }

    /// A size takes its default or full value everywhere a constant stands: grid, block,
    /// buffer sizes, loop counts, generator arguments, addresses and conditions.
    #[test]
    fn sizes_at_both_scales() {
        use super::super::{parse_kernel_at, Scale};
        let src = "kernel k\nsize ROWS = 4 full 16\nsize COLS = 2*ROWS full 3*ROWS\n\
                   size WARPS = 1 full 2\nsize REGS = 3 full 4\nsize SHARED = 4*ROWS full 4*ROWS\n\
                   grid ROWS COLS\nblock 32 WARPS\nregs REGS\n\
                   shared SHARED\nbuffer A 4 * ROWS * COLS\n\
                   input S = seq(n=ROWS, start=COLS, step=1)\nbuffer B from S.values\n\
                   loop i ROWS - 1 {\n  ld.global r1, A[4*(cta % ROWS) + 4*ROWS*i]\n}\n\
                   if cta < ROWS {\n  ld.global r2, B[4*(ROWS - 1)]\n}\n";
        let d = parse_kernel_at(src, "t.kern", Scale::Default).unwrap();
        let f = parse_kernel_at(src, "t.kern", Scale::Full).unwrap();
        assert_eq!((d.grid, d.block, d.regs, d.shared_bytes), (4 * 8, 32, 3, 16));
        assert_eq!((f.grid, f.block, f.regs, f.shared_bytes), (16 * 48, 64, 4, 64));
        assert_eq!((d.buffers[0].bytes, f.buffers[0].bytes), (4 * 4 * 8, 4 * 16 * 48));
        assert_eq!((d.buffers[1].bytes, f.buffers[1].bytes), (4 * 4, 4 * 16));
        assert_eq!(&d.buffers[1].data.as_deref().unwrap()[..4], &[8, 0, 0, 0]);
        assert_eq!(&f.buffers[1].data.as_deref().unwrap()[..4], &[48, 0, 0, 0]);
        // Per warp: 3 (default) or 15 (full) loop iterations and the `if` branch; the
        // load inside it in the first ROWS CTAs only.
        assert_eq!(d.total_warp_instructions(), 32 * (3 + 1) + 4);
        assert_eq!(f.total_warp_instructions(), 16 * 48 * 2 * (15 + 1) + 16 * 2);
        // parse_kernel is the default scale.
        assert_eq!(
            parse(src).unwrap().total_warp_instructions(),
            d.total_warp_instructions()
        );
        // The full value may be the smaller one (an offset that the default needs).
        let k = "kernel k\nsize Z0 = 67 full 0\ngrid 1\nblock 32\nbuffer A 4 * (Z0 + 1)\nbar\n";
        assert_eq!(parse_kernel_at(k, "t", Scale::Full).unwrap().buffers[0].bytes, 4);
    }

    #[test]
    fn sizes_given_by_the_launch_hold_at_both_scales() {
        use super::super::{parse_kernel_with, Scale};
        // A host program's launch argument: LEVEL replaces both values, and sizes built from
        // it follow; an unknown name is refused.
        let src = "kernel k\nsize LEVEL = 1 full 2\nsize N = 4*LEVEL full 8*LEVEL\ngrid N\n\
                   block 32\ninput S = seq(n=4, start=LEVEL)\nbuffer B from S.values\nbar\n";
        for scale in [Scale::Default, Scale::Full] {
            let k = parse_kernel_with(src, "t.kern", scale, &[("LEVEL", 5)]).unwrap();
            let grid = if scale == Scale::Default { 20 } else { 40 };
            assert_eq!(k.grid, grid, "{}", scale.name());
            assert_eq!(&k.buffers[0].data.as_deref().unwrap()[..4], &[5, 0, 0, 0]);
        }
        let e = parse_kernel_with(src, "t.kern", Scale::Default, &[("LEVELS", 5)]).unwrap_err();
        assert!(e.to_string().contains("size `LEVELS`"), "{e}");
    }

    #[test]
    fn buffers_are_laid_out_at_their_full_scale_extent() {
        use super::super::{parse_kernel_at, Scale};
        // Issue 29 §4: a scaled run places its buffers where the full-size run does.
        let src = "kernel k\nsize ROWS = 4 full 16\nsize COLS = 2*ROWS full 3*ROWS\ngrid 1\n\
                   block 32\nbuffer A 4 * ROWS * COLS\ninput S = seq(n=ROWS)\n\
                   buffer B from S.values reserve 4 * ROWS\nbuffer C 1K\nbar\n";
        let d = parse_kernel_at(src, "t.kern", Scale::Default).unwrap();
        let f = parse_kernel_at(src, "t.kern", Scale::Full).unwrap();
        assert_eq!((d.buffers[0].bytes, f.buffers[0].bytes), (4 * 4 * 8, 4 * 16 * 48));
        assert_eq!((d.buffers[1].bytes, f.buffers[1].bytes), (4 * 4, 4 * 16));
        for (a, b) in d.buffers.iter().zip(&f.buffers) {
            assert_eq!((a.base, a.extent), (b.base, b.extent), "{a:?} {b:?}");
        }
        // COLS's full value uses ROWS's full value (3 · 16), not the default's.
        assert_eq!(d.buffers[0].extent, 4 * 16 * 48);
        assert_eq!(d.buffers[1].extent, 4 * 16, "the reserve, at full scale");
        assert_eq!(d.buffers[2].base, d.buffers[1].base + 256, "64 B rounded to 256");
        // A full value below the default (an offset the default needs) never shrinks a
        // buffer below its own size.
        let k = "kernel k\nsize Z0 = 67 full 0\ngrid 1\nblock 32\nbuffer A 4 * (Z0 + 1)\nbar\n";
        let a = &parse_kernel_at(k, "t", Scale::Default).unwrap().buffers[0];
        assert_eq!((a.bytes, a.extent), (4 * 68, 4 * 68));
    }

    #[test]
    fn reserve_errors() {
        let hdr = "kernel k\ngrid 1\nblock 32\nbuffer A 1K\ninput S = seq(n=8)\n";
        let e = |b: &str| format!("{hdr}{b}bar\n");
        check_err(
            &e("buffer B from S.values reserve 16\n"),
            6,
            32,
            "`S.values` holds 32 bytes, more than the 16 reserved for buffer `B`",
        );
        check_err(
            &e("buffer B from S.values reserve\n"),
            6,
            31,
            "expected the bytes to reserve after `reserve`",
        );
        check_err(&e("buffer B from S.values reserve 0\n"), 6, 32, "buffer size");
    }

    #[test]
    fn size_errors() {
        use super::super::{parse_kernel_at, Scale};
        let hdr = "kernel k\ngrid 1\nblock 32\nbuffer A 1K\n";
        let e = |b: &str| format!("{hdr}{b}");
        check_err(&e("size rows = 1 full 2\n"), 5, 6, "sizes are upper case");
        check_err(&e("size R0ws = 1 full 2\n"), 5, 6, "sizes are upper case");
        check_err(&e("size 9 = 1 full 2\n"), 5, 6, "expected a size name");
        check_err(&e("size\n"), 5, 5, "expected a size name");
        check_err(
            &e("size N = 1 full 2\nsize N = 3 full 4\n"),
            6,
            6,
            "duplicate size `N` (first declared on line 5)",
        );
        check_err(
            &e("size A = 1 full 2\n"),
            5,
            6,
            "the name of the buffer declared on line 4",
        );
        check_err(
            &e("input S = seq(n=2)\nsize S = 1 full 2\n"),
            6,
            6,
            "the name of the input declared on line 5",
        );
        check_err(&e("size N 1 full 2\n"), 5, 8, "expected `=`");
        check_err(
            &e("size N = 1\n"),
            5,
            11,
            "expected `full` and the full-scale value (`size N = 1 full VALUE`), found end of line",
        );
        check_err(&e("size N = 1 2\n"), 5, 12, "expected `full`");
        check_err(
            &e("size N = 1 full\n"),
            5,
            16,
            "expected the full-scale value after `full`",
        );
        check_err(&e("size N = 1 full 2 3\n"), 5, 19, "expected end of line");
        check_err(
            &e("size N = tid full 2\n"),
            5,
            10,
            "the default value of size `N` must be a constant",
        );
        check_err(&e("size N = 1 full M\n"), 5, 17, "unknown name `M`: the full value of size `N` must be a constant expression (a named constant is declared before its use with `size");
        check_err(&e("size N = 1 / 0 full 2\n"), 5, 12, "division by zero");
        // Sizes are header directives, and a later line cannot reuse the name.
        check_err(
            &e("bar\nsize N = 1 full 2\n"),
            6,
            1,
            "`size` is a header directive",
        );
        check_err(
            &e("size N = 1 full 2\nbuffer N 4\n"),
            6,
            8,
            "expected a buffer name, found the size `N`",
        );
        check_err(
            &e("size N = 1 full 2\nloop N 2 {\n"),
            6,
            6,
            "expected a loop variable name, found the size `N`",
        );
        check_err(
            &e("size N = 1 full 2\nN\n"),
            6,
            1,
            "expected a directive or an instruction, found the size `N`",
        );
        // Values are checked where they are used, at the scale parsed.
        let src = "kernel k\nsize B = 32 full 2048\ngrid 1\nblock B\nbar\n";
        assert!(parse(src).is_ok());
        let err = parse_kernel_at(src, "t.kern", Scale::Full).unwrap_err();
        assert_eq!((err.line, err.col), (4, 7), "{err}");
        assert!(err.message.contains("at most 1024 threads"), "{err}");
        let src = "kernel k\nsize N = 2 full -1\ngrid 1\nblock 32\nloop i N {\nbar\n}\n";
        let err = parse_kernel_at(src, "t.kern", Scale::Full).unwrap_err();
        assert_eq!((err.line, err.col, err.file.as_str()), (5, 8, "t.kern"), "{err}");
        assert!(err.message.contains("loop count must be in 0"), "{err}");
    }

    /// `parse_kernel_file` reads `file(path=…)` inputs relative to the kernel's directory.
    #[test]
    fn file_inputs_are_relative_to_the_kernel() {
        let dir = std::env::temp_dir().join(format!("mascar-kern-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("d.bin"), [1u8, 0, 2, 0, 3, 0]).unwrap();
        let src = body("input F = file(path=\"d.bin\", type=u16)\nbuffer D from F.values\nld.global.2 r1, D[2*lane]\nld.global r2, A[r1]\n");
        let k = super::super::parse_kernel_file(&src, &dir.join("k.kern")).unwrap();
        assert_eq!(k.buffers[1].data.as_deref(), Some(&[1u8, 0, 2, 0, 3, 0][..]));
        let e = super::super::parse_kernel_file(&src, &dir.join("sub").join("k.kern")).unwrap_err();
        assert!(
            e.file.ends_with("k.kern") && e.line == 5 && e.message.contains("d.bin"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
