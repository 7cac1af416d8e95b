//! The GPU: SMs, the two directions of the interconnect, L2 partitions with their DRAM, the
//! CTA dispatcher, and the cycle loop that steps them in reverse pipeline order.

pub mod crew;
pub mod events;
pub mod mem;
mod skip;
pub mod sm;
pub mod waves;

use std::sync::Arc;

use crate::config::{Config, ConfigError};
use crate::mascar::blocks::BlockEngine;
use crate::stats::{CacheStats, DramStats, RunStats, SmStats};
use crate::workload::Kernel;
use mem::icnt::Network;
use mem::partition::Partition;
use mem::{MemReply, MemRequest};
use sm::Sm;

/// Why a run could not complete.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("kernel `{kernel}` cannot run: {reason}")]
    DoesNotFit { kernel: String, reason: String },
    #[error("kernel `{kernel}` is invalid: {reason}")]
    InvalidKernel { kernel: String, reason: String },
    #[error("watchdog: no progress for {idle} cycles (at cycle {cycle}); stuck warps:\n{warps}")]
    Watchdog { cycle: u64, idle: u64, warps: String },
    #[error("stopped at max_cycles = {0} before the kernel finished")]
    MaxCycles(u64),
    #[error("{0}")]
    Lockstep(Box<crate::mascar::blocks::Mismatch>),
    #[error("{}", naming(path, "recording into", error))]
    Record { path: String, error: std::io::Error },
    /// A waveform or event log could not be written.
    #[error("{}", naming(path, "writing", error))]
    Output { path: String, error: std::io::Error },
}

/// An output error that names its path once: I/O errors from the output files' own
/// writers already do (`cannot write PATH: …`), raw ones get the path in front.
fn naming(path: &str, doing: &str, error: &std::io::Error) -> String {
    let text = error.to_string();
    if text.contains(&format!("{path}: ")) {
        text
    } else {
        format!("{doing} {path}: {text}")
    }
}

/// Called now and then during a run with (cycle, CTAs finished, CTAs in the grid).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64, u64);

/// Called after every cycle with (cycle, SMs).
pub type Observer<'a> = &'a mut dyn FnMut(u64, &[Sm]);

pub struct Gpu {
    pub cfg: Config,
    pub sms: Vec<Sm>,
    pub partitions: Vec<Partition>,
    /// Which partition (memory channel) each line goes to.
    channels: mem::ChannelMap,
    requests: Network<MemRequest>,
    replies: Network<MemReply>,
    pub cycle: u64,
    /// The VCD being written, when asked for.
    waves: Option<crate::gpu::waves::Waves>,
    /// The event log being written, when asked for.
    events: Option<crate::gpu::events::EventLog>,
    /// The SM whose RTL ports are being recorded, and where.
    recording: Option<(usize, std::path::PathBuf)>,
    /// Kernels run so far: the next one runs back to back after them (see [`Gpu::run`]).
    kernels_run: u32,
    /// The SM the CTA dispatcher tries first next cycle: one past the last SM that took a
    /// CTA. It carries over from one kernel to the next (GPGPU-Sim `m_last_cluster_issue`).
    dispatch_ptr: usize,
    /// Step SMs that have no work left (tests set it to check that skipping them changes
    /// nothing; see [`Gpu::run`]).
    pub step_idle_sms: bool,
    /// Threads stepping the SMs of a cycle ([`Gpu::set_threads`]; 1: the caller alone).
    threads: usize,
    /// Per SM, the reply the network delivers this cycle (taken before the SMs step in
    /// parallel).
    arrived: Vec<Option<MemReply>>,
    /// Jump over cycles in which no unit acts (`skip.rs`; [`Gpu::set_cycle_skip`]).
    cycle_skip: bool,
    /// Cycles jumped over so far (not a statistic: the same run with the skip off has none).
    pub cycles_skipped: u64,
}

