//! Input-data generators for `input NAME = GEN(key=value, ...)` in the kernel format (issue 16 §1).
//!
//! Each generator is deterministic from its arguments (a `seed` where random) and returns named
//! arrays of little-endian elements; `buffer B from NAME.ARRAY` gives a buffer those contents.
//! docs/workloads-inputs.md lists every generator, its arguments and ranges, its arrays and the
//! source each follows (Rodinia's bfs graphgen, Parboil 2.5's spmv JDS and mri-gridding binning).

use std::path::Path;
use std::sync::Arc;

/// One generated array: little-endian elements of `elem_bytes` bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub elem_bytes: u32,
    pub data: Arc<[u8]>,
}

impl Array {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len() / self.elem_bytes as usize
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// An argument's value as written: an integer constant, a bare word or a double-quoted string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgValue {
    Int(i64),
    Word(String),
    Str(String),
}

/// One `key=value` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    pub name: String,
    pub value: ArgValue,
}

/// A generator error; `arg` names the argument at fault (None = the call as a whole).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    pub arg: Option<String>,
    pub message: String,
}

/// All arrays of one input together may not exceed this, so a typo (`nodes=64M`) cannot
/// allocate gigabytes. Rodinia's largest bfs graph (1 M nodes, degree 6) needs about 45 MiB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The generators, for error messages and docs.
pub const GENERATORS: &[&str] = &[
    "graph",
    "sparse",
    "perm",
    "uniform",
    "seq",
    "file",
    "suffix_tree",
    "kspace",
    "fem2d",
    "particlefilter",
    "circles",
    "lavamd_boxes",
    "cutcp",
    "tpacf_bins",
];

/// The generated inputs kept for reuse, at most this many bytes in all: parsing a kernel
/// again (each `kernel_at`, every test that takes `b.kernel()`) would otherwise rebuild its
/// inputs each time (mummer's suffix tree is most of a parse). One input is at most
/// [`MAX_INPUT_BYTES`], so it always fits.
const MEMO_BYTES: u64 = 512 << 20;
const _: () = assert!(MAX_INPUT_BYTES <= MEMO_BYTES);

/// Generated inputs by generator and arguments. Every generator but `file` is a function of
/// its arguments, so a result can be handed out again; the arrays are shared (`Arc`), not
/// copied. Past [`MEMO_BYTES`] the memo is emptied rather than grown.
#[derive(Default)]
struct Memo {
    bytes: u64,
    entries: std::collections::HashMap<String, Vec<(String, Array)>>,
}

static MEMO: std::sync::LazyLock<std::sync::Mutex<Memo>> = std::sync::LazyLock::new(Default::default);

/// Runs generator `generator` with `args`; `dir` is the .kern file's directory (None for built-in
/// kernels, which cannot read files). Returns the named arrays in a fixed order.
pub fn generate(
    generator: &str,
    args: &[Arg],
    dir: Option<&Path>,
) -> Result<Vec<(String, Array)>, InputError> {
    if generator == "file" {
        // A file's contents may change between two parses.
        return generate_uncached(generator, args, dir);
    }
    let key = format!("{generator}{args:?}");
    if let Some(hit) = MEMO.lock().ok().and_then(|m| m.entries.get(&key).cloned()) {
        return Ok(hit);
    }
    let arrays = generate_uncached(generator, args, dir)?;
    let bytes: u64 = arrays.iter().map(|(_, a)| a.data.len() as u64).sum();
    if let Ok(mut memo) = MEMO.lock() {
        if memo.bytes + bytes > MEMO_BYTES {
            *memo = Memo::default();
        }
        memo.bytes += bytes;
        memo.entries.insert(key, arrays.clone());
    }
    Ok(arrays)
}

