//! Where the global buffers of a kernel-format kernel live in memory.
//!
//! `packed` (the default) places them as `cudaMalloc` does in GPGPU-Sim 3.2.2: one after
//! another from the heap base `GLOBAL_HEAP_START` = 0x8000_0000, each size rounded up to
//! 256 B (`abstract_hardware_model.h`; `cuda-sim.cc`, `gpgpu_t::gpu_malloc`:
//! `m_dev_malloc += size; if (size%256) m_dev_malloc += (256 - size%256);`).
//! `spread` is the layout this model used before: each buffer in its own 1 MiB region with a
//! (k mod 7) × 9-line skew.
//!
//! Placement index k > 1 perturbs the layout deterministically, so that a result can be
//! checked for depending on an allocator accident: the base moves up by a seeded multiple of
//! 256 B below 1 MiB and, when packed, each gap between buffers grows by a seeded 0–7 × 256 B.
//! Placement 1 is the exact layout.

use std::borrow::Cow;

use crate::config::{BufferPlacement, Config};
use crate::workload::program::{mix64, Kernel};

/// GPGPU-Sim 3.2.2 `GLOBAL_HEAP_START` (`abstract_hardware_model.h`): the first
/// `cudaMalloc` returns it.
pub const HEAP_START: u64 = 0x8000_0000;
/// `gpu_malloc` rounds every size up to this.
pub const MALLOC_ALIGN: u64 = 256;
/// Placements k > 1 move the base by less than this.
pub const MAX_BASE_SHIFT: u64 = 1 << 20;
/// Placements k > 1 pad each gap between packed buffers by at most this many × 256 B.
pub const MAX_GAP_PAD: u64 = 7;

/// `spread`: base address of the first buffer.
pub const SPREAD_BASE: u64 = 0x1000_0000;
/// `spread`: buffer regions are aligned to this, and consecutive regions are this far apart.
pub const SPREAD_ALIGN: u64 = 1 << 20;
/// `spread`: buffer k starts `(k % 7) * SPREAD_SKEW` bytes into its region, so that
/// same-index elements of different arrays fall into different L1 sets (9 lines apart)
/// instead of all into one [design].
pub const SPREAD_SKEW: u64 = 9 * 128;

/// A layout: which scheme, and which placement of it (1 = exact).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub scheme: BufferPlacement,
    pub index: u32,
}

impl Default for Placement {
    /// GPGPU-Sim's packing from its heap base.
    fn default() -> Self {
        Placement {
            scheme: BufferPlacement::Packed,
            index: 1,
        }
    }
}

impl Placement {
    pub fn of(cfg: &Config) -> Placement {
        Placement {
            scheme: cfg.buffer_placement,
            index: cfg.placement,
        }
    }

    /// The seeded value `n` of this placement (k > 1 only).
    fn draw(&self, n: u64) -> u64 {
        mix64(mix64(0x504C_4143_454D_454E ^ self.index as u64) ^ n)
    }

    /// First base: the scheme's, moved up by 1 ..= 4095 × 256 B for k > 1 (never 0, so
    /// every k > 1 differs from placement 1).
    fn start(&self) -> u64 {
        let base = match self.scheme {
            BufferPlacement::Packed => HEAP_START,
            BufferPlacement::Spread => SPREAD_BASE,
        };
        if self.index <= 1 {
            return base;
        }
        let steps = MAX_BASE_SHIFT / MALLOC_ALIGN - 1;
        base + (1 + self.draw(0) % steps) * MALLOC_ALIGN
    }

    /// Extra bytes after buffer `k` (packed, k > 1 only): 0–7 × 256 B.
    fn pad(&self, k: usize) -> u64 {
        if self.index <= 1 || self.scheme != BufferPlacement::Packed {
            return 0;
        }
        (self.draw(k as u64 + 1) % (MAX_GAP_PAD + 1)) * MALLOC_ALIGN
    }
}

