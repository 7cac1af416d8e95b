//! The one instruction-stream type every workload source produces.
//!
//! A [`Kernel`] is a grid of CTAs that all run the same [`Program`]: a flat list of
//! [`Item`]s in which loops are zero-overhead markers handled by the fetch stage (they are
//! not warp instructions and are not counted). Addresses of memory instructions are
//! [`AddrExpr`]s evaluated per lane at issue time from the lane's thread/CTA indices and
//! the iteration counters of the enclosing loops.

use serde::Serialize;

/// A register number. `NO_REG` marks an unused operand slot.
pub type Reg = u8;
pub const NO_REG: Reg = u8::MAX;
/// Highest usable register number (r0 ..= r254).
pub const MAX_REG: Reg = 254;
/// Deepest loop nesting a program may use (the fetch stage keeps one counter per level).
pub const MAX_LOOP_DEPTH: usize = 4;
/// Longest address expression, in bytecode nodes.
pub const MAX_EXPR_NODES: usize = 32;

/// Which execution pipeline an instruction goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Pipe {
    Sp,
    Sfu,
    Mem,
}

/// Latency class of an SP instruction (latencies come from the config).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum AluKind {
    /// Ordinary integer / floating-point op (add, fma, mov, setp, ...).
    Simple,
    /// Integer multiply.
    IMul,
    /// Integer divide.
    IDiv,
}

/// What an instruction does, as far as timing is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum OpKind {
    Alu(AluKind),
    Sfu,
    LoadGlobal,
    StoreGlobal,
    LoadShared,
    StoreShared,
    /// CTA-wide barrier (`bar.sync`).
    Barrier,
}

impl OpKind {
    pub fn pipe(self) -> Pipe {
        match self {
            OpKind::Alu(_) | OpKind::Barrier => Pipe::Sp,
            OpKind::Sfu => Pipe::Sfu,
            OpKind::LoadGlobal | OpKind::StoreGlobal | OpKind::LoadShared | OpKind::StoreShared => Pipe::Mem,
        }
    }
    pub fn is_memory(self) -> bool {
        self.pipe() == Pipe::Mem
    }
    pub fn is_global(self) -> bool {
        matches!(self, OpKind::LoadGlobal | OpKind::StoreGlobal)
    }
}

/// One warp instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Inst {
    pub op: OpKind,
    /// Destination register, or `NO_REG`.
    pub dst: Reg,
    /// Source registers; unused slots are `NO_REG`.
    pub src: [Reg; 3],
    /// Index into [`Program::exprs`] for memory instructions.
    pub addr: u16,
    /// Bytes accessed per lane (1, 2, 4, 8 or 16) for memory instructions.
    pub width: u8,
}

impl Inst {
    pub fn new(op: OpKind) -> Self {
        Inst {
            op,
            dst: NO_REG,
            src: [NO_REG; 3],
            addr: 0,
            width: 4,
        }
    }
}

/// A program element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Item {
    Inst(Inst),
    /// Start of a loop of `count` iterations whose matching `LoopEnd` is at index `end`.
    /// With `count == 0` the body is skipped.
    LoopStart {
        count: u32,
        end: u32,
    },
    /// End of the loop whose `LoopStart` is at index `start`.
    LoopEnd {
        start: u32,
    },
}

/// A per-lane value an address expression can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Var {
    /// Thread index within the CTA (0 .. block).
    Tid,
    /// Lane within the warp (0 .. 32).
    Lane,
    /// Warp index within the CTA.
    Warp,
    /// CTA index within the grid.
    Cta,
    /// Global thread id: cta * block + tid.
    Gtid,
    /// Global warp id: gtid / 32.
    Gwarp,
    /// Threads per CTA.
    Block,
    /// CTAs in the grid.
    Grid,
    /// Threads in the grid (grid * block).
    Gthreads,
    /// Iteration counter (0-based) of the enclosing loop at this nesting depth (0 = outermost).
    Loop(u8),
}

/// One node of an address expression in postfix (stack) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ExprNode {
    Const(i64),
    Var(Var),
    Add,
    Sub,
    Mul,
    /// Integer division; division by zero yields 0 (the parser rejects literal zero divisors).
    Div,
    /// Euclidean remainder; modulo zero yields 0.
    Rem,
    Xor,
    /// `rand(seed, n)`: pops `n` then `seed`, pushes a deterministic pseudo-random number in
    /// `0 .. n` that depends on the seed, the global thread id and every loop counter. Used to
    /// model irregular gathers.
    Rand,
}

/// A compiled address expression: `base + value(nodes)` bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AddrExpr {
    /// Base address of the buffer the expression indexes (0 for shared memory).
    pub base: u64,
    pub nodes: Vec<ExprNode>,
    /// Explicit per-lane addresses instead of `base + nodes` (kernels from traces, whose
    /// addresses were recorded); [`INACTIVE_LANE`] marks a lane that does not access.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes: Option<Box<[u64; WARP_LANES]>>,
}

