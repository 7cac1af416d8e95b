//! The warp status table (slide 12): per warp, the op type of its next instruction and the
//! stall bit. Written by the WRC for the warps with a head instruction; its read port is
//! write-through. The scheduler picks only among warps with a head instruction, whose
//! entries are written every cycle, so it takes them from the write data (the same values,
//! without the read port's mux on the issue path); the read port is what waveforms, the
//! stalled-warp statistics and the formal properties see.

use super::ports::{WstOut, WstWrite};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wst {
    mem: u64,
    stall: u64,
}

impl Wst {
    /// The table as read this cycle (the written entries bypass to the output).
    pub fn eval(&self, w: &WstWrite) -> WstOut {
        WstOut {
            mem: self.mem & !w.we | w.mem & w.we,
            stall: self.stall & !w.we | w.stall & w.we,
        }
    }

    /// Clock edge: the written entries take their new values; a reset clears the table.
    pub fn clock(&mut self, w: &WstWrite, reset: bool) {
        if reset {
            *self = Wst::default();
            return;
        }
        let out = self.eval(w);
        self.mem = out.mem;
        self.stall = out.stall;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_entries_keep_their_status_and_writes_bypass() {
        let mut t = Wst::default();
        let w1 = WstWrite {
            we: 0b11,
            mem: 0b01,
            stall: 0b01,
        };
        assert_eq!(t.eval(&w1), WstOut { mem: 1, stall: 1 });
        t.clock(&w1, false);
        let w2 = WstWrite {
            we: 0b10,
            mem: 0b10,
            stall: 0,
        };
        assert_eq!(
            t.eval(&w2),
            WstOut {
                mem: 0b11,
                stall: 0b01
            }
        );
    }

    #[test]
    fn a_reset_clears_the_table_whatever_is_written() {
        let mut t = Wst::default();
        let w = WstWrite {
            we: 0b111,
            mem: 0b101,
            stall: 0b011,
        };
        t.clock(&w, false);
        t.clock(&w, true);
        assert_eq!(t, Wst::default());
    }
}
