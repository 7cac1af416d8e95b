#!/usr/bin/env python3
"""Correlate the model (mascar) against Accel-Sim running GPGPU-Sim 3.2.2's GTX480 configuration.

For every trace directory and scheduler, runs Accel-Sim (port322 configuration, perfect I-cache)
and `mascar run` (the same GTX480 3.2.2 gpgpusim.config, same trace), parses both per kernel and
writes a markdown report: per kernel cycles ref/model and error, L1 and L2 misses, DRAM reads;
the mean absolute error per scheduler; whether the LRR->GTO speedup has the same direction where
the reference's exceeds +-3%; and, for micro-benchmark pairs `X` / `X-base`, the per-op figure
(cycles(X) - cycles(X-base)) / (warp insts(X) - warp insts(X-base)).

Accel-Sim results are cached under --cache keyed by the trace files' contents, the configuration
files, the options and the Accel-Sim commits, so a re-run only re-runs the model.

With --phases N both simulators run each trace N times, each kernel's first CTA held back 0..N-1
cycles (Accel-Sim `-gpgpu_kernel_launch_latency P`, the model's `kernel_launch_latency=P`). That
changes nothing but where the core clock stands against the DRAM clock and every cycle-indexed
rotation, so the spread is how far a figure moves on clock phase alone; the tables then hold
the means over the N phases and a further table gives each row's range on both sides.

Python 3 standard library only. See docs/correlation.md.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

DEFAULT_PEER = os.environ.get("ACCELSIM_PEER", "/work/peer")
DEFAULT_CFG = os.environ.get("ACCELSIM_CFG", "/work/shared/accelsim/port322")
DEFAULT_MODEL_CFG = os.environ.get(
    "MASCAR_GPGPUSIM_CONFIG",
    os.path.join(REPO, "testbench", "data", "dram-reference", "gtx480-3.2.2.gpgpusim.config"))
DEFAULT_CACHE = os.environ.get(
    "CORRELATE_CACHE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "mascar-correlate-cache"))
# Options given to Accel-Sim on every run, after the two config files (RECIPE.md §4-5).
ACCEL_OPTS = ["-gpgpu_perfect_inst_const_cache", "1"]
# Model settings for what Accel-Sim (GPGPU-Sim 4.x) does that 3.2.2, the model's default,
# did not: 4.x rotates which scheduler issues first each cycle (`shader_core_ctx::issue`,
# `Issue_Prio`); 3.2.2 always started with scheduler 0. `--set` options come after these
# and override them; `cfg_settings` adds the double-precision timing and generic collector units read from --cfg.
MODEL_SETTINGS = ["issue_order=rotate"]
DP_KINDS = ["add", "minmax", "mul", "fma"]


def cfg_settings(cfg_dir):
    """What the --cfg files set for Accel-Sim that the 3.2.2 file the model reads does not.
    DP add, min/max, multiply and FMA: on a core without DP units (`-gpgpu_num_dp_units 0`)
    4.x's `scheduler_unit::cycle` sends a DP_OP to the SFU, with the one latency and interval
    of `-trace_opcode_latency_initiation_dp` (trace_driven.cc `set_latency`); 3.2.2, the
    model's default, runs them on an SP pipeline with per-class `-ptx_opcode_*_dp` timing.
    Generic operand-collector units (`-gpgpu_operand_collector_num_units_gen`, port322's
    trace.config: 2), which 3.2.2 does not have. The L1 latency queue (`-gpgpu_l1_latency 1`
    in port322): a memory instruction leaves the LD/ST unit when its last access enters it;
    3.2.2 has no such queue."""
    opts = {}
    for name in sorted(os.listdir(cfg_dir)):
        path = os.path.join(cfg_dir, name)
        if not os.path.isfile(path):
            continue
        with open(path, errors="replace") as fh:
            for line in fh:
                words = line.split("#")[0].split()
                if len(words) >= 2 and words[0].startswith("-"):
                    opts[words[0]] = words[1]
    out = []
    if opts.get("-gpgpu_num_dp_units", "0") == "0":
        out.append("dp_unit=sfu")
    timing = opts.get("-trace_opcode_latency_initiation_dp")
    if timing:
        lat, init = timing.split(",")[:2]
        for k in DP_KINDS:
            out += ["dp_%s_latency=%s" % (k, lat), "dp_%s_initiation=%s" % (k, init)]
    gen = opts.get("-gpgpu_operand_collector_num_units_gen")
    if gen:
        out.append("collector_units_gen=%s" % gen)
    # 4.x's one-entry L1 latency queue (`ldst_unit::L1_latency_queue_cycle`); 3.2.2 has none.
    if opts.get("-gpgpu_l1_latency") == "1":
        out.append("l1_access_queue=true")
    return out
# Binary versions this Accel-Sim (73f9fac) has an opcode map for; 90 (Hopper) is rewritten to 86.
ACCEL_BINARY_OK = {35, 60, 61, 70, 75, 80, 86}


# ------------------------------------------------------------------------------------- helpers

def sha_files(paths):
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(os.path.basename(p).encode() + b"\0")
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def trace_files(tdir):
    return [os.path.join(tdir, f) for f in sorted(os.listdir(tdir))
            if f.endswith(".traceg") or f == "kernelslist.g"]


def git_head(path):
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "--short=8", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "unknown"


def accel_paths(peer):
    binary = os.path.join(peer, "accel-sim-framework", "gpu-simulator", "bin", "release",
                          "accel-sim.out")
    libdir = None
    base = os.path.join(peer, "gpgpu-sim_distribution", "lib")
    if os.path.isdir(base):
        for root, dirs, files in os.walk(base):
            if "libcudart.so" in files or any(f.startswith("libcudart.so") for f in files):
                if root.endswith("release"):
                    libdir = root
                    break
    return binary, libdir


def binary_versions(tdir):
    out = set()
    for f in trace_files(tdir):
        if f.endswith(".traceg"):
            with open(f, errors="replace") as fh:
                for _ in range(40):
                    line = fh.readline()
                    if not line:
                        break
                    m = re.match(r"-binary version = (\d+)", line)
                    if m:
                        out.add(int(m.group(1)))
                        break
    return out


def patched_trace(tdir, cache):
    """Accel-Sim has no Hopper map: a copy of the trace with `-binary version = 90` changed
    to 86 (RECIPE.md §5). Other traces are used in place."""
    vers = binary_versions(tdir)
    if not (vers - ACCEL_BINARY_OK):
        return tdir, None
    key = sha_files(trace_files(tdir))[:16]
    dst = os.path.join(cache, "patched", os.path.basename(os.path.normpath(tdir)) + "-" + key)
    if not os.path.isdir(dst):
        tmp = dst + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        for f in trace_files(tdir):
            with open(f, errors="replace") as fh:
                text = fh.read()
            if f.endswith(".traceg"):
                text = re.sub(r"^-binary version = 90$", "-binary version = 86", text,
                              flags=re.M)
            with open(os.path.join(tmp, os.path.basename(f)), "w") as fh:
                fh.write(text)
        os.rename(tmp, dst)
    return dst, "binary version %s -> 86" % ",".join(str(v) for v in sorted(vers - ACCEL_BINARY_OK))


# ---------------------------------------------------------------------------- Accel-Sim side

def parse_accel_log(text):
    """Per-kernel figures from an Accel-Sim log. Cumulative counters are differenced between
    successive kernel dumps (RECIPE.md §6)."""
    kernels = []
    cur = None
    dram_rd = dram_l2a = 0
    for line in text.splitlines():
        if line.startswith("kernel_name = "):
            cur = {"name": line.split("=", 1)[1].strip(), "_rd": 0, "_l2a": 0}
            kernels.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"^\s*(gpu_sim_cycle|gpu_sim_insn|gpgpu_n_tot_w_icount|L1D_total_cache_misses|"
                     r"L1D_total_cache_accesses|L2_total_cache_misses|L2_total_cache_accesses|"
                     r"kernel_launch_uid)\s*=\s*(\d+)", line)
        if m:
            cur.setdefault(m.group(1), int(m.group(2)))
            continue
        if line.startswith("n_cmd=") and " n_rd=" in line:
            f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            cur["_rd"] += int(f.get("n_rd", 0))
            cur["_l2a"] += int(f.get("n_rd_L2_A", 0))
    out = []
    prev = {"gpgpu_n_tot_w_icount": 0, "L1D_total_cache_misses": 0, "L1D_total_cache_accesses": 0,
            "L2_total_cache_misses": 0, "L2_total_cache_accesses": 0, "_rd": 0, "_l2a": 0}
    for k in kernels:
        if "gpu_sim_cycle" not in k:
            continue
        row = {"name": k["name"], "cycles": k["gpu_sim_cycle"],
               "thread_insts": k.get("gpu_sim_insn")}
        for key, name in (("gpgpu_n_tot_w_icount", "warp_insts"),
                          ("L1D_total_cache_misses", "l1_misses"),
                          ("L1D_total_cache_accesses", "l1_accesses"),
                          ("L2_total_cache_misses", "l2_misses"),
                          ("L2_total_cache_accesses", "l2_accesses")):
            if key in k:
                row[name] = k[key] - prev[key]
                prev[key] = k[key]
        rd, l2a = k["_rd"] - prev["_rd"], k["_l2a"] - prev["_l2a"]
        prev["_rd"], prev["_l2a"] = k["_rd"], k["_l2a"]
        row["dram_reads"] = (rd + l2a) / 2.0  # 64 B DRAM accesses -> 128 B lines
        out.append(row)
    return out


def phase_accel_opts(phase):
    """Accel-Sim options of launch phase `phase` (none for 0, its default, so phase 0 is the
    plain run and shares its cache entry)."""
    return ["-gpgpu_kernel_launch_latency", str(phase)] if phase else []


def phase_model_settings(phase):
    return ["kernel_launch_latency=%d" % phase] if phase else []


def run_accel(tdir, sched, args, log, phase=0):
    """One Accel-Sim run (cached). Returns (result dict, from_cache)."""
    binary, libdir = accel_paths(args.peer)
    cfg_files = [os.path.join(args.cfg, f) for f in sorted(os.listdir(args.cfg))]
    opts = ACCEL_OPTS + ["-gpgpu_scheduler", sched] + args.accel_opt + phase_accel_opts(phase)
    commits = "%s/%s" % (git_head(os.path.join(args.peer, "accel-sim-framework")),
                         git_head(os.path.join(args.peer, "gpgpu-sim_distribution")))
    key = hashlib.sha256("\0".join([sha_files(trace_files(tdir)), sha_files(cfg_files),
                                    " ".join(opts), commits]).encode()).hexdigest()[:24]
    name = os.path.basename(os.path.normpath(tdir))
    cdir = os.path.join(args.cache, "accel", "%s-%s%s-%s" % (
        name, sched, "-p%d" % phase if phase else "", key))
    res_path = os.path.join(cdir, "result.json")
    if os.path.exists(res_path) and not args.rerun_accel:
        with open(res_path) as fh:
            return json.load(fh), True
    if not os.path.exists(binary):
        raise SystemExit("Accel-Sim binary not found: %s (build it: tools/correlate/build_accelsim.sh "
                         "--peer %s)" % (binary, args.peer))
    run_tdir, patch = patched_trace(tdir, args.cache)
    work = tempfile.mkdtemp(prefix="accel-", dir=args.cache)
    for f in cfg_files:
        shutil.copy(f, work)
    cmd = ["nice", "-n", "10", binary, "-trace", os.path.join(run_tdir, "kernelslist.g"),
           "-config", "./gpgpusim.config", "-config", "./trace.config"] + opts
    env = dict(os.environ)
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"]
                                           if env.get("LD_LIBRARY_PATH") else "")
    log("accel-sim %s %s ..." % (name, sched))
    t0 = time.time()
    try:
        # Interrupted (Ctrl-C, or SIGTERM, which main turns into SystemExit), subprocess.run
        # kills Accel-Sim and the scratch folder goes too.
        p = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = p.stdout.decode(errors="replace")
    secs = time.time() - t0
    kernels = parse_accel_log(text)
    ok = p.returncode == 0 and "GPGPU-Sim: *** exit detected ***" in text and kernels
    if "unsupported binary version" in text:
        ok = False
    os.makedirs(cdir, exist_ok=True)
    with open(os.path.join(cdir, "accel.log"), "w") as fh:
        fh.write(text)
    if not ok:
        raise RuntimeError("Accel-Sim failed on %s (%s): rc %d, log %s" %
                           (name, sched, p.returncode, os.path.join(cdir, "accel.log")))
    res = {"trace": os.path.abspath(tdir), "scheduler": sched, "command": " ".join(cmd),
           "cwd": "copy of " + os.path.abspath(args.cfg), "options": opts, "commits": commits,
           "trace_patch": patch, "seconds": round(secs, 1), "kernels": kernels}
    with open(res_path, "w") as fh:
        json.dump(res, fh, indent=1)
    return res, False


# --------------------------------------------------------------------------------- model side

# The model runs under way, killed if this run is interrupted (their threads cannot be).
MODEL_RUNS = []


def run_model(tdir, scheds, args, phase=0):
    fd, out = tempfile.mkstemp(suffix=".json", dir=args.scratch)
    os.close(fd)
    settings = model_settings(args) + phase_model_settings(phase)
    cmd = [args.mascar, "run", "--trace", tdir, "--config", args.model_config,
           "-s", ",".join(scheds), "--json", out, "-q"] + sum((["--set", s] for s in settings), [])
    p = subprocess.Popen(["nice", "-n", "5"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    MODEL_RUNS.append(p)
    _, stderr = p.communicate()
    if p.returncode != 0:
        raise RuntimeError("mascar failed on %s: %s" % (tdir, stderr.decode(errors="replace")[-2000:]))
    with open(out) as fh:
        doc = json.load(fh)
    os.remove(out)
    res = {"commit": doc.get("mascar", {}).get("commit"), "command": " ".join(cmd), "runs": {}}
    for run in doc["runs"]:
        ks = []
        for k in run["kernels"]:
            ks.append({"name": k["kernel"], "cycles": k["cycles"],
                       "warp_insts": k["warp_instructions"],
                       "l1_misses": k["l1"]["misses"] + k["l1"].get("write_misses", 0),
                       "l2_misses": k["l2"]["misses"] + k["l2"].get("write_misses", 0),
                       "dram_reads": k["dram"]["reads"]})
        res["runs"][run["scheduler"]["name"]] = ks
    return res


# ------------------------------------------------------------------------------------- phases

FIGURES = ("cycles", "l1_misses", "l2_misses", "dram_reads")


def mean_over_phases(runs):
    """runs: one list of per-kernel dicts per phase. Returns the per-kernel means (floats,
    other keys from phase 0) and, per kernel, each figure's (min, max)."""
    means, ranges = [], []
    for i, k0 in enumerate(runs[0]):
        ks = [r[i] for r in runs if i < len(r)]
        m, rg = dict(k0), {}
        for f in FIGURES:
            vals = [k[f] for k in ks if k.get(f) is not None]
            if not vals:
                continue
            m[f] = vals[0] if len(vals) == 1 else sum(vals) / float(len(vals))
            rg[f] = (min(vals), max(vals))
        means.append(m)
        ranges.append(rg)
    return means, ranges


