//! The warp status table (slide 12): per warp, the op type of its next instruction and the
//! stall bit. Written by the WRC, read by the scheduler; write-through within a cycle.

use super::ports::{WstOut, WstWrite};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wst {
    state: WstWrite,
}

impl Wst {
    pub fn step(&mut self, write: &WstWrite) -> WstOut {
        self.state = *write;
        self.state
    }
    pub fn read(&self) -> WstOut {
        self.state
    }
}
