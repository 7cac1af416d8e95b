#!/usr/bin/env python3
"""Write the micro-benchmark Accel-Sim traces of testbench/data/micro/ (docs/correlation.md).

Each directory is one small Accel-Sim trace (tracer version 4, `-binary version = 61`, i.e.
Pascal SASS: Accel-Sim's Pascal opcode map and the model's reader both take it) isolating one
latency or throughput. Dependence comes from register numbers (the dest of one instruction is
the source of the next); addresses are explicit per lane (mode 1 = base + stride, mode 0 = one
address per lane).

Most benchmarks come in pairs: a `-base` variant and the full one, which differ only by the
measured chain, so that (cycles(full) - cycles(base)) / chain length is the per-op figure.

Usage: python3 tools/correlate/make_micro.py [OUTDIR]   (default testbench/data/micro)
Deterministic: re-running rewrites identical files.
"""
import os
import sys

HEADER = """-kernel name = {name}
-kernel id = {kid}
-grid dim = ({gx},1,1)
-block dim = ({bx},1,1)
-shmem = {shmem}
-nregs = 32
-binary version = 61
-cuda stream id = 0
-shmem base_addr = 0x00007f0000000000
-local mem base_addr = 0x00007eff00000000
-nvbit version = 1.5.5
-accelsim tracer version = 4
-enable lineinfo = 0

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]

"""

# Global data lives here (a 64 KB-aligned base like the tracer's cudaMalloc addresses).
GBASE = 0x7F2B2D000000
LINE = 128
L1_SETS = 32  # GTX480 L1D: 32 sets x 4 ways x 128 B, linear set index


class Warp:
    """Builds one warp's instruction lines (PC steps by 0x10 per instruction)."""

    def __init__(self):
        self.lines = []

    def _emit(self, text):
        pc = 0x10 * (len(self.lines) + 1)
        self.lines.append("%04x ffffffff %s" % (pc, text))

    def alu(self, op, dst, srcs):
        self._emit("1 R%d %s %d %s0 " % (dst, op, len(srcs), "".join("R%d " % s for s in srcs)))

    def ldg_stride(self, dst, src, base, stride, op="LDG.E", width=4):
        """A load whose 32 lanes read base + lane * stride (address mode 1)."""
        self._emit("1 R%d %s 1 R%d %d 1 0x%x %d " % (dst, op, src, width, base, stride))

    def ldg_list(self, dst, src, addrs, op="LDG.E"):
        """A load with one explicit address per lane (address mode 0)."""
        assert len(addrs) == 32
        self._emit("1 R%d %s 1 R%d 4 0 %s " % (dst, op, src, " ".join("0x%x" % a for a in addrs)))

    def stg_stride(self, addr_reg, data_reg, base, stride, op="STG.E", width=4):
        self._emit("0 %s 2 R%d R%d %d 1 0x%x %d " % (op, addr_reg, data_reg, width, base, stride))

    def lds_stride(self, dst, src, base, stride):
        self._emit("1 R%d LDS.U.32 1 R%d 4 1 0x%x %d " % (dst, src, base, stride))

    def barrier(self):
        self._emit("0 BAR.SYNC 0 0 ")

    def exit(self):
        self._emit("0 EXIT 0 0 ")


