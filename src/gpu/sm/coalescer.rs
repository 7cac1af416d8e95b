//! The coalescer: turns a warp's per-lane addresses into memory accesses. Global loads and
//! stores follow GPGPU-Sim's segment rule ([`Coalesced::build_global`]), global atomics its
//! own rule for them ([`Coalesced::build_atomic`]); texture and constant reads become one
//! request per line of their cache, in order of first touch ([`Coalesced::build_in`]).
use crate::workload::program::{AddrExpr, LaneEnv, LaneStack, INACTIVE_LANE, MAX_EXPR_STACK, WARP_LANES};

/// Up to two lines per lane (an unaligned access can straddle a line boundary).
pub const MAX_LINE_REQUESTS: usize = 64;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineRequest {
    pub line: u64,
    pub bytes: u16,
}

/// The line requests of one memory instruction.
#[derive(Clone, Debug)]
pub struct Coalesced {
    pub lines: [LineRequest; MAX_LINE_REQUESTS],
    pub len: usize,
    /// Scratch for evaluating an address expression over all lanes at once.
    stack: Box<LaneStack>,
    addrs: [u64; WARP_LANES],
}

impl Default for Coalesced {
    fn default() -> Self {
        Coalesced {
            lines: [LineRequest::default(); MAX_LINE_REQUESTS],
            len: 0,
            stack: Box::new([[0; WARP_LANES]; MAX_EXPR_STACK]),
            addrs: [0; WARP_LANES],
        }
    }
}

impl Coalesced {
    pub fn as_slice(&self) -> &[LineRequest] {
        &self.lines[..self.len]
    }

    /// Appends the access of one coalesced segment, shrunk to the chunks its lanes use
    /// ([`reduce_segment`]), as a request to its line (`shift`: log2 of the line size).
    fn push_segment(&mut self, seg: u64, segment: u64, chunks: u8, shift: u32) {
        let (addr, size) = reduce_segment(seg, segment, chunks);
        self.lines[self.len] = LineRequest {
            line: addr >> shift,
            bytes: size as u16,
        };
        self.len += 1;
    }

    /// Take `other`'s line requests, keeping this one's scratch (a `clone_from` would
    /// allocate a new 4 KB lane stack; CAR parks an instruction this way).
    pub fn copy_requests_from(&mut self, other: &Coalesced) {
        self.lines[..other.len].copy_from_slice(other.as_slice());
        self.len = other.len;
    }

    fn add(&mut self, line: u64, bytes: u16) {
        // Lanes usually walk addresses in order: the last line is the likely match.
        if self.len > 0 && self.lines[self.len - 1].line == line {
            self.lines[self.len - 1].bytes = self.lines[self.len - 1].bytes.saturating_add(bytes);
        } else if let Some(r) = self.lines[..self.len].iter_mut().find(|r| r.line == line) {
            r.bytes = r.bytes.saturating_add(bytes);
        } else {
            self.lines[self.len] = LineRequest { line, bytes };
            self.len += 1;
        }
    }

    /// Evaluates `expr` for lanes `0..lanes` of the warp whose lane 0 is `env.tid` and
    /// groups the `width`-byte accesses by line.
    pub fn build(&mut self, expr: &AddrExpr, env: LaneEnv, lanes: u32, width: u32, line_bytes: u32) {
        self.build_masked(expr, env, lanes, u32::MAX, width, line_bytes);
    }

    /// [`build`](Self::build) for the lanes of `mask` only (the warp's active mask): masked-off
    /// lanes are skipped as a trace's inactive lanes are.
    pub fn build_masked(
        &mut self,
        expr: &AddrExpr,
        env: LaneEnv,
        lanes: u32,
        mask: u32,
        width: u32,
        line_bytes: u32,
    ) {
        self.build_in(expr, env, &[], lanes, mask, width, line_bytes);
    }

