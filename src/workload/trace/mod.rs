//! Reader for Accel-Sim `.traceg` kernel traces (NVBit-captured SASS instruction streams).
//!
//! A trace is a header of `-key = value` lines ([`TraceHeader`]) followed by CTAs:
//!
//! ```text
//! #BEGIN_TB
//! thread block = 0,0,0
//! warp = 0
//! insts = 23
//! 0008 ffffffff 1 R1 MOV 0 0
//! 0098 ffffffff 1 R4 LDG.E.CG 1 R4 4 1 0x7f2b2d500000 4
//! …
//! #END_TB
//! ```
//!
//! [`TraceReader`] parses the header eagerly and then yields one [`TraceCta`] at a time, so a
//! trace of any size is read in the memory of one CTA. The line layout follows Accel-Sim's
//! own `trace_parser.cc` for tracer versions 1 to 5 (see [`inst`] for the instruction line);
//! every failure is a [`TraceError`] positioned at `file:line:column`, never a panic.
//! [`kernelslist`] reads the launch order of a multi-kernel trace directory.

pub mod error;
pub mod header;
pub mod inst;
pub mod kernelslist;
mod lex;
pub mod opcode;
pub mod reader;

#[cfg(test)]
mod tests;

pub use error::TraceError;
pub use header::TraceHeader;
pub use inst::TraceInst;
pub use kernelslist::ListEntry;
pub use opcode::{base_mnemonic, classify, OpClass, OpcodeTable};
pub use reader::{TraceCta, TraceReader};
