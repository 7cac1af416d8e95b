//! `mascar rtl area`: size and logic depth of every block's emitted Verilog, measured with
//! yosys. Per block: generic cells and flip-flops after `synth -flatten`, storage bits
//! (flip-flop bits plus memory bits), the longest path in AIG levels
//! (`dffunmap; abc -g AND; ltp -noff`, the measure issue 17 sets at ≤ 40 levels per cycle), and
//! LUTs and flip-flops after `synth_xilinx`.
//!
//! `dffunmap` comes before `abc` (issue 32): `synth` folds synchronous resets and enables into
//! yosys's `$_SDFF_`/`$_DFFE_` cells, which `ltp` treats as flops, so their muxes in front of
//! each flop were not counted. Unmapped, they are AND/NOT gates on the path, as they would
//! be in front of a plain flop in a standard-cell library.

use super::emit::{self, VerilogFile};
use std::path::Path;
use std::process::Command;

/// One block's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockArea {
    pub module: String,
    /// Warps of the configuration (2 × lanes).
    pub warps: usize,
    pub cells: u64,
    pub flops: u64,
    pub storage_bits: u64,
    /// Longest topological path between flip-flops / ports, in AND and NOT cells, reset and
    /// enable muxes included.
    pub levels: u64,
    /// After `synth_xilinx` (absent when only the depth was asked for).
    pub luts: Option<u64>,
    pub xilinx_flops: Option<u64>,
}

/// Generic synthesis figures of one yosys run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generic {
    pub cells: u64,
    pub flops: u64,
    pub memory_bits: u64,
    pub levels: u64,
}

const STAT_MARK: &str = "@@mascar-stat";
const LTP_MARK: &str = "@@mascar-ltp";

fn field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(key))
        .next_back()
        .and_then(|v| v.trim().parse().ok())
}

/// Cell counts of a `stat` listing whose type matches `pred`, summed.
fn count_cells(text: &str, pred: impl Fn(&str) -> bool) -> u64 {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, n) = (w.next()?, w.next()?);
            if w.next().is_some() || !pred(name) {
                return None;
            }
            n.parse::<u64>().ok()
        })
        .sum()
}

fn is_generic_flop(cell: &str) -> bool {
    cell.starts_with("$_") && (cell.contains("DFF") || cell.contains("DLATCH") || cell.contains("SR_"))
}

/// Parses the output of `log @@mascar-stat; stat; log @@mascar-ltp; dffunmap; abc -g AND;
/// ltp -noff`.
pub fn parse_generic(module: &str, out: &str) -> Result<Generic, String> {
    // The last occurrences: yosys echoes the script (with the marks) before running it.
    let s = out
        .rfind(STAT_MARK)
        .ok_or_else(|| format!("{module}: no statistics in the yosys output"))?;
    let l = out
        .rfind(LTP_MARK)
        .filter(|&l| l > s)
        .ok_or_else(|| format!("{module}: no longest-path section in the yosys output"))?;
    let stat = &out[s..l];
    let cells = field(stat, "Number of cells:").ok_or_else(|| format!("{module}: no cell count"))?;
    let memory_bits = field(stat, "Number of memory bits:").unwrap_or(0);
    let flops = count_cells(stat, is_generic_flop);
    // A depth taken with the reset and enable muxes folded into the flops is not this one.
    if !out[l..].contains("Executing DFFUNMAP pass") {
        return Err(format!(
            "{module}: the longest path was not measured after `dffunmap`"
        ));
    }
    let head = format!("Longest topological path in {module} (length=");
    let levels = out[l..]
        .find(&head)
        .and_then(|p| {
            let rest = &out[l + p + head.len()..];
            rest[..rest.find(')')?].parse().ok()
        })
        .ok_or_else(|| format!("{module}: no longest path in the yosys output"))?;
    Ok(Generic {
        cells,
        flops,
        memory_bits,
        levels,
    })
}