    /// [`build_masked`](Self::build_masked) for a warp whose register values are `values`:
    /// addresses may depend on loaded data (`x[4*r2]`).
    #[allow(clippy::too_many_arguments)]
    pub fn build_in(
        &mut self,
        expr: &AddrExpr,
        env: LaneEnv,
        values: &[[i64; WARP_LANES]],
        lanes: u32,
        mask: u32,
        width: u32,
        line_bytes: u32,
    ) {
        self.len = 0;
        let shift = line_bytes.trailing_zeros();
        let lanes = self.eval_addrs(expr, env, values, lanes);
        for lane in 0..lanes {
            let Some(addr) = self.active_addr(lane, mask) else {
                continue;
            };
            let first = addr >> shift;
            let last = addr.wrapping_add(width as u64 - 1) >> shift;
            if first == last {
                self.add(first, width as u16);
            } else {
                let split = ((first + 1) << shift).wrapping_sub(addr) as u16;
                self.add(first, split);
                self.add(last, width as u16 - split);
            }
        }
    }
}

impl Coalesced {
    /// Evaluates `expr` for the warp's first `lanes` lanes (at most 32) into `addrs`; returns
    /// how many it evaluated.
    fn eval_addrs(
        &mut self,
        expr: &AddrExpr,
        env: LaneEnv,
        values: &[[i64; WARP_LANES]],
        lanes: u32,
    ) -> usize {
        let lanes = (lanes as usize).min(WARP_LANES);
        expr.eval_lanes_in(&env, values, lanes, &mut self.stack, &mut self.addrs);
        lanes
    }

    /// Lane `lane`'s evaluated address, if the lane is in `mask` and has one.
    fn active_addr(&self, lane: usize, mask: u32) -> Option<u64> {
        let addr = self.addrs[lane];
        (addr != INACTIVE_LANE && mask >> lane & 1 == 1).then_some(addr)
    }

    /// The cycles a shared-memory instruction holds the LD/ST unit's dispatch register: the
    /// most distinct 4-byte words any one of `banks` banks is asked for (GPGPU-Sim 3.2.2
    /// `warp_inst_t::generate_mem_accesses`, `shared_space`, with `shmem_limited_broadcast`
    /// off and one warp part, as the GTX480 file sets them: lanes reading one word share it,
    /// and each lane's first address alone counts). At least 1 (a warp with no active lane
    /// takes the unit for one cycle).
    #[allow(clippy::too_many_arguments)]
    pub fn shared_bank_cycles(
        &mut self,
        expr: &AddrExpr,
        env: LaneEnv,
        values: &[[i64; WARP_LANES]],
        lanes: u32,
        mask: u32,
        banks: u32,
    ) -> u8 {
        let lanes = self.eval_addrs(expr, env, values, lanes);
        // The active lanes' words, and whether two of them fall in one bank.
        let mut words = [0u64; WARP_LANES];
        let mut n = 0;
        let mut banks_hit = 0u64;
        let mut clash = false;
        for lane in 0..lanes {
            let Some(addr) = self.active_addr(lane, mask) else {
                continue;
            };
            words[n] = addr >> 2;
            n += 1;
            let bit = 1u64 << (words[n - 1] % banks as u64 % 64);
            clash |= banks_hit & bit != 0;
            banks_hit |= bit;
        }
        // Each lane in a bank of its own: one cycle, the common case (no quadratic search).
        if !clash {
            return 1;
        }
        // Per bank, the distinct words asked for (`shmem_bank_func`: word index mod banks):
        // sorted, equal words are neighbours and count once.
        let words = &mut words[..n];
        words.sort_unstable();
        let mut per_bank = [0u8; WARP_LANES];
        let mut most = 1;
        for (i, &word) in words.iter().enumerate() {
            if i > 0 && words[i - 1] == word {
                continue;
            }
            let bank = (word % banks as u64) as usize;
            per_bank[bank] += 1;
            most = most.max(per_bank[bank]);
        }
        most
    }
}

