//! OWL (Jog et al., ASPLOS 2013), CTA-aware two-level scheduling: warps are grouped by CTA;
//! the group of the oldest resident CTA has priority, round robin inside it, and lower groups
//! issue only while every warp of the groups above is stalled. BLP awareness: SM *i* ranks
//! the groups whose CTA id has parity *i mod 2* first, so neighbouring SMs work on different
//! CTAs (and DRAM banks) at the same time. Memory-side prefetching is not modelled [design].

use super::Order;

#[derive(Clone, Debug)]
struct Group {
    cta: u32,
    /// Launch order of the CTA on this SM.
    seq: u64,
    warps: u64,
    /// Slot that issued last in this group (round robin inside it).
    last: u8,
}

#[derive(Clone, Debug)]
pub struct Owl {
    /// Groups in priority order.
    groups: Vec<Group>,
    /// CTA-id parity this SM prefers, when BLP awareness is on.
    parity: Option<u32>,
}

impl Owl {
    pub fn new(parity: Option<u32>) -> Self {
        Owl {
            groups: Vec::with_capacity(16),
            parity,
        }
    }

    /// Forgets every group (a reset of the scheduler block).
    pub fn clear(&mut self) {
        self.groups.clear();
    }

    fn rank(&self, g: &Group) -> (bool, u64) {
        (self.parity.is_some_and(|p| g.cta % 2 != p), g.seq)
    }

    pub fn launched(&mut self, slot: u8, cta: u32, seq: u64) {
        if let Some(g) = self.groups.iter_mut().find(|g| g.cta == cta && g.seq == seq) {
            g.warps |= 1 << slot;
            return;
        }
        let g = Group {
            cta,
            seq,
            warps: 1 << slot,
            last: 63,
        };
        let at = self
            .groups
            .iter()
            .position(|h| self.rank(h) > self.rank(&g))
            .unwrap_or(self.groups.len());
        self.groups.insert(at, g);
    }

    pub fn exited(&mut self, slot: u8) {
        for g in &mut self.groups {
            g.warps &= !(1 << slot);
        }
        self.groups.retain(|g| g.warps != 0);
    }

    pub fn order(&self, candidates: u64, out: &mut Order) {
        for g in &self.groups {
            let m = g.warps & candidates;
            if m == 0 {
                continue;
            }
            out.push_round_robin(m, g.last);
        }
    }

    pub fn issued(&mut self, slot: u8) {
        if let Some(g) = self.groups.iter_mut().find(|g| g.warps >> slot & 1 == 1) {
            g.last = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_preferred_group_first_round_robin_inside() {
        // SM 0 prefers even CTAs: CTA 4 (launched second) outranks CTA 3 (launched first).
        let mut p = Owl::new(Some(0));
        for s in [0, 2] {
            p.launched(s, 3, 0);
        }
        for s in [4, 6] {
            p.launched(s, 4, 1);
        }
        let mut o = Order::default();
        p.order(0b1010101, &mut o);
        assert_eq!(o.as_slice(), &[4, 6, 0, 2]);
        p.issued(4);
        o.clear();
        p.order(0b1010101, &mut o);
        assert_eq!(o.as_slice(), &[6, 4, 0, 2]);
        // Without BLP awareness the oldest CTA's group leads.
        let mut q = Owl::new(None);
        q.launched(0, 3, 0);
        q.launched(4, 4, 1);
        o.clear();
        q.order(0b10001, &mut o);
        assert_eq!(o.as_slice(), &[0, 4]);
        q.exited(0);
        o.clear();
        q.order(0b10001, &mut o);
        assert_eq!(o.as_slice(), &[4]);
    }
}