impl Gpu {
    /// A GPU whose SMs take their Mascar blocks from `engine` (see `crate::engine`, which
    /// builds one from the configuration).
    pub fn new(cfg: &Config, engine: Arc<dyn BlockEngine>) -> Result<Gpu, ConfigError> {
        cfg.validate()?;
        let n = cfg.sms as usize;
        let p = cfg.l2_partitions as usize;
        // The network's memory ports are the L2 sub-partitions (GPGPU-Sim 3.2.2
        // `icnt_create(n_simt_clusters, m_n_mem_sub_partition)`).
        let ports = p * cfg.l2_sub_partitions as usize;
        Ok(Gpu {
            cfg: cfg.clone(),
            sms: (0..n).map(|i| Sm::new(i, cfg, engine.blocks(i))).collect(),
            partitions: (0..p).map(|i| Partition::new(i, cfg)).collect(),
            channels: mem::ChannelMap::new(cfg).map_err(|e| ConfigError::new("dram_address_map", e))?,
            requests: Network::new(
                n,
                ports,
                cfg.sm_port_flits,
                cfg.partition_port_flits,
                cfg.icnt_latency,
                mem::icnt::RouterShape::of(cfg),
            ),
            replies: Network::new(
                ports,
                n,
                cfg.partition_port_flits,
                cfg.sm_port_flits,
                cfg.icnt_latency,
                mem::icnt::RouterShape::of(cfg),
            ),
            cycle: 0,
            waves: None,
            events: None,
            recording: None,
            kernels_run: 0,
            dispatch_ptr: 0,
            step_idle_sms: false,
            cycle_skip: true,
            cycles_skipped: 0,
            threads: 1,
            arrived: vec![None; n],
        })
    }

    /// Steps the SMs of each cycle on `threads` threads (1: on the caller's; see
    /// [`crew`]). The SMs of one cycle share nothing but the reply network, whose deliveries
    /// are taken for every SM before they step, so the statistics are the same whatever the
    /// count (`testbench/traces.rs`, `threads_change_no_statistic`).
    /// SM-cycles only counted so far, by an SM's own skip or the global one (`skip.rs`).
    pub fn sm_cycles_skipped(&self) -> u64 {
        let own: u64 = self.sms.iter().map(|s| s.quiet_cycles).sum();
        own + self.cycles_skipped * self.sms.len() as u64
    }

