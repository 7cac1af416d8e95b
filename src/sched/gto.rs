//! Greedy-then-oldest, GPGPU-Sim 3.2.2 `gto`: the warp that issued last goes first (even if
//! it is now stalled), then the others oldest first (lowest dynamic warp id, i.e. launch order).

use super::Order;

#[derive(Clone, Debug)]
pub struct Gto {
    /// Resident warp slots in launch order (oldest first).
    by_age: Vec<u8>,
    /// The warp that issued last, if it is still resident.
    greedy: Option<u8>,
}

impl Gto {
    pub fn new(capacity: usize) -> Self {
        Gto {
            by_age: Vec::with_capacity(capacity),
            greedy: None,
        }
    }

    pub fn order(&self, active: u64, out: &mut Order) {
        if let Some(g) = self.greedy {
            if active >> g & 1 == 1 {
                out.push(g);
            }
        }
        for &slot in &self.by_age {
            if Some(slot) != self.greedy && active >> slot & 1 == 1 {
                out.push(slot);
            }
        }
    }

    pub fn issued(&mut self, slot: u8) {
        self.greedy = Some(slot);
    }

    pub fn launched(&mut self, slot: u8) {
        self.by_age.push(slot);
    }

    pub fn exited(&mut self, slot: u8) {
        self.by_age.retain(|&s| s != slot);
        if self.greedy == Some(slot) {
            self.greedy = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_first_then_oldest() {
        let mut p = Gto::new(8);
        for s in [4, 0, 2] {
            p.launched(s);
        }
        let mut o = Order::default();
        p.order(0b10101, &mut o);
        assert_eq!(o.as_slice(), &[4, 0, 2]);
        p.issued(2);
        o.clear();
        p.order(0b10101, &mut o);
        assert_eq!(o.as_slice(), &[2, 4, 0]);
        p.exited(4);
        p.launched(6);
        o.clear();
        p.order(0b1010101, &mut o);
        assert_eq!(o.as_slice(), &[2, 0, 6]);
    }
}
