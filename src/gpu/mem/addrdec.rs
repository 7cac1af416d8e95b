//! Address decoding: which DRAM channel (chip), bank, row and column a byte address maps to,
//! following GPGPU-Sim 3.2.2 `addrdec.cc` (`linear_to_raw_address_translation`).
//!
//! A mapping string such as
//! `dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS`
//! names, from bit 63 down to bit 0, what each address bit selects: `R` row, `B` bank, `C`
//! column, `S` burst (also a column bit), `D` chip, `0` unused; `.`, `|` and spaces are
//! ignored. `dramid@N` puts the channel bits at bit N instead of `D` letters: with a
//! power-of-two channel count the other fields move up to make room; otherwise the address
//! is split at bit N and the channel is the high part modulo the channel count (the rest of
//! the address is the quotient stitched onto the low bits), as `addrdec_tlx` does.

/// What an address decodes to (GPGPU-Sim's `addrdec_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tlx {
    pub chip: u32,
    pub bank: u32,
    pub row: u32,
    pub col: u32,
    pub burst: u32,
    /// Global L2 sub-partition: chip × sub-partitions + (bank & (sub-partitions − 1)).
    pub sub_partition: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddrDec {
    chip_mask: u64,
    bank_mask: u64,
    row_mask: u64,
    col_mask: u64,
    burst_mask: u64,
    /// `dramid@N`'s N, when given.
    chip_start: Option<u32>,
    channels: u32,
    sub_partitions: u32,
    /// Channel count is not a power of two (GPGPU-Sim's `gap`): split by division.
    gap: bool,
}

/// Gathers the bits of `val` selected by `mask` into the low bits (GPGPU-Sim's
/// `addrdec_packbits`). A mask of many bits (the L2's `partition_address` keeps all but the
/// channel and sub-partition bits) is walked by the bits it drops instead, highest first:
/// a loop per kept bit was 9 % of a memory-bound run.
fn pext(val: u64, mask: u64) -> u64 {
    if mask.count_ones() <= 32 {
        return pext_by_kept_bits(val, mask);
    }
    let (mut out, mut drop) = (val, !mask);
    while drop != 0 {
        let bit = 63 - drop.leading_zeros();
        let below = out & ((1u64 << bit) - 1);
        out = below | ((out >> bit >> 1) << bit);
        drop &= !(1u64 << bit);
    }
    out
}

fn pext_by_kept_bits(val: u64, mask: u64) -> u64 {
    let (mut out, mut pos, mut m) = (0u64, 0, mask);
    while m != 0 {
        let bit = m.trailing_zeros();
        out |= ((val >> bit) & 1) << pos;
        pos += 1;
        m &= m - 1;
    }
    out
}

/// Scatters the low bits of `val` into the bit positions of `mask` (inverse of [`pext`]);
/// a mask of many bits is walked by the bits it leaves clear, lowest first.
fn pdep(val: u64, mask: u64) -> u64 {
    if mask.count_ones() <= 32 {
        return pdep_by_kept_bits(val, mask);
    }
    let (mut out, mut gaps) = (val, !mask);
    while gaps != 0 {
        let bit = gaps.trailing_zeros();
        let below = out & ((1u64 << bit) - 1);
        out = below | ((out >> bit) << 1 << bit);
        gaps &= gaps - 1;
    }
    out & mask
}

fn pdep_by_kept_bits(val: u64, mask: u64) -> u64 {
    let (mut out, mut pos, mut m) = (0u64, 0, mask);
    while m != 0 {
        let bit = m.trailing_zeros();
        out |= ((val >> pos) & 1) << bit;
        pos += 1;
        m &= m - 1;
    }
    out
}

pub use crate::config::GTX480_ADDRESS_MAP as GTX480_MAPPING;
use crate::config::{Config, ConfigError};

