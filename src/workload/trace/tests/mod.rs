//! Tests of the trace reader: the real traces in `testbench/data/traces`, hand-written traces of each
//! format variant, malformed input, mutation fuzzing and streaming.

use std::io::Cursor;
use std::path::PathBuf;

use super::{TraceCta, TraceError, TraceReader};

mod fuzz;
mod kernelslist;
mod malformed;
mod opcode;
mod real;
mod streaming;
mod variants;

/// The real traces, copied from the shared material into `testbench/data/traces`.
fn traces_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testbench/data/traces")
}

/// A minimal header with one CTA of `threads` threads in a grid of `ctas` CTAs.
fn header(version: u32, lineinfo: bool, ctas: u32, threads: u32) -> String {
    format!(
        "-kernel name = _Z4testv\n-kernel id = 1\n-grid dim = ({ctas},1,1)\n-block dim = ({threads},1,1)\n\
         -accelsim tracer version = {version}\n-enable lineinfo = {}\n\n",
        u32::from(lineinfo)
    )
}

/// A reader over an in-memory trace.
type MemReader<'a> = TraceReader<Cursor<&'a [u8]>>;

/// Reads a whole in-memory trace: the reader (for opcode names) and every CTA.
fn read_all(text: &str) -> Result<(MemReader<'_>, Vec<TraceCta>), TraceError> {
    let mut r = TraceReader::new(Cursor::new(text.as_bytes()), "t.traceg")?;
    let mut ctas = Vec::new();
    while let Some(cta) = r.next_cta() {
        ctas.push(cta?);
    }
    Ok((r, ctas))
}

/// The error reading `text` must give.
fn read_err(text: &str) -> TraceError {
    match read_all(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}
