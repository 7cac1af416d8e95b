//! CAR's re-execution queue (slides 13–14, spec §5), behavioural twin of its control: memory
//! instructions the L1 could not accept leave the LD/ST head and wait here, so later requests
//! reach the cache. An entry holds the refused instruction's remaining line requests
//! (`car_entry = instruction`, one entry per warp) or a single refused line request
//! (`access`: a warp's entries then all belong to one instruction); either keeps each warp's
//! memory order. With MAS in MP a non-owner entry gets hit-only service.
//!
//! Retries are real L1 accesses through the LD/ST unit's one port. The queue decides when
//! one is worth making from its own state, never from a look into the L1: each entry has a
//! retry bit. A free pulse from the L1 (an MSHR released, a miss-queue slot freed) arms the
//! oldest unarmed entry: one freed slot is worth one retry. An accepted retry arms the next
//! unarmed entry (the chain stops at a refusal, so hits among the entries never wait for a
//! pulse that may not come). Pulses and the chain pass over hit-only entries (non-owners in
//! MP), which no freed slot can serve; a change of MAS mode or owner arms every entry. A
//! newly parked entry waits to be armed. The oldest armed entry takes the port (before the
//! head, or after it with `car_retry = head_first`); a refused retry costs its cycle, clears
//! its bit and goes back behind every other entry. A reservation failure leaves a miss
//! outstanding, so a pulse always follows.
//!
//! The control holds valid and retry bits, each entry's warp and the entries' arrival order
//! (the RTL's age triangle; here a list, oldest first), and per warp the entries it holds
//! (the RTL's registered `warps` output and its hit-only decode); the entries'
//! line requests live beside it in the LD/ST unit's `Parked` records, indexed by entry, where it reads
//! them.

use super::ports::{QueueIn, QueueOut};

#[derive(Clone, Debug)]
pub struct ReexecQueue {
    depth: usize,
    valid: u64,
    /// Retry bits: something freed since the entry's last try.
    retry: u64,
    warp: [u8; 64],
    /// The valid entries in arrival order, oldest first (a refused retry goes to the back).
    order: [u8; 64],
    len: usize,
    /// Per warp, the entries it holds; and the warps holding any.
    entries_of: [u64; 64],
    warps: u64,
    /// Mode and owner of the last cycle, to see a change.
    last_mode: (bool, Option<u8>),
    /// The last clock edge changed no register (not a register itself: the skip's view).
    still: bool,
}

impl ReexecQueue {
    pub fn new(depth: u32) -> Self {
        ReexecQueue {
            depth: depth as usize,
            valid: 0,
            retry: 0,
            warp: [0; 64],
            order: [0; 64],
            len: 0,
            entries_of: [0; 64],
            warps: 0,
            last_mode: (false, None),
            still: false,
        }
    }
    pub fn depth(&self) -> usize {
        self.depth
    }
    /// Valid entries.
    pub fn valid(&self) -> u64 {
        self.valid
    }
    /// Entries whose retry bit is set.
    pub fn armed(&self) -> u64 {
        self.retry
    }
    pub fn warp_of(&self, entry: usize) -> u8 {
        self.warp[entry]
    }
    pub fn occupancy(&self) -> usize {
        self.valid.count_ones() as usize
    }
    pub fn is_empty(&self) -> bool {
        self.valid == 0
    }
    pub fn is_full(&self) -> bool {
        self.occupancy() == self.depth
    }
    /// Warps holding an entry.
    pub fn warp_mask(&self) -> u64 {
        self.warps
    }

    /// The oldest entry of `mask`.
    fn oldest(&self, mask: u64) -> Option<usize> {
        self.order[..self.len]
            .iter()
            .map(|&e| e as usize)
            .find(|&e| mask >> e & 1 == 1)
    }

