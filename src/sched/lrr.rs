//! Loose round robin, GPGPU-Sim 3.2.2 `lrr`: the scheduler's warps in circular slot order,
//! starting one after the warp that issued last. The pointer moves only on an issue.

use super::Order;

#[derive(Clone, Debug)]
pub struct Lrr {
    /// The slots this scheduler owns, ascending.
    owned: Vec<u8>,
    /// Index into `owned` of the warp that issued last.
    last: usize,
}

impl Lrr {
    pub fn new(owned: Vec<u8>) -> Self {
        let last = owned.len().saturating_sub(1);
        Lrr { owned, last }
    }

    pub fn order(&self, active: u64, out: &mut Order) {
        let n = self.owned.len();
        for k in 1..=n {
            let slot = self.owned[(self.last + k) % n];
            if active >> slot & 1 == 1 {
                out.push(slot);
            }
        }
    }

    pub fn issued(&mut self, slot: u8) {
        if let Some(i) = self.owned.iter().position(|&s| s == slot) {
            self.last = i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_after_last_issuer_and_moves_only_on_issue() {
        let mut p = Lrr::new(vec![0, 2, 4, 6]);
        let mut o = Order::default();
        p.order(0b1010101, &mut o);
        assert_eq!(o.as_slice(), &[0, 2, 4, 6]);
        p.issued(2);
        o.clear();
        p.order(0b1010101, &mut o);
        assert_eq!(o.as_slice(), &[4, 6, 0, 2]);
        // Inactive warps are skipped but keep their place in the circle.
        o.clear();
        p.order(0b1000101, &mut o);
        assert_eq!(o.as_slice(), &[6, 0, 2]);
    }
}
