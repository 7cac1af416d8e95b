//! SIMT divergence: random structured divergent programs (random nesting of `if`/`else`,
//! per-lane loops and uniform loops, with random ALU, SFU, memory and barrier bodies, and
//! values: loads from a buffer with contents, integer ops, and conditions, trip counts and
//! addresses that read them) run on the machine under several schedulers, and every thread's
//! executed-instruction count must equal that of a simple reference interpreter that walks
//! the structured program one lane at a time, keeping each lane's register values. Plus
//! hand-checked cases: SIMD efficiency, memory instructions that access only through their
//! active lanes, and data-dependent addresses as the coalescer sees them. The same programs
//! with `break` / `break if COND` (conditions on loaded values) in their per-lane loops: each
//! lane's sequence of issued instructions must be the interpreter's walk of that lane.
//! `PROPTEST_CASES=N` runs more cases than the CI default.

use mascar::config::Config;
use mascar::sched::SchedulerKind;
use mascar::stats::RunStats;
use mascar::workload::inputs::{generate, Arg, ArgValue};
use mascar::workload::kernel_format::{parse_kernel, parse_kernel_file};
use mascar::workload::program::OpKind;
use mascar::workload::Kernel;
use proptest::prelude::*;

/// Value registers: `VREG0 ..= VREG0 + 3` carry values; the timing-only statements use r1..r4.
const VREG0: u8 = 10;
/// Elements of the data buffer `D` (i32 values in 0 .. 8).
const DATA_N: i64 = 256;

/// A per-lane integer `(tid*a + cta*c + Σ loopvar_k*b_k + Σ reg_j*k_j) % m`, evaluated by
/// the interpreter itself (not through the simulator's expression code), wrapping as the
/// format's arithmetic does.
#[derive(Clone, Debug)]
struct LaneExpr {
    a: i64,
    c: i64,
    /// One coefficient per enclosing loop, outermost first.
    b: Vec<i64>,
    /// Value registers (index from `VREG0`) and their coefficients.
    r: Vec<(usize, i64)>,
    m: i64,
}

impl LaneExpr {
    fn eval(&self, v: &Vars) -> i64 {
        let mut x = v
            .tid
            .wrapping_mul(self.a)
            .wrapping_add(v.cta.wrapping_mul(self.c));
        for (b, l) in self.b.iter().zip(&v.loops) {
            x = x.wrapping_add(b.wrapping_mul(*l));
        }
        for &(r, k) in &self.r {
            x = x.wrapping_add(v.regs[r].wrapping_mul(k));
        }
        x.rem_euclid(self.m)
    }
    fn render(&self, names: &[String]) -> String {
        let mut s = format!("(tid*{} + cta*{}", self.a, self.c);
        for (b, n) in self.b.iter().zip(names) {
            s.push_str(&format!(" + {n}*{b}"));
        }
        for (r, k) in &self.r {
            s.push_str(&format!(" + r{}*{k}", VREG0 as usize + r));
        }
        format!("{s}) % {}", self.m)
    }
}

/// An integer op on values, as the interpreter computes it.
#[derive(Clone, Copy, Debug)]
enum VOp {
    Add,
    Sub,
    Mul,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Min,
    Max,
    SetLt,
    SetNe,
    Mov,
}

impl VOp {
    const ALL: [VOp; 13] = [
        VOp::Add,
        VOp::Sub,
        VOp::Mul,
        VOp::Shl,
        VOp::Shr,
        VOp::And,
        VOp::Or,
        VOp::Xor,
        VOp::Min,
        VOp::Max,
        VOp::SetLt,
        VOp::SetNe,
        VOp::Mov,
    ];
    fn apply(self, a: i64, b: i64) -> i64 {
        match self {
            VOp::Add => a.wrapping_add(b),
            VOp::Sub => a.wrapping_sub(b),
            VOp::Mul => a.wrapping_mul(b),
            VOp::Shl => a.wrapping_shl((b & 63) as u32),
            VOp::Shr => a.wrapping_shr((b & 63) as u32),
            VOp::And => a & b,
            VOp::Or => a | b,
            VOp::Xor => a ^ b,
            VOp::Min => a.min(b),
            VOp::Max => a.max(b),
            VOp::SetLt => (a < b) as i64,
            VOp::SetNe => (a != b) as i64,
            VOp::Mov => a,
        }
    }
    fn mnemonic(self) -> &'static str {
        match self {
            VOp::Add => "add",
            VOp::Sub => "sub",
            VOp::Mul => "imul",
            VOp::Shl => "shl",
            VOp::Shr => "shr",
            VOp::And => "and",
            VOp::Or => "or",
            VOp::Xor => "xor",
            VOp::Min => "min",
            VOp::Max => "max",
            VOp::SetLt => "setp.lt",
            VOp::SetNe => "setp.ne",
            VOp::Mov => "mov",
        }
    }
}

