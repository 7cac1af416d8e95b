//! CCWS (Rogers et al., MICRO 2012): GTO plus load throttling driven by lost intra-warp
//! locality, as the authors' public implementation (`github:tgrogers/ccws-2012`,
//! `scheduling-point-system.cc` and `gpu-cache.cc`, config `QuadroFX5800-CCWS`) does it:
//! - Each L1 line remembers the warp that allocated it; an evicted line's tag goes to that
//!   warp's victim tag array (VTA: `ccws_vta_entries` per warp in sets of `ccws_vta_ways`,
//!   FIFO, an invalid way first; a tag already there is not added again).
//! - An L1 load miss that hits the warp's own VTA is lost locality. The warp's score becomes
//!   `LLDS = VTA hits × K_THROTTLE × cutoff / instructions` (never below the base), where
//!   hits and issued instructions are those of the SM's resident warps and
//!   `cutoff = active warps × base`.
//! - Every cycle a score above the base decays by 1 and is capped at the current LLDS.
//! - Warps are sorted by score (ties: lower slot first) and added to the list of warps that
//!   may issue loads until the sum of their scores reaches the cutoff; the warp whose score
//!   makes the sum reach it is still in the list. Only global loads are held back.
//! - A store removes its line from every warp's VTA.

const FREE: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub struct Ccws {
    /// VTA tags, `entries` per warp, grouped in sets of `ways`.
    vta: Vec<u64>,
    /// Insertion stamp of each VTA entry: FIFO replaces the oldest.
    vta_stamp: Vec<u64>,
    next_stamp: u64,
    entries: usize,
    ways: usize,
    score: Vec<u64>,
    /// Bit w: `score[w]` is above the base. Only these warps decay and are sorted, so a
    /// cycle costs the few warps that lost locality, not all 48.
    high: u64,
    base: u64,
    k: u64,
    /// Per slot: VTA hits and issued instructions of the warp now resident there.
    warp_hits: Vec<u64>,
    warp_instructions: Vec<u64>,
    /// Sums of the two over resident warps (ccws-2012 takes a warp's counts out at its exit).
    vta_hits: u64,
    instructions: u64,
    /// The `active` mask the last `cycle` saw, to notice warps that left.
    last_active: u64,
    /// Bit w: warp w may not issue global loads this cycle.
    pub throttled: u64,
    pub vta_hits_total: u64,
    /// Cycles in which some warp was held back, and warp-cycles held back.
    pub throttle_cycles: u64,
    pub throttled_warp_cycles: u64,
}

/// CCWS's sizes and constants (the `ccws_*` settings).
#[derive(Clone, Copy, Debug)]
pub struct CcwsParams {
    pub warps: u32,
    pub vta_entries: u32,
    pub vta_ways: u32,
    pub base_score: u32,
    pub k_throttle: u32,
}

impl Ccws {
    pub fn new(p: &CcwsParams) -> Self {
        let warps = p.warps as usize;
        let entries = p.vta_entries as usize;
        let ways = p.vta_ways as usize;
        Ccws {
            vta: vec![FREE; warps * entries],
            vta_stamp: vec![0; warps * entries],
            next_stamp: 0,
            entries,
            ways,
            score: vec![p.base_score as u64; warps],
            high: 0,
            base: p.base_score as u64,
            k: p.k_throttle as u64,
            warp_hits: vec![0; warps],
            warp_instructions: vec![0; warps],
            vta_hits: 0,
            instructions: 0,
            last_active: 0,
            throttled: 0,
            vta_hits_total: 0,
            throttle_cycles: 0,
            throttled_warp_cycles: 0,
        }
    }

    /// The VTA entries of `line` in warp `warp`'s array (set = line mod sets, as
    /// GPGPU-Sim's linear set index).
    fn set(&self, warp: u8, line: u64) -> std::ops::Range<usize> {
        let sets = self.entries / self.ways;
        let s = warp as usize * self.entries + (line % sets as u64) as usize * self.ways;
        s..s + self.ways
    }