/// Parses `log @@mascar-stat; stat` after `synth_xilinx`: (LUTs, flip-flops).
pub fn parse_xilinx(module: &str, out: &str) -> Result<(u64, u64), String> {
    let s = out
        .rfind(STAT_MARK)
        .ok_or_else(|| format!("{module}: no statistics in the yosys output"))?;
    let stat = &out[s..];
    field(stat, "Number of cells:").ok_or_else(|| format!("{module}: no cell count"))?;
    let luts = count_cells(stat, |c| c.starts_with("LUT") && c[3..].parse::<u8>().is_ok());
    let flops = count_cells(stat, |c| {
        matches!(
            c,
            "FDRE" | "FDSE" | "FDCE" | "FDPE" | "FDRE_1" | "FDSE_1" | "FDCE_1" | "FDPE_1"
        )
    });
    Ok((luts, flops))
}

/// Whether `yosys` runs here.
pub fn yosys_available() -> bool {
    Command::new("yosys")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run_yosys(dir: &Path, f: &VerilogFile, script: &str) -> Result<String, String> {
    let path = dir.join(&f.file);
    std::fs::write(&path, &f.text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let script = format!("read_verilog {}; {script}", path.display());
    let out = Command::new("yosys")
        .args(["-p", &script])
        .output()
        .map_err(|e| format!("cannot run yosys ({e}); install it (apt-get install yosys)"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let tail: String = text
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(format!(
            "yosys failed on {}:\n{tail}\n{}",
            f.file,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(text)
}

/// Generic synthesis and depth of one block.
pub fn generic(dir: &Path, f: &VerilogFile) -> Result<Generic, String> {
    let out = run_yosys(
        dir,
        f,
        &format!(
            // The statistics count the flops as `synth` left them; the depth is taken after
            // `dffunmap` (reset and enable as gates, see the module comment).
            "synth -flatten -top {m}; log {STAT_MARK}; stat; log {LTP_MARK}; dffunmap; \
             abc -g AND; ltp -noff",
            m = f.module
        ),
    )?;
    parse_generic(&f.module, &out)
}

/// `synth_xilinx` of one block: (LUTs, flip-flops).
pub fn xilinx(dir: &Path, f: &VerilogFile) -> Result<(u64, u64), String> {
    let out = run_yosys(
        dir,
        f,
        &format!("synth_xilinx -flatten -top {}; log {STAT_MARK}; stat", f.module),
    )?;
    parse_xilinx(&f.module, &out)
}

/// Every block at the default sizes (48 warps, 32 entries) and at 16 warps (32 entries),
/// two yosys processes at a time. `with_xilinx` adds the `synth_xilinx` run (the slow part).
pub fn measure(with_xilinx: bool) -> Result<Vec<BlockArea>, String> {
    if !yosys_available() {
        return Err(
            "yosys is not installed (or not on PATH): `mascar rtl area` needs it; \
                    install it with `apt-get install yosys`"
                .into(),
        );
    }
    let mut jobs: Vec<(usize, VerilogFile)> = Vec::new();
    for f in emit::blocks() {
        jobs.push((2 * super::harness::LANES, f));
    }
    for f in emit::blocks_at::<8, { super::harness::ENTRIES }>() {
        jobs.push((16, f));
    }
    let dir = std::env::temp_dir().join(format!("mascar-area-{}", std::process::id()));
    let results: Vec<Result<BlockArea, String>> = {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<Result<BlockArea, String>>>> =
            jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|scope| {
            for w in 0..2 {
                let (jobs, next, slots, dir) = (&jobs, &next, &slots, &dir);
                scope.spawn(move || loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((warps, f)) = jobs.get(n) else { break };
                    let sub = dir.join(format!("w{w}-{n}"));
                    let r = std::fs::create_dir_all(&sub)
                        .map_err(|e| format!("cannot create {}: {e}", sub.display()))
                        .and_then(|_| {
                            let g = generic(&sub, f)?;
                            let x = if with_xilinx { Some(xilinx(&sub, f)?) } else { None };
                            Ok(BlockArea {
                                module: f.module.clone(),
                                warps: *warps,
                                cells: g.cells,
                                flops: g.flops,
                                storage_bits: g.flops + g.memory_bits,
                                levels: g.levels,
                                luts: x.map(|x| x.0),
                                xilinx_flops: x.map(|x| x.1),
                            })
                        });
                    *slots[n].lock().unwrap() = Some(r);
                });
            }
        });
        slots
            .into_iter()
            .map(|s| {
                s.into_inner()
                    .unwrap()
                    .unwrap_or_else(|| Err("not measured".into()))
            })
            .collect()
    };
    let _ = std::fs::remove_dir_all(&dir);
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from yosys 0.23 on `mascar_wst` (48 warps), trimmed.
    const GENERIC_SAMPLE: &str = "\
-- Running command `read_verilog w.v; synth -flatten -top mascar_wst; log @@mascar-stat; stat; log @@mascar-ltp; dffunmap; abc -g AND; ltp -noff' --
2.26. Printing statistics.
=== mascar_wst ===
   Number of cells:                192
     $_MUX_                         96
     $_SDFF_PP0_                    96
@@mascar-stat
3. Printing statistics.

=== mascar_wst ===

   Number of wires:                 36
   Number of wire bits:            634
   Number of public wires:          36
   Number of public wire bits:     634
   Number of memories:               0
   Number of memory bits:            0
   Number of processes:              0
   Number of cells:                192
     $_MUX_                         96
     $_SDFF_PP0_                    96

@@mascar-ltp
4. Executing DFFUNMAP pass (unmap clock enable and synchronous reset from FFs).
5. Executing ABC pass (technology mapping using ABC).
ABC RESULTS:               NOT cells:      433
ABC RESULTS:               AND cells:      384
6. Executing LTP pass (find longest path).

Longest topological path in mascar_wst (length=5):
    0: \\stall_in$1 [23]
    1: $abc$860$new_n673_ (via $abc$860$auto$blifparse.cc:386:parse_blif$1100)
    2: $abc$860$new_n1152_ (via $abc$860$auto$blifparse.cc:386:parse_blif$1579)
    3: $abc$860$new_n1153_ (via $abc$860$auto$blifparse.cc:386:parse_blif$1580)
    4: $abc$860$stall$1[23] (via $abc$860$auto$blifparse.cc:386:parse_blif$1581)
    5: $abc$860$auto$rtlil.cc:2560:MuxGate$715 (via $abc$860$auto$blifparse.cc:386:parse_blif$1605)
   ff: \\stall_r$1.q [23] (via $auto$ff.cc:266:slice$258)
";

    const XILINX_SAMPLE: &str = "\
@@mascar-stat
3. Printing statistics.

=== mascar_wrc ===

   Number of wires:                123
   Number of cells:                310
     BUFG                            1
     CARRY4                          2
     FDRE                           96
     FDSE                            4
     IBUF                          200
     LUT2                           10
     LUT6                           23
     MUXF7                           4
";

    #[test]
    fn parses_yosys_statistics_and_the_longest_path() {
        let g = parse_generic("mascar_wst", GENERIC_SAMPLE).unwrap();
        assert_eq!(
            g,
            Generic {
                cells: 192,
                flops: 96,
                memory_bits: 0,
                levels: 5
            }
        );
        assert_eq!(parse_xilinx("mascar_wrc", XILINX_SAMPLE).unwrap(), (33, 100));
        // Missing sections are errors that name the block, not zeros.
        let e = parse_generic("mascar_wst", &GENERIC_SAMPLE.replace("(length=5)", "")).unwrap_err();
        assert!(e.contains("mascar_wst") && e.contains("longest"), "{e}");
        // A depth without the reset and enable gates is refused.
        let e = parse_generic("mascar_wst", &GENERIC_SAMPLE.replace("DFFUNMAP", "OPT")).unwrap_err();
        assert!(e.contains("dffunmap"), "{e}");
        assert!(parse_generic("x", "nothing").unwrap_err().contains("statistics"));
    }
}
