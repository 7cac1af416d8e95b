//! Line-level lexing shared by the header, instruction and kernelslist parsers: whitespace
//! tokens with their positions, and number parsing that says where it failed.

use super::error::TraceError;

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
