//! One direction of the interconnect (SMs → partitions, or partitions → SMs), as
//! GPGPU-Sim's intersim2 builds it for the GTX480 (`config_fermi_islip.icnt`: `fly`, k = 27,
//! n = 1, one virtual channel, `vc_buf_size` 8): a single crossbar router with one input per
//! source and one output per destination.
//!
//! A packet is flits of `flit_bytes`. Per cycle of [`step`](Network::step):
//!
//! - **Injection** (interconnect_interface.cpp `HasBuffer`, `Push`; gputrafficmanager.cpp
//!   `_Step`): a source may push a packet while its input queue holds at most
//!   `input_buffer − flits` flits; the queue moves `src_flits` flits per cycle into the
//!   router's input buffer while that has room (`vc_buffer` flits, credit flow control).
//! - **One virtual channel per input** (iq_router.cpp): the packet at the head of the input
//!   buffer must win its output before any flit behind it moves, so a packet waiting for a
//!   busy output blocks every later packet of that source, whatever their destinations
//!   (head-of-line blocking). Its head asks for the output `alloc_cycles` after it reached
//!   the head of the buffer (VC then switch allocation, `vc_alloc_delay` + `sw_alloc_delay`).
//! - **One packet per output at a time**: the output's one downstream VC is held from head to
//!   tail, and once the tail has crossed, the next packet needs its VC and switch allocation
//!   (`alloc_cycles`) before it crosses (one idle cycle between back-to-back packets). A free
//!   output grants the requesting input next after the last one it granted (iSLIP's
//!   round-robin pointer, one iteration).
//! - **Transfer**: an output moves `dst_flits` flits per cycle of its packet, cut-through
//!   (a flit may leave as soon as it is in the input buffer), while the destination's buffer
//!   (ejection plus boundary buffer, `dest_buffer` flits) has room. The tail reaches the
//!   destination `latency` cycles after it crossed; the consumer takes whole packets, in
//!   arrival order, and frees their flits.

use std::collections::VecDeque;

/// Buffer sizes and pipeline depth of the router (see the module text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouterShape {
    /// Flits a source's input queue holds (intersim2 `input_buffer_size`; 9 when unset).
    pub input_buffer: u32,
    /// Flits the router's input buffer holds (`vc_buf_size`).
    pub vc_buffer: u32,
    /// Flits a destination holds between the router and its consumer (`ejection_buffer_size`,
    /// which is `vc_buf_size` when unset, plus `boundary_buffer_size`).
    pub dest_buffer: u32,
    /// Cycles from a head flit reaching the front of the input buffer to its first crossing
    /// (`vc_alloc_delay` + `sw_alloc_delay`).
    pub alloc_cycles: u32,
}

impl RouterShape {
    /// The router a configuration describes (its `icnt_*` keys).
    pub fn of(c: &crate::config::Config) -> Self {
        RouterShape {
            input_buffer: c.icnt_input_buffer,
            vc_buffer: c.icnt_vc_buffer,
            dest_buffer: c.icnt_dest_buffer,
            alloc_cycles: c.icnt_alloc_cycles,
        }
    }
}

#[derive(Clone, Debug)]
struct InFlight<T> {
    dst: u32,
    flits: u32,
    /// Flits moved into the router's input buffer.
    entered: u32,
    /// Flits sent through the crossbar.
    sent: u32,
    packet: T,
}

#[derive(Clone, Debug)]
struct Source<T> {
    /// This source's packets not yet through the crossbar, oldest first.
    packets: VecDeque<InFlight<T>>,
    /// Flits in the input queue, not yet in the router's input buffer.
    queued: u32,
    /// Flits in the router's input buffer.
    buffered: u32,
    /// Index in `packets` of the packet whose flits enter the router next.
    entering: usize,
    /// Cycle from which the head packet may ask for its output.
    ready_at: u64,
    /// Whether the head packet holds its output.
    granted: bool,
}

