//! Lexer: one line of source into tokens with their columns, integer literals, and the
//! [`Cursor`] the parsers read tokens through (with the `expected …, found …` messages).
//!
//! The `kernel` line is not lexed (its name may contain `-`); see
//! [`Parser::line`](super::parser::Parser::line).

use super::{show, Diag, PResult};
use crate::workload::program::{Reg, MAX_REG};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_.]*` (dots allow mnemonics like `ld.global.8`).
    Ident(String),
    /// `[0-9][A-Za-z0-9_]*`, validated by [`parse_number`].
    Num(String),
    Punct(char),
    /// `"…"`: a double-quoted string (an input's file path), without the quotes. No escapes.
    Str(String),
    /// A name declared by `size NAME = DEFAULT full FULL`, with its value at the parse's
    /// scale: the parser turns identifiers into this after lexing (see
    /// [`Parser::line`](super::parser::Parser::line)), so a size stands wherever a number does.
    Size(String, i64),
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    /// 1-based column of the first character.
    pub(super) col: usize,
}

/// A token as quoted in a message.
pub(super) fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Ident(s) | Tok::Num(s) => format!("`{}`", show(s)),
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Str(s) => format!("`\"{}\"`", show(s)),
        Tok::Size(s, _) => format!("the size `{}`", show(s)),
    }
}

