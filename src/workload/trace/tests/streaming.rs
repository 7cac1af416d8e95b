//! Streaming: CTAs come out one at a time from a source that writes them only when asked,
//! so the reader never holds more than the CTA it is parsing.

use std::cell::Cell;
use std::io::{BufReader, Read};
use std::rc::Rc;

use crate::workload::trace::{OpClass, TraceReader};

const WARPS: u32 = 4;
const INSTS: u32 = 24;

/// An endless trace (a grid of 2^32 - 1 CTAs), generated one CTA at a time. `generated`
/// counts the CTAs written so far.
struct EndlessTrace {
    chunk: Vec<u8>,
    pos: usize,
    next_cta: u32,
    started: bool,
    generated: Rc<Cell<u32>>,
}

impl EndlessTrace {
    fn header() -> String {
        format!(
            "-kernel name = endless\n-grid dim = ({},1,1)\n-block dim = ({},1,1)\n\
             -accelsim tracer version = 4\n\n",
            u32::MAX,
            WARPS * 32
        )
    }

    fn cta(c: u32) -> String {
        let mut s = format!("#BEGIN_TB\nthread block = {c},0,0\n");
        for w in 0..WARPS {
            s += &format!("warp = {w}\ninsts = {INSTS}\n");
            let base = 0x10_0000_0000u64 + (u64::from(c) * u64::from(WARPS) + u64::from(w)) * 128;
            for i in 0..INSTS - 1 {
                s += &match i % 3 {
                    0 => format!("{:04x} ffffffff 1 R{} FFMA 2 R1 R2 0\n", i * 16, i % 8),
                    1 => format!("{:04x} ffffffff 1 R4 LDG.E 1 R6 4 1 {base:#x} 4\n", i * 16),
                    _ => format!("{:04x} 0000000f 0 STG.E 2 R6 R4 4 2 {base:#x} 4 4 4\n", i * 16),
                };
            }
            s += &format!("{:04x} ffffffff 0 EXIT 0 0\n", (INSTS - 1) * 16);
        }
        s + "#END_TB\n\n"
    }
}

impl Read for EndlessTrace {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.chunk.len() {
            self.chunk = if self.started {
                let c = self.next_cta;
                self.next_cta += 1;
                self.generated.set(self.generated.get() + 1);
                Self::cta(c).into_bytes()
            } else {
                self.started = true;
                Self::header().into_bytes()
            };
            self.pos = 0;
        }
        let n = out.len().min(self.chunk.len() - self.pos);
        out[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn ctas_are_read_one_at_a_time() {
    let generated = Rc::new(Cell::new(0));
    let source = EndlessTrace {
        chunk: Vec::new(),
        pos: 0,
        next_cta: 0,
        started: false,
        generated: Rc::clone(&generated),
    };
    let mut reader = TraceReader::new(BufReader::with_capacity(4096, source), "endless.traceg").unwrap();
    assert_eq!(reader.header().num_ctas(), u64::from(u32::MAX));
    // Finding the end of the header takes the first line of CTA 0, so that CTA is buffered.
    assert!(
        generated.get() <= 1,
        "{} CTAs generated for the header",
        generated.get()
    );

    let ctas = 3000u32;
    let mut insts = 0usize;
    for c in 0..ctas {
        let cta = reader.next_cta().expect("the trace is endless").unwrap();
        assert_eq!(cta.id, [c, 0, 0]);
        assert_eq!(cta.warps.len(), WARPS as usize);
        // At most the next CTA has been generated (into the read buffer) beyond this one.
        assert!(generated.get() <= c + 2, "CTA {c}: {} generated", generated.get());
        let w = &cta.warps[3];
        let base = 0x10_0000_0000u64 + (u64::from(c) * u64::from(WARPS) + 3) * 128;
        assert_eq!(w[1].addrs, (0..32).map(|k| base + 4 * k).collect::<Vec<_>>());
        assert_eq!(w[2].addrs, vec![base, base + 4, base + 8, base + 12]);
        assert_eq!(w.last().map(|i| i.class), Some(OpClass::Exit));
        insts += cta.num_insts();
    }
    assert_eq!(insts, (ctas * WARPS * INSTS) as usize);
    assert_eq!(
        reader.opcodes().len(),
        4,
        "FFMA, LDG.E, STG.E, EXIT interned once each"
    );
}