fn generate_uncached(
    generator: &str,
    args: &[Arg],
    dir: Option<&Path>,
) -> Result<Vec<(String, Array)>, InputError> {
    match generator {
        "graph" => graph(&Params::new(
            "graph",
            args,
            &["nodes", "degree", "dist", "seed", "source", "launch"],
        )?),
        "sparse" => sparse(&Params::new(
            "sparse",
            args,
            &["rows", "cols", "nnz_per_row", "dist", "seed", "band", "form"],
        )?),
        "perm" => perm(&Params::new("perm", args, &["n", "seed"])?),
        "uniform" => uniform(&Params::new(
            "uniform",
            args,
            &["n", "lo", "hi", "seed", "bytes"],
        )?),
        "seq" => seq(&Params::new("seq", args, &["n", "start", "step"])?),
        "file" => file(&Params::new("file", args, &["path", "type"])?, dir),
        "suffix_tree" => suffix_tree(&Params::new(
            "suffix_tree",
            args,
            &["len", "reads", "read_len", "mismatch", "seed"],
        )?),
        "kspace" => kspace(&Params::new(
            "kspace",
            args,
            &["samples", "grid", "readout", "binsize", "seed"],
        )?),
        "fem2d" => fem2d(&Params::new(
            "fem2d",
            args,
            &["elements", "order", "numbering", "seed", "form"],
        )?),
        "particlefilter" => particlefilter(&Params::new(
            "particlefilter",
            args,
            &["np", "x", "y", "z", "frame", "seed"],
        )?),
        "circles" => circles(&Params::new(
            "circles",
            args,
            &["points", "circles", "min_radius", "step"],
        )?),
        "lavamd_boxes" => lavamd_boxes(&Params::new("lavamd_boxes", args, &["boxes1d", "per_box"])?),
        "cutcp" => cutcp(&Params::new(
            "cutcp",
            args,
            &["side", "atoms", "zregion", "seed"],
        )?),
        "tpacf_bins" => tpacf_bins(&Params::new(
            "tpacf_bins",
            args,
            &["bins", "per_dec", "min_arcmin"],
        )?),
        _ => Err(InputError {
            arg: None,
            message: format!(
                "unknown input generator `{generator}`; the generators are {}",
                GENERATORS.join(", ")
            ),
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments

fn err(arg: Option<&str>, message: String) -> InputError {
    InputError {
        arg: arg.map(str::to_string),
        message,
    }
}

fn show(v: &ArgValue) -> String {
    match v {
        ArgValue::Int(i) => i.to_string(),
        ArgValue::Word(w) => w.clone(),
        ArgValue::Str(s) => format!("\"{s}\""),
    }
}

/// The arguments of one call, checked for unknown and duplicate names.
struct Params<'a> {
    generator: &'static str,
    args: &'a [Arg],
}

impl<'a> Params<'a> {
    fn new(generator: &'static str, args: &'a [Arg], known: &[&str]) -> Result<Self, InputError> {
        for (i, a) in args.iter().enumerate() {
            if !known.contains(&a.name.as_str()) {
                return Err(err(
                    Some(&a.name),
                    format!(
                        "{generator}() has no argument `{}`; its arguments are {}",
                        a.name,
                        known.join(", ")
                    ),
                ));
            }
            if args[..i].iter().any(|b| b.name == a.name) {
                return Err(err(
                    Some(&a.name),
                    format!("argument `{}` is given twice", a.name),
                ));
            }
        }
        Ok(Params { generator, args })
    }

    fn get(&self, name: &str) -> Option<&'a ArgValue> {
        self.args.iter().find(|a| a.name == name).map(|a| &a.value)
    }

    fn given(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// An integer in `lo..=hi`; `default` when absent (None = required).
    fn int(&self, name: &str, lo: i64, hi: i64, default: Option<i64>) -> Result<i64, InputError> {
        let range = format!("{lo} ..= {hi}");
        match self.get(name) {
            None => default.ok_or_else(|| {
                err(
                    None,
                    format!("{}() needs the argument `{name}` ({range})", self.generator),
                )
            }),
            Some(ArgValue::Int(v)) if (lo..=hi).contains(v) => Ok(*v),
            Some(ArgValue::Int(v)) => Err(err(
                Some(name),
                format!("`{name}={v}` is out of range: {name} must be {range}"),
            )),
            Some(v) => Err(err(
                Some(name),
                format!("`{name}` must be an integer ({range}), not `{}`", show(v)),
            )),
        }
    }

    /// A seed: any integer.
    fn seed(&self) -> Result<i64, InputError> {
        self.int("seed", i64::MIN, i64::MAX, None)
    }

    /// A bare word among `choices`; `default` when absent.
    fn word(
        &self,
        name: &str,
        choices: &[&'static str],
        default: Option<&'static str>,
    ) -> Result<&'static str, InputError> {
        let bad = |v: &ArgValue| {
            err(
                Some(name),
                format!(
                    "`{name}={}` is not valid: {name} must be one of {}",
                    show(v),
                    choices.join(", ")
                ),
            )
        };
        match self.get(name) {
            None => default.ok_or_else(|| {
                err(
                    None,
                    format!(
                        "{}() needs the argument `{name}` (one of {})",
                        self.generator,
                        choices.join(", ")
                    ),
                )
            }),
            Some(v @ (ArgValue::Word(w) | ArgValue::Str(w))) => {
                choices.iter().copied().find(|c| c == w).ok_or_else(|| bad(v))
            }
            Some(v) => Err(bad(v)),
        }
    }

    fn string(&self, name: &str) -> Result<&'a str, InputError> {
        match self.get(name) {
            None => Err(err(
                None,
                format!(
                    "{}() needs the argument `{name}` (a quoted string)",
                    self.generator
                ),
            )),
            Some(ArgValue::Str(s) | ArgValue::Word(s)) => Ok(s),
            Some(v) => Err(err(
                Some(name),
                format!("`{name}` must be a quoted string, not `{}`", show(v)),
            )),
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// The size cap, checked before allocating.
fn check_cap(arg: &str, what: &str, bytes: u64) -> Result<(), InputError> {
    if bytes > MAX_INPUT_BYTES {
        return Err(err(
            Some(arg),
            format!(
                "{what} would take {}; an input is capped at {}",
                mib(bytes),
                mib(MAX_INPUT_BYTES)
            ),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Arrays

/// Little-endian bytes of `v`, `N` bytes an element.
fn le_array<T: Copy, const N: usize>(v: &[T], to_le: impl Fn(T) -> [u8; N]) -> Array {
    Array {
        elem_bytes: N as u32,
        data: v.iter().flat_map(|&x| to_le(x)).collect(),
    }
}

fn i32s(v: &[i32]) -> Array {
    le_array(v, i32::to_le_bytes)
}

fn f32s(v: &[f32]) -> Array {
    le_array(v, f32::to_le_bytes)
}

fn f64s(v: &[f64]) -> Array {
    le_array(v, f64::to_le_bytes)
}

fn u8s(v: Vec<u8>) -> Array {
    Array {
        elem_bytes: 1,
        data: v.into(),
    }
}

fn named(v: Vec<(&str, Array)>) -> Vec<(String, Array)> {
    v.into_iter().map(|(n, a)| (n.to_string(), a)).collect()
}

// ---------------------------------------------------------------------------------------------
// Random numbers: xoshiro256** seeded through SplitMix64 (Blackman & Vigna), so the arrays are
// the same on every platform and release.

struct Rng([u64; 4]);

impl Rng {
    /// `stream` separates generators, so perm(seed=1) and uniform(seed=1) are unrelated.
    fn new(seed: i64, stream: u64) -> Self {
        let mut x = (seed as u64) ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng([next(), next(), next(), next()])
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let out = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// Uniform in `0..n` (n > 0), unbiased (Lemire's multiply-and-reject).
    fn below(&mut self, n: u64) -> u64 {
        let mut m = self.next_u64() as u128 * n as u128;
        if (m as u64) < n {
            let t = n.wrapping_neg() % n;
            while (m as u64) < t {
                m = self.next_u64() as u128 * n as u128;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1], exactly representable in f32: matrix values.
    fn value(&mut self) -> f32 {
        ((self.next_u64() >> 40) + 1) as f32 / (1u32 << 24) as f32
    }

    /// A random permutation of 0..n (Fisher-Yates).
    fn permutation(&mut self, n: usize) -> Vec<u32> {
        let mut p: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64 + 1) as usize;
            p.swap(i, j);
        }
        p
    }
}

/// Power-law ("dist=powerlaw") weights: the item of rank r (0-based) has weight
/// (r+1)^-(1/(GAMMA-1)), so the number of draws an item receives has a tail P(k) ~ k^-GAMMA
/// (Chung-Lu / Zipf). Ranks are assigned to items through a random permutation, so heavy items are
/// scattered over the index space rather than packed at index 0.
const GAMMA: f64 = 2.5;

struct PowerLaw {
    /// Cumulative weights by rank.
    cdf: Vec<f64>,
    /// rank -> item
    item: Vec<u32>,
}

impl PowerLaw {
    fn weight(rank: usize) -> f64 {
        (rank as f64 + 1.0).powf(-1.0 / (GAMMA - 1.0))
    }

    fn new(n: usize, rng: &mut Rng) -> Self {
        let mut acc = 0.0;
        let cdf = (0..n)
            .map(|r| {
                acc += Self::weight(r);
                acc
            })
            .collect();
        PowerLaw {
            cdf,
            item: rng.permutation(n),
        }
    }

    fn total(&self) -> f64 {
        *self.cdf.last().unwrap_or(&0.0)
    }

    fn sample(&self, rng: &mut Rng) -> u32 {
        let u = rng.unit() * self.total();
        let r = self.cdf.partition_point(|&c| c <= u).min(self.cdf.len() - 1);
        self.item[r]
    }
}

// ---------------------------------------------------------------------------------------------
// graph: Rodinia 3.1 data/bfs/inputGen/graphgen.cpp (main) for the graph, Rodinia cuda/bfs/bfs.cu
// (BFSGraph) and kernel.cu (Kernel) for the arrays the kernel reads.

const MAX_NODES: i64 = 1 << 24;
const MAX_DEGREE: i64 = 1024;

fn graph(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let nodes = p.int("nodes", 1, MAX_NODES, None)?;
    let degree = p.int("degree", 1, MAX_DEGREE, None)?;
    let dist = p.word("dist", &["uniform", "powerlaw"], Some("uniform"))?;
    let seed = p.seed()?;
    let source = p.int("source", 0, nodes - 1, Some(0))? as usize;
    let n = nodes as usize;

    // graphgen: each node starts rand() % 3 + 2 edges (MIN_EDGES 2 ..= MAX_INIT_EDGES 4), each
    // stored in both directions, so the average degree is 6. Here a node starts k edges with k
    // uniform in degree/2 ± 1 (even degree) or in (degree-1)/2 ..= (degree+1)/2 (odd).
    let d = degree as u64;
    let (kmin, kmax) = if d.is_multiple_of(2) {
        (d / 2 - 1, d / 2 + 1)
    } else {
        (d / 2, d.div_ceil(2))
    };
    // Worst case: every node starts kmax edges; edges + the (start, dest) pairs + per-node arrays.
    let max_pairs = nodes as u64 * kmax;
    check_cap(
        "nodes",
        &format!("graph(nodes={nodes}, degree={degree})"),
        max_pairs * (2 * 4 + 8) + nodes as u64 * (4 + 8 + 4 + 4 + 3 + 4),
    )?;

    let mut rng = Rng::new(seed, 1);
    let power = (dist == "powerlaw").then(|| PowerLaw::new(n, &mut rng));
    // graphgen's edge i -> dest, in generation order.
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity((nodes as u64 * d / 2 + 1) as usize);
    for i in 0..n as u32 {
        let k = kmin + rng.below(kmax - kmin + 1);
        for _ in 0..k {
            // Uniform: graphgen's randNode (uniform 0 ..= numNodes-1). Power-law: the
            // destination is drawn by weight, which makes hubs.
            let dest = match &power {
                None => rng.below(nodes as u64) as u32,
                Some(pl) => pl.sample(&mut rng),
            };
            pairs.push((i, dest));
        }
    }

    // CSR in graphgen's order: pushing dest onto i's list, then i onto dest's list (so self
    // loops appear twice and duplicate edges stay, as in graphgen).
    let mut offsets = vec![0i32; n + 1];
    for &(a, b) in &pairs {
        offsets[a as usize + 1] += 1;
        offsets[b as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill: Vec<i32> = offsets[..n].to_vec();
    let mut edges = vec![0i32; pairs.len() * 2];
    for &(a, b) in &pairs {
        edges[fill[a as usize] as usize] = b as i32;
        fill[a as usize] += 1;
        edges[fill[b as usize] as usize] = a as i32;
        fill[b as usize] += 1;
    }
    drop(pairs);

    // bfs.cu's struct Node {int starting; int no_of_edges;}, two i32 per node.
    let mut node_pairs = Vec::with_capacity(2 * n);
    for i in 0..n {
        node_pairs.push(offsets[i]);
        node_pairs.push(offsets[i + 1] - offsets[i]);
    }

    // BFS levels from `source` (bfs.cu ignores the source in the file and uses 0).
    let mut level = vec![-1i32; n];
    let mut queue: Vec<u32> = Vec::with_capacity(n);
    level[source] = 0;
    queue.push(source as u32);
    let mut head = 0;
    let mut per_level: Vec<u32> = vec![1];
    while head < queue.len() {
        let v = queue[head] as usize;
        head += 1;
        let next = level[v] + 1;
        for &w in &edges[offsets[v] as usize..offsets[v + 1] as usize] {
            let w = w as usize;
            if level[w] < 0 {
                level[w] = next;
                queue.push(w as u32);
                if per_level.len() <= next as usize {
                    per_level.push(0);
                }
                per_level[next as usize] += 1;
            }
        }
    }
    // bfs.cu's host loop launches Kernel then Kernel2 once per level (`do { … } while (stop)`).
    // `launch = K` gives the memory state at Kernel's launch K; without it, the launch whose
    // frontier is largest (the first such level on ties). At Kernel launch K: cost = level for
    // nodes reached at or before K, mask = level K's nodes, visited = nodes reached at or
    // before K, updating mask all false (the previous Kernel2 cleared it). Kernel2 of the same
    // iteration finds the updating mask Kernel set: level K + 1's nodes (`updating_next`).
    // Past the last level the frontier is empty: the launch the host would not make.
    let largest = per_level
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
        .map_or(0, |(l, _)| l as i64);
    let big = p.int("launch", 0, nodes, Some(largest))? as i32;
    let frontier = per_level.get(big as usize).copied().unwrap_or(0);
    let cost: Vec<i32> = level.iter().map(|&l| if l <= big { l } else { -1 }).collect();
    let mask: Vec<u8> = level.iter().map(|&l| (l == big) as u8).collect();
    let visited: Vec<u8> = level.iter().map(|&l| (l >= 0 && l <= big) as u8).collect();

    Ok(named(vec![
        ("offsets", i32s(&offsets)),
        ("edges", i32s(&edges)),
        ("nodes", i32s(&node_pairs)),
        ("cost", i32s(&cost)),
        ("level", i32s(&level)),
        ("mask", u8s(mask)),
        ("updating_mask", u8s(vec![0; n])),
        (
            "updating_next",
            u8s(level.iter().map(|&l| (l == big + 1) as u8).collect()),
        ),
        ("visited", u8s(visited)),
        ("frontier", i32s(&[big, frontier as i32])),
        ("levels", i32s(&[per_level.len() as i32])),
    ]))
}

// ---------------------------------------------------------------------------------------------
// sparse: a nonzero pattern in CSR, ELL and Parboil 2.5's JDS (benchmarks/spmv/common_src/
// convert-dataset/convert_dataset.c, coo_to_jds, as called by src/cuda/main.cu).

/// Parboil's spmv `cuda` passes warp_size (`pad`) 32, pad_rows 1, pack_size 1 to coo_to_jds.
const JDS_WARP: usize = 32;

/// Which of the three forms a `sparse`/`fem2d` call builds (`form=all|csr|ell|jds`).
#[derive(Clone, Copy)]
struct Forms {
    csr: bool,
    ell: bool,
    jds: bool,
}

impl Forms {
    fn from_params(p: &Params) -> Result<(&'static str, Forms), InputError> {
        let form = p.word("form", &["all", "csr", "ell", "jds"], Some("all"))?;
        Ok((
            form,
            Forms {
                csr: matches!(form, "all" | "csr"),
                ell: matches!(form, "all" | "ell"),
                jds: matches!(form, "all" | "jds"),
            },
        ))
    }
}

/// A matrix's row lengths with the JDS row order, checked against the input cap before any form
/// is built; `build` then writes the forms from the CSR pattern (shared by `sparse` and `fem2d`).
struct SparseForms {
    forms: Forms,
    rows: usize,
    rows_p: usize,
    ell_width: usize,
    len: Vec<usize>,
    order: Vec<u32>,
    sh_zcnt: Vec<i32>,
    jds_total: u64,
}

impl SparseForms {
    /// `call` names the call in the error; `avg_len` is the average row length, for the hint that
    /// ELL's padding is what is too large.
    fn check(len: Vec<usize>, forms: Forms, call: &str, avg_len: usize) -> Result<SparseForms, InputError> {
        let rows = len.len();
        let (want_csr, want_ell, want_jds) = (forms.csr, forms.ell, forms.jds);
        // Sizes of each form, checked before they are built.
        let nnz: u64 = len.iter().map(|&l| l as u64).sum();
        let ell_width = len.iter().copied().max().unwrap_or(0);
        let rows_p = rows.div_ceil(JDS_WARP) * JDS_WARP;
        let mut order: Vec<u32> = (0..rows as u32).collect();
        // coo_to_jds sorts rows longest first (qsort, so ties fall in any order; here by row).
        order.sort_by(|&a, &b| len[b as usize].cmp(&len[a as usize]).then(a.cmp(&b)));
        let jds_len = |i: usize| if i < rows { len[order[i] as usize] } else { 0 };
        let sh_zcnt: Vec<i32> = (0..rows_p / JDS_WARP)
            .map(|g| jds_len(g * JDS_WARP) as i32)
            .collect();
        let jds_total: u64 = sh_zcnt.iter().map(|&z| z as u64 * JDS_WARP as u64).sum();
        let bytes = want_csr as u64 * (nnz * 8 + rows as u64 * 4)
            + want_ell as u64 * (rows as u64 * ell_width as u64 * 8)
            + want_jds as u64 * (jds_total * 8 + rows as u64 * 4);
        if bytes > MAX_INPUT_BYTES {
            let hint = if want_ell && ell_width > 4 * avg_len {
                format!(
                    " (ELL pads every row to the longest, {ell_width}; form=csr or form=jds leaves ELL out)"
                )
            } else {
                String::new()
            };
            return Err(err(
                Some("rows"),
                format!(
                    "{call} would take {}; an input is capped at {}{hint}",
                    mib(bytes),
                    mib(MAX_INPUT_BYTES)
                ),
            ));
        }
        Ok(SparseForms {
            forms,
            rows,
            rows_p,
            ell_width,
            len,
            order,
            sh_zcnt,
            jds_total,
        })
    }

    fn nnz(&self) -> usize {
        self.len.iter().sum()
    }

    /// The forms asked for, from the CSR pattern (columns ascending within a row).
    fn build(&self, csr_ptr: &[i32], csr_cols: &[i32], csr_vals: &[f32]) -> Vec<(String, Array)> {
        let SparseForms {
            forms,
            rows,
            rows_p,
            ell_width,
            ref len,
            ref order,
            ref sh_zcnt,
            jds_total,
        } = *self;
        let (want_csr, want_ell, want_jds) = (forms.csr, forms.ell, forms.jds);
        let jds_len = |i: usize| if i < rows { len[order[i] as usize] } else { 0 };

        let mut out = Vec::new();
        if want_ell {
            // ELL: ell_width slots per row, column-major (slot k of row r at k * rows + r), so a warp
            // reading slot k of consecutive rows is coalesced. Padding: column 0, value 0.
            let mut ell_cols = vec![0i32; rows * ell_width];
            let mut ell_vals = vec![0f32; rows * ell_width];
            for r in 0..rows {
                for (k, e) in (csr_ptr[r] as usize..csr_ptr[r + 1] as usize).enumerate() {
                    ell_cols[k * rows + r] = csr_cols[e];
                    ell_vals[k * rows + r] = csr_vals[e];
                }
            }
            out.push(("ell_cols", i32s(&ell_cols)));
            out.push(("ell_vals", f32s(&ell_vals)));
        }
        if want_jds {
            // coo_to_jds with pad_rows = pack_size = 1: rows (padded to a multiple of 32) sorted
            // longest first; each group of 32 JDS rows is padded to its first (longest) row, whose
            // length is sh_zcnt[group]. Column k of the JDS matrix starts at jds_ptr[k] and holds entry
            // k of every row of the groups longer than k; padding has index -1 and value 0, exactly as
            // coo_to_jds writes it (so spmv_jds reads x_vec[-1] for padding, multiplied by 0).
            let depth = sh_zcnt.first().copied().unwrap_or(0) as usize;
            let mut jds_ptr = Vec::with_capacity(depth + 1);
            let mut data = Vec::with_capacity(jds_total as usize);
            let mut index = Vec::with_capacity(jds_total as usize);
            for k in 0..depth {
                jds_ptr.push(data.len() as i32);
                for i in 0..rows_p {
                    if jds_len(i) > k {
                        let e = csr_ptr[order[i] as usize] as usize + k;
                        data.push(csr_vals[e]);
                        index.push(csr_cols[e]);
                    } else if sh_zcnt[i / JDS_WARP] as usize > k {
                        data.push(0.0);
                        index.push(-1);
                    } else {
                        break; // groups are sorted, so no later row reaches column k either
                    }
                }
            }
            jds_ptr.push(data.len() as i32);
            let perm: Vec<i32> = order.iter().map(|&r| r as i32).collect();
            out.push(("jds_ptr", i32s(&jds_ptr)));
            out.push(("sh_zcnt", i32s(sh_zcnt)));
            out.push(("perm", i32s(&perm)));
            out.push(("data", f32s(&data)));
            out.push(("index", i32s(&index)));
        }
        if want_csr {
            let mut csr = vec![
                ("csr_ptr", i32s(csr_ptr)),
                ("csr_cols", i32s(csr_cols)),
                ("csr_vals", f32s(csr_vals)),
            ];
            csr.append(&mut out);
            out = csr;
        }
        named(out)
    }
}

fn sparse(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let rows = p.int("rows", 1, MAX_NODES, None)? as usize;
    let cols = p.int("cols", 1, MAX_NODES, None)? as usize;
    let band = p.int("band", 0, cols as i64, Some(0))? as usize;
    // The widest window a row can draw from.
    let width = if band == 0 { cols } else { (2 * band + 1).min(cols) };
    let nnz_per_row = p.int("nnz_per_row", 1, width as i64, None).map_err(|e| {
        if band > 0 && p.given("nnz_per_row") {
            err(
                e.arg.as_deref(),
                format!(
                    "{} (band={band} allows at most {width} columns per row)",
                    e.message
                ),
            )
        } else {
            e
        }
    })? as usize;
    let dist = p.word("dist", &["uniform", "powerlaw"], Some("uniform"))?;
    let seed = p.seed()?;
    let (form, forms) = Forms::from_params(p)?;
    check_cap(
        "rows",
        &format!("sparse(rows={rows}, nnz_per_row={nnz_per_row})"),
        // CSR entries, plus per-row working arrays (lengths, JDS order, power-law weights).
        rows as u64 * (nnz_per_row as u64 * 8 + 24),
    )?;

    let mut rng = Rng::new(seed, 2);
    // Row r's columns come from a window: the whole row, or `band` either side of the diagonal
    // (r * cols / rows), clipped to the matrix.
    let window = |r: usize| -> (usize, usize) {
        if band == 0 {
            (0, cols)
        } else {
            let c = (r as u128 * cols as u128 / rows as u128) as usize;
            (c.saturating_sub(band), (c + band + 1).min(cols))
        }
    };
    // Row lengths: all nnz_per_row (uniform), or by power-law weight scaled to an average of
    // nnz_per_row with random rounding (powerlaw); at least 1, at most the window.
    let mut len: Vec<usize> = vec![nnz_per_row; rows];
    if dist == "powerlaw" {
        let pl = PowerLaw::new(rows, &mut rng);
        let scale = nnz_per_row as f64 * rows as f64 / pl.total();
        for (rank, &r) in pl.item.iter().enumerate() {
            len[r as usize] = (scale * PowerLaw::weight(rank) + rng.unit()) as usize;
        }
    }
    for (r, l) in len.iter_mut().enumerate() {
        let (lo, hi) = window(r);
        *l = (*l).clamp(1, hi - lo);
    }

    let call = format!("sparse(rows={rows}, nnz_per_row={nnz_per_row}, dist={dist}, form={form})");
    let jds = SparseForms::check(len, forms, &call, nnz_per_row)?;
    let (len, nnz) = (&jds.len, jds.nnz());

    // The pattern: distinct columns per row, ascending, values in (0, 1].
    let mut csr_ptr = Vec::with_capacity(rows + 1);
    csr_ptr.push(0i32);
    let mut csr_cols: Vec<i32> = Vec::with_capacity(nnz);
    let mut scratch: Vec<u32> = Vec::new();
    for (r, &l) in len.iter().enumerate() {
        let (lo, hi) = window(r);
        let w = hi - lo;
        let start = csr_cols.len();
        if 2 * l > w {
            // Dense row: a partial Fisher-Yates over the window.
            scratch.clear();
            scratch.extend(lo as u32..hi as u32);
            for i in 0..l {
                let j = i + rng.below((w - i) as u64) as usize;
                scratch.swap(i, j);
            }
            csr_cols.extend(scratch[..l].iter().map(|&c| c as i32));
            csr_cols[start..].sort_unstable();
        } else {
            // Sparse row: draw, sort, drop repeats, draw again for the missing ones.
            while csr_cols.len() - start < l {
                for _ in csr_cols.len() - start..l {
                    csr_cols.push((lo as u64 + rng.below(w as u64)) as i32);
                }
                csr_cols[start..].sort_unstable();
                let mut k = start;
                for i in start..csr_cols.len() {
                    if i == start || csr_cols[i] != csr_cols[k - 1] {
                        csr_cols[k] = csr_cols[i];
                        k += 1;
                    }
                }
                csr_cols.truncate(k);
            }
        }
        csr_ptr.push(csr_cols.len() as i32);
    }
    let csr_vals: Vec<f32> = (0..csr_cols.len()).map(|_| rng.value()).collect();
    Ok(jds.build(&csr_ptr, &csr_cols, &csr_vals))
}

// ---------------------------------------------------------------------------------------------
// fem2d: the stiffness-matrix pattern of a scalar problem on a square of order-p quadrilateral
// elements (Parboil spmv's datasets are FEM matrices: the "large" input, Dubcova3, is a 2-D PDE
// matrix from the Hermes hp-FEM group; its 146,689 rows and 3,636,643 nonzeros are those of cubic
// elements on a 127 x 127 mesh (145,924 rows, 3,632,836 nonzeros) to within 0.5 % and 0.1 %).

/// Largest mesh side (elements) and element order.
const MAX_FEM_ELEMENTS: i64 = 4096;
const MAX_FEM_ORDER: i64 = 8;

/// Nodes `lo..=hi` (along one axis) that share an element with node `i` of a 1-D mesh of
/// `elements` elements of order `order`: a vertex node (i % order == 0) lies in the elements on
/// both sides, any other node in its own element only. The 2-D pattern is the tensor product of
/// the two axes' (a node's neighbours are the nodes of the elements it lies in).
fn fem_span(i: usize, elements: usize, order: usize) -> (usize, usize) {
    let first = if i.is_multiple_of(order) {
        (i / order).saturating_sub(1)
    } else {
        i / order
    };
    let last = (i / order).min(elements - 1);
    (first * order, (last + 1) * order)
}

fn fem2d(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let elements = p.int("elements", 1, MAX_FEM_ELEMENTS, None)? as usize;
    let order = p.int("order", 1, MAX_FEM_ORDER, Some(1))? as usize;
    let numbering = p.word("numbering", &["lex", "random"], Some("lex"))?;
    let seed = p.int("seed", i64::MIN, i64::MAX, Some(0))?;
    let (form, forms) = Forms::from_params(p)?;
    let side = order * elements + 1;
    let rows = side * side;
    // Row lengths: the product of the two axes' spans.
    let span_len: Vec<usize> = (0..side)
        .map(|i| {
            let (lo, hi) = fem_span(i, elements, order);
            hi - lo + 1
        })
        .collect();
    let nnz_1d: u64 = span_len.iter().map(|&l| l as u64).sum();
    let call = format!("fem2d(elements={elements}, order={order}, numbering={numbering}, form={form})");
    check_cap("elements", &call, nnz_1d * nnz_1d * 8 + rows as u64 * 24)?;

    // Node (x, y) is node y * side + x; `numbering` gives it its row (and column) number: `lex`
    // keeps that order (a mesh generator's row-by-row numbering: a row's columns fall in
    // 2·order + 1 runs, one per mesh row it touches), `random` a random permutation (the worst
    // locality any numbering could give the same matrix).
    let number: Vec<u32> = match numbering {
        "lex" => (0..rows as u32).collect(),
        _ => Rng::new(seed, 9).permutation(rows),
    };
    let mut node_of = vec![0u32; rows];
    for (node, &r) in number.iter().enumerate() {
        node_of[r as usize] = node as u32;
    }
    let len: Vec<usize> = node_of
        .iter()
        .map(|&n| span_len[n as usize % side] * span_len[n as usize / side])
        .collect();
    let avg = (nnz_1d * nnz_1d / rows as u64) as usize;
    let jds = SparseForms::check(len, forms, &call, avg)?;

    let mut csr_ptr = Vec::with_capacity(rows + 1);
    csr_ptr.push(0i32);
    let mut csr_cols: Vec<i32> = Vec::with_capacity(jds.nnz());
    for &node in &node_of {
        let (x, y) = (node as usize % side, node as usize / side);
        let ((x0, x1), (y0, y1)) = (fem_span(x, elements, order), fem_span(y, elements, order));
        let start = csr_cols.len();
        for ny in y0..=y1 {
            csr_cols.extend((x0..=x1).map(|nx| number[ny * side + nx] as i32));
        }
        csr_cols[start..].sort_unstable();
        csr_ptr.push(csr_cols.len() as i32);
    }
    // Values do not steer any address; uniform in (0, 1] as `sparse` gives them.
    let mut rng = Rng::new(seed, 10);
    let csr_vals: Vec<f32> = (0..csr_cols.len()).map(|_| rng.value()).collect();
    Ok(jds.build(&csr_ptr, &csr_cols, &csr_vals))
}

// ---------------------------------------------------------------------------------------------
// suffix_tree: Rodinia mummergpu's reference suffix tree and reads

/// Longest reference: Rodinia's NC_003997 (5.23 Mbp) fits; node ids and positions are 24-bit
/// fields in the source's texels (`uchar3`), and the arrays stay under ~400 MiB.
pub const MAX_SUFFIX_TREE_LEN: i64 = 6_000_000;
/// Most reads, and longest read.
const MAX_READS: i64 = 1 << 20;
const MAX_READ_LEN: i64 = 1024;
/// Children slots per node, in the source's order A, C, G, T, $ (`basecount = 5`).
const BASES: [u8; 5] = *b"ACGT$";

fn base_index(c: u8) -> usize {
    match c {
        b'A' => 0,
        b'C' => 1,
        b'G' => 2,
        b'T' => 3,
        _ => 4,
    }
}

/// One node of the compressed suffix trie while it is built; ids are indices, 0 is "none"
/// (as the kernel's `cur == 0`), 1 the root.
#[derive(Clone, Default)]
struct StNode {
    /// Edge into the node: text[start ..= end].
    start: u32,
    end: u32,
    /// String depth at the node's end.
    depth: u32,
    parent: u32,
    suffix: u32,
    children: [u32; 5],
    /// 1 + the suffix a leaf spells (the source's `m_leafid`), 0 for internal nodes.
    leaf: u32,
    /// A leaf below the node (the suffix whose insertion created it), for suffix links.
    below: u32,
}

/// The suffix tree of `text` (which ends with a unique `$`): every suffix inserted from the
/// root, splitting the edge where it leaves the tree (the compressed trie of all suffixes,
/// which is the suffix tree), then suffix links found by skip/count. Node 0 is unused.
fn build_suffix_tree(text: &[u8]) -> Vec<StNode> {
    let n = text.len() as u32;
    let mut t: Vec<StNode> = Vec::with_capacity(2 * text.len() + 2);
    t.push(StNode::default());
    t.push(StNode::default()); // root: empty edge, depth 0
    for i in 0..n {
        let (mut cur, mut pos) = (1u32, i);
        loop {
            let c = base_index(text[pos as usize]);
            let child = t[cur as usize].children[c];
            if child == 0 {
                let id = t.len() as u32;
                t.push(StNode {
                    start: pos,
                    end: n - 1,
                    depth: t[cur as usize].depth + (n - pos),
                    parent: cur,
                    leaf: i + 1,
                    below: i,
                    ..Default::default()
                });
                t[cur as usize].children[c] = id;
                break;
            }
            let (cs, ce) = (t[child as usize].start, t[child as usize].end);
            let mut k = 0;
            while cs + k <= ce && text[(cs + k) as usize] == text[(pos + k) as usize] {
                k += 1;
            }
            if cs + k > ce {
                cur = child;
                pos += k;
                continue;
            }
            // Split the edge after k characters; `$` is unique, so k < the edge length.
            let mid = t.len() as u32;
            t.push(StNode {
                start: cs,
                end: cs + k - 1,
                depth: t[cur as usize].depth + k,
                parent: cur,
                below: i,
                ..Default::default()
            });
            t[child as usize].start = cs + k;
            t[child as usize].parent = mid;
            t[mid as usize].children[base_index(text[(cs + k) as usize])] = child;
            t[cur as usize].children[c] = mid;
            cur = mid;
            pos += k;
        }
    }
    // Leaf ids by suffix, for the leaves' links (suffix i -> suffix i + 1).
    let mut leaf_of = vec![0u32; n as usize];
    for (id, x) in t.iter().enumerate().skip(2) {
        if x.leaf != 0 {
            leaf_of[(x.leaf - 1) as usize] = id as u32;
        }
    }
    t[1].suffix = 1;
    for id in 2..t.len() {
        let x = &t[id];
        let link = if x.leaf != 0 {
            leaf_of.get(x.leaf as usize).copied().unwrap_or(1)
        } else {
            // The node spelling text[i+1 .. i+depth], i a suffix below: walk it by skip/count.
            let (mut cur, mut pos, mut rest) = (1u32, x.below + 1, x.depth - 1);
            while rest > 0 {
                let child = t[cur as usize].children[base_index(text[pos as usize])];
                let len = t[child as usize].end - t[child as usize].start + 1;
                debug_assert!(child != 0 && len <= rest, "suffix link lands inside an edge");
                cur = child;
                pos += len;
                rest -= len;
            }
            cur
        };
        t[id].suffix = link;
    }
    t
}

/// Rodinia's `renumberTree` (suffix-tree.cpp): breadth first for the first 16 levels, then
/// each node followed by its next four levels in order, and the fifth level queued. Returns
/// the new id (1-based) of every node id.
fn renumber(t: &[StNode]) -> Vec<u32> {
    let mut id = vec![0u32; t.len()];
    let mut count = 0u32;
    let mut next = |n: u32, id: &mut Vec<u32>| {
        count += 1;
        id[n as usize] = count;
    };
    let kids = |n: u32| t[n as usize].children.into_iter().filter(|&c| c != 0);
    let mut queue = std::collections::VecDeque::from([(1u32, 0u32)]);
    while let Some((node, depth)) = queue.pop_front() {
        next(node, &mut id);
        if depth < 16 {
            queue.extend(kids(node).map(|c| (c, depth + 1)));
            continue;
        }
        for c in kids(node) {
            next(c, &mut id);
            for g in kids(c) {
                next(g, &mut id);
                for gg in kids(g) {
                    next(gg, &mut id);
                    for ggg in kids(gg) {
                        next(ggg, &mut id);
                        queue.extend(kids(ggg).map(|x| (x, depth + 5)));
                    }
                }
            }
        }
    }
    id
}

fn put24(out: &mut [u8], v: u32) {
    out[..3].copy_from_slice(&v.to_le_bytes()[..3]);
}

fn suffix_tree(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let len = p.int("len", 1, MAX_SUFFIX_TREE_LEN, None)? as usize;
    let reads = p.int("reads", 0, MAX_READS, None)? as usize;
    let read_len = p.int("read_len", 1, MAX_READ_LEN, None)? as usize;
    let mismatch = p.int("mismatch", 0, 1000, Some(0))?;
    let seed = p.seed()?;
    if read_len > len {
        return Err(err(
            Some("read_len"),
            format!("`read_len={read_len}` is longer than the reference (`len={len}`)"),
        ));
    }
    let mut rng = Rng::new(seed, 7);
    let mut text: Vec<u8> = (0..len).map(|_| BASES[rng.below(4) as usize]).collect();
    text.push(b'$');
    let t = build_suffix_tree(&text);
    let new_id = renumber(&t);
    // The source's texels, flattened by node id (16 B each; id 0 is the null node).
    let mut nodes = vec![0u8; 16 * t.len()];
    let mut children = vec![0u8; 16 * t.len()];
    for (old, x) in t.iter().enumerate().skip(1) {
        let o = 16 * new_id[old] as usize;
        let nd = &mut nodes[o..o + 16];
        put24(&mut nd[0..], new_id[x.parent as usize]);
        put24(&mut nd[3..], new_id[x.suffix as usize]);
        put24(&mut nd[6..], x.start);
        put24(&mut nd[9..], x.end);
        put24(&mut nd[12..], x.depth);
        let cd = &mut children[o..o + 16];
        if x.leaf != 0 {
            put24(&mut cd[0..], x.leaf);
            cd[15] = text[x.leaf as usize - 1];
        } else {
            for (b, &c) in x.children.iter().enumerate() {
                if c != 0 {
                    put24(&mut cd[3 * b..], new_id[c as usize]);
                }
            }
        }
    }
    // Reads as genreads.py draws them (uniform start), each stored as mummergpu stores
    // queries: 'q', the bases, '\0'; a base mismatches with probability mismatch / 1000,
    // replaced as genreads' `base_mismatcher` does (A->C, C->G, G->T, T->A).
    let stride = read_len + 2;
    let mut queries = Vec::with_capacity(reads * stride);
    let mut addrs = Vec::with_capacity(reads);
    for q in 0..reads {
        addrs.push((q * stride) as i32);
        let start = rng.below((len - read_len + 1) as u64) as usize;
        queries.push(b'q');
        for &b in &text[start..start + read_len] {
            let swap = mismatch > 0 && (rng.below(1000) as i64) < mismatch;
            queries.push(if swap { BASES[(base_index(b) + 1) % 4] } else { b });
        }
        queries.push(0);
    }
    Ok(named(vec![
        ("ref", u8s(text)),
        ("nodes", u8s(nodes)),
        ("children", u8s(children)),
        ("queries", u8s(queries)),
        ("addrs", i32s(&addrs)),
        ("lengths", i32s(&vec![read_len as i32; reads])),
    ]))
}

// ---------------------------------------------------------------------------------------------
// perm, uniform, seq

fn perm(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let n = p.int("n", 1, (MAX_INPUT_BYTES / 4) as i64, None)? as usize;
    let seed = p.seed()?;
    let v: Vec<i32> = Rng::new(seed, 3)
        .permutation(n)
        .into_iter()
        .map(|x| x as i32)
        .collect();
    Ok(named(vec![("values", i32s(&v))]))
}

fn uniform(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let bytes = p.int("bytes", 1, 8, Some(4))?;
    if ![1, 2, 4, 8].contains(&bytes) {
        return Err(err(
            Some("bytes"),
            format!("`bytes={bytes}` is not valid: bytes must be 1, 2, 4 or 8"),
        ));
    }
    let n = p.int("n", 1, MAX_INPUT_BYTES as i64 / bytes, None)? as usize;
    // Loads sign-extend, so values must fit the signed element type.
    let (min, max) = if bytes == 8 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (8 * bytes - 1)), (1i64 << (8 * bytes - 1)) - 1)
    };
    let lo = p.int("lo", min, max, None)?;
    let hi = p.int("hi", i64::MIN, i64::MAX, None)?;
    if hi <= lo {
        return Err(err(
            Some("hi"),
            format!("`hi={hi}` must be greater than lo={lo} (values are lo ..= hi-1)"),
        ));
    }
    if hi - 1 > max {
        return Err(err(
            Some("hi"),
            format!(
                "`hi={hi}` does not fit bytes={bytes}: values are sign-extended {}-bit integers, so hi-1 must be at most {max}",
                8 * bytes
            ),
        ));
    }
    let seed = p.seed()?;
    let mut rng = Rng::new(seed, 4);
    let span = (hi as i128 - lo as i128) as u64;
    let mut data = Vec::with_capacity(n * bytes as usize);
    for _ in 0..n {
        let v = lo.wrapping_add(rng.below(span) as i64);
        data.extend_from_slice(&v.to_le_bytes()[..bytes as usize]);
    }
    Ok(named(vec![(
        "values",
        Array {
            elem_bytes: bytes as u32,
            data: data.into(),
        },
    )]))
}

fn seq(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let n = p.int("n", 1, (MAX_INPUT_BYTES / 4) as i64, None)?;
    let start = p.int("start", i32::MIN as i64, i32::MAX as i64, Some(0))?;
    let step = p.int("step", i32::MIN as i64, i32::MAX as i64, Some(1))?;
    let last = start + (n - 1) * step;
    if !(i32::MIN as i64..=i32::MAX as i64).contains(&last) {
        return Err(err(
            Some(if p.given("step") { "step" } else { "n" }),
            format!(
                "seq(n={n}, start={start}, step={step}) ends at {last}, outside the i32 range {} ..= {}",
                i32::MIN,
                i32::MAX
            ),
        ));
    }
    let v: Vec<i32> = (0..n).map(|i| (start + i * step) as i32).collect();
    Ok(named(vec![("values", i32s(&v))]))
}

// ---------------------------------------------------------------------------------------------
// kspace: Parboil mri-gridding's samples, binned and sorted as its host code does

const MAX_KSPACE_SAMPLES: i64 = 1 << 24;
const MAX_KSPACE_GRID: i64 = 256;

/// The 3-D radial ("kooshball") trajectory's spoke directions: `spokes` points of a Fibonacci
/// lattice on the upper half of the unit sphere, taken in lattice order, so that spokes
/// acquired one after the other are a golden angle apart (each spoke covers both halves of the
/// sphere, as it passes through the centre).
fn radial_directions(spokes: usize) -> impl Iterator<Item = [f64; 3]> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..spokes).map(move |s| {
        let z = (s as f64 + 0.5) / spokes as f64;
        let r = (1.0 - z * z).sqrt();
        let phi = s as f64 * golden;
        [r * phi.cos(), r * phi.sin(), z]
    })
}

/// `kspace(samples, grid, readout, binsize=128, seed)`: the input of Parboil 2.5's mri-gridding
/// (benchmarks/mri-gridding/src/cuda). The dataset (`small.uks`) is not in the repository, so
/// the trajectory is an assumption, stated in docs/workloads-inputs.md: 3-D radial spokes of
/// `readout` samples each from −kmax to +kmax.
///
/// - `samples`: `ReconstructionSample` records (6 × f32: real, imag, kX, kY, kZ, sdc) with the
///   coordinates already mapped to the grid as `readSampleData` (main.cu) does:
///   `k = floor(k·(grid−1)/2 + (grid−1)/2)` with k in −1 ..= 1 (kScale·kmax = 1), in f32.
/// - `idx_key` / `idx_value`: what `binning_kernel` (GPU_kernels.cu) writes, after `sort`
///   (sort.cu, a stable radix sort by key): bin = kZ·grid² + kY·grid + kX, or gridNumElems
///   (= grid³, the CPU's bin) for a sample beyond `binsize` in its bin. On the GPU the atomics
///   decide which samples of a full bin overflow; here the first `binsize` in sample order keep
///   it. `idx_value` is the permutation `reorder_kernel` gathers through.
/// - `bin_start`: the exclusive prefix sum of the final bin counts (`scanLargeArray` over
///   `binCount_d`, gridNumElems + 1 entries), the `binStartAddr` that `gridding_GPU` reads.
/// - `bin_key`: `idx_key` before the sort, in sample order: the keys `binning_kernel` writes,
///   which the sort's first `splitSort` pass loads.
/// - `split0`: per element of `bin_key`, what that first pass (iter 0, digit `key & 15`)
///   computes for it in registers: its digit and its position in its tile of
///   `SPLIT_TILE` = 4·SORT_BS elements after the pass's four 1-bit splits (a stable sort of the
///   tile by the digit), packed in a u16 as `position | digit << 10`. The last tile is padded
///   with UINT32_MAX keys (digit 15), as splitSort pads it.
fn kspace(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let n = p.int("samples", 1, MAX_KSPACE_SAMPLES, None)? as usize;
    let grid = p.int("grid", 2, MAX_KSPACE_GRID, None)? as usize;
    let readout = p.int("readout", 2, MAX_KSPACE_SAMPLES, None)? as usize;
    let binsize = p.int("binsize", 1, MAX_KSPACE_SAMPLES, Some(128))? as u32;
    let seed = p.seed()?;
    let bins = grid * grid * grid;
    // samples (24 B), idx_key, idx_value and bin_key (4 B each), split0 (2 B), bin_start
    // (4 B per bin + 1).
    let bytes = n as u64 * 38 + (bins as u64 + 1) * 4;
    check_cap("samples", "kspace()", bytes)?;

    let spokes = n.div_ceil(readout);
    let half = (grid - 1) as f32 / 2.0;
    let mut rng = Rng::new(seed, 7);
    let mut records: Vec<f32> = Vec::with_capacity(6 * n);
    let mut key: Vec<u32> = Vec::with_capacity(n);
    let mut count = vec![0u32; bins];
    'spokes: for dir in radial_directions(spokes) {
        for t in 0..readout {
            if key.len() == n {
                break 'spokes;
            }
            let u = -1.0 + 2.0 * t as f64 / (readout - 1) as f64;
            // main.cu readSampleData: kX = floor(kX·ax + bx), in f32.
            let c = dir.map(|d| {
                ((u * d) as f32 * half + half)
                    .floor()
                    .clamp(0.0, (grid - 1) as f32)
            });
            records.extend_from_slice(&[rng.value(), rng.value(), c[0], c[1], c[2], (u * u) as f32]);
            // binning_kernel: binIdx = (uint)kZ·size_xy + (uint)kY·gridSize[0] + (uint)kX.
            let bin = c[2] as usize * grid * grid + c[1] as usize * grid + c[0] as usize;
            key.push(if count[bin] < binsize {
                count[bin] += 1;
                bin as u32
            } else {
                bins as u32
            });
        }
    }
    // sort.cu: a stable radix sort of (key, value) pairs, value = the sample's index.
    let mut value: Vec<u32> = (0..n as u32).collect();
    value.sort_by_key(|&i| key[i as usize]);
    let sorted_key: Vec<i32> = value.iter().map(|&i| key[i as usize] as i32).collect();
    let mut bin_start = Vec::with_capacity(bins + 1);
    let mut sum = 0i32;
    for &c in &count {
        bin_start.push(sum);
        sum += c as i32;
    }
    bin_start.push(sum);
    let value: Vec<i32> = value.into_iter().map(|v| v as i32).collect();
    let split0 = split_sort_pass(&key, 0);
    let bin_key: Vec<i32> = key.into_iter().map(|k| k as i32).collect();
    Ok(named(vec![
        ("samples", f32s(&records)),
        ("idx_key", i32s(&sorted_key)),
        ("idx_value", i32s(&value)),
        ("bin_start", i32s(&bin_start)),
        ("bin_key", i32s(&bin_key)),
        ("split0", le_array(&split0, u16::to_le_bytes)),
    ]))
}

/// sort.cu's tile: `splitSort<<<(n + 4·SORT_BS − 1)/(4·SORT_BS), SORT_BS>>>`, SORT_BS = 256, each
/// thread holding a uint4 of keys.
const SPLIT_TILE: usize = 4 * 256;

/// What `splitSort` (sort.cu) pass `iter` gives each key: its digit `(key >> 4·iter) & 15` and
/// its position in its tile after the pass, packed as `position | digit << 10`. The pass's four
/// 1-bit splits (flags scanned in shared memory, zeros first) are a stable sort of the tile by
/// the digit, so the position is the number of the tile's keys with a smaller digit plus those
/// before it with the same digit. Keys past the end pad the last tile as UINT32_MAX.
fn split_sort_pass(key: &[u32], iter: u32) -> Vec<u16> {
    let digit = |k: u32| ((k >> (4 * iter)) & 15) as usize;
    let mut out = Vec::with_capacity(key.len());
    for tile in key.chunks(SPLIT_TILE) {
        let mut count = [0usize; 16];
        for &k in tile {
            count[digit(k)] += 1;
        }
        count[15] += SPLIT_TILE - tile.len();
        let mut next = [0usize; 16];
        for d in 1..16 {
            next[d] = next[d - 1] + count[d - 1];
        }
        for &k in tile {
            let d = digit(k);
            out.push((next[d] | d << 10) as u16);
            next[d] += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// particlefilter: Rodinia particlefilter (float build), the inputs of one likelihood_kernel launch

/// Most particles, longest video side, most frames; the video (x·y·z bytes) must also keep
/// `max_size` and every `ind` inside C's `int`, which the size cap does.
const MAX_PF_PARTICLES: i64 = 1 << 20;
const MAX_PF_SIDE: i64 = 1 << 16;
const MAX_PF_FRAMES: i64 = 1 << 12;
/// particleFilter: `int radius = 5`, so the disc has countOnes = 69 cells.
const PF_RADIUS: i32 = 5;
/// likelihood_kernel runs with `threads_per_block = 512`; its weight reduction is per CTA.
const PF_BLOCK: usize = 512;

/// `d_randu` / `randu` (ex_particle_CUDA_float_seq.cu): `int num = A*seed[index] + C` (32-bit,
/// wraps), `seed[index] = num % M` (C's remainder truncates, so a negative seed stays negative),
/// `fabs(seed[index] / (double) M)`, with A = 1103515245, C = 12345, M = INT_MAX.
fn pf_randu(seed: &mut i32) -> f64 {
    let num = 1_103_515_245i32.wrapping_mul(*seed).wrapping_add(12345);
    *seed = num % i32::MAX;
    (*seed as f64 / i32::MAX as f64).abs()
}

/// `d_randn` / `randn`: Box–Muller from two `randu`, `sqrt(-2·log(u))·cos(2·pi·v)`.
fn pf_randn(seed: &mut i32) -> f64 {
    let u = pf_randu(seed);
    let v = pf_randu(seed);
    let cosine = (2.0 * std::f64::consts::PI * v).cos();
    let rt = -2.0 * u.ln();
    rt.sqrt() * cosine
}

/// `strelDisk` then `getneighbors`: the cells of the (2r−1)² square within distance < r of its
/// centre, in row-major order (x, then y), as pairs `objxy[2j] = y − centre`,
/// `objxy[2j + 1] = x − centre`. `sqrt(dx² + dy²) < r` is `dx² + dy² < r²` for integers.
fn pf_disc(radius: i32) -> Vec<[i32; 2]> {
    let (diameter, centre) = (2 * radius - 1, radius - 1);
    let mut out = Vec::new();
    for x in 0..diameter {
        for y in 0..diameter {
            let (dx, dy) = (x - radius + 1, y - radius + 1);
            if dx * dx + dy * dy < radius * radius {
                out.push([y - centre, x - centre]);
            }
        }
    }
    out
}

/// The x86 conversion `(unsigned char) d` of `addNoise`: a 32-bit truncation (`cvttsd2si`,
/// which gives INT_MIN for NaN and out-of-range values), of which the low byte is kept.
fn pf_noise_byte(d: f64) -> u8 {
    let t = if d.is_finite() && d > -2_147_483_649.0 && d < 2_147_483_648.0 {
        d.trunc() as i32
    } else {
        i32::MIN
    };
    t as u8
}

/// `videoSequence`: one disc of radius 5 (`imdilate_disk`) around a point that starts at
/// (x0, y0) = (IszY/2, IszX/2) and moves by (+1, −2) a frame (stored at `yk·IszY·Nfr + xk·Nfr +
/// k`, coordinates swapped as in the source), 1 → 228 and 0 → 100 (`setIf`), then 5·randn noise
/// drawn from `seed[0]` (`addNoise`). `I` and `newMatrix` are `malloc`ed, not cleared; taken as
/// zero. `roundDouble` returns the truncated value either way (`return newValue++`).
fn pf_video(ix: usize, iy: usize, nfr: usize, seed0: &mut i32) -> Vec<u8> {
    let max_size = ix * iy * nfr;
    let at = |x: usize, y: usize, z: usize| x * iy * nfr + y * nfr + z;
    let mut video = vec![0u8; max_size];
    let (x0, y0) = (iy / 2, ix / 2);
    video[at(x0, y0, 0)] = 1;
    for k in 1..nfr {
        let xk = (x0 as i64 + (k as i64 - 1)).unsigned_abs() as usize;
        let yk = (y0 as i64 - 2 * (k as i64 - 1)).unsigned_abs() as usize;
        let pos = yk * iy * nfr + xk * nfr + k;
        video[if pos >= max_size { 0 } else { pos }] = 1;
    }
    // imdilate_disk / dilate_matrix: x in max(px − 5, 0) .. min(px + 5, dimX) (end exclusive).
    let r = PF_RADIUS as usize;
    let mut dilated = vec![0u8; max_size];
    for z in 0..nfr {
        for px in 0..ix {
            for py in 0..iy {
                if video[at(px, py, z)] != 1 {
                    continue;
                }
                for x in px.saturating_sub(r)..(px + r).min(ix) {
                    for y in py.saturating_sub(r)..(py + r).min(iy) {
                        let (dx, dy) = (x.abs_diff(px), y.abs_diff(py));
                        if dx * dx + dy * dy < r * r {
                            dilated[at(x, y, z)] = 1;
                        }
                    }
                }
            }
        }
    }
    // setIf(0, 100), setIf(1, 228), addNoise in x, y, z order (each cell draws randn(seed, 0)).
    for v in dilated.iter_mut() {
        let base = if *v == 1 { 228u8 } else { 100 };
        *v = base.wrapping_add(pf_noise_byte(5.0 * pf_randn(seed0)));
    }
    dilated
}

/// `particlefilter(np=1000, x=128, y=128, z=10, frame=1, seed)`: what `likelihood_kernel`
/// (ex_particle_CUDA_float_seq.cu) reads and writes at its launch for frame `frame` of
/// `-x x -y y -z z -np np`, replaying main, videoSequence and particleFilter on the host.
/// `seed` stands for `time(0)` in main's `seed[i] = time(0)*i`. Frames before `frame` run the
/// whole filter (likelihood, weights, the CTA reductions, normalisation, CDF, resampling) as
/// the four kernels intend, each seeing all of the previous one's writes.
fn particlefilter(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let np = p.int("np", 1, MAX_PF_PARTICLES, Some(1000))? as usize;
    let ix = p.int("x", 1, MAX_PF_SIDE, Some(128))? as usize;
    let iy = p.int("y", 1, MAX_PF_SIDE, Some(128))? as usize;
    let nfr = p.int("z", 2, MAX_PF_FRAMES, Some(10))? as usize;
    let frame = p.int("frame", 1, MAX_PF_FRAMES - 1, Some(1))? as usize;
    let time0 = p.int("seed", i64::MIN, i64::MAX, None)?;
    if frame >= nfr {
        return Err(err(
            Some("frame"),
            format!(
                "`frame={frame}` is out of range: particleFilter launches likelihood_kernel for \
                 frames 1 ..= z − 1 = {}",
                nfr - 1
            ),
        ));
    }
    let disc = pf_disc(PF_RADIUS);
    let count_ones = disc.len();
    let max_size = ix as u64 * iy as u64 * nfr as u64;
    // I, ind, xy + xj + yj, seed, objxy.
    let bytes = max_size + np as u64 * (4 * count_ones as u64 + 32 + 4) + 8 * count_ones as u64;
    let call = format!("particlefilter(np={np}, x={ix}, y={iy}, z={nfr})");
    check_cap("np", &call, bytes)?;
    // videoSequence writes its first point at I[x0·IszY·Nfr + y0·Nfr] with x0 = IszY/2 and
    // y0 = IszX/2, unchecked.
    if iy / 2 >= ix || ix / 2 >= iy {
        return Err(err(
            Some("x"),
            format!(
                "`x={ix}, y={iy}`: videoSequence puts the object's first position at \
                 (y/2, x/2) = ({}, {}), outside the {ix} × {iy} frame (the source writes out of \
                 bounds); y/2 < x and x/2 < y are needed",
                iy / 2,
                ix / 2
            ),
        ));
    }

    // main: seed[i] = time(0)*i (a time_t product stored in an int: its low 32 bits).
    let mut seed: Vec<i32> = (0..np).map(|i| time0.wrapping_mul(i as i64) as i32).collect();
    let video = pf_video(ix, iy, nfr, &mut seed[0]);

    // particleFilter: xj = xe = roundDouble(IszY/2.0), yj = ye = roundDouble(IszX/2.0).
    let (xe, ye) = ((iy / 2) as f64, (ix / 2) as f64);
    let mut xj = vec![xe; np];
    let mut yj = vec![ye; np];
    let walk = PfWalk {
        disc: &disc,
        stride: (iy * nfr) as i64,
        nfr: nfr as i64,
        max_size,
    };
    for k in 1..frame {
        let (ax, ay, ind) = walk.step(k, &xj, &yj, &mut seed)?;
        // calcLikelihoodSum / countOnes; weights[i] = 1/Np * exp(likelihood[i]).
        let weights: Vec<f64> = ind
            .chunks(count_ones)
            .map(|row| {
                let sum = row.iter().fold(0.0f64, |s, &j| {
                    let v = video[j as usize] as i32;
                    let (a, b) = ((v - 100) as f64, (v - 228) as f64);
                    s + (a * a - b * b) / 50.0
                });
                1.0 / np as f64 * (sum / count_ones as f64).exp()
            })
            .collect();
        // The CTA's tree reduction over buffer[512] (zero past Np), then sum_kernel.
        let mut total = 0.0f64;
        for block in weights.chunks(PF_BLOCK) {
            let mut buf = [0.0f64; PF_BLOCK];
            buf[..block.len()].copy_from_slice(block);
            let mut s = PF_BLOCK / 2;
            while s > 0 {
                for t in 0..s {
                    buf[t] += buf[t + s];
                }
                s /= 2;
            }
            total += buf[0];
        }
        if !(total.is_finite() && total > 0.0) {
            return Err(err(
                Some("seed"),
                format!("the weights of frame {k} sum to {total}; the filter cannot resample"),
            ));
        }
        // normalize_weights_kernel: weights /= sum, cdfCalc, u1 = 1/Np * d_randu(seed, 0),
        // u[i] = u1 + i/Np; find_index_kernel: the first CDF[x] >= u[i] (else Np − 1). The CDF
        // does not decrease, so a binary search finds the same x as the source's linear one.
        let mut cdf = Vec::with_capacity(np);
        let mut acc = 0.0f64;
        for (x, w) in weights.iter().enumerate() {
            acc = if x == 0 { w / total } else { w / total + acc };
            cdf.push(acc);
        }
        let u1 = 1.0 / np as f64 * pf_randu(&mut seed[0]);
        for i in 0..np {
            let u = u1 + i as f64 / np as f64;
            let index = cdf.partition_point(|&c| c < u).min(np - 1);
            xj[i] = ax[index];
            yj[i] = ay[index];
        }
    }
    let seed_k = seed.clone();
    let (ax, ay, ind) = walk.step(frame, &xj, &yj, &mut seed)?;
    let mut xy = ax;
    xy.extend_from_slice(&ay);
    let objxy: Vec<i32> = disc.iter().flatten().copied().collect();
    Ok(named(vec![
        ("xy", f64s(&xy)),
        ("xj", f64s(&xj)),
        ("yj", f64s(&yj)),
        ("seed", i32s(&seed_k)),
        ("objxy", i32s(&objxy)),
        ("ind", i32s(&ind)),
        ("I", u8s(video)),
    ]))
}

/// The part of `likelihood_kernel` that moves the particles and computes `ind`.
struct PfWalk<'a> {
    disc: &'a [[i32; 2]],
    /// IszY·Nfr, and Nfr.
    stride: i64,
    nfr: i64,
    max_size: u64,
}

impl PfWalk<'_> {
    /// Frame `k`: arrayX[i] = xj[i] + 1.0 + 5.0*d_randn(seed, i) (FMA-contracted, as nvcc does by
    /// default), arrayY[i] = yj[i] - 2.0 + 2.0*d_randn(seed, i); then ind[i*countOnes + y] =
    /// abs(indX*IszY*Nfr + indY*Nfr + k), 0 if >= max_size, with indX =
    /// dev_round_double(arrayX[i]) + objxy[2y+1] and indY = dev_round_double(arrayY[i]) +
    /// objxy[2y]. dev_round_double truncates (`return newValue++` returns the value before the
    /// increment).
    #[allow(clippy::type_complexity)]
    fn step(
        &self,
        k: usize,
        xj: &[f64],
        yj: &[f64],
        seed: &mut [i32],
    ) -> Result<(Vec<f64>, Vec<f64>, Vec<i32>), InputError> {
        let np = xj.len();
        let (mut ax, mut ay) = (Vec::with_capacity(np), Vec::with_capacity(np));
        let mut ind = Vec::with_capacity(np * self.disc.len());
        for i in 0..np {
            let x = pf_randn(&mut seed[i]).mul_add(5.0, xj[i] + 1.0);
            let y = pf_randn(&mut seed[i]).mul_add(2.0, yj[i] - 2.0);
            if !(x.abs() < 1e9 && y.abs() < 1e9) {
                return Err(err(
                    Some("seed"),
                    format!(
                        "particle {i} leaves the int range in frame {k} (arrayX = {x}, arrayY = \
                         {y}: d_randu drew 0, and log(0) = −inf); choose another seed"
                    ),
                ));
            }
            let (rx, ry) = (x.trunc() as i64, y.trunc() as i64);
            for o in self.disc {
                let v = ((rx + o[1] as i64) * self.stride + (ry + o[0] as i64) * self.nfr + k as i64).abs();
                if v > i32::MAX as i64 {
                    return Err(err(
                        Some("seed"),
                        format!("ind = {v} for particle {i} in frame {k} overflows C's int"),
                    ));
                }
                ind.push(if v as u64 >= self.max_size { 0 } else { v as i32 });
            }
            ax.push(x);
            ay.push(y);
        }
        Ok((ax, ay, ind))
    }
}

// circles: Rodinia leukocyte's sample-circle tables (GICOV_kernel's __constant__ arrays)

/// Most points per circle and most circles (the source has 150 and 7).
const MAX_CIRCLE_POINTS: i64 = 4096;
const MAX_CIRCLES: i64 = 64;
/// Largest radius, min_radius + step·(circles − 1): offsets stay far inside i32.
const MAX_CIRCLE_RADIUS: i64 = 1 << 20;
/// Rodinia leukocyte's `PI` (cuda/leukocyte/CUDA/misc_math.h: `#define PI 3.14159`), which
/// the tables are computed with, not π: the point opposite n = 0 (θ = 3.14159) has
/// cos θ = −0.999999999996, so its x offset truncates to −(r − 1), not −r.
#[allow(clippy::approx_constant)] // the source's value, deliberately not π
const LEUKOCYTE_PI: f64 = 3.14159;
/// GPGPU-Sim 3.2.2 aligns each `__constant__` array of a module to 128 B (ptx_parser.cc,
/// `add_identifier`: `pad_address` for const_space).
const CONST_ALIGN: usize = 128;

/// The byte offsets of sin_angle, cos_angle, tX and tY in the `constants` array and its total
/// length, for `points` points and `circles` circles: each array in declaration order
/// (find_ellipse_kernel.cu: c_sin_angle, c_cos_angle, c_tX, c_tY), aligned to 128 B.
fn circles_layout(points: usize, circles: usize) -> ([usize; 4], usize) {
    let sizes = [4 * points, 4 * points, 4 * points * circles, 4 * points * circles];
    let mut offsets = [0; 4];
    let mut end = 0usize;
    for (o, s) in offsets.iter_mut().zip(sizes) {
        *o = end.next_multiple_of(CONST_ALIGN);
        end = *o + s;
    }
    (offsets, end)
}

/// `circles(points=150, circles=7, min_radius=8, step=2)`: what Rodinia leukocyte's
/// `compute_constants` (cuda/leukocyte/CUDA/find_ellipse.c) computes and `transfer_constants`
/// (find_ellipse_kernel.cu) copies to `GICOV_kernel`'s constant memory, as it computes it:
/// `theta[n]` is a `float` array, `((double) n * 2.0 * PI) / (double) NPOINTS` with PI = 3.14159;
/// `sin_angle[n] = sin(theta[n])`, `cos_angle[n] = cos(theta[n])` (double, stored as float);
/// circle k has radius `rad = (double)(MIN_RAD + 2k)` and offsets
/// `tX[k*NPOINTS + n] = (int)(cos(theta[n]) * rad)`, `tY[...] = (int)(sin(theta[n]) * rad)`
/// (truncation toward zero). `min_radius` and `step` generalise MIN_RAD (RADIUS − 2 = 8) and 2.
///
/// Arrays: `sin_angle`, `cos_angle` (f32 × points), `tx`, `ty` (i32 × circles·points, circle k
/// at k·points), and `constants`: the four in one array laid out as GPGPU-Sim places the
/// module's `__constant__` arrays (sin at 0, then each next one aligned to 128 B; 150 points, 7
/// circles: cos at 640, tX at 1280, tY at 5504, 9704 bytes), zero padding between them.
fn circles(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let points = p.int("points", 1, MAX_CIRCLE_POINTS, Some(150))? as usize;
    let circles = p.int("circles", 1, MAX_CIRCLES, Some(7))? as usize;
    let min_radius = p.int("min_radius", 0, MAX_CIRCLE_RADIUS, Some(8))?;
    let step = p.int("step", 0, MAX_CIRCLE_RADIUS, Some(2))?;
    let max_radius = min_radius + step * (circles as i64 - 1);
    if max_radius > MAX_CIRCLE_RADIUS {
        return Err(err(
            Some(if p.given("step") { "step" } else { "min_radius" }),
            format!(
                "circles(circles={circles}, min_radius={min_radius}, step={step}): the largest \
                 radius would be {max_radius}, over {MAX_CIRCLE_RADIUS}"
            ),
        ));
    }
    // find_ellipse.c compute_constants: theta is float, sin/cos are taken in double.
    let theta: Vec<f32> = (0..points)
        .map(|n| ((n as f64 * 2.0 * LEUKOCYTE_PI) / points as f64) as f32)
        .collect();
    let sin: Vec<f32> = theta.iter().map(|&t| (t as f64).sin() as f32).collect();
    let cos: Vec<f32> = theta.iter().map(|&t| (t as f64).cos() as f32).collect();
    let mut tx = Vec::with_capacity(circles * points);
    let mut ty = Vec::with_capacity(circles * points);
    for k in 0..circles {
        let rad = (min_radius + step * k as i64) as f64;
        for &t in &theta {
            // `(int)(cos(theta[n]) * rad)`: C's conversion truncates toward zero.
            tx.push(((t as f64).cos() * rad).trunc() as i32);
            ty.push(((t as f64).sin() * rad).trunc() as i32);
        }
    }
    let (offsets, len) = circles_layout(points, circles);
    let mut constants = vec![0u8; len];
    let parts = [f32s(&sin), f32s(&cos), i32s(&tx), i32s(&ty)];
    for (&o, a) in offsets.iter().zip(&parts) {
        constants[o..o + a.data.len()].copy_from_slice(&a.data);
    }
    let [sin, cos, tx, ty] = parts;
    Ok(named(vec![
        ("sin_angle", sin),
        ("cos_angle", cos),
        ("tx", tx),
        ("ty", ty),
        (
            "constants",
            Array {
                elem_bytes: 4,
                data: constants.into(),
            },
        ),
    ]))
}

// ---------------------------------------------------------------------------------------------
// lavamd_boxes: Rodinia lavaMD's box table.

/// `sizeof(box_str)` in Rodinia lavaMD (cuda/lavaMD/main.h) on a 64-bit host and device:
/// `int x, y, z, number` (16 B), `long offset` (8), `int nn` (4, then 4 of padding), and
/// `nei_str nei[26]` at 32, each `int x, y, z, number; long offset` (24 B): 32 + 26·24 = 656.
pub const LAVAMD_BOX_BYTES: usize = 656;
/// Byte offsets of the fields the kernel reads: `offset`, `nn`, `nei[0]`, and within a
/// `nei_str`, `number`.
pub const LAVAMD_BOX_OFFSET: usize = 16;
pub const LAVAMD_BOX_NN: usize = 24;
pub const LAVAMD_BOX_NEI: usize = 32;
pub const LAVAMD_NEI_BYTES: usize = 24;
pub const LAVAMD_NEI_NUMBER: usize = 12;
const MAX_LAVAMD_BOXES1D: i64 = 64;

/// `lavamd_boxes(boxes1d=10, per_box=100)`: the `box_str` array Rodinia lavaMD's main.c builds
/// and `kernel_gpu_cuda_wrapper` copies to `d_box_gpu`, byte for byte. Boxes are numbered
/// `nh = (z·b + y)·b + x` (z outermost, x innermost; b = boxes1d); box nh has `number = nh`,
/// `offset = nh·per_box` (NUMBER_PAR_PER_BOX), and its neighbours in the order main.c finds
/// them (l, m, n = −1..1 for z, y, x; the box itself and boxes outside the cube skipped), each
/// with its x, y, z, number and offset; `nn` counts them (7 at a corner .. 26 inside). Unused
/// `nei` entries are zero (main.c leaves them unset).
///
/// Arrays: `boxes` (bytes, 656 per box), `nn` (i32 × boxes, the neighbour counts).
fn lavamd_boxes(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let b = p.int("boxes1d", 1, MAX_LAVAMD_BOXES1D, Some(10))?;
    let per_box = p.int("per_box", 1, 1 << 20, Some(100))?;
    let n = (b * b * b) as usize;
    let mut out = vec![0u8; n * LAVAMD_BOX_BYTES];
    let mut nns = Vec::with_capacity(n);
    let put = |out: &mut [u8], at: usize, v: &[u8]| out[at..at + v.len()].copy_from_slice(v);
    for z in 0..b {
        for y in 0..b {
            for x in 0..b {
                let nh = ((z * b + y) * b + x) as usize;
                let at = nh * LAVAMD_BOX_BYTES;
                for (i, v) in [x, y, z, nh as i64].iter().enumerate() {
                    put(&mut out, at + 4 * i, &(*v as i32).to_le_bytes());
                }
                put(
                    &mut out,
                    at + LAVAMD_BOX_OFFSET,
                    &(nh as i64 * per_box).to_le_bytes(),
                );
                let mut nn = 0usize;
                for l in -1..=1 {
                    for m in -1..=1 {
                        for k in -1..=1 {
                            let (nz, ny, nx) = (z + l, y + m, x + k);
                            let inside = [nz, ny, nx].iter().all(|c| (0..b).contains(c));
                            if !inside || (l, m, k) == (0, 0, 0) {
                                continue;
                            }
                            let number = (nz * b + ny) * b + nx;
                            let e = at + LAVAMD_BOX_NEI + nn * LAVAMD_NEI_BYTES;
                            for (i, v) in [nx, ny, nz, number].iter().enumerate() {
                                put(&mut out, e + 4 * i, &(*v as i32).to_le_bytes());
                            }
                            put(&mut out, e + 16, &(number * per_box).to_le_bytes());
                            nn += 1;
                        }
                    }
                }
                put(&mut out, at + LAVAMD_BOX_NN, &(nn as i32).to_le_bytes());
                nns.push(nn as i32);
            }
        }
    }
    Ok(named(vec![("boxes", u8s(out)), ("nn", i32s(&nns))]))
}

// ---------------------------------------------------------------------------------------------
// cutcp: Parboil cutcp's atom bins and neighbour list (cutoff6overlap.cu's host code)

/// Parboil cutcp's constants (main.c: h, cutoff, padding; cutoff6overlap.cu: the bin geometry).
const CUTCP_H: f32 = 0.5;
const CUTCP_CUTOFF: f32 = 12.0;
const CUTCP_PADDING: f32 = 0.5;
const CUTCP_BIN_LENGTH: f32 = 4.0;
const CUTCP_BIN_DEPTH: usize = 8;
/// `NBRLIST_MAXLEN` = 11³: the declared length of `__constant__ int3 NbrList[]`.
const CUTCP_NBRLIST_MAXLEN: usize = 11 * 11 * 11;
const MAX_CUTCP_SIDE: i64 = 400;
const MAX_CUTCP_ATOMS: i64 = 1 << 22;

/// `cutcp(side=40, atoms=6400, zregion, seed)`: the input of Parboil 2.5 cutcp's
/// `cuda_cutoff_potential_lattice6overlap` (benchmarks/cutcp/src/cuda/cutoff6overlap.cu), built as
/// its host code builds it from `atoms` atoms placed uniformly at random in a cube of `side` Å
/// (a stand-in for the water boxes watbox.sl40 / sl100; charges −0.834, 0.417, 0.417 in turn, as
/// TIP3P water's O, H, H). main.c: h = 0.5, cutoff 12, the atoms' bounding box padded by 0.5;
/// the lattice is floor((hi − lo)/h) + 1 points a side, padded to regions of 8³; atoms are
/// hashed into 4 Å bins of 8 slots, with c = ceil(cutoff/4) = 3 bins of padding on every side;
/// a bin's 9th and later atoms go to the CPU ("extra"); the neighbour list holds the bin
/// offsets (i, j, k) in −c..=c with (i² + j² + k²)·16 < (cutoff + √3·4)², in k, j, i order.
///
/// Arrays: `bins` (f32 × 32 per bin: the whole `binBaseAddr`, 8 float4 (x, y, z, q) per bin,
/// empty slots zero), `constants` (4-byte words: `NbrListLen` at byte 0, `NbrList` (x, y, z
/// per entry) at byte 128, as GPGPU-Sim 3.2.2 places the module's two `__constant__` arrays,
/// 128 + 12·1331 bytes), `fill` (i32 per region of plane `zregion` (index by·xRegionDim + bx)
/// and neighbour entry n, region-major: ((i+8) << 12) | ((j+8) << 8) | ((k+8) << 4) | the atom
/// count of that region's neighbour bin: what the kernel's atom loop finds in shared memory),
/// and `dims` (i32: nx, ny, nz, xRegionDim, yRegionDim, zRegionDim, binDim x, y, z, c,
/// NbrListLen, zregion, atoms binned, extra atoms, binZero's offset in bins).
fn cutcp(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let side = p.int("side", 1, MAX_CUTCP_SIDE, Some(40))? as f32;
    let natoms = p.int("atoms", 1, MAX_CUTCP_ATOMS, Some(6400))? as usize;
    let seed = p.seed()?;
    let mut rng = Rng::new(seed, 12);
    let atoms: Vec<[f32; 4]> = (0..natoms)
        .map(|n| {
            let mut a = [0f32; 4];
            for v in &mut a[..3] {
                *v = (rng.unit() * side as f64) as f32;
            }
            a[3] = if n % 3 == 0 { -0.834 } else { 0.417 };
            a
        })
        .collect();
    // main.c: get_atom_extent, padding, lattice_from_bounding_box.
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for a in &atoms {
        for d in 0..3 {
            lo[d] = lo[d].min(a[d]);
            hi[d] = hi[d].max(a[d]);
        }
    }
    let (lo, hi) = (lo.map(|v| v - CUTCP_PADDING), hi.map(|v| v + CUTCP_PADDING));
    let n: [i64; 3] = std::array::from_fn(|d| ((hi[d] - lo[d]) / CUTCP_H).floor() as i64 + 1);
    // cutoff6overlap.cu: regions of 8³, bins with c bins of padding.
    let rd: [i64; 3] = n.map(|v| (v as f32 / 8.0).ceil() as i64);
    let inv = 1.0 / CUTCP_BIN_LENGTH;
    let c = (CUTCP_CUTOFF * inv).ceil() as i64;
    let bd: [i64; 3] = rd.map(|r| ((8 * r) as f32 * CUTCP_H * inv).ceil() as i64 + 2 * c);
    let nbins = (bd[0] * bd[1] * bd[2]) as usize;
    check_cap("atoms", "cutcp's bins", nbins as u64 * 128)?;
    let zero = ((c * bd[1] + c) * bd[0] + c) as usize;
    let zregion = p.int("zregion", 0, rd[2] - 1, Some(rd[2] / 2))?;
    let mut bins = vec![0f32; nbins * 4 * CUTCP_BIN_DEPTH];
    let mut count = vec![0usize; nbins];
    let (mut binned, mut extra) = (0i32, 0i32);
    for a in &atoms {
        let pos: [f32; 3] = std::array::from_fn(|d| a[d] - lo[d]);
        let b: [i64; 3] = pos.map(|v| (v * inv).floor() as i64);
        if (0..3).all(|d| b[d] >= -c && b[d] < bd[d] - c) && a[3] != 0.0 {
            let index = (zero as i64 + (b[2] * bd[1] + b[1]) * bd[0] + b[0]) as usize;
            if count[index] < CUTCP_BIN_DEPTH {
                let at = 4 * (CUTCP_BIN_DEPTH * index + count[index]);
                bins[at..at + 3].copy_from_slice(&pos);
                bins[at + 3] = a[3];
                count[index] += 1;
                binned += 1;
            } else {
                extra += 1;
            }
        }
    }
    // The neighbour list: 8h = 4 = BIN_LENGTH, so the source's first branch (one cell).
    let s = 3f32.sqrt();
    let r2 = (CUTCP_CUTOFF + s * CUTCP_BIN_LENGTH) * (CUTCP_CUTOFF + s * CUTCP_BIN_LENGTH);
    let mut nbr = Vec::new();
    for k in -c..=c {
        for j in -c..=c {
            for i in -c..=c {
                if ((i * i + j * j + k * k) as f32) * CUTCP_BIN_LENGTH * CUTCP_BIN_LENGTH >= r2 {
                    continue;
                }
                nbr.push([i, j, k]);
            }
        }
    }
    assert!(nbr.len() <= CUTCP_NBRLIST_MAXLEN);
    let mut constants = vec![0i32; (CONST_ALIGN + 12 * CUTCP_NBRLIST_MAXLEN) / 4];
    constants[0] = nbr.len() as i32;
    for (e, o) in nbr.iter().enumerate() {
        for d in 0..3 {
            constants[CONST_ALIGN / 4 + 3 * e + d] = o[d] as i32;
        }
    }
    // The atom count of each neighbour bin of each region of plane zregion. myBinIndex is
    // floorf((8·region + 4)·h·BIN_INVLEN), as the kernel computes it.
    let my = |r: i64| ((8 * r + 4) as f32 * CUTCP_H * inv).floor() as i64;
    let mut fill = Vec::with_capacity((rd[0] * rd[1]) as usize * nbr.len());
    for by in 0..rd[1] {
        for bx in 0..rd[0] {
            for o in &nbr {
                let (i, j, k) = (my(bx) + o[0], my(by) + o[1], my(zregion) + o[2]);
                let index = (zero as i64 + (k * bd[1] + j) * bd[0] + i) as usize;
                let pack = ((o[0] + 8) << 12) | ((o[1] + 8) << 8) | ((o[2] + 8) << 4);
                fill.push((pack | count[index] as i64) as i32);
            }
        }
    }
    let dims: Vec<i32> = [
        n[0],
        n[1],
        n[2],
        rd[0],
        rd[1],
        rd[2],
        bd[0],
        bd[1],
        bd[2],
        c,
        nbr.len() as i64,
        zregion,
        binned as i64,
        extra as i64,
        zero as i64,
    ]
    .iter()
    .map(|&v| v as i32)
    .collect();
    Ok(named(vec![
        ("bins", f32s(&bins)),
        ("constants", i32s(&constants)),
        ("fill", i32s(&fill)),
        ("dims", i32s(&dims)),
    ]))
}

// ---------------------------------------------------------------------------------------------
// tpacf_bins: Parboil tpacf's angular bin boundaries (`dev_binb`)

/// The fixed-point scale of `tpacf_bins`'s `fixed` array: a cosine c is `round(c · 2^30)`.
pub const TPACF_FIXED_ONE: i64 = 1 << 30;

/// Parboil tpacf's `initBinB` (benchmarks/tpacf/src/cuda/tpacf_kernel.cu): the `bins + 1`
/// boundaries `binb[k] = cos(10^(log10(min_arcmin) + k / per_dec) / 60 · π/180)`, computed in
/// double and stored as float (`REAL` is float), the cosines of angles growing by 10^(1/per_dec)
/// from `min_arcmin` arcminutes, so decreasing in k. Arrays: `binb` (f32 × (bins + 1), the
/// `__constant__` array as the source holds it) and `fixed` (i32 × (bins + 1), each float
/// times 2^30 rounded to nearest), for kernels that compare a cosine as an integer value.
fn tpacf_bins(p: &Params) -> Result<Vec<(String, Array)>, InputError> {
    let bins = p.int("bins", 1, 1024, Some(20))?;
    let per_dec = p.int("per_dec", 1, 1000, Some(5))?;
    let min_arcmin = p.int("min_arcmin", 1, 21_600, Some(1))?;
    let binb: Vec<f32> = (0..=bins)
        .map(|k| {
            let arcmin = 10f64.powf((min_arcmin as f64).log10() + k as f64 * 1.0 / per_dec as f64);
            (arcmin / 60.0 * std::f64::consts::PI / 180.0).cos() as f32
        })
        .collect();
    let fixed: Vec<i32> = binb
        .iter()
        .map(|&c| (c as f64 * TPACF_FIXED_ONE as f64).round() as i32)
        .collect();
    Ok(named(vec![("binb", f32s(&binb)), ("fixed", i32s(&fixed))]))
}

// ---------------------------------------------------------------------------------------------
// file: .npy (NumPy format 1.0/2.0/3.0) or raw little-endian.

/// Element types of raw files, with their sizes.
const TYPES: &[(&str, u32)] = &[
    ("i8", 1),
    ("u8", 1),
    ("i16", 2),
    ("u16", 2),
    ("i32", 4),
    ("u32", 4),
    ("i64", 8),
    ("u64", 8),
    ("f32", 4),
    ("f64", 8),
];

fn file(p: &Params, dir: Option<&Path>) -> Result<Vec<(String, Array)>, InputError> {
    let path = p.string("path")?;
    let ty = if p.given("type") {
        let names: Vec<&'static str> = TYPES.iter().map(|t| t.0).collect();
        Some(p.word("type", &names, None)?)
    } else {
        None
    };
    let Some(dir) = dir else {
        return Err(err(
            Some("path"),
            "file inputs need a .kern file on disk (built-in kernels cannot read files)".to_string(),
        ));
    };
    let full = dir.join(path);
    let io = |e: std::io::Error| {
        err(
            Some("path"),
            format!("cannot read `{path}` ({}): {e}", full.display()),
        )
    };
    let size = std::fs::metadata(&full).map_err(io)?.len();
    check_cap("path", &format!("`{path}`"), size)?;
    let bytes = std::fs::read(&full).map_err(io)?;
    let is_npy = Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let array = if is_npy {
        let (file_ty, elem_bytes, start) =
            parse_npy(&bytes).map_err(|m| err(Some("path"), format!("`{path}`: {m}")))?;
        if let Some(t) = ty {
            if t != file_ty {
                return Err(err(
                    Some("type"),
                    format!("`type={t}` but `{path}` holds {file_ty}"),
                ));
            }
        }
        Array {
            elem_bytes,
            data: bytes[start..].into(),
        }
    } else {
        let Some(t) = ty else {
            return Err(err(
                None,
                format!(
                    "file() needs `type=` for the raw file `{path}` (one of {}); only .npy files carry their type",
                    TYPES.iter().map(|t| t.0).collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        let elem_bytes = TYPES.iter().find(|x| x.0 == t).map_or(1, |x| x.1);
        if !(bytes.len() as u64).is_multiple_of(elem_bytes as u64) {
            return Err(err(
                Some("path"),
                format!(
                    "`{path}` has {} bytes, not a multiple of {elem_bytes} (type={t})",
                    bytes.len()
                ),
            ));
        }
        Array {
            elem_bytes,
            data: bytes.into(),
        }
    };
    if array.is_empty() {
        return Err(err(Some("path"), format!("`{path}` holds no data")));
    }
    Ok(named(vec![("values", array)]))
}

/// Parses a .npy header; returns (type name, element bytes, offset of the data). Accepts
/// little-endian (or byte-order-free) integer, bool and float dtypes in C order, any shape.
fn parse_npy(b: &[u8]) -> Result<(&'static str, u32, usize), String> {
    if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".to_string());
    }
    let (hlen, hstart) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        v => return Err(format!("unsupported .npy format version {v}.{}", b[7])),
    };
    let header = b
        .get(hstart..hstart + hlen)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("truncated or non-text .npy header")?;
    let dict =
        NpyHeader::parse(header).map_err(|m| format!("bad .npy header `{}`: {m}", header.trim_end()))?;
    let descr = dict.descr.ok_or("the .npy header has no 'descr'")?;
    let shape = dict.shape.ok_or("the .npy header has no 'shape'")?;
    let (order, code) = descr.split_at(descr.len().min(1));
    if order == ">" {
        return Err(format!(
            "dtype '{descr}' is big-endian; save the array little-endian (astype('<{code}'))"
        ));
    }
    let (name, size) = match (order, code) {
        ("<" | "|" | "=", "i1") => ("i8", 1),
        ("<" | "|" | "=", "u1" | "b1") => ("u8", 1),
        ("<" | "=", "i2") => ("i16", 2),
        ("<" | "=", "u2") => ("u16", 2),
        ("<" | "=", "i4") => ("i32", 4),
        ("<" | "=", "u4") => ("u32", 4),
        ("<" | "=", "i8") => ("i64", 8),
        ("<" | "=", "u8") => ("u64", 8),
        ("<" | "=", "f4") => ("f32", 4),
        ("<" | "=", "f8") => ("f64", 8),
        _ => {
            return Err(format!(
                "dtype '{descr}' is not supported (integers i1..i8/u1..u8, bool, f4, f8, little-endian)"
            ))
        }
    };
    if dict.fortran_order && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(
            "Fortran-order arrays are not supported; save in C order (np.ascontiguousarray)".to_string(),
        );
    }
    let count = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or("shape too large")?;
    let data = (b.len() - hstart - hlen) as u64;
    if count.checked_mul(size as u64) != Some(data) {
        return Err(format!(
            "the header says shape {shape:?} of '{descr}' ({count} elements), but the file has {data} bytes of data"
        ));
    }
    Ok((name, size, hstart + hlen))
}

/// The three keys of a .npy header dict: `{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }`.
#[derive(Default)]
struct NpyHeader {
    descr: Option<String>,
    fortran_order: bool,
    shape: Option<Vec<u64>>,
}

impl NpyHeader {
    fn parse(s: &str) -> Result<Self, String> {
        let mut c = s.trim().chars().peekable();
        let mut h = NpyHeader::default();
        fn ws(c: &mut std::iter::Peekable<std::str::Chars>) {
            while c.next_if(|x| x.is_whitespace()).is_some() {}
        }
        fn expect(c: &mut std::iter::Peekable<std::str::Chars>, ch: char) -> Result<(), String> {
            ws(c);
            match c.next() {
                Some(x) if x == ch => Ok(()),
                other => Err(format!("expected `{ch}`, found {other:?}")),
            }
        }
        fn string(c: &mut std::iter::Peekable<std::str::Chars>) -> Result<String, String> {
            ws(c);
            let q = c
                .next()
                .filter(|&q| q == '\'' || q == '"')
                .ok_or("expected a quoted string")?;
            let mut out = String::new();
            for x in c.by_ref() {
                if x == q {
                    return Ok(out);
                }
                out.push(x);
            }
            Err("unterminated string".to_string())
        }
        fn word(c: &mut std::iter::Peekable<std::str::Chars>) -> String {
            ws(c);
            let mut out = String::new();
            while let Some(x) = c.next_if(|x| x.is_ascii_alphanumeric() || *x == '_') {
                out.push(x);
            }
            out
        }
        expect(&mut c, '{')?;
        loop {
            ws(&mut c);
            if c.next_if_eq(&'}').is_some() {
                break;
            }
            let key = string(&mut c)?;
            expect(&mut c, ':')?;
            ws(&mut c);
            match key.as_str() {
                "descr" if c.peek() == Some(&'[') => {
                    return Err("structured dtypes are not supported".to_string())
                }
                "descr" => h.descr = Some(string(&mut c)?),
                "fortran_order" => {
                    h.fortran_order = match word(&mut c).as_str() {
                        "True" => true,
                        "False" => false,
                        w => return Err(format!("fortran_order `{w}`")),
                    }
                }
                "shape" => {
                    expect(&mut c, '(')?;
                    let mut dims = Vec::new();
                    loop {
                        ws(&mut c);
                        if c.next_if_eq(&')').is_some() {
                            break;
                        }
                        let w = word(&mut c);
                        let w = w.trim_end_matches('L'); // Python 2 longs
                        dims.push(w.parse::<u64>().map_err(|_| format!("bad dimension `{w}`"))?);
                        ws(&mut c);
                        c.next_if_eq(&',');
                    }
                    h.shape = Some(dims);
                }
                k => return Err(format!("unknown key '{k}'")),
            }
            ws(&mut c);
            c.next_if_eq(&',');
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Instant;

    fn int(name: &str, v: i64) -> Arg {
        Arg {
            name: name.into(),
            value: ArgValue::Int(v),
        }
    }
    fn word(name: &str, v: &str) -> Arg {
        Arg {
            name: name.into(),
            value: ArgValue::Word(v.into()),
        }
    }
    fn string(name: &str, v: &str) -> Arg {
        Arg {
            name: name.into(),
            value: ArgValue::Str(v.into()),
        }
    }

    /// Generates afresh (not from the memo), so that determinism and speed are the
    /// generator's own.
    fn gen(g: &str, args: &[Arg]) -> Vec<(String, Array)> {
        generate_uncached(g, args, None).unwrap_or_else(|e| panic!("{g}: {e}"))
    }

    #[test]
    fn a_second_generation_shares_the_first_ones_arrays_but_a_file_is_read_again() {
        let args = [int("n", 4321), int("seed", 99)];
        let (a, b) = (
            generate("perm", &args, None).unwrap(),
            generate("perm", &args, None).unwrap(),
        );
        assert_eq!(a, gen("perm", &args));
        assert!(Arc::ptr_eq(&a[0].1.data, &b[0].1.data), "the memo was not used");
        let other = generate("perm", &[int("n", 4321), int("seed", 98)], None).unwrap();
        assert_ne!(a, other, "another seed must not come from the memo");
        let dir = TempDir::new();
        let read = |bytes: &[u8]| {
            dir.write("m.bin", bytes);
            let file = [string("path", "m.bin"), word("type", "u8")];
            generate("file", &file, Some(dir.0.as_path())).unwrap()[0]
                .1
                .data
                .to_vec()
        };
        assert_eq!(read(&[1, 2, 3]), [1, 2, 3]);
        assert_eq!(read(&[4, 5]), [4, 5], "a changed file must be read again");
    }

    fn u24(b: &[u8], at: usize) -> u32 {
        b[at] as u32 | (b[at + 1] as u32) << 8 | (b[at + 2] as u32) << 16
    }

    /// Walks `s` from the root through the flattened texels as the kernel does (child by
    /// the next character, then the edge's characters in the reference); returns the node
    /// where `s` ends, or None if `s` is not in the tree.
    fn walk_tree(nodes: &[u8], children: &[u8], text: &[u8], s: &[u8]) -> Option<u32> {
        let (mut cur, mut i) = (1u32, 0usize);
        while i < s.len() {
            let slot = BASES.iter().position(|&b| b == s[i])?;
            let child = u24(children, 16 * cur as usize + 3 * slot);
            if child == 0 || children[16 * cur as usize + 15] != 0 {
                return None;
            }
            let nd = 16 * child as usize;
            let (start, end) = (u24(nodes, nd + 6) as usize, u24(nodes, nd + 9) as usize);
            assert_eq!(u24(nodes, nd), cur, "parent of {child}");
            for &r in &text[start..=end] {
                if i == s.len() {
                    break;
                }
                if r != s[i] {
                    return None;
                }
                i += 1;
            }
            cur = child;
        }
        Some(cur)
    }

    /// The tree is the suffix tree of the reference: every suffix (with `$`) ends at a leaf
    /// whose leaf id is its position, strings not in the reference are not found, depths add
    /// up, internal nodes branch, and suffix links spell the node's label minus its first
    /// character. Reads are the reference's substrings, as genreads draws them.
    #[test]
    fn suffix_tree_is_the_suffix_tree_of_the_reference() {
        let out = gen(
            "suffix_tree",
            &[
                int("len", 3000),
                int("reads", 50),
                int("read_len", 25),
                int("seed", 4),
            ],
        );
        let (text, nodes, children) = (
            &get(&out, "ref").data,
            &get(&out, "nodes").data,
            &get(&out, "children").data,
        );
        assert_eq!(text.len(), 3001);
        assert_eq!(text[3000], b'$');
        assert!(text[..3000].iter().all(|b| b"ACGT".contains(b)));
        let count = nodes.len() / 16;
        assert_eq!(children.len(), nodes.len());
        // A suffix tree of n + 1 suffixes has n + 1 leaves and at most n internal nodes.
        let leaves = (1..count).filter(|&i| children[16 * i + 15] != 0).count();
        assert_eq!(leaves, 3001);
        assert!(count - 1 - leaves <= 3000 && count - 1 - leaves > 1000);
        for i in 0..=3000 {
            let leaf = walk_tree(nodes, children, text, &text[i..]).unwrap_or_else(|| panic!("suffix {i}"));
            let cd = 16 * leaf as usize;
            assert_eq!(children[cd + 15], text[i], "leafchar of suffix {i}");
            assert_eq!(u24(children, cd) as usize, i + 1, "leaf id of suffix {i}");
            assert_eq!(u24(nodes, cd + 12) as usize, 3001 - i, "depth of suffix {i}");
        }
        // Internal nodes have at least two children, and their suffix links drop one character.
        for id in 2..count {
            let cd = 16 * id;
            if children[cd + 15] != 0 {
                continue;
            }
            let kids = (0..5).filter(|&b| u24(children, cd + 3 * b) != 0).count();
            assert!(kids >= 2, "node {id} has {kids} children");
            let depth = u24(nodes, cd + 12) as usize;
            let end = u24(nodes, cd + 9) as usize;
            let label = &text[end + 1 - depth..=end];
            assert_eq!(walk_tree(nodes, children, text, label), Some(id as u32));
            let link = u24(nodes, cd + 3);
            assert_eq!(
                walk_tree(nodes, children, text, &label[1..]),
                Some(link),
                "link of {id}"
            );
        }
        // The root is id 1 (GOROOT), numbered breadth first: its children follow it.
        let root_kids: Vec<u32> = (0..4).map(|b| u24(children, 16 + 3 * b)).collect();
        assert!(root_kids.iter().all(|&k| (2..=6).contains(&k)), "{root_kids:?}");
        // A random 40-mer is (almost surely) not in a 3 kb reference.
        assert_eq!(
            walk_tree(nodes, children, text, b"ACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA"),
            None
        );
        // Reads: 'q', 25 reference bases, '\0', at the recorded addresses.
        let (q, addrs) = (&get(&out, "queries").data, as_i32(get(&out, "addrs")));
        assert_eq!(as_i32(get(&out, "lengths")), vec![25; 50]);
        for (r, &a) in addrs.iter().enumerate() {
            let a = a as usize;
            assert_eq!(a, 27 * r);
            assert_eq!((q[a], q[a + 26]), (b'q', 0));
            let read = &q[a + 1..a + 26];
            assert!(
                text.windows(25).any(|w| w == read),
                "read {r} is in the reference"
            );
        }
        // With mismatches, some reads differ from every reference window.
        let m = gen(
            "suffix_tree",
            &[
                int("len", 3000),
                int("reads", 50),
                int("read_len", 25),
                int("mismatch", 100),
                int("seed", 4),
            ],
        );
        let mq = &get(&m, "queries").data;
        let off = (0..50)
            .filter(|r| !text.windows(25).any(|w| w == &mq[27 * r + 1..27 * r + 26]))
            .count();
        assert!(off > 20, "{off} reads with mismatches");
    }

    #[test]
    fn suffix_tree_is_deterministic_and_capped() {
        let args = |seed| {
            [
                int("len", 500),
                int("reads", 4),
                int("read_len", 10),
                int("seed", seed),
            ]
        };
        assert_eq!(gen("suffix_tree", &args(1)), gen("suffix_tree", &args(1)));
        assert_ne!(
            get(&gen("suffix_tree", &args(1)), "ref"),
            get(&gen("suffix_tree", &args(2)), "ref")
        );
        let e = |a: &[Arg]| generate("suffix_tree", a, None).unwrap_err();
        let x = e(&[
            int("len", MAX_SUFFIX_TREE_LEN + 1),
            int("reads", 1),
            int("read_len", 10),
            int("seed", 1),
        ]);
        assert_eq!(x.arg.as_deref(), Some("len"));
        assert!(x.message.contains("len must be 1 ..= 6000000"), "{x}");
        let x = e(&[
            int("len", 5),
            int("reads", 1),
            int("read_len", 10),
            int("seed", 1),
        ]);
        assert_eq!(x.arg.as_deref(), Some("read_len"));
        assert!(x.message.contains("longer than the reference"), "{x}");
        let x = e(&[
            int("len", 50),
            int("reads", 1),
            int("read_len", 2000),
            int("seed", 1),
        ]);
        assert!(x.message.contains("read_len must be 1 ..= 1024"), "{x}");
        let x = e(&[
            int("len", 50),
            int("reads", 1),
            int("read_len", 10),
            int("mismatch", 1001),
            int("seed", 1),
        ]);
        assert_eq!(x.arg.as_deref(), Some("mismatch"));
        let x = e(&[int("len", 50), int("reads", 1), int("read_len", 10)]);
        assert!(x.message.contains("needs the argument `seed`"), "{x}");
    }
    fn get<'a>(out: &'a [(String, Array)], name: &str) -> &'a Array {
        &out.iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no array {name}"))
            .1
    }
    fn as_i32(a: &Array) -> Vec<i32> {
        assert_eq!(a.elem_bytes, 4);
        a.data
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    fn as_f32(a: &Array) -> Vec<f32> {
        assert_eq!(a.elem_bytes, 4);
        a.data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    fn fails(g: &str, args: &[Arg], dir: Option<&Path>) -> InputError {
        match generate(g, args, dir) {
            Ok(_) => panic!("{g}({args:?}) should fail"),
            Err(e) => e,
        }
    }
    fn graph_args(nodes: i64, degree: i64, dist: &str, seed: i64) -> Vec<Arg> {
        vec![
            int("nodes", nodes),
            int("degree", degree),
            word("dist", dist),
            int("seed", seed),
        ]
    }
    fn sparse_args(rows: i64, cols: i64, nnz: i64, dist: &str, seed: i64) -> Vec<Arg> {
        vec![
            int("rows", rows),
            int("cols", cols),
            int("nnz_per_row", nnz),
            word("dist", dist),
            int("seed", seed),
        ]
    }

    #[test]
    fn inputs_deterministic_and_seed_dependent() {
        type Case = (&'static str, Box<dyn Fn(i64) -> Vec<Arg>>);
        let cases: Vec<Case> = vec![
            ("graph", Box::new(|s| graph_args(4096, 6, "uniform", s))),
            ("graph", Box::new(|s| graph_args(4096, 6, "powerlaw", s))),
            ("sparse", Box::new(|s| sparse_args(1000, 800, 12, "powerlaw", s))),
            ("perm", Box::new(|s| vec![int("n", 1000), int("seed", s)])),
            (
                "uniform",
                Box::new(|s| vec![int("n", 1000), int("lo", -5), int("hi", 100), int("seed", s)]),
            ),
        ];
        for (g, args) in &cases {
            assert_eq!(gen(g, &args(7)), gen(g, &args(7)), "{g} same seed");
            assert_ne!(gen(g, &args(7)), gen(g, &args(8)), "{g} other seed");
        }
    }

    /// Checks the CSR shape and that `nodes` mirrors `offsets`; returns (offsets, edges).
    fn check_graph(out: &[(String, Array)], n: usize) -> (Vec<i32>, Vec<i32>) {
        let off = as_i32(get(out, "offsets"));
        let edges = as_i32(get(out, "edges"));
        assert_eq!(off.len(), n + 1);
        assert_eq!(off[0], 0);
        assert!(off.windows(2).all(|w| w[0] <= w[1]), "offsets monotone");
        assert_eq!(*off.last().unwrap() as usize, edges.len());
        assert!(edges.iter().all(|&e| e >= 0 && (e as usize) < n));
        let nodes = as_i32(get(out, "nodes"));
        assert_eq!(nodes.len(), 2 * n);
        for i in 0..n {
            assert_eq!(nodes[2 * i], off[i]);
            assert_eq!(nodes[2 * i + 1], off[i + 1] - off[i]);
        }
        // Undirected, as graphgen stores each edge both ways: a -> b as often as b -> a.
        let mut fwd: Vec<(i32, i32)> = Vec::new();
        for v in 0..n {
            for &w in &edges[off[v] as usize..off[v + 1] as usize] {
                fwd.push((v as i32, w));
            }
        }
        let mut rev: Vec<(i32, i32)> = fwd.iter().map(|&(a, b)| (b, a)).collect();
        fwd.sort_unstable();
        rev.sort_unstable();
        assert_eq!(fwd, rev, "edges symmetric");
        (off, edges)
    }

    #[test]
    fn inputs_graph_shape_degree_and_bfs_state() {
        let n = 65536;
        for dist in ["uniform", "powerlaw"] {
            let out = gen("graph", &graph_args(n as i64, 6, dist, 1));
            let (off, edges) = check_graph(&out, n);
            let avg = edges.len() as f64 / n as f64;
            assert!((avg - 6.0).abs() < 0.1, "{dist}: average degree {avg}");
            let deg: Vec<i32> = off.windows(2).map(|w| w[1] - w[0]).collect();
            let max = *deg.iter().max().unwrap();
            if dist == "uniform" {
                // graphgen: 2..=4 started, plus ~3 received (Poisson): no hubs.
                assert!(max < 30, "uniform max degree {max}");
                assert!(deg.iter().all(|&d| d >= 2), "every node starts at least 2 edges");
            } else {
                assert!(max > 300, "powerlaw max degree {max}");
            }

            // BFS state: recompute levels independently and compare.
            let level = as_i32(get(&out, "level"));
            let mut want = vec![-1; n];
            want[0] = 0;
            let mut frontier = vec![0usize];
            let mut sizes = vec![1usize];
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for &v in &frontier {
                    for &w in &edges[off[v] as usize..off[v + 1] as usize] {
                        if want[w as usize] < 0 {
                            want[w as usize] = want[v] + 1;
                            next.push(w as usize);
                        }
                    }
                }
                if !next.is_empty() {
                    sizes.push(next.len());
                }
                frontier = next;
            }
            assert_eq!(level, want);
            let big = sizes
                .iter()
                .enumerate()
                .max_by_key(|(l, s)| (**s, std::cmp::Reverse(*l)))
                .unwrap()
                .0;
            println!("{dist}: max degree {max}, frontier sizes {sizes:?}, largest at level {big}");
            assert!(
                big > 0 && sizes[big] > n / 10,
                "{dist}: largest frontier {sizes:?}"
            );
            assert_eq!(as_i32(get(&out, "frontier")), vec![big as i32, sizes[big] as i32]);
            let mask = &get(&out, "mask").data;
            let visited = &get(&out, "visited").data;
            let cost = as_i32(get(&out, "cost"));
            for v in 0..n {
                assert_eq!(mask[v], (want[v] == big as i32) as u8);
                assert_eq!(visited[v], (want[v] >= 0 && want[v] <= big as i32) as u8);
                assert_eq!(cost[v], if want[v] <= big as i32 { want[v] } else { -1 });
            }
            assert_eq!(get(&out, "updating_mask").data.len(), n);
            assert!(get(&out, "updating_mask").data.iter().all(|&b| b == 0));
            assert_eq!(as_i32(get(&out, "levels")), vec![sizes.len() as i32]);

            // Every launch of the host loop: Kernel's state at level k and what Kernel2 of the
            // same iteration finds; past the last level the frontier is empty.
            for k in 0..=sizes.len() {
                let mut args = graph_args(n as i64, 6, dist, 1);
                args.push(int("launch", k as i64));
                let out = gen("graph", &args);
                let size = sizes.get(k).copied().unwrap_or(0);
                assert_eq!(as_i32(get(&out, "frontier")), vec![k as i32, size as i32]);
                let (mask, next) = (&get(&out, "mask").data, &get(&out, "updating_next").data);
                let visited = &get(&out, "visited").data;
                for v in 0..n {
                    assert_eq!(mask[v], (want[v] == k as i32) as u8, "{dist} launch {k}");
                    assert_eq!(next[v], (want[v] == k as i32 + 1) as u8, "{dist} launch {k}");
                    assert_eq!(visited[v], (want[v] >= 0 && want[v] <= k as i32) as u8);
                }
                assert_eq!(mask.iter().filter(|&&b| b != 0).count(), size);
            }
        }
    }

    #[test]
    fn inputs_graph_source_and_degree_parity() {
        let mut args = graph_args(1000, 5, "uniform", 3);
        args.push(int("source", 17));
        let out = gen("graph", &args);
        let (_, edges) = check_graph(&out, 1000);
        assert_eq!(as_i32(get(&out, "level"))[17], 0);
        assert!((edges.len() as f64 / 1000.0 - 5.0).abs() < 0.3);
    }

    /// Decodes Parboil's JDS arrays the way spmv_jds walks them; returns (row, col, value) sorted.
    fn decode_jds(out: &[(String, Array)], rows: usize) -> Vec<(i32, i32, u32)> {
        let ptr = as_i32(get(out, "jds_ptr"));
        let zcnt = as_i32(get(out, "sh_zcnt"));
        let perm = as_i32(get(out, "perm"));
        let data = as_f32(get(out, "data"));
        let index = as_i32(get(out, "index"));
        assert_eq!(perm.len(), rows);
        assert_eq!(zcnt.len(), rows.div_ceil(32));
        assert_eq!(*ptr.last().unwrap() as usize, data.len());
        assert_eq!(index.len(), data.len());
        assert_eq!(ptr.len() as i32, zcnt[0] + 1, "depth = longest row + 1");
        assert!(zcnt.windows(2).all(|w| w[0] >= w[1]), "groups longest first");
        let mut got = Vec::new();
        for ix in 0..rows {
            for k in 0..zcnt[ix / 32] as usize {
                let j = ptr[k] as usize + ix;
                assert!(j < ptr[k + 1] as usize, "row {ix} entry {k} inside column {k}");
                if index[j] >= 0 {
                    got.push((perm[ix], index[j], data[j].to_bits()));
                } else {
                    assert_eq!(data[j], 0.0, "padding is zero");
                }
            }
        }
        got.sort_unstable();
        got
    }

    fn decode_csr(out: &[(String, Array)], rows: usize, cols: usize) -> Vec<(i32, i32, u32)> {
        let ptr = as_i32(get(out, "csr_ptr"));
        let c = as_i32(get(out, "csr_cols"));
        let v = as_f32(get(out, "csr_vals"));
        assert_eq!(ptr.len(), rows + 1);
        assert!(ptr.windows(2).all(|w| w[0] < w[1]), "every row has a nonzero");
        let mut got = Vec::new();
        for r in 0..rows {
            let row = &c[ptr[r] as usize..ptr[r + 1] as usize];
            assert!(row.windows(2).all(|w| w[0] < w[1]), "columns distinct, ascending");
            assert!(row.iter().all(|&x| x >= 0 && (x as usize) < cols));
            for e in ptr[r] as usize..ptr[r + 1] as usize {
                assert!(v[e] > 0.0 && v[e] <= 1.0);
                got.push((r as i32, c[e], v[e].to_bits()));
            }
        }
        got
    }

    #[test]
    fn inputs_sparse_jds_and_ell_decode_to_csr() {
        for (rows, cols, nnz, dist) in [
            (1000, 700, 9, "uniform"),
            (4096, 4096, 24, "powerlaw"),
            (77, 50, 50, "uniform"),
        ] {
            let out = gen("sparse", &sparse_args(rows, cols, nnz, dist, 5));
            let (rows, cols) = (rows as usize, cols as usize);
            let csr = decode_csr(&out, rows, cols);
            let avg = csr.len() as f64 / rows as f64;
            assert!(
                (avg - nnz as f64).abs() < 0.05 * nnz as f64 + 0.5,
                "{dist}: {avg} per row"
            );
            assert_eq!(decode_jds(&out, rows), csr, "{dist}: JDS = CSR");
            let perm = as_i32(get(&out, "perm"));
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..rows as i32).collect::<Vec<_>>());

            let ec = as_i32(get(&out, "ell_cols"));
            let ev = as_f32(get(&out, "ell_vals"));
            let width = ec.len() / rows;
            assert_eq!(ec.len(), rows * width);
            let mut ell = Vec::new();
            for r in 0..rows {
                for k in 0..width {
                    if ev[k * rows + r] != 0.0 {
                        ell.push((r as i32, ec[k * rows + r], ev[k * rows + r].to_bits()));
                    } else {
                        assert_eq!(ec[k * rows + r], 0, "ELL padding column 0");
                    }
                }
            }
            ell.sort_unstable();
            assert_eq!(ell, csr, "{dist}: ELL = CSR");
            if dist == "powerlaw" {
                let ptr = as_i32(get(&out, "csr_ptr"));
                let longest = ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap();
                assert!(longest > 10 * nnz as i32, "powerlaw longest row {longest}");
                assert!(
                    as_i32(get(&out, "index")).contains(&-1),
                    "Parboil pads with index -1"
                );
            } else {
                assert_eq!(width, nnz as usize);
            }
        }
    }

    #[test]
    fn inputs_sparse_band_and_form() {
        let mut args = sparse_args(2000, 2000, 8, "uniform", 1);
        args.push(int("band", 16));
        let out = gen("sparse", &args);
        let ptr = as_i32(get(&out, "csr_ptr"));
        let c = as_i32(get(&out, "csr_cols"));
        for r in 0..2000usize {
            for &x in &c[ptr[r] as usize..ptr[r + 1] as usize] {
                assert!((x as i64 - r as i64).abs() <= 16, "row {r} col {x}");
            }
        }
        let mut args = sparse_args(300, 300, 4, "uniform", 1);
        args.push(word("form", "jds"));
        let names: Vec<String> = gen("sparse", &args).into_iter().map(|x| x.0).collect();
        assert_eq!(names, ["jds_ptr", "sh_zcnt", "perm", "data", "index"]);
    }

    /// fem2d's pattern, recomputed from the mesh: row (x, y)'s columns are the nodes of the
    /// elements it lies in, counted by brute force over every element.
    #[test]
    fn fem2d_is_the_meshs_element_adjacency() {
        for (elements, order, numbering) in [(5, 1, "lex"), (4, 3, "lex"), (3, 2, "random")] {
            let args = [
                int("elements", elements),
                int("order", order),
                word("numbering", numbering),
                int("seed", 2),
            ];
            let out = gen("fem2d", &args);
            let (e, o) = (elements as usize, order as usize);
            let side = o * e + 1;
            let rows = side * side;
            let csr = decode_csr(&out, rows, rows);
            // Brute force: every element's nodes are adjacent to each other (lex numbering).
            let mut adj = vec![std::collections::BTreeSet::new(); side * side];
            for ey in 0..e {
                for ex in 0..e {
                    let nodes: Vec<usize> = (ey * o..=ey * o + o)
                        .flat_map(|y| (ex * o..=ex * o + o).map(move |x| y * side + x))
                        .collect();
                    for &a in &nodes {
                        adj[a].extend(nodes.iter().copied());
                    }
                }
            }
            let mut lens: Vec<usize> = (0..rows)
                .map(|r| csr.iter().filter(|t| t.0 == r as i32).count())
                .collect();
            let mut want: Vec<usize> = adj.iter().map(|a| a.len()).collect();
            if numbering == "lex" {
                let mut expect: Vec<(i32, i32)> = Vec::new();
                for (r, a) in adj.iter().enumerate() {
                    expect.extend(a.iter().map(|&c| (r as i32, c as i32)));
                }
                let got: Vec<(i32, i32)> = csr.iter().map(|t| (t.0, t.1)).collect();
                assert_eq!(got, expect, "{elements}x{elements} order {order}");
            } else {
                // Same matrix up to a symmetric renumbering: same row lengths, symmetric pattern.
                lens.sort_unstable();
                want.sort_unstable();
                assert_eq!(lens, want);
                let set: std::collections::HashSet<(i32, i32)> = csr.iter().map(|t| (t.0, t.1)).collect();
                assert!(set.iter().all(|&(r, c)| set.contains(&(c, r))), "symmetric");
            }
            assert_eq!(decode_jds(&out, rows), csr, "JDS = CSR");
        }
        // The spmv input: cubic elements on 127 x 127, Dubcova3's size to within 0.5 % / 0.1 %.
        let out = gen(
            "fem2d",
            &[int("elements", 127), int("order", 3), word("form", "csr")],
        );
        let ptr = as_i32(get(&out, "csr_ptr"));
        assert_eq!(ptr.len() - 1, 382 * 382);
        assert_eq!(*ptr.last().unwrap(), 1906 * 1906);
        let mut lengths: Vec<i32> = ptr.windows(2).map(|w| w[1] - w[0]).collect();
        lengths.sort_unstable();
        lengths.dedup();
        assert_eq!(lengths, [16, 28, 49], "interior, edge and vertex nodes");
    }

    #[test]
    fn fem2d_random_numbering_scatters_and_arguments_are_checked() {
        let lex = gen("fem2d", &[int("elements", 20), int("order", 2)]);
        let rnd = gen(
            "fem2d",
            &[
                int("elements", 20),
                int("order", 2),
                word("numbering", "random"),
                int("seed", 1),
            ],
        );
        // Mean column spread within a row: bounded by the mesh for lex, ~the matrix for random.
        let spread = |out: &[(String, Array)]| {
            let ptr = as_i32(get(out, "csr_ptr"));
            let c = as_i32(get(out, "csr_cols"));
            let rows = ptr.len() - 1;
            (0..rows)
                .map(|r| (c[ptr[r + 1] as usize - 1] - c[ptr[r] as usize]) as f64)
                .sum::<f64>()
                / rows as f64
        };
        let side = 41.0;
        assert!(spread(&lex) <= 2.0 * 2.0 * side + 4.0, "lex {}", spread(&lex));
        assert!(spread(&rnd) > 0.5 * side * side, "random {}", spread(&rnd));
        assert_eq!(gen("fem2d", &[int("elements", 20), int("order", 2)]), lex);

        let e = |args: &[Arg]| fails("fem2d", args, None);
        assert_eq!(e(&[int("elements", 0)]).arg.as_deref(), Some("elements"));
        assert!(e(&[int("order", 2)])
            .message
            .contains("needs the argument `elements`"));
        let x = e(&[int("elements", 4), int("order", 9)]);
        assert!(x.message.contains("order must be 1 ..= 8"), "{x}");
        let x = e(&[int("elements", 4), word("numbering", "rcm")]);
        assert!(x.message.contains("lex, random"), "{x}");
        let x = e(&[int("elements", 4000), int("order", 8)]);
        assert_eq!(x.arg.as_deref(), Some("elements"), "{x}");
        assert!(x.message.contains("capped"), "{x}");
    }

    #[test]
    fn tpacf_bins_are_init_binb() {
        let out = gen("tpacf_bins", &[]);
        let f = get(&out, "binb");
        let x = get(&out, "fixed");
        assert_eq!((f.len(), x.len()), (21, 21));
        let fl: Vec<f32> = f
            .data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // Hand values: 1 arcmin, 100 arcmin (k = 10), 1000 arcmin (k = 15), 10 000 (k = 20).
        assert!((fl[0] as f64 - (1.0f64 / 60.0).to_radians().cos()).abs() < 1e-7);
        assert!((fl[10] as f64 - (100.0f64 / 60.0).to_radians().cos()).abs() < 1e-7);
        assert!((fl[15] as f64 - (1000.0f64 / 60.0).to_radians().cos()).abs() < 1e-7);
        assert!((fl[20] as f64 - (10000.0f64 / 60.0).to_radians().cos()).abs() < 1e-7);
        assert!(fl[20] < -0.97 && fl[19] < 0.0 && fl[18] > 0.0, "{fl:?}");
        assert!(fl.windows(2).all(|w| w[0] >= w[1]), "decreasing");
        let xi = as_i32(x);
        for (c, v) in fl.iter().zip(&xi) {
            assert_eq!(*v as i64, (*c as f64 * TPACF_FIXED_ONE as f64).round() as i64);
        }
        let out = gen(
            "tpacf_bins",
            &[int("bins", 4), int("per_dec", 1), int("min_arcmin", 60)],
        );
        assert_eq!(as_i32(get(&out, "fixed")).len(), 5);
        let e = generate("tpacf_bins", &[int("bins", 0)], None).unwrap_err();
        assert_eq!(e.arg.as_deref(), Some("bins"), "{e}");
    }

    #[test]
    fn inputs_perm_uniform_seq() {
        let v = as_i32(get(&gen("perm", &[int("n", 100_000), int("seed", 4)]), "values"));
        let mut s = v.clone();
        s.sort_unstable();
        assert_eq!(s, (0..100_000).collect::<Vec<_>>());
        assert_ne!(v, s, "shuffled");

        for bytes in [1i64, 2, 4, 8] {
            let (lo, hi) = (-100, 100);
            let out = gen(
                "uniform",
                &[
                    int("n", 20_000),
                    int("lo", lo),
                    int("hi", hi),
                    int("seed", 1),
                    int("bytes", bytes),
                ],
            );
            let a = get(&out, "values");
            assert_eq!(a.elem_bytes as i64, bytes);
            assert_eq!(a.len(), 20_000);
            let vals: Vec<i64> = a
                .data
                .chunks_exact(bytes as usize)
                .map(|c| {
                    let mut b = [if c[c.len() - 1] & 0x80 != 0 { 0xff } else { 0 }; 8];
                    b[..c.len()].copy_from_slice(c);
                    i64::from_le_bytes(b)
                })
                .collect();
            assert!(vals.iter().all(|&x| (lo..hi).contains(&x)));
            assert!(
                vals.contains(&lo) && vals.contains(&(hi - 1)),
                "both ends reached"
            );
            let mean = vals.iter().sum::<i64>() as f64 / vals.len() as f64;
            assert!(mean.abs() < 3.0, "mean {mean}");
        }

        let v = as_i32(get(
            &gen("seq", &[int("n", 5), int("start", 10), int("step", -3)]),
            "values",
        ));
        assert_eq!(v, [10, 7, 4, 1, -2]);
        assert_eq!(as_i32(get(&gen("seq", &[int("n", 3)]), "values")), [0, 1, 2]);
    }

    #[test]
    fn inputs_argument_errors() {
        let cases: Vec<(&str, Vec<Arg>, Option<&str>, &str)> = vec![
            ("grap", vec![], None, "unknown input generator `grap`; the generators are graph, sparse"),
            ("graph", vec![int("nodes", 10), int("degree", 6), int("seed", 1), int("colour", 2)], Some("colour"),
             "graph() has no argument `colour`; its arguments are nodes, degree, dist, seed, source"),
            ("graph", vec![int("nodes", 10), int("nodes", 11)], Some("nodes"), "argument `nodes` is given twice"),
            ("graph", vec![int("nodes", 10), int("degree", 6)], None, "graph() needs the argument `seed`"),
            ("graph", graph_args(0, 6, "uniform", 1), Some("nodes"), "`nodes=0` is out of range: nodes must be 1 ..= 16777216"),
            ("graph", graph_args(10, 6, "zipf", 1), Some("dist"), "`dist=zipf` is not valid: dist must be one of uniform, powerlaw"),
            ("graph", vec![word("nodes", "many"), int("degree", 6), int("seed", 1)], Some("nodes"),
             "`nodes` must be an integer (1 ..= 16777216), not `many`"),
            ("graph", [graph_args(10, 6, "uniform", 1), vec![int("source", 10)]].concat(), Some("source"),
             "`source=10` is out of range: source must be 0 ..= 9"),
            ("graph", graph_args(16 << 20, 1024, "uniform", 1), Some("nodes"),
             "graph(nodes=16777216, degree=1024) would take"),
            ("sparse", sparse_args(10, 10, 11, "uniform", 1), Some("nnz_per_row"), "`nnz_per_row=11` is out of range: nnz_per_row must be 1 ..= 10"),
            ("sparse", [sparse_args(10, 100, 11, "uniform", 1), vec![int("band", 2)]].concat(), Some("nnz_per_row"),
             "(band=2 allows at most 5 columns per row)"),
            ("sparse", sparse_args(65536, 65536, 24, "powerlaw", 1), Some("rows"),
             "form=csr or form=jds leaves ELL out"),
            ("sparse", sparse_args(1 << 24, 1000, 1000, "uniform", 1), Some("rows"), "an input is capped at 256.0 MiB"),
            ("perm", vec![int("n", 1 << 30), int("seed", 1)], Some("n"), "`n=1073741824` is out of range: n must be 1 ..= 67108864"),
            ("uniform", vec![int("n", 4), int("lo", 5), int("hi", 5), int("seed", 1)], Some("hi"), "`hi=5` must be greater than lo=5"),
            ("uniform", vec![int("n", 4), int("lo", 0), int("hi", 300), int("seed", 1), int("bytes", 1)], Some("hi"),
             "`hi=300` does not fit bytes=1: values are sign-extended 8-bit integers, so hi-1 must be at most 127"),
            ("uniform", vec![int("n", 4), int("lo", 0), int("hi", 3), int("seed", 1), int("bytes", 3)], Some("bytes"),
             "`bytes=3` is not valid: bytes must be 1, 2, 4 or 8"),
            ("seq", vec![int("n", 1 << 20), int("step", 4096)], Some("step"), "ends at 4294963200, outside the i32 range"),
            ("file", vec![string("path", "x.npy")], Some("path"),
             "file inputs need a .kern file on disk (built-in kernels cannot read files)"),
            ("file", vec![int("path", 3)], Some("path"), "`path` must be a quoted string, not `3`"),
        ];
        for (g, args, arg, msg) in cases {
            let e = fails(g, &args, None);
            assert_eq!(e.arg.as_deref(), arg, "{g}: {e}");
            assert!(e.message.contains(msg), "{g}: `{}` lacks `{msg}`", e.message);
        }
    }

    /// A temporary directory removed on drop.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new() -> Self {
            use std::sync::atomic::{AtomicU32, Ordering};
            static N: AtomicU32 = AtomicU32::new(0);
            let p = std::env::temp_dir().join(format!(
                "mascar-inputs-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        fn write(&self, name: &str, bytes: &[u8]) {
            std::fs::write(self.0.join(name), bytes).unwrap();
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A .npy file as numpy.save writes it (format 1.0, header padded to 64 bytes).
    fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut h = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn inputs_file_npy_and_raw_round_trip() {
        let dir = TempDir::new();
        let ints: Vec<i32> = (0..12).map(|i| i * 1000 - 5).collect();
        let bytes: Vec<u8> = ints.iter().flat_map(|x| x.to_le_bytes()).collect();
        dir.write("m.npy", &npy("<i4", false, "(3, 4)", &bytes));
        dir.write("m.bin", &bytes);
        let d = Some(dir.0.as_path());
        for args in [
            vec![string("path", "m.npy")],
            vec![string("path", "m.npy"), word("type", "i32")],
            vec![string("path", "m.bin"), word("type", "i32")],
        ] {
            let out = generate("file", &args, d).unwrap();
            assert_eq!(as_i32(get(&out, "values")), ints, "{args:?}");
        }
        let out = generate("file", &[string("path", "m.bin"), word("type", "i16")], d).unwrap();
        assert_eq!(get(&out, "values").elem_bytes, 2);
        assert_eq!(get(&out, "values").len(), 24);

        // Format 2.0 header, 1-D f64, and bool.
        let f: Vec<u8> = [1.5f64, -2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut v2 = npy("<f8", false, "(2,)", &f);
        let hlen = u16::from_le_bytes([v2[8], v2[9]]) as u32;
        v2[6] = 2;
        v2.splice(8..10, hlen.to_le_bytes());
        dir.write("f.npy", &v2);
        let out = generate("file", &[string("path", "f.npy")], d).unwrap();
        assert_eq!(get(&out, "values").elem_bytes, 8);
        assert_eq!(&get(&out, "values").data[..], &f[..]);
        dir.write("b.npy", &npy("|b1", false, "(3,)", &[1, 0, 1]));
        let out = generate("file", &[string("path", "b.npy")], d).unwrap();
        assert_eq!(&get(&out, "values").data[..], &[1, 0, 1]);
    }

    #[test]
    fn inputs_file_errors() {
        let dir = TempDir::new();
        let d = Some(dir.0.as_path());
        dir.write("be.npy", &npy(">i4", false, "(1,)", &[0, 0, 0, 1]));
        dir.write("f.npy", &npy("<i4", true, "(2, 2)", &[0; 16]));
        dir.write("short.npy", &npy("<i4", false, "(3,)", &[0; 8]));
        dir.write("obj.npy", &npy("|O", false, "(1,)", &[0; 8]));
        dir.write("fake.npy", b"hello world");
        dir.write("odd.bin", &[0; 7]);
        dir.write("empty.bin", &[]);
        dir.write("ok.npy", &npy("<u2", false, "(1,)", &[1, 0]));
        let cases: Vec<(Vec<Arg>, Option<&str>, &str)> = vec![
            (
                vec![string("path", "missing.npy")],
                Some("path"),
                "cannot read `missing.npy` (",
            ),
            (
                vec![string("path", "be.npy")],
                Some("path"),
                "`be.npy`: dtype '>i4' is big-endian",
            ),
            (
                vec![string("path", "f.npy")],
                Some("path"),
                "Fortran-order arrays are not supported",
            ),
            (
                vec![string("path", "short.npy")],
                Some("path"),
                "the header says shape [3] of '<i4' (3 elements), but the file has 8 bytes",
            ),
            (
                vec![string("path", "obj.npy")],
                Some("path"),
                "dtype '|O' is not supported",
            ),
            (vec![string("path", "fake.npy")], Some("path"), "not a .npy file"),
            (
                vec![string("path", "odd.bin"), word("type", "i32")],
                Some("path"),
                "`odd.bin` has 7 bytes, not a multiple of 4 (type=i32)",
            ),
            (
                vec![string("path", "odd.bin")],
                None,
                "file() needs `type=` for the raw file `odd.bin`",
            ),
            (
                vec![string("path", "odd.bin"), word("type", "i24")],
                Some("type"),
                "`type=i24` is not valid: type must be one of i8, u8",
            ),
            (
                vec![string("path", "empty.bin"), word("type", "u8")],
                Some("path"),
                "`empty.bin` holds no data",
            ),
            (
                vec![string("path", "ok.npy"), word("type", "i32")],
                Some("type"),
                "`type=i32` but `ok.npy` holds u16",
            ),
        ];
        for (args, arg, msg) in cases {
            let e = fails("file", &args, d);
            assert_eq!(e.arg.as_deref(), arg, "{args:?}: {e}");
            assert!(e.message.contains(msg), "{args:?}: `{}` lacks `{msg}`", e.message);
        }
        assert!(fails("file", &[string("path", "missing.npy")], d)
            .message
            .contains(&dir.0.display().to_string()));
    }

    /// Guards against accidental quadratic work; the brief's budget is well under 100 ms in release
    /// (printed with --nocapture), the bound here leaves room for a loaded CI machine.
    #[test]
    fn inputs_generators_are_fast() {
        let cases: Vec<(&str, Vec<Arg>)> = vec![
            ("graph", graph_args(65536, 6, "uniform", 1)),
            ("graph", graph_args(65536, 6, "powerlaw", 1)),
            ("sparse", sparse_args(65536, 65536, 24, "uniform", 1)),
            (
                "sparse",
                [
                    sparse_args(65536, 65536, 24, "powerlaw", 1),
                    vec![word("form", "jds")],
                ]
                .concat(),
            ),
            ("perm", vec![int("n", 1 << 20), int("seed", 1)]),
            (
                "uniform",
                vec![int("n", 1 << 20), int("lo", 0), int("hi", 4096), int("seed", 1)],
            ),
            ("seq", vec![int("n", 1 << 20)]),
        ];
        for (g, args) in cases {
            // The best of three runs, so a busy machine does not count.
            let mut ms = f64::INFINITY;
            let mut out = Vec::new();
            for _ in 0..3 {
                let t = Instant::now();
                out = gen(g, &args);
                ms = ms.min(t.elapsed().as_secs_f64() * 1e3);
            }
            let bytes: usize = out.iter().map(|(_, a)| a.data.len()).sum();
            println!(
                "{g}({}): {ms:.1} ms, {:.1} MiB",
                args.iter()
                    .map(|a| format!("{}={}", a.name, show(&a.value)))
                    .collect::<Vec<_>>()
                    .join(", "),
                bytes as f64 / 1048576.0
            );
            assert!(ms < 2000.0, "{g} took {ms} ms");
        }
    }

    fn kspace_args(samples: i64, grid: i64, readout: i64) -> Vec<Arg> {
        vec![
            int("samples", samples),
            int("grid", grid),
            int("readout", readout),
            int("seed", 1),
        ]
    }

    /// The arrays are what mri-gridding's binning_kernel, sort and scan give for the samples
    /// (recomputed here from the records, independently of the generator's own bookkeeping).
    #[test]
    fn kspace_bins_and_sorts_as_the_host_code_does() {
        let (n, grid, binsize) = (100_000usize, 32usize, 128usize);
        let out = gen("kspace", &kspace_args(n as i64, grid as i64, 64));
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "samples",
                "idx_key",
                "idx_value",
                "bin_start",
                "bin_key",
                "split0"
            ]
        );
        let rec = as_f32(get(&out, "samples"));
        let key = as_i32(get(&out, "idx_key"));
        let value = as_i32(get(&out, "idx_value"));
        let start = as_i32(get(&out, "bin_start"));
        let bins = grid * grid * grid;
        assert_eq!(
            (rec.len(), key.len(), value.len(), start.len()),
            (6 * n, n, n, bins + 1)
        );
        // Coordinates are whole grid cells (readSampleData floors them).
        let bin_of = |i: usize| {
            let c = &rec[6 * i + 2..6 * i + 5];
            for &x in c {
                assert!(
                    x == x.floor() && (0.0..grid as f32).contains(&x),
                    "sample {i}: {c:?}"
                );
            }
            c[2] as usize * grid * grid + c[1] as usize * grid + c[0] as usize
        };
        // The first `binsize` samples of a bin (in sample order) keep it, the rest go to the
        // CPU's bin (gridNumElems).
        let mut count = vec![0usize; bins];
        let mut expect_key = vec![0usize; n];
        for (i, k) in expect_key.iter_mut().enumerate() {
            let b = bin_of(i);
            *k = if count[b] < binsize {
                count[b] += 1;
                b
            } else {
                bins
            };
        }
        // idx_value is a permutation, sorted stably by key.
        let mut seen = vec![false; n];
        for (p, (&v, &k)) in value.iter().zip(&key).enumerate() {
            assert!(!std::mem::replace(&mut seen[v as usize], true), "{v} twice");
            assert_eq!(k as usize, expect_key[v as usize], "position {p}");
            if p > 0 {
                assert!((key[p - 1], value[p - 1]) < (k, v), "not a stable sort at {p}");
            }
        }
        // bin_start is the exclusive scan of the kept counts.
        let mut sum = 0;
        for b in 0..bins {
            assert_eq!(start[b], sum, "bin {b}");
            sum += count[b] as i32;
        }
        assert_eq!(start[bins], sum);
        // Every spoke crosses the centre, so the centre bins overflow and the rim is sparse.
        let centre = (grid / 2 - 1) * (grid * grid + grid + 1);
        assert_eq!(count[centre], binsize);
        let overflow = n - sum as usize;
        assert!(overflow > 0 && overflow < n / 4, "overflow {overflow}");
        // bin_key is binning_kernel's output in sample order, and split0 what splitSort's first
        // pass computes from it: replayed here as the source does it, four 1-bit splits of each
        // 1024-key tile (padded with UINT32_MAX), each an exclusive scan of the packed flags
        // `1 << 16·flag` that puts the zeros first.
        let bin_key = as_i32(get(&out, "bin_key"));
        assert!(bin_key.iter().zip(&expect_key).all(|(&k, &e)| k as usize == e));
        let split0 = get(&out, "split0");
        assert_eq!((split0.elem_bytes, split0.len()), (2, n));
        let split0: Vec<u16> = split0
            .data
            .chunks(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        for (t, tile) in bin_key.chunks(1024).enumerate() {
            let mut keys: Vec<u32> = tile.iter().map(|&k| k as u32).collect();
            keys.resize(1024, u32::MAX);
            let mut index: Vec<usize> = (0..1024).collect();
            for bit in 0..4 {
                let mut flags = [0u32; 1024];
                for (j, &k) in keys.iter().enumerate() {
                    flags[index[j]] = 1 << (16 * ((k >> bit) & 1));
                }
                let total = flags.iter().sum::<u32>();
                let mut scan = [0u32; 1024];
                for p in 1..1024 {
                    scan[p] = scan[p - 1] + flags[p - 1];
                }
                for (j, &k) in keys.iter().enumerate() {
                    let f = (k >> bit) & 1;
                    let mut i = ((scan[index[j]] >> (16 * f)) & 0xFFFF) as usize;
                    if f == 1 {
                        i += (total & 0xFFFF) as usize;
                    }
                    index[j] = i;
                }
            }
            for (j, &k) in tile.iter().enumerate() {
                let want = index[j] | ((k as u32 & 15) as usize) << 10;
                assert_eq!(split0[1024 * t + j] as usize, want, "tile {t} key {j}");
            }
        }
    }

    #[test]
    fn kspace_is_deterministic_and_its_arguments_are_checked() {
        let a = kspace_args(5000, 16, 32);
        assert_eq!(gen("kspace", &a), gen("kspace", &a));
        // The seed changes only the sample values, not the trajectory.
        let mut b = a.clone();
        b[3] = int("seed", 2);
        assert_ne!(gen("kspace", &a), gen("kspace", &b));
        assert_eq!(
            get(&gen("kspace", &a), "idx_value"),
            get(&gen("kspace", &b), "idx_value")
        );
        let e = fails("kspace", &kspace_args(5000, 1000, 32), None);
        assert_eq!(e.arg.as_deref(), Some("grid"));
        assert!(e.message.contains("grid must be 2 ..= 256"), "{e}");
        let e = fails("kspace", &kspace_args(5000, 16, 1), None);
        assert_eq!(e.arg.as_deref(), Some("readout"));
        let e = fails("kspace", &kspace_args(1 << 24, 256, 64), None);
        assert!(e.message.contains("capped"), "{e}");
    }

    fn pf_args(np: i64, frame: i64, seed: i64) -> Vec<Arg> {
        vec![int("np", np), int("frame", frame), int("seed", seed)]
    }
    fn as_f64(a: &Array) -> Vec<f64> {
        assert_eq!(a.elem_bytes, 8);
        a.data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// The LCG again, in i64 with explicit two's-complement wrapping.
    fn lcg(s: i32) -> i32 {
        let num = (1_103_515_245i64 * s as i64 + 12345).rem_euclid(1 << 32);
        let num = if num >= 1 << 31 { num - (1 << 32) } else { num };
        (num % 2_147_483_647) as i32
    }
    fn box_muller(s: &mut i32) -> f64 {
        *s = lcg(*s);
        let u = (*s as f64 / 2_147_483_647.0).abs();
        *s = lcg(*s);
        let v = (*s as f64 / 2_147_483_647.0).abs();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// The disc is strelDisk's radius-5 disc (countOnes = 69) in getneighbors' order; `ind` is
    /// the kernel's formula over `xy` and `objxy`; frame 1 moves each particle from the image
    /// centre by main's seeds (time(0)·i) through the LCG and Box–Muller.
    #[test]
    fn particlefilter_disc_walk_and_ind_follow_the_source() {
        let t = 1_400_000_000i64;
        let out = gen("particlefilter", &pf_args(1000, 1, t));
        let objxy = as_i32(get(&out, "objxy"));
        assert_eq!(objxy.len(), 2 * 69);
        let mut cells = Vec::new();
        for x in -4..=4i32 {
            for y in -4..=4i32 {
                if x * x + y * y < 25 {
                    cells.push([y, x]);
                }
            }
        }
        assert_eq!(cells.len(), 69);
        let got: Vec<[i32; 2]> = objxy.chunks(2).map(|c| [c[0], c[1]]).collect();
        assert_eq!(got, cells);

        let xy = as_f64(get(&out, "xy"));
        let seed = as_i32(get(&out, "seed"));
        assert_eq!(xy.len(), 2000);
        for i in 1..1000 {
            let mut s = (t * i as i64) as i32;
            assert_eq!(seed[i], s, "seed[{i}] = time(0)*i");
            let x = 64.0 + 1.0 + 5.0 * box_muller(&mut s);
            let y = 64.0 - 2.0 + 2.0 * box_muller(&mut s);
            assert!((xy[i] - x).abs() < 1e-9, "arrayX[{i}] {} vs {x}", xy[i]);
            assert!((xy[1000 + i] - y).abs() < 1e-9, "arrayY[{i}]");
        }
        assert!(as_f64(get(&out, "xj")).iter().all(|&v| v == 64.0));
        assert!(as_f64(get(&out, "yj")).iter().all(|&v| v == 64.0));

        let ind = as_i32(get(&out, "ind"));
        assert_eq!(ind.len(), 1000 * 69);
        for i in 0..1000 {
            for y in 0..69 {
                let ix = xy[i] as i32 + objxy[2 * y + 1];
                let iy = xy[1000 + i] as i32 + objxy[2 * y];
                let mut v = (ix * 128 * 10 + iy * 10 + 1).abs();
                if v >= 128 * 128 * 10 {
                    v = 0;
                }
                assert_eq!(ind[i * 69 + y], v, "ind[{i}*69 + {y}]");
            }
        }
        // The random walk spreads the particles: σ = 5 across, 2 along the second axis.
        let mean = xy[..1000].iter().sum::<f64>() / 1000.0;
        let sd = (xy[..1000].iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 1000.0).sqrt();
        assert!((mean - 65.0).abs() < 1.0 && (sd - 5.0).abs() < 1.0, "{mean} {sd}");
    }

    /// videoSequence: in frame z the pixels above the midpoint of 100 and 228 (after the
    /// noise) are exactly the radius-5 disc around the object's position, which starts at
    /// (64, 64) and moves by (−2, +1) in the first coordinate and the second.
    #[test]
    fn particlefilter_video_is_one_moving_disc() {
        let out = gen("particlefilter", &pf_args(10, 1, 7));
        let video = get(&out, "I").data.clone();
        assert_eq!(video.len(), 128 * 128 * 10);
        for z in 0..10i64 {
            let (cx, cy) = if z == 0 {
                (64, 64)
            } else {
                (64 - 2 * (z - 1), 64 + (z - 1))
            };
            for x in 0..128i64 {
                for y in 0..128i64 {
                    let bright = video[(x * 1280 + y * 10 + z) as usize] > 164;
                    let inside = (x - cx).pow(2) + (y - cy).pow(2) < 25;
                    assert_eq!(bright, inside, "frame {z} pixel ({x}, {y})");
                }
            }
        }
    }

    /// A later frame starts from a resampling of the previous frame's particles: xj, yj are
    /// pairs of the previous arrayX, arrayY, and each seed has moved on four LCG steps.
    #[test]
    fn particlefilter_later_frames_resample_the_previous_one() {
        let t = 1_400_000_000i64;
        let f1 = gen("particlefilter", &pf_args(1000, 1, t));
        let f2 = gen("particlefilter", &pf_args(1000, 2, t));
        let xy1 = as_f64(get(&f1, "xy"));
        let (xj, yj) = (as_f64(get(&f2, "xj")), as_f64(get(&f2, "yj")));
        let mut chosen = std::collections::HashSet::new();
        for i in 0..1000 {
            let j = (0..1000)
                .find(|&j| xy1[j] == xj[i] && xy1[1000 + j] == yj[i])
                .unwrap_or_else(|| panic!("xj[{i}] is no particle of frame 1"));
            chosen.insert(j);
        }
        // Resampling keeps the likely particles only.
        assert!(chosen.len() < 500, "{} distinct parents", chosen.len());
        let (s1, s2) = (as_i32(get(&f1, "seed")), as_i32(get(&f2, "seed")));
        for i in 1..1000 {
            assert_eq!(s2[i], lcg(lcg(lcg(lcg(s1[i])))), "seed[{i}]");
        }
        // Frame 2's ind uses k = 2; the first disc cell is (−2, −4).
        let ind = as_i32(get(&f2, "ind"));
        let xy2 = as_f64(get(&f2, "xy"));
        assert_eq!(
            ind[0],
            ((xy2[0] as i32 - 4) * 1280 + (xy2[1000] as i32 - 2) * 10 + 2).abs()
        );
    }

    #[test]
    fn particlefilter_is_deterministic_and_its_arguments_are_checked() {
        let a = pf_args(600, 3, 5);
        assert_eq!(gen("particlefilter", &a), gen("particlefilter", &a));
        assert_ne!(
            get(&gen("particlefilter", &a), "ind"),
            get(&gen("particlefilter", &pf_args(600, 3, 6)), "ind")
        );
        let e = |args: &[Arg]| fails("particlefilter", args, None);
        let x = e(&[int("np", 1000)]);
        assert!(x.message.contains("needs the argument `seed`"), "{x}");
        let x = e(&pf_args(0, 1, 1));
        assert_eq!(x.arg.as_deref(), Some("np"), "{x}");
        let x = e(&pf_args(1000, 10, 1));
        assert_eq!(x.arg.as_deref(), Some("frame"), "{x}");
        assert!(x.message.contains("1 ..= z − 1 = 9"), "{x}");
        let x = e(&[int("z", 1), int("seed", 1)]);
        assert!(x.message.contains("z must be 2 ..= 4096"), "{x}");
        let x = e(&[int("x", 10), int("seed", 1)]);
        assert_eq!(x.arg.as_deref(), Some("x"), "{x}");
        assert!(x.message.contains("outside the 10 × 128 frame"), "{x}");
        let x = e(&[int("x", 20000), int("y", 20000), int("seed", 1)]);
        assert!(x.message.contains("capped"), "{x}");
        let x = e(&[int("seed", 1), word("frame", "last")]);
        assert_eq!(x.arg.as_deref(), Some("frame"), "{x}");
        // Non-square videos and one particle work.
        let out = gen(
            "particlefilter",
            &[
                int("np", 1),
                int("x", 40),
                int("y", 64),
                int("z", 3),
                int("seed", 9),
            ],
        );
        assert_eq!(get(&out, "I").len(), 40 * 64 * 3);
        assert_eq!(get(&out, "ind").len(), 69);
    }

    /// lavamd_boxes() gives lavaMD's box table: main.c's numbering and neighbour order,
    /// recomputed here from the coordinates, and the 656-byte box_str layout.
    #[test]
    fn lavamd_boxes_are_lavamds_box_table() {
        let out = gen("lavamd_boxes", &[]);
        let (boxes, nn) = (get(&out, "boxes"), as_i32(get(&out, "nn")));
        assert_eq!((boxes.data.len(), nn.len()), (1000 * 656, 1000));
        let i32at = |o: usize| i32::from_le_bytes(boxes.data[o..o + 4].try_into().unwrap());
        let i64at = |o: usize| i64::from_le_bytes(boxes.data[o..o + 8].try_into().unwrap());
        // Corners 7, edges 11, faces 17, inside 26: 8·8 + 96·12 + 384·18 + 512·27 = 21 952
        // boxes processed in all (home included).
        let mut count = [0usize; 27];
        for &c in &nn {
            count[c as usize] += 1;
        }
        assert_eq!((count[7], count[11], count[17], count[26]), (8, 96, 384, 512));
        assert_eq!(nn.iter().map(|&c| c as usize + 1).sum::<usize>(), 21_952);
        for (nh, &nn_h) in nn.iter().enumerate() {
            let at = nh * 656;
            let (x, y, z) = ((nh % 10) as i32, (nh / 10 % 10) as i32, (nh / 100) as i32);
            assert_eq!([i32at(at), i32at(at + 4), i32at(at + 8)], [x, y, z], "box {nh}");
            assert_eq!(i32at(at + 12), nh as i32);
            assert_eq!(i64at(at + 16), 100 * nh as i64);
            assert_eq!(i32at(at + 24), nn_h);
            let mut e = 0;
            for l in -1..=1 {
                for m in -1..=1 {
                    for n in -1..=1 {
                        let (nx, ny, nz) = (x + n, y + m, z + l);
                        if (l, m, n) == (0, 0, 0) || [nx, ny, nz].iter().any(|c| !(0..10).contains(c)) {
                            continue;
                        }
                        let o = at + 32 + 24 * e;
                        let number = nz * 100 + ny * 10 + nx;
                        assert_eq!(
                            [i32at(o), i32at(o + 4), i32at(o + 8), i32at(o + 12)],
                            [nx, ny, nz, number]
                        );
                        assert_eq!(i64at(o + 16), 100 * number as i64);
                        e += 1;
                    }
                }
            }
            assert_eq!(e as i32, nn_h);
            assert!(boxes.data[at + 32 + 24 * e..at + 656].iter().all(|&b| b == 0));
        }
        // Box 0 (a corner): its first neighbour is box 1 (x + 1), then 10, 11, 100, ...
        assert_eq!(i32at(32 + 12), 1);
        assert_eq!(i32at(56 + 12), 10);
        // Arguments.
        let small = gen("lavamd_boxes", &[int("boxes1d", 2), int("per_box", 7)]);
        let b = get(&small, "boxes");
        assert_eq!(b.data.len(), 8 * 656);
        assert_eq!(as_i32(get(&small, "nn")), vec![7; 8]);
        let x = fails("lavamd_boxes", &[int("boxes1d", 65)], None);
        assert!(x.message.contains("boxes1d"), "{x}");
    }

    /// circles() gives the tables Rodinia leukocyte's compute_constants (find_ellipse.c)
    /// computes, recomputed here as the source writes them: theta in float from PI = 3.14159,
    /// sin/cos in double, offsets truncated toward zero, circle k of radius 8 + 2k at k·150.
    #[test]
    #[allow(clippy::approx_constant)] // leukocyte's PI (misc_math.h), deliberately not π
    fn circles_are_leukocytes_sample_circles() {
        let out = gen("circles", &[]);
        assert_eq!(out, gen("circles", &[int("points", 150), int("circles", 7)]));
        let (sin, cos) = (as_f32(get(&out, "sin_angle")), as_f32(get(&out, "cos_angle")));
        let (tx, ty) = (as_i32(get(&out, "tx")), as_i32(get(&out, "ty")));
        assert_eq!((sin.len(), cos.len(), tx.len(), ty.len()), (150, 150, 1050, 1050));
        for n in 0..150 {
            let theta = ((n as f64) * 2.0 * 3.14159 / 150.0) as f32 as f64;
            assert_eq!(sin[n], theta.sin() as f32, "sin_angle[{n}]");
            assert_eq!(cos[n], theta.cos() as f32, "cos_angle[{n}]");
            for k in 0..7 {
                let rad = (8 + 2 * k) as f64;
                let (x, y) = (theta.cos() * rad, theta.sin() * rad);
                // C's (int) truncates toward zero.
                let trunc = |v: f64| (if v < 0.0 { -(-v).floor() } else { v.floor() }) as i32;
                assert_eq!(tx[k * 150 + n], trunc(x), "tX[{k}*150 + {n}]");
                assert_eq!(ty[k * 150 + n], trunc(y), "tY[{k}*150 + {n}]");
                // Every point lies within one pixel of its circle, inside the radius.
                let r2 = (tx[k * 150 + n].pow(2) + ty[k * 150 + n].pow(2)) as f64;
                assert!(r2 <= rad * rad && r2.sqrt() > rad - 2.0, "k {k} n {n}");
            }
        }
        // Hand-checked points of circle 3 (radius 14): n = 0 lies at (14, 0); n = 37
        // (θ = 1.5498) at (0, 13); n = 75 at (−13, 0), not −14, because PI = 3.14159 is short
        // of π; n = 112 at (0, −13).
        let at = |n: usize| (tx[450 + n], ty[450 + n]);
        assert_eq!(
            [at(0), at(37), at(75), at(112)],
            [(14, 0), (0, 13), (-13, 0), (0, -13)]
        );
        // Small circles repeat offsets: circle 3 has 91 distinct points of its 150.
        let mut distinct: Vec<(i32, i32)> = (0..150).map(at).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 91);

        // `constants`: the four arrays at GPGPU-Sim's 128-B aligned offsets, zero between.
        let c = get(&out, "constants");
        assert_eq!((c.elem_bytes, c.data.len()), (4, 9704));
        let word = |o: usize| &c.data[o..o + 4];
        for n in 0..150 {
            assert_eq!(word(4 * n), sin[n].to_le_bytes(), "sin at {}", 4 * n);
            assert_eq!(word(640 + 4 * n), cos[n].to_le_bytes());
        }
        for i in 0..1050 {
            assert_eq!(word(1280 + 4 * i), tx[i].to_le_bytes());
            assert_eq!(word(5504 + 4 * i), ty[i].to_le_bytes());
        }
        assert!(c.data[600..640].iter().all(|&b| b == 0));
        assert!(c.data[1240..1280].iter().all(|&b| b == 0));
        assert!(c.data[5480..5504].iter().all(|&b| b == 0));
        assert_eq!(circles_layout(150, 7), ([0, 640, 1280, 5504], 9704));
        assert_eq!(circles_layout(32, 1), ([0, 128, 256, 384], 512));
        assert_eq!(circles_layout(1, 1), ([0, 128, 256, 384], 388));
    }

    /// cutcp() builds the bins and neighbour list as Parboil cutcp's host code does: for the
    /// default box (6 400 atoms in 40 Å) the lattice is 82³ points, 11³ regions, bins 17³ with 3
    /// of padding; the neighbour list is the 7³ cube less its 8 corners (335 entries, k, j, i
    /// order); every binned atom lies in its bin, and `fill` agrees with the bins' contents.
    #[test]
    fn cutcp_bins_atoms_as_the_host_code_does() {
        let out = gen("cutcp", &[int("seed", 1)]);
        let dims = as_i32(get(&out, "dims"));
        assert_eq!(&dims[..12], &[82, 82, 82, 11, 11, 11, 17, 17, 17, 3, 335, 5]);
        let (binned, extra, zero) = (dims[12], dims[13], dims[14] as usize);
        assert_eq!(binned + extra, 6400, "every atom is inside the bins and charged");
        // Uniform placement is Poisson per bin (mean 6.4 inside the box): about 6 % of the
        // atoms are a bin's 9th or later and go to the CPU, as the host code does with them.
        assert!(
            (200..640).contains(&extra),
            "overflow at 6.4 atoms a bin: {extra}"
        );
        assert_eq!(zero, (3 * 17 + 3) * 17 + 3);
        let c = as_i32(get(&out, "constants"));
        assert_eq!(c.len(), (128 + 12 * 1331) / 4);
        assert_eq!(c[0], 335);
        assert!(c[1..32].iter().all(|&v| v == 0));
        let nbr: Vec<[i32; 3]> = (0..335)
            .map(|e| [c[32 + 3 * e], c[33 + 3 * e], c[34 + 3 * e]])
            .collect();
        let mut want = Vec::new();
        for k in -3i32..=3 {
            for j in -3i32..=3 {
                for i in -3i32..=3 {
                    if !(i.abs() == 3 && j.abs() == 3 && k.abs() == 3) {
                        want.push([i, j, k]);
                    }
                }
            }
        }
        assert_eq!(nbr, want);
        assert!(c[32 + 3 * 335..].iter().all(|&v| v == 0));
        // Bins: each atom in slot order, inside its 4 Å cell, charged; slots past it empty.
        let bins = as_f32(get(&out, "bins"));
        assert_eq!(bins.len(), 17 * 17 * 17 * 32);
        let mut counts = vec![0usize; 17 * 17 * 17];
        let mut total = 0;
        for (b, bin) in bins.chunks_exact(32).enumerate() {
            let (i, j, k) = (
                (b % 17) as f32 - 3.0,
                ((b / 17) % 17) as f32 - 3.0,
                (b / 289) as f32 - 3.0,
            );
            let n = (0..8).take_while(|&s| bin[4 * s + 3] != 0.0).count();
            assert!(bin[4 * n..].iter().all(|&v| v == 0.0), "bin {b}: slots after {n}");
            for a in bin[..4 * n].chunks_exact(4) {
                for (d, cell) in [i, j, k].into_iter().enumerate() {
                    assert!((a[d] / 4.0).floor() == cell, "bin {b}: {a:?}");
                }
                assert!(a[3] == -0.834 || a[3] == 0.417);
            }
            counts[b] = n;
            total += n;
        }
        assert_eq!(total as i32, binned);
        // Padding bins and the bins past the box (the box fills bins 0..=10) are empty.
        assert_eq!(counts[0], 0);
        // fill: region (bx, by) of plane 5, entry n: the packed offset and that bin's count.
        let fill = as_i32(get(&out, "fill"));
        assert_eq!(fill.len(), 121 * 335);
        for r in [0usize, 5, 60, 120] {
            let (bx, by) = ((r % 11) as i32, (r / 11) as i32);
            for (e, o) in nbr.iter().enumerate() {
                let f = fill[r * 335 + e];
                assert_eq!([(f >> 12) - 8, ((f >> 8) & 15) - 8, ((f >> 4) & 15) - 8], *o);
                let idx = zero as i32 + ((5 + o[2]) * 17 + by + o[1]) * 17 + bx + o[0];
                assert_eq!((f & 15) as usize, counts[idx as usize], "region {r} entry {e}");
            }
        }
        // An interior region's neighbour bins hold ≈ 6.4 atoms; a corner region's are half empty.
        let mean = |r: usize| fill[r * 335..(r + 1) * 335].iter().map(|f| f & 15).sum::<i32>() as f64 / 335.0;
        assert!((5.0..7.0).contains(&mean(60)), "interior {}", mean(60));
        assert!(mean(0) < 0.6 * mean(60), "corner {}", mean(0));
        // Deterministic, seed-dependent; the large box gives 26 regions a side.
        assert_eq!(out, gen("cutcp", &[int("seed", 1)]));
        assert_ne!(get(&out, "bins"), get(&gen("cutcp", &[int("seed", 2)]), "bins"));
        let big = gen(
            "cutcp",
            &[int("side", 100), int("atoms", 100_000), int("seed", 1)],
        );
        assert_eq!(&as_i32(get(&big, "dims"))[..6], &[202, 202, 202, 26, 26, 26]);
    }

    #[test]
    fn cutcp_arguments_are_checked() {
        let e = |args: &[Arg]| fails("cutcp", args, None);
        let x = e(&[]);
        assert!(x.message.contains("needs the argument `seed`"), "{x}");
        let x = e(&[int("seed", 1), int("side", 0)]);
        assert!(x.message.contains("side must be 1 ..= 400"), "{x}");
        let x = e(&[int("seed", 1), int("atoms", 0)]);
        assert_eq!(x.arg.as_deref(), Some("atoms"));
        let x = e(&[int("seed", 1), int("zregion", 11)]);
        assert!(x.message.contains("zregion must be 0 ..= 10"), "{x}");
        let x = e(&[int("seed", 1), int("h", 1)]);
        assert!(x.message.contains("side, atoms, zregion, seed"), "{x}");
        let out = gen("cutcp", &[int("seed", 1), int("zregion", 0)]);
        assert_eq!(as_i32(get(&out, "dims"))[11], 0);
    }

    #[test]
    fn circles_arguments_are_checked() {
        let out = gen(
            "circles",
            &[
                int("points", 8),
                int("circles", 2),
                int("min_radius", 3),
                int("step", 5),
            ],
        );
        assert_eq!(as_i32(get(&out, "tx"))[8..], [8, 5, 0, -5, -7, -5, 0, 5]);
        assert_eq!(as_i32(get(&out, "ty"))[8..], [0, 5, 7, 5, 0, -5, -7, -5]);
        let e = |args: &[Arg]| fails("circles", args, None);
        let x = e(&[int("points", 0)]);
        assert_eq!(x.arg.as_deref(), Some("points"));
        assert!(x.message.contains("points must be 1 ..= 4096"), "{x}");
        let x = e(&[int("circles", 65)]);
        assert!(x.message.contains("circles must be 1 ..= 64"), "{x}");
        let x = e(&[int("min_radius", -1)]);
        assert_eq!(x.arg.as_deref(), Some("min_radius"), "{x}");
        let x = e(&[int("circles", 64), int("step", 1 << 20)]);
        assert_eq!(x.arg.as_deref(), Some("step"), "{x}");
        assert!(x.message.contains("largest radius"), "{x}");
        let x = e(&[word("points", "many")]);
        assert!(x.message.contains("must be an integer"), "{x}");
        let x = e(&[int("radius", 10)]);
        assert!(x.message.contains("points, circles, min_radius, step"), "{x}");
        // The largest call allowed is small and fast.
        let big = gen("circles", &[int("points", 4096), int("circles", 64)]);
        assert_eq!(get(&big, "constants").data.len(), 4 * 4096 * 130);
    }
}
