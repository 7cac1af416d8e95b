//! The grammar of a line: the `kernel` line, header directives, `loop NAME COUNT {` and `}`;
//! instruction lines are in `inst`. Each rule of `check` is applied where its token is read,
//! and [`Lowering`] is fed as the lines are accepted.

use super::check::{self, Decls, OpenLoop};
use super::expr::parse_const;
use super::lexer::{describe, lex_line, Cursor, Tok};
use super::lower::Lowering;
use super::{show, Diag, PResult};
use crate::workload::program::{Buffer, Kernel};

#[derive(Default)]
pub(super) struct Parser {
    pub(super) decls: Decls,
    pub(super) low: Lowering,
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
        let (toks, eol_col) = lex_line(text, line)?;
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
            Tok::Punct('}') => self.close_loop(&mut cur, col),
            Tok::Ident(word) => match word.as_str() {
                "grid" | "block" | "regs" | "shared" | "buffer" => {
                    self.decls.header_directive(word, line, col)?;
                    self.header(word, &mut cur)
                }
                "loop" => {
                    self.decls.body_started = true;
                    self.open_loop(&mut cur, col)
                }
                _ => {
                    self.decls.body_started = true;
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
            _ => self.buffer(cur)?,
        }
        Ok(())
    }

    /// `buffer NAME SIZE`.
    fn buffer(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        let line = cur.line;
        let (name, ncol) = cur.expect_ident("a buffer name")?;
        self.decls.new_buffer(name, line, ncol)?;
        if cur.peek().is_none() {
            return Err(cur.expected("the buffer size in bytes (e.g. `16M`)"));
        }
        let (size, scol) = parse_const(cur, "a buffer size")?;
        cur.expect_end()?;
        let bytes = check::buffer_size(size, line, scol)?;
        let base = self.low.alloc_buffer(bytes, line, scol)?;
        self.decls.buffers.push((
            Buffer {
                name: name.to_string(),
                base,
                bytes,
            },
            line,
        ));
        Ok(())
    }

    /// `loop NAME COUNT {`, the `loop` keyword at `col`.
    fn open_loop(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        self.decls.loop_depth(line, col)?;
        let (name, ncol) = cur.expect_ident("a loop variable name")?;
        self.decls.new_loop_var(name, line, ncol)?;
        if cur.peek().is_none() || cur.is_punct('{') {
            return Err(cur.expected("the iteration count"));
        }
        let (count, ccol) = parse_const(cur, "a loop count")?;
        let count = check::loop_count(count, line, ccol)?;
        if !cur.is_punct('{') {
            return Err(cur.expected("`{` at the end of the `loop` line"));
        }
        cur.bump();
        cur.expect_end()?;
        let start = self.low.loop_start(count);
        self.decls.loops.push(OpenLoop {
            name: name.to_string(),
            start,
            line,
            col,
        });
        Ok(())
    }

    /// `}`, at `col`.
    fn close_loop(&mut self, cur: &mut Cursor<'_>, col: usize) -> PResult<()> {
        let line = cur.line;
        cur.expect_end()?;
        let l = self.decls.close_loop(line, col)?;
        check::loop_body(&l, self.low.next_item(), line, col)?;
        self.low.loop_end(l.start, line, col)
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
}