#[derive(Clone, Debug)]
pub struct Network<T> {
    sources: Vec<Source<T>>,
    /// Per output: the source whose packet holds it.
    holder: Vec<Option<u32>>,
    /// Per output: iSLIP's grant pointer (the input it looks at first).
    pointer: Vec<u32>,
    /// Per output this cycle: the requesting source nearest after the pointer.
    best: Vec<Option<u32>>,
    /// Outputs with a `best` this cycle (reused, never reallocated).
    requested: Vec<u32>,
    /// Bit per source: it has packets (so idle sources cost nothing per cycle).
    active: Vec<u64>,
    /// Bit per output: a packet holds it.
    held: Vec<u64>,
    /// Per output: the first cycle a new packet may cross it. An output's one VC is free
    /// again once the tail crossed, and a waiting head then needs its VC and switch
    /// allocation (`alloc_cycles`), as a head reaching the front of its input buffer does.
    free_at: Vec<u64>,
    /// Per destination: flits held (crossing or buffered, not yet taken by the consumer).
    dest_flits: Vec<u32>,
    /// Per destination: (arrival cycle, flits, packet), in arrival order.
    queues: Vec<VecDeque<(u64, u32, T)>>,
    /// Per destination: packets sent to it and not yet taken (anywhere in the network).
    pending: Vec<u32>,
    src_flits: u32,
    dst_flits: u32,
    latency: u64,
    shape: RouterShape,
    /// Packets between a source's input queue and the crossbar.
    in_router: u64,
    /// The last cycle stepped.
    stepped: Option<u64>,
    /// Flits sent, for utilisation statistics.
    pub flits_sent: u64,
    pub packets_sent: u64,
}

impl<T> Network<T> {
    pub fn new(
        sources: usize,
        dests: usize,
        src_flits: u32,
        dst_flits: u32,
        latency: u32,
        shape: RouterShape,
    ) -> Self {
        Network {
            sources: (0..sources)
                .map(|_| Source {
                    packets: VecDeque::with_capacity(shape.input_buffer as usize + 2),
                    queued: 0,
                    buffered: 0,
                    entering: 0,
                    ready_at: 0,
                    granted: false,
                })
                .collect(),
            holder: vec![None; dests],
            pointer: vec![0; dests],
            best: vec![None; dests],
            requested: Vec::with_capacity(dests),
            active: vec![0; sources.div_ceil(64)],
            held: vec![0; dests.div_ceil(64)],
            free_at: vec![0; dests],
            dest_flits: vec![0; dests],
            queues: (0..dests)
                .map(|_| VecDeque::with_capacity(shape.dest_buffer as usize))
                .collect(),
            pending: vec![0; dests],
            src_flits,
            dst_flits,
            latency: latency as u64,
            shape,
            in_router: 0,
            stepped: None,
            flits_sent: 0,
            packets_sent: 0,
        }
    }

    /// Runs the router's cycles up to and including `now` (each cycle once).
    pub fn step(&mut self, now: u64) {
        if self.in_router == 0 {
            // An empty router's cycles change nothing (`cycle` returns at once).
            self.stepped = Some(self.stepped.map_or(now, |s| s.max(now)));
            return;
        }
        let first = self.stepped.map_or(now, |s| s + 1);
        for t in first..=now {
            self.cycle(t);
        }
        self.stepped = Some(self.stepped.map_or(now, |s| s.max(now)));
    }