/// Checks `cfg`'s address map: that it parses for its channels and sub-partitions, and that
/// a line lies in one channel.
pub fn check_map(cfg: &Config) -> Result<(), ConfigError> {
    let sub = cfg.l2_sub_partitions;
    let map = AddrDec::parse(&cfg.dram_address_map, cfg.l2_partitions, sub).map_err(|reason| {
        ConfigError::new(
            "dram_address_map",
            format!("`{}`: {reason}", cfg.dram_address_map),
        )
    })?;
    if (1u64 << map.chip_low_bit()) < cfg.line_bytes as u64 {
        return Err(ConfigError::new(
            "dram_address_map",
            format!(
                "the channel bits start at bit {}, inside a {}-byte line: a line must lie in one channel",
                map.chip_low_bit(),
                cfg.line_bytes
            ),
        ));
    }
    Ok(())
}

impl AddrDec {
    /// Parses `mapping` for `channels` channels of `sub_partitions` L2 sub-partitions each
    /// (GPGPU-Sim 3.2.2 `addrdec_parseoption` + `init`). Errors name the offending part.
    pub fn parse(mapping: &str, channels: u32, sub_partitions: u32) -> Result<AddrDec, String> {
        if channels == 0 {
            return Err("the channel count must be at least 1".into());
        }
        if sub_partitions == 0 || !sub_partitions.is_power_of_two() {
            return Err(format!(
                "{sub_partitions} sub-partitions per channel: must be a power of two"
            ));
        }
        let mapping = mapping.trim();
        let (chip_start, bits) = match mapping.strip_prefix("dramid@") {
            Some(rest) => {
                let (n, bits) = rest.split_once(';').unwrap_or((rest, ""));
                let n: u32 = n
                    .trim()
                    .parse()
                    .map_err(|_| format!("`dramid@{n}`: the channel start bit must be a number"))?;
                if n >= 64 {
                    return Err(format!("`dramid@{n}`: the channel start bit must be below 64"));
                }
                (Some(n), bits)
            }
            None => (None, mapping),
        };
        let mut masks = [0u64; 5]; // chip, bank, row, col, burst
        let mut ofs: i32 = 63;
        for (i, ch) in bits.chars().enumerate() {
            let field = match ch {
                'D' | 'd' => {
                    if chip_start.is_some() {
                        return Err(format!(
                            "character {} `{ch}`: channel bits are given by dramid@ already",
                            i + 1
                        ));
                    }
                    Some(0)
                }
                'B' | 'b' => Some(1),
                'R' | 'r' => Some(2),
                'C' | 'c' => Some(3),
                'S' | 's' => Some(4),
                '0' => None,
                '|' | ' ' | '.' => continue,
                _ => {
                    return Err(format!(
                        "character {} `{ch}` is not one of D B R C S 0 . | (space)",
                        i + 1
                    ))
                }
            };
            if ofs < 0 {
                return Err("the bit map is longer than 64 bits".into());
            }
            if let Some(f) = field {
                masks[f] |= 1 << ofs;
                if f == 4 {
                    // A burst bit is also a column bit.
                    masks[3] |= 1 << ofs;
                }
            }
            ofs -= 1;
        }
        if ofs != -1 {
            return Err(format!("the bit map has {} bits, not 64", 63 - ofs));
        }
        let mut nchipbits = 31 - channels.leading_zeros();
        let gap = !channels.is_power_of_two();
        if gap {
            nchipbits += 1;
        }
        match chip_start {
            Some(s) if !gap => {
                // Insert the channel bits at bit s, moving the fields above up.
                let low = (1u64 << s) - 1;
                for m in &mut masks[1..4] {
                    *m = ((*m & !low) << nchipbits) | (*m & low);
                }
                masks[0] = ((1u64 << nchipbits) - 1) << s;
            }
            Some(_) => {}
            None => {
                if gap {
                    return Err(format!(
                        "{channels} channels: explicit D bits need a power-of-two channel count (use dramid@N)"
                    ));
                }
                if masks[0].count_ones() != nchipbits {
                    return Err(format!(
                        "{} D bits for {channels} channels (need {nchipbits})",
                        masks[0].count_ones()
                    ));
                }
            }
        }
        if masks[1] == 0 && sub_partitions > 1 {
            return Err("no bank bits, so no sub-partition bit".into());
        }
        Ok(AddrDec {
            chip_mask: masks[0],
            bank_mask: masks[1],
            row_mask: masks[2],
            col_mask: masks[3],
            burst_mask: masks[4],
            chip_start,
            channels,
            sub_partitions,
            gap,
        })
    }

