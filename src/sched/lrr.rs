//! Loose round robin, GPGPU-Sim 3.2.2 `lrr`: the scheduler's warps in circular slot order,
//! starting one after the warp that issued last. The pointer moves only on an issue.

use super::Order;

#[derive(Clone, Debug)]
pub struct Lrr {
    /// Slot of the warp that issued last (63 before any issue: start from the lowest slot).
    last: u8,
}

impl Default for Lrr {
    fn default() -> Self {
        Lrr { last: 63 }
    }
}

impl Lrr {
    /// `candidates` holds only this scheduler's warps, so circular slot order over it is
    /// circular order over the scheduler's own warps.
    pub fn order(&self, candidates: u64, out: &mut Order) {
        out.push_round_robin(candidates, self.last);
    }

    pub fn issued(&mut self, slot: u8) {
        self.last = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_after_last_issuer_and_moves_only_on_issue() {
        let mut p = Lrr::default();
        let mut o = Order::default();
        p.order(0b1010101, &mut o);
        assert_eq!(o.as_slice(), &[0, 2, 4, 6]);
        p.issued(2);
        o.clear();
        p.order(0b1010101, &mut o);
        assert_eq!(o.as_slice(), &[4, 6, 0, 2]);
        // Warps that cannot issue are skipped but keep their place in the circle.
        o.clear();
        p.order(0b1000101, &mut o);
        assert_eq!(o.as_slice(), &[6, 0, 2]);
        p.issued(63);
        o.clear();
        p.order(1 << 63 | 1, &mut o);
        assert_eq!(o.as_slice(), &[0, 63]);
    }
}
