//! The global cycle skip (issue 31; `docs/speed.md`): a cycle in which no unit acts — no
//! warp can issue or fetch, no packet moves, no queue can advance, no DRAM holds a request,
//! no pipeline result or timed queue head is due — changes nothing but counters. Each unit
//! says when it next acts; the GPU runs the first quiet cycle as usual (so the blocks see
//! its inputs once), then jumps to the first cycle in which something acts, crediting each
//! unit the counters of the cycles it jumped over. The statistics are the same as stepping
//! every cycle (`testbench/skip.rs` compares whole run records).
//!
//! What is not predicted is taken to act at once, so the skip only ever misses chances:
//! a DRAM channel holding any request, a texture cache with anything in flight, MAS in MP,
//! a non-empty re-execution queue, CCWS scores above the base, and the RTL engines (whose
//! blocks are clocked every cycle by their contract) never let a cycle be skipped.

use super::Gpu;
use crate::workload::Kernel;

impl Gpu {
    /// Whether the skip may be used: on unless turned off, and only while nothing watches
    /// every cycle (waveforms, the event log, an observer, a recording, per-SM logs).
    pub(super) fn may_skip(&self, observing: bool) -> bool {
        self.cycle_skip
            && !observing
            && self.waves.is_none()
            && self.events.is_none()
            && self.recording.is_none()
            && self
                .sms
                .iter()
                .all(|s| s.issue_log.is_none() && s.mas_log.is_none() && s.request_log.is_none())
    }

    /// The first cycle from `now` on in which some unit acts (`now` if one acts in `now`;
    /// `u64::MAX` if none ever will, which the watchdog then reports). CTAs waiting to be
    /// handed out act from `dispatch_at` on (the end of the kernel's launch latency).
    pub(super) fn next_act(
        &self,
        now: u64,
        k: &Kernel,
        next_cta: u32,
        dispatch_at: u64,
        skip_rest: bool,
    ) -> u64 {
        // Cheapest and most often decisive first: in a busy cycle the first SM already acts.
        let mut first = u64::MAX;
        for sm in &self.sms {
            let at = if skip_rest && sm.is_at_rest() {
                sm.next_act_at_rest(now)
            } else {
                sm.next_act(now)
            };
            if at == now {
                return now;
            }
            first = first.min(at);
        }
        for p in &self.partitions {
            let at = p.next_act(now);
            if at == now {
                return now;
            }
            first = first.min(at);
        }
        first = first.min(self.requests.next_act(now));
        first = first.min(self.replies.next_act(now));
        if first == now {
            return now;
        }
        if next_cta < k.grid && self.sms.iter().any(|s| s.can_accept(k)) {
            first = first.min(dispatch_at.max(now));
        }
        first
    }

    /// Credits every unit with `cycles` quiet cycles (each `next_act` lies beyond them).
    pub(super) fn skip_quiet(&mut self, cycles: u64, skip_rest: bool) {
        for sm in &mut self.sms {
            if skip_rest && sm.is_at_rest() {
                sm.skip_at_rest(cycles);
            } else {
                sm.skip_quiet(cycles);
            }
        }
        for p in &mut self.partitions {
            p.skip_quiet(cycles, &self.requests);
        }
        self.cycles_skipped += cycles;
    }
}