    /// Takes `entry` out of the arrival order, if it is there.
    fn leave_order(&mut self, entry: u8) {
        if let Some(at) = self.order[..self.len].iter().position(|&e| e == entry) {
            self.order.copy_within(at + 1..self.len, at);
            self.len -= 1;
        }
    }

    /// Puts `entry` at the back of the arrival order.
    fn join_order(&mut self, entry: u8) {
        self.order[self.len] = entry;
        self.len += 1;
    }

    /// Entries worth a try this cycle: the armed ones; on a free pulse also the oldest
    /// unarmed one (one freed slot is worth one retry, not a retry of every entry); on a
    /// change of mode or owner every entry (a non-owner entry refused hit-only may now be
    /// served in full).
    fn eligible(&self, i: &QueueIn) -> u64 {
        if (i.mp, i.owner) != self.last_mode {
            return self.valid;
        }
        let credit = if i.mshr_freed || i.miss_queue_freed {
            self.oldest(self.valid & !self.retry & !self.hit_only(i))
                .map_or(0, |e| 1u64 << e)
        } else {
            0
        };
        self.retry | credit
    }

    /// Entries marked hit-only: in MP every entry but the owner's.
    fn hit_only(&self, i: &QueueIn) -> u64 {
        if !i.mp {
            return 0;
        }
        let owners = i.owner.map_or(0, |o| self.entries_of[o as usize & 63]);
        self.valid & !owners
    }

    /// Settles: hit-only marking, the entry that takes the port, the slot a push takes.
    pub fn eval(&self, i: &QueueIn) -> QueueOut {
        let hit_only = self.hit_only(i);
        let oldest = self.oldest(self.eligible(i)).map(|e| e as u8);
        let free = !self.valid & low_mask(self.depth);
        let occupancy = self.occupancy();
        QueueOut {
            select: oldest.filter(|_| !(i.head_first && i.head_ready)),
            alloc: (free != 0).then(|| free.trailing_zeros() as u8),
            hit_only,
            armed: self.retry,
            warps: self.warp_mask(),
            occupancy: occupancy as u8,
            full: occupancy == self.depth,
            almost_full: occupancy + 1 >= self.depth,
        }
    }

    /// The last clock edge changed no register (the cycle skip, `gpu/sm/quiet.rs`).
    pub fn is_still(&self) -> bool {
        self.still
    }

    /// Clock edge: arm what was worth a try; a refused retry goes to the back with its bit
    /// clear, an accepted one also arms the oldest entry not yet armed (the freed resource
    /// may serve more, and a hit consumes none); free the finished entry, take the pushed one
    /// (unarmed).
    pub fn clock(&mut self, i: &QueueIn) {
        if i.reset {
            *self = ReexecQueue::new(self.depth as u32);
            return;
        }
        let out = self.eval(i);
        let before = (self.valid, self.retry, self.last_mode);
        // Selecting, freeing or filling an entry moves the order or an entry's registers.
        let touched = out.select.is_some() || i.free.is_some() || i.push.is_some();
        let eligible = self.eligible(i);
        self.retry |= eligible;
        if let Some(e) = out.select {
            if i.refused {
                self.retry &= !(1u64 << e);
                self.leave_order(e);
                self.join_order(e);
            }
            // The chain stops at a refusal: a reservation failure leaves a miss outstanding,
            // so a pulse to come.
            if !i.refused {
                if let Some(n) = self.oldest(self.valid & !eligible & !out.hit_only) {
                    self.retry |= 1u64 << n;
                }
            }
        }
        if let Some(e) = i.free.filter(|&e| self.valid >> e & 1 == 1) {
            self.valid &= !(1u64 << e);
            self.retry &= !(1u64 << e);
            self.leave_order(e);
            let w = self.warp[e as usize] as usize;
            self.entries_of[w] &= !(1u64 << e);
            if self.entries_of[w] == 0 {
                self.warps &= !(1u64 << w);
            }
        }
        if let (Some(w), Some(e)) = (i.push, out.alloc) {
            self.valid |= 1u64 << e;
            self.retry &= !(1u64 << e);
            self.warp[e as usize] = w;
            self.join_order(e);
            self.entries_of[w as usize & 63] |= 1u64 << e;
            self.warps |= 1u64 << (w & 63);
        }
        self.last_mode = (i.mp, i.owner);
        self.still = !touched && (self.valid, self.retry, self.last_mode) == before;
    }
}

fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(q: &mut ReexecQueue, warp: u8) -> u8 {
        let i = QueueIn {
            push: Some(warp),
            ..QueueIn::default()
        };
        let e = q.eval(&i).alloc.expect("room");
        q.clock(&i);
        e
    }

    const MSHR_FREED: QueueIn = QueueIn {
        mshr_freed: true,
        miss_queue_freed: false,
        mp: false,
        owner: None,
        head_first: false,
        head_ready: false,
        refused: false,
        free: None,
        push: None,
        reset: false,
    };

    #[test]
    fn a_reset_empties_the_queue_even_while_it_pushes() {
        let mut q = ReexecQueue::new(3);
        push(&mut q, 5);
        q.clock(&MSHR_FREED);
        let reset = QueueIn {
            push: Some(2),
            reset: true,
            ..QueueIn::default()
        };
        q.clock(&reset);
        let out = q.eval(&QueueIn::default());
        assert_eq!(out, ReexecQueue::new(3).eval(&QueueIn::default()));
        assert_eq!((q.valid(), q.armed(), q.occupancy()), (0, 0, 0));
        assert_eq!(push(&mut q, 4), 0, "allocation starts over at entry 0");
    }

    #[test]
    fn a_parked_entry_waits_for_a_free_pulse_then_retries_oldest_first() {
        let mut q = ReexecQueue::new(3);
        assert_eq!(push(&mut q, 5), 0);
        assert_eq!(push(&mut q, 3), 1);
        let quiet = QueueIn::default();
        assert_eq!(
            q.eval(&quiet).select,
            None,
            "nothing freed since they were refused"
        );
        assert_eq!(q.armed(), 0);
        // A miss-queue slot frees: both are worth a try, the older first, in this cycle.
        let mq = QueueIn {
            miss_queue_freed: true,
            ..quiet
        };
        assert_eq!(q.eval(&mq).select, Some(0), "warp 5 arrived first");
        q.clock(&mq);
        assert_eq!(
            q.armed(),
            0b11,
            "the pulse armed the oldest, its accepted retry the next"
        );
        // Entry 0 sends its last line and leaves; entry 1 stays armed.
        let done = QueueIn {
            free: Some(0),
            ..quiet
        };
        assert_eq!(q.eval(&done).select, Some(0));
        q.clock(&done);
        assert_eq!(q.eval(&quiet).select, Some(1), "still armed, no new pulse needed");
        assert_eq!(push(&mut q, 7), 0, "the freed slot is reused");
        let out = q.eval(&quiet);
        assert_eq!((out.armed, out.warps, out.full), (0b10, 1 << 3 | 1 << 7, false));
    }

    #[test]
    fn a_refused_retry_goes_behind_and_an_accepted_one_arms_the_next() {
        let mut q = ReexecQueue::new(4);
        for w in [1, 2, 3] {
            push(&mut q, w);
        }
        assert_eq!(q.eval(&QueueIn::default()).select, None, "none armed yet");
        // A freed MSHR is worth one try, of the oldest; refused, it waits for the next pulse.
        let pulse_refused = QueueIn {
            refused: true,
            ..MSHR_FREED
        };
        assert_eq!(q.eval(&pulse_refused).select, Some(0));
        q.clock(&pulse_refused);
        assert_eq!(q.armed(), 0, "the refused entry waits for the next pulse");
        assert_eq!(q.eval(&QueueIn::default()).select, None);
        // The next pulse: the oldest unarmed entry is 1 (0 went behind).
        assert_eq!(q.eval(&pulse_refused).select, Some(1));
        q.clock(&pulse_refused);
        assert_eq!(q.eval(&MSHR_FREED).select, Some(2));
        // Entry 2 is accepted: the oldest other unarmed entry (0, behind since its refusal,
        // but ahead of 1) is armed too.
        q.clock(&MSHR_FREED);
        assert_eq!(q.armed(), 0b101);
        assert_eq!(q.eval(&QueueIn::default()).select, Some(2), "2 keeps its bit");
        q.clock(&QueueIn {
            free: Some(2),
            ..QueueIn::default()
        });
        assert_eq!(q.armed(), 0b011, "2 left; its success armed 1");
        assert_eq!(q.eval(&QueueIn::default()).select, Some(0));
    }

    #[test]
    fn a_push_under_a_pulse_is_not_armed_and_the_head_first_option_yields() {
        let mut q = ReexecQueue::new(2);
        push(&mut q, 4);
        let both = QueueIn {
            push: Some(6),
            ..MSHR_FREED
        };
        q.clock(&both);
        assert_eq!(
            q.armed(),
            0b01,
            "the new entry's refusal already saw the freed MSHR"
        );
        let head_first = QueueIn {
            head_first: true,
            head_ready: true,
            ..QueueIn::default()
        };
        assert_eq!(q.eval(&head_first).select, None, "a ready head goes first");
        let blocked_head = QueueIn {
            head_ready: false,
            ..head_first
        };
        assert_eq!(q.eval(&blocked_head).select, Some(0), "a waiting head yields");
        let out = q.eval(&QueueIn::default());
        assert!(out.full && out.alloc.is_none() && out.almost_full);
    }

    #[test]
    fn a_mode_or_owner_change_arms_and_non_owners_are_hit_only_in_mp() {
        let mut q = ReexecQueue::new(3);
        push(&mut q, 5);
        push(&mut q, 3);
        let mp = QueueIn {
            mp: true,
            owner: Some(3),
            ..QueueIn::default()
        };
        let out = q.eval(&mp);
        assert_eq!(out.hit_only, 0b01, "warp 5's entry is not the owner's");
        assert_eq!(
            out.select,
            Some(0),
            "entering MP is a change: every entry is worth a try"
        );
        q.clock(&QueueIn { refused: true, ..mp });
        assert_eq!(q.armed(), 0b10);
        assert_eq!(
            q.eval(&mp).select,
            Some(1),
            "same mode and owner: only the armed entry"
        );
        q.clock(&QueueIn { refused: true, ..mp });
        assert_eq!(q.eval(&mp).select, None);
        let new_owner = QueueIn { owner: Some(5), ..mp };
        assert_eq!(q.eval(&new_owner).select, Some(0), "the owner changed");
        assert_eq!(q.eval(&new_owner).hit_only, 0b10);
    }

    #[test]
    fn free_pulses_pass_over_hit_only_entries() {
        let mut q = ReexecQueue::new(3);
        push(&mut q, 5);
        push(&mut q, 9);
        let mp = QueueIn {
            mp: true,
            owner: Some(9),
            refused: true,
            ..QueueIn::default()
        };
        q.clock(&mp);
        assert_eq!(
            q.armed(),
            0b10,
            "entering MP armed both; warp 5's entry was refused"
        );
        q.clock(&mp);
        assert_eq!(q.armed(), 0, "the owner's entry failed too");
        // A freed MSHR cannot serve a non-owner's miss: the pulse arms the owner's entry,
        // though warp 5's is older.
        let pulse = QueueIn {
            mshr_freed: true,
            refused: false,
            ..mp
        };
        assert_eq!(q.eval(&pulse).select, Some(1));
        q.clock(&pulse);
        assert_eq!(
            q.armed(),
            0b10,
            "the accepted retry passes over the hit-only entry too"
        );
    }
}