/// Hands out buffer bases in declaration order.
#[derive(Clone, Debug)]
pub struct Allocator {
    placement: Placement,
    /// Where the next buffer (packed) or the next buffer's region before the base shift
    /// (spread) starts.
    next: u64,
    count: usize,
}

impl Default for Allocator {
    fn default() -> Self {
        Allocator::new(Placement::default())
    }
}

impl Allocator {
    pub fn new(placement: Placement) -> Allocator {
        Allocator {
            placement,
            next: match placement.scheme {
                BufferPlacement::Packed => placement.start(),
                BufferPlacement::Spread => SPREAD_BASE,
            },
            count: 0,
        }
    }

    /// The base of the next buffer of `bytes` bytes; None when the layout would leave the
    /// 64-bit address space.
    pub fn alloc(&mut self, bytes: u64) -> Option<u64> {
        let k = self.count;
        let (base, next) = match self.placement.scheme {
            BufferPlacement::Packed => {
                let base = self.next;
                let end = base.checked_add(bytes)?.checked_next_multiple_of(MALLOC_ALIGN)?;
                (base, end.checked_add(self.placement.pad(k))?)
            }
            BufferPlacement::Spread => {
                let base = self.next.checked_add((k as u64 % 7) * SPREAD_SKEW)?;
                let region_end = base.checked_add(bytes)?.checked_next_multiple_of(SPREAD_ALIGN)?;
                // Placement k > 1 moves the whole layout by the base shift.
                let shift = self.placement.start() - SPREAD_BASE;
                (base.checked_add(shift)?, region_end.checked_add(SPREAD_ALIGN)?)
            }
        };
        self.next = next;
        self.count += 1;
        Some(base)
    }
}

/// `k` with its buffers placed by `placement`, every address expression that indexes a
/// buffer moved with it. The layout depends only on the buffers' sizes and order, whatever
/// bases `k` came with. Borrowed when nothing moves (trace kernels, whose addresses are
/// recorded; no buffers; or the layout the kernel already has).
pub fn place(k: &Kernel, placement: Placement) -> Result<Cow<'_, Kernel>, String> {
    if k.buffers.is_empty() || k.per_cta.is_some() {
        return Ok(Cow::Borrowed(k));
    }
    let mut alloc = Allocator::new(placement);
    let mut bases = Vec::with_capacity(k.buffers.len());
    for b in &k.buffers {
        bases.push(alloc.alloc(b.extent).ok_or_else(|| {
            format!(
                "buffer `{}` of kernel `{}` does not fit in the 64-bit address space under \
                 placement {} ({:?})",
                b.name, k.name, placement.index, placement.scheme
            )
        })?);
    }
    if k.buffers.iter().zip(&bases).all(|(b, &n)| b.base == n) {
        return Ok(Cow::Borrowed(k));
    }
    let mut moved = k.clone();
    for e in &mut moved.program.exprs {
        // The parser gives every buffer its own base, and shared memory base 0 (no buffer's).
        if e.lanes.is_some() {
            continue;
        }
        if let Some(i) = k.buffers.iter().position(|b| b.base == e.base) {
            e.base = bases[i];
        }
    }
    for (b, n) in moved.buffers.iter_mut().zip(bases) {
        b.base = n;
    }
    Ok(Cow::Owned(moved))
}

