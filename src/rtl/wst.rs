//! RTL twin of the warp status table: per warp the op type of its next instruction and the
//! stall bit, one register per scheduler half; written entries bypass to the read port
//! (the scheduler takes its ready warps' entries from the write data: see `top.rs`).
//! A synchronous reset clears it.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct WstRtl<const H: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: the table clears at the edge.
    pub reset: Signal<In, Bit>,
    pub we: [Signal<In, Bits<H>>; 2],
    pub mem_in: [Signal<In, Bits<H>>; 2],
    pub stall_in: [Signal<In, Bits<H>>; 2],
    pub mem: [Signal<Out, Bits<H>>; 2],
    pub stall: [Signal<Out, Bits<H>>; 2],
    mem_r: [DFF<Bits<H>>; 2],
    stall_r: [DFF<Bits<H>>; 2],
}

impl<const H: usize> Default for WstRtl<H> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            we: Default::default(),
            mem_in: Default::default(),
            stall_in: Default::default(),
            mem: Default::default(),
            stall: Default::default(),
            mem_r: Default::default(),
            stall_r: Default::default(),
        }
    }
}

impl<const H: usize> Logic for WstRtl<H> {
    #[hdl_gen]
    fn update(&mut self) {
        for s in 0..2 {
            self.mem_r[s].clock.next = self.clock.val();
            self.stall_r[s].clock.next = self.clock.val();
            self.mem[s].next =
                (self.mem_r[s].q.val() & !self.we[s].val()) | (self.mem_in[s].val() & self.we[s].val());
            self.stall[s].next =
                (self.stall_r[s].q.val() & !self.we[s].val()) | (self.stall_in[s].val() & self.we[s].val());
            self.mem_r[s].d.next = self.mem[s].val();
            self.stall_r[s].d.next = self.stall[s].val();
            if self.reset.val() {
                self.mem_r[s].d.next = 0.into();
                self.stall_r[s].d.next = 0.into();
            }
        }
    }
}
