//! Records the git commit the binary is built from, for every result's provenance
//! (`MASCAR_GIT_COMMIT`: the commit id, `+dirty` when tracked files differ from it, or
//! `unknown` outside a git checkout).
//!
//! With the `verilator` feature it also compiles the emitted Verilog (`rtl/*.v`) with
//! Verilator into a static library for `--engine verilator` (see `verilator::build`).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "HEAD"]) {
        Some(id) if !id.is_empty() => {
            let dirty =
                git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{id}+dirty")
            } else {
                id
            }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=MASCAR_GIT_COMMIT={commit}");
    for path in [".git/HEAD", ".git/index", ".git/refs/heads", "src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={path}");
    }
    #[cfg(feature = "verilator")]
    verilator::build();
}

/// `--engine verilator`: each block's emitted Verilog compiled by Verilator, wrapped so that
/// its ports (and the internal signals the engine reads) are numbered, behind a small C ABI
/// per block. The port list is read from the top module's declarations, so a port added to
/// the blocks (e.g. a reset) needs no change here.
#[cfg(feature = "verilator")]
mod verilator {
    use std::fmt::Write as _;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// This generator: a change to it rebuilds the cached library.
    const GENERATOR: &str = include_str!("build.rs");
    /// Verilator's code generation flags. `unique` X handling draws the power-on state at
    /// construction from the model's context: zeros (what rust-hdl starts from) unless a
    /// model is made with `new_random`, so one library serves both (the Verilog has no
    /// explicit X, so only the constructor differs from `0`). The flops' `initial` zeros are
    /// taken out first (`drop_zero_initials`), or they would hide the random state. Warnings
    /// are the lint test's business (testbench/rtl.rs).
    const VERILATOR_FLAGS: &[&str] = &[
        "--cc",
        "-O3",
        "--x-assign",
        "unique",
        "--x-initial",
        "unique",
        "--noassert",
        "-Wno-fatal",
        "-Wno-lint",
        "-Wno-style",
    ];
    /// `MASCAR_VERILATOR_COVERAGE=1` at build time: Verilator's line and toggle coverage
    /// in the models (`tools/verilator-coverage.sh`, docs/verification.md). Off by default:
    /// the counters cost time in every eval, and CI does not read them.
    fn coverage() -> bool {
        println!("cargo:rerun-if-env-changed=MASCAR_VERILATOR_COVERAGE");
        std::env::var("MASCAR_VERILATOR_COVERAGE").is_ok_and(|v| !v.is_empty() && v != "0")
    }
    const COVERAGE_FLAGS: &[&str] = &["--coverage-line", "--coverage-toggle"];
    const CXX_FLAGS: &[&str] = &[
        "-std=gnu++17",
        "-O2",
        "-faligned-new",
        "-fcf-protection=none",
        "-Wno-bool-operation",
        "-Wno-sign-compare",
        "-Wno-uninitialized",
        "-Wno-unused-but-set-variable",
        "-Wno-unused-parameter",
        "-Wno-unused-variable",
        "-Wno-shadow",
    ];

