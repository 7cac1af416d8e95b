//! RTL twin of the re-execution queue's control: valid bits, each entry's warp, an age matrix
//! for oldest-first retry, per-warp occupancy, allocation of the lowest free entry, full /
//! almost-full and hit-only marking of non-owner entries in MP. `D` entries (at most 32), of
//! which the first `depth` are used; per-warp vectors are split by scheduler (`H` lanes).

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ReexecQueueRtl<const D: usize, const H: usize> {
    pub clock: Signal<In, Clock>,
    /// Entries in use for this run: their number and their mask (the first `depth`).
    pub depth: Signal<In, Bits<7>>,
    pub entries: Signal<In, Bits<D>>,
    /// Per entry: the L1 would accept / hit its next line; it is a store.
    pub accept: Signal<In, Bits<D>>,
    pub hit: Signal<In, Bits<D>>,
    pub store: Signal<In, Bits<D>>,
    pub mp: Signal<In, Bit>,
    pub owner_valid: Signal<In, Bit>,
    pub owner: Signal<In, Bits<6>>,
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
    pub warps: [Signal<Out, Bits<H>>; 2],
    pub occupancy: Signal<Out, Bits<7>>,
    pub full: Signal<Out, Bit>,
    pub almost_full: Signal<Out, Bit>,
    valid_r: DFF<Bits<D>>,
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
    can: Signal<Local, Bits<D>>,
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
            accept: Default::default(),
            hit: Default::default(),
            store: Default::default(),
            mp: Default::default(),
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
            warps: Default::default(),
            occupancy: Default::default(),
            full: Default::default(),
            almost_full: Default::default(),
            valid_r: Default::default(),
            warp_r: std::array::from_fn(|_| Default::default()),
            older_r: std::array::from_fn(|_| Default::default()),
            warps_r: Default::default(),
            count_r: Default::default(),
            one_hot: std::array::from_fn(|e| Constant::new((1u64 << e).into())),
            entry_id: std::array::from_fn(|e| Constant::new((e as u64).into())),
            warps_after_free: Default::default(),
            free_mask: Default::default(),
            lowest_free: Default::default(),
            can: Default::default(),
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
        dff_setup!(self, clock, valid_r, count_r);
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
        self.can.next = self.valid_r.q.val()
            & ((self.hit_only.val() & self.hit.val() & !self.store.val())
                | (!self.hit_only.val() & self.accept.val()));
        // Oldest entry that can progress: none older can.
        self.select_valid.next = self.can.val().any();
        self.select.next = 0.into();
        for e in 0..D {
            if self.can.val().get_bit(e) & !(self.can.val() & self.older_r[e].q.val()).any() {
                self.select.next = self.entry_id[e].val();
            }
        }
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
        self.valid_r.d.next = (self.valid_r.q.val() & !self.freed_bit.val()) | self.pushed_bit.val();
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
            self.older_r[e].d.next = self.older_r[e].q.val() & !self.pushed_bit.val();
            if self.pushed_bit.val().get_bit(e) {
                self.warp_r[e].d.next = self.push_warp.val();
                self.older_r[e].d.next = self.valid_r.q.val() & !self.freed_bit.val();
            }
        }
    }
}
