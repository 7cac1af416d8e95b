//! The L1 saturation signal (spec §4): MSHRs or miss queue almost full.

use super::ports::{SaturationIn, SaturationOut};

#[derive(Clone, Copy, Debug)]
pub struct Saturation {
    mshr_limit: u32,
    miss_queue_limit: u32,
}

impl Saturation {
    /// `saturated = mshrs_used ≥ mshrs − margin OR miss_queue_used ≥ miss_queue − margin`.
    pub fn new(mshrs: u32, miss_queue: u32, margin: u32) -> Self {
        Saturation {
            mshr_limit: mshrs.saturating_sub(margin).max(1),
            miss_queue_limit: miss_queue.saturating_sub(margin).max(1),
        }
    }

    pub fn step(&self, i: &SaturationIn) -> SaturationOut {
        SaturationOut {
            saturated: i.mshrs_used >= self.mshr_limit || i.miss_queue_used >= self.miss_queue_limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margin_one_flags_one_short_of_full() {
        let s = Saturation::new(64, 8, 1);
        let at = |m, q| {
            s.step(&SaturationIn {
                mshrs_used: m,
                miss_queue_used: q,
            })
            .saturated
        };
        assert!(!at(62, 6));
        assert!(at(63, 0));
        assert!(at(0, 7));
    }
}