impl Coalesced {
    /// The transactions of a global load or store, as GPGPU-Sim builds them
    /// (abstract_hardware_model.cc: 3.2.2 `warp_inst_t::memory_coalescing_arch_13`, 4.x
    /// `memory_coalescing_arch` with the GTX480's `-gpgpu_coalesce_arch 20` and the L1 in
    /// use; one warp part, `-gpgpu_shmem_warp_parts 1`): the active lanes are grouped by
    /// segment, 32 B for 1-byte, 64 B for 2-byte and 128 B for wider accesses, each segment
    /// shrinks to the 32 or 64 B its lanes use (`reduce_and_send`; `bytes` is that size, the
    /// data a store carries), and the segments go in address order into the access queue,
    /// which the LD/ST unit sends from the back (`accessq_back`): highest address first. A
    /// lane counts in the segment of its first byte (GPGPU-Sim asserts no lane straddles).
    #[allow(clippy::too_many_arguments)]
    pub fn build_global(
        &mut self,
        expr: &AddrExpr,
        env: LaneEnv,
        values: &[[i64; WARP_LANES]],
        lanes: u32,
        mask: u32,
        width: u32,
        line_bytes: u32,
    ) {
        self.len = 0;
        let shift = line_bytes.trailing_zeros();
        let lanes = self.eval_addrs(expr, env, values, lanes);
        // [design] A line shorter than the segment (`line_bytes` below 128) cuts it: one
        // request never spans two lines.
        let segment = segment_bytes(width).min(line_bytes as u64);
        // (segment address, 32-byte chunks used); at most one per lane.
        let mut txns = [(0u64, 0u8); WARP_LANES];
        let mut n = 0;
        for lane in 0..lanes {
            let Some(addr) = self.active_addr(lane, mask) else {
                continue;
            };
            let seg = addr & !(segment - 1);
            let chunk = 1u8 << ((addr & 127) / 32);
            match txns[..n].iter_mut().find(|t| t.0 == seg) {
                Some(t) => t.1 |= chunk,
                None => {
                    txns[n] = (seg, chunk);
                    n += 1;
                }
            }
        }
        txns[..n].sort_unstable_by_key(|t| std::cmp::Reverse(t.0));
        for &(seg, chunks) in &txns[..n] {
            self.push_segment(seg, segment, chunks, shift);
        }
    }
}

/// One atomic transaction being built: its segment, creation order, bytes (offsets in the
/// 128-byte chunk) and 32-byte chunks used.
#[derive(Clone, Copy, Debug, Default)]
struct AtomTxn {
    segment: u64,
    order: u8,
    bytes: u128,
    chunks: u8,
}

impl Coalesced {
    /// The transactions of a global atomic, as GPGPU-Sim 3.2.2 builds them
    /// (abstract_hardware_model.cc, `warp_inst_t::memory_coalescing_arch_13_atomic`): per
    /// half-warp (`warp_parts = 2`), lanes are grouped by segment (32 B for 1-byte, 64 B for
    /// 2-byte, 128 B for wider accesses), and a lane joins the first transaction of its
    /// segment whose bytes it does not overlap, else opens a new one: lanes updating the same
    /// word are serialised into separate transactions. Each transaction shrinks to the 32 or
    /// 64 B it uses (`memory_coalescing_arch_13_reduce_and_send`); `bytes` is that size (the
    /// data the request and its reply carry). A misaligned lane counts in the segment of its
    /// first byte (3.2.2 asserts there is none).
    #[allow(clippy::too_many_arguments)]
    pub fn build_atomic(
        &mut self,
        expr: &AddrExpr,
        env: LaneEnv,
        values: &[[i64; WARP_LANES]],
        lanes: u32,
        mask: u32,
        width: u32,
        line_bytes: u32,
    ) {
        self.len = 0;
        let shift = line_bytes.trailing_zeros();
        let lanes = self.eval_addrs(expr, env, values, lanes);
        let segment = segment_bytes(width);
        const PART: usize = WARP_LANES / 2;
        for part in 0..2 {
            let mut txns = [AtomTxn::default(); PART];
            let mut n = 0;
            for lane in part * PART..((part + 1) * PART).min(lanes) {
                let Some(addr) = self.active_addr(lane, mask) else {
                    continue;
                };
                let seg = addr & !(segment - 1);
                let idx = (addr & 127) as u32;
                let end = (idx + width.clamp(1, 16)).min(128);
                let bytes = ((1u128 << (end - idx)) - 1) << idx;
                let t = match txns[..n]
                    .iter()
                    .position(|t| t.segment == seg && t.bytes & bytes == 0)
                {
                    Some(t) => t,
                    None => {
                        txns[n] = AtomTxn {
                            segment: seg,
                            order: n as u8,
                            ..AtomTxn::default()
                        };
                        n += 1;
                        n - 1
                    }
                };
                txns[t].bytes |= bytes;
                txns[t].chunks |= 1 << (idx / 32);
            }
            // 3.2.2 walks a std::map by segment address, each segment's list in order.
            txns[..n].sort_unstable_by_key(|t| (t.segment, t.order));
            for t in &txns[..n] {
                self.push_segment(t.segment, segment, t.chunks, shift);
            }
        }
        // The LD/ST unit sends from the back of the access queue (shader.cc,
        // ldst_unit::memory_cycle: `accessq_back`, `accessq_pop_back`).
        self.lines[..self.len].reverse();
    }
}

