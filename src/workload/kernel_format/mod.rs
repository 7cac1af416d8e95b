//! Parser for the `.kern` kernel text format (reference: `docs/kernel-format.md`).
//!
//! The format is line oriented: a header of directives (`kernel`, `grid`, `block`, `regs`,
//! `shared`, `buffer`) followed by a body of instructions, `loop NAME COUNT { … }`,
//! `loop NAME < EXPR { … }` and `if COND { … } else { … }` blocks.
//! Memory addresses are integer expressions over per-lane variables, compiled to the postfix
//! [`ExprNode`](crate::workload::program::ExprNode) bytecode of
//! [`AddrExpr`](crate::workload::program::AddrExpr).
//!
//! One pass over the lines, split by concern (one file each):
//! - `lexer`: one line into tokens with columns, number literals, and the token cursor.
//! - `parser`: the grammar of a line — the `kernel` and header directives, `loop … {` and `}`;
//!   `inst`: instruction lines (mnemonics, operands, addresses); `expr`: address and constant
//!   expressions, emitted as postfix bytecode with constants folded.
//! - `check`: the semantic rules — names and scopes, duplicates, header order, value ranges and
//!   what a complete kernel needs. The parser calls each rule at the token it concerns, so the
//!   first error in the file is the one reported.
//! - `lower`: builds the [`Kernel`] — buffer placement, the flat item list with loop links, the
//!   address-expression table and the register count.
//!
//! Divergence: `if`/`else` and per-lane loops (`loop NAME < EXPR {`) are block lines in
//! `parser`, checked against the stack of open blocks in `check::Decls` (barriers refused
//! inside, nesting bounded by the SIMT stack), and lowered in `lower` to branch instructions
//! whose reconvergence point is the item after the block.
//!
//! Sizes: `size NAME = DEFAULT full FULL` declares a named constant whose value is chosen by
//! the [`Scale`] the kernel is parsed at (the `kernel_scale` setting); after its line, the
//! parser turns the name's tokens into `Tok::Size` with that value, so a size stands wherever
//! a number does (grid, block, buffer sizes, loop counts, generator arguments, expressions).
//!
//! Values: `input NAME = GEN(…)` runs a generator of [`crate::workload::inputs`] in `parser`,
//! and `buffer B from NAME.ARRAY` gives a buffer its contents. Registers in expressions are
//! resolved by `check::Scope` to `Var::Reg` and become scoreboard sources of their
//! instruction; `inst` records which instructions write values (loads from buffers with
//! contents, integer ops), and `lower` decides statically which registers carry values,
//! refuses expressions that read one that does not, and emits the value operations.
//!
//! The parser is a hand-written line lexer plus recursive descent. It never panics: every
//! number is parsed with checked arithmetic, expression nesting is capped at
//! [`MAX_EXPR_NESTING`] and expression length at
//! [`MAX_EXPR_NODES`](crate::workload::program::MAX_EXPR_NODES), and every error carries the
//! 1-based line and column of the offending token.

use thiserror::Error;

use crate::workload::placement::HEAP_START;
use crate::workload::program::{Kernel, MAX_REG};

mod check;
mod expr;
mod inst;
mod lexer;
mod lower;
mod parser;

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

pub use crate::config::Scale;

/// Parses one kernel source at the default scale. `file` is only used in error messages.
/// Inputs read from files (`file(path=…)`) are refused: use [`parse_kernel_file`] for a
/// kernel read from disk.
pub fn parse_kernel(src: &str, file: &str) -> Result<Kernel, ParseError> {
    parse_kernel_in(src, file, None, Scale::Default)
}

/// [`parse_kernel`] at `scale`.
pub fn parse_kernel_at(src: &str, file: &str, scale: Scale) -> Result<Kernel, ParseError> {
    parse_kernel_in(src, file, None, scale)
}

/// Parses the kernel file at `path` whose text is `src`: `file(path=…)` inputs are relative
/// to its directory.
pub fn parse_kernel_file(src: &str, path: &std::path::Path) -> Result<Kernel, ParseError> {
    parse_kernel_file_at(src, path, Scale::Default)
}