    /// Turns the global cycle skip (`skip.rs`) on (the default) or off. It changes no
    /// statistic; off steps every cycle, as the RTL engines always do.
    pub fn set_cycle_skip(&mut self, on: bool) {
        self.cycle_skip = on;
    }

    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.clamp(1, self.sms.len().max(1));
    }

    /// Refuses a kernel whose single CTA cannot fit in an SM.
    pub fn check_fits(&self, k: &Kernel) -> Result<(), SimError> {
        k.validate().map_err(|reason| SimError::InvalidKernel {
            kernel: k.name.clone(),
            reason,
        })?;
        let c = &self.cfg;
        let warps = k.warps_per_cta();
        let regs = k.regs as u64 * warps as u64 * 32;
        let checks = [
            (
                k.block as u64,
                c.threads_per_sm as u64,
                "threads",
                "threads_per_sm",
            ),
            (warps as u64, c.warps_per_sm as u64, "warps", "warps_per_sm"),
            (regs, c.regs_per_sm as u64, "registers", "regs_per_sm"),
            (
                k.shared_bytes as u64,
                c.shared_per_sm as u64,
                "bytes of shared memory",
                "shared_per_sm",
            ),
        ];
        for (need, have, what, key) in checks {
            if need > have {
                return Err(SimError::DoesNotFit {
                    kernel: k.name.clone(),
                    reason: format!("a CTA needs {need} {what} but an SM has {have} ({key})"),
                });
            }
        }
        Ok(())
    }

    /// Records a VCD of the next run (see [`crate::gpu::waves`]).
    pub fn record_waves(&mut self, opts: &crate::gpu::waves::WaveOptions) -> Result<(), SimError> {
        let w = crate::gpu::waves::Waves::create(
            opts,
            &mut self.sms,
            self.cfg.schedulers_per_sm as usize,
            self.cfg.warps_per_sm,
        )
        .map_err(|error| SimError::Output {
            path: opts.path.display().to_string(),
            error,
        })?;
        self.waves = Some(w);
        Ok(())
    }

    /// Writes the per-cycle event log of the next run to `path` (cycles in `window`).
    pub fn record_events(
        &mut self,
        path: &std::path::Path,
        window: Option<(u64, u64)>,
    ) -> Result<(), SimError> {
        let log = crate::gpu::events::EventLog::create(path, window).map_err(|error| SimError::Output {
            path: path.display().to_string(),
            error,
        })?;
        for sm in &mut self.sms {
            sm.events = Some(Vec::with_capacity(64));
        }
        self.events = Some(log);
        Ok(())
    }

    /// Records the RTL blocks' ports of SM `sm` for the first `cycles` cycles of the next
    /// run into `dir` (see [`crate::rtl::record`]).
    pub fn record_ports(&mut self, dir: &std::path::Path, sm: usize, cycles: u64) -> Result<(), SimError> {
        let err = |error| SimError::Record {
            path: dir.display().to_string(),
            error,
        };
        let n = self.sms.len();
        let s = self.sms.get_mut(sm).ok_or_else(|| {
            err(std::io::Error::other(format!(
                "SM {sm} does not exist (the machine has {n})"
            )))
        })?;
        s.blocks.start_recording(dir, cycles).map_err(err)?;
        self.recording = Some((sm, dir.to_path_buf()));
        Ok(())
    }

    /// Runs `k` to completion. A VCD being recorded is completed and moved into place
    /// whether the run succeeds or stops with an error (it then ends at the failing cycle).
    ///
    /// Kernels run one after another on the same GPU run back to back, as in Accel-Sim:
    /// the cycle count goes on, L1 and L2 keep their lines (unless
    /// `flush_l1_between_kernels` / `flush_l2_between_kernels`), while each SM's warps,
    /// pipelines and scheduling blocks (every engine's, by their kernel-launch reset) start
    /// as in a fresh run, and the statistics returned are the kernel's own.
    pub fn run(&mut self, k: &Kernel, progress: Option<Progress>) -> Result<RunStats, SimError> {
        self.run_observed(k, progress, None)
    }

    /// [`Gpu::run`], calling `observe(cycle, sms)` after every cycle (tests check per-cycle
    /// invariants with it).
    pub fn run_observed(
        &mut self,
        k: &Kernel,
        progress: Option<Progress>,
        observe: Option<Observer>,
    ) -> Result<RunStats, SimError> {
        let mut result = self.run_cycles(k, progress, observe);
        if let Some((sm, dir)) = self.recording.take() {
            if let (Err(error), Ok(_)) = (self.sms[sm].blocks.finish_recording(), &result) {
                result = Err(SimError::Record {
                    path: dir.display().to_string(),
                    error,
                });
            }
        }
        if let Some(log) = self.events.take() {
            let path = log.path().display().to_string();
            if let (Err(error), Ok(_)) = (log.finish(), &result) {
                result = Err(SimError::Output { path, error });
            }
        }
        if let Some(w) = self.waves.take() {
            let path = w.path().display().to_string();
            if let (Err(error), Ok(_)) = (w.finish(self.cycle), &result) {
                result = Err(SimError::Output { path, error });
            }
        }
        result
    }

    fn run_cycles(
        &mut self,
        k: &Kernel,
        progress: Option<Progress>,
        observe: Option<Observer>,
    ) -> Result<RunStats, SimError> {
        // Buffers where `buffer_placement` / `placement` put them (kernel-format kernels).
        let placed = crate::workload::placement::place_for(k, &self.cfg).map_err(|reason| {
            SimError::InvalidKernel {
                kernel: k.name.clone(),
                reason,
            }
        })?;
        let k: &Kernel = &placed;
        self.check_fits(k)?;
        if self.kernels_run > 0 {
            self.next_kernel();
        }
        self.kernels_run += 1;
        let start = self.cycle;
        let crew = crew::Crew::new(self.threads);
        std::thread::scope(|scope| {
            for part in 1..crew.threads() {
                let crew = &crew;
                scope.spawn(move || crew.work(part, k));
            }
            // The workers return once the loop ends, by return or by panic.
            let _finish = crew::Finish(&crew);
            self.cycle_loop(k, progress, observe, &crew)
        })?;
        Ok(self.summary(k, self.cycle - start))
    }

    /// The cycles of one kernel, until its last CTA finishes.
    fn cycle_loop(
        &mut self,
        k: &Kernel,
        mut progress: Option<Progress>,
        mut observe: Option<Observer>,
        crew: &crew::Crew,
    ) -> Result<(), SimError> {
        let grid = k.grid as u64;
        let mut next_cta = 0u32;
        let n = self.sms.len();
        let flit = self.cfg.flit_bytes;
        let line = self.cfg.line_bytes;
        let start = self.cycle;
        // 4.x `select_kernel` hands out no CTA until the launch latency is counted down, so
        // the first CTA runs in cycle latency + 1 (cycle 1 with none). The watchdog counts
        // from the first dispatch: the latency is no stall.
        let dispatch_at = start + self.cfg.kernel_launch_latency;
        let mut last_progress = (dispatch_at, 0u64);
        let may_skip = self.may_skip(observe.is_some());
        for sm in &mut self.sms {
            sm.may_skip = may_skip;
        }
        loop {
            let now = self.cycle;
            let skip_rest = next_cta == k.grid && !self.step_idle_sms;
            // Decided before the cycle: if nothing acts in it, it is run as usual (the blocks
            // see its inputs once) and the quiet cycles after it are jumped over below.
            let next_act = if may_skip {
                self.next_act(now, k, next_cta, dispatch_at, skip_rest)
            } else {
                now
            };
            self.requests.step(now);
            self.replies.step(now);
            for p in &mut self.partitions {
                p.cycle(now, &mut self.requests);
            }
            for sp in self.partitions.iter_mut().flat_map(|p| p.subs.iter_mut()) {
                if let Some(r) = sp.replies.front() {
                    let dst = r.sm as usize;
                    let flits = r.flits(flit, line);
                    if self.replies.can_send(sp.id, flits, now) {
                        let r = sp.replies.pop_front().expect("front exists");
                        self.replies.send(sp.id, dst, flits, now, r);
                    }
                }
            }
            // Rotate who injects first so no SM is favoured under contention.
            for i in 0..n {
                let s = (i + now as usize) % n;
                self.sms[s].inject(now, &mut self.requests, &self.channels, flit);
            }
            // Once every CTA is handed out, an SM at rest (no warp, nothing in flight, nothing
            // parked, blocks in EP with no owner) stays so to the end of the kernel: its
            // cycles would only count idle scheduler cycles, so that is all they do (on the
            // BFS trace at most 8 of 46 SMs ever have work).
            if crew.threads() > 1 {
                for (slot, sm) in self.arrived.iter_mut().zip(&self.sms) {
                    if !(skip_rest && sm.is_at_rest()) {
                        *slot = self.replies.pop(sm.id, now);
                    }
                }
                crew.step(&mut self.sms, &mut self.arrived, now, k, skip_rest);
                if let Some(m) = self.sms.iter().find_map(|sm| sm.blocks.mismatch()) {
                    return Err(SimError::Lockstep(Box::new(m.clone())));
                }
            } else {
                for sm in &mut self.sms {
                    if skip_rest && sm.is_at_rest() {
                        sm.rest_cycle();
                        continue;
                    }
                    sm.cycle(now, k, &mut self.replies);
                    if let Some(m) = sm.blocks.mismatch() {
                        return Err(SimError::Lockstep(Box::new(m.clone())));
                    }
                }
            }
            if let Some(log) = self.events.as_mut() {
                let wanted = log.wants(now);
                for sm in &mut self.sms {
                    let Some(ev) = sm.events.as_mut() else { continue };
                    if wanted {
                        for e in ev.iter() {
                            log.write(now, sm.id, e).map_err(|error| SimError::Output {
                                path: log.path().display().to_string(),
                                error,
                            })?;
                        }
                    }
                    ev.clear();
                }
            }
            if let Some(f) = observe.as_mut() {
                f(now, &self.sms);
            }
            if let Some(w) = self.waves.as_mut() {
                w.sample(now, &mut self.sms).map_err(|error| SimError::Output {
                    path: w.path().display().to_string(),
                    error,
                })?;
            }
            if next_cta < k.grid && now >= dispatch_at {
                next_cta = self.dispatch_ctas(k, next_cta);
            }
            self.cycle += 1;
            if next_act > self.cycle && next_act != u64::MAX {
                // Stop at the next progress and watchdog check and at `max_cycles`, so both
                // happen at the cycles they would without the skip.
                let mut to = next_act.min(self.cycle.next_multiple_of(4096));
                if self.cfg.max_cycles > 0 {
                    to = to.min(start + self.cfg.max_cycles);
                }
                if to > self.cycle {
                    self.skip_quiet(to - self.cycle, skip_rest);
                    self.cycle = to;
                }
            }

            let done = |sms: &[Sm]| sms.iter().map(|s| s.stats.ctas_completed).sum::<u64>();
            if next_cta == k.grid && self.sms.iter().all(|s| s.is_idle()) {
                if let Some(p) = progress.as_mut() {
                    p(self.cycle - start, done(&self.sms), grid);
                }
                break;
            }
            if self.cycle.is_multiple_of(4096) {
                if let Some(p) = progress.as_mut() {
                    p(self.cycle - start, done(&self.sms), grid);
                }
                // Progress = instructions issued or replies received.
                let marker: u64 = self
                    .sms
                    .iter()
                    .map(|s| s.stats.warp_instructions + s.stats.replies_received)
                    .sum();
                if marker != last_progress.1 {
                    last_progress = (self.cycle, marker);
                } else if self.cfg.watchdog_cycles > 0
                    && self.cycle.saturating_sub(last_progress.0) >= self.cfg.watchdog_cycles
                {
                    let warps: Vec<String> =
                        self.sms.iter().flat_map(|s| s.describe_stuck_warps(k)).collect();
                    return Err(SimError::Watchdog {
                        cycle: self.cycle,
                        idle: self.cycle.saturating_sub(last_progress.0),
                        warps: warps.join("\n"),
                    });
                }
            }
            if self.cfg.max_cycles > 0 && self.cycle - start >= self.cfg.max_cycles {
                return Err(SimError::MaxCycles(self.cfg.max_cycles));
            }
        }
        Ok(())
    }

    /// One cycle of CTA dispatch, from CTA `next_cta` on; returns the next CTA to hand out.
    ///
    /// GPGPU-Sim 3.2.2 `gpgpu_sim::issue_block2core` (and Accel-Sim's 4.x, the same loop):
    /// every SM is offered at most one CTA per cycle, round robin from the SM after the last
    /// one that took a CTA; the scan's start is fixed for the cycle, so a grid smaller than
    /// the machine spreads one CTA per SM. 3.2.2 starts the pointer at SM 0 and so gives the
    /// first CTA to SM 1; 4.x (`m_last_cluster_issue = n - 1`) gives it to SM 0, as here.
    fn dispatch_ctas(&mut self, k: &Kernel, mut next_cta: u32) -> u32 {
        let n = self.sms.len();
        let start = self.dispatch_ptr;
        for i in 0..n {
            let s = (start + i) % n;
            if next_cta < k.grid && self.sms[s].can_accept(k) {
                self.sms[s].launch_cta(k, next_cta);
                next_cta += 1;
                self.dispatch_ptr = (s + 1) % n;
            }
        }
        next_cta
    }

    /// Between two kernels (the GPU is idle): fresh SMs around the old L1 contents, what
    /// GPGPU-Sim's core keeps across kernels (`sm::Carried`: fetch pointer, first scheduler,
    /// collector pointers) and the same Mascar blocks, cleared by the kernel-launch reset as
    /// hardware would be; the L2 and DRAM as they are, every counter at zero.
    fn next_kernel(&mut self) {
        let cfg = &self.cfg;
        let cycle = self.cycle;
        let old = std::mem::take(&mut self.sms);
        self.sms = old
            .into_iter()
            .map(|s| {
                let carried = s.carried();
                let mut fresh = Sm::new(s.id, cfg, s.blocks);
                fresh.resume(carried);
                fresh.blocks.launch_clear(cycle);
                fresh.l1 = s.l1;
                fresh.l1.next_kernel(cfg.flush_l1_between_kernels);
                // Test and debugging hooks stay attached.
                fresh.issue_log = s.issue_log;
                fresh.mas_log = s.mas_log;
                fresh.request_log = s.request_log;
                fresh.events = s.events;
                fresh
            })
            .collect();
        for p in &mut self.partitions {
            p.next_kernel(cfg.flush_l2_between_kernels);
        }
        self.requests.flits_sent = 0;
        self.replies.flits_sent = 0;
    }

    /// Builds the run's statistics.
    pub fn summary(&self, k: &Kernel, cycles: u64) -> RunStats {
        let mut sm = SmStats::default();
        let mut l1 = CacheStats::default();
        for s in &self.sms {
            sm.add(&s.stats);
            l1.add(s.l1_stats());
        }
        let mut l2 = CacheStats::default();
        for p in &self.partitions {
            l2.add(&p.stats());
        }
        let channels: Vec<_> = self.partitions.iter().map(|p| p.dram.stats().clone()).collect();
        let dram = DramStats::from_channels(&channels);
        let c = &self.cfg;
        let cycles_f = cycles.max(1) as f64;
        let sm_cycles = cycles_f * c.sms as f64;
        let mp_fraction = sm.mas.mp_cycles as f64 / sm_cycles;
        let (mas, car) = (sm.mas.clone(), sm.car.clone());
        RunStats {
            kernel: k.name.clone(),
            scheduler: c.scheduler.to_string(),
            sms: c.sms,
            cycles,
            warp_instructions: sm.warp_instructions,
            simd_efficiency: sm.simd_efficiency(),
            ipc: sm.warp_instructions as f64 / cycles_f,
            peak_ipc: (c.schedulers_per_sm * c.sms) as f64,
            l1_hit_rate: l1.hit_rate(),
            l1_reservation_fails: l1.reservation_fails(),
            lsu_stall_fraction: sm.lsu_stall_cycles as f64 / sm_cycles,
            dram_utilization: dram.bus_utilization,
            dram_bytes_per_cycle: (dram.reads + dram.writes) as f64 * c.line_bytes as f64 / cycles_f,
            sm,
            l1,
            l2,
            dram,
            icnt_request_flits: self.requests.flits_sent,
            icnt_reply_flits: self.replies.flits_sent,
            mp_fraction,
            mp_mean_episode: mas.mean_mp_episode(),
            mas,
            car,
        }
    }
}

