//! `mascar dram --trace FILE`: a memory trace replayed through the DRAM model alone.
//!
//! Trace format (Ramulator's memory trace): one request per line, `0x<hex byte address> R|W`;
//! `#` starts a comment; blank lines are skipped. Each request is for the line (`line_bytes`,
//! 128 B) that holds the address.
//!
//! Replay, as `../shared/dram-reference/README.md` and GPGPU-Sim 3.2.2's
//! `memory_partition_unit::dram_cycle` feed `dram_t`: the address map splits the requests
//! by channel; each channel takes its own requests in file order, one per DRAM command
//! cycle while its FR-FCFS queue has room (a full channel holds no other back); returns
//! never block; each channel runs until its last request completes.

use serde::Serialize;

use crate::config::Config;
use crate::gpu::mem::dram::{DramRequest, Gddr5, Gddr5Params};
use crate::gpu::mem::ChannelMap;
use crate::stats::DramStats;

/// One trace request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRequest {
    pub addr: u64,
    pub write: bool,
}

/// A bad trace line is the trace reader's error (`FILE:LINE:COL: message`).
pub use crate::workload::trace::TraceError;

/// Parses a trace; `file` names it in errors.
pub fn parse_trace(text: &str, file: &str) -> Result<Vec<TraceRequest>, TraceError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let err = |col: usize, message: String| TraceError {
            file: file.to_string(),
            line: i + 1,
            column: col,
            message,
        };
        let body = raw.split('#').next().unwrap_or("");
        // Fields with their 1-based character columns.
        let mut fields = Vec::with_capacity(3);
        let mut start = None;
        for (ci, ch) in body.char_indices().chain(std::iter::once((body.len(), ' '))) {
            if ch.is_whitespace() {
                if let Some(s) = start.take() {
                    fields.push((body[..s].chars().count() + 1, &body[s..ci]));
                }
            } else if start.is_none() {
                start = Some(ci);
            }
        }
        let Some(&(acol, addr)) = fields.first() else {
            continue;
        };
        let hex = addr
            .strip_prefix("0x")
            .or_else(|| addr.strip_prefix("0X"))
            .ok_or_else(|| err(acol, format!("expected a hex address `0x…`, found `{addr}`")))?;
        if hex.is_empty() {
            return Err(err(acol, "no hex digits after `0x`".into()));
        }
        if let Some((k, c)) = hex.char_indices().find(|(_, c)| !c.is_ascii_hexdigit()) {
            return Err(err(
                acol + 2 + hex[..k].chars().count(),
                format!("`{c}` is not a hex digit"),
            ));
        }
        let addr = u64::from_str_radix(hex, 16)
            .map_err(|_| err(acol, format!("address `{addr}` does not fit in 64 bits")))?;
        let Some(&(kcol, kind)) = fields.get(1) else {
            return Err(err(
                raw.trim_end().chars().count() + 1,
                "expected `R` or `W` after the address".into(),
            ));
        };
        let write = match kind {
            "R" | "r" => false,
            "W" | "w" => true,
            other => return Err(err(kcol, format!("expected `R` or `W`, found `{other}`"))),
        };
        if let Some(&(col, extra)) = fields.get(2) {
            return Err(err(col, format!("unexpected `{extra}` after the request")));
        }
        out.push(TraceRequest { addr, write });
    }
    Ok(out)
}

/// What a replay reports.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    pub requests: u64,
    pub requests_per_channel: Vec<u64>,
    /// DRAM command cycles until the last channel's last request completed.
    pub dram_cycles: u64,
    /// Data-bus busy cycles ÷ cycles, both summed over channels, each channel counted
    /// until its last request completes.
    pub bus_utilization: f64,
    pub activations: u64,
    /// 1 − activations ÷ column commands.
    pub row_hit_rate: f64,
    /// All counters, in total and per channel.
    pub dram: DramStats,
}

