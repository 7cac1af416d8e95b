//! Recording a block's ports from a real run, and replaying them against the generated
//! Verilog under iverilog.
//!
//! `mascar run … --engine rtl --record DIR` writes, for each block of one SM, `MODULE.ports`
//! (`clock` first if the block has one, then one line per port: `in|out NAME WIDTH`) and `MODULE.vec` (one line per
//! cycle: every port's value in hex, in that order, as it was just before the clock edge
//! that ended the cycle). [`replay`] turns each pair into a Verilog testbench that drives the
//! inputs into `rtl/MODULE.v`, checks every output each cycle, and clocks it.

use crate::output::PendingFile;
use rust_hdl::core::atom::{Atom, AtomKind};
use rust_hdl::core::block::Block;
use rust_hdl::core::probe::Probe;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// One port of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub input: bool,
    pub name: String,
    pub width: u32,
}

/// Collects a block's own ports (atoms directly in its top scope), or their values.
struct Ports<'a> {
    depth: usize,
    clocked: bool,
    list: Option<&'a mut Vec<Port>>,
    values: Option<&'a mut Vec<u64>>,
}

fn bits_of(a: &dyn Atom) -> u64 {
    crate::output::vcd::atom_value(a).unwrap_or(0)
}

impl Probe for Ports<'_> {
    fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth += 1;
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth -= 1;
    }
    fn visit_atom(&mut self, name: &str, a: &dyn Atom) {
        let input = match a.kind() {
            AtomKind::InputParameter => true,
            AtomKind::OutputParameter => false,
            _ => return,
        };
        if self.depth != 1 {
            return;
        }
        if name == "clock" {
            self.clocked = true;
            return;
        }
        if let Some(list) = self.list.as_deref_mut() {
            list.push(Port {
                input,
                name: name.to_string(),
                width: a.bits() as u32,
            });
        }
        if let Some(values) = self.values.as_deref_mut() {
            values.push(bits_of(a));
        }
    }
}

/// The ports of `block` but its clock, in visiting order, and whether it has a clock.
pub fn ports_of(block: &dyn Block) -> (Vec<Port>, bool) {
    let mut list = vec![];
    let mut p = Ports {
        depth: 0,
        clocked: false,
        list: Some(&mut list),
        values: None,
    };
    block.accept("block", &mut p);
    let clocked = p.clocked;
    (list, clocked)
}

/// Writes one block's ports cycle by cycle.
pub struct PortRecorder {
    file: PendingFile,
    out: BufWriter<File>,
    values: Vec<u64>,
    line: String,
}

impl PortRecorder {
    /// Starts `DIR/MODULE.vec` (and writes `DIR/MODULE.ports`) for `block`.
    pub fn create(dir: &Path, module: &str, block: &dyn Block) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let (ports, clocked) = ports_of(block);
        let mut desc = String::from(if clocked { "clock\n" } else { "" });
        for p in ports {
            let dir = if p.input { "in" } else { "out" };
            desc.push_str(&format!("{dir} {} {}\n", p.name, p.width));
        }
        crate::output::write_atomic(&dir.join(format!("{module}.ports")), desc.as_bytes())?;
        let (file, out) = PendingFile::create(&dir.join(format!("{module}.vec")))?;
        Ok(PortRecorder {
            file,
            out,
            values: Vec::new(),
            line: String::new(),
        })
    }

    /// Appends the block's current port values as one cycle.
    pub fn sample(&mut self, block: &dyn Block) -> std::io::Result<()> {
        use std::fmt::Write as _;
        self.values.clear();
        block.accept(
            "block",
            &mut Ports {
                depth: 0,
                clocked: false,
                list: None,
                values: Some(&mut self.values),
            },
        );
        self.line.clear();
        for (i, v) in self.values.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(self.line, "{sep}{v:x}");
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    /// Completes the file and moves it into place.
    pub fn finish(mut self) -> std::io::Result<PathBuf> {
        self.out.flush()?;
        drop(self.out);
        self.file.commit()
    }
}

