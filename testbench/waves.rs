//! Waveforms from `--vcd`: a VCD any tool reads (the `vcd` crate's parser and GTKWave's
//! `vcd2fst`), in cycles, limited to the window and SMs asked for, with the RTL blocks'
//! signals under the model's, and values that agree with the run's own statistics.

use mascar::config::{Config, Engine};
use mascar::gpu::Gpu;
use mascar::sched::SchedulerKind;
use mascar::waves::WaveOptions;
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
}

fn paths(items: &[ScopeItem], prefix: &str, out: &mut HashMap<vcd::IdCode, String>) {
    for it in items {
        match it {
            ScopeItem::Scope(s) => paths(&s.items, &format!("{prefix}{}.", s.identifier), out),
            ScopeItem::Var(v) => {
                out.insert(v.code, format!("{prefix}{}", v.reference));
            }
            _ => {}
        }
    }
}

fn parse(path: &Path) -> Parsed {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut p = vcd::Parser::new(f);
    let header = p.parse_header().unwrap();
    let mut names = HashMap::new();
    paths(&header.items, "", &mut names);
    let (mut t, mut times, mut changes) = (0, vec![], HashMap::<String, Vec<(u64, u64)>>::new());
    for cmd in p {
        let bit = |v: vcd::Value| (v == vcd::Value::V1) as u64;
        match cmd.unwrap() {
            Vcd::Timestamp(x) => {
                t = x;
                times.push(x);
            }
            Vcd::ChangeScalar(id, v) => changes.entry(names[&id].clone()).or_default().push((t, bit(v))),
            Vcd::ChangeVector(id, v) => {
                let x = v.iter().fold(0, |a, b| a << 1 | bit(b));
                changes.entry(names[&id].clone()).or_default().push((t, x));
            }
            _ => {}
        }
    }
    Parsed {
        header,
        times,
        changes,
    }
}

impl Parsed {
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
    let k = builtin::find("kmeans-1").unwrap().kernel();
    let cfg = config(SchedulerKind::Mascar, Engine::Ref, 1);
    let path = temp("whole.vcd");
    let mut gpu = Gpu::new(&cfg).unwrap();
    gpu.record_waves(&WaveOptions {
        path: path.clone(),
        window: None,
        sms: None,
    })
    .unwrap();
    let stats = gpu.run(&k, None).unwrap();
    let w = parse(&path);
    assert_eq!(w.header.timescale, Some((1, TimescaleUnit::NS)));
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
    let k = builtin::find("srad-1").unwrap().kernel();
    let cfg = Config {
        max_cycles: 400,
        ..config(SchedulerKind::Mascar, Engine::Rtl, 2)
    };
    let path = temp("window.vcd");
    let mut gpu = Gpu::new(&cfg).unwrap();
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
    mascar::waves::write_gtkw(&gtkw, &path, &[1], 2, 48, (100, 300)).unwrap();
    let text = std::fs::read_to_string(&gtkw).unwrap();
    for needle in [
        "[dumpfile] \"window.vcd\"",
        "[timestart] 100",
        "gpu.sm1.mode[15:0]",
        "@820",
    ] {
        assert!(
            text.contains(needle),
            "{needle} missing from the save file:\n{text}"
        );
    }
}

#[test]
fn a_bad_sm_list_is_refused_and_leaves_no_file() {
    let cfg = config(SchedulerKind::Lrr, Engine::Ref, 2);
    let path = temp("refused.vcd");
    let mut gpu = Gpu::new(&cfg).unwrap();
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
    use mascar::waves::parse_window;
    assert_eq!(parse_window("10..20"), Ok((10, 20)));
    assert_eq!(parse_window("..20"), Ok((0, 20)));
    assert_eq!(parse_window("5.."), Ok((5, u64::MAX)));
    assert!(parse_window("20..10").unwrap_err().contains("below"));
    assert!(parse_window("x..10").unwrap_err().contains("`x`"));
    assert!(parse_window("10").unwrap_err().contains("START..END"));
}