    fn cycle(&mut self, now: u64) {
        if self.in_router == 0 {
            return;
        }
        let n = self.sources.len() as u32;
        let cap = self.shape.vc_buffer;
        for w in 0..self.active.len() {
            let mut bits = self.active[w];
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let s = &mut self.sources[i];
                // Injection: the input queue into the router's input buffer.
                let mut moved = 0;
                while moved < self.src_flits && s.queued > 0 && s.buffered < cap {
                    let p = &mut s.packets[s.entering];
                    if p.entered == 0 && s.entering == 0 {
                        // A head at the front of the buffer starts its allocation.
                        s.ready_at = s.ready_at.max(now + self.shape.alloc_cycles as u64);
                    }
                    p.entered += 1;
                    s.queued -= 1;
                    s.buffered += 1;
                    moved += 1;
                    if p.entered == p.flits {
                        s.entering += 1;
                    }
                }
                // Allocation: each free output grants the requester nearest after its pointer.
                let p = s.packets.front().expect("an active source has a packet");
                if s.granted || p.entered == 0 || now < s.ready_at {
                    continue;
                }
                let o = p.dst as usize;
                if self.holder[o].is_some() || now < self.free_at[o] {
                    continue;
                }
                let i = i as u32;
                let dist = |j: u32| (j + n - self.pointer[o]) % n;
                match self.best[o] {
                    None => {
                        self.best[o] = Some(i);
                        self.requested.push(o as u32);
                    }
                    Some(b) if dist(i) < dist(b) => self.best[o] = Some(i),
                    Some(_) => {}
                }
            }
        }
        for k in 0..self.requested.len() {
            let o = self.requested[k] as usize;
            let i = self.best[o].take().expect("requested outputs have a best");
            self.holder[o] = Some(i);
            self.held[o / 64] |= 1 << (o % 64);
            self.pointer[o] = (i + 1) % n;
            self.sources[i as usize].granted = true;
        }
        self.requested.clear();
        // Transfer through the crossbar, cut-through, within the destination's credit.
        for w in 0..self.held.len() {
            let mut bits = self.held[w];
            while bits != 0 {
                let o = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let i = self.holder[o].expect("a held output has a holder") as usize;
                let s = &mut self.sources[i];
                let p = s.packets.front_mut().expect("a holder has a packet");
                let mut moved = 0;
                while moved < self.dst_flits
                    && p.sent < p.entered
                    && self.dest_flits[o] < self.shape.dest_buffer
                {
                    p.sent += 1;
                    s.buffered -= 1;
                    self.dest_flits[o] += 1;
                    moved += 1;
                }
                if p.sent == p.flits {
                    let p = s.packets.pop_front().expect("front exists");
                    s.entering -= 1;
                    s.granted = false;
                    // The next head is at the front now; it starts its allocation.
                    s.ready_at = now + self.shape.alloc_cycles as u64;
                    if s.packets.is_empty() {
                        self.active[i / 64] &= !(1 << (i % 64));
                    }
                    self.holder[o] = None;
                    self.free_at[o] = now + self.shape.alloc_cycles as u64;
                    self.held[w] &= !(1 << (o % 64));
                    self.in_router -= 1;
                    self.queues[o].push_back((now + self.latency, p.flits, p.packet));
                }
            }
        }
    }

    /// Whether `src` may inject a packet of `flits` flits this cycle (intersim2 `HasBuffer`:
    /// room in its input queue; the destination does not matter).
    pub fn can_send(&mut self, src: usize, flits: u32, now: u64) -> bool {
        self.step(now);
        self.sources[src].queued + flits <= self.shape.input_buffer
    }

    /// Injects a packet of `flits` flits. The caller checked [`can_send`](Self::can_send).
    pub fn send(&mut self, src: usize, dst: usize, flits: u32, now: u64, packet: T) {
        self.step(now);
        let flits = flits.max(1);
        let s = &mut self.sources[src];
        s.packets.push_back(InFlight {
            dst: dst as u32,
            flits,
            entered: 0,
            sent: 0,
            packet,
        });
        s.queued += flits;
        self.active[src / 64] |= 1 << (src % 64);
        self.pending[dst] += 1;
        self.in_router += 1;
        self.flits_sent += flits as u64;
        self.packets_sent += 1;
    }

    /// The oldest packet that has arrived at `dst`, if any.
    pub fn peek(&self, dst: usize, now: u64) -> Option<&T> {
        match self.queues[dst].front() {
            Some((arrival, _, p)) if *arrival <= now => Some(p),
            _ => None,
        }
    }

    /// Takes the oldest arrived packet at `dst` (frees its flits' buffer space).
    pub fn pop(&mut self, dst: usize, now: u64) -> Option<T> {
        self.step(now);
        self.peek(dst, now)?;
        let (_, flits, p) = self.queues[dst].pop_front().expect("peeked");
        self.dest_flits[dst] -= flits;
        self.pending[dst] -= 1;
        Some(p)
    }

    /// Packets sent to `dst` and not yet taken, wherever they are.
    pub fn pending(&self, dst: usize) -> usize {
        self.pending[dst] as usize
    }

    pub fn is_empty(&self) -> bool {
        self.pending.iter().all(|&p| p == 0)
    }

    /// The first cycle from `now` on in which the network can change or hand over a packet
    /// (the global cycle skip, `gpu/skip.rs`): `now` while a packet is inside the router,
    /// else the earliest arrival waiting at a destination; `u64::MAX` when it is empty.
    pub fn next_act(&self, now: u64) -> u64 {
        if self.in_router > 0 {
            return now;
        }
        self.queues
            .iter()
            .filter_map(|q| q.front())
            .map(|&(arrival, _, _)| arrival.max(now))
            .min()
            .unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GTX480 file's router: input queue 9, VC buffer 8, ejection 8 + boundary 16,
    /// VC and switch allocation one cycle each.
    const GTX480: RouterShape = RouterShape {
        input_buffer: 9,
        vc_buffer: 8,
        dest_buffer: 24,
        alloc_cycles: 2,
    };

    /// Steps until `dst` has a packet; returns (cycle, packet).
    fn next(n: &mut Network<u32>, dst: usize, from: u64) -> (u64, u32) {
        for now in from..from + 10_000 {
            if let Some(p) = n.pop(dst, now) {
                return (now, p);
            }
        }
        panic!("nothing arrived");
    }

    #[test]
    fn an_unloaded_packet_takes_injection_allocation_its_flits_and_the_latency() {
        let mut n: Network<u32> = Network::new(2, 2, 1, 1, 7, GTX480);
        assert!(n.can_send(0, 1, 0));
        n.send(0, 1, 1, 0, 7);
        // Cycle 1 into the router, allocation until 3, crosses at 3, arrives at 3 + 7.
        assert_eq!(next(&mut n, 1, 0), (10, 7));
        // Five flits cut through: the tail crosses four cycles after the head.
        n.send(0, 1, 5, 20, 8);
        assert_eq!(next(&mut n, 1, 20), (34, 8));
    }

    #[test]
    fn the_input_queue_takes_a_packet_only_while_it_fits() {
        let mut n: Network<u32> = Network::new(1, 2, 1, 1, 7, GTX480);
        n.send(0, 0, 5, 0, 1);
        assert!(
            !n.can_send(0, 5, 0),
            "9 flits: a second 5-flit packet does not fit"
        );
        assert!(n.can_send(0, 4, 0));
        // One flit a cycle leaves the queue for the router.
        assert!(n.can_send(0, 5, 1));
    }

    #[test]
    fn a_packet_waiting_for_a_busy_output_blocks_the_packets_behind_it() {
        // Source 0 sends a long packet to output 0; source 1 sends to output 0 (waits), then
        // to the idle output 1: that one waits too (one VC per input).
        let mut n: Network<u32> = Network::new(2, 2, 1, 1, 7, GTX480);
        n.send(0, 0, 5, 0, 10);
        n.send(1, 0, 1, 0, 11);
        n.send(1, 1, 1, 0, 12);
        let (t10, _) = next(&mut n, 0, 0);
        let (t11, _) = next(&mut n, 0, t10 + 1);
        let (t12, _) = next(&mut n, 1, 0);
        assert_eq!(t10, 14, "source 0 wins output 0 first (pointer at 0)");
        assert!(t11 > t10, "source 1's first packet waits for output 0");
        assert!(
            t12 > t11,
            "and its second, to an idle output, waits behind it: {t12}"
        );
        // Without the conflict the second packet would have arrived at 1 + 2 + ... = 13.
        let mut free: Network<u32> = Network::new(2, 2, 1, 1, 7, GTX480);
        free.send(1, 1, 1, 0, 12);
        assert_eq!(next(&mut free, 1, 0).0, 10);
    }

    #[test]
    fn a_full_destination_stops_its_output_until_the_consumer_takes_packets() {
        let mut n: Network<u32> = Network::new(8, 1, 1, 1, 1, GTX480);
        for s in 0..8 {
            n.send(s, 0, 5, 0, s as u32);
        }
        // Nobody consumes: 24 flits of buffer take four whole packets and four flits of the
        // fifth, which cannot finish.
        n.step(1_000);
        assert_eq!(n.queues[0].len(), 4);
        assert_eq!(n.dest_flits[0], 24);
        assert_eq!(n.pending(0), 8);
        let mut got = vec![];
        for now in 1_000..2_000 {
            if let Some(p) = n.pop(0, now) {
                got.push(p);
            }
        }
        got.sort();
        assert_eq!(got, (0..8).collect::<Vec<_>>(), "every packet arrives once");
        assert!(n.is_empty());
    }

    /// Packets from two sources to one output: the second crosses `alloc_cycles` after the
    /// first's tail freed the output (its VC, then the switch), not the cycle after. 32
    /// five-flit replies to one SM take 6 cycles each in Accel-Sim (micro-benchmark
    /// gather-base, testbench/correlation.rs).
    #[test]
    fn an_output_freed_by_a_tail_takes_the_next_packet_after_allocation() {
        let mut n: Network<u32> = Network::new(2, 1, 1, 1, 7, GTX480);
        n.send(0, 0, 5, 0, 10);
        n.send(1, 0, 5, 0, 11);
        let (a, _) = next(&mut n, 0, 0);
        let (b, _) = next(&mut n, 0, a + 1);
        assert_eq!(
            b - a,
            5 + 1,
            "five flits and one allocation cycle between the packets"
        );
    }

    #[test]
    fn outputs_grant_round_robin() {
        // Three sources keep output 0 busy; each gets its turn in order after the last one.
        let mut n: Network<u32> = Network::new(3, 1, 1, 1, 1, GTX480);
        for k in 0..3 {
            for s in 0..3 {
                n.send(s, 0, 1, 0, (10 * k + s) as u32);
            }
        }
        let mut order = vec![];
        for now in 0..1_000 {
            if let Some(p) = n.pop(0, now) {
                order.push(p % 10);
            }
        }
        assert_eq!(order, [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }
}
