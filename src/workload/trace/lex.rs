//! Line-level lexing shared by the header, instruction and kernelslist parsers: whitespace
//! tokens with their positions, and number parsing that says where it failed.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::error::TraceError;
use crate::input::MAX_TRACE_LINE_BYTES as MAX_LINE_BYTES;

/// Longest token text quoted in an error message (fuzzed input can have huge tokens).
const MAX_QUOTE: usize = 40;

/// One line of a file being parsed, kept together so that any error can be positioned.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LineCtx<'a> {
    pub file: &'a str,
    /// 1-based line number.
    pub line_no: usize,
    /// The line, without its line terminator.
    pub text: &'a str,
}

impl<'a> LineCtx<'a> {
    /// An error at byte offset `at` of this line, reported as a 1-based character column.
    pub fn err(&self, at: usize, message: impl Into<String>) -> TraceError {
        let mut at = at.min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        let column = self.text[..at].chars().count() + 1;
        TraceError::new(self.file, self.line_no, column, message)
    }

    /// An error just past the end of the line (something is missing).
    pub fn err_end(&self, message: impl Into<String>) -> TraceError {
        self.err(self.text.len(), message)
    }
}

/// A token: its byte offset in the line and its text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok<'a> {
    pub at: usize,
    pub text: &'a str,
}

/// The whitespace-separated tokens of one line, consumed front to back.
pub(crate) struct Tokens<'a> {
    ctx: LineCtx<'a>,
    pos: usize,
}

impl<'a> Tokens<'a> {
    pub fn new(ctx: LineCtx<'a>) -> Self {
        Tokens { ctx, pos: 0 }
    }

    pub fn ctx(&self) -> LineCtx<'a> {
        self.ctx
    }

    /// The next token, if any.
    pub fn next_tok(&mut self) -> Option<Tok<'a>> {
        let bytes = self.ctx.text.as_bytes();
        let mut i = self.pos;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == bytes.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        self.pos = i;
        // Token boundaries are ASCII whitespace, so they are char boundaries.
        Some(Tok {
            at: start,
            text: &self.ctx.text[start..i],
        })
    }

    /// The next token, or a "truncated line" error naming what was expected.
    pub fn expect(&mut self, what: &str) -> Result<Tok<'a>, TraceError> {
        self.next_tok()
            .ok_or_else(|| self.ctx.err_end(format!("truncated line: missing {what}")))
    }

    /// The next token as a hexadecimal number (optional `0x`).
    pub fn hex_u64(&mut self, what: &str) -> Result<u64, TraceError> {
        let t = self.expect(what)?;
        parse_hex(t.text).ok_or_else(|| self.ctx.err(t.at, format!("bad hex {what} `{}`", quote(t.text))))
    }

    /// The next token as a hexadecimal number that fits 32 bits.
    pub fn hex_u32(&mut self, what: &str) -> Result<u32, TraceError> {
        let t = self.expect(what)?;
        parse_hex(t.text)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                self.ctx
                    .err(t.at, format!("bad hex {what} `{}` (32 bits)", quote(t.text)))
            })
    }

    /// The next token as an unsigned decimal number.
    pub fn dec_u32(&mut self, what: &str) -> Result<u32, TraceError> {
        let t = self.expect(what)?;
        parse_dec_u64(t.text)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                self.ctx.err(
                    t.at,
                    format!("bad {what} `{}`: expected a decimal number", quote(t.text)),
                )
            })
    }

    /// The next token as a signed decimal number.
    pub fn dec_i64(&mut self, what: &str) -> Result<i64, TraceError> {
        let t = self.expect(what)?;
        parse_dec_i64(t.text).ok_or_else(|| {
            self.ctx.err(
                t.at,
                format!("bad {what} `{}`: expected a decimal number", quote(t.text)),
            )
        })
    }
}

/// A token shortened for quoting in a message.
pub(crate) fn quote(s: &str) -> String {
    if s.chars().count() <= MAX_QUOTE {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX_QUOTE).collect();
        format!("{head}…")
    }
}

/// Hexadecimal with an optional `0x`/`0X` prefix, digits only (no sign).
pub(crate) fn parse_hex(s: &str) -> Option<u64> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

