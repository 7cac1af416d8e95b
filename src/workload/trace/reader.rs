//! The streaming `.traceg` reader: the header is parsed when the reader is made, then CTAs
//! are parsed one at a time as they are asked for, so memory use is one CTA, not one file.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::error::TraceError;
use super::header::{HeaderBuilder, TraceHeader};
use super::inst::{parse_inst, LineFormat, TraceInst};
use super::lex::{parse_dec_u64, parse_triple, quote, split_key_value, LineCtx};
use super::opcode::OpcodeTable;

pub use crate::input::MAX_TRACE_LINE_BYTES as MAX_LINE_BYTES;

/// At most this many instructions are reserved up front from an `insts = n` line, so that a
/// corrupt count cannot allocate much before it is found wrong.
const MAX_RESERVE: usize = 1 << 12;

/// One CTA (thread block) of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceCta {
    /// `thread block = x,y,z`.
    pub id: [u32; 3],
    /// Instructions per warp; the index is the warp id within the CTA. There are
    /// `TraceHeader::warps_per_cta` entries; a warp absent from the trace is empty.
    pub warps: Vec<Vec<TraceInst>>,
    /// Other `key = value` lines of the CTA, such as the `cluster id` / `cluster cta` /
    /// `cluster rank` lines of newer Hopper traces.
    pub other: Vec<(String, String)>,
    /// The line of its `#BEGIN_TB`, for messages about the CTA as a whole.
    pub begin_line: usize,
}

impl TraceCta {
    /// Warp instructions in the CTA.
    pub fn num_insts(&self) -> usize {
        self.warps.iter().map(Vec::len).sum()
    }
}

/// Lines of the input, one at a time, with their numbers. The line buffer is reused.
struct Lines<R> {
    inner: R,
    file: String,
    buf: Vec<u8>,
    cur: String,
    line_no: usize,
    /// Whether the line last read ended with a newline (for positioning end-of-file errors).
    had_newline: bool,
    /// The current line was given back and is to be returned again by `advance`.
    pushed_back: bool,
}

impl<R: BufRead> Lines<R> {
    fn new(inner: R, file: String) -> Self {
        Lines {
            inner,
            file,
            buf: Vec::new(),
            cur: String::new(),
            line_no: 0,
            had_newline: true,
            pushed_back: false,
        }
    }

    /// Moves to the next line; `false` at end of input.
    fn advance(&mut self) -> Result<bool, TraceError> {
        if self.pushed_back {
            self.pushed_back = false;
            return Ok(true);
        }
        // Read into `buf` and swap it with `cur` once valid, so that both allocations are
        // reused and `cur` still holds the last line at end of file.
        self.buf.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let n = (&mut self.inner)
            .take(limit)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| TraceError::new(&self.file, self.line_no + 1, 1, format!("read error: {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        self.line_no += 1;
        self.had_newline = self.buf.last() == Some(&b'\n');
        if self.had_newline {
            self.buf.pop();
        } else if self.buf.len() > MAX_LINE_BYTES {
            return Err(TraceError::new(
                &self.file,
                self.line_no,
                MAX_LINE_BYTES + 1,
                format!("line longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.line_no == 1 && self.buf.starts_with("\u{feff}".as_bytes()) {
            self.buf.drain(..3);
        }
        match String::from_utf8(std::mem::take(&mut self.buf)) {
            Ok(s) => self.buf = std::mem::replace(&mut self.cur, s).into_bytes(),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes();
                let column = String::from_utf8_lossy(&bytes[..valid]).chars().count() + 1;
                self.buf = bytes;
                return Err(TraceError::new(&self.file, self.line_no, column, "invalid UTF-8"));
            }
        }
        Ok(true)
    }

    /// The current line, for parsing and error positions.
    fn ctx(&self) -> LineCtx<'_> {
        LineCtx {
            file: &self.file,
            line_no: self.line_no,
            text: &self.cur,
        }
    }

    /// The end-of-input position: just after the last line (use `err_end` on it).
    fn eof_ctx(&self) -> LineCtx<'_> {
        if self.had_newline {
            LineCtx {
                file: &self.file,
                line_no: self.line_no + 1,
                text: "",
            }
        } else {
            self.ctx()
        }
    }
}

/// What a line of the trace body is, from its first characters.
enum BodyLine<'a> {
    Blank,
    Comment,
    BeginTb,
    EndTb,
    /// A `-key = value` line, which belongs in the header.
    Header,
    /// `key = value`: its key (whitespace collapsed), the value's byte offset and the value.
    Key(String, usize, &'a str),
    Inst,
}

fn body_line(text: &str) -> BodyLine<'_> {
    let t = text.trim_start();
    let first = t.split_ascii_whitespace().next().unwrap_or("");
    if t.is_empty() {
        BodyLine::Blank
    } else if first == "#BEGIN_TB" {
        BodyLine::BeginTb
    } else if first == "#END_TB" {
        BodyLine::EndTb
    } else if t.starts_with('#') {
        BodyLine::Comment
    } else if t.starts_with('-') {
        BodyLine::Header
    } else if let Some((key, at, value)) = split_key_value(text) {
        // Instruction lines never contain `=`.
        BodyLine::Key(key, at, value)
    } else {
        BodyLine::Inst
    }
}

/// The warp whose instructions are being read.
struct OpenWarp {
    id: usize,
    /// `insts = n` and the line it was on, once seen.
    declared: Option<(usize, usize)>,
}

/// A CTA being assembled between `#BEGIN_TB` and `#END_TB`.
struct CtaBuilder {
    begin_line: usize,
    id: Option<[u32; 3]>,
    warps: Vec<Vec<TraceInst>>,
    seen: Vec<bool>,
    open: Option<OpenWarp>,
    other: Vec<(String, String)>,
}

impl CtaBuilder {
    fn new(warps_per_cta: usize, begin_line: usize) -> Self {
        CtaBuilder {
            begin_line,
            id: None,
            warps: vec![Vec::new(); warps_per_cta],
            seen: vec![false; warps_per_cta],
            open: None,
            other: Vec::new(),
        }
    }