/// In [`AddrExpr::lanes`]: the lane is inactive (masked off in the trace).
pub const INACTIVE_LANE: u64 = u64::MAX;

/// Per-lane values that [`AddrExpr::eval`] reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaneEnv {
    pub tid: i64,
    pub cta: i64,
    pub block: i64,
    pub grid: i64,
    pub loops: [u32; MAX_LOOP_DEPTH],
}

/// SplitMix64 finaliser: a cheap, well-mixed, deterministic hash.
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The part of `rand` that is the same for every lane of a warp: the loop counters.
fn loops_hash(loops: &[u32; MAX_LOOP_DEPTH]) -> u64 {
    loops.iter().fold(0x5EED, |h, &l| mix64(h ^ l as u64))
}

/// `rand(seed, n)` for one thread: a value in `0 .. n` (n > 0).
fn rand_value(seed: i64, n: i64, loops: u64, gtid: u64) -> i64 {
    let h = mix64(mix64(seed as u64 ^ loops) ^ gtid);
    (h % n as u64) as i64
}

/// Deepest evaluation stack an address expression may need.
pub const MAX_EXPR_STACK: usize = 16;
/// Lanes per warp.
pub const WARP_LANES: usize = 32;

/// Scratch space for [`AddrExpr::eval_lanes`]: one stack slot holds a value per lane.
pub type LaneStack = [[i64; WARP_LANES]; MAX_EXPR_STACK];

impl AddrExpr {
    /// Evaluates the expression for lanes `0..lanes` of a warp whose lane 0 is thread
    /// `env.tid`, all at once (one pass over the bytecode, a tight loop per node), writing
    /// `out[lane]`. Gives the same values as [`eval`](Self::eval) lane by lane.
    pub fn eval_lanes(
        &self,
        env: &LaneEnv,
        lanes: usize,
        stack: &mut LaneStack,
        out: &mut [u64; WARP_LANES],
    ) {
        let lanes = lanes.min(WARP_LANES);
        if let Some(table) = &self.lanes {
            out[..lanes].copy_from_slice(&table[..lanes]);
            return;
        }
        let gtid0 = env.cta * env.block + env.tid;
        let mut sp = 0usize;
        for node in &self.nodes {
            match *node {
                ExprNode::Const(c) => {
                    stack[sp][..lanes].fill(c);
                    sp += 1;
                }
                ExprNode::Var(v) => {
                    let slot = &mut stack[sp][..lanes];
                    match v {
                        Var::Tid => slot
                            .iter_mut()
                            .enumerate()
                            .for_each(|(l, x)| *x = env.tid + l as i64),
                        Var::Lane => slot
                            .iter_mut()
                            .enumerate()
                            .for_each(|(l, x)| *x = (env.tid + l as i64) & 31),
                        Var::Warp => slot
                            .iter_mut()
                            .enumerate()
                            .for_each(|(l, x)| *x = (env.tid + l as i64) >> 5),
                        Var::Gtid => slot
                            .iter_mut()
                            .enumerate()
                            .for_each(|(l, x)| *x = gtid0 + l as i64),
                        Var::Gwarp => slot
                            .iter_mut()
                            .enumerate()
                            .for_each(|(l, x)| *x = (gtid0 + l as i64) >> 5),
                        Var::Cta => slot.fill(env.cta),
                        Var::Block => slot.fill(env.block),
                        Var::Grid => slot.fill(env.grid),
                        Var::Gthreads => slot.fill(env.grid * env.block),
                        Var::Loop(d) => slot.fill(env.loops[d as usize] as i64),
                    }
                    sp += 1;
                }
                op => {
                    sp -= 1;
                    let (lo, hi) = stack.split_at_mut(sp);
                    let a = &mut lo[sp - 1][..lanes];
                    let b = &hi[0][..lanes];
                    match op {
                        ExprNode::Add => a.iter_mut().zip(b).for_each(|(x, &y)| *x = x.wrapping_add(y)),
                        ExprNode::Sub => a.iter_mut().zip(b).for_each(|(x, &y)| *x = x.wrapping_sub(y)),
                        ExprNode::Mul => a.iter_mut().zip(b).for_each(|(x, &y)| *x = x.wrapping_mul(y)),
                        ExprNode::Div => a
                            .iter_mut()
                            .zip(b)
                            .for_each(|(x, &y)| *x = x.checked_div(y).unwrap_or(0)),
                        ExprNode::Rem => a
                            .iter_mut()
                            .zip(b)
                            .for_each(|(x, &y)| *x = x.checked_rem_euclid(y).unwrap_or(0)),
                        ExprNode::Xor => a.iter_mut().zip(b).for_each(|(x, &y)| *x ^= y),
                        ExprNode::Rand => {
                            let lh = loops_hash(&env.loops);
                            for (l, (x, &n)) in a.iter_mut().zip(b).enumerate() {
                                *x = if n <= 0 {
                                    0
                                } else {
                                    rand_value(*x, n, lh, (gtid0 + l as i64) as u64)
                                };
                            }
                        }
                        _ => unreachable!("operands handled above"),
                    }
                }
            }
        }
        for (o, &v) in out.iter_mut().zip(&stack[0][..lanes]) {
            *o = self.base.wrapping_add(v as u64);
        }
    }

