//! CCWS (Rogers et al., MICRO 2012): GTO plus load throttling driven by lost intra-warp
//! locality. Each L1 line remembers the warp that allocated it; an evicted line's tag goes
//! to that warp's victim tag array (VTA). An L1 miss that hits the warp's own VTA is lost
//! locality: the warp's lost-locality score becomes
//! `max(base, VTA hits × K_THROTTLE × cutoff / instructions)` (the paper's LLDS), with
//! `cutoff = active warps × base`; scores decay by 1 per cycle toward the base. Warps are
//! sorted by score; those whose cumulative score passes the cutoff may not issue loads
//! (they still issue other instructions).

use crate::config::Config;

const FREE: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub struct Ccws {
    /// VTA tags, `entries` per warp, grouped in sets of `ways`.
    vta: Vec<u64>,
    /// Next way to replace per (warp, set): FIFO replacement.
    vta_next: Vec<u8>,
    entries: usize,
    ways: usize,
    score: Vec<u64>,
    base: u64,
    k: u64,
    vta_hits: u64,
    instructions: u64,
    /// Bit w: warp w may not issue global loads this cycle.
    pub throttled: u64,
    pub vta_hits_total: u64,
}

impl Ccws {
    pub fn new(cfg: &Config) -> Self {
        let warps = cfg.warps_per_sm as usize;
        let entries = cfg.ccws_vta_entries as usize;
        let ways = cfg.ccws_vta_ways as usize;
        Ccws {
            vta: vec![FREE; warps * entries],
            vta_next: vec![0; warps * entries / ways],
            entries,
            ways,
            score: vec![cfg.ccws_base_score as u64; warps],
            base: cfg.ccws_base_score as u64,
            k: cfg.ccws_k_throttle as u64,
            vta_hits: 0,
            instructions: 0,
            throttled: 0,
            vta_hits_total: 0,
        }
    }

    fn set(&self, warp: u8, line: u64) -> std::ops::Range<usize> {
        let sets = self.entries / self.ways;
        let s = warp as usize * self.entries + (line % sets as u64) as usize * self.ways;
        s..s + self.ways
    }

    /// A new warp took `slot`: it starts with an empty VTA and the base score.
    pub fn warp_launched(&mut self, slot: u8) {
        let s = slot as usize * self.entries;
        self.vta[s..s + self.entries].fill(FREE);
        self.score[slot as usize] = self.base;
    }

    /// The L1 evicted `line`, which warp `owner` had allocated.
    pub fn evicted(&mut self, owner: u8, line: u64) {
        let set = self.set(owner, line);
        let sets = self.entries / self.ways;
        let ptr = owner as usize * sets + (line % sets as u64) as usize;
        let way = self.vta_next[ptr] as usize;
        self.vta[set.start + way] = line;
        self.vta_next[ptr] = ((way + 1) % self.ways) as u8;
    }

    /// Warp `warp` missed on `line` in the L1; `active` counts the SM's resident warps.
    pub fn load_missed(&mut self, warp: u8, line: u64, active: u32) {
        let set = self.set(warp, line);
        if let Some(i) = set.clone().find(|&i| self.vta[i] == line) {
            self.vta[i] = FREE;
            self.vta_hits += 1;
            self.vta_hits_total += 1;
            let cutoff = active as u64 * self.base;
            let llds = self.vta_hits * self.k * cutoff / self.instructions.max(1);
            self.score[warp as usize] = llds.max(self.base);
        }
    }

    /// Once per cycle: count issued instructions, decay scores, recompute the throttle set.
    pub fn cycle(&mut self, active: u64, issued: u64) {
        self.instructions += issued;
        let mut any_high = false;
        let mut m = active;
        while m != 0 {
            let w = m.trailing_zeros() as usize;
            m &= m - 1;
            if self.score[w] > self.base {
                self.score[w] -= 1;
                any_high = true;
            }
        }
        self.throttled = 0;
        if !any_high {
            return;
        }
        // Highest scores first; ties by slot for determinism.
        let mut order = [0u8; 64];
        let mut n = 0;
        let mut m = active;
        while m != 0 {
            order[n] = m.trailing_zeros() as u8;
            n += 1;
            m &= m - 1;
        }
        let order = &mut order[..n];
        order.sort_unstable_by_key(|&w| (std::cmp::Reverse(self.score[w as usize]), w));
        let cutoff = n as u64 * self.base;
        let mut sum = 0;
        for &w in order.iter() {
            sum += self.score[w as usize];
            if sum > cutoff {
                self.throttled |= 1 << w;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_locality_raises_the_score_and_throttles_the_lowest_warps() {
        let cfg = Config {
            warps_per_sm: 4,
            ..Config::default()
        };
        let mut c = Ccws::new(&cfg);
        for w in 0..4 {
            c.warp_launched(w);
        }
        c.cycle(0b1111, 100);
        assert_eq!(c.throttled, 0, "all at base: nobody throttled");
        c.evicted(1, 77);
        c.load_missed(0, 77, 4); // another warp's VTA: no lost locality
        assert_eq!(c.vta_hits_total, 0);
        c.load_missed(1, 77, 4); // warp 1 lost its own line
        assert_eq!(c.vta_hits_total, 1);
        // LLDS = 1 × 8 × 400 / 100 = 32 → base; grow it with more hits.
        for line in 0..8 {
            c.evicted(1, 1000 + line);
            c.load_missed(1, 1000 + line, 4);
        }
        assert!(c.score[1] > 100, "{}", c.score[1]);
        c.cycle(0b1111, 0);
        assert_eq!(c.throttled & 0b0010, 0, "the high scorer keeps issuing loads");
        assert_ne!(c.throttled, 0, "someone is pushed past the cutoff");
    }
}