/// [`parse_kernel_file`] at `scale`.
pub fn parse_kernel_file_at(src: &str, path: &std::path::Path, scale: Scale) -> Result<Kernel, ParseError> {
    let dir = path.parent().map(|d| {
        if d.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            d
        }
    });
    parse_kernel_in(src, &path.display().to_string(), dir, scale)
}

/// [`parse_kernel_at`] with some `size`s given other values, at both scales: the arguments a
/// host program passes to each launch of one kernel (bfs's level, for instance). Naming a
/// size the source does not declare is an error.
pub fn parse_kernel_with(
    src: &str,
    file: &str,
    scale: Scale,
    sizes: &[(&str, i64)],
) -> Result<Kernel, ParseError> {
    parse_kernel_in_with(src, file, None, scale, sizes)
}

fn parse_kernel_in(
    src: &str,
    file: &str,
    dir: Option<&std::path::Path>,
    scale: Scale,
) -> Result<Kernel, ParseError> {
    parse_kernel_in_with(src, file, dir, scale, &[])
}

fn parse_kernel_in_with(
    src: &str,
    file: &str,
    dir: Option<&std::path::Path>,
    scale: Scale,
    sizes: &[(&str, i64)],
) -> Result<Kernel, ParseError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    let mut p = parser::Parser {
        dir: dir.map(std::path::Path::to_path_buf),
        scale,
        size_overrides: sizes.iter().map(|&(n, v)| (n.to_string(), v)).collect(),
        ..Default::default()
    };
    let mut eof = (1usize, 1usize);
    for (i, raw) in src.lines().enumerate() {
        let line = i + 1;
        eof = (line, raw.chars().count() + 1);
        p.line(strip_comment(raw), line).map_err(|d| d.into_error(file))?;
    }
    if let Some((name, _)) = sizes
        .iter()
        .find(|(n, _)| !p.decls.sizes.iter().any(|d| d.name == *n))
    {
        return Err(ParseError {
            file: file.to_string(),
            line: 1,
            col: 1,
            message: format!("size `{name}` is given a value but the kernel declares no such size"),
        });
    }
    p.finish(eof).map_err(|d| d.into_error(file))
}

/// The line without its `#` comment; a `#` inside a double-quoted string (a path) is kept.
fn strip_comment(raw: &str) -> &str {
    let mut in_str = false;
    for (k, c) in raw.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '#' if !in_str => return &raw[..k],
            _ => {}
        }
    }
    raw
}

// ---------------------------------------------------------------------------------------------
// Diagnostics, shared by every stage

/// An error before the file name is attached.
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

/// Helpers shared by the tests of every stage; each test goes through [`parse_kernel`].
#[cfg(test)]
mod test_util {
    pub(super) use super::{parse_kernel, ParseError};
    use crate::workload::program::{Kernel, LaneEnv, MAX_LOOP_DEPTH};

    pub(super) const EXAMPLE: &str = "\
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

    pub(super) fn parse(src: &str) -> Result<Kernel, ParseError> {
        parse_kernel(src, "t.kern")
    }

    pub(super) fn err(src: &str) -> ParseError {
        match parse(src) {
            Ok(k) => panic!("expected an error, parsed {k:?}"),
            Err(e) => e,
        }
    }