/// [`place`] with the placement `cfg` selects.
pub fn place_for<'k>(k: &'k Kernel, cfg: &Config) -> Result<Cow<'k, Kernel>, String> {
    place(k, Placement::of(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bases(p: Placement, sizes: &[u64]) -> Vec<u64> {
        let mut a = Allocator::new(p);
        sizes.iter().map(|&s| a.alloc(s).unwrap()).collect()
    }

    fn packed(index: u32) -> Placement {
        Placement {
            scheme: BufferPlacement::Packed,
            index,
        }
    }

    #[test]
    fn packed_placement_1_is_gpgpu_sims_cuda_malloc() {
        // gpu_malloc: base = m_dev_malloc; m_dev_malloc += size rounded up to 256.
        let sizes = [1000, 256, 1 << 20, 1, 300];
        let want = [
            0x8000_0000,
            0x8000_0000 + 1024,
            0x8000_0000 + 1024 + 256,
            0x8000_0000 + 1024 + 256 + (1 << 20),
            0x8000_0000 + 1024 + 256 + (1 << 20) + 256,
        ];
        assert_eq!(bases(packed(1), &sizes), want);
    }

    #[test]
    fn spread_placement_1_is_the_old_layout() {
        let mib = 1u64 << 20;
        let p = Placement {
            scheme: BufferPlacement::Spread,
            index: 1,
        };
        assert_eq!(
            bases(p, &[1, mib, 3 * mib, 5]),
            [
                0x1000_0000,
                0x1000_0000 + 2 * mib + SPREAD_SKEW,
                0x1000_0000 + 5 * mib + 2 * SPREAD_SKEW,
                0x1000_0000 + 10 * mib + 3 * SPREAD_SKEW
            ]
        );
    }

    #[test]
    fn later_placements_are_deterministic_and_bounded() {
        let sizes = [4096, 1000, 1 << 20, 77, 256];
        let exact = bases(packed(1), &sizes);
        let mut seen = vec![exact.clone()];
        for k in 2..=20 {
            let b = bases(packed(k), &sizes);
            assert_eq!(b, bases(packed(k), &sizes), "placement {k} is deterministic");
            assert_ne!(b, exact, "placement {k} differs from placement 1");
            let shift = b[0] - HEAP_START;
            assert!(
                shift > 0 && shift < MAX_BASE_SHIFT && shift.is_multiple_of(256),
                "base shift {shift:#x}"
            );
            for i in 1..sizes.len() {
                let packed_next = (b[i - 1] + sizes[i - 1]).next_multiple_of(256);
                let pad = b[i] - packed_next;
                assert!(
                    pad.is_multiple_of(256) && pad <= 7 * 256,
                    "placement {k}: gap pad {pad}"
                );
            }
            seen.push(b);
        }
        seen.sort();
        seen.dedup();
        assert!(seen.len() > 15, "placements mostly differ from each other");
    }

    #[test]
    fn spread_later_placements_shift_the_base_only() {
        let p = |index| Placement {
            scheme: BufferPlacement::Spread,
            index,
        };
        let sizes = [1 << 20, 5000, 300];
        let one = bases(p(1), &sizes);
        let three = bases(p(3), &sizes);
        let shift = three[0] - one[0];
        assert!(shift > 0 && shift < MAX_BASE_SHIFT && shift.is_multiple_of(256));
        assert!(three.iter().zip(&one).all(|(t, o)| t - o == shift));
    }

    #[test]
    fn place_moves_buffers_and_their_expressions() {
        let src = "kernel k\ngrid 1\nblock 32\nbuffer A 1000\nbuffer B 4096\n\
                   ld.global r1, A[4*tid]\nld.global r2, B[4*tid]\nst.shared [4*tid], r2\n";
        let k = crate::workload::kernel_format::parse_kernel(src, "t.kern").unwrap();
        assert!(matches!(
            place(&k, Placement::default()).unwrap(),
            Cow::Borrowed(_)
        ));
        let spread = Placement {
            scheme: BufferPlacement::Spread,
            index: 1,
        };
        let m = place(&k, spread).unwrap();
        assert_eq!(m.buffers[0].base, SPREAD_BASE);
        assert_eq!(m.buffers[1].base, SPREAD_BASE + 2 * SPREAD_ALIGN + SPREAD_SKEW);
        let mut expr_bases: Vec<u64> = m.program.exprs.iter().map(|e| e.base).collect();
        expr_bases.sort();
        assert_eq!(expr_bases, [0, m.buffers[0].base, m.buffers[1].base]);
        // And back: placing the moved kernel packed again restores the parsed one.
        assert_eq!(*place(&m, Placement::default()).unwrap(), k);
    }
}
