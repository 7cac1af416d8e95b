//! The coalescer: turns a warp's per-lane addresses into line requests (128 B on Fermi for
//! L1-cached global accesses), in order of first touch, with the bytes each line carries.

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
        let lanes = (lanes as usize).min(WARP_LANES);
        expr.eval_lanes_in(&env, values, lanes, &mut self.stack, &mut self.addrs);
        for lane in 0..lanes {
            let addr = self.addrs[lane];
            if addr == INACTIVE_LANE || mask >> lane & 1 == 0 {
                continue;
            }
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
}
