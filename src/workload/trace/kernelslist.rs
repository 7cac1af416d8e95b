//! `kernelslist.g`: the launch order of a traced program, kernels and the memcpys between them.
//!
//! ```text
//! MemcpyHtoD,0x00007fb02d700000,4096
//! kernel-1.traceg
//! ```
//!
//! Kernel lines are file names relative to the list's directory.

use std::path::{Path, PathBuf};

use super::error::TraceError;
use super::lex::{parse_dec_u64, parse_hex, quote, LineCtx};

/// The list file Accel-Sim looks for in a trace directory.
pub const KERNELSLIST: &str = "kernelslist.g";

/// One command of a kernelslist, in launch order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListEntry {
    /// A kernel launch: its trace file, resolved against the list's directory.
    Kernel(PathBuf),
    /// A memory copy: `Memcpy<direction>,0x<addr>,<bytes>`, e.g. direction `HtoD`.
    Memcpy {
        direction: String,
        addr: u64,
        bytes: u64,
    },
}

/// Parses a `kernelslist.g` file.
pub fn parse(path: impl AsRef<Path>) -> Result<Vec<ListEntry>, TraceError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    // Line and file size are capped: `--trace /dev/zero` ends with an error.
    let text = super::lex::read_capped(path, &name)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    parse_str(&text, &name, dir)
}

/// Parses kernelslist text; `file` names it in errors, kernel paths are joined to `dir`.
pub fn parse_str(text: &str, file: &str, dir: &Path) -> Result<Vec<ListEntry>, TraceError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let ctx = LineCtx {
            file,
            line_no: i + 1,
            text: raw,
        };
        let line = raw.trim();
        let at = raw.len() - raw.trim_start().len();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("Memcpy") {
            out.push(memcpy(&ctx, at, rest)?);
        } else if line.starts_with("kernel") {
            out.push(ListEntry::Kernel(dir.join(line)));
        } else {
            return Err(ctx.err(at, format!("unrecognised kernelslist line `{}`", quote(line))));
        }
    }
    Ok(out)
}

/// `<direction>,0x<addr>,<bytes>` after the `Memcpy` prefix at byte offset `at`.
fn memcpy(ctx: &LineCtx, at: usize, rest: &str) -> Result<ListEntry, TraceError> {
    let parts: Vec<&str> = rest.split(',').collect();
    if parts.len() != 3 {
        return Err(ctx.err(at, "memcpy line: expected Memcpy<direction>,<address>,<bytes>"));
    }
    // Byte offsets of the address and size fields, for error columns.
    let addr_at = at + "Memcpy".len() + parts[0].len() + 1;
    let bytes_at = addr_at + parts[1].len() + 1;
    let addr = parse_hex(parts[1].trim())
        .ok_or_else(|| ctx.err(addr_at, format!("bad memcpy address `{}`", quote(parts[1]))))?;
    let bytes = parse_dec_u64(parts[2].trim())
        .ok_or_else(|| ctx.err(bytes_at, format!("bad memcpy size `{}`", quote(parts[2]))))?;
    Ok(ListEntry::Memcpy {
        direction: parts[0].trim().to_string(),
        addr,
        bytes,
    })
}

/// What a user-given trace path stands for: a directory (its `kernelslist.g`), a kernelslist
/// file, or a single `.traceg` (one kernel, no memcpys).
pub fn resolve(path: impl AsRef<Path>) -> Result<Vec<ListEntry>, TraceError> {
    let path = path.as_ref();
    if path.is_dir() {
        let list = path.join(KERNELSLIST);
        if !list.is_file() {
            return Err(TraceError::unpositioned(
                &path.display().to_string(),
                format!("trace directory has no {KERNELSLIST}"),
            ));
        }
        parse(list)
    } else if path.extension().is_some_and(|e| e == "traceg") {
        Ok(vec![ListEntry::Kernel(path.to_path_buf())])
    } else {
        parse(path)
    }
}