def phase_table(traces, scheds, accel_ranges, model_ranges, phases):
    """Each row's range over the launch phases, as % of its mean, on both sides."""
    L = ["", "Spread over %d launch phases (kernel launch latency 0..%d cycles): each figure's "
         "min..max on both sides, and the range as %% of the mean:" % (phases, phases - 1), "",
         "| trace | kernel | sched | cycles ref | cycles model | L1 misses ref | L1 misses model |",
         "|---|---|---|---|---|---|---|"]

    def cell(rg, mean):
        if not rg:
            return "–"
        lo, hi = rg
        width = 100.0 * (hi - lo) / mean if mean else 0.0
        return "%s..%s (%.1f %%)" % (fmt(lo), fmt(hi), width)
    for t in traces:
        name = os.path.basename(os.path.normpath(t))
        for s in scheds:
            ar, am = accel_ranges[(t, s)]
            mr, mm = model_ranges[t].get(s, ([], []))
            for i, rg in enumerate(ar):
                mrg = mr[i] if i < len(mr) else {}
                mk = mm[i] if i < len(mm) else {}
                L.append("| %s | %d | %s | %s | %s | %s | %s |" % (
                    name, i + 1, s, cell(rg.get("cycles"), am[i]["cycles"]),
                    cell(mrg.get("cycles"), mk.get("cycles")),
                    cell(rg.get("l1_misses"), am[i].get("l1_misses")),
                    cell(mrg.get("l1_misses"), mk.get("l1_misses"))))
    return "\n".join(L) + "\n"


