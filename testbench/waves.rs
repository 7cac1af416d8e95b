//! Waveforms from `--vcd`: a VCD any tool reads (the `vcd` crate's parser and GTKWave's
//! `vcd2fst`), in cycles, limited to the window and SMs asked for, with the RTL blocks'
//! signals under the model's, and values that agree with the run's own statistics.

use mascar::config::{Config, Engine};
use mascar::gpu::waves::WaveOptions;
use mascar::sched::SchedulerKind;
use mascar::workload::builtin;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use vcd::{Command as Vcd, ScopeItem, TimescaleUnit};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mascar-waves-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Per-cycle values of every variable named by its dotted path.
struct Parsed {
    header: vcd::Header,
    times: Vec<u64>,
    /// path → (cycle, value) changes.
    changes: HashMap<String, Vec<(u64, u64)>>,
    /// path → width, for every declared variable.
    widths: HashMap<String, u32>,
    /// path → (cycle, text) changes of string variables.
    strings: HashMap<String, Vec<(u64, String)>>,
}

fn paths(items: &[ScopeItem], prefix: &str, out: &mut HashMap<vcd::IdCode, (String, u32)>) {
    for it in items {
        match it {
            ScopeItem::Scope(s) => paths(&s.items, &format!("{prefix}{}.", s.identifier), out),
            ScopeItem::Var(v) => {
                out.insert(v.code, (format!("{prefix}{}", v.reference), v.size));
            }
            _ => {}
        }
    }
}

fn parse(path: &Path) -> Parsed {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut p = vcd::Parser::new(f);
    let header = p.parse_header().unwrap();
    let mut vars = HashMap::new();
    paths(&header.items, "", &mut vars);
    let names: HashMap<_, _> = vars.iter().map(|(k, v)| (*k, v.0.clone())).collect();
    let widths = vars.into_values().collect();
    let mut strings = HashMap::<String, Vec<(u64, String)>>::new();
    // Time units per cycle: 2 for mascar's VCD (500 ps), 10 for its FST (100 ps) read back
    // through fst2vcd.
    let per_cycle = match header.timescale {
        Some((n, TimescaleUnit::PS)) => 1000 / n as u64,
        other => panic!("timescale {other:?}"),
    };
    let (mut t, mut times, mut changes) = (0, vec![], HashMap::<String, Vec<(u64, u64)>>::new());
    for cmd in p {
        let bit = |v: vcd::Value| (v == vcd::Value::V1) as u64;
        match cmd.unwrap() {
            // Half cycles (the clock falls mid-cycle): read in cycles.
            Vcd::Timestamp(x) => {
                t = x / per_cycle;
                times.push(t);
            }
            Vcd::ChangeScalar(id, v) => changes.entry(names[&id].clone()).or_default().push((t, bit(v))),
            Vcd::ChangeVector(id, v) => {
                let x = v.iter().fold(0, |a, b| a << 1 | bit(b));
                changes.entry(names[&id].clone()).or_default().push((t, x));
            }
            Vcd::ChangeString(id, s) => strings.entry(names[&id].clone()).or_default().push((t, s)),
            _ => {}
        }
    }
    Parsed {
        header,
        times,
        changes,
        widths,
        strings,
    }
}

impl Parsed {
    /// The value of `var` at `cycle` (the last change at or before it).
    fn at(&self, var: &str, cycle: u64) -> u64 {
        self.changes[var]
            .iter()
            .take_while(|c| c.0 <= cycle)
            .last()
            .expect("a first value")
            .1
    }

    /// The text of string variable `var` at `cycle`.
    fn text_at(&self, var: &str, cycle: u64) -> &str {
        &self.strings[var]
            .iter()
            .take_while(|c| c.0 <= cycle)
            .last()
            .expect("a first value")
            .1
    }

    /// Cycles in `start..end` at which `var` was 1 (a 1-bit signal).
    fn cycles_high(&self, var: &str, end: u64) -> u64 {
        let ch = &self.changes[var];
        let mut total = 0;
        for (i, &(t, v)) in ch.iter().enumerate() {
            let until = ch.get(i + 1).map_or(end, |c| c.0);
            total += v * (until - t);
        }
        total
    }
}