    /// The warp in `slot` left: its VTA hits and instructions leave the sums.
    /// ccws-2012 scheduling-point-system.cc, inform_warp_exit / event_warp_exit
    fn forget(&mut self, slot: usize) {
        self.vta_hits -= self.warp_hits[slot];
        self.instructions -= self.warp_instructions[slot];
        self.warp_hits[slot] = 0;
        self.warp_instructions[slot] = 0;
    }

    /// A new warp took `slot`: it starts with an empty VTA and the base score.
    pub fn warp_launched(&mut self, slot: u8) {
        let s = slot as usize * self.entries;
        self.vta[s..s + self.entries].fill(FREE);
        self.score[slot as usize] = self.base;
        self.high &= !(1 << slot);
        self.forget(slot as usize);
    }

    /// Warp `warp` issued an instruction (barriers are not counted, as in ccws-2012
    /// shader.cc, shader_core_ctx::issue_warp → signal_inst_issue).
    pub fn issued(&mut self, warp: u8) {
        self.warp_instructions[warp as usize] += 1;
        self.instructions += 1;
    }

    /// The L1 evicted `line`, which warp `owner` had allocated: its tag enters the owner's
    /// VTA unless already there. ccws-2012 gpu-cache.cc,
    /// high_locality_protected_cache::locality_detection_handle_eviction
    pub fn evicted(&mut self, owner: u8, line: u64) {
        let set = self.set(owner, line);
        if self.vta[set.clone()].contains(&line) {
            return; // FIFO: a hit does not reorder
        }
        // GPGPU-Sim base_tag_array::probe: an invalid way first, else the oldest.
        let way = set
            .clone()
            .find(|&i| self.vta[i] == FREE)
            .unwrap_or_else(|| set.min_by_key(|&i| self.vta_stamp[i]).expect("ways ≥ 1"));
        self.vta[way] = line;
        self.vta_stamp[way] = self.next_stamp;
        self.next_stamp += 1;
    }

    /// A store accessed `line` in the L1: the line leaves every warp's VTA, whichever warp
    /// stored. ccws-2012 gpu-cache.cc, high_locality_protected_cache::access ("Evict writes
    /// from the VC as well": the loop over all of m_victim_tag_arrays).
    pub fn store(&mut self, line: u64) {
        let sets = (self.entries / self.ways) as u64;
        let offset = (line % sets) as usize * self.ways;
        for warp in 0..self.vta.len() / self.entries {
            let s = warp * self.entries + offset;
            for tag in &mut self.vta[s..s + self.ways] {
                if *tag == line {
                    *tag = FREE;
                }
            }
        }
    }

    /// `VTA hits × K_THROTTLE × cutoff / instructions` over the resident warps.
    fn llds(&self, cutoff: u64) -> u64 {
        self.vta_hits * self.k * cutoff / self.instructions.max(1)
    }

    /// Warp `warp` missed on `line` in the L1; `active` counts the SM's resident warps.
    /// A hit in its own VTA is lost locality. The VTA entry stays (ccws-2012 only probes it,
    /// high_locality_protected_cache::handle_victim_cache_probe).
    pub fn load_missed(&mut self, warp: u8, line: u64, active: u32) {
        let set = self.set(warp, line);
        if self.vta[set].contains(&line) {
            self.warp_hits[warp as usize] += 1;
            self.vta_hits += 1;
            self.vta_hits_total += 1;
            // vc_hit adds LLDS, then increment_score caps the sum at LLDS (the config's
            // dynamic cap, k_wsc = k_vc_add = 8): the score becomes LLDS, at least the base.
            let llds = self.llds(active as u64 * self.base);
            self.score[warp as usize] = llds.max(self.base);
            if llds > self.base {
                self.high |= 1 << warp;
            } else {
                self.high &= !(1 << warp);
            }
        }
    }