def kernel_text(name, kid, grid, block, warp_fn, shmem=0):
    """The .traceg text: `grid` CTAs of `block` threads; warp_fn(cta, warp) -> Warp."""
    out = [HEADER.format(name=name, kid=kid, gx=grid, bx=block, shmem=shmem)]
    for cta in range(grid):
        out.append("\n#BEGIN_TB\n\nthread block = %d,0,0\n\n" % cta)
        for w in range((block + 31) // 32):
            wp = warp_fn(cta, w)
            out.append("warp = %d\ninsts = %d\n" % (w, len(wp.lines)))
            out.append("\n".join(wp.lines) + "\n\n")
        out.append("#END_TB\n\n")
    return "".join(out)


def write_trace(root, dirname, kernels):
    """kernels: list of (file name, text). Writes the dir and its kernelslist.g."""
    d = os.path.join(root, dirname)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    names = []
    for fname, text in kernels:
        with open(os.path.join(d, fname), "w") as fh:
            fh.write(text)
        names.append(fname)
    with open(os.path.join(d, "kernelslist.g"), "w") as fh:
        fh.write("".join(n + "\n" for n in names))


# ---------------------------------------------------------------------------------------------
# The benchmarks. Each builder returns the warp for (cta, warp).

def alu_chain(n, op="IADD"):
    """One warp: n dependent ops R2 <- R2 (+R1), then EXIT."""
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for _ in range(n):
            wp.alu(op, 2, [2, 1])
        wp.exit()
        return wp
    return f


def sfu_chain(n):
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for _ in range(n):
            wp.alu("MUFU.RSQ", 2, [2])
        wp.exit()
        return wp
    return f


def load_chain(addrs, tail_use=True):
    """One warp: a dependent chain of LDG R2 <- [R2]; every lane of load i reads addrs[i]
    + lane*4 (one 128 B line per load). An IADD consumes the last load so the kernel ends
    only after it returned."""
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for a in addrs:
            wp.ldg_stride(2, 2, a, 4)
        if tail_use:
            wp.alu("IADD", 3, [2, 1])
        wp.exit()
        return wp
    return f


def byte_load_chain(n):
    """One warp: a dependent chain of n byte loads (LDG.E.U8) of one line, lane l reading
    base + 4 l: the 128 B a load touches are four 32 B segments, four L1 accesses in
    GPGPU-Sim (the first load misses, the rest hit). An IADD consumes the last load."""
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for i in range(n):
            wp.ldg_stride(2, 2, GBASE, 4, op="LDG.E.U8", width=1)
        wp.alu("IADD", 3, [2, 1])
        wp.exit()
        return wp
    return f


def byte_store_stream(n):
    """One warp: n byte stores (STG.E.U8), lane l writing base + 4 l of a new line each time:
    four 32 B write requests an instruction in GPGPU-Sim."""
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for i in range(n):
            wp.stg_stride(1, 2, GBASE + i * LINE, 4, op="STG.E.U8", width=1)
        wp.exit()
        return wp
    return f


def smem_chain(n):
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for _ in range(n):
            wp.lds_stride(2, 2, 0x0, 4)
        wp.alu("IADD", 3, [2, 1])
        wp.exit()
        return wp
    return f


def smem_conflict_chain(n, stride):
    """One warp: n dependent LDS whose 32 lanes read words `stride` bytes apart (stride 128:
    every lane in bank 0, 32 distinct words, a 32-way bank conflict)."""
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for _ in range(n):
            wp.lds_stride(2, 2, 0x0, stride)
        wp.alu("IADD", 3, [2, 1])
        wp.exit()
        return wp
    return f


def smem_conflict_stream(n, stride):
    """One warp: n independent LDS (dest rotates over 16 regs, address register R1 never
    written) whose lanes read words `stride` bytes apart (16: four words per bank)."""
    def f(cta, w):
        wp = Warp()
        for i in range(n):
            wp.lds_stride(10 + i % 16, 1, 0x0, stride)
        wp.exit()
        return wp
    return f


def gather(n):
    """One warp: a first gather whose 32 lanes touch 32 consecutive lines (32 L1 misses, one
    per set), an IADD that waits for it, then n independent gathers of the same 32 lines
    (L1 hits; dest registers rotate over 16 so write-after-write never stalls)."""
    addrs = [GBASE + i * LINE for i in range(32)]

    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 1, [])
        wp.ldg_list(2, 1, addrs)
        wp.alu("IADD", 3, [2, 1])
        for i in range(n):
            wp.ldg_list(10 + i % 16, 1, addrs)
        wp.alu("IADD", 4, [10 + (n - 1) % 16 if n else 3, 1])
        wp.exit()
        return wp
    return f