    /// Asserts an error at `line:col` whose message contains `needle`.
    pub(super) fn check_err(src: &str, line: usize, col: usize, needle: &str) {
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
    pub(super) fn body(b: &str) -> String {
        format!("{HDR}{b}")
    }

    pub(super) fn env(tid: i64, cta: i64, loops: [u32; MAX_LOOP_DEPTH]) -> LaneEnv {
        LaneEnv {
            tid,
            cta,
            block: 256,
            grid: 240,
            loops,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;

    /// The example in docs/kernel-format.md parses and has the numbers the doc states.
    #[test]
    fn doc_example() {
        let doc = include_str!("../../../docs/kernel-format.md");
        let start = doc.find("```\n# A streaming kernel").expect("example in doc") + 4;
        let len = doc[start..].find("```").expect("end of example");
        let k = parse_kernel(&doc[start..start + len], "doc").unwrap();
        assert_eq!(k.buffers[0].base, 0x8000_0000);
        assert_eq!(k.buffers[1].base, 0x8100_0000);
        assert_eq!(k.program.dynamic_instructions(), 144);
        assert_eq!(k.total_warp_instructions(), 276_480);
    }

    /// The divergence example in docs/kernel-format.md has the counts the doc states.
    #[test]
    fn doc_divergence_example() {
        let doc = include_str!("../../../docs/kernel-format.md");
        let start = doc.find("```\n# Each thread walks").expect("example in doc") + 4;
        let len = doc[start..].find("```").expect("end of example");
        let k = parse_kernel(&doc[start..start + len], "doc").unwrap();
        assert_eq!(k.total_warp_instructions(), 8 * 17);
        assert_eq!(k.total_thread_instructions(), Some(8 * 320));
    }

    /// The `break` example in docs/kernel-format.md has the counts the doc states, and the
    /// error the doc quotes is the parser's.
    #[test]
    fn doc_break_example() {
        let doc = include_str!("../../../docs/kernel-format.md");
        let start = doc
            .find("```\n# Each thread looks through")
            .expect("example in doc")
            + 4;
        let len = doc[start..].find("```").expect("end of example");
        let k = parse_kernel(&doc[start..start + len], "doc").unwrap();
        assert_eq!(k.total_warp_instructions(), 16);
        assert_eq!(k.total_thread_instructions(), Some(320));
        let e = parse_kernel(&body("add r1\n break\n"), "k.kern")
            .unwrap_err()
            .to_string();
        assert!(doc.contains(&e), "the doc quotes `{e}`");
    }

    /// The values example and the error message in docs/kernel-format.md.
    #[test]
    fn doc_values_example() {
        let doc = include_str!("../../../docs/kernel-format.md");
        let start = doc.find("```\n# CSR traversal").expect("example in doc") + 4;
        let len = doc[start..].find("```").expect("end of example");
        let k = parse_kernel(&doc[start..start + len], "doc").unwrap();
        assert_eq!(k.program.value_slots, 4, "r1 r2 r3 r4");
        assert_eq!(k.buffers.iter().filter(|b| b.data.is_some()).count(), 3);
        let src = "kernel k\ngrid 1\nblock 32\nbuffer col 4K\nbuffer x 4K\n\n\n\n\n\n\
                   ld.global r2, col[4*gtid]\nld.global r3, x[4*r2]\n";
        let e = parse_kernel(src, "k.kern").unwrap_err().to_string();
        assert!(doc.contains(&e), "the doc quotes `{e}`");
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

    /// Deterministic mutation fuzzing: parsing must never panic.
    #[test]
    fn fuzz_no_panic() {
        let seeds: [&[u8]; 4] = [b"kernel b\ngrid 1\nblock 64\nbuffer A 4K\nmov r1, lane\nloop i < 6 {\nloop j < r1 % 5 {\nbreak if j == i\nif lane < j {\nadd r2\nbreak\n} else {\nadd r3\n}\n}\nbreak if r1 > i\n}\n", b"kernel v\ngrid 2\nblock 64\ninput S = seq(n=64, start=3, step=2)\nbuffer D from S.values\nbuffer A 4K\nld.global r1, D[4*lane]\nshl r2, r1, 2\nsetp.lt r3, r1, 9\nif r3 {\nloop e < r1 % 4 {\nld.global r4, A[4*r2 + e]\n}\n}\n", EXAMPLE.as_bytes(), b"kernel k\ngrid 2 3\nblock 8 4\nbuffer X 0x1_000K\nloop a 3 {\nloop b 2 {\nld.global.16 r9, X[rand(a ^ b, 7) * -(lane + 1) % 5]\nst.shared [(tid / 3) + 1], r2\n}\n}\n"];
        let alphabet = b" \n\t#{}[](),+-*/%^._0123456789xKMGrabcdefgiklnoprstuvw$\xc3\xa9\"=<";
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let mut ok = 0;
        for round in 0..8000 {
            let mut buf = seeds[round % seeds.len()].to_vec();
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