    /// One block: its file, top module, the short name of its C functions, and the
    /// instances whose output wires (declared in the top module) the engine also reads.
    struct Block {
        file: &'static str,
        module: &'static str,
        short: &'static str,
        taps: &'static [&'static str],
    }

    const BLOCKS: &[Block] = &[
        Block {
            file: "rtl/mascar_issue_top.v",
            module: "mascar_issue_top",
            short: "issue_top",
            // The lockstep compares the WRC's and the WST's outputs too (`IssueView`).
            taps: &["wrc$", "wst$"],
        },
        Block {
            file: "rtl/mascar_reexec_queue.v",
            module: "mascar_reexec_queue",
            short: "reexec_queue",
            taps: &[],
        },
    ];

    /// A declared signal: name and width in bits.
    struct Sig {
        name: String,
        width: u32,
    }

    struct Ports {
        clock: bool,
        inputs: Vec<Sig>,
        outputs: Vec<Sig>,
        /// Top-module wires the engine reads through hierarchical references.
        taps: Vec<Sig>,
    }

    fn fail(msg: impl std::fmt::Display) -> ! {
        eprintln!("error: {msg}");
        std::process::exit(1);
    }

    /// `[15:0]` → 16; no range → 1.
    fn width(range: &str, line: &str, file: &str) -> u32 {
        if range.is_empty() {
            return 1;
        }
        let inner = range.trim_start_matches('[').trim_end_matches(']');
        let parsed = inner
            .split_once(':')
            .and_then(|(hi, lo)| Some((hi.trim().parse::<u32>().ok()?, lo.trim().parse::<u32>().ok()?)));
        match parsed {
            Some((hi, 0)) => hi + 1,
            _ => fail(format!("{file}: cannot read the width of `{line}`")),
        }
    }

    /// The declarations of `module`'s top module: `input wire [W:0] name;`,
    /// `output reg [W:0] name;` and `wire [W:0] name;`.
    fn ports(text: &str, file: &str, block: &Block) -> Ports {
        let header = format!("module {}(", block.module);
        let Some(start) = text.find(&header) else {
            fail(format!("{file}: no module `{}`", block.module));
        };
        let body = &text[start..];
        let body = &body[..body.find("endmodule").unwrap_or(body.len())];
        let mut p = Ports {
            clock: false,
            inputs: Vec::new(),
            outputs: Vec::new(),
            taps: Vec::new(),
        };
        for line in body.lines().skip(1) {
            let line = line.trim();
            let Some(decl) = line.strip_suffix(';') else {
                continue;
            };
            let words: Vec<&str> = decl.split_whitespace().collect();
            let (kind, rest) = match words.as_slice() {
                ["input", "wire", rest @ ..] => ("in", rest),
                ["output", "reg" | "wire", rest @ ..] => ("out", rest),
                ["wire", rest @ ..] => ("tap", rest),
                _ => continue,
            };
            let (range, name) = match rest {
                [name] => ("", *name),
                [range, name] => (*range, *name),
                _ => fail(format!("{file}: cannot read the declaration `{line}`")),
            };
            let sig = Sig {
                name: name.to_string(),
                width: width(range, line, file),
            };
            if sig.width > 64 {
                fail(format!(
                    "{file}: `{}` is {} bits wide; the Verilator shim passes at most 64",
                    sig.name, sig.width
                ));
            }
            match kind {
                "in" if sig.name == "clock" => p.clock = true,
                "in" => p.inputs.push(sig),
                "out" => p.outputs.push(sig),
                _ if block.taps.iter().any(|t| sig.name.starts_with(t)) => p.taps.push(sig),
                _ => {}
            }
        }
        if !p.clock {
            fail(format!("{file}: module `{}` has no `clock` input", block.module));
        }
        p
    }

    /// `text` without its `initial begin NAME = N'h0; … end` blocks (rust-hdl gives every
    /// flop one; synthesis ignores them), and how many went. A block setting anything but
    /// zero stays: `--x-initial unique` at reset level 0 gives the same zeros, so the default
    /// models behave as the file does.
    fn drop_zero_initials(text: &str) -> (String, usize) {
        let zero = |line: &str| {
            let Some((_, rhs)) = line.trim().strip_suffix(';').and_then(|l| l.split_once(" = ")) else {
                return false;
            };
            let digits = rhs
                .split_once('\'')
                .map_or(rhs, |(_, v)| v.get(1..).unwrap_or(""));
            !digits.is_empty() && digits.chars().all(|c| c == '0' || c == '_')
        };
        let (mut out, mut dropped) = (String::with_capacity(text.len()), 0);
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if line.trim() == "initial begin" {
                let mut body = Vec::new();
                while let Some(l) = lines.next_if(|l| l.trim() != "end") {
                    body.push(l);
                }
                let end = lines.next();
                if end.is_some() && !body.is_empty() && body.iter().all(|l| zero(l)) {
                    dropped += 1;
                    // Blank lines in their place: coverage reports keep rtl/*.v's line numbers.
                    for _ in 0..body.len() + 2 {
                        out.push('\n');
                    }
                    continue;
                }
                for l in std::iter::once(line).chain(body).chain(end) {
                    out.push_str(l);
                    out.push('\n');
                }
                continue;
            }
            out.push_str(line);
            out.push('\n');
        }
        (out, dropped)
    }

    fn range(w: u32) -> String {
        if w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        }
    }

    /// A wrapper whose ports are `in_K`/`out_K` (Verilator would mangle the `$` in the
    /// emitted names); the taps are read with hierarchical references.
    fn wrapper(block: &Block, p: &Ports) -> String {
        let mut v = String::new();
        let outs = p.outputs.iter().chain(&p.taps);
        let mut names = vec!["clock".to_string()];
        names.extend((0..p.inputs.len()).map(|k| format!("in_{k}")));
        names.extend((0..outs.clone().count()).map(|k| format!("out_{k}")));
        let _ = writeln!(
            v,
            "// Generated by build.rs for the Verilator engine; do not edit."
        );
        let _ = writeln!(v, "module {}_vl({});", block.module, names.join(","));
        let _ = writeln!(v, "    input wire clock;");
        for (k, s) in p.inputs.iter().enumerate() {
            let _ = writeln!(v, "    input wire {}in_{k}; // {}", range(s.width), s.name);
        }
        for (k, s) in outs.clone().enumerate() {
            let _ = writeln!(v, "    output wire {}out_{k}; // {}", range(s.width), s.name);
        }
        let mut conns = vec!["        .clock(clock)".to_string()];
        conns.extend(
            p.inputs
                .iter()
                .enumerate()
                .map(|(k, s)| format!("        .{}(in_{k})", s.name)),
        );
        conns.extend(
            p.outputs
                .iter()
                .enumerate()
                .map(|(k, s)| format!("        .{}(out_{k})", s.name)),
        );
        let _ = writeln!(v, "    {} u(\n{}\n    );", block.module, conns.join(",\n"));
        for (k, s) in p.taps.iter().enumerate() {
            let _ = writeln!(v, "    assign out_{} = u.{};", p.outputs.len() + k, s.name);
        }
        let _ = writeln!(v, "endmodule");
        v
    }

    fn ctype(w: u32) -> &'static str {
        match w {
            0..=8 => "CData",
            9..=16 => "SData",
            17..=32 => "IData",
            _ => "QData",
        }
    }

    fn mask(w: u32) -> String {
        if w == 64 {
            "~0ULL".to_string()
        } else {
            format!("0x{:x}ULL", (1u64 << w) - 1)
        }
    }

    /// Verilator's own `_eval` of the model in `dir` without its input-combinational
    /// region, as a function `edge_eval`: a clock edge with unchanged inputs then costs the
    /// flops and what they drive, not a second settle of the whole block (the region is
    /// idempotent: it recomputes what the last eval computed from the same inputs). `None`
    /// when the generated code is not laid out as Verilator 5 lays it out: plain `eval()`.
    fn edge_eval(dir: &Path, class: &str) -> Option<String> {
        let root = format!("{class}___024root");
        let header = format!("void {root}___eval({root}* vlSelf) {{");
        let text = cpp_files(dir)
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .find(|t| t.contains(&header))?;
        let body = &text[text.find(&header)? + header.len()..];
        let body = &body[..body.find("\n}\n")?];
        let (cut_from, cut_to) = ("vlSelf->__VicoIterCount = 0U;", "__VnbaIterCount = 0U;");
        let (a, b) = (body.find(cut_from)?, body.find(cut_to)?);
        let (kept, cut) = (format!("{}{}", &body[..a], &body[b..]), &body[a..b]);
        if !cut.contains("_eval_ico(vlSelf)")
            || kept.contains("_eval_ico(")
            || !kept.contains("_eval_nba(vlSelf)")
        {
            return None;
        }
        let mut called: Vec<&str> = kept
            .match_indices(&format!("{root}___"))
            .filter_map(|(i, _)| {
                let name = &kept[i..];
                let end = name.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
                name[end..].starts_with("(vlSelf)").then_some(&name[..end])
            })
            .collect();
        called.sort_unstable();
        called.dedup();
        let mut c = String::new();
        for f in called {
            let _ = writeln!(c, "void {f}({root}* vlSelf);");
        }
        let _ = writeln!(c, "static void edge_eval({root}* vlSelf) {{{kept}\n}}");
        Some(c)
    }

    /// The C ABI of one block: `new`, `free`, `step` (set every input, settle, read every
    /// output) and `clock` (rising edge, settle, falling edge, settle, read every output;
    /// the inputs must be those of the last `step`), as the rust-hdl harness clocks.
    fn shim(block: &Block, p: &Ports, dir: &Path) -> String {
        let class = format!("V{}_vl", block.module);
        let f = format!("mascar_vl_{}", block.short);
        let mut c = String::new();
        let _ = writeln!(
            c,
            "// Generated by build.rs for the Verilator engine; do not edit."
        );
        let _ = writeln!(c, "#include \"{class}.h\"\n#include \"{class}___024root.h\"");
        let _ = writeln!(c, "#include \"verilated.h\"\n#include <cstdint>");
        let _ = writeln!(
            c,
            "#if VM_COVERAGE\n#include \"verilated_cov.h\"\n#include <atomic>\n#include <cstdlib>\n\
             #include <string>\n#include <unistd.h>\n#endif\n"
        );
        // A coverage build takes the plain `eval` for the edges: Verilator counts input
        // toggles (the clock's among them) in the region the shortcut leaves out.
        let shortcut = if coverage() { None } else { edge_eval(dir, &class) };
        match shortcut {
            Some(e) => {
                let _ = writeln!(
                    c,
                    "// Verilator's _eval less its input-combinational region.\n{e}"
                );
                let _ = writeln!(c, "static void edge({class}& t) {{ edge_eval(t.rootp); }}");
            }
            None => {
                if !coverage() {
                    println!(
                        "cargo:warning=the Verilator engine's clock edge settles the whole {} \
                         (unknown Verilator code layout): slower, same results",
                        block.module
                    );
                }
                let _ = writeln!(c, "static void edge({class}& t) {{ t.eval(); }}");
            }
        }
        let _ = writeln!(
            c,
            "namespace {{\n// Its own context per model: SMs run on several threads."
        );
        // Verilator's X reset reads the thread's context: it is this model's while `top` is
        // built (`rand_reset` 0 zeros the state, 2 draws it from `seed`), then restored.
        let _ = writeln!(
            c,
            "struct Bind {{\n    VerilatedContext* prev;\n    \
             Bind(VerilatedContext& ctx, int rand_reset, int seed) : prev(Verilated::threadContextp()) {{"
        );
        let _ = writeln!(
            c,
            "        ctx.randReset(rand_reset);\n        if (seed != 0) ctx.randSeed(seed);"
        );
        let _ = writeln!(c, "        Verilated::threadContextp(&ctx);\n    }}\n}};");
        let _ = writeln!(
            c,
            "struct Model {{\n    VerilatedContext ctx;\n    Bind bind;\n    {class} top;"
        );
        let _ = writeln!(
            c,
            "    Model(int rand_reset, int seed) : ctx(), bind(ctx, rand_reset, seed), top(&ctx, \"{}\") {{\n        \
             Verilated::threadContextp(bind.prev);\n    }}\n}};",
            block.module
        );
        let _ = writeln!(c, "void read(const {class}& t, uint64_t* out) {{");
        for (k, _) in p.outputs.iter().chain(&p.taps).enumerate() {
            let _ = writeln!(c, "    out[{k}] = t.out_{k};");
        }
        let _ = writeln!(c, "}}");
        let _ = writeln!(c, "void set({class}& t, const uint64_t* in) {{");
        for (k, s) in p.inputs.iter().enumerate() {
            let _ = writeln!(
                c,
                "    t.in_{k} = ({})(in[{k}] & {});",
                ctype(s.width),
                mask(s.width)
            );
        }
        let _ = writeln!(c, "}}\n}}  // namespace\n\nextern \"C\" {{");
        let _ = writeln!(c, "static void* make(int rand_reset, int seed) {{");
        let _ = writeln!(c, "    Model* m = new Model(rand_reset, seed);");
        let _ = writeln!(c, "    m->top.clock = 0;\n    m->top.eval();\n    return m;\n}}");
        let _ = writeln!(c, "void* {f}_new() {{ return make(0, 0); }}");
        let _ = writeln!(
            c,
            "void* {f}_new_random(uint32_t seed) {{ return make(2, (int)seed); }}"
        );
        let _ = writeln!(
            c,
            "void {f}_free(void* p) {{\n    Model* m = static_cast<Model*>(p);"
        );
        let _ = writeln!(c, "    m->top.final();");
        // With coverage, each model's counters go to a file of their own when it is freed
        // (each has its own context): `MASCAR_VERILATOR_COVERAGE_DIR`, else the working
        // directory; `verilator_coverage` merges them.
        let _ = writeln!(
            c,
            "#if VM_COVERAGE\n    static std::atomic<unsigned> n{{0}};\n    \
             const char* dir = std::getenv(\"MASCAR_VERILATOR_COVERAGE_DIR\");\n    \
             std::string path = std::string(dir && *dir ? dir : \".\") + \"/{}-\" + \
             std::to_string(getpid()) + \"-\" + std::to_string(n++) + \".dat\";\n    \
             m->ctx.coveragep()->write(path.c_str());\n#endif",
            block.short
        );
        let _ = writeln!(c, "    delete m;\n}}");
        let _ = writeln!(c, "void {f}_step(void* p, const uint64_t* in, uint64_t* out) {{");
        let _ = writeln!(c, "    {class}& t = static_cast<Model*>(p)->top;");
        let _ = writeln!(c, "    set(t, in);\n    t.eval();\n    read(t, out);\n}}");
        let _ = writeln!(c, "void {f}_clock(void* p, uint64_t* out) {{");
        let _ = writeln!(c, "    {class}& t = static_cast<Model*>(p)->top;");
        let _ = writeln!(
            c,
            "    t.clock = 1;\n    edge(t);\n    t.clock = 0;\n    edge(t);\n    read(t, out);\n}}"
        );
        let _ = writeln!(c, "}}  // extern \"C\"");
        c
    }

    /// The Rust side's port tables and C functions (included by `src/rtl/verilator.rs`).
    fn rust(block: &Block, p: &Ports, r: &mut String) {
        let f = format!("mascar_vl_{}", block.short);
        let table = |sigs: &mut dyn Iterator<Item = &Sig>| {
            sigs.map(|s| format!("    ({:?}, {}),\n", s.name, s.width))
                .collect::<String>()
        };
        let _ = writeln!(
            r,
            "/// `{}`'s ports and C functions (generated by build.rs).",
            block.module
        );
        let _ = writeln!(r, "pub mod {} {{", block.short);
        let _ = writeln!(
            r,
            "/// Inputs (all but `clock`), in the order `step` takes them: (name, bits)."
        );
        let _ = writeln!(
            r,
            "pub const INPUTS: [(&str, u32); {}] = [\n{}];",
            p.inputs.len(),
            table(&mut p.inputs.iter())
        );
        let _ = writeln!(
            r,
            "/// Outputs, then the internal signals read, in the order `step` gives them."
        );
        let _ = writeln!(
            r,
            "pub const OUTPUTS: [(&str, u32); {}] = [\n{}];",
            p.outputs.len() + p.taps.len(),
            table(&mut p.outputs.iter().chain(&p.taps))
        );
        let _ = writeln!(r, "extern \"C\" {{");
        let _ = writeln!(r, "    pub fn {f}_new() -> *mut std::ffi::c_void;");
        let _ = writeln!(
            r,
            "    pub fn {f}_new_random(seed: u32) -> *mut std::ffi::c_void;"
        );
        let _ = writeln!(r, "    pub fn {f}_free(p: *mut std::ffi::c_void);");
        let _ = writeln!(
            r,
            "    pub fn {f}_step(p: *mut std::ffi::c_void, inputs: *const u64, outputs: *mut u64);"
        );
        let _ = writeln!(
            r,
            "    pub fn {f}_clock(p: *mut std::ffi::c_void, outputs: *mut u64);"
        );
        let _ = writeln!(
            r,
            "}}\n/// The C functions as a table.\npub const SHIM: super::Shim = super::Shim {{"
        );
        let _ = writeln!(
            r,
            "    new: {f}_new,\n    new_random: {f}_new_random,\n    free: {f}_free,\n    step: {f}_step,\n    clock: {f}_clock,"
        );
        let _ = writeln!(r, "    inputs: &INPUTS,\n    outputs: &OUTPUTS,\n}};\n}}");
    }

    fn verilator_root() -> PathBuf {
        let out = Command::new("verilator")
            .args(["--getenv", "VERILATOR_ROOT"])
            .output();
        match out {
            Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
            _ => fail(
                "the `verilator` feature needs Verilator (`apt-get install -y verilator`); \
                 or build without `--features verilator`",
            ),
        }
    }

    pub fn build() {
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
        let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
        let root = verilator_root();
        let version = Command::new("verilator")
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let mut rust_tables = String::new();
        let coverage = coverage();
        let mut stamp =
            format!("{GENERATOR}\n{version}\n{VERILATOR_FLAGS:?}\n{CXX_FLAGS:?}\ncoverage {coverage}\n");
        let mut generated = Vec::new();
        for b in BLOCKS {
            println!("cargo:rerun-if-changed={}", b.file);
            let path = manifest.join(b.file);
            let text =
                std::fs::read_to_string(&path).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
            stamp.push_str(&text);
            let p = ports(&text, b.file, b);
            rust(b, &p, &mut rust_tables);
            generated.push((b, path, wrapper(b, &p), p));
        }
        std::fs::write(out.join("verilator_ports.rs"), &rust_tables)
            .unwrap_or_else(|e| fail(format!("writing the port tables: {e}")));
        let lib = "mascar_verilated";
        let stamp_path = out.join("verilated.stamp");
        let cached = std::fs::read_to_string(&stamp_path).is_ok_and(|s| s == stamp)
            && out.join(format!("lib{lib}.a")).exists();
        if cached {
            // build.rs reruns on every source change (the commit id): the C++ does not.
            println!("cargo:rustc-link-search=native={}", out.display());
            println!("cargo:rustc-link-lib=static={lib}");
            println!("cargo:rustc-link-lib=dylib=stdc++");
            return;
        }
        let _ = std::fs::remove_file(&stamp_path);
        let include = root.join("include");
        let mut cc = cc::Build::new();
        cc.cpp(true)
            .include(&include)
            .include(include.join("vltstd"))
            .define("VM_COVERAGE", if coverage { "1" } else { "0" })
            .define("VM_SC", "0")
            .define("VM_TRACE", "0")
            .define("VM_TRACE_FST", "0")
            .define("VM_TRACE_VCD", "0")
            .opt_level(2)
            .debug(false)
            .warnings(false);
        for f in CXX_FLAGS {
            cc.flag_if_supported(f);
        }
        for (b, path, wrapper, ports) in &generated {
            let dir = out.join(format!("vl_{}", b.short));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(format!("{}: {e}", dir.display())));
            let wrapper_path = dir.join(format!("{}_vl.v", b.module));
            std::fs::write(&wrapper_path, wrapper).unwrap_or_else(|e| fail(e));
            let (verilog, dropped) =
                drop_zero_initials(&std::fs::read_to_string(path).unwrap_or_else(|e| fail(e)));
            if dropped == 0 {
                fail(format!(
                    "{}: no flop `initial` zeros to take out: has the emitter changed?",
                    b.file
                ));
            }
            let path = &dir.join(format!("{}.v", b.module));
            std::fs::write(path, verilog).unwrap_or_else(|e| fail(e));
            let top = format!("{}_vl", b.module);
            let status = Command::new("verilator")
                .args(VERILATOR_FLAGS)
                .args(if coverage { COVERAGE_FLAGS } else { &[] })
                .args(["--top-module", &top, "--prefix", &format!("V{top}"), "--Mdir"])
                .arg(&dir)
                .arg(&wrapper_path)
                .arg(path)
                .output()
                .unwrap_or_else(|e| fail(format!("running verilator: {e}")));
            if !status.status.success() {
                fail(format!(
                    "verilator failed on {}:\n{}",
                    b.file,
                    String::from_utf8_lossy(&status.stderr)
                ));
            }
            let shim_path = dir.join(format!("{}_shim.cpp", b.short));
            std::fs::write(&shim_path, shim(b, ports, &dir)).unwrap_or_else(|e| fail(e));
            cc.include(&dir).file(&shim_path);
            cc.files(cpp_files(&dir));
        }
        cc.file(include.join("verilated.cpp"));
        cc.file(include.join("verilated_threads.cpp"));
        if coverage {
            cc.file(include.join("verilated_cov.cpp"));
        }
        cc.try_compile(lib)
            .unwrap_or_else(|e| fail(format!("compiling the Verilated blocks: {e}")));
        let _ = std::fs::write(&stamp_path, stamp);
    }

    /// The C++ Verilator generated for one block.
    fn cpp_files(dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| fail(format!("{}: {e}", dir.display())))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cpp") && !p.ends_with("_shim.cpp"))
            .filter(|p| !p.to_string_lossy().ends_with("_shim.cpp"))
            .collect();
        files.sort();
        files
    }
}