/// Unsigned decimal, digits only.
pub(crate) fn parse_dec_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Signed decimal: an optional `-` and digits.
pub(crate) fn parse_dec_i64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `x,y,z` or `(x,y,z)`, spaces allowed around the numbers. `at` is the byte offset of
/// `value` in the line, for the error position.
pub(crate) fn parse_triple(
    ctx: &LineCtx,
    at: usize,
    value: &str,
    what: &str,
) -> Result<[u32; 3], TraceError> {
    let bad = || ctx.err(at, format!("bad {what} `{}`: expected x,y,z", quote(value)));
    let inner = value.trim();
    let inner = inner
        .strip_prefix('(')
        .map(|s| s.strip_suffix(')').unwrap_or(s))
        .unwrap_or(inner);
    let mut out = [0u32; 3];
    let mut parts = inner.split(',');
    for slot in &mut out {
        let part = parts.next().ok_or_else(bad)?.trim();
        *slot = parse_dec_u64(part)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(bad)?;
    }
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(out)
}

/// Splits a `key = value` line: the key with its inner whitespace collapsed, the byte offset
/// of the value and the trimmed value. `None` if the line has no `=`.
pub(crate) fn split_key_value(text: &str) -> Option<(String, usize, &str)> {
    let eq = text.find('=')?;
    let key = text[..eq].split_ascii_whitespace().collect::<Vec<_>>().join(" ");
    let rest = &text[eq + 1..];
    let value = rest.trim();
    let lead = rest.len() - rest.trim_start().len();
    Some((key, eq + 1 + lead, value))
}

/// Reads a whole small file of the trace (a kernelslist) line by line: a line longer than
/// [`MAX_LINE_BYTES`] or a file longer than [`crate::input::MAX_LIST_BYTES`] is refused with
/// its position, so that `/dev/zero` or an endless file ends at once.
pub(crate) fn read_capped(path: &Path, file: &str) -> Result<String, TraceError> {
    let f =
        std::fs::File::open(path).map_err(|e| TraceError::unpositioned(file, format!("cannot read: {e}")))?;
    let mut reader = BufReader::new(f);
    let mut text = Vec::new();
    let mut line_no = 0;
    loop {
        line_no += 1;
        let start = text.len();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut text)
            .map_err(|e| TraceError::new(file, line_no, 1, format!("read error: {e}")))?;
        if n == 0 {
            break;
        }
        let line = &text[start..];
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if body.len() > MAX_LINE_BYTES {
            return Err(TraceError::new(
                file,
                line_no,
                MAX_LINE_BYTES + 1,
                format!("line longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        if text.len() as u64 > crate::input::MAX_LIST_BYTES {
            return Err(TraceError::new(
                file,
                line_no,
                1,
                format!(
                    "file longer than {} (the cap on a kernel list)",
                    crate::input::human_bytes(crate::input::MAX_LIST_BYTES)
                ),
            ));
        }
    }
    String::from_utf8(text).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        TraceError::new(
            file,
            valid.iter().filter(|&&b| b == b'\n').count() + 1,
            String::from_utf8_lossy(&valid[line_start..]).chars().count() + 1,
            "invalid UTF-8",
        )
    })
}

#[cfg(test)]
mod capped_tests {
    use super::*;

    #[test]
    fn a_long_line_is_refused_at_its_line_and_a_short_list_is_read() {
        let dir = std::env::temp_dir().join(format!("mascar-lex-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("kernelslist.g");
        let long = "k".repeat(MAX_LINE_BYTES + 1);
        std::fs::write(&p, format!("MemcpyHtoD,0x10,4\nkernel-1.traceg\n{long}\n")).unwrap();
        let e = read_capped(&p, "list").unwrap_err();
        assert_eq!((e.line, e.column), (3, MAX_LINE_BYTES + 1), "{e}");
        std::fs::write(&p, "MemcpyHtoD,0x10,4\r\nkernel-1.traceg").unwrap();
        assert_eq!(
            read_capped(&p, "list").unwrap(),
            "MemcpyHtoD,0x10,4\r\nkernel-1.traceg"
        );
        std::fs::write(&p, b"kernel-1.traceg\nker\xffnel").unwrap();
        let e = read_capped(&p, "list").unwrap_err();
        assert_eq!((e.line, e.column, e.message.as_str()), (2, 4, "invalid UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
