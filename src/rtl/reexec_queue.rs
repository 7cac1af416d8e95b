//! RTL twin of the re-execution queue's control: valid and retry bits, each entry's warp, an
//! age matrix for oldest-first retry (a refused retry moves to the back), per-warp occupancy,
//! allocation of the lowest free entry, full / almost-full and hit-only marking of non-owner
//! entries in MP. A free pulse from the L1 (MSHR or miss-queue slot) arms the oldest unarmed
//! entry, an accepted retry the next one (both pass over hit-only entries), a change of mode
//! or owner (registered here) every entry; the queue takes the LD/ST port for its oldest
//! armed entry, unless the head goes first. `D` entries (at most 32), of which the first
//! `depth` are used; per-warp vectors are split by scheduler (`H` lanes).
//!
//! Depth: every selection is a parallel one-hot (an entry is the oldest of a set when it is
//! in the set and no member of the set is older), OR-reduced into an index; no chain of
//! last-match-wins `if`s over the entries. The age matrix keeps only its strict upper
//! triangle: bit `i > e` of row `e` says entry `i` is older than entry `e`; the lower half is
//! its complement (`D (D-1) / 2` flip-flops).

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ReexecQueueRtl<const D: usize, const H: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (and the SM's kernel-launch clear).
    pub reset: Signal<In, Bit>,
    /// Entries in use for this run: their number and their mask (the first `depth`).
    pub depth: Signal<In, Bits<7>>,
    pub entries: Signal<In, Bits<D>>,
    pub mp: Signal<In, Bit>,
    pub owner_valid: Signal<In, Bit>,
    pub owner: Signal<In, Bits<6>>,
    /// The L1's free pulses since the LD/ST unit's last access.
    pub mshr_freed: Signal<In, Bit>,
    pub miss_queue_freed: Signal<In, Bit>,
    /// `car_retry = head_first`, and the head has a line request that may try this cycle.
    pub head_first: Signal<In, Bit>,
    pub head_ready: Signal<In, Bit>,
    /// The selected entry's access was refused: to the back, retry bit clear.
    pub refused: Signal<In, Bit>,
    /// Free the entry whose instruction sent its last line.
    pub free_valid: Signal<In, Bit>,
    pub free_entry: Signal<In, Bits<6>>,
    /// Park a refused instruction of this warp in the `alloc` entry.
    pub push_valid: Signal<In, Bit>,
    pub push_warp: Signal<In, Bits<6>>,
    pub select_valid: Signal<Out, Bit>,
    pub select: Signal<Out, Bits<6>>,
    pub alloc_valid: Signal<Out, Bit>,
    pub alloc: Signal<Out, Bits<6>>,
    pub hit_only: Signal<Out, Bits<D>>,
    pub armed: Signal<Out, Bits<D>>,
    pub warps: [Signal<Out, Bits<H>>; 2],
    pub occupancy: Signal<Out, Bits<7>>,
    pub full: Signal<Out, Bit>,
    pub almost_full: Signal<Out, Bit>,
    valid_r: DFF<Bits<D>>,
    retry_r: DFF<Bits<D>>,
    mp_r: DFF<Bit>,
    owner_valid_r: DFF<Bit>,
    owner_r: DFF<Bits<6>>,
    warp_r: [DFF<Bits<6>>; D],
    /// Age matrix, strict upper triangle: bit `i > e` of row `e` set when entry `i` is older
    /// than entry `e` (reset: the lower index is older). Bits `i <= e` stay 0 and synthesise
    /// away.
    tri_r: [DFF<Bits<D>>; D],
    warps_r: [DFF<Bits<H>>; 2],
    count_r: DFF<Bits<7>>,
    /// Entries above `e` (the row's stored bits).
    above: [Constant<Bits<D>>; D],
    /// Entries below `e`.
    below: [Constant<Bits<D>>; D],
    /// Entries whose index has bit `b` set (one-hot to index as five OR-reductions).
    id_bit: [Constant<Bits<D>>; 5],
    entry_id: [Constant<Bits<6>>; D],
    /// One-hot masks: entry `e`, lane `j` of a scheduler half, bit `b` of an index. Bits are
    /// set by OR-ing these under a 1-bit condition, so no 1-bit value is widened in an
    /// expression (Verilator's WIDTH lint).
    entry_hot: [Constant<Bits<D>>; D],
    lane_hot: [Constant<Bits<H>>; H],
    lane_id: [Constant<Bits<6>>; H],
    index_hot: [Constant<Bits<6>>; 5],
    one: Constant<Bits<7>>,
    warps_after_free: [Signal<Local, Bits<H>>; 2],
    free_mask: Signal<Local, Bits<D>>,
    lowest_free: Signal<Local, Bits<D>>,
    change: Signal<Local, Bit>,
    pulse: Signal<Local, Bit>,
    unarmed: Signal<Local, Bits<D>>,
    /// Per finder: the entries that some member of its set below them is older than (the
    /// lower-triangle half of "a member is older"), then the one-hot oldest member.
    credit_low: Signal<Local, Bits<D>>,
    credit_bit: Signal<Local, Bits<D>>,
    rest: Signal<Local, Bits<D>>,
    chain_low: Signal<Local, Bits<D>>,
    chain_bit: Signal<Local, Bits<D>>,
    can: Signal<Local, Bits<D>>,
    /// The set the port goes to: `can`, written without waiting for the credit finder.
    seek: Signal<Local, Bits<D>>,
    seek_low: Signal<Local, Bits<D>>,
    oldest_bit: Signal<Local, Bits<D>>,
    take: Signal<Local, Bit>,
    refused_bit: Signal<Local, Bits<D>>,
    tail_bit: Signal<Local, Bits<D>>,
    freed_warp: Signal<Local, Bits<6>>,
    freed_bit: Signal<Local, Bits<D>>,
    /// The freed entry was valid (freeing an empty entry changes nothing).
    freed_valid: Signal<Local, Bit>,
    pushed_bit: Signal<Local, Bits<D>>,
    pushed: Signal<Local, Bit>,
    /// The freed entry's and the pushed warp's lane in their scheduler half, one-hot.
    freed_lane: Signal<Local, Bits<H>>,
    pushed_lane: Signal<Local, Bits<H>>,
}

fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

impl<const D: usize, const H: usize> Default for ReexecQueueRtl<D, H> {
    fn default() -> Self {
        assert!((1..=32).contains(&D) && (1..=32).contains(&H));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            depth: Default::default(),
            entries: Default::default(),
            mp: Default::default(),
            mshr_freed: Default::default(),
            miss_queue_freed: Default::default(),
            head_first: Default::default(),
            head_ready: Default::default(),
            refused: Default::default(),
            owner_valid: Default::default(),
            owner: Default::default(),
            free_valid: Default::default(),
            free_entry: Default::default(),
            push_valid: Default::default(),
            push_warp: Default::default(),
            select_valid: Default::default(),
            select: Default::default(),
            alloc_valid: Default::default(),
            alloc: Default::default(),
            hit_only: Default::default(),
            armed: Default::default(),
            warps: Default::default(),
            occupancy: Default::default(),
            full: Default::default(),
            almost_full: Default::default(),
            valid_r: Default::default(),
            retry_r: Default::default(),
            mp_r: Default::default(),
            owner_valid_r: Default::default(),
            owner_r: Default::default(),
            warp_r: std::array::from_fn(|_| Default::default()),
            tri_r: std::array::from_fn(|_| Default::default()),
            warps_r: Default::default(),
            count_r: Default::default(),
            above: std::array::from_fn(|e| Constant::new((low_mask(D) & !low_mask(e + 1)).into())),
            below: std::array::from_fn(|e| Constant::new(low_mask(e).into())),
            id_bit: std::array::from_fn(|b| {
                Constant::new(((0..D).filter(|e| e >> b & 1 == 1).fold(0u64, |m, e| m | 1 << e)).into())
            }),
            entry_id: std::array::from_fn(|e| Constant::new((e as u64).into())),
            entry_hot: std::array::from_fn(|e| Constant::new((1u64 << e).into())),
            lane_hot: std::array::from_fn(|j| Constant::new((1u64 << j).into())),
            lane_id: std::array::from_fn(|j| Constant::new((j as u64).into())),
            index_hot: std::array::from_fn(|b| Constant::new((1u64 << b).into())),
            one: Constant::new(1u64.into()),
            warps_after_free: Default::default(),
            free_mask: Default::default(),
            lowest_free: Default::default(),
            change: Default::default(),
            pulse: Default::default(),
            unarmed: Default::default(),
            credit_low: Default::default(),
            credit_bit: Default::default(),
            rest: Default::default(),
            chain_low: Default::default(),
            chain_bit: Default::default(),
            can: Default::default(),
            seek: Default::default(),
            seek_low: Default::default(),
            oldest_bit: Default::default(),
            take: Default::default(),
            refused_bit: Default::default(),
            tail_bit: Default::default(),
            freed_warp: Default::default(),
            freed_bit: Default::default(),
            freed_valid: Default::default(),
            pushed_bit: Default::default(),
            pushed: Default::default(),
            freed_lane: Default::default(),
            pushed_lane: Default::default(),
        }
    }
}