/// Replays `trace` through one GDDR5 channel per `l2_partitions`, configured by `c`.
pub fn replay(trace: &[TraceRequest], c: &Config) -> Result<ReplayReport, String> {
    let params = Gddr5Params::from_config(c)?;
    let map = ChannelMap::new(c)?;
    let n = c.l2_partitions as usize;
    let line_bytes = c.line_bytes as u64;
    let mut per_channel: Vec<Vec<DramRequest>> = vec![Vec::new(); n];
    for r in trace {
        let line = r.addr / line_bytes;
        let req = if r.write {
            DramRequest::write(line, c.line_bytes)
        } else {
            DramRequest::read(line, c.line_bytes)
        };
        per_channel[map.channel(line)].push(req);
    }
    let mut stats = Vec::with_capacity(n);
    let mut dram_cycles = 0;
    for reqs in &per_channel {
        let mut d = Gddr5::new(params.clone());
        let (mut next, mut done) = (0, 0);
        // As `dram_cycle`: completions, the channel's cycle, then one request in.
        while done < reqs.len() {
            while d.pop_done().is_some() {
                done += 1;
            }
            if done == reqs.len() {
                break;
            }
            d.cycle();
            while d.pop_done().is_some() {
                done += 1;
            }
            if done == reqs.len() {
                break;
            }
            if next < reqs.len() && d.has_room() {
                d.push(reqs[next]);
                next += 1;
            }
        }
        dram_cycles = dram_cycles.max(d.stats.cycles);
        stats.push(d.stats.clone());
    }
    let dram = DramStats::from_channels(&stats);
    Ok(ReplayReport {
        requests: trace.len() as u64,
        requests_per_channel: per_channel.iter().map(|r| r.len() as u64).collect(),
        dram_cycles,
        bus_utilization: dram.bus_utilization,
        activations: dram.activations,
        row_hit_rate: dram.row_hit_rate,
        dram,
    })
}

impl std::fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "requests          {}", self.requests)?;
        writeln!(f, "dram_cycles       {}", self.dram_cycles)?;
        writeln!(f, "bus_utilization   {:.3}", self.bus_utilization)?;
        writeln!(f, "activations       {}", self.activations)?;
        writeln!(f, "row_hit_rate      {:.3}", self.row_hit_rate)?;
        writeln!(
            f,
            "channel  requests  cycles  bus_utilization  activations  row_hit_rate"
        )?;
        for (i, c) in self.dram.channels.iter().enumerate() {
            writeln!(
                f,
                "{i:>7}  {:>8}  {:>6}  {:>15.3}  {:>11}  {:>12.3}",
                self.requests_per_channel[i],
                c.counters.cycles,
                c.bus_utilization,
                c.counters.activations,
                c.row_hit_rate
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_parse_with_comments_and_case() {
        let t = parse_trace("# head\n0x80 R\n  0XfF w # c\n\n", "t").unwrap();
        assert_eq!(
            t,
            vec![
                TraceRequest {
                    addr: 0x80,
                    write: false
                },
                TraceRequest {
                    addr: 0xff,
                    write: true
                }
            ]
        );
    }

    #[test]
    fn bad_lines_name_line_and_column() {
        let e = |s: &str| parse_trace(s, "f.trace").unwrap_err().to_string();
        assert_eq!(e("0x10 R\n0x1g R\n"), "f.trace:2:4: `g` is not a hex digit");
        assert_eq!(
            e("80 R\n"),
            "f.trace:1:1: expected a hex address `0x…`, found `80`"
        );
        assert_eq!(e("0x80 X\n"), "f.trace:1:6: expected `R` or `W`, found `X`");
        assert_eq!(e("0x80\n"), "f.trace:1:5: expected `R` or `W` after the address");
        assert_eq!(e("0x80 R 3\n"), "f.trace:1:8: unexpected `3` after the request");
        assert_eq!(
            e("0x11111111111111111 R\n"),
            "f.trace:1:1: address `0x11111111111111111` does not fit in 64 bits"
        );
        assert_eq!(e("0x R\n"), "f.trace:1:1: no hex digits after `0x`");
    }
}