    /// Evaluates the expression for one lane. Arithmetic wraps; the result is an address.
    pub fn eval(&self, env: &LaneEnv) -> u64 {
        let mut stack = [0i64; MAX_EXPR_NODES];
        let mut sp = 0usize;
        for node in &self.nodes {
            let v = match *node {
                ExprNode::Const(c) => c,
                ExprNode::Var(v) => match v {
                    Var::Tid => env.tid,
                    Var::Lane => env.tid & 31,
                    Var::Warp => env.tid >> 5,
                    Var::Cta => env.cta,
                    Var::Gtid => env.cta * env.block + env.tid,
                    Var::Gwarp => (env.cta * env.block + env.tid) >> 5,
                    Var::Block => env.block,
                    Var::Grid => env.grid,
                    Var::Gthreads => env.grid * env.block,
                    Var::Loop(d) => env.loops[d as usize] as i64,
                },
                op => {
                    sp -= 1;
                    let b = stack[sp];
                    sp -= 1;
                    let a = stack[sp];
                    match op {
                        ExprNode::Add => a.wrapping_add(b),
                        ExprNode::Sub => a.wrapping_sub(b),
                        ExprNode::Mul => a.wrapping_mul(b),
                        ExprNode::Div => a.checked_div(b).unwrap_or(0),
                        ExprNode::Rem => a.checked_rem_euclid(b).unwrap_or(0),
                        ExprNode::Xor => a ^ b,
                        ExprNode::Rand => {
                            if b <= 0 {
                                0
                            } else {
                                let gtid = (env.cta * env.block + env.tid) as u64;
                                rand_value(a, b, loops_hash(&env.loops), gtid)
                            }
                        }
                        _ => unreachable!("operands handled above"),
                    }
                }
            };
            stack[sp] = v;
            sp += 1;
        }
        self.base.wrapping_add(stack[0] as u64)
    }

    /// Checks that the postfix sequence is well formed (one value left, no underflow, fits
    /// the evaluation stack). The parser only builds valid expressions; this guards other
    /// producers.
    pub fn validate(&self) -> Result<(), String> {
        if self.lanes.is_some() {
            return Ok(());
        }
        if self.nodes.len() > MAX_EXPR_NODES {
            return Err(format!("address expression longer than {MAX_EXPR_NODES} nodes"));
        }
        let mut depth = 0i32;
        for n in &self.nodes {
            depth += match n {
                ExprNode::Const(_) | ExprNode::Var(_) => 1,
                _ => -1,
            };
            if depth < 1 {
                return Err("malformed address expression".into());
            }
            if depth as usize > MAX_EXPR_STACK {
                return Err(format!(
                    "address expression needs more than {MAX_EXPR_STACK} stack slots"
                ));
            }
        }
        if depth != 1 {
            return Err("malformed address expression".into());
        }
        Ok(())
    }
}

/// The instruction stream shared by every thread of a kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Program {
    pub items: Vec<Item>,
    pub exprs: Vec<AddrExpr>,
    /// Traced programs: the recorded PC of each item (event logs print it); empty otherwise.
    #[serde(skip)]
    pub pcs: Vec<u64>,
}

impl Program {
    /// Structural checks: address expressions in range and well formed, loops matched.
    pub fn validate(&self) -> Result<(), String> {
        let mut depth = 0usize;
        for (i, item) in self.items.iter().enumerate() {
            match *item {
                Item::Inst(inst) => {
                    if inst.op.is_memory() && inst.addr as usize >= self.exprs.len() {
                        return Err(format!("instruction {i}: address expression out of range"));
                    }
                }
                Item::LoopStart { end, .. } => {
                    depth += 1;
                    if depth > MAX_LOOP_DEPTH {
                        return Err(format!("loops nested deeper than {MAX_LOOP_DEPTH}"));
                    }
                    match self.items.get(end as usize) {
                        Some(Item::LoopEnd { start }) if *start as usize == i => {}
                        _ => return Err(format!("item {i}: loop start without matching end")),
                    }
                }
                Item::LoopEnd { .. } => depth = depth.saturating_sub(1),
            }
        }
        for e in &self.exprs {
            e.validate()?;
        }
        Ok(())
    }