def independent(n):
    """Every warp: n ALU ops with no dependence between them (dest rotates over 16 regs,
    sources R0/R1 never written)."""
    def f(cta, w):
        wp = Warp()
        for i in range(n):
            wp.alu("IADD", 10 + i % 16, [0, 1])
        wp.exit()
        return wp
    return f


def reg_reads(srcs, n=1):
    """One warp: n independent IADDs (dest rotating over 16 registers that no IADD reads)
    reading the registers `srcs`; then EXIT. GPGPU-Sim's register bank of Rr in warp w is
    (r + 1 + w) mod 16: R5, R21 and R37 share a bank, R6 is in the next one."""
    def f(cta, w):
        wp = Warp()
        for i in range(n):
            wp.alu("IADD", 40 + i % 16, srcs)
        wp.exit()
        return wp
    return f


def barrier_stream(n):
    """Every warp of the CTA: n times an independent IADD then BAR.SYNC; then EXIT. A
    barrier is an SP instruction (BARRIER_OP) with no operands: it takes an ID_OC_SP slot,
    an SP collector unit and an SP pipeline slot."""
    def f(cta, w):
        wp = Warp()
        for i in range(n):
            wp.alu("IADD", 10 + i % 16, [0, 1])
            wp.barrier()
        wp.exit()
        return wp
    return f


def store_stream(n):
    """One warp: n coalesced stores, each to a new line (write-through, no allocate in L1)."""
    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 2, [])
        for i in range(n):
            wp.stg_stride(1, 2, GBASE + i * LINE, 4)
        wp.exit()
        return wp
    return f


def l1_queue(stores):
    """One warp: a gather of 32 new lines (the L1's 32 MSHRs), a one-line load of a 33rd line
    (refused until the gather's first fill frees an MSHR), `stores` independent one-line
    stores, then 128 dependent IADDs. With 4.x's one-entry L1 latency queue the load leaves
    the LD/ST unit when its access enters the queue, so the seventh store issues and the
    chain starts without waiting for that fill (the memory collector entries, ID_OC and
    OC_EX hold six); 3.2.2 holds the load in the unit until the L1 takes its access."""
    gather_addrs = [GBASE + i * LINE for i in range(32)]
    far = GBASE + 64 * 1024 + 5 * LINE

    def f(cta, w):
        wp = Warp()
        wp.alu("MOV", 1, [])
        wp.ldg_list(2, 1, gather_addrs)
        wp.ldg_stride(3, 1, far, 4)
        for i in range(stores):
            wp.stg_stride(1, 4, GBASE + 32 * 1024 + i * LINE, 4)
        wp.alu("IADD", 5, [4, 1])
        for _ in range(127):
            wp.alu("IADD", 5, [5, 1])
        wp.exit()
        return wp
    return f