/// The second source of a value op: a value register or a small constant.
#[derive(Clone, Copy, Debug)]
enum VSrc {
    Reg(usize),
    Const(i64),
}

#[derive(Clone, Copy, Debug)]
enum Cmp {
    Lt,
    Ge,
    Eq,
    Ne,
}

impl Cmp {
    fn text(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Ge => ">=",
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
        }
    }
}

#[derive(Clone, Debug)]
enum Stmt {
    Alu,
    Sfu,
    /// A load from `A`; with `Some(r)` its address also reads value register `r`.
    Load(Option<usize>),
    /// `ld.global rD, D[4*(EXPR) + past]`: a value from the data buffer (`past` = 1024 reads
    /// past its end: 0).
    VLoad {
        dst: usize,
        idx: LaneExpr,
        past: bool,
    },
    /// `OP rD, rA, B`: an integer op on values.
    VInt {
        op: VOp,
        dst: usize,
        a: usize,
        b: VSrc,
    },
    Store,
    Shared,
    Bar,
    If {
        e: LaneExpr,
        cmp: Cmp,
        t: i64,
        then: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
    },
    /// `loop NAME < EXPR {`
    LaneLoop {
        count: LaneExpr,
        body: Vec<Stmt>,
    },
    /// `loop NAME COUNT {`
    Loop {
        count: u32,
        body: Vec<Stmt>,
    },
    /// `break if EXPR CMP T`, or `break` (`None`): leaves the innermost (per-lane) loop.
    Break(Option<(LaneExpr, Cmp, i64)>),
}

/// Where a statement is, for `break`: outside any per-lane loop (or with a constant loop
/// innermost), directly in a per-lane loop's body, or in an `if`/`else` inside one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Brk {
    No,
    Loop,
    If,
}

/// The instruction classes the interpreter and the issue log are compared in.
fn class(op: OpKind) -> char {
    match op {
        OpKind::Alu(_) => 'a',
        OpKind::Sfu => 's',
        OpKind::LoadGlobal => 'l',
        OpKind::StoreGlobal => 'S',
        OpKind::LoadShared | OpKind::StoreShared => 'm',
        OpKind::Barrier => 'B',
        OpKind::Branch => 'b',
        OpKind::LoadTex | OpKind::LoadConst | OpKind::AtomGlobal => '?',
    }
}

/// Values one lane sees.
struct Vars<'d> {
    tid: i64,
    cta: i64,
    loops: Vec<i64>,
    /// The value registers.
    regs: [i64; 4],
    /// The data buffer's elements.
    data: &'d [i64],
    /// `break`s taken so far.
    breaks: u64,
}

/// Whether a comparison holds.
fn holds(cmp: Cmp, x: i64, t: i64) -> bool {
    match cmp {
        Cmp::Lt => x < t,
        Cmp::Ge => x >= t,
        Cmp::Eq => x == t,
        Cmp::Ne => x != t,
    }
}

/// The reference: instructions one lane executes, as the number of them.
fn lane_count(stmts: &[Stmt], v: &mut Vars) -> u64 {
    let mut seq = String::new();
    lane_walk(stmts, v, &mut seq);
    seq.len() as u64
}

/// The reference: the instructions one lane executes, in order, as [`class`] characters;
/// `true` when the lane left its innermost per-lane loop at a `break`. A branch is an
/// instruction of every lane that reaches it: the `if` branch, the jump over the `else` block
/// (lanes that ran the `then` block to its end), the per-lane loop's entry branch, its back
/// edge once per iteration the lane finishes, and a `break` (taken or not).
fn lane_walk(stmts: &[Stmt], v: &mut Vars, out: &mut String) -> bool {
    for s in stmts {
        match s {
            Stmt::Alu => out.push('a'),
            Stmt::Sfu => out.push('s'),
            Stmt::Load(_) => out.push('l'),
            Stmt::Store => out.push('S'),
            Stmt::Shared => out.push('m'),
            Stmt::Bar => out.push('B'),
            Stmt::VLoad { dst, idx, past } => {
                out.push('l');
                let i = idx.eval(v);
                v.regs[*dst] = if *past { 0 } else { v.data[i as usize] };
            }
            Stmt::VInt { op, dst, a, b } => {
                out.push('a');
                let b = match *b {
                    VSrc::Reg(r) => v.regs[r],
                    VSrc::Const(c) => c,
                };
                v.regs[*dst] = op.apply(v.regs[*a], b);
            }
            Stmt::If { e, cmp, t, then, els } => {
                out.push('b');
                if holds(*cmp, e.eval(v), *t) {
                    if lane_walk(then, v, out) {
                        return true;
                    }
                    if els.is_some() {
                        out.push('b');
                    }
                } else if let Some(e) = els {
                    if lane_walk(e, v, out) {
                        return true;
                    }
                }
            }
            Stmt::LaneLoop { count, body } => {
                out.push('b');
                for i in 0..count.eval(v) {
                    v.loops.push(i);
                    let broke = lane_walk(body, v, out);
                    v.loops.pop();
                    if broke {
                        break;
                    }
                    out.push('b');
                }
            }
            Stmt::Loop { count, body } => {
                for i in 0..*count {
                    v.loops.push(i as i64);
                    // A `break` never has a constant loop innermost.
                    let broke = lane_walk(body, v, out);
                    v.loops.pop();
                    assert!(!broke, "`break` in a constant loop");
                }
            }
            Stmt::Break(cond) => {
                out.push('b');
                if cond.as_ref().is_none_or(|(e, cmp, t)| holds(*cmp, e.eval(v), *t)) {
                    v.breaks += 1;
                    return true;
                }
            }
        }
    }
    false
}