    /// Warp instructions one warp executes (loops expanded).
    pub fn dynamic_instructions(&self) -> u64 {
        fn count(items: &[Item], mut i: usize, end: usize) -> u64 {
            let mut n = 0u64;
            while i < end {
                match items[i] {
                    Item::Inst(_) => {
                        n += 1;
                        i += 1;
                    }
                    Item::LoopStart { count: c, end: e } => {
                        n += c as u64 * count(items, i + 1, e as usize);
                        i = e as usize + 1;
                    }
                    Item::LoopEnd { .. } => i += 1,
                }
            }
            n
        }
        count(&self.items, 0, self.items.len())
    }
}

/// A global-memory buffer a kernel declares; its base is assigned by the loader.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Buffer {
    pub name: String,
    pub base: u64,
    pub bytes: u64,
}

/// A kernel launch: grid, CTA shape, per-CTA resources and the program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Kernel {
    pub name: String,
    /// CTAs in the grid.
    pub grid: u32,
    /// Threads per CTA.
    pub block: u32,
    /// Registers per thread.
    pub regs: u32,
    /// Shared memory bytes per CTA.
    pub shared_bytes: u32,
    pub buffers: Vec<Buffer>,
    pub program: Program,
    /// Kernels from traces: each CTA's warps run their own programs, handed out when the
    /// CTA launches, instead of `program`. `None` for kernels written in the kernel format.
    #[serde(skip)]
    pub per_cta: Option<PerCta>,
}

/// Per-CTA programs, handed out at CTA launch (kernels from traces: the trace is read as the
/// CTAs launch, so memory holds the resident CTAs, not the whole trace).
pub trait CtaPrograms: Send + Sync {
    /// The programs of CTA `cta`'s warps (index = warp within the CTA). Called once per CTA.
    fn take(&self, cta: u32) -> Vec<std::sync::Arc<Program>>;
    /// Warp instructions of the whole grid.
    fn warp_instructions(&self) -> u64;
}

/// A shared [`CtaPrograms`]; two kernels are equal only if they share the same source.
#[derive(Clone)]
pub struct PerCta(pub std::sync::Arc<dyn CtaPrograms>);

impl PartialEq for PerCta {
    fn eq(&self, o: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &o.0)
    }
}
impl Eq for PerCta {}
impl std::fmt::Debug for PerCta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PerCta({} warp instructions)", self.0.warp_instructions())
    }
}

impl Kernel {
    pub fn warps_per_cta(&self) -> u32 {
        self.block.div_ceil(32)
    }
    /// Warp instructions the whole grid executes.
    pub fn total_warp_instructions(&self) -> u64 {
        if let Some(p) = &self.per_cta {
            return p.0.warp_instructions();
        }
        self.program.dynamic_instructions() * self.warps_per_cta() as u64 * self.grid as u64
    }

    /// CTA `cta`'s per-warp programs, for kernels that have them (see [`Kernel::per_cta`]).
    pub fn cta_programs(&self, cta: u32) -> Option<Vec<std::sync::Arc<Program>>> {
        self.per_cta.as_ref().map(|p| p.0.take(cta))
    }

    /// Structural checks every producer's output must pass before simulation.
    pub fn validate(&self) -> Result<(), String> {
        if self.grid == 0 {
            return Err(format!("kernel `{}`: grid must have at least one CTA", self.name));
        }
        if self.block == 0 {
            return Err(format!(
                "kernel `{}`: block must have at least one thread",
                self.name
            ));
        }
        self.program.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_evaluation_matches_scalar_evaluation() {
        use ExprNode::*;
        // (4*tid + rand(7, 1000) * 128) % 4096 + 3 * (gwarp ^ loop0) / 2 - cta
        let e = AddrExpr {
            base: 0x1000,
            nodes: vec![
                Const(4),
                Var(super::Var::Tid),
                Mul,
                Const(7),
                Const(1000),
                Rand,
                Const(128),
                Mul,
                Add,
                Const(4096),
                Rem,
                Const(3),
                Var(super::Var::Gwarp),
                Var(super::Var::Loop(0)),
                Xor,
                Mul,
                Const(2),
                Div,
                Add,
                Var(super::Var::Cta),
                Sub,
            ],
            lanes: None,
        };
        e.validate().unwrap();
        let env = LaneEnv {
            tid: 64,
            cta: 3,
            block: 256,
            grid: 10,
            loops: [5, 1, 0, 0],
        };
        let mut stack = Box::new([[0; WARP_LANES]; MAX_EXPR_STACK]);
        let mut out = [0u64; WARP_LANES];
        e.eval_lanes(&env, 32, &mut stack, &mut out);
        for (lane, &v) in out.iter().enumerate() {
            let scalar = e.eval(&LaneEnv {
                tid: env.tid + lane as i64,
                ..env
            });
            assert_eq!(v, scalar, "lane {lane}");
        }
    }
}