def cta_work(cta, w):
    """The cta-dispatch kernel body: 16 dependent IADDs and one coalesced load per warp."""
    wp = Warp()
    wp.alu("MOV", 2, [])
    wp.ldg_stride(3, 2, GBASE + (cta * 8 + w) * LINE, 4)
    for _ in range(16):
        wp.alu("IADD", 2, [2, 3])
    wp.exit()
    return wp


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "testbench", "data", "micro")
    root = os.path.normpath(root)
    os.makedirs(root, exist_ok=True)

    def single(dirname, fn, grid=1, block=32, shmem=0):
        write_trace(root, dirname, [("kernel-1.traceg",
                                     kernel_text("micro_" + dirname.replace("-", "_"), 1,
                                                 grid, block, fn, shmem))])

    # ALU / SFU dependent latency: 256 ops vs none.
    single("alu-chain-base", alu_chain(0))
    single("alu-chain", alu_chain(256))
    single("ffma-chain", alu_chain(256, "FFMA"))
    single("sfu-chain-base", sfu_chain(0))
    single("sfu-chain", sfu_chain(64))

    # L1 hit: the first load misses (line brought in), the next 128 hit the same line.
    line0 = GBASE
    single("l1-hit-chain-base", load_chain([line0]))
    single("l1-hit-chain", load_chain([line0] * 129))

    # L2 hit: 6 lines 32 lines (4 KB) apart all map to L1 set 0 (4 ways): cycling through
    # them, every access misses L1 under LRU, while all 6 stay in L2 (8 ways). The first
    # pass (6 DRAM misses) is the base; 16 more passes = 96 L2 hits.
    ring = [GBASE + i * L1_SETS * LINE for i in range(6)]
    single("l2-hit-chain-base", load_chain(ring))
    single("l2-hit-chain", load_chain(ring * 17))

    # DRAM: every load to a new line 256 KB + 1 line apart (new row, other bank/channel
    # bits vary too); 1 load vs 33 loads.
    far = [GBASE + i * (256 * 1024 + LINE) for i in range(33)]
    single("dram-chain-base", load_chain(far[:1]))
    single("dram-chain", load_chain(far))

    # Shared memory: 64 dependent LDS (conflict-free, 4 B per lane) vs none.
    single("smem-chain-base", smem_chain(0), shmem=1024)
    single("smem-chain", smem_chain(64), shmem=1024)

    # Shared-memory bank conflicts (GPGPU-Sim's dispatch delay): 64 dependent 32-way
    # conflicted LDS vs none; 64 independent 4-way conflicted LDS vs none.
    single("smem-conflict-chain-base", smem_conflict_chain(0, 128), shmem=4096)
    single("smem-conflict-chain", smem_conflict_chain(64, 128), shmem=4096)
    single("smem-conflict-stream-base", smem_conflict_stream(0, 16), shmem=1024)
    single("smem-conflict-stream", smem_conflict_stream(64, 16), shmem=1024)

    # Gather: 32 lines per instruction, L1 hits after the first; 64 gathers vs none.
    single("gather-base", gather(0))
    single("gather", gather(64))

    # Issue throughput: one CTA of 32 warps (one SM) x 128 independent IADDs.
    single("independent-issue", independent(128), block=1024)

    # Register-bank reads in the operand collector (one read per bank a cycle): one IADD
    # reading one register, two in two banks, two and three in one bank; and streams of 64
    # independent IADDs reading two registers in two banks or in one.
    single("regbank-one", reg_reads([5]))
    single("regbank-two", reg_reads([5, 6]))
    single("regbank-conflict-2", reg_reads([5, 21]))
    single("regbank-conflict-3", reg_reads([5, 21, 37]))
    single("regbank-stream", reg_reads([5, 6], 64))
    single("regbank-conflict-stream", reg_reads([5, 21], 64))
    # RZ (R255) is a register to the collector: Accel-Sim adds 1 as to any register (R256)
    # and reads it from its bank, (256 + w) mod 16, which R15's shares.
    single("regbank-rz-stream", reg_reads([15, 255], 64))

    # Barriers: one CTA of 16 warps, 32 rounds of an IADD and a BAR.SYNC (the base: none).
    single("barrier-stream-base", barrier_stream(0), block=512)
    single("barrier-stream", barrier_stream(32), block=512)

    # Byte accesses: GPGPU-Sim coalesces 1-byte lanes into 32 B segments, not lines: 16
    # dependent byte loads of one line, and 64 byte stores to a line each.
    single("byte-load-chain", byte_load_chain(64))
    single("byte-store-stream", byte_store_stream(64))

    # Stores: 64 coalesced line stores from one warp.
    single("store-stream-base", store_stream(0))
    single("store-stream", store_stream(64))

    # The L1 latency queue (4.x `l1_latency` 1): a refused one-line load, 7 stores and an
    # ALU chain behind it; the base has the loads and the chain but no stores.
    single("l1-queue-base", l1_queue(0))
    single("l1-queue", l1_queue(7))

    # CTA dispatch: 8 CTAs of 256 threads (8 warps) on the 15-SM machine.
    single("cta-dispatch", cta_work, grid=8, block=256)


if __name__ == "__main__":
    main()