    /// Checks that the open warp got exactly the instructions it declared.
    fn close_warp(&mut self, ctx: &LineCtx) -> Result<(), TraceError> {
        if let Some(w) = self.open.take() {
            let Some((n, decl_line)) = w.declared else {
                return Err(ctx.err(0, format!("warp {} has no `insts =` line", w.id)));
            };
            let got = self.warps[w.id].len();
            if got != n {
                return Err(ctx.err(
                    0,
                    format!("instruction count mismatch: warp {} declares insts = {n} (line {decl_line}) but has {got}", w.id),
                ));
            }
        }
        Ok(())
    }

    fn start_warp(&mut self, ctx: &LineCtx, at: usize, value: &str) -> Result<(), TraceError> {
        self.close_warp(ctx)?;
        let n = self.warps.len();
        let id =
            parse_dec_u64(value).ok_or_else(|| ctx.err(at, format!("bad warp id `{}`", quote(value))))?;
        let id = usize::try_from(id).ok().filter(|&i| i < n).ok_or_else(|| {
            ctx.err(
                at,
                format!("warp id {id} out of range: the block dim gives {n} warps per CTA"),
            )
        })?;
        if self.seen[id] {
            return Err(ctx.err(at, format!("warp {id} appears twice in this CTA")));
        }
        self.seen[id] = true;
        self.open = Some(OpenWarp { id, declared: None });
        Ok(())
    }

    fn declare_count(&mut self, ctx: &LineCtx, at: usize, value: &str) -> Result<(), TraceError> {
        let Some(w) = self.open.as_mut() else {
            return Err(ctx.err(0, "`insts =` line without a `warp =` line before it"));
        };
        if let Some((_, line)) = w.declared {
            return Err(ctx.err(
                0,
                format!("second `insts =` line for warp {} (first on line {line})", w.id),
            ));
        }
        let n = parse_dec_u64(value)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ctx.err(at, format!("bad instruction count `{}`", quote(value))))?;
        w.declared = Some((n, ctx.line_no));
        self.warps[w.id].reserve_exact(n.min(MAX_RESERVE));
        Ok(())
    }

    /// Where the next instruction goes: the open warp, if it still expects one.
    fn inst_slot(&mut self, ctx: &LineCtx) -> Result<&mut Vec<TraceInst>, TraceError> {
        let Some(w) = self.open.as_ref() else {
            return Err(ctx.err(0, "instruction line outside a warp (no `warp =` line before it)"));
        };
        let Some((n, decl_line)) = w.declared else {
            return Err(ctx.err(
                0,
                format!("instruction line before the `insts =` line of warp {}", w.id),
            ));
        };
        let insts = &mut self.warps[w.id];
        if insts.len() >= n {
            return Err(ctx.err(
                0,
                format!("instruction count mismatch: warp {} declares insts = {n} (line {decl_line}) but has more", w.id),
            ));
        }
        Ok(insts)
    }

    fn finish(mut self, ctx: &LineCtx) -> Result<TraceCta, TraceError> {
        self.close_warp(ctx)?;
        let id = self.id.ok_or_else(|| {
            ctx.err(
                0,
                format!(
                    "CTA begun at line {} has no `thread block =` line",
                    self.begin_line
                ),
            )
        })?;
        Ok(TraceCta {
            id,
            warps: self.warps,
            other: self.other,
            begin_line: self.begin_line,
        })
    }
}

/// Streaming reader of one `.traceg` kernel trace.
///
/// After the first error, or at the end of the file, [`TraceReader::next_cta`] returns `None`.
pub struct TraceReader<R> {
    lines: Lines<R>,
    header: TraceHeader,
    format: LineFormat,
    opcodes: OpcodeTable,
    done: bool,
}