    pub fn channels(&self) -> u32 {
        self.channels
    }

    /// Number of banks the bank bits can name.
    pub fn bank_bits(&self) -> u32 {
        self.bank_mask.count_ones()
    }

    /// The lowest channel bit: addresses that differ only below it share a channel.
    pub fn chip_low_bit(&self) -> u32 {
        match (self.gap, self.chip_start) {
            (true, Some(s)) => s,
            _ => self.chip_mask.trailing_zeros().min(63),
        }
    }

    /// GPGPU-Sim 3.2.2 `addrdec_tlx`.
    pub fn tlx(&self, addr: u64) -> Tlx {
        let (chip, rest) = self.chip_and_rest(addr);
        let bank = pext(rest, self.bank_mask) as u32;
        Tlx {
            chip,
            bank,
            row: pext(rest, self.row_mask) as u32,
            col: pext(rest, self.col_mask) as u32,
            burst: pext(rest, self.burst_mask) as u32,
            sub_partition: chip * self.sub_partitions + (bank & (self.sub_partitions - 1)),
        }
    }

    /// `tlx(addr).sub_partition` without the row, column and burst fields (the network
    /// asks it of every request it routes).
    pub fn global_sub_partition(&self, addr: u64) -> u32 {
        let (chip, rest) = self.chip_and_rest(addr);
        let bank = pext(rest, self.bank_mask) as u32;
        chip * self.sub_partitions + (bank & (self.sub_partitions - 1))
    }

    /// The channel of `addr` and the address the other fields are taken from (with a gap,
    /// the channel's digit removed).
    fn chip_and_rest(&self, addr: u64) -> (u32, u64) {
        if self.gap {
            let s = self.chip_start.unwrap_or(0);
            let hi = addr >> s;
            let rest = ((hi / self.channels as u64) << s) | (addr & ((1u64 << s) - 1));
            ((hi % self.channels as u64) as u32, rest)
        } else {
            (pext(addr, self.chip_mask) as u32, addr)
        }
    }

    /// The channel of `addr`.
    pub fn chip(&self, addr: u64) -> u32 {
        if self.gap {
            let s = self.chip_start.unwrap_or(0);
            ((addr >> s) % self.channels as u64) as u32
        } else {
            pext(addr, self.chip_mask) as u32
        }
    }

    /// `addr` with its channel removed: a dense address inside the channel (GPGPU-Sim's
    /// `partition_address`, keeping the sub-partition bit).
    pub fn local(&self, addr: u64) -> u64 {
        if self.gap {
            let s = self.chip_start.unwrap_or(0);
            (((addr >> s) / self.channels as u64) << s) | (addr & ((1u64 << s) - 1))
        } else {
            pext(addr, !self.chip_mask)
        }
    }

    /// The sub-partition bits: the lowest log2(sub-partitions) bank bits (GPGPU-Sim 3.2.2
    /// addrdec.cc `linear_to_raw_address_translation::init`, `sub_partition_id_mask`).
    fn sub_mask(&self) -> u64 {
        let mut m = self.bank_mask;
        let mut out = 0;
        for _ in 0..self.sub_partitions.trailing_zeros() {
            let low = m & m.wrapping_neg();
            out |= low;
            m &= !low;
        }
        out
    }

    /// The sub-partition of `addr` inside its channel (`addrdec_tlx`'s `bk & (n - 1)`).
    pub fn sub_in_channel(&self, addr: u64) -> u32 {
        self.global_sub_partition(addr) % self.sub_partitions
    }