    /// Once per cycle: decay and cap scores, recompute the throttle set.
    /// ccws-2012 scheduling-point-system.cc, scheduling_point_system::cycle
    /// Whether [`cycle`](Self::cycle) with this `active` mask would change nothing (the
    /// global cycle skip): the same warps as last cycle, none above the base score (nothing
    /// decays) and none held back.
    pub fn settled(&self, active: u64) -> bool {
        self.last_active == active && self.throttled == 0 && active & self.high == 0
    }

    pub fn cycle(&mut self, active: u64) {
        let mut left = self.last_active & !active;
        while left != 0 {
            self.forget(left.trailing_zeros() as usize);
            left &= left - 1;
        }
        self.last_active = active;
        let n = active.count_ones() as u64;
        let cutoff = n * self.base;
        // increment_score(w, -1): the decayed score is capped at the current LLDS. (The
        // 2012 code lets a cap below the base push a score under it until the warp's next
        // L1 access restores the base; we keep the paper's floor at the base.)
        let cap = self.llds(cutoff).max(self.base);
        // Only the warps above the base change; the rest add the base each.
        let mut high = active & self.high;
        let at_base = active & !self.high;
        let mut total = at_base.count_ones() as u64 * self.base;
        let mut least = if at_base != 0 { self.base } else { u64::MAX };
        let mut m = high;
        while m != 0 {
            let w = m.trailing_zeros() as usize;
            m &= m - 1;
            let s = (self.score[w] - 1).min(cap);
            self.score[w] = s;
            if s <= self.base {
                high &= !(1 << w);
                self.high &= !(1 << w);
            }
            total += s;
            least = least.min(s);
        }
        self.throttled = 0;
        if high == 0 {
            return; // all at the base: the sum reaches the cutoff only with the last warp
        }
        self.throttled = throttle_set(
            &self.score,
            high,
            active & !high,
            cutoff,
            total.saturating_sub(least),
        );
        if self.throttled != 0 {
            self.throttle_cycles += 1;
            self.throttled_warp_cycles += self.throttled.count_ones() as u64;
        }
    }
}

/// evaluate_exclusive_load_list: the warps of `active` in order of score (highest first; ties
/// by slot, highest_second) are added while the sum of those before them is under `cutoff`;
/// the rest are held back. `before_last` is the total less a lowest score: the largest sum any
/// warp sees, so under the cutoff nothing is held back and the order is not needed.
///
/// No score is below `base`, so the order is the warps above the base, sorted, then the
/// warps at the base in slot order: only the (few) warps above the base are sorted.
fn throttle_set(score: &[u64], high: u64, at_base: u64, cutoff: u64, before_last: u64) -> u64 {
    if before_last < cutoff {
        return 0;
    }
    // One key per warp above the base, the complemented score above the slot, sorted as
    // plain integers.
    let (mut order, mut n) = ([0u64; 64], 0);
    for w in Bits(high) {
        let s = score[w as usize];
        debug_assert!(s < 1 << 57, "score fits the key");
        order[n] = (!s << 6) | w;
        n += 1;
    }
    let order = &mut order[..n];
    order.sort_unstable();
    let (mut sum, mut throttled) = (0, 0u64);
    for w in order.iter().map(|&key| key & 63).chain(Bits(at_base)) {
        if sum >= cutoff {
            throttled |= 1 << w;
        }
        sum += score[w as usize];
    }
    throttled
}