fn config(s: SchedulerKind, engine: Engine, sms: u32) -> Config {
    Config {
        sms,
        scheduler: s,
        engine,
        ..Config::default()
    }
}

#[test]
fn a_whole_run_waveform_agrees_with_the_run_statistics() {
    // Two rounds of the six CTAs an SM holds, to the end: the whole kernel on one SM is 47 M
    // cycles, most of this suite's time, and checks nothing more.
    let mut k = builtin::find("kmeans-1").unwrap().kernel();
    k.grid = k.grid.min(12);
    let cfg = config(SchedulerKind::Mascar, Engine::Ref, 1);
    let path = temp("whole.vcd");
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    gpu.record_waves(&WaveOptions {
        path: path.clone(),
        window: None,
        sms: None,
    })
    .unwrap();
    let stats = gpu.run(&k, None).unwrap();
    let w = parse(&path);
    // Two time units per cycle, one cycle per ns.
    assert_eq!(w.header.timescale, Some((500, TimescaleUnit::PS)));
    let end = stats.cycles;
    assert_eq!(
        w.times.last().copied(),
        Some(end),
        "the file ends at the last cycle"
    );
    // The waveform's mode register is high on exactly the cycles MAS counted as MP.
    assert_eq!(w.cycles_high("gpu.sm0.mp", end), stats.mas.mp_cycles);
    // Every issue strobe is one warp instruction.
    let issued = w.cycles_high("gpu.sm0.issue0_valid", end) + w.cycles_high("gpu.sm0.issue1_valid", end);
    assert_eq!(issued, stats.warp_instructions);
    assert!(stats.mas.mp_cycles > 0, "kmeans-1 under Mascar enters MP");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_window_of_chosen_sms_with_rtl_signals_converts_with_vcd2fst_and_has_a_gtkw() {
    let k = builtin::find("sad-2").unwrap().kernel();
    let cfg = Config {
        max_cycles: 400,
        ..config(SchedulerKind::Mascar, Engine::Rtl, 2)
    };
    let path = temp("window.vcd");
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    gpu.record_waves(&WaveOptions {
        path: path.clone(),
        window: Some((100, 300)),
        sms: Some(vec![1]),
    })
    .unwrap();
    // The run stops at max_cycles: the file is still complete.
    assert!(gpu.run(&k, None).is_err());
    let w = parse(&path);
    assert!(
        w.times.iter().all(|t| (100..=300).contains(t)),
        "times outside the window"
    );
    assert!(w.header.find_scope(&["gpu", "sm1", "rtl", "issue_top"]).is_some());
    assert!(w
        .header
        .find_scope(&["gpu", "sm1", "rtl", "reexec_queue"])
        .is_some());
    assert!(
        w.header.find_scope(&["gpu", "sm0"]).is_none(),
        "SM 0 was not asked for"
    );
    // The RTL scheduler's own mode register matches the model's view of it.
    assert_eq!(
        w.changes["gpu.sm1.mp"],
        w.changes["gpu.sm1.rtl.issue_top.sched.mp"]
    );
    let fst = path.with_extension("fst");
    let out = Command::new("vcd2fst")
        .arg(&path)
        .arg(&fst)
        .output()
        .expect("`vcd2fst` is not installed: apt-get install -y gtkwave (the test command installs it)");
    assert!(
        out.status.success(),
        "vcd2fst: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&fst).unwrap().len() > 0);

    let gtkw = path.with_extension("gtkw");
    mascar::gpu::waves::write_gtkw(&gtkw, &path, &[1], 2, 48, (100, 300)).unwrap();
    let text = std::fs::read_to_string(&gtkw).unwrap();
    for needle in [
        "[dumpfile] \"window.vcd\"",
        "[timestart] 100000\n",
        "gpu.clk\n",
        // Text views, and the warps one scope each.
        "gpu.sm1.mode\n",
        "gpu.sm1.owner_name\n",
        "gpu.sm1.warp07.state\n",
        "gpu.sm1.warp47.stall\n",
        // Each model signal beside the RTL signal that computes it.
        "gpu.sm1.mp\n@28\n+{rtl:sched/mp} gpu.sm1.rtl.issue_top.sched.mp\n",
        "gpu.sm1.wst_mem[47:0]\n@22\n+{rtl:wst/mem[47:0]} gpu.sm1.rtl.issue_top.wst.mem[47:0]\n",
    ] {
        assert!(
            text.contains(needle),
            "{needle} missing from the save file:\n{text}"
        );
    }
}

/// A few CTAs of sad-2 on one SM under the RTL engine: long enough to time, short enough
/// to run to the end.
fn short_rtl_run(window: Option<(u64, u64)>, path: &Path) -> (mascar::stats::RunStats, f64) {
    let mut k = builtin::find("sad-2").unwrap().kernel();
    k.grid = k.grid.min(6);
    // No max_cycles: the kernel runs to its end.
    let cfg = config(SchedulerKind::Mascar, Engine::Rtl, 1);
    assert_eq!(cfg.max_cycles, 0);
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    if window.is_some() {
        gpu.record_waves(&WaveOptions {
            path: path.to_path_buf(),
            window,
            sms: None,
        })
        .unwrap();
    }
    let t = std::time::Instant::now();
    let stats = gpu.run(&k, None).expect("a windowed run ends without an error");
    (stats, t.elapsed().as_secs_f64())
}

#[test]
fn a_window_needs_no_max_cycles_and_costs_little_outside_it() {
    let path = temp("late-window.vcd");
    // Best of two each, interleaved, against the noise of a shared machine.
    let (mut plain, mut waved) = (f64::MAX, f64::MAX);
    let (mut plain_stats, mut waved_stats) = (None, None);
    for _ in 0..2 {
        let (s, t) = short_rtl_run(None, &path);
        plain = plain.min(t);
        plain_stats = Some(s);
        let (s, t) = short_rtl_run(Some((100, 300)), &path);
        waved = waved.min(t);
        waved_stats = Some(s);
    }
    let (plain_stats, waved_stats) = (plain_stats.unwrap(), waved_stats.unwrap());
    assert_eq!(
        waved_stats.cycles, plain_stats.cycles,
        "recording changes nothing"
    );
    assert!(
        plain_stats.cycles > 5_000,
        "{} cycles: too short to time",
        plain_stats.cycles
    );
    let w = parse(&path);
    assert!(
        w.times.iter().all(|t| (100..=300).contains(t)),
        "times outside the window"
    );
    assert_eq!(
        w.times.last().copied(),
        Some(300),
        "the file ends at the window's end"
    );
    assert!(w.changes.contains_key("gpu.sm0.rtl.issue_top.sched.mp"));
    // Probing every RTL signal every cycle made the run several times slower (issue 17
    // measured 37 k -> 5.5 k cycles/s); outside the window nothing is probed.
    assert!(
        waved < 1.6 * plain + 0.05,
        "a 200-cycle window took {waved:.3} s against {plain:.3} s without waves ({} cycles)",
        plain_stats.cycles
    );
}

/// sad-2 on one SM under the RTL engine, cycles 100..300, parsed.
fn rtl_window(name: &str) -> Parsed {
    let k = builtin::find("sad-2").unwrap().kernel();
    let cfg = Config {
        max_cycles: 300,
        ..config(SchedulerKind::Mascar, Engine::Rtl, 1)
    };
    let path = temp(name);
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    gpu.record_waves(&WaveOptions {
        path: path.clone(),
        window: Some((100, 300)),
        sms: None,
    })
    .unwrap();
    let _ = gpu.run(&k, None);
    parse(&path)
}

#[test]
fn rtl_signals_are_registers_in_warp_order_and_never_constants() {
    let w = rtl_window("readable.vcd");
    let rtl: Vec<&String> = w
        .widths
        .keys()
        .filter(|p| p.starts_with("gpu.sm0.rtl."))
        .collect();
    assert!(rtl.len() > 50, "{} RTL signals", rtl.len());
    for p in &rtl {
        let ch = w.changes.get(*p).map_or(&[][..], |c| &c[..]);
        assert!(
            ch.iter().any(|c| c.1 != ch[0].1),
            "{p} never changes over the dump: {ch:?}"
        );
        let leaf = p.rsplit('.').next().unwrap();
        assert!(leaf != "d" && leaf != "q", "{p}: a flop shows as its d/q pins");
    }
    // Configuration inputs are constant by construction.
    assert!(!w.widths.contains_key("gpu.sm0.rtl.issue_top.mas_enable"));
    // One signal per register, named after it.
    assert_eq!(w.widths.get("gpu.sm0.rtl.issue_top.wst.mem_r"), Some(&48));
    // Per-warp vectors are one vector, warp w = bit w: the WST's output is the model's
    // view of it, cycle for cycle.
    assert_eq!(w.widths.get("gpu.sm0.rtl.issue_top.wst.mem"), Some(&48));
    assert_eq!(
        w.changes["gpu.sm0.rtl.issue_top.wst.mem"],
        w.changes["gpu.sm0.wst_mem"]
    );
    assert!(!w.widths.contains_key("gpu.sm0.rtl.issue_top.wst.mem_0"));
    // A clock: high from the start of each cycle, low from its middle.
    let clk = &w.changes["gpu.clk"];
    assert_eq!(clk.len(), 2 * 200, "two edges per cycle of the window");
    assert!(clk
        .iter()
        .enumerate()
        .all(|(i, c)| c.0 == 100 + i as u64 / 2 && c.1 == (i % 2 == 0) as u64));
}

#[test]
fn mode_owner_and_each_warps_state_and_stall_read_as_text() {
    let w = rtl_window("decoded.vcd");
    let warps = 48;
    for t in 100..300 {
        let mp = w.at("gpu.sm0.mp", t);
        assert_eq!(
            w.text_at("gpu.sm0.mode", t),
            if mp == 1 { "MP" } else { "EP" },
            "cycle {t}"
        );
        let owner = match w.at("gpu.sm0.owner_valid", t) {
            1 => format!("w{}", w.at("gpu.sm0.owner", t)),
            _ => "none".to_string(),
        };
        assert_eq!(w.text_at("gpu.sm0.owner_name", t), owner, "cycle {t}");
        let (active, stall, mem) = (
            w.at("gpu.sm0.active", t),
            w.at("gpu.sm0.wst_stall", t),
            w.at("gpu.sm0.wst_mem", t),
        );
        let issued: Vec<u64> = (0..2)
            .filter(|s| w.at(&format!("gpu.sm0.issue{s}_valid"), t) == 1)
            .map(|s| w.at(&format!("gpu.sm0.issue{s}_warp"), t))
            .collect();
        for warp in 0..warps {
            let state = w.text_at(&format!("gpu.sm0.warp{warp:02}.state"), t);
            let want = if active >> warp & 1 == 0 {
                "off"
            } else if issued.contains(&warp) {
                "issue"
            } else if mem >> warp & 1 == 1 {
                "mem"
            } else {
                "alu"
            };
            assert_eq!(state, want, "warp {warp} at cycle {t}");
            let reason = w.text_at(&format!("gpu.sm0.warp{warp:02}.stall"), t);
            assert_eq!(
                reason.contains("mas:not-owner"),
                stall >> warp & 1 == 1,
                "warp {warp} at {t}: {reason}"
            );
        }
    }
    // Every warp is its own scope, in warp order.
    assert!(w.header.find_scope(&["gpu", "sm0", "warp07"]).is_some());
}

#[test]
fn the_save_file_lists_only_what_the_dump_declares() {
    // A reference-engine dump has no RTL signals: its save file names none.
    let k = builtin::find("sad-2").unwrap().kernel();
    let cfg = Config {
        max_cycles: 200,
        ..config(SchedulerKind::Mascar, Engine::Ref, 1)
    };
    let path = temp("ref.vcd");
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    gpu.record_waves(&WaveOptions {
        path: path.clone(),
        window: None,
        sms: None,
    })
    .unwrap();
    let _ = gpu.run(&k, None);
    let gtkw = path.with_extension("gtkw");
    mascar::gpu::waves::write_gtkw(&gtkw, &path, &[0], 2, 48, (0, 200)).unwrap();
    let text = std::fs::read_to_string(&gtkw).unwrap();
    assert!(
        text.contains("gpu.sm0.mp\n") && text.contains("gpu.sm0.warp00.state\n"),
        "{text}"
    );
    assert!(!text.contains(".rtl."), "{text}");
    // Groups open and close in pairs.
    assert_eq!(
        text.matches("@800200").count() + text.matches("@c00200").count(),
        text.matches("@1000200").count() + text.matches("@1400200").count()
    );
}

#[test]
fn a_bad_sm_list_is_refused_and_leaves_no_file() {
    let cfg = config(SchedulerKind::Lrr, Engine::Ref, 2);
    let path = temp("refused.vcd");
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    let err = gpu
        .record_waves(&WaveOptions {
            path: path.clone(),
            window: None,
            sms: Some(vec![5]),
        })
        .unwrap_err();
    assert!(err.to_string().contains("SM 5 does not exist"), "{err}");
    let dir = path.parent().unwrap();
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("refused"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn window_syntax_errors_name_the_problem() {
    use mascar::gpu::waves::parse_window;
    assert_eq!(parse_window("10..20"), Ok((10, 20)));
    assert_eq!(parse_window("..20"), Ok((0, 20)));
    assert_eq!(parse_window("5.."), Ok((5, u64::MAX)));
    assert!(parse_window("20..10").unwrap_err().contains("below"));
    assert!(parse_window("x..10").unwrap_err().contains("`x`"));
    assert!(parse_window("10").unwrap_err().contains("START..END"));
}

// ---- FST (`--vcd PATH.fst`) -------------------------------------------------------------

/// Records sad-2 on one SM under the RTL engine, cycles 100..300, to `path` (VCD or FST by
/// its extension).
fn record_rtl_window(path: &Path) {
    let k = builtin::find("sad-2").unwrap().kernel();
    let cfg = Config {
        max_cycles: 300,
        ..config(SchedulerKind::Mascar, Engine::Rtl, 1)
    };
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    gpu.record_waves(&WaveOptions {
        path: path.to_path_buf(),
        window: Some((100, 300)),
        sms: None,
    })
    .unwrap();
    assert!(gpu.run(&k, None).is_err(), "stops at max_cycles");
}

#[test]
fn an_fst_dump_reads_back_through_fst2vcd_as_the_same_signals_and_values() {
    let vcd_path = temp("same.vcd");
    let fst_path = temp("same.fst");
    record_rtl_window(&vcd_path);
    record_rtl_window(&fst_path);
    let fst_len = std::fs::metadata(&fst_path).unwrap().len();
    let vcd_len = std::fs::metadata(&vcd_path).unwrap().len();
    assert!(
        fst_len > 0 && fst_len < vcd_len,
        "FST {fst_len} bytes, VCD {vcd_len}"
    );
    let back = temp("same-back.vcd");
    let out = Command::new("fst2vcd")
        .arg("-f")
        .arg(&fst_path)
        .arg("-o")
        .arg(&back)
        .output()
        .expect("`fst2vcd` is not installed: apt-get install -y gtkwave (the test command installs it)");
    assert!(
        out.status.success(),
        "fst2vcd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (v, f) = (parse(&vcd_path), parse(&back));
    assert_eq!(f.header.timescale, Some((100, TimescaleUnit::PS)));
    // The same signals, text views as 8 bits per character.
    let mut names: Vec<&String> = v.widths.keys().collect();
    names.sort();
    let mut fst_names: Vec<&String> = f.widths.keys().collect();
    fst_names.sort();
    assert_eq!(names, fst_names);
    assert!(names.len() > 100, "{} signals", names.len());
    for (name, &width) in &v.widths {
        if v.strings.contains_key(name) {
            assert_eq!(f.widths[name] % 8, 0, "{name}: text as ASCII");
        } else {
            assert_eq!(f.widths[name], width, "{name}");
        }
    }
    // The same values at the same cycles: bits, registers, the clock.
    for name in [
        "gpu.clk",
        "gpu.sm0.mp",
        "gpu.sm0.owner",
        "gpu.sm0.wst_stall",
        "gpu.sm0.mshrs_used",
        "gpu.sm0.rtl.issue_top.wst.mem",
        "gpu.sm0.rtl.issue_top.sched.mp",
    ] {
        // fst-writer's files begin at time 0: unknown (x, read as 0) until the window.
        let from_window: Vec<(u64, u64)> = f.changes[name].iter().copied().filter(|c| c.0 >= 100).collect();
        assert_eq!(v.changes[name], from_window, "{name}");
    }
    // Texts: the FST's ASCII vectors spell the VCD's strings.
    let texts = parse_texts(&back);
    for name in [
        "gpu.sm0.mode",
        "gpu.sm0.owner_name",
        "gpu.sm0.warp03.state",
        "gpu.sm0.warp03.stall",
    ] {
        let from_window: Vec<(u64, String)> = texts[name].iter().filter(|c| c.0 >= 100).cloned().collect();
        assert_eq!(from_window, v.strings[name], "{name}");
    }
    // The save file shows the texts as ASCII and names the FST.
    let gtkw = std::fs::read_to_string(fst_path.with_extension("gtkw")).unwrap();
    for needle in [
        "[dumpfile] \"same.fst\"",
        "@820\ngpu.sm0.mode[15:0]\n",
        "gpu.sm0.mp\n@28\n+{rtl:sched/mp} gpu.sm0.rtl.issue_top.sched.mp\n",
    ] {
        assert!(
            gtkw.contains(needle),
            "{needle} missing from the save file:\n{gtkw}"
        );
    }
}

/// The changes of every vector whose width is a whole number of bytes, read as ASCII text
/// (trailing spaces dropped), by dotted path.
fn parse_texts(path: &Path) -> HashMap<String, Vec<(u64, String)>> {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut p = vcd::Parser::new(f);
    let header = p.parse_header().unwrap();
    let mut vars = HashMap::new();
    paths(&header.items, "", &mut vars);
    let per_cycle = match header.timescale {
        Some((n, TimescaleUnit::PS)) => 1000 / n as u64,
        other => panic!("timescale {other:?}"),
    };
    let mut out = HashMap::<String, Vec<(u64, String)>>::new();
    let mut t = 0;
    for cmd in p {
        match cmd.unwrap() {
            Vcd::Timestamp(x) => t = x / per_cycle,
            Vcd::ChangeVector(id, v) => {
                let (name, width) = &vars[&id];
                if width % 8 != 0 {
                    continue;
                }
                // A VCD vector may leave out leading zeros.
                let mut bits = vec![0u8; *width as usize - v.len().min(*width as usize)];
                bits.extend(v.iter().map(|b| (b == vcd::Value::V1) as u8));
                let bytes: Vec<u8> = bits
                    .chunks(8)
                    .map(|c| c.iter().fold(0, |a, b| a << 1 | b))
                    .collect();
                let text = String::from_utf8_lossy(&bytes).trim_end().to_string();
                out.entry(name.clone()).or_default().push((t, text));
            }
            _ => {}
        }
    }
    out
}

#[test]
fn an_unwritable_fst_path_is_refused_and_leaves_no_file() {
    // A file where the output's directory should be.
    let blocker = temp("blocker");
    std::fs::write(&blocker, "not a directory").unwrap();
    let path = blocker.join("out.fst");
    let cfg = config(SchedulerKind::Mascar, Engine::Ref, 1);
    let mut gpu = mascar::engine::gpu(&cfg).unwrap();
    let err = gpu
        .record_waves(&WaveOptions {
            path: path.clone(),
            window: None,
            sms: None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("out.fst"), "{err}");
    let dir = blocker.parent().unwrap();
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("out.fst"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
