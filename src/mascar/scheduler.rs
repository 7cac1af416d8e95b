//! The MAS scheduler's state and ordering (slides 11–12): the EP/MP mode state machine and
//! the owner register shared by the SM's schedulers, and the split of the ordered warps into
//! Mem_Q and Comp_Q.

use super::ports::{MasIn, MasOut};
use crate::sched::Order;

#[derive(Clone, Debug)]
pub struct MasScheduler {
    mp: bool,
    /// Cycles MP still lasts after saturation ended.
    hold_left: u32,
    exit_hold: u32,
    owner: Option<u8>,
    /// Resident warps in launch order (oldest first): the order a new owner is chosen in.
    by_age: Vec<u8>,
}

impl MasScheduler {
    pub fn new(warps: usize, exit_hold: u32) -> Self {
        MasScheduler {
            mp: false,
            hold_left: 0,
            exit_hold,
            owner: None,
            by_age: Vec::with_capacity(warps),
        }
    }

    pub fn launched(&mut self, slot: u8) {
        self.by_age.push(slot);
    }
    pub fn exited(&mut self, slot: u8) {
        self.by_age.retain(|&s| s != slot);
    }

    /// Mode and owner as they stand (the registers' outputs before this cycle's update).
    pub fn current(&self) -> MasOut {
        MasOut {
            mp: self.mp,
            owner: self.owner,
            owner_changed: false,
        }
    }

    /// One cycle: update the mode from the saturation flag, then the owner.
    pub fn step(&mut self, i: &MasIn) -> MasOut {
        if i.saturated {
            self.mp = true;
            self.hold_left = self.exit_hold;
        } else if self.mp {
            if self.hold_left == 0 {
                self.mp = false;
            } else {
                self.hold_left -= 1;
            }
        }
        let before = self.owner;
        if !self.mp {
            // Leaving MP clears the owner.
            self.owner = None;
        } else {
            if i.release_owner {
                self.owner = None;
            }
            if self.owner.is_none() {
                // The first ready warp of Mem_Q (oldest first) becomes the owner.
                self.owner = self
                    .by_age
                    .iter()
                    .copied()
                    .find(|&w| i.owner_candidates >> w & 1 == 1);
            }
        }
        let owner_changed = self.owner.is_some() && self.owner != before;
        MasOut {
            mp: self.mp,
            owner: self.owner,
            owner_changed,
        }
    }

    /// Splits a base order into Mem_Q and Comp_Q: in EP memory warps go first (their
    /// requests leave early), in MP compute warps go first, then the owner's memory
    /// instruction.
    pub fn split(base: &Order, mem: u64, mp: bool, out: &mut Order) {
        out.clear();
        let first_mem = !mp;
        for pass in [first_mem, !first_mem] {
            for &slot in base.as_slice() {
                if (mem >> slot & 1 == 1) == pass {
                    out.push(slot);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_follows_saturation_and_owner_is_oldest_ready_memory_warp() {
        let mut s = MasScheduler::new(8, 0);
        for w in [3, 1, 2] {
            s.launched(w);
        }
        let out = s.step(&MasIn {
            saturated: false,
            release_owner: false,
            owner_candidates: 0b110,
        });
        assert_eq!((out.mp, out.owner), (false, None));
        let out = s.step(&MasIn {
            saturated: true,
            release_owner: false,
            owner_candidates: 0b110,
        });
        assert_eq!(
            (out.mp, out.owner, out.owner_changed),
            (true, Some(1), true),
            "1 is older than 2"
        );
        let out = s.step(&MasIn {
            saturated: true,
            release_owner: true,
            owner_candidates: 0b100,
        });
        assert_eq!(
            (out.owner, out.owner_changed),
            (Some(2), true),
            "hand-over to the next"
        );
        let out = s.step(&MasIn {
            saturated: false,
            release_owner: false,
            owner_candidates: 0,
        });
        assert_eq!((out.mp, out.owner), (false, None), "leaving MP clears the owner");
    }

    #[test]
    fn exit_hold_keeps_mp_for_extra_cycles() {
        let mut s = MasScheduler::new(8, 2);
        s.step(&MasIn {
            saturated: true,
            ..MasIn::default()
        });
        assert!(s.step(&MasIn::default()).mp);
        assert!(s.step(&MasIn::default()).mp);
        assert!(!s.step(&MasIn::default()).mp);
    }

    #[test]
    fn queues_split_by_mode() {
        let mut base = Order::default();
        for w in [0, 1, 2, 3] {
            base.push(w);
        }
        let mut out = Order::default();
        MasScheduler::split(&base, 0b1010, false, &mut out);
        assert_eq!(out.as_slice(), &[1, 3, 0, 2]);
        MasScheduler::split(&base, 0b1010, true, &mut out);
        assert_eq!(out.as_slice(), &[0, 2, 1, 3]);
    }
}