/// Splits one line (comment already removed) into tokens; also returns the column just past
/// the line, where `end of line` errors point.
pub(super) fn lex_line(text: &str, line: usize) -> PResult<(Vec<Token>, usize)> {
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
        if c == '"' {
            let mut s = String::new();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(n) => {
                        col += 1;
                        s.push(n);
                    }
                    None => {
                        return Err(Diag::new(
                            line,
                            start,
                            "unterminated string: expected a closing `\"` on the same line",
                        ))
                    }
                }
            }
            col += 1;
            toks.push(Token {
                tok: Tok::Str(s),
                col: start,
            });
            continue;
        }
        if ",[](){}+-*/%^<>=!".contains(c) {
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
pub(super) fn parse_number(text: &str) -> Result<i64, String> {
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
pub(super) struct Cursor<'t> {
    pub(super) toks: &'t [Token],
    pub(super) pos: usize,
    pub(super) line: usize,
    /// Column just past the line's last character.
    pub(super) eol_col: usize,
}

impl<'t> Cursor<'t> {
    pub(super) fn peek(&self) -> Option<&'t Token> {
        self.toks.get(self.pos)
    }
    pub(super) fn peek_tok(&self) -> Option<&'t Tok> {
        self.peek().map(|t| &t.tok)
    }
    pub(super) fn bump(&mut self) -> Option<&'t Token> {
        let t = self.toks.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    /// Column of the next token, or of the end of the line.
    pub(super) fn col(&self) -> usize {
        self.peek().map_or(self.eol_col, |t| t.col)
    }
    fn found(&self) -> String {
        self.peek_tok()
            .map_or_else(|| "end of line".to_string(), describe)
    }
    pub(super) fn err(&self, msg: impl Into<String>) -> Diag {
        Diag::new(self.line, self.col(), msg)
    }
    pub(super) fn expected(&self, what: &str) -> Diag {
        self.err(format!("expected {what}, found {}", self.found()))
    }
    /// The token after the next one is `c`, written right after it (`<=`, `==`, `!=`).
    pub(super) fn joined_punct(&self, c: char) -> bool {
        match (self.toks.get(self.pos), self.toks.get(self.pos + 1)) {
            (Some(a), Some(b)) => b.tok == Tok::Punct(c) && b.col == a.col + 1,
            _ => false,
        }
    }
    pub(super) fn is_punct(&self, c: char) -> bool {
        self.peek_tok() == Some(&Tok::Punct(c))
    }
    pub(super) fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub(super) fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{c}`")))
        }
    }
    pub(super) fn expect_end(&self) -> PResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.expected("end of line")),
        }
    }
    /// An identifier token, with its column.
    pub(super) fn expect_ident(&mut self, what: &str) -> PResult<(&'t str, usize)> {
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
    /// An integer literal token, or a declared size.
    pub(super) fn expect_number(&mut self, what: &str) -> PResult<(i64, usize)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Size(_, v),
                col,
            }) => {
                self.pos += 1;
                Ok((*v, *col))
            }
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
    pub(super) fn expect_reg(&mut self) -> PResult<Reg> {
        let what = "a register like `r3`";
        let Some(Token {
            tok: Tok::Ident(s),
            col,
        }) = self.peek()
        else {
            return Err(self.expected(what));
        };
        let Some(r) = register(s, self.line, *col) else {
            return Err(self.expected(what));
        };
        let r = r?;
        self.pos += 1;
        Ok(r)
    }

    /// The next token is a register standing alone as an operand: followed by `,` or the end
    /// of the line (`r2 + 1` is an expression).
    pub(super) fn at_lone_register(&self) -> bool {
        let reg = matches!(self.peek_tok(), Some(Tok::Ident(s)) if is_register_name(s));
        let after = self.toks.get(self.pos + 1).map(|t| &t.tok);
        reg && matches!(after, None | Some(Tok::Punct(',')))
    }
}

/// `r` followed by decimal digits (in range or not).
pub(super) fn is_register_name(s: &str) -> bool {
    s.strip_prefix('r')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The register named `s` at `line:col`: `None` if `s` is not a register name, an error if it
/// is one out of range.
pub(super) fn register(s: &str, line: usize, col: usize) -> Option<PResult<Reg>> {
    if !is_register_name(s) {
        return None;
    }
    let n = s[1..].parse::<u32>().ok().filter(|&n| n <= MAX_REG as u32);
    Some(n.map(|n| n as Reg).ok_or_else(|| {
        Diag::new(
            line,
            col,
            format!(
                "register `{}` out of range: registers are r0 ..= r{MAX_REG}",
                show(s)
            ),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    #[test]
    fn tokens_and_columns() {
        let (toks, eol) = lex_line("  ld.global.8 r1, A[0x1_0K]\t", 3).unwrap();
        let got: Vec<(Tok, usize)> = toks.into_iter().map(|t| (t.tok, t.col)).collect();
        let id = |s: &str| Tok::Ident(s.to_string());
        assert_eq!(
            got,
            vec![
                (id("ld.global.8"), 3),
                (id("r1"), 15),
                (Tok::Punct(','), 17),
                (id("A"), 19),
                (Tok::Punct('['), 20),
                (Tok::Num("0x1_0K".to_string()), 21),
                (Tok::Punct(']'), 27),
            ]
        );
        assert_eq!(eol, 29);
        // A number token stops at `.`; the `.` is then not a token.
        let e = lex_line("1.5", 2).unwrap_err();
        assert_eq!((e.line, e.col), (2, 2));
    }

    #[test]
    fn strings() {
        let (toks, eol) = lex_line(r#"f(path="a b#.npy", x=1)"#, 1).unwrap();
        assert_eq!(toks[4].tok, Tok::Str("a b#.npy".to_string()));
        assert_eq!((toks[4].col, toks[5].col), (8, 18));
        assert_eq!(eol, 24);
        assert_eq!(describe(&toks[4].tok), "`\"a b#.npy\"`");
        let e = lex_line(r#"x = "abc"#, 4).unwrap_err();
        assert_eq!((e.line, e.col), (4, 5));
        assert!(e.message.contains("unterminated string"));
    }

    #[test]
    fn number_literals() {
        assert_eq!(parse_number("0"), Ok(0));
        assert_eq!(parse_number("1_000"), Ok(1000));
        assert_eq!(parse_number("0x10"), Ok(16));
        assert_eq!(parse_number("0XfF"), Ok(255));
        assert_eq!(parse_number("3k"), Ok(3 << 10));
        assert_eq!(parse_number("2M"), Ok(2 << 20));
        assert_eq!(parse_number("0x2G"), Ok(2 << 30));
        assert_eq!(parse_number("9223372036854775807"), Ok(i64::MAX));
        assert!(parse_number("9223372036854775808")
            .unwrap_err()
            .contains("does not fit"));
        assert!(parse_number("8G").is_ok() && parse_number("8589934592G").is_err());
        for bad in ["0x", "_", "12abc", "2T", "0x_K"] {
            assert!(
                parse_number(bad).unwrap_err().starts_with("expected a number"),
                "{bad}"
            );
        }
    }

    #[test]
    fn crlf_bom_and_unicode() {
        let src = "\u{feff}kernel k\r\ngrid 1\r\nblock 1\r\nbar\r\n";
        assert!(parse(src).is_ok());
        check_err(&body("add r1, r2 é\n"), 5, 12, "unexpected character `é`");
        check_err(&body("é add r1\n"), 5, 1, "unexpected character");
        check_err("kernel kä\n", 1, 9, "invalid character `ä`");
    }
}