# ------------------------------------------------------------------------------------- report

def pct(model, ref):
    return 100.0 * (model - ref) / ref if ref else float("nan")


def fmt(x):
    if x is None:
        return "–"
    if isinstance(x, float):
        return ("{:,.1f}".format(x)) if x != int(x) else "{:,}".format(int(x))
    return "{:,}".format(x)


def report(traces, scheds, accel, model, args):
    L = []
    mcommit = next((m["commit"] for m in model.values() if m), None)
    acc_any = next(iter(accel.values()))
    L.append("Model: %s (`%s`), config `%s`, settings `%s`." %
             (args.model_label or "mascar commit `%s`" % (mcommit or "?"),
              os.path.relpath(args.mascar, REPO) if args.mascar.startswith(REPO) else args.mascar,
              os.path.relpath(args.model_config, REPO) if args.model_config.startswith(REPO)
              else args.model_config, " ".join(model_settings(args))))
    L.append("Reference: Accel-Sim accel-sim-framework/gpgpu-sim_distribution `%s`, config `%s` "
             "(port322), options `%s`." % (acc_any["commits"], args.cfg,
                                           " ".join(ACCEL_OPTS + ["-gpgpu_scheduler", "<sched>"]
                                                    + args.accel_opt)))
    if args.phases > 1:
        L.append("Figures are means over %d launch phases (`--phases %d`: kernel launch latency "
                 "0..%d cycles on both sides)." % (args.phases, args.phases, args.phases - 1))
    L.append("")
    L.append("| trace | kernel | sched | warp insts ref/model | cycles ref | cycles model | error % "
             "| L1 misses ref/model | L2 misses ref/model | DRAM reads ref/model |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    errs = {s: [] for s in scheds}
    per = {}  # (trace, kidx, sched) -> (ref cycles, model cycles)
    # Miss counts within 5 % of the reference (issue 28): (level -> [within, compared, [off]]).
    misses = {"L1": [0, 0, []], "L2": [0, 0, []]}
    for t in traces:
        name = os.path.basename(os.path.normpath(t))
        for s in scheds:
            a = accel[(t, s)]["kernels"]
            m = model[t]["runs"].get(s, [])
            for i, ak in enumerate(a):
                mk = m[i] if i < len(m) else None
                e = pct(mk["cycles"], ak["cycles"]) if mk else None
                if e is not None:
                    errs[s].append(abs(e))
                per[(t, i, s)] = (ak["cycles"], mk["cycles"] if mk else None)
                for level, key in (("L1", "l1_misses"), ("L2", "l2_misses")):
                    ref = ak.get(key)
                    if ref is None or not mk:
                        continue
                    within = abs(mk[key] - ref) <= 0.05 * ref
                    misses[level][0] += within
                    misses[level][1] += 1
                    if not within:
                        misses[level][2].append("%s %s%s %s/%s" % (
                            os.path.basename(os.path.normpath(t)),
                            "" if len(a) == 1 else "%d " % (i + 1), s, fmt(ref), fmt(mk[key])))
                kname = ak["name"] if len(a) == 1 else "%d %s" % (i + 1, ak["name"])
                if len(kname) > 40:
                    kname = kname[:37] + "..."
                L.append("| %s | `%s` | %s | %s/%s | %s | %s | %s | %s/%s | %s/%s | %s/%s |" % (
                    name, kname, s, fmt(ak.get("warp_insts")), fmt(mk["warp_insts"] if mk else None),
                    fmt(ak["cycles"]), fmt(mk["cycles"] if mk else None),
                    ("%+.1f" % e) if e is not None else "–",
                    fmt(ak.get("l1_misses")), fmt(mk["l1_misses"] if mk else None),
                    fmt(ak.get("l2_misses")), fmt(mk["l2_misses"] if mk else None),
                    fmt(ak.get("dram_reads")), fmt(mk["dram_reads"] if mk else None)))
    L.append("")
    L.append("| scheduler | kernels | mean absolute cycle error % |")
    L.append("|---|---|---|")
    for s in scheds:
        v = errs[s]
        L.append("| %s | %d | %s |" % (s, len(v), ("%.1f" % (sum(v) / len(v))) if v else "–"))
    L.append("")
    for level, (within, n, off) in misses.items():
        L.append("%s misses within 5 %% of the reference: %d of %d%s" % (
            level, within, n, (" (off, ref/model: %s)." % "; ".join(off)) if off else "."))
        L.append("")
    if "lrr" in scheds and "gto" in scheds:
        L.append("")
        L.append("LRR→GTO speedup (cycles lrr / cycles gto) where the reference's differs from 1 by "
                 "more than 3%:")
        L.append("")
        L.append("| trace | kernel | ref speedup | model speedup | same direction |")
        L.append("|---|---|---|---|---|")
        n = same = 0
        for t in traces:
            name = os.path.basename(os.path.normpath(t))
            for i, ak in enumerate(accel[(t, "lrr")]["kernels"]):
                rl, ml = per.get((t, i, "lrr"), (None, None))
                rg, mg = per.get((t, i, "gto"), (None, None))
                if not (rl and rg and ml and mg):
                    continue
                rs, ms = rl / rg, ml / mg
                if abs(rs - 1) <= 0.03:
                    continue
                ok = (rs > 1) == (ms > 1) and abs(ms - 1) > 1e-9
                n += 1
                same += ok
                L.append("| %s | %d | %.3f | %.3f | %s |" % (name, i + 1, rs, ms, "yes" if ok else "no"))
        if n == 0:
            L.append("| (none) | | | | |")
        L.append("")
        L.append("Same direction: %d of %d." % (same, n))
    # Micro-benchmark pairs X / X-base: per-op figures.
    names = {os.path.basename(os.path.normpath(t)): t for t in traces}
    pairs = [(n, names[n], names[n + "-base"]) for n in sorted(names) if n + "-base" in names]
    if pairs:
        L.append("")
        L.append("Per-op figures of the micro-benchmark pairs: (cycles(X) − cycles(X-base)) / "
                 "(warp insts(X) − warp insts(X-base)):")
        L.append("")
        L.append("| benchmark | sched | ref cycles/op | model cycles/op |")
        L.append("|---|---|---|---|")
        for n, t, b in pairs:
            for s in scheds:
                a1, a0 = accel[(t, s)]["kernels"][0], accel[(b, s)]["kernels"][0]
                m1, m0 = model[t]["runs"][s][0], model[b]["runs"][s][0]
                dr = (a1["cycles"] - a0["cycles"]) / float(a1["warp_insts"] - a0["warp_insts"])
                dm = (m1["cycles"] - m0["cycles"]) / float(m1["warp_insts"] - m0["warp_insts"])
                L.append("| %s | %s | %.2f | %.2f |" % (n, s, dr, dm))
    return "\n".join(L) + "\n"


def model_settings(args):
    """Every --set the model runs with: MODEL_SETTINGS, what --cfg sets (cfg_settings), then --set."""
    return MODEL_SETTINGS + cfg_settings(args.cfg) + args.set


def main(argv=None):
    # A killed run leaves no scratch folder or Accel-Sim behind (the `finally` blocks run).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Environment: ACCELSIM_PEER, ACCELSIM_CFG, "
                                        "MASCAR_GPGPUSIM_CONFIG, CORRELATE_CACHE set the defaults.")
    ap.add_argument("--traces", default="shared",
                    help="comma-separated trace directories (each with kernelslist.g), or the "
                         "names 'micro' (testbench/data/micro/*), 'shared' (/work/shared/traces/*), "
                         "'mgpusim' (--mgpusim DIR/*); default: shared")
    ap.add_argument("--schedulers", default="lrr,gto")
    ap.add_argument("--mascar", default=os.path.join(REPO, ".bin", "mascar"),
                    help="the model binary (default .bin/mascar, a copy of target/release/mascar)")
    ap.add_argument("--model-config", default=DEFAULT_MODEL_CFG)
    ap.add_argument("--model-label", default=None,
                    help="how the report names the model build (default: the commit it reports)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to mascar run --set after MODEL_SETTINGS (repeatable)")
    ap.add_argument("--peer", default=DEFAULT_PEER, help="Accel-Sim build folder (build_accelsim.sh)")
    ap.add_argument("--cfg", default=DEFAULT_CFG, help="Accel-Sim config dir (port322)")
    ap.add_argument("--accel-opt", action="append", default=[], metavar="OPT",
                    help="extra Accel-Sim option words, e.g. --accel-opt=-gpgpu_l1_latency --accel-opt=1")
    ap.add_argument("--cache", default=DEFAULT_CACHE)
    ap.add_argument("--mgpusim", default=os.environ.get("MGPUSIM_TRACES", ""),
                    help="folder holding the mgpusim trace directories (docs/correlation.md)")
    ap.add_argument("--rerun-accel", action="store_true", help="ignore cached Accel-Sim results")
    ap.add_argument("--out", default=None, help="write the markdown report here (default stdout)")
    ap.add_argument("--json", default=None, help="also write all figures as JSON here")
    ap.add_argument("--jobs", type=int, default=2, help="parallel model runs (Accel-Sim runs one at a time)")
    ap.add_argument("--phases", type=int, default=1,
                    help="run each trace at N launch phases (kernel launch latency 0..N-1 on both "
                         "sides) and report the means and each row's spread (default 1)")
    args = ap.parse_args(argv)
    if args.phases < 1:
        raise SystemExit("--phases must be at least 1, got %d" % args.phases)
    # The report folders are made now, not after an hour of simulation.
    for path in (args.out, args.json):
        if path and os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)

    traces = []
    for item in args.traces.split(","):
        item = item.strip()
        if not item:
            continue
        group = {"micro": os.path.join(REPO, "testbench", "data", "micro"),
                 "shared": "/work/shared/traces", "mgpusim": args.mgpusim}.get(item)
        if group is not None:
            if not group or not os.path.isdir(group):
                raise SystemExit("trace group %s: folder %r not found" % (item, group))
            traces += sorted(os.path.join(group, d) for d in os.listdir(group)
                             if os.path.exists(os.path.join(group, d, "kernelslist.g")))
        else:
            if os.path.basename(item) == "kernelslist.g":
                item = os.path.dirname(item)
            if not os.path.exists(os.path.join(item, "kernelslist.g")):
                raise SystemExit("no kernelslist.g in %s" % item)
            traces.append(item)
    scheds = [s.strip() for s in args.schedulers.split(",") if s.strip()]
    os.makedirs(args.cache, exist_ok=True)
    args.cfg = os.path.abspath(args.cfg)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    # The model runs in a pool while Accel-Sim runs one at a time here. The model's JSON goes
    # to a scratch folder of this run, removed however the run ends.
    args.scratch = tempfile.mkdtemp(prefix="run-", dir=args.cache)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        phases = range(args.phases)
        mfut = {(t, p): pool.submit(run_model, t, scheds, args, p) for t in traces for p in phases}
        accel_ph = {}
        for t in traces:
            for s in scheds:
                for p in phases:
                    res, cached = run_accel(t, s, args, log, p)
                    if not cached:
                        log("  %s %s%s: %s s" % (os.path.basename(t), s,
                                                 " phase %d" % p if p else "", res["seconds"]))
                    accel_ph[(t, s, p)] = res
        model_ph = {k: f.result() for k, f in mfut.items()}
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        for p in MODEL_RUNS:
            if p.poll() is None:
                p.kill()
        shutil.rmtree(args.scratch, ignore_errors=True)
    # Phase 0 as it is; with --phases, the means over the phases and each row's range.
    accel, model, accel_ranges, model_ranges = {}, {}, {}, {}
    for t in traces:
        for s in scheds:
            res = dict(accel_ph[(t, s, 0)])
            res["kernels"], rg = mean_over_phases([accel_ph[(t, s, p)]["kernels"] for p in phases])
            accel[(t, s)] = res
            accel_ranges[(t, s)] = (rg, res["kernels"])
        m = dict(model_ph[(t, 0)])
        m["runs"], model_ranges[t] = {}, {}
        for s in model_ph[(t, 0)]["runs"]:
            m["runs"][s], rg = mean_over_phases([model_ph[(t, p)]["runs"].get(s, []) for p in phases])
            model_ranges[t][s] = (rg, m["runs"][s])
        model[t] = m
    text = report(traces, scheds, accel, model, args)
    if args.phases > 1:
        text += phase_table(traces, scheds, accel_ranges, model_ranges, args.phases)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
        log("wrote %s" % args.out)
    else:
        sys.stdout.write(text)
    if args.json:
        with open(args.json, "w") as fh:
            doc = {"accel": {"%s|%s" % k: v for k, v in accel.items()}, "model": model}
            if args.phases > 1:
                doc["phases"] = {
                    "accel": {"%s|%s|%d" % k: v for k, v in accel_ph.items()},
                    "model": {"%s|%d" % k: v for k, v in model_ph.items()}}
            json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    main()