    /// GPGPU-Sim 3.2.2 `partition_address`: `addr` without its channel and sub-partition
    /// bits (the L2 indexes its sets by it, "to reduce set camping": gpu-cache.cc
    /// `l2_cache_config::set_index`).
    pub fn partition_address(&self, addr: u64) -> u64 {
        if self.gap {
            pext(self.local(addr), !self.sub_mask())
        } else {
            pext(addr, !(self.chip_mask | self.sub_mask()))
        }
    }

    /// Inverse of [`partition_address`](Self::partition_address) for channel `chip`'s
    /// sub-partition `sub` (its index inside the channel).
    pub fn from_partition_address(&self, pa: u64, chip: u32, sub: u32) -> u64 {
        let sm = self.sub_mask();
        if self.gap {
            self.global(pdep(pa, !sm) | pdep(sub as u64, sm), chip)
        } else {
            pdep(pa, !(self.chip_mask | sm)) | pdep(chip as u64, self.chip_mask) | pdep(sub as u64, sm)
        }
    }

    /// Inverse of [`local`](Self::local): the address of channel `chip`'s local address `local`.
    pub fn global(&self, local: u64, chip: u32) -> u64 {
        if self.gap {
            let s = self.chip_start.unwrap_or(0);
            ((((local >> s) * self.channels as u64) + chip as u64) << s) | (local & ((1u64 << s) - 1))
        } else {
            pdep(local, !self.chip_mask) | pdep(chip as u64, self.chip_mask)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both walks of `pext` and `pdep` agree with the walk by kept bits, for masks of every
    /// density, and `pdep` inverts `pext` on the mask.
    #[test]
    fn bit_gather_and_scatter_agree_whichever_bits_they_walk() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..20_000 {
            let val = next();
            // Dense masks (few bits clear), sparse ones and random ones.
            let mask = match i % 3 {
                0 => !(next() & next() & next()),
                1 => next() & next() & next(),
                _ => next(),
            };
            let mask = if i % 7 == 0 { mask | 1 << 63 } else { mask };
            assert_eq!(
                pext(val, mask),
                pext_by_kept_bits(val, mask),
                "{val:#x} {mask:#x}"
            );
            assert_eq!(
                pdep(val, mask),
                pdep_by_kept_bits(val, mask),
                "{val:#x} {mask:#x}"
            );
            assert_eq!(pdep(pext(val, mask), mask), val & mask);
        }
        assert_eq!(pext(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(pdep(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(pext(0xabcd, !0), 0xabcd);
    }

    fn gtx480() -> AddrDec {
        AddrDec::parse(GTX480_MAPPING, 6, 2).unwrap()
    }

    #[test]
    fn gtx480_masks_follow_the_letters() {
        let d = gtx480();
        // BBBCCCCB.CCSSSSSS: bank bits 15..13 and 8; row bits 27..16.
        assert_eq!(d.bank_mask, 0xE100);
        assert_eq!(d.row_mask, 0x0FFF_0000);
        assert_eq!(d.col_mask, 0x1EFF);
        assert_eq!(d.burst_mask, 0x3F);
        assert!(d.gap);
    }

    #[test]
    fn six_channels_split_the_address_at_bit_8() {
        let d = gtx480();
        // 256 B chunks go round the six channels.
        for k in 0..24u64 {
            assert_eq!(d.chip(k * 256 + 5), (k % 6) as u32);
            assert_eq!(d.chip(k * 256 + 128), (k % 6) as u32);
        }
        // Chunk 7 (0x700) is channel 1, rest = (7 / 6) << 8 = 0x100: bank bit 0 set.
        let t = d.tlx(0x700);
        assert_eq!((t.chip, t.bank, t.row, t.col), (1, 1, 0, 0));
        assert_eq!(t.sub_partition, 3);
        // 0x1234_5678: chunk 0x123456 = 1193046 → channel 1193046 % 6 = 0,
        // rest = (1193046 / 6) << 8 | 0x78 = 198841 << 8 | 0x78 = 0x308B978.
        let t = d.tlx(0x1234_5678);
        assert_eq!(t.chip, 0);
        let rest = 0x308_B978u64;
        assert_eq!(d.local(0x1234_5678), rest);
        assert_eq!(t.row, ((rest >> 16) & 0xFFF) as u32);
        assert_eq!(t.bank, (((rest >> 13) & 7) << 1 | (rest >> 8) & 1) as u32);
        assert_eq!(t.sub_partition, t.bank & 1);
    }

    #[test]
    fn local_and_global_are_inverse() {
        for d in [
            gtx480(),
            AddrDec::parse(GTX480_MAPPING, 8, 2).unwrap(),
            AddrDec::parse(
                "00000000.00000000.00000000.00000000.000RRRRR.RRRRRRRR.BBBDDCCB.CCSSSSSS",
                4,
                1,
            )
            .unwrap(),
        ] {
            for a in (0..1u64 << 22).step_by(4093) {
                let c = d.chip(a);
                assert!(c < d.channels());
                assert_eq!(d.global(d.local(a), c), a, "{a:#x}");
            }
        }
    }

    #[test]
    fn power_of_two_channels_insert_the_chip_bits() {
        let d = AddrDec::parse(GTX480_MAPPING, 8, 1).unwrap();
        assert_eq!(d.chip_mask, 0x700);
        // The bank bit at 8 moves up past the three channel bits to 11.
        assert_eq!(d.bank_mask, 0x70800);
        assert_eq!(d.tlx(0x500).chip, 5);
        assert_eq!(d.tlx(0x800).bank, 1);
    }

    /// The network's shortcut gives `tlx`'s sub-partition, with and without a channel gap.
    #[test]
    fn the_sub_partition_shortcut_is_tlx_s() {
        let four = AddrDec::parse(GTX480_MAPPING, 4, 2).unwrap();
        assert!(!four.gap);
        for d in [gtx480(), AddrDec::parse(GTX480_MAPPING, 5, 2).unwrap(), four] {
            for addr in (0..1u64 << 26).step_by(128 * 13 + 128) {
                assert_eq!(
                    d.global_sub_partition(addr),
                    d.tlx(addr).sub_partition,
                    "{addr:#x}"
                );
            }
        }
    }

    #[test]
    fn bad_mappings_are_refused_with_a_reason() {
        assert!(AddrDec::parse("dramid@8;RRRR", 6, 2)
            .unwrap_err()
            .contains("4 bits"));
        let e = AddrDec::parse(&GTX480_MAPPING.replace('B', "X"), 6, 2).unwrap_err();
        assert!(e.contains("`X`"), "{e}");
        let e = AddrDec::parse(&GTX480_MAPPING.replace("0000R", "0000D"), 6, 2).unwrap_err();
        assert!(e.contains("dramid@"), "{e}");
        assert!(AddrDec::parse(GTX480_MAPPING, 6, 3).is_err());
        assert!(AddrDec::parse("dramid@x;0", 6, 2).is_err());
    }

    /// 3.2.2 `sub_partition_id_mask` is the lowest bank bit for two sub-partitions (bit 8 on
    /// GTX480); `partition_address` drops it and the channel, and is inverted exactly.
    #[test]
    fn partition_address_drops_channel_and_sub_partition_bits() {
        let d = gtx480();
        assert_eq!(d.sub_mask(), 0x100);
        for addr in (0..1u64 << 22).step_by(128 * 7 + 128) {
            let t = d.tlx(addr);
            let sub = d.sub_in_channel(addr);
            assert_eq!(t.sub_partition, t.chip * 2 + sub);
            let pa = d.partition_address(addr);
            assert_eq!(d.from_partition_address(pa, t.chip, sub), addr);
        }
        // Power-of-two channels with D bits.
        let m = "00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBBCCCC.DDCCSSSS";
        let d = AddrDec::parse(m, 4, 2).unwrap();
        for addr in (0..1u64 << 20).step_by(48) {
            let (c, sub) = (d.chip(addr), d.sub_in_channel(addr));
            assert_eq!(d.from_partition_address(d.partition_address(addr), c, sub), addr);
        }
    }
}
