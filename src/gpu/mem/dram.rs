//! One partition's DRAM channel: a bounded request queue served in order at a fixed
//! bandwidth (one line every `cycles_per_line`) with a fixed access latency.
//! [design] No banks or row buffers: the paper's figures only need queueing and bandwidth.

use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramRequest {
    pub line: u64,
    pub write: bool,
}

#[derive(Clone, Debug)]
pub struct Dram {
    queue: VecDeque<DramRequest>,
    capacity: usize,
    in_service: VecDeque<(u64, DramRequest)>,
    /// When the channel can start its next transfer (fractional: bandwidth is a real number).
    next_start: f64,
    cycles_per_line: f64,
    latency: u64,
    pub reads: u64,
    pub writes: u64,
    /// Cycles the channel spent transferring (bandwidth in use).
    pub busy_cycles: f64,
}

impl Dram {
    pub fn new(capacity: u32, cycles_per_line: f64, latency: u32) -> Self {
        Dram {
            queue: VecDeque::with_capacity(capacity as usize),
            capacity: capacity as usize,
            in_service: VecDeque::with_capacity(capacity as usize + latency as usize),
            next_start: 0.0,
            cycles_per_line,
            latency: latency as u64,
            reads: 0,
            writes: 0,
            busy_cycles: 0.0,
        }
    }

    pub fn has_room(&self) -> bool {
        self.queue.len() < self.capacity
    }

    pub fn push(&mut self, r: DramRequest) {
        debug_assert!(self.has_room());
        self.queue.push_back(r);
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Starts the next transfer when the channel is free.
    pub fn cycle(&mut self, now: u64) {
        if now as f64 >= self.next_start {
            if let Some(r) = self.queue.pop_front() {
                // Back to back, the fractional remainder carries over, so 2.5 cycles per
                // line averages 2.5; after an idle gap the channel starts afresh.
                let now_f = now as f64;
                let base = if self.next_start > now_f - 1.0 {
                    self.next_start
                } else {
                    now_f
                };
                self.next_start = base + self.cycles_per_line;
                self.busy_cycles += self.cycles_per_line;
                if r.write {
                    self.writes += 1;
                } else {
                    self.reads += 1;
                }
                self.in_service.push_back((now + self.latency, r));
            }
        }
    }

    /// A finished request, if one completes by `now`.
    pub fn pop_done(&mut self, now: u64) -> Option<DramRequest> {
        match self.in_service.front() {
            Some((done, _)) if *done <= now => self.in_service.pop_front().map(|(_, r)| r),
            _ => None,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.in_service.is_empty()
    }
}
