//! How an SM's warps are dealt to its two schedulers: warp w is lane w / 2 of scheduler
//! w % 2 (GPGPU-Sim 3.2.2 `shader.cc`, the `shader_core_ctx` constructor: `schedulers[i % num_sched]`).
//! The RTL blocks hold per-scheduler lane vectors; these convert to and from warp masks.

/// Bits of `m` at even / odd positions: scheduler 0's and 1's lanes.
pub fn split(m: u64) -> [u64; 2] {
    let mut halves = [0u64; 2];
    let mut x = m;
    while x != 0 {
        let w = x.trailing_zeros();
        x &= x - 1;
        halves[(w & 1) as usize] |= 1 << (w >> 1);
    }
    halves
}

/// Inverse of [`split`].
pub fn join(h: [u64; 2]) -> u64 {
    let mut m = 0u64;
    for (s, &half) in h.iter().enumerate() {
        let mut x = half;
        while x != 0 {
            let j = x.trailing_zeros();
            x &= x - 1;
            m |= 1 << (2 * j + s as u32);
        }
    }
    m
}