/// Reads `MODULE.ports`: the ports and whether the block has a clock.
pub fn read_ports(path: &Path) -> Result<(Vec<Port>, bool), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let clocked = text.lines().next() == Some("clock");
    let ports = text
        .lines()
        .enumerate()
        .skip(clocked as usize)
        .map(|(i, l)| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let bad = || format!("{}:{}: expected `in|out NAME WIDTH`", path.display(), i + 1);
            match f.as_slice() {
                [d @ ("in" | "out"), name, w] => Ok(Port {
                    input: *d == "in",
                    name: name.to_string(),
                    width: w.parse().map_err(|_| bad())?,
                }),
                _ => Err(bad()),
            }
        })
        .collect::<Result<Vec<Port>, String>>()?;
    Ok((ports, clocked))
}

/// A Verilog testbench replaying `vec_file` into `module`.
pub fn testbench(module: &str, ports: &[Port], clocked: bool, vec_file: &Path) -> String {
    let decl = |p: &Port| {
        if p.width == 1 {
            String::new()
        } else {
            format!("[{}:0] ", p.width - 1)
        }
    };
    // `$` is legal inside Verilog identifiers; the testbench's own names avoid it.
    let local = |p: &Port| p.name.replace('$', "_");
    let mut s = String::new();
    s.push_str(&format!(
        "// Replays recorded ports into {module}; generated by mascar (src/rtl/record.rs).\n`timescale 1ns/1ns\nmodule tb_{module};\n  reg clock = 0;\n"
    ));
    for p in ports {
        if p.input {
            s.push_str(&format!("  reg {}in_{};\n", decl(p), local(p)));
        } else {
            s.push_str(&format!(
                "  wire {}out_{};\n  reg {}exp_{};\n",
                decl(p),
                local(p),
                decl(p),
                local(p)
            ));
        }
    }
    s.push_str("  integer fd, r, cycle, errors;\n");
    let conns: Vec<String> = clocked
        .then(|| "    .clock(clock)".to_string())
        .into_iter()
        .chain(ports.iter().map(|p| {
            let dir = if p.input { "in" } else { "out" };
            format!("    .{}({dir}_{})", p.name, local(p))
        }))
        .collect();
    s.push_str(&format!("  {module} dut(\n{}\n  );\n", conns.join(",\n")));
    let fmt = vec!["%h"; ports.len()].join(" ");
    let args: Vec<String> = ports
        .iter()
        .map(|p| format!("{}_{}", if p.input { "in" } else { "exp" }, local(p)))
        .collect();
    // A block with a reset port starts from a reset cycle (every input idle), not from its
    // `initial` values: `replay` strips those, so a register the reset misses stays X and
    // its outputs mismatch.
    let reset = if ports.iter().any(|p| p.input && p.name == "reset") {
        let idle: String = ports
            .iter()
            .filter(|p| p.input)
            .map(|p| format!("in_{} = 0; ", local(p)))
            .collect();
        format!("    {idle}in_reset = 1;\n    #1; clock = 1; #1; clock = 0; #1;\n")
    } else {
        String::new()
    };
    s.push_str(&format!(
        "  initial begin\n    fd = $fopen(\"{}\", \"r\");\n    if (fd == 0) begin $display(\"REPLAY cannot open vectors\"); $finish; end\n    cycle = 0; errors = 0;\n{reset}    while (!$feof(fd)) begin\n      r = $fscanf(fd, \"{fmt}\\n\", {});\n      if (r == {}) begin\n        #1;\n",
        vec_file.display(),
        args.join(", "),
        ports.len()
    ));
    for p in ports.iter().filter(|p| !p.input) {
        let l = local(p);
        s.push_str(&format!(
            "        if (out_{l} !== exp_{l}) begin\n          errors = errors + 1;\n          if (errors <= 20) $display(\"MISMATCH cycle=%0d signal={} expected=%h actual=%h\", cycle, exp_{l}, out_{l});\n        end\n",
            p.name
        ));
    }
    s.push_str(
        "        clock = 1; #1;\n        clock = 0; #1;\n        cycle = cycle + 1;\n      end else if (r > 0) begin\n        $display(\"REPLAY bad vector line at cycle %0d\", cycle); errors = errors + 1; $finish;\n      end\n    end\n    $display(\"REPLAY cycles=%0d mismatches=%0d\", cycle, errors);\n    $finish;\n  end\nendmodule\n",
    );
    s
}