impl<const D: usize, const H: usize> Logic for ReexecQueueRtl<D, H> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            valid_r,
            retry_r,
            mp_r,
            owner_valid_r,
            owner_r,
            count_r
        );
        for s in 0..2 {
            self.warps_r[s].clock.next = self.clock.val();
        }
        for e in 0..D {
            self.warp_r[e].clock.next = self.clock.val();
            self.warp_r[e].d.next = self.warp_r[e].q.val();
            self.tri_r[e].clock.next = self.clock.val();
        }
        self.occupancy.next = self.count_r.q.val();
        self.full.next = self.count_r.q.val() == self.depth.val();
        self.almost_full.next = (self.count_r.q.val() + self.one.val()) >= self.depth.val();
        self.warps[0].next = self.warps_r[0].q.val();
        self.warps[1].next = self.warps_r[1].q.val();

        // Hit-only: in MP every valid entry but the owner's (each entry compares its own warp).
        self.hit_only.next = 0.into();
        for e in 0..D {
            if self.mp.val()
                & self.valid_r.q.val().get_bit(e)
                & !(self.owner_valid.val() & (self.warp_r[e].q.val() == self.owner.val()))
            {
                self.hit_only.next = self.hit_only.val() | self.entry_hot[e].val();
            }
        }
        // Worth a try: the armed entries; on a free pulse also the oldest unarmed one; on a
        // change of mode or owner every entry.
        self.change.next = (self.mp.val() != self.mp_r.q.val())
            | (self.owner_valid.val() != self.owner_valid_r.q.val())
            | (self.owner_valid.val() & (self.owner.val() != self.owner_r.q.val()));
        self.pulse.next = self.mshr_freed.val() | self.miss_queue_freed.val();
        self.unarmed.next = self.valid_r.q.val() & !self.retry_r.q.val() & !self.hit_only.val();
        // Oldest unarmed entry: in the set, no member above it older (its row), no member
        // below it younger (their rows, OR-ed column-wise).
        self.credit_low.next = 0.into();
        for i in 0..D {
            if self.unarmed.val().get_bit(i) {
                self.credit_low.next = self.credit_low.val() | (!self.tri_r[i].q.val() & self.above[i].val());
            }
        }
        self.credit_bit.next = 0.into();
        for e in 0..D {
            if self.unarmed.val().get_bit(e)
                & !self.credit_low.val().get_bit(e)
                & !(self.unarmed.val() & self.tri_r[e].q.val()).any()
            {
                self.credit_bit.next = self.credit_bit.val() | self.entry_hot[e].val();
            }
        }
        self.can.next = self.retry_r.q.val();
        if self.pulse.val() {
            self.can.next = self.retry_r.q.val() | self.credit_bit.val();
        }
        if self.change.val() {
            self.can.next = self.valid_r.q.val();
        }
        // The oldest of `can` without waiting for the credit: on a pulse, the oldest of the
        // armed entries and the unarmed ones that are not hit-only is either armed or is the
        // credited entry (the oldest unarmed), so it is the oldest of `can`.
        self.seek.next = self.retry_r.q.val();
        if self.pulse.val() {
            self.seek.next = self.valid_r.q.val() & (self.retry_r.q.val() | !self.hit_only.val());
        }
        if self.change.val() {
            self.seek.next = self.valid_r.q.val();
        }
        self.seek_low.next = 0.into();
        for i in 0..D {
            if self.seek.val().get_bit(i) {
                self.seek_low.next = self.seek_low.val() | (!self.tri_r[i].q.val() & self.above[i].val());
            }
        }
        self.oldest_bit.next = 0.into();
        for e in 0..D {
            if self.seek.val().get_bit(e)
                & !self.seek_low.val().get_bit(e)
                & !(self.seek.val() & self.tri_r[e].q.val()).any()
            {
                self.oldest_bit.next = self.oldest_bit.val() | self.entry_hot[e].val();
            }
        }
        self.select.next = 0.into();
        for b in 0..5 {
            if (self.oldest_bit.val() & self.id_bit[b].val()).any() {
                self.select.next = self.select.val() | self.index_hot[b].val();
            }
        }
        self.take.next = self.seek.val().any() & !(self.head_first.val() & self.head_ready.val());
        self.select_valid.next = self.take.val();
        self.armed.next = self.retry_r.q.val();
        // An accepted retry arms the oldest entry not worth a try this cycle.
        self.rest.next = self.valid_r.q.val() & !self.can.val() & !self.hit_only.val();
        self.chain_low.next = 0.into();
        for i in 0..D {
            if self.rest.val().get_bit(i) {
                self.chain_low.next = self.chain_low.val() | (!self.tri_r[i].q.val() & self.above[i].val());
            }
        }
        self.chain_bit.next = 0.into();
        for e in 0..D {
            if self.rest.val().get_bit(e)
                & !self.chain_low.val().get_bit(e)
                & !(self.rest.val() & self.tri_r[e].q.val()).any()
            {
                self.chain_bit.next = self.chain_bit.val() | self.entry_hot[e].val();
            }
        }
        // Lowest free usable entry.
        self.free_mask.next = !self.valid_r.q.val() & self.entries.val();
        // One-hot, each bit on its own (an adder's `x & -x` becomes a ripple chain).
        self.lowest_free.next = 0.into();
        for e in 0..D {
            if self.free_mask.val().get_bit(e) & !(self.free_mask.val() & self.below[e].val()).any() {
                self.lowest_free.next = self.lowest_free.val() | self.entry_hot[e].val();
            }
        }
        self.alloc_valid.next = self.free_mask.val().any();
        self.alloc.next = 0.into();
        for b in 0..5 {
            if (self.lowest_free.val() & self.id_bit[b].val()).any() {
                self.alloc.next = self.alloc.val() | self.index_hot[b].val();
            }
        }
        // Clock edge: free, then push into the allocated entry (older than nothing new).
        self.freed_bit.next = 0.into();
        for e in 0..D {
            if self.free_valid.val() & (self.free_entry.val() == self.entry_id[e].val()) {
                self.freed_bit.next = self.freed_bit.val() | self.entry_hot[e].val();
            }
        }
        self.freed_valid.next = (self.freed_bit.val() & self.valid_r.q.val()).any();
        // The freed entry's warp, OR-ed over the (one-hot) freed entry.
        self.freed_warp.next = 0.into();
        for e in 0..D {
            if self.freed_bit.val().get_bit(e) {
                self.freed_warp.next = self.freed_warp.val() | self.warp_r[e].q.val();
            }
        }
        self.pushed_bit.next = 0.into();
        if self.push_valid.val() & self.alloc_valid.val() {
            self.pushed_bit.next = self.lowest_free.val();
        }
        self.pushed.next = self.push_valid.val() & self.alloc_valid.val();
        self.refused_bit.next = 0.into();
        if self.refused.val() & self.take.val() {
            self.refused_bit.next = self.oldest_bit.val();
        }
        // Entries that go to the back of the age order: the pushed one, a refused retry.
        self.tail_bit.next = self.pushed_bit.val() | self.refused_bit.val();
        self.valid_r.d.next = (self.valid_r.q.val() & !self.freed_bit.val()) | self.pushed_bit.val();
        // Retry bits: what was worth a try is armed, a refusal or a free clears (invalid
        // entries keep theirs clear, so a pushed entry starts unarmed), an accepted retry
        // arms the next.
        self.retry_r.d.next =
            (self.retry_r.q.val() | self.can.val()) & !self.refused_bit.val() & !self.freed_bit.val();
        // The chain stops at a refusal; an entry freed in the same cycle stays unarmed (as
        // in the twin, where the free clears the bit after the chain set it: found by the
        // formal no-loss proof, an armed invalid entry was selected later).
        if self.take.val() & !self.refused.val() {
            self.retry_r.d.next =
                ((self.retry_r.q.val() | self.can.val()) & !self.refused_bit.val() & !self.freed_bit.val())
                    | (self.chain_bit.val() & !self.freed_bit.val());
        }
        self.mp_r.d.next = self.mp.val();
        self.owner_valid_r.d.next = self.owner_valid.val();
        self.owner_r.d.next = self.owner.val();
        // The count follows what is valid after the edge: +1 for a push, -1 only when the
        // freed entry was valid (freeing an empty entry, even the one pushed into, frees
        // nothing).
        self.count_r.d.next = self.count_r.q.val();
        if self.freed_valid.val() & !self.pushed.val() {
            self.count_r.d.next = self.count_r.q.val() - self.one.val();
        }
        if !self.freed_valid.val() & self.pushed.val() {
            self.count_r.d.next = self.count_r.q.val() + self.one.val();
        }
        // Per-warp occupancy: clear the freed entry's warp (if it held one), then set the
        // pushed warp.
        for s in 0..2 {
            self.warps_after_free[s].next = self.warps_r[s].q.val();
        }
        // Each lane compares its own number with the warp's (no variable index: a 6-bit warp
        // id would index a narrower vector).
        self.freed_lane.next = 0.into();
        self.pushed_lane.next = 0.into();
        for j in 0..H {
            if (self.freed_warp.val() >> 1) == self.lane_id[j].val() {
                self.freed_lane.next = self.freed_lane.val() | self.lane_hot[j].val();
            }
            if (self.push_warp.val() >> 1) == self.lane_id[j].val() {
                self.pushed_lane.next = self.pushed_lane.val() | self.lane_hot[j].val();
            }
        }
        if self.freed_valid.val() {
            if self.freed_warp.val().get_bit(0) {
                self.warps_after_free[1].next = self.warps_r[1].q.val() & !self.freed_lane.val();
            } else {
                self.warps_after_free[0].next = self.warps_r[0].q.val() & !self.freed_lane.val();
            }
        }
        for s in 0..2 {
            self.warps_r[s].d.next = self.warps_after_free[s].val();
        }
        if self.pushed.val() {
            if self.push_warp.val().get_bit(0) {
                self.warps_r[1].d.next = self.warps_after_free[1].val() | self.pushed_lane.val();
            } else {
                self.warps_r[0].d.next = self.warps_after_free[0].val() | self.pushed_lane.val();
            }
        }
        // Age: a tail entry becomes younger than every other (the pushed one also younger
        // than a refused one this cycle); the others keep their order.
        for e in 0..D {
            self.tri_r[e].d.next = self.tri_r[e].q.val() & !self.tail_bit.val() & self.above[e].val();
            if self.tail_bit.val().get_bit(e) {
                self.tri_r[e].d.next = !self.tail_bit.val() & self.above[e].val();
            }
            if self.pushed_bit.val().get_bit(e) {
                self.tri_r[e].d.next = self.above[e].val();
                self.warp_r[e].d.next = self.push_warp.val();
            }
        }
        // Synchronous reset (and the SM's kernel-launch clear): empty, unarmed, the mode and
        // owner of an idle SM (EP, none), whatever the cycle computed.
        if self.reset.val() {
            self.valid_r.d.next = 0.into();
            self.retry_r.d.next = 0.into();
            self.mp_r.d.next = false;
            self.owner_valid_r.d.next = false;
            self.owner_r.d.next = 0.into();
            self.count_r.d.next = 0.into();
            for s in 0..2 {
                self.warps_r[s].d.next = 0.into();
            }
            for e in 0..D {
                self.warp_r[e].d.next = 0.into();
                self.tri_r[e].d.next = 0.into();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Q = ReexecQueueRtl<4, 4>;

    fn settle(uut: &mut Q) {
        assert!(simulate(uut, 200), "settles");
    }

    /// One cycle with a free and a push; the occupancy and valid bits after the edge.
    fn cycle(uut: &mut Q, free: Option<u64>, push: Option<u64>) -> (u64, u64) {
        uut.free_valid.next = free.is_some();
        uut.free_entry.next = free.unwrap_or(0).into();
        uut.push_valid.next = push.is_some();
        uut.push_warp.next = push.unwrap_or(0).into();
        settle(uut);
        uut.clock.next = true.into();
        settle(uut);
        uut.clock.next = false.into();
        uut.free_valid.next = false;
        uut.push_valid.next = false;
        settle(uut);
        (uut.occupancy.val().to_u64(), uut.valid_r.q.val().to_u64())
    }

    fn queue() -> Q {
        let mut uut = Q::default();
        uut.connect_all();
        uut.depth.next = 4.into();
        uut.entries.next = 0b1111.into();
        settle(&mut uut);
        uut
    }

    #[test]
    fn a_reset_empties_the_queue_even_while_it_pushes() {
        let mut uut = queue();
        cycle(&mut uut, None, Some(5));
        cycle(&mut uut, None, Some(2));
        uut.reset.next = true;
        assert_eq!(cycle(&mut uut, None, Some(3)), (0, 0));
        uut.reset.next = false;
        settle(&mut uut);
        assert_eq!(
            (
                uut.warps[0].val().to_u64(),
                uut.warps[1].val().to_u64(),
                uut.full.val()
            ),
            (0, 0, false)
        );
        assert_eq!(
            cycle(&mut uut, None, Some(4)),
            (1, 0b1),
            "allocation starts over at entry 0"
        );
    }

    #[test]
    fn freeing_an_empty_entry_while_pushing_counts_the_push() {
        // Free entry 0 (empty: it is the one the push takes) and entry 2 (empty) while
        // pushing: the count must follow the valid bits. The old logic (count unchanged
        // when a free and a push meet) left 0 with one valid entry.
        let mut uut = queue();
        assert_eq!(cycle(&mut uut, Some(2), Some(5)), (1, 0b0001));
        assert_eq!(uut.warps[0].val().to_u64(), 0, "warp 5 is lane 2 of scheduler 1");
        assert_eq!(uut.warps[1].val().to_u64(), 1 << 2);
        assert_eq!(cycle(&mut uut, Some(1), Some(3)), (2, 0b0011));
        // A valid free with a push keeps the count (the push takes entry 2, allocated before
        // the free); a free alone lowers it.
        assert_eq!(cycle(&mut uut, Some(0), Some(4)), (2, 0b0110));
        assert_eq!(cycle(&mut uut, Some(1), None), (1, 0b0100));
        // Warp 3 parks again (entry 0); freeing entry 1, empty but still naming warp 3,
        // changes nothing: not the count, not warp 3's occupancy bit.
        assert_eq!(cycle(&mut uut, None, Some(3)), (2, 0b0101));
        assert_eq!(cycle(&mut uut, Some(1), None), (2, 0b0101));
        assert_eq!(uut.warps[1].val().to_u64(), 1 << 1, "warp 3 holds entry 0");
    }

    #[test]
    fn the_age_triangle_keeps_oldest_first_and_a_refusal_goes_behind() {
        let mut uut = queue();
        for w in [1, 2, 3] {
            cycle(&mut uut, None, Some(w));
        }
        // An owner appears (a change: every entry worth a try). Refused, accepted, refused,
        // then whatever is armed: entry 0 went behind 1 and 2, 1 behind 2 and 0.
        uut.owner_valid.next = true;
        uut.owner.next = 1.into();
        let mut order = vec![];
        for refused in [true, false, true, true] {
            uut.refused.next = refused;
            settle(&mut uut);
            assert!(uut.select_valid.val());
            order.push(uut.select.val().to_u64());
            cycle(&mut uut, None, None);
        }
        assert_eq!(order, vec![0, 1, 1, 2]);
        assert_eq!(uut.armed.val().to_u64(), 0b001, "0 was armed by 1's success");
    }
}
