//! SIMT divergence: random structured divergent programs (random nesting of `if`/`else`,
//! per-lane loops and uniform loops, with random ALU, SFU, memory and barrier bodies) run on
//! the machine under several schedulers, and every thread's executed-instruction count must
//! equal that of a simple reference interpreter that walks the structured program one lane
//! at a time. Plus hand-checked cases: SIMD efficiency, and memory instructions that access
//! only through their active lanes.
//! `PROPTEST_CASES=N` runs more cases than the CI default.

use mascar::config::Config;
use mascar::sched::SchedulerKind;
use mascar::stats::RunStats;
use mascar::workload::kernel_format::parse_kernel;
use mascar::workload::Kernel;
use proptest::prelude::*;

/// A per-lane integer `(tid*a + cta*c + Σ loopvar_k*b_k) % m`, evaluated by the interpreter
/// itself (not through the simulator's expression code).
#[derive(Clone, Debug)]
struct LaneExpr {
    a: i64,
    c: i64,
    /// One coefficient per enclosing loop, outermost first.
    b: Vec<i64>,
    m: i64,
}

impl LaneExpr {
    fn eval(&self, v: &Vars) -> i64 {
        let mut x = v.tid * self.a + v.cta * self.c;
        for (b, l) in self.b.iter().zip(&v.loops) {
            x += b * l;
        }
        x.rem_euclid(self.m)
    }
    fn render(&self, names: &[String]) -> String {
        let mut s = format!("(tid*{} + cta*{}", self.a, self.c);
        for (b, n) in self.b.iter().zip(names) {
            s.push_str(&format!(" + {n}*{b}"));
        }
        format!("{s}) % {}", self.m)
    }
}

#[derive(Clone, Copy, Debug)]
enum Cmp {
    Lt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug)]
enum Stmt {
    Alu,
    Sfu,
    Load,
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
}

/// Values one lane sees.
struct Vars {
    tid: i64,
    cta: i64,
    loops: Vec<i64>,
}

/// The reference: instructions one lane executes. A branch is an instruction of every lane
/// that reaches it: the `if` branch, the jump over the `else` block (lanes that ran the
/// `then` block), the per-lane loop's entry branch and its back edge once per iteration.
fn lane_count(stmts: &[Stmt], v: &mut Vars) -> u64 {
    let mut n = 0;
    for s in stmts {
        match s {
            Stmt::Alu | Stmt::Sfu | Stmt::Load | Stmt::Store | Stmt::Shared | Stmt::Bar => n += 1,
            Stmt::If { e, cmp, t, then, els } => {
                n += 1;
                let x = e.eval(v);
                let taken = match cmp {
                    Cmp::Lt => x < *t,
                    Cmp::Ge => x >= *t,
                    Cmp::Eq => x == *t,
                    Cmp::Ne => x != *t,
                };
                if taken {
                    n += lane_count(then, v);
                    n += els.is_some() as u64;
                } else if let Some(e) = els {
                    n += lane_count(e, v);
                }
            }
            Stmt::LaneLoop { count, body } => {
                n += 1;
                for i in 0..count.eval(v) {
                    v.loops.push(i);
                    n += lane_count(body, v) + 1;
                    v.loops.pop();
                }
            }
            Stmt::Loop { count, body } => {
                for i in 0..*count {
                    v.loops.push(i as i64);
                    n += lane_count(body, v);
                    v.loops.pop();
                }
            }
        }
    }
    n
}

/// A small deterministic generator (the property's input is its seed).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn expr(&mut self, loops: usize, m: i64) -> LaneExpr {
        LaneExpr {
            a: 1 + self.below(7) as i64,
            c: self.below(3) as i64,
            b: (0..loops).map(|_| self.below(4) as i64).collect(),
            m,
        }
    }

    /// A block of 1..=4 statements at `divergent` divergent levels and `loops` loop levels.
    fn block(&mut self, divergent: usize, loops: usize, budget: &mut u32) -> Vec<Stmt> {
        let n = 1 + self.below(5);
        (0..n).map(|_| self.stmt(divergent, loops, budget)).collect()
    }

    fn stmt(&mut self, divergent: usize, loops: usize, budget: &mut u32) -> Stmt {
        let nest = *budget > 0;
        match self.below(if nest { 12 } else { 6 }) {
            0 | 1 => Stmt::Alu,
            2 => Stmt::Sfu,
            3 => Stmt::Load,
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
                    then: self.block(divergent + 1, loops, budget),
                    els: (self.below(2) == 0).then(|| self.block(divergent + 1, loops, budget)),
                }
            }
            9 | 10 if loops < 3 && divergent < 4 => {
                *budget -= 1;
                let m = 2 + self.below(4) as i64;
                Stmt::LaneLoop {
                    count: self.expr(loops, m),
                    body: self.block(divergent + 1, loops + 1, budget),
                }
            }
            _ if loops < 3 && nest => {
                *budget -= 1;
                Stmt::Loop {
                    count: [0, 1, 2, 2, 3][self.below(5) as usize],
                    body: self.block(divergent, loops + 1, budget),
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
            Stmt::Load => {
                let lv = names.last().map_or("0".to_string(), |n| format!("128*{n}"));
                let stride = [4, 8, 128][g.below(3) as usize];
                format!("ld.global r{}, A[({stride}*gtid + {lv}) % 65536]", r(g))
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
                let op = match cmp {
                    Cmp::Lt => "<",
                    Cmp::Ge => ">=",
                    Cmp::Eq => "==",
                    Cmp::Ne => "!=",
                };
                out.push_str(&format!("{ind}if {} {op} {t} {{\n", e.render(names)));
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
        };
        out.push_str(&format!("{ind}{line}\n"));
    }
}

/// A random kernel: its source, its statements, and its shape.
fn random_kernel(seed: u64) -> (String, Vec<Stmt>, u32, u32) {
    let mut g = Gen(seed | 1);
    let mut budget = 3 + g.below(8) as u32;
    let body = g.block(0, 0, &mut budget);
    let grid = 1 + g.below(3) as u32;
    let block = [32, 48, 64, 96, 100][g.below(5) as usize];
    let mut src = format!("kernel div\ngrid {grid}\nblock {block}\nshared 4096\nbuffer A 1M\n");
    render(&body, &mut vec![], &mut g, &mut src, 0);
    (src, body, grid, block)
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
        let (src, body, grid, block) = random_kernel(seed);
        let k = parse_kernel(&src, "random.kern").unwrap_or_else(|e| panic!("{e}\n{src}"));
        let sched = [SchedulerKind::Lrr, SchedulerKind::Gto, SchedulerKind::Mas, SchedulerKind::Mascar][sched];
        let (stats, counts) = run_per_thread(&one_sm(sched), &k);
        for gtid in 0..grid * block {
            let mut v = Vars { tid: (gtid % block) as i64, cta: (gtid / block) as i64, loops: vec![] };
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