/// The Verilog without its `initial begin … end` blocks (rust-hdl gives every flop one
/// with its power-on value): registers then start as X in simulation.
pub fn strip_initial_blocks(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut skipping = false;
    for line in v.lines() {
        let t = line.trim();
        if !skipping && t == "initial begin" {
            skipping = true;
            continue;
        }
        if skipping {
            if t == "end" {
                skipping = false;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// What replaying one block gave.
#[derive(Clone, Debug)]
pub struct Replay {
    pub module: String,
    pub cycles: u64,
    pub mismatches: u64,
    /// The simulator's report of the first mismatches.
    pub log: String,
}

/// Replays every `MODULE.ports` / `MODULE.vec` pair in `dir` against `rtl_dir/MODULE.v`
/// with iverilog. Needs `iverilog` and `vvp`.
pub fn replay(dir: &Path, rtl_dir: &Path) -> Result<Vec<Replay>, String> {
    let mut modules: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".ports").map(str::to_string)
        })
        .collect();
    modules.sort();
    if modules.is_empty() {
        return Err(format!(
            "{}: no recorded blocks (*.ports); record with `mascar run --record`",
            dir.display()
        ));
    }
    let mut out = vec![];
    for m in modules {
        let (ports, clocked) = read_ports(&dir.join(format!("{m}.ports")))?;
        let vec_file = std::fs::canonicalize(dir.join(format!("{m}.vec")))
            .map_err(|e| format!("{}/{m}.vec: {e}", dir.display()))?;
        let tb = dir.join(format!("tb_{m}.v"));
        std::fs::write(&tb, testbench(&m, &ports, clocked, &vec_file))
            .map_err(|e| format!("{}: {e}", tb.display()))?;
        let sim = dir.join(format!("tb_{m}.vvp"));
        let mut design = rtl_dir.join(format!("{m}.v"));
        if ports.iter().any(|p| p.input && p.name == "reset") {
            // Power up unknown: only the reset may give the registers their values.
            let text = std::fs::read_to_string(&design).map_err(|e| format!("{}: {e}", design.display()))?;
            let stripped = dir.join(format!("{m}_no_initial.v"));
            std::fs::write(&stripped, strip_initial_blocks(&text))
                .map_err(|e| format!("{}: {e}", stripped.display()))?;
            design = stripped;
        }
        let run = |cmd: &mut std::process::Command, what: &str| {
            let o = cmd
                .output()
                .map_err(|e| format!("cannot run {what} ({e}); apt-get install -y iverilog"))?;
            if !o.status.success() {
                return Err(format!(
                    "{what} failed on {m}:\n{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        };
        run(
            std::process::Command::new("iverilog")
                .arg("-o")
                .arg(&sim)
                .arg(&tb)
                .arg(&design),
            "iverilog",
        )?;
        let log = run(std::process::Command::new("vvp").arg("-n").arg(&sim), "vvp")?;
        let summary = log
            .lines()
            .find_map(|l| l.strip_prefix("REPLAY cycles="))
            .ok_or_else(|| format!("{m}: the testbench gave no summary:\n{log}"))?;
        let (cycles, mismatches) = summary
            .split_once(" mismatches=")
            .and_then(|(c, e)| Some((c.parse().ok()?, e.trim().parse().ok()?)))
            .ok_or_else(|| format!("{m}: unreadable summary `{summary}`"))?;
        out.push(Replay {
            module: m,
            cycles,
            mismatches,
            log,
        });
    }
    Ok(out)
}
