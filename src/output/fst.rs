//! FST waveforms, GTKWave's compressed format, written with the `fst-writer` crate behind
//! the same [`WaveSink`] as VCD, to a temporary file moved into place when complete.
//!
//! Times are in units of 100 ps (FST's time unit is a power of ten), five per half cycle,
//! so the axis reads in cycles as ns as the VCD's does. `fst-writer` has no string values
//! (GTKWave's own FST writer has them as variable-length values): a text is a vector of
//! `8 × chars` bits holding its ASCII characters, first character in the top byte, padded
//! with spaces, which GTKWave shows as text with its ASCII data format (the `.gtkw` sets it)
//! and Surfer with its ASCII translator.

use super::vcd::WaveSink;
use super::PendingFile;
use fst_writer::{
    FstBodyWriter, FstFileType, FstHeaderWriter, FstInfo, FstScopeType, FstSignalId, FstSignalType,
    FstVarDirection, FstVarType, FstWriteError,
};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;

/// FST time units (100 ps) per half cycle.
const UNITS_PER_HALF_CYCLE: u64 = 5;
/// `fst-writer` keeps value changes in memory until a flush writes a compressed block.
const FLUSH_AT: usize = 32 << 20;

enum State {
    Header(FstHeaderWriter<BufWriter<File>>),
    Body(FstBodyWriter<BufWriter<File>>),
    Done,
}

pub struct FstSink {
    file: PendingFile,
    state: State,
    /// By variable id: its FST id and width in bits.
    vars: Vec<Option<(FstSignalId, u32)>>,
    /// A value as `fst-writer` takes it, one ASCII `0`/`1` per bit (reused).
    buf: Vec<u8>,
}

fn io_error(e: FstWriteError) -> io::Error {
    match e {
        FstWriteError::Io(e) => e,
        e => io::Error::other(e.to_string()),
    }
}

impl FstSink {
    /// Writes to `out`, the temporary file of `file`.
    pub fn new(file: PendingFile, out: BufWriter<File>) -> io::Result<Self> {
        let info = FstInfo {
            // FST's time zero offset, not the first time.
            start_time: 0,
            timescale_exponent: -10,
            version: format!("mascar {}", env!("CARGO_PKG_VERSION")),
            date: String::new(),
            file_type: FstFileType::Verilog,
        };
        let header = FstHeaderWriter::new(out, &info).map_err(io_error)?;
        Ok(FstSink {
            file,
            state: State::Header(header),
            vars: vec![],
            buf: Vec::with_capacity(256),
        })
    }

    fn header(&mut self) -> io::Result<&mut FstHeaderWriter<BufWriter<File>>> {
        match &mut self.state {
            State::Header(h) => Ok(h),
            _ => Err(io::Error::other("FST: a declaration after the header")),
        }
    }

    fn body(&mut self) -> io::Result<&mut FstBodyWriter<BufWriter<File>>> {
        match &mut self.state {
            State::Body(b) => Ok(b),
            _ => Err(io::Error::other("FST: a value change inside the header")),
        }
    }

    fn emit(&mut self, var: u32) -> io::Result<()> {
        let (id, _) = self
            .vars
            .get(var as usize)
            .copied()
            .flatten()
            .ok_or_else(|| io::Error::other(format!("FST: no variable {var}")))?;
        let State::Body(b) = &mut self.state else {
            return Err(io::Error::other("FST: a value change inside the header"));
        };
        b.signal_change(id, &self.buf).map_err(io_error)
    }

    fn width(&self, var: u32) -> u32 {
        self.vars.get(var as usize).copied().flatten().map_or(8, |v| v.1)
    }
}

impl WaveSink for FstSink {
    fn scope(&mut self, name: &str) -> io::Result<()> {
        self.header()?
            .scope(name, "", FstScopeType::Module)
            .map_err(io_error)
    }
    fn upscope(&mut self) -> io::Result<()> {
        self.header()?.up_scope().map_err(io_error)
    }
    fn var(&mut self, var: u32, name: &str, width: u32, text: Option<u32>) -> io::Result<()> {
        let width = text.map_or(width, |chars| 8 * chars);
        let id = self
            .header()?
            .var(
                name,
                FstSignalType::bit_vec(width),
                FstVarType::Wire,
                FstVarDirection::Implicit,
                None,
            )
            .map_err(io_error)?;
        let i = var as usize;
        if self.vars.len() <= i {
            self.vars.resize(i + 1, None);
        }
        self.vars[i] = Some((id, width));
        Ok(())
    }
    fn end_header(&mut self) -> io::Result<()> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Header(h) => {
                self.state = State::Body(h.finish().map_err(io_error)?);
                Ok(())
            }
            _ => Err(io::Error::other("FST: the header ended twice")),
        }
    }
    fn time(&mut self, half_cycles: u64) -> io::Result<()> {
        let b = self.body()?;
        if b.size() >= FLUSH_AT {
            b.flush().map_err(io_error)?;
        }
        b.time_change(half_cycles * UNITS_PER_HALF_CYCLE)
            .map_err(io_error)
    }
    fn bits(&mut self, var: u32, width: u32, value: u64) -> io::Result<()> {
        self.buf.clear();
        self.buf.extend(
            (0..width)
                .rev()
                .map(|b| if value >> b & 1 == 1 { b'1' } else { b'0' }),
        );
        self.emit(var)
    }
    fn text(&mut self, var: u32, text: &str) -> io::Result<()> {
        let chars = (self.width(var) / 8) as usize;
        self.buf.clear();
        let bytes = text.bytes().chain(std::iter::repeat(b' ')).take(chars);
        for c in bytes {
            self.buf
                .extend((0..8).rev().map(|b| if c >> b & 1 == 1 { b'1' } else { b'0' }));
        }
        self.emit(var)
    }
    fn finish(self: Box<Self>) -> io::Result<PathBuf> {
        let FstSink { file, state, .. } = *self;
        let State::Body(b) = state else {
            return Err(io::Error::other("FST: finished inside the header"));
        };
        let mut out = b.finish().map_err(io_error)?;
        io::Write::flush(&mut out)?;
        // Dropping the writer closes the file before the rename.
        drop(out);
        file.commit()
    }
}