/// CTAs of `k` one SM holds at once: the least of the CTA slots, warp slots, threads,
/// registers and shared memory (the limits `Sm::can_accept` checks, as GPGPU-Sim 3.2.2's
/// `shader_core_config::max_cta` does).
pub fn resident_ctas_per_sm(cfg: &Config, k: &Kernel) -> u32 {
    let warps = k.warps_per_cta().max(1);
    let regs = k.regs.saturating_mul(warps * 32);
    [
        cfg.ctas_per_sm,
        cfg.warps_per_sm / warps,
        cfg.threads_per_sm / k.block.max(1),
        cfg.regs_per_sm.checked_div(regs).unwrap_or(u32::MAX),
        cfg.shared_per_sm.checked_div(k.shared_bytes).unwrap_or(u32::MAX),
    ]
    .into_iter()
    .min()
    .unwrap_or(0)
}

/// Warps per SM in the first wave, averaged over the machine's SMs: the grid's first
/// `sms × resident` CTAs spread over `sms` SMs (issue 30 §4 compares it with the real run's).
pub fn first_wave_warps_per_sm(cfg: &Config, k: &Kernel) -> f64 {
    let sms = cfg.sms.max(1) as u64;
    let ctas = (k.grid as u64).min(sms * resident_ctas_per_sm(cfg, k) as u64);
    (ctas * k.warps_per_cta() as u64) as f64 / sms as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::builtin::builtins;
    use crate::workload::kernel_format::Scale;

    /// The occupancy the characterisation reports is what CTA dispatch does: an SM of the
    /// default machine takes exactly `resident_ctas_per_sm` CTAs of every built-in, at both
    /// scales, before `can_accept` refuses the next.
    #[test]
    fn resident_ctas_match_what_an_sm_accepts() {
        let cfg = Config::default();
        let engine = crate::engine::for_config(&cfg).unwrap();
        for b in builtins() {
            for scale in [Scale::Default, Scale::Full] {
                let k = b.kernel_at(scale);
                let mut sm = Sm::new(0, &cfg, engine.blocks(0));
                let mut n = 0;
                while sm.can_accept(&k) && n < k.grid {
                    sm.launch_cta(&k, n);
                    n += 1;
                }
                let want = resident_ctas_per_sm(&cfg, &k).min(k.grid);
                assert_eq!(n, want, "{} at {}", b.name, scale.name());
                let w = first_wave_warps_per_sm(&cfg, &k);
                assert!(w > 0.0 && w <= cfg.warps_per_sm as f64, "{}: {w}", b.name);
            }
        }
    }
}