/// The set bits of a mask, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        (self.0 != 0).then(|| {
            let w = self.0.trailing_zeros() as u64;
            self.0 &= self.0 - 1;
            w
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn ccws_params(cfg: &Config) -> CcwsParams {
        CcwsParams {
            warps: cfg.warps_per_sm,
            vta_entries: cfg.ccws_vta_entries,
            vta_ways: cfg.ccws_vta_ways,
            base_score: cfg.ccws_base_score,
            k_throttle: cfg.ccws_k_throttle,
        }
    }

    /// The throttle set equals a plain walk of the order sorted by (score desc, slot), with
    /// and without the early exit, on random scores and masks.
    #[test]
    fn throttle_set_is_the_sorted_walks() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            // Scores at or above the base (100), many at it, as `cycle` keeps them.
            let score: Vec<u64> = (0..48)
                .map(|_| match next() % 3 {
                    0 => 100 + next() % 400,
                    _ => 100,
                })
                .collect();
            let active = next() & ((1 << 48) - 1);
            let n = active.count_ones() as u64;
            let cutoff = match next() % 2 {
                0 => n * 100,
                _ => n * (100 + next() % 300),
            };
            let mut order: Vec<usize> = (0..48).filter(|&w| active >> w & 1 == 1).collect();
            order.sort_by_key(|&w| (std::cmp::Reverse(score[w]), w));
            let (mut sum, mut want) = (0, 0u64);
            for &w in &order {
                if sum >= cutoff {
                    want |= 1 << w;
                }
                sum += score[w];
            }
            let total: u64 = order.iter().map(|&w| score[w]).sum();
            let least = order.iter().map(|&w| score[w]).min().unwrap_or(0);
            let high = (0..48)
                .filter(|&w| score[w] > 100)
                .fold(0u64, |m, w| m | (1 << w));
            let (high, at_base) = (active & high, active & !high);
            assert_eq!(throttle_set(&score, high, at_base, cutoff, total - least), want);
            assert_eq!(throttle_set(&score, high, at_base, cutoff, u64::MAX), want);
        }
    }

    fn ccws(warps: u32) -> Ccws {
        let cfg = Config {
            warps_per_sm: warps,
            ..Config::default()
        };
        let mut c = Ccws::new(&ccws_params(&cfg));
        for w in 0..warps as u8 {
            c.warp_launched(w);
        }
        c
    }

    /// Gives warp `w` `hits` lost-locality hits on fresh lines starting at `first`.
    fn lose(c: &mut Ccws, w: u8, first: u64, hits: u64, active: u32) {
        for line in first..first + hits {
            c.evicted(w, line);
            c.load_missed(w, line, active);
        }
    }

    #[test]
    fn lost_locality_raises_the_score_and_throttles_the_lowest_warps() {
        let mut c = ccws(4);
        c.cycle(0b1111);
        assert_eq!(c.throttled, 0, "all at base: nobody throttled");
        for _ in 0..100 {
            c.issued(0);
        }
        c.evicted(1, 77);
        c.load_missed(0, 77, 4); // another warp's VTA: no lost locality
        assert_eq!(c.vta_hits_total, 0);
        c.load_missed(1, 77, 4); // warp 1 lost its own line
        assert_eq!(c.vta_hits_total, 1);
        // LLDS = 1 × 8 × 400 / 100 = 32 → base; more hits raise it.
        lose(&mut c, 1, 1000, 8, 4);
        assert_eq!(c.score[1], 9 * 8 * 400 / 100);
        c.cycle(0b1111);
        assert_eq!(c.throttled & 0b0010, 0, "the high scorer keeps issuing loads");
        assert_ne!(c.throttled, 0, "someone is pushed past the cutoff");
    }

    /// ccws-2012 evaluate_exclusive_load_list adds a warp's score, then stops once the sum
    /// reaches the cutoff: the warp whose score crosses it still issues loads.
    #[test]
    fn the_warp_that_crosses_the_cutoff_still_issues_loads() {
        let mut c = ccws(4); // cutoff 400
        for _ in 0..96 {
            c.issued(2);
        }
        // 1 hit: LLDS = 1 × 8 × 400 / 96 = 33 → base; 3 hits: 100; 5 hits: 166.
        lose(&mut c, 2, 0, 5, 4);
        assert_eq!(c.score[2], 166);
        c.cycle(0b1111); // decay: 165, then 100 + 100 → 365, the next 100 crosses 400
        assert_eq!(c.score[2], 165);
        // Order: 2 (165), 0, 1, 3 (100 each). Sums before each: 0, 165, 265, 365 < 400:
        // every warp is added; the sum reaches 465 only with warp 3, which still issues.
        assert_eq!(c.throttled, 0, "warp 3 crosses the cutoff and must still issue");
        // A lone warp whose score alone passes the cutoff is the one that issues.
        lose(&mut c, 2, 100, 60, 4);
        c.cycle(0b1111);
        assert!(c.score[2] >= 400, "{}", c.score[2]);
        assert_eq!(c.throttled, 0b1011, "only the top warp issues loads");
    }

    #[test]
    fn a_store_removes_its_line_from_every_warps_vta() {
        let mut c = ccws(4);
        c.evicted(0, 50);
        c.evicted(3, 50);
        c.evicted(3, 52);
        c.store(50);
        c.load_missed(0, 50, 4);
        c.load_missed(3, 50, 4);
        assert_eq!(c.vta_hits_total, 0, "the written line is not lost locality");
        c.load_missed(3, 52, 4);
        assert_eq!(c.vta_hits_total, 1, "other lines stay");
    }

    #[test]
    fn the_vta_keeps_a_hit_entry_and_replaces_fifo_invalid_first() {
        let mut c = ccws(1); // 16 entries: 2 sets of 8 ways
        c.load_missed(0, 0, 1);
        for line in (0..16).step_by(2) {
            c.evicted(0, line); // set 0 full: 0, 2, .., 14
        }
        c.evicted(0, 4); // already there: not added again, nothing pushed out
        c.load_missed(0, 0, 1);
        c.load_missed(0, 0, 1);
        assert_eq!(c.vta_hits_total, 2, "a VTA hit leaves the entry (a probe)");
        c.store(6); // frees a way
        c.evicted(0, 16); // takes the freed way, the oldest (0) stays
        c.load_missed(0, 0, 1);
        assert_eq!(c.vta_hits_total, 3);
        c.evicted(0, 18); // set full: FIFO replaces the oldest, line 0
        c.load_missed(0, 0, 1);
        c.load_missed(0, 2, 1);
        assert_eq!(c.vta_hits_total, 4, "line 0 was replaced, line 2 stays");
    }

    #[test]
    fn counts_cover_resident_warps_only() {
        let mut c = ccws(2);
        for _ in 0..1000 {
            c.issued(0);
        }
        for _ in 0..100 {
            c.issued(1);
        }
        c.cycle(0b11);
        c.cycle(0b10); // warp 0 left: its 1000 instructions leave the sum
        assert_eq!(c.instructions, 100);
        // LLDS = 2 hits × 8 × 100 / 100 = 16 → base; with warp 0's 1000 it would be 1.
        lose(&mut c, 1, 0, 20, 1);
        assert_eq!(c.score[1], 20 * 8 * 100 / 100);
    }

    #[test]
    fn scores_decay_and_are_capped_at_the_current_llds() {
        let mut c = ccws(2);
        for _ in 0..10 {
            c.issued(0);
        }
        lose(&mut c, 0, 0, 2, 2); // LLDS = 2 × 8 × 200 / 10 = 320
        assert_eq!(c.score[0], 320);
        assert_eq!(c.high, 0b01, "the mask of warps above the base follows the score");
        c.cycle(0b11);
        assert_eq!(c.score[0], 319);
        for _ in 0..30 {
            c.issued(1);
        }
        c.cycle(0b11); // LLDS now 2 × 8 × 200 / 40 = 80 < base: capped at the base
        assert_eq!(c.score[0], 100);
        assert_eq!(c.high, 0);
        assert!(c.settled(0b11));
    }
}