/// The segment GPGPU-Sim coalesces a `width`-byte global access into (3.2.2
/// `memory_coalescing_arch_13` and its atomic twin): 32 B for 1-byte, 64 B for 2-byte and
/// 128 B for wider lanes.
fn segment_bytes(width: u32) -> u64 {
    match width {
        1 => 32,
        2 => 64,
        _ => 128,
    }
}

/// The address and size a transaction of `segment` bytes at `addr` shrinks to from the
/// 32-byte chunks it uses (abstract_hardware_model.cc,
/// `memory_coalescing_arch_13_reduce_and_send`).
fn reduce_segment(mut addr: u64, segment: u64, chunks: u8) -> (u64, u64) {
    let mut size = segment;
    let mut halves = 0u8;
    if segment == 128 {
        let (lower, upper) = (chunks & 0b0011 != 0, chunks & 0b1100 != 0);
        if lower && !upper {
            size = 64;
            halves = chunks & 0b11;
        } else if !lower && upper {
            addr += 64;
            size = 64;
            halves = chunks >> 2 & 0b11;
        }
    } else if segment == 64 {
        halves = if addr.is_multiple_of(128) {
            chunks & 0b11
        } else {
            chunks >> 2 & 0b11
        };
    }
    if size == 64 {
        match (halves & 1 != 0, halves & 2 != 0) {
            (true, false) => size = 32,
            (false, true) => {
                addr += 32;
                size = 32;
            }
            _ => {}
        }
    }
    (addr, size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::program::{ExprNode, Var};

    fn expr(stride: i64) -> AddrExpr {
        AddrExpr {
            base: 0x1000_0000,
            nodes: vec![ExprNode::Const(stride), ExprNode::Var(Var::Tid), ExprNode::Mul],
            lanes: None,
        }
    }

    fn env() -> LaneEnv {
        LaneEnv {
            tid: 0,
            cta: 0,
            block: 32,
            grid: 1,
            loops: [0; 4],
        }
    }

    /// Shared-memory bank conflicts (3.2.2's rule, 32 banks of 4-byte words): the degree is
    /// the most distinct words in one bank; lanes reading one word broadcast.
    #[test]
    fn shared_bank_cycles_count_distinct_words_per_bank() {
        let mut c = Coalesced::default();
        let cycles =
            |c: &mut Coalesced, e: &AddrExpr, mask: u32| c.shared_bank_cycles(e, env(), &[], 32, mask, 32);
        // Consecutive words: one per bank.
        assert_eq!(cycles(&mut c, &expr(4), u32::MAX), 1);
        // Stride 2 words: banks 0, 2, .., 30 twice each.
        assert_eq!(cycles(&mut c, &expr(8), u32::MAX), 2);
        // Stride 32 words: all 32 lanes in bank 0, 32 distinct words.
        assert_eq!(cycles(&mut c, &expr(128), u32::MAX), 32);
        // ... of which only 5 active.
        assert_eq!(cycles(&mut c, &expr(128), 0b1_1111), 5);
        // One word for every lane: a broadcast, one cycle.
        assert_eq!(cycles(&mut c, &expr(0), u32::MAX), 1);
        // Two lanes per word, words 32 apart (bank 0): 16 distinct words.
        let pairs = AddrExpr {
            base: 0,
            nodes: vec![
                ExprNode::Var(Var::Tid),
                ExprNode::Const(2),
                ExprNode::Div,
                ExprNode::Const(128),
                ExprNode::Mul,
            ],
            lanes: None,
        };
        assert_eq!(cycles(&mut c, &pairs, u32::MAX), 16);
        // No active lane: the unit is still taken for a cycle.
        assert_eq!(cycles(&mut c, &expr(128), 0), 1);
    }

    /// The bank count against 3.2.2's rule written plainly (each active lane's word counts
    /// in its bank unless an earlier active lane asked for it), over strides, divisors,
    /// masks and bank counts.
    #[test]
    fn shared_bank_cycles_match_the_plain_rule() {
        let mut c = Coalesced::default();
        for stride in [0, 1, 2, 3, 4, 8, 12, 64, 128, 132] {
            for div in [1, 2, 3, 5, 32] {
                let e = AddrExpr {
                    base: 0,
                    nodes: vec![
                        ExprNode::Var(Var::Tid),
                        ExprNode::Const(div),
                        ExprNode::Div,
                        ExprNode::Const(stride),
                        ExprNode::Mul,
                    ],
                    lanes: None,
                };
                let mut addrs = [0u64; WARP_LANES];
                e.eval_lanes(&env(), 32, &mut [[0; WARP_LANES]; MAX_EXPR_STACK], &mut addrs);
                for mask in [u32::MAX, 0x5555_5555, 0xf0f0_0f0f, 1, 0] {
                    for banks in [1, 7, 16, 32] {
                        let mut per_bank = [0u8; WARP_LANES];
                        let mut want = 1;
                        for l in (0..32).filter(|l| mask >> l & 1 == 1) {
                            let word = addrs[l] >> 2;
                            if !(0..l).any(|p| mask >> p & 1 == 1 && addrs[p] >> 2 == word) {
                                let b = (word % banks) as usize;
                                per_bank[b] += 1;
                                want = want.max(per_bank[b]);
                            }
                        }
                        let got = c.shared_bank_cycles(&e, env(), &[], 32, mask, banks as u32);
                        assert_eq!(
                            got, want,
                            "stride {stride} div {div} mask {mask:#x} banks {banks}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn unit_stride_warp_is_one_line() {
        let mut c = Coalesced::default();
        c.build(&expr(4), env(), 32, 4, 128);
        assert_eq!(
            c.as_slice(),
            &[LineRequest {
                line: 0x1000_0000 / 128,
                bytes: 128
            }]
        );
    }

    #[test]
    fn line_stride_warp_is_32_lines() {
        let mut c = Coalesced::default();
        c.build(&expr(128), env(), 32, 4, 128);
        assert_eq!(c.len, 32);
        assert!(c.as_slice().iter().all(|r| r.bytes == 4));
    }

    #[test]
    fn partial_warp_and_straddling_access() {
        let mut c = Coalesced::default();
        // 8-byte accesses at a 124-byte offset straddle lines.
        let e = AddrExpr {
            base: 124,
            nodes: vec![ExprNode::Const(0)],
            lanes: None,
        };
        c.build(&e, env(), 1, 8, 128);
        assert_eq!(
            c.as_slice(),
            &[
                LineRequest { line: 0, bytes: 4 },
                LineRequest { line: 1, bytes: 4 }
            ]
        );
    }

    /// Addresses may read the warp's register values (`Var::Reg`): lane l's value 32·l
    /// spreads a unit-stride expression over 32 lines; the values stay per lane.
    #[test]
    fn addresses_read_register_values() {
        let e = AddrExpr {
            base: 0x1000_0000,
            nodes: vec![ExprNode::Const(4), ExprNode::Var(Var::Reg(1)), ExprNode::Mul],
            lanes: None,
        };
        let mut values = [[0i64; WARP_LANES]; 2];
        values[1] = std::array::from_fn(|l| 32 * l as i64);
        let mut c = Coalesced::default();
        c.build_in(&e, env(), &values, 32, u32::MAX, 4, 128);
        assert_eq!(c.len, 32);
        // Only the active lanes' values count.
        c.build_in(&e, env(), &values, 32, 0b101, 4, 128);
        assert_eq!(
            c.as_slice(),
            &[
                LineRequest {
                    line: 0x1000_0000 / 128,
                    bytes: 4
                },
                LineRequest {
                    line: 0x1000_0000 / 128 + 2,
                    bytes: 4
                }
            ]
        );
        values[1] = [0; WARP_LANES];
        c.build_in(&e, env(), &values, 32, u32::MAX, 4, 128);
        assert_eq!(c.len, 1);
    }

    fn global(c: &mut Coalesced, e: &AddrExpr, mask: u32, width: u32) -> Vec<(u64, u16)> {
        c.build_global(e, env(), &[], 32, mask, width, 128);
        c.as_slice().iter().map(|r| (r.line, r.bytes)).collect()
    }

    /// GPGPU-Sim's `memory_coalescing_arch_13`: segments by access width, shrunk to the
    /// 32 / 64 B used, highest address first.
    #[test]
    fn global_accesses_are_segments_by_width_highest_address_first() {
        let mut c = Coalesced::default();
        let l = 0x1000_0000 / 128;
        // 4-byte lanes, unit stride: one 128 B segment, the line.
        assert_eq!(global(&mut c, &expr(4), u32::MAX, 4), [(l, 128)]);
        // Eight lanes in the first 32 B: shrunk to 32 B.
        assert_eq!(global(&mut c, &expr(4), 0xFF, 4), [(l, 32)]);
        // Every lane on one word: one 32 B access.
        assert_eq!(global(&mut c, &expr(0), u32::MAX, 4), [(l, 32)]);
        // 1-byte lanes 4 bytes apart: four 32 B segments of one line, from the top.
        assert_eq!(
            global(&mut c, &expr(4), u32::MAX, 1),
            [(l, 32), (l, 32), (l, 32), (l, 32)]
        );
        // 2-byte lanes 4 bytes apart: two 64 B segments.
        assert_eq!(global(&mut c, &expr(4), u32::MAX, 2), [(l, 64), (l, 64)]);
        // 1-byte lanes packed: one 32 B segment.
        assert_eq!(global(&mut c, &expr(1), u32::MAX, 1), [(l, 32)]);
        // A line per lane: 32 accesses of 32 B, the highest line first.
        let lines = global(&mut c, &expr(128), u32::MAX, 4);
        assert_eq!(lines.len(), 32);
        assert_eq!(lines[0], (l + 31, 32));
        assert_eq!(lines[31], (l, 32));
        // No active lane: no access.
        assert!(global(&mut c, &expr(4), 0, 4).is_empty());
    }

    fn atomic(c: &mut Coalesced, e: &AddrExpr, mask: u32, width: u32) -> Vec<(u64, u16)> {
        c.build_atomic(e, env(), &[], 32, mask, width, 128);
        c.as_slice().iter().map(|r| (r.line, r.bytes)).collect()
    }

    /// GPGPU-Sim 3.2.2's `memory_coalescing_arch_13_atomic`: half-warps, distinct words of
    /// a line in one transaction, lanes on one word serialised, transactions shrunk to the
    /// 32 / 64 B they use.
    #[test]
    fn atomics_coalesce_per_half_warp_and_serialise_lanes_on_one_word() {
        let mut c = Coalesced::default();
        let l = 0x1000_0000 / 128;
        // Sixteen lanes on distinct words of one line: one request (64 B used).
        assert_eq!(atomic(&mut c, &expr(4), 0xFFFF, 4), [(l, 64)]);
        // The whole warp: one per half-warp (each a 64 B half of the line).
        assert_eq!(atomic(&mut c, &expr(4), u32::MAX, 4), [(l, 64), (l, 64)]);
        // Eight active lanes in the first 32 B: one 32 B request.
        assert_eq!(atomic(&mut c, &expr(4), 0xFF, 4), [(l, 32)]);
        // Every lane on one word: 16 transactions per half-warp.
        let same = atomic(&mut c, &expr(0), u32::MAX, 4);
        assert_eq!(same.len(), 32);
        assert!(same.iter().all(|&r| r == (l, 32)));
        // mrig-1's pattern, 8 lanes per bin, 4 bins in a line: 8 per half-warp.
        let bins = AddrExpr {
            base: 0x1000_0000,
            nodes: vec![
                ExprNode::Const(4),
                ExprNode::Var(Var::Tid),
                ExprNode::Const(8),
                ExprNode::Div,
                ExprNode::Mul,
            ],
            lanes: None,
        };
        assert_eq!(atomic(&mut c, &bins, u32::MAX, 4).len(), 16);
        // A line per lane: one request per lane, as for loads.
        assert_eq!(atomic(&mut c, &expr(128), u32::MAX, 4).len(), 32);
        // 8-byte atomics on distinct words of a line: 16 lanes use all 128 B.
        assert_eq!(atomic(&mut c, &expr(8), 0xFFFF, 8), [(l, 128)]);
        // The upper 64 B only, then its upper 32 B only: the request moves with them.
        let high = AddrExpr {
            base: 0x1000_0000 + 96,
            ..expr(0)
        };
        assert_eq!(atomic(&mut c, &high, 1, 4), [(l, 32)]);
        // Loads of the same lanes are one line request: atomics differ.
        c.build(&expr(0), env(), 32, 4, 128);
        assert_eq!(c.len, 1);
    }
}
