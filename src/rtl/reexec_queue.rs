//! RTL twin of the re-execution queue's control: valid and retry bits, each entry's warp, an
//! age matrix for oldest-first retry (a refused retry moves to the back), per-warp occupancy,
//! allocation of the lowest free entry, full / almost-full and hit-only marking of non-owner
//! entries in MP. A free pulse from the L1 (MSHR or miss-queue slot) arms the oldest unarmed
//! entry, an accepted retry the next one (both pass over hit-only entries), a change of mode or owner (registered here) every
//! entry; the queue takes the LD/ST port for its oldest armed entry, unless the head goes
//! first. `D` entries (at most 32), of which the
//! first `depth` are used; per-warp vectors are split by scheduler (`H` lanes).

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ReexecQueueRtl<const D: usize, const H: usize> {
    pub clock: Signal<In, Clock>,
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
    /// Entries older than entry e.
    older_r: [DFF<Bits<D>>; D],
    warps_r: [DFF<Bits<H>>; 2],
    count_r: DFF<Bits<7>>,
    one_hot: [Constant<Bits<D>>; D],
    entry_id: [Constant<Bits<6>>; D],
    warps_after_free: [Signal<Local, Bits<H>>; 2],
    free_mask: Signal<Local, Bits<D>>,
    lowest_free: Signal<Local, Bits<D>>,
    change: Signal<Local, Bit>,
    unarmed: Signal<Local, Bits<D>>,
    credit_bit: Signal<Local, Bits<D>>,
    rest: Signal<Local, Bits<D>>,
    chain_bit: Signal<Local, Bits<D>>,
    can: Signal<Local, Bits<D>>,
    oldest_bit: Signal<Local, Bits<D>>,
    take: Signal<Local, Bit>,
    refused_bit: Signal<Local, Bits<D>>,
    tail_bit: Signal<Local, Bits<D>>,
    owner_entries: Signal<Local, Bits<D>>,
    owner_entry_bit: [Signal<Local, Bit>; D],
    freed_warp: Signal<Local, Bits<6>>,
    freed_bit: Signal<Local, Bits<D>>,
    pushed_bit: Signal<Local, Bits<D>>,
}