impl TraceReader<BufReader<File>> {
    /// Opens a `.traceg` file and parses its header.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        if path.extension().is_some_and(|e| e == "xz") {
            return Err(TraceError::unpositioned(
                &name,
                "compressed traces are not read directly: run `xz -d` first",
            ));
        }
        let file =
            File::open(path).map_err(|e| TraceError::unpositioned(&name, format!("cannot open: {e}")))?;
        Self::new(BufReader::with_capacity(1 << 16, file), name)
    }
}

impl<R: BufRead> TraceReader<R> {
    /// A reader over `reader`; `file_name` is used in error messages. Reads the header now.
    pub fn new(reader: R, file_name: impl Into<String>) -> Result<Self, TraceError> {
        let mut lines = Lines::new(reader, file_name.into());
        let mut builder = HeaderBuilder::default();
        // The header runs until the first line that is not blank, a comment or `-key = value`;
        // that line is given back for the body.
        let header = loop {
            if !lines.advance()? {
                let end = lines.eof_ctx();
                break builder.finish(&end, end.text.len())?;
            }
            match body_line(&lines.cur) {
                BodyLine::Blank | BodyLine::Comment => {}
                BodyLine::Header => builder.add_line(&lines.ctx())?,
                _ => {
                    let header = builder.finish(&lines.ctx(), 0)?;
                    lines.pushed_back = true;
                    break header;
                }
            }
        };
        let format = LineFormat::for_version(header.tracer_version, header.lineinfo);
        Ok(TraceReader {
            lines,
            header,
            format,
            opcodes: OpcodeTable::default(),
            done: false,
        })
    }

    /// The kernel header.
    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// The file name used in error messages.
    pub fn file_name(&self) -> &str {
        &self.lines.file
    }

    /// The opcodes interned so far.
    pub fn opcodes(&self) -> &OpcodeTable {
        &self.opcodes
    }

    /// The opcode text of a [`TraceInst::opcode`] id from this reader.
    pub fn opcode_name(&self, id: u16) -> Option<&str> {
        self.opcodes.name(id)
    }

    /// Opcodes not in the class tables (run as ALU), per base mnemonic, with the number of
    /// instructions read so far that used them.
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        self.opcodes.unknown_opcodes()
    }

    /// The next CTA, `None` at the end of the trace (or after an error).
    pub fn next_cta(&mut self) -> Option<Result<TraceCta, TraceError>> {
        if self.done {
            return None;
        }
        match self.read_cta() {
            Ok(Some(cta)) => Some(Ok(cta)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    fn read_cta(&mut self) -> Result<Option<TraceCta>, TraceError> {
        // Up to `#BEGIN_TB`: only blank lines and comments may come between CTAs.
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let ctx = self.lines.ctx();
            match body_line(ctx.text) {
                BodyLine::Blank | BodyLine::Comment => {}
                BodyLine::BeginTb => break,
                BodyLine::EndTb => return Err(ctx.err(0, "#END_TB without #BEGIN_TB")),
                BodyLine::Header => return Err(ctx.err(0, "header line after the first CTA began")),
                _ => {
                    return Err(ctx.err(
                        0,
                        format!("expected #BEGIN_TB, found `{}`", quote(ctx.text.trim())),
                    ))
                }
            }
        }
        let mut cta = CtaBuilder::new(self.header.warps_per_cta(), self.lines.line_no);
        loop {
            if !self.lines.advance()? {
                let begin = cta.begin_line;
                let msg = format!("end of file before #END_TB of the CTA begun at line {begin}");
                return Err(self.lines.eof_ctx().err_end(msg));
            }
            let ctx = self.lines.ctx();
            match body_line(ctx.text) {
                BodyLine::Blank | BodyLine::Comment => {}
                BodyLine::EndTb => return cta.finish(&ctx).map(Some),
                BodyLine::BeginTb => {
                    return Err(ctx.err(
                        0,
                        format!("#BEGIN_TB inside the CTA begun at line {}", cta.begin_line),
                    ))
                }
                BodyLine::Header => return Err(ctx.err(0, "header line inside a CTA")),
                BodyLine::Key(key, at, value) => match key.as_str() {
                    "thread block" => {
                        if cta.id.is_some() {
                            return Err(ctx.err(0, "second `thread block =` line in one CTA"));
                        }
                        let id = parse_triple(&ctx, at, value, "thread block id")?;
                        let grid = self.header.grid_dim;
                        if id.iter().zip(&grid).any(|(i, g)| i >= g) {
                            return Err(ctx.err(
                                at,
                                format!(
                                    "thread block {value} outside the grid ({},{},{})",
                                    grid[0], grid[1], grid[2]
                                ),
                            ));
                        }
                        cta.id = Some(id);
                    }
                    "warp" => cta.start_warp(&ctx, at, value)?,
                    "insts" => cta.declare_count(&ctx, at, value)?,
                    _ => cta.other.push((key, value.to_string())),
                },
                BodyLine::Inst => {
                    let slot = cta.inst_slot(&ctx)?;
                    slot.push(parse_inst(ctx, self.format, &mut self.opcodes)?);
                }
            }
        }
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<TraceCta, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_cta()
    }
}