/// A small deterministic generator (the property's input is its seed); with `breaks`, the
/// per-lane loops get `break`s (without, it draws what it drew before they existed).
struct Gen {
    x: u64,
    breaks: bool,
}

impl Gen {
    fn next(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        self.x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn expr(&mut self, loops: usize, m: i64) -> LaneExpr {
        LaneExpr {
            a: 1 + self.below(7) as i64,
            c: self.below(3) as i64,
            b: (0..loops).map(|_| self.below(4) as i64).collect(),
            r: (0..self.below(3))
                .map(|_| (self.below(4) as usize, 1 + self.below(3) as i64))
                .collect(),
            m,
        }
    }

    /// A value statement: a load from the data buffer or an integer op.
    fn value_stmt(&mut self, loops: usize) -> Stmt {
        let dst = self.below(4) as usize;
        if self.below(3) == 0 {
            let mut idx = self.expr(loops, DATA_N);
            // `4*(…) + 1024` must stay within MAX_EXPR_NODES.
            idx.r.truncate(1);
            return Stmt::VLoad {
                dst,
                idx,
                past: self.below(8) == 0,
            };
        }
        let op = VOp::ALL[self.below(VOp::ALL.len() as u64) as usize];
        let b = match op {
            VOp::Shl | VOp::Shr => VSrc::Const(self.below(4) as i64),
            _ if self.below(2) == 0 => VSrc::Const(self.below(9) as i64 - 2),
            _ => VSrc::Reg(self.below(4) as usize),
        };
        Stmt::VInt {
            op,
            dst,
            a: self.below(4) as usize,
            b,
        }
    }

    /// A block of 1..=4 statements at `divergent` divergent levels and `loops` loop levels;
    /// in an `if`/`else` inside a per-lane loop, sometimes ended by a bare `break`.
    fn block(&mut self, divergent: usize, loops: usize, budget: &mut u32, brk: Brk) -> Vec<Stmt> {
        let n = 1 + self.below(5);
        let mut b: Vec<Stmt> = (0..n).map(|_| self.stmt(divergent, loops, budget, brk)).collect();
        if self.breaks && brk == Brk::If && self.below(4) == 0 {
            b.push(Stmt::Break(None));
        }
        b
    }

    fn stmt(&mut self, divergent: usize, loops: usize, budget: &mut u32, brk: Brk) -> Stmt {
        if self.breaks && brk != Brk::No && self.below(4) == 0 {
            // Conditions on the lane, the loop counters and loaded values.
            let m = 2 + self.below(5) as i64;
            let cmp = [Cmp::Lt, Cmp::Ge, Cmp::Eq, Cmp::Ne][self.below(4) as usize];
            return Stmt::Break(Some((self.expr(loops, m), cmp, self.below(m as u64) as i64)));
        }
        let in_if = if brk == Brk::No { Brk::No } else { Brk::If };
        if self.below(4) == 0 {
            return self.value_stmt(loops);
        }
        let nest = *budget > 0;
        match self.below(if nest { 12 } else { 6 }) {
            0 | 1 => Stmt::Alu,
            2 => Stmt::Sfu,
            3 => Stmt::Load((self.below(2) == 0).then(|| self.below(4) as usize)),
            4 => Stmt::Store,
            5 if divergent == 0 && self.below(2) == 0 => Stmt::Bar,
            5 => Stmt::Shared,
            6..=8 if divergent < 4 => {
                *budget -= 1;
                let cmp = [Cmp::Lt, Cmp::Ge, Cmp::Eq, Cmp::Ne][self.below(4) as usize];
                let m = 2 + self.below(7) as i64;
                Stmt::If {
                    e: self.expr(loops, m),
                    cmp,
                    t: self.below(m as u64) as i64,
                    then: self.block(divergent + 1, loops, budget, in_if),
                    els: (self.below(2) == 0).then(|| self.block(divergent + 1, loops, budget, in_if)),
                }
            }
            9 | 10 if loops < 3 && divergent < 4 => {
                *budget -= 1;
                let m = 2 + self.below(4) as i64;
                Stmt::LaneLoop {
                    count: self.expr(loops, m),
                    body: self.block(divergent + 1, loops + 1, budget, Brk::Loop),
                }
            }
            _ if loops < 3 && nest => {
                *budget -= 1;
                Stmt::Loop {
                    count: [0, 1, 2, 2, 3][self.below(5) as usize],
                    body: self.block(divergent, loops + 1, budget, Brk::No),
                }
            }
            _ => Stmt::Alu,
        }
    }
}

/// The `.kern` text of a statement list; `names` are the enclosing loops' variables.
fn render(stmts: &[Stmt], names: &mut Vec<String>, g: &mut Gen, out: &mut String, depth: usize) {
    let ind = "  ".repeat(depth);
    for s in stmts {
        let r = |g: &mut Gen| 1 + g.below(4);
        let line = match s {
            Stmt::Alu => format!("add r{}, r{}, r{}", r(g), r(g), r(g)),
            Stmt::Sfu => format!("sfu r{}, r{}", r(g), r(g)),
            Stmt::Load(reg) => {
                let lv = names.last().map_or("0".to_string(), |n| format!("128*{n}"));
                let stride = [4, 8, 128][g.below(3) as usize];
                let rv = reg.map_or(String::new(), |x| format!(" + 128*r{}", VREG0 as usize + x));
                format!("ld.global r{}, A[({stride}*gtid + {lv}{rv}) % 65536]", r(g))
            }
            Stmt::VLoad { dst, idx, past } => format!(
                "ld.global r{}, D[4*({}){}]",
                VREG0 as usize + dst,
                idx.render(names),
                if *past { " + 1024" } else { "" }
            ),
            Stmt::VInt { op, dst, a, b } => {
                let v = |x: usize| format!("r{}", VREG0 as usize + x);
                match (op, b) {
                    (VOp::Mov, _) => format!("mov {}, {}", v(*dst), v(*a)),
                    (_, VSrc::Reg(b)) => format!("{} {}, {}, {}", op.mnemonic(), v(*dst), v(*a), v(*b)),
                    (_, VSrc::Const(c)) => format!("{} {}, {}, {c}", op.mnemonic(), v(*dst), v(*a)),
                }
            }
            Stmt::Store => format!("st.global A[4*gtid], r{}", r(g)),
            Stmt::Shared => {
                if g.below(2) == 0 {
                    format!("ld.shared r{}, [4*tid]", r(g))
                } else {
                    format!("st.shared [4*tid], r{}", r(g))
                }
            }
            Stmt::Bar => "bar".to_string(),
            Stmt::If { e, cmp, t, then, els } => {
                out.push_str(&format!("{ind}if {} {} {t} {{\n", e.render(names), cmp.text()));
                render(then, names, g, out, depth + 1);
                if let Some(e) = els {
                    out.push_str(&format!("{ind}}} else {{\n"));
                    render(e, names, g, out, depth + 1);
                }
                out.push_str(&format!("{ind}}}\n"));
                continue;
            }
            Stmt::LaneLoop { count, body } => {
                let name = format!("l{}", names.len());
                out.push_str(&format!("{ind}loop {name} < {} {{\n", count.render(names)));
                names.push(name);
                render(body, names, g, out, depth + 1);
                names.pop();
                out.push_str(&format!("{ind}}}\n"));
                continue;
            }
            Stmt::Loop { count, body } => {
                let name = format!("l{}", names.len());
                out.push_str(&format!("{ind}loop {name} {count} {{\n"));
                names.push(name);
                render(body, names, g, out, depth + 1);
                names.pop();
                out.push_str(&format!("{ind}}}\n"));
                continue;
            }
            Stmt::Break(None) => "break".to_string(),
            Stmt::Break(Some((e, cmp, t))) => format!("break if {} {} {t}", e.render(names), cmp.text()),
        };
        out.push_str(&format!("{ind}{line}\n"));
    }
}

/// The data buffer's contents: `uniform(n=DATA_N, lo=0, hi=8, seed)` from the input
/// generators, as the machine's buffer gets them.
fn data(seed: i64) -> Vec<i64> {
    let arg = |name: &str, v: i64| Arg {
        name: name.to_string(),
        value: ArgValue::Int(v),
    };
    let arrays = generate(
        "uniform",
        &[arg("n", DATA_N), arg("lo", 0), arg("hi", 8), arg("seed", seed)],
        None,
    )
    .unwrap_or_else(|e| panic!("{}", e.message));
    let a = &arrays.iter().find(|(n, _)| n == "values").expect("values").1;
    assert_eq!(a.elem_bytes, 4);
    a.data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
        .collect()
}

/// A random kernel: its source, its statements, its shape and its data seed. The value
/// registers start with a value (`mov rV, EXPR`), so every writer of theirs gives one. With
/// `breaks`, per-lane loops hold `break`s, and the kernel ends with one more per-lane loop.
fn random_kernel(seed: u64, breaks: bool) -> (String, Vec<Stmt>, u32, u32, i64) {
    let mut g = Gen { x: seed | 1, breaks };
    let mut budget = 3 + g.below(8) as u32;
    let mut body: Vec<Stmt> = (0..4)
        .map(|dst| Stmt::VLoad {
            dst,
            idx: LaneExpr {
                a: 1 + g.below(7) as i64,
                c: g.below(3) as i64,
                b: vec![],
                r: vec![],
                m: DATA_N,
            },
            past: false,
        })
        .collect();
    body.extend(g.block(0, 0, &mut budget, Brk::No));
    if breaks {
        let mut budget = 2 + g.below(4) as u32;
        let m = 3 + g.below(6) as i64;
        body.push(Stmt::LaneLoop {
            count: g.expr(0, m),
            body: g.block(1, 1, &mut budget, Brk::Loop),
        });
    }
    let grid = 1 + g.below(3) as u32;
    let block = [32, 48, 64, 96, 100][g.below(5) as usize];
    let data_seed = g.below(1000) as i64;
    let mut src = format!(
        "kernel div\ngrid {grid}\nblock {block}\nshared 4096\nbuffer A 1M\n\
         input In = uniform(n={DATA_N}, lo=0, hi=8, seed={data_seed})\nbuffer D from In.values\n"
    );
    render(&body, &mut vec![], &mut g, &mut src, 0);
    (src, body, grid, block, data_seed)
}

/// Runs `k` on one SM (so the issue log sees every warp) and returns the statistics and each
/// global thread's issued instructions it was active in, in issue order, as [`class`]es.
fn run_per_thread_seq(cfg: &Config, k: &Kernel) -> (RunStats, Vec<String>) {
    let mut gpu = mascar::engine::gpu(cfg).unwrap();
    gpu.sms[0].issue_log = Some(vec![]);
    let stats = gpu.run(k, None).unwrap_or_else(|e| panic!("{e}"));
    let mut seqs = vec![String::new(); (k.grid * k.block) as usize];
    for r in gpu.sms[0].issue_log.take().unwrap() {
        for lane in 0..32 {
            if r.mask >> lane & 1 == 1 {
                seqs[(r.first_thread + lane) as usize].push(class(r.op));
            }
        }
    }
    (stats, seqs)
}

/// Runs `k` on one SM (so the issue log sees every warp) and returns the statistics and each
/// global thread's count of issued instructions it was active in.
fn run_per_thread(cfg: &Config, k: &Kernel) -> (RunStats, Vec<u64>) {
    let mut gpu = mascar::engine::gpu(cfg).unwrap();
    gpu.sms[0].issue_log = Some(vec![]);
    let stats = gpu.run(k, None).unwrap_or_else(|e| panic!("{e}"));
    let mut counts = vec![0u64; (k.grid * k.block) as usize];
    for r in gpu.sms[0].issue_log.take().unwrap() {
        for lane in 0..32 {
            if r.mask >> lane & 1 == 1 {
                counts[(r.first_thread + lane) as usize] += 1;
            }
        }
    }
    (stats, counts)
}

fn one_sm(s: SchedulerKind) -> Config {
    Config {
        sms: 1,
        scheduler: s,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_lane_executes_what_the_interpreter_says(seed in any::<u64>(), sched in 0usize..4) {
        let (src, body, grid, block, data_seed) = random_kernel(seed, false);
        let data = data(data_seed);
        let k = parse_kernel(&src, "random.kern").unwrap_or_else(|e| panic!("{e}\n{src}"));
        let sched = [SchedulerKind::Lrr, SchedulerKind::Gto, SchedulerKind::Mas, SchedulerKind::Mascar][sched];
        let (stats, counts) = run_per_thread(&one_sm(sched), &k);
        for gtid in 0..grid * block {
            let mut v = Vars {
                tid: (gtid % block) as i64,
                cta: (gtid / block) as i64,
                loops: vec![],
                regs: [0; 4],
                data: &data,
                breaks: 0,
            };
            let want = lane_count(&body, &mut v);
            prop_assert_eq!(counts[gtid as usize], want, "thread {} under {:?}\n{}", gtid, sched, src);
        }
        prop_assert_eq!(stats.warp_instructions, k.total_warp_instructions(), "{}", src);
        prop_assert_eq!(stats.sm.thread_instructions, counts.iter().sum::<u64>());
        prop_assert_eq!(Some(stats.sm.thread_instructions), k.total_thread_instructions());
        let eff = if stats.warp_instructions == 0 {
            0.0
        } else {
            stats.sm.thread_instructions as f64 / (32.0 * stats.warp_instructions as f64)
        };
        prop_assert!((stats.simd_efficiency - eff).abs() < 1e-12);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// `break` / `break if` on lane indices, loop counters and loaded values, at any depth of
    /// `if`s inside nests of per-lane loops: the SIMT stack's execution gives every lane
    /// exactly the instruction sequence of the per-thread interpreter.
    #[test]
    fn breaks_give_each_lane_the_interpreters_instruction_sequence(seed in any::<u64>(), sched in 0usize..4) {
        let (src, body, grid, block, data_seed) = random_kernel(seed, true);
        let data = data(data_seed);
        let k = parse_kernel(&src, "random.kern").unwrap_or_else(|e| panic!("{e}\n{src}"));
        let sched = [SchedulerKind::Lrr, SchedulerKind::Gto, SchedulerKind::Mas, SchedulerKind::Mascar][sched];
        let (stats, seqs) = run_per_thread_seq(&one_sm(sched), &k);
        for gtid in 0..grid * block {
            let mut v = Vars {
                tid: (gtid % block) as i64,
                cta: (gtid / block) as i64,
                loops: vec![],
                regs: [0; 4],
                data: &data,
                breaks: 0,
            };
            let mut want = String::new();
            prop_assert!(!lane_walk(&body, &mut v, &mut want), "a `break` outside a loop");
            prop_assert_eq!(&seqs[gtid as usize], &want, "thread {} under {:?}\n{}", gtid, sched, src);
        }
        prop_assert_eq!(stats.warp_instructions, k.total_warp_instructions(), "{}", src);
        let thread: u64 = seqs.iter().map(|s| s.len() as u64).sum();
        prop_assert_eq!(stats.sm.thread_instructions, thread);
        prop_assert_eq!(Some(thread), k.total_thread_instructions());
    }
}

/// The `break` property is not vacuous: most of its kernels have lanes that leave a loop at a
/// `break`, conditional or bare, before its trip count.
#[test]
fn the_break_generator_takes_breaks() {
    let (mut cond, mut bare) = (0, 0);
    for seed in 0..64u64 {
        let (src, body, grid, block, data_seed) =
            random_kernel(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), true);
        parse_kernel(&src, "random.kern").unwrap_or_else(|e| panic!("{e}\n{src}"));
        let data = data(data_seed);
        let mut v = Vars {
            tid: 0,
            cta: 0,
            loops: vec![],
            regs: [0; 4],
            data: &data,
            breaks: 0,
        };
        for gtid in 0..grid * block {
            v.tid = (gtid % block) as i64;
            v.cta = (gtid / block) as i64;
            v.regs = [0; 4];
            lane_walk(&body, &mut v, &mut String::new());
        }
        if v.breaks > 0 {
            cond += 1;
            bare += src.lines().any(|l| l.trim() == "break") as u32;
        }
    }
    assert!(cond >= 40, "{cond} of 64 kernels take a `break`");
    assert!(bare >= 10, "{bare} of 64 kernels with a bare `break` take one");
}

/// A divergent `if` over a quarter of each warp: SIMD efficiency is exactly the active lanes
/// per warp instruction over 32.
#[test]
fn simd_efficiency_counts_active_lanes() {
    let k = parse_kernel(
        "kernel k\ngrid 4\nblock 64\nif lane < 8 {\n  add r1, r1\n  add r2, r2\n}\nadd r3, r3\n",
        "k.kern",
    )
    .unwrap();
    let s = mascar::engine::simulate(&one_sm(SchedulerKind::Lrr), &k, None).unwrap();
    // Per warp: the branch (32 lanes), two instructions of 8 lanes, one of 32.
    assert_eq!(s.warp_instructions, 8 * 4);
    assert_eq!(s.sm.thread_instructions, 8 * (32 + 8 + 8 + 32));
    assert!((s.simd_efficiency - 80.0 / 128.0).abs() < 1e-12);
    // Without divergence, only partial warps lower it: 48 threads are 1.5 warps of 2.
    let k = parse_kernel("kernel k\ngrid 1\nblock 48\nadd r1, r1\n", "k.kern").unwrap();
    let s = mascar::engine::simulate(&one_sm(SchedulerKind::Lrr), &k, None).unwrap();
    assert!((s.simd_efficiency - 0.75).abs() < 1e-12);
}

/// Memory instructions generate addresses only for their active lanes: a load of one line
/// per lane sends 8 line requests from a warp with 8 active lanes, not 32.
#[test]
fn masked_lanes_do_not_access_memory() {
    let src = |cond: &str| {
        format!("kernel k\ngrid 2\nblock 64\nbuffer A 1M\nif {cond} {{\n  ld.global r1, A[128*gtid]\n}}\n")
    };
    let run = |cond: &str| {
        let k = parse_kernel(&src(cond), "k.kern").unwrap();
        mascar::engine::simulate(&one_sm(SchedulerKind::Lrr), &k, None).unwrap()
    };
    let quarter = run("lane < 8");
    assert_eq!(quarter.sm.coalesced_requests, 4 * 8);
    assert_eq!(quarter.sm.global_loads, 4);
    let all = run("lane < 32");
    assert_eq!(all.sm.coalesced_requests, 4 * 32);
    let none = run("lane > 40");
    assert_eq!((none.sm.global_loads, none.sm.coalesced_requests), (0, 0));
}

/// Per-lane trip counts: a warp runs its loop as long as its longest lane, each lane only its
/// own iterations, and the loop counter is visible to addresses inside.
#[test]
fn per_lane_loops_run_to_the_longest_lane() {
    let k = parse_kernel(
        "kernel k\ngrid 1\nblock 32\nbuffer A 1M\nloop i < lane % 4 {\n  ld.global r1, A[4*gtid + 128*i]\n}\n",
        "k.kern",
    )
    .unwrap();
    let (s, counts) = run_per_thread(&one_sm(SchedulerKind::Gto), &k);
    // Entry branch, then 3 iterations of load + back edge.
    assert_eq!(s.warp_instructions, 1 + 3 * 2);
    for (t, &c) in counts.iter().enumerate() {
        assert_eq!(c, 1 + 2 * (t as u64 % 4), "thread {t}");
    }
    // Iteration i has the lanes with lane % 4 > i: 24, 16, 8 lanes, one line each.
    assert_eq!(s.sm.coalesced_requests, 3);
    assert_eq!(s.sm.global_loads, 3);
}

/// Addresses that read loaded values reach the coalescer: one warp loads `C[lane]` from a
/// `seq` input and then `X[4*C[lane]]`. With `step=1` the 32 lanes read 32 consecutive words
/// (one 128 B line); with `step=32` they are 128 B apart (32 lines). An index-only kernel
/// with the same shape is one line either way.
#[test]
fn data_dependent_addresses_reach_the_coalescer() {
    let run = |step: u32, addr: &str| {
        let src = format!(
            "kernel k\ngrid 1\nblock 32\ninput S = seq(n=32, step={step})\nbuffer C from S.values\n\
             buffer X 64K\nld.global r2, C[4*lane]\nld.global r3, X[{addr}]\n"
        );
        let k = parse_kernel(&src, "k.kern").unwrap_or_else(|e| panic!("{e}"));
        mascar::engine::simulate(&one_sm(SchedulerKind::Gto), &k, None).unwrap()
    };
    // The C load is one line; the X load as the data says.
    assert_eq!(run(1, "4*r2").sm.coalesced_requests, 1 + 1);
    assert_eq!(run(32, "4*r2").sm.coalesced_requests, 1 + 32);
    assert_eq!(run(32, "4*lane").sm.coalesced_requests, 1 + 1);
    // Each line is a miss of its own in a cold L1.
    let s = run(32, "4*r2");
    assert_eq!(s.sm.global_loads, 2);
    assert!(s.l1.misses >= 33, "{} misses", s.l1.misses);
}

/// `cvt.rzi.u32.f32` on floats loaded from an f32 file gives the index of an address, as
/// Parboil mri-gridding's `binning_kernel` does with `(unsigned int)(pt.kZ)`: floats
/// `l + 0.5` send the 32 lanes to 32 consecutive words (one 128 B line), floats `32·l + 0.9`
/// to 32 lines, and negative floats clamp to index 0 (one line).
#[test]
fn cvt_rzi_addresses_from_loaded_floats_reach_the_coalescer() {
    let dir = std::env::temp_dir().join(format!("mascar-divergence-cvt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str, f: &dyn Fn(usize) -> f32| {
        let bytes: Vec<u8> = (0..32).flat_map(|l| f(l).to_le_bytes()).collect();
        std::fs::write(dir.join(format!("{name}.bin")), bytes).unwrap();
        let src = format!(
            "kernel k\ngrid 1\nblock 32\ninput F = file(path=\"{name}.bin\", type=f32)\n\
             buffer P from F.values\nbuffer X 64K\nld.global r1, P[4*lane]\n\
             cvt.rzi.u32.f32 r2, r1\nld.global r3, X[4*r2]\n"
        );
        let k = parse_kernel_file(&src, &dir.join("k.kern")).unwrap_or_else(|e| panic!("{e}"));
        let s = mascar::engine::simulate(&one_sm(SchedulerKind::Gto), &k, None).unwrap();
        assert_eq!(s.warp_instructions, k.total_warp_instructions(), "{name}");
        assert_eq!(s.sm.global_loads, 2, "{name}");
        s.sm.coalesced_requests
    };
    // The P load is one line; the X load as the converted floats say.
    assert_eq!(run("near", &|l| l as f32 + 0.5), 1 + 1);
    assert_eq!(run("far", &|l| 32.0 * l as f32 + 0.9), 1 + 32);
    assert_eq!(run("negative", &|l| -(l as f32) - 0.5), 1 + 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A BFS-like kernel on a CSR graph from the `graph` generator: each thread whose frontier
/// mask is set walks its node's edge list (`loop e < no_of_edges`, the bound a loaded value)
/// and reads the cost of each neighbour (an address from a loaded value), as Rodinia's bfs
/// `Kernel` does. Every thread's instruction count, and the line requests the coalescer
/// makes, equal what the graph's arrays give by hand.
#[test]
fn bfs_like_kernel_follows_its_graph() {
    const NODES: usize = 256;
    const BLOCK: usize = 64;
    let src = format!(
        "kernel bfs-like\ngrid {}\nblock {BLOCK}\ninput G = graph(nodes={NODES}, degree=6, seed=7)\n\
         buffer nodes from G.nodes\nbuffer edges from G.edges\nbuffer mask from G.mask\n\
         buffer cost 4 * {NODES}\n\
         ld.global.1 r1, mask[gtid]\n\
         if r1 {{\n\
           ld.global r2, nodes[8*gtid]\n\
           ld.global r3, nodes[8*gtid + 4]\n\
           loop e < r3 {{\n\
             ld.global r4, edges[4*(r2 + e)]\n\
             ld.global r5, cost[4*r4]\n\
           }}\n\
         }}\n",
        NODES / BLOCK
    );
    let k = parse_kernel(&src, "bfs.kern").unwrap_or_else(|e| panic!("{e}"));
    // The arrays, read back as the kernel reads them.
    let arrays = generate(
        "graph",
        &[
            Arg {
                name: "nodes".into(),
                value: ArgValue::Int(NODES as i64),
            },
            Arg {
                name: "degree".into(),
                value: ArgValue::Int(6),
            },
            Arg {
                name: "seed".into(),
                value: ArgValue::Int(7),
            },
        ],
        None,
    )
    .unwrap_or_else(|e| panic!("{}", e.message));
    let get = |name: &str| &arrays.iter().find(|(n, _)| n == name).unwrap().1.data;
    let i32s = |name: &str| -> Vec<i64> {
        get(name)
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
            .collect()
    };
    let (nodes, edges, mask) = (i32s("nodes"), i32s("edges"), get("mask").to_vec());
    assert!(
        mask.iter().filter(|&&m| m != 0).count() > 1,
        "a frontier of more than one node"
    );
    let start = |n: usize| nodes[2 * n] as usize;
    let degree = |n: usize| nodes[2 * n + 1] as usize;
    // Per thread: mask load, branch; in the frontier: two loads, loop entry, and per edge
    // two loads and the back edge.
    let want: Vec<u64> = (0..NODES)
        .map(|n| 2 + if mask[n] != 0 { 3 + 3 * degree(n) as u64 } else { 0 })
        .collect();
    let (stats, counts) = run_per_thread(&one_sm(SchedulerKind::Mascar), &k);
    assert_eq!(counts, want);
    // Line requests (128 B lines; buffers are 256 B aligned, so a line is offset / 128).
    let lines = |offsets: &mut dyn Iterator<Item = usize>| {
        let mut v: Vec<usize> = offsets.map(|o| o / 128).collect();
        v.sort();
        v.dedup();
        v.len() as u64
    };
    let mut requests = 0;
    for w in 0..NODES / 32 {
        let lanes: Vec<usize> = (32 * w..32 * w + 32).collect();
        requests += lines(&mut lanes.iter().copied());
        let front: Vec<usize> = lanes.iter().copied().filter(|&n| mask[n] != 0).collect();
        if front.is_empty() {
            continue;
        }
        requests += 2 * lines(&mut front.iter().map(|&n| 8 * n));
        let longest = front.iter().map(|&n| degree(n)).max().unwrap();
        for e in 0..longest {
            let active: Vec<usize> = front.iter().copied().filter(|&n| e < degree(n)).collect();
            requests += lines(&mut active.iter().map(|&n| 4 * (start(n) + e)));
            requests += lines(&mut active.iter().map(|&n| 4 * edges[start(n) + e] as usize));
        }
    }
    assert_eq!(stats.sm.coalesced_requests, requests);
    assert_eq!(stats.warp_instructions, k.total_warp_instructions());
}
