//! The warp readiness checker (slide 12): decides each cycle, from the I-buffer op type, the
//! scoreboard, the owner id and the mode, whether each warp may issue a memory instruction,
//! and writes the warp status table.

use super::ports::{WrcIn, WrcOut, WstWrite};

#[derive(Clone, Copy, Debug)]
pub struct Wrc {
    /// In MP, stall the memory instructions of every warp but the owner (slide 11). Off
    /// only for Mascar with `mascar_non_owner_mem = hit_only`, where CAR's LD/ST side keeps
    /// non-owners' requests inside L1 instead.
    pub stall_non_owners: bool,
}

impl Default for Wrc {
    fn default() -> Self {
        Wrc {
            stall_non_owners: true,
        }
    }
}

impl Wrc {
    pub fn step(&self, i: &WrcIn) -> WrcOut {
        let w = &i.warps;
        let mem = w.is_mem & w.has_inst & w.active;
        let owner_bit = i.owner.map_or(0, |o| 1u64 << o);
        // In MP only the owner's memory instructions may go beyond L1: the others stall.
        let stall = if i.mp && self.stall_non_owners {
            mem & !owner_bit
        } else {
            0
        };
        // Warps other than the owner whose requests wait to leave (LD/ST head or re-execution
        // queue): in MP those are refused beyond L1 (hit-only service under Mascar).
        let waiting = w.mem_in_flight & w.active & !owner_bit;
        // [design] The memory path is free to hand over when nothing of this SM is
        // outstanding below L1, or when a non-owner's refused request holds the LD/ST head:
        // then the owner cannot send anything either, and waiting for the L1 to drain cost
        // 78-95 % of MP cycles on most memory kernels (issue 29, docs/schedulers.md).
        let path_free = w.l1_quiet || w.head_blocked;
        let release_owner = match i.owner {
            Some(o) => {
                let bit = 1u64 << o;
                // Its next instruction waits on its own load: hand the memory path over.
                // [design] Not before its own requests have all left: the owner is there to
                // get *all* of its requests out so it can start computing early.
                let waits_on_own_load = w.has_inst & w.dep_load & !w.mem_in_flight & bit != 0;
                // [design] Only the owner's requests go beyond L1 (slide 11), so when nothing
                // of this SM is outstanding below L1 and the owner has no request waiting
                // while another warp has, the owner is not using the memory path and may be
                // the one waiting on it (a queue full of others' misses, the LD/ST head or
                // every load slot taken by them): hand over, or a mode held after saturation
                // (`mas_mp_exit_hold`, `mas_sat_margin`) could keep the SM stuck for ever.
                let idle_path = path_free && w.mem_in_flight & bit == 0 && waiting != 0;
                // At a barrier, likewise once its requests have left: handing a parked
                // request's path to another warp at a barrier would pass ownership back and
                // forth between them while a warp with a parked load never gets it (issue 29
                // §2: bp-2 with the mode held stopped on the watchdog).
                let barrier_done = w.at_barrier & !w.mem_in_flight & bit != 0;
                // Finished: nothing left to issue or to send (`active`, issue 29 §1).
                let finished = w.active & bit == 0;
                waits_on_own_load || barrier_done || idle_path || finished
            }
            None => false,
        };
        // The oldest candidate becomes the owner (slide 11, "assign new owner warp"): a warp
        // ready to issue a memory instruction; [design] with the L1 quiet, a warp whose
        // requests wait to leave, as it needs ownership to send them (while misses are
        // outstanding they wait: the path is busy and hand-overs stay as the paper has them).
        let owner_candidates = if path_free && waiting != 0 {
            waiting
        } else {
            mem & w.sb_ready & !w.dep_load & !owner_bit
        };
        WrcOut {
            wst: WstWrite {
                we: w.has_inst & w.active,
                mem,
                stall,
            },
            release_owner,
            owner_candidates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mascar::ports::WarpSignals;

    fn warps() -> WarpSignals {
        WarpSignals {
            active: 0b1111,
            has_inst: 0b1111,
            is_mem: 0b0111,
            sb_ready: 0b1111,
            dep_load: 0,
            at_barrier: 0,
            mem_in_flight: 0,
            l1_quiet: false,
            head_blocked: false,
        }
    }

    #[test]
    fn stall_bits_only_in_mp_and_never_for_the_owner_or_compute_warps() {
        let ep = Wrc::default().step(&WrcIn {
            warps: warps(),
            mp: false,
            owner: None,
        });
        assert_eq!(
            ep.wst,
            WstWrite {
                we: 0b1111,
                mem: 0b0111,
                stall: 0
            }
        );
        let mp = Wrc::default().step(&WrcIn {
            warps: warps(),
            mp: true,
            owner: Some(1),
        });
        assert_eq!(mp.wst.stall, 0b0101);
        assert!(!mp.release_owner);
        assert_eq!(mp.owner_candidates, 0b0101);
    }

    #[test]
    fn owner_released_when_its_next_instruction_needs_its_own_load() {
        let mut w = warps();
        w.dep_load = 0b0010;
        let out = Wrc::default().step(&WrcIn {
            warps: w,
            mp: true,
            owner: Some(1),
        });
        assert!(out.release_owner);
        assert_eq!(out.owner_candidates & 0b0010, 0);
        w.mem_in_flight = 0b0010;
        let out = Wrc::default().step(&WrcIn {
            warps: w,
            mp: true,
            owner: Some(1),
        });
        assert!(!out.release_owner, "its own requests are still waiting to leave");
        w.mem_in_flight = 0;
        w.dep_load = 0;
        w.active = 0b1101;
        assert!(
            Wrc::default()
                .step(&WrcIn {
                    warps: w,
                    mp: true,
                    owner: Some(1)
                })
                .release_owner,
            "finished owner"
        );
    }

    #[test]
    fn with_the_l1_quiet_a_warp_with_requests_waiting_to_leave_takes_ownership() {
        // Nobody's next instruction is a memory instruction; warp 2's miss waits in the queue.
        let mut w = warps();
        w.is_mem = 0;
        w.dep_load = 0b0100;
        w.mem_in_flight = 0b0100;
        let step = |w: WarpSignals| {
            Wrc::default()
                .step(&WrcIn {
                    warps: w,
                    mp: true,
                    owner: None,
                })
                .owner_candidates
        };
        assert_eq!(step(w), 0, "misses outstanding: it waits");
        w.l1_quiet = true;
        assert_eq!(step(w), 0b0100, "L1 quiet: the waiting warp");
        w.is_mem = 0b0001;
        assert_eq!(step(w), 0b0100, "before a warp ready to issue");
        w.l1_quiet = false;
        assert_eq!(step(w), 0b0001, "busy path: a warp ready to issue, as before");
    }

    #[test]
    fn an_owner_not_using_a_quiet_memory_path_hands_it_to_a_waiting_warp() {
        let mut w = warps();
        w.mem_in_flight = 0b0100;
        w.l1_quiet = true;
        let step = |w: WarpSignals| {
            Wrc::default()
                .step(&WrcIn {
                    warps: w,
                    mp: true,
                    owner: Some(1),
                })
                .release_owner
        };
        assert!(step(w), "owner 1 sends nothing while warp 2 waits");
        w.l1_quiet = false;
        assert!(
            !step(w),
            "misses outstanding: the owner keeps the path (slide 11)"
        );
        w.l1_quiet = true;
        w.mem_in_flight = 0b0110;
        assert!(!step(w), "the owner's own request still waits to leave");
        w.mem_in_flight = 0;
        assert!(!step(w), "nobody else waits");
    }

    /// Issue 29: a non-owner's refused request at the LD/ST head blocks the owner's
    /// instructions too, so the owner hands over to the waiting warps at once, misses
    /// outstanding or not, and that warp is a candidate ahead of ready memory warps.
    #[test]
    fn an_owner_behind_a_blocked_head_hands_over_without_waiting_for_a_quiet_l1() {
        let mut w = warps();
        w.mem_in_flight = 0b0100;
        w.head_blocked = true;
        let step = |w: WarpSignals| {
            Wrc::default().step(&WrcIn {
                warps: w,
                mp: true,
                owner: Some(1),
            })
        };
        let out = step(w);
        assert!(out.release_owner, "warp 2 blocks the head, owner 1 cannot send");
        assert_eq!(out.owner_candidates, 0b0100, "the blocking warp takes over");
        w.head_blocked = false;
        let out = step(w);
        assert!(
            !out.release_owner,
            "misses outstanding, head free: the owner keeps it"
        );
        assert_eq!(
            out.owner_candidates, 0b0101,
            "ready memory warps, as the flowchart"
        );
        w.head_blocked = true;
        w.mem_in_flight = 0b0110;
        assert!(
            !step(w).release_owner,
            "the owner's own request still waits to leave"
        );
    }
}