impl<const D: usize, const H: usize> Default for ReexecQueueRtl<D, H> {
    fn default() -> Self {
        assert!((1..=32).contains(&D) && (1..=32).contains(&H));
        Self {
            clock: Default::default(),
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
            older_r: std::array::from_fn(|_| Default::default()),
            warps_r: Default::default(),
            count_r: Default::default(),
            one_hot: std::array::from_fn(|e| Constant::new((1u64 << e).into())),
            entry_id: std::array::from_fn(|e| Constant::new((e as u64).into())),
            warps_after_free: Default::default(),
            free_mask: Default::default(),
            lowest_free: Default::default(),
            change: Default::default(),
            unarmed: Default::default(),
            credit_bit: Default::default(),
            rest: Default::default(),
            chain_bit: Default::default(),
            can: Default::default(),
            oldest_bit: Default::default(),
            take: Default::default(),
            refused_bit: Default::default(),
            tail_bit: Default::default(),
            owner_entries: Default::default(),
            owner_entry_bit: std::array::from_fn(|_| Default::default()),
            freed_warp: Default::default(),
            freed_bit: Default::default(),
            pushed_bit: Default::default(),
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
            self.older_r[e].clock.next = self.clock.val();
        }
        self.occupancy.next = self.count_r.q.val();
        self.full.next = self.count_r.q.val() == self.depth.val();
        self.almost_full.next = (self.count_r.q.val() + 1) >= self.depth.val();
        self.warps[0].next = self.warps_r[0].q.val();
        self.warps[1].next = self.warps_r[1].q.val();

        // Hit-only: in MP every entry but the owner's.
        for e in 0..D {
            self.owner_entry_bit[e].next = self.owner_valid.val()
                & self.valid_r.q.val().get_bit(e)
                & (self.warp_r[e].q.val() == self.owner.val());
        }
        // One entry per warp: the owner has at most one.
        self.owner_entries.next = 0.into();
        for e in 0..D {
            if self.owner_entry_bit[e].val() {
                self.owner_entries.next = self.one_hot[e].val();
            }
        }
        self.hit_only.next = 0.into();
        if self.mp.val() {
            self.hit_only.next = self.valid_r.q.val() & !self.owner_entries.val();
        }
        // Worth a try: the armed entries; on a free pulse also the oldest unarmed one; on a
        // change of mode or owner every entry.
        self.change.next = (self.mp.val() != self.mp_r.q.val())
            | (self.owner_valid.val() != self.owner_valid_r.q.val())
            | (self.owner_valid.val() & (self.owner.val() != self.owner_r.q.val()));
        self.unarmed.next = self.valid_r.q.val() & !self.retry_r.q.val() & !self.hit_only.val();
        self.credit_bit.next = 0.into();
        for e in 0..D {
            if self.unarmed.val().get_bit(e) & !(self.unarmed.val() & self.older_r[e].q.val()).any() {
                self.credit_bit.next = self.one_hot[e].val();
            }
        }
        self.can.next = self.retry_r.q.val();
        if self.mshr_freed.val() | self.miss_queue_freed.val() {
            self.can.next = self.retry_r.q.val() | self.credit_bit.val();
        }
        if self.change.val() {
            self.can.next = self.valid_r.q.val();
        }
        // An accepted retry arms the oldest entry not worth a try this cycle.
        self.rest.next = self.valid_r.q.val() & !self.can.val() & !self.hit_only.val();
        self.chain_bit.next = 0.into();
        for e in 0..D {
            if self.rest.val().get_bit(e) & !(self.rest.val() & self.older_r[e].q.val()).any() {
                self.chain_bit.next = self.one_hot[e].val();
            }
        }
        // Oldest such entry (none older can); it takes the port unless the head goes first.
        self.oldest_bit.next = 0.into();
        self.select.next = 0.into();
        for e in 0..D {
            if self.can.val().get_bit(e) & !(self.can.val() & self.older_r[e].q.val()).any() {
                self.select.next = self.entry_id[e].val();
                self.oldest_bit.next = self.one_hot[e].val();
            }
        }
        self.take.next = self.can.val().any() & !(self.head_first.val() & self.head_ready.val());
        self.select_valid.next = self.take.val();
        self.armed.next = self.retry_r.q.val();
        // Lowest free usable entry.
        self.free_mask.next = !self.valid_r.q.val() & self.entries.val();
        self.lowest_free.next = self.free_mask.val() & (!self.free_mask.val() + 1);
        self.alloc_valid.next = self.free_mask.val().any();
        self.alloc.next = 0.into();
        for e in 0..D {
            if self.lowest_free.val().get_bit(e) {
                self.alloc.next = self.entry_id[e].val();
            }
        }
        // Clock edge: free, then push into the allocated entry (older than nothing new).
        self.freed_warp.next = 0.into();
        self.freed_bit.next = 0.into();
        for e in 0..D {
            if self.free_valid.val() & (self.free_entry.val() == self.entry_id[e].val()) {
                self.freed_warp.next = self.warp_r[e].q.val();
                self.freed_bit.next = self.one_hot[e].val();
            }
        }
        self.pushed_bit.next = 0.into();
        if self.push_valid.val() & self.alloc_valid.val() {
            self.pushed_bit.next = self.lowest_free.val();
        }
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
        // The chain stops at a refusal.
        if self.take.val() & !self.refused.val() {
            self.retry_r.d.next =
                ((self.retry_r.q.val() | self.can.val()) & !self.refused_bit.val() & !self.freed_bit.val())
                    | self.chain_bit.val();
        }
        self.mp_r.d.next = self.mp.val();
        self.owner_valid_r.d.next = self.owner_valid.val();
        self.owner_r.d.next = self.owner.val();
        self.count_r.d.next = self.count_r.q.val();
        if self.free_valid.val() & !self.pushed_bit.val().any() {
            self.count_r.d.next = self.count_r.q.val() - 1;
        }
        if !self.free_valid.val() & self.pushed_bit.val().any() {
            self.count_r.d.next = self.count_r.q.val() + 1;
        }
        // Per-warp occupancy: clear the freed entry's warp, then set the pushed warp.
        for s in 0..2 {
            self.warps_after_free[s].next = self.warps_r[s].q.val();
        }
        if self.free_valid.val() {
            if self.freed_warp.val().get_bit(0) {
                self.warps_after_free[1].next = self.warps_r[1]
                    .q
                    .val()
                    .replace_bit((self.freed_warp.val() >> 1).index(), false);
            } else {
                self.warps_after_free[0].next = self.warps_r[0]
                    .q
                    .val()
                    .replace_bit((self.freed_warp.val() >> 1).index(), false);
            }
        }
        for s in 0..2 {
            self.warps_r[s].d.next = self.warps_after_free[s].val();
        }
        if self.pushed_bit.val().any() {
            if self.push_warp.val().get_bit(0) {
                self.warps_r[1].d.next = self.warps_after_free[1]
                    .val()
                    .replace_bit((self.push_warp.val() >> 1).index(), true);
            } else {
                self.warps_r[0].d.next = self.warps_after_free[0]
                    .val()
                    .replace_bit((self.push_warp.val() >> 1).index(), true);
            }
        }
        for e in 0..D {
            self.older_r[e].d.next = self.older_r[e].q.val() & !self.tail_bit.val();
            if self.tail_bit.val().get_bit(e) {
                self.older_r[e].d.next =
                    self.valid_r.q.val() & !self.freed_bit.val() & !self.one_hot[e].val();
            }
            if self.pushed_bit.val().get_bit(e) {
                self.warp_r[e].d.next = self.push_warp.val();
            }
        }
    }
}
