//! SSE2: 4 lanes per `__m128i`, on every x86-64 CPU; only the [`Lane`] primitives live
//! here.
//!
//! Rotations are two shifts and an OR, except by 16: two word shuffles (`pshuflw`,
//! `pshufhw`; SSE2 has no byte shuffle). Message words: four plain 16-byte loads per
//! quarter block, transposed in registers with unpacks.
//!
//! [`Lane`]: super::lanes::Lane

use super::lanes::LaneKernel;

/// Interleaved 4-lane groups per call when the lanes can be filled: 3. Measured with
/// `many_report` (1, 2 and 3 groups): on Zen 4, 1.72, 0.94 and 0.94 cycles/byte at
/// 8 KiB; on Zen 5 (AMD EPYC family 26, 2026-11-23, 48 messages), 2.95, 1.51 and 1.05
/// at 8 KiB (with the step constants loaded, see `lanes.rs`). On Zen 3 (AMD EPYC
/// family 25, 2026-11-23), 0.60, 1.10 and 1.18 bytes/cycle at 8 KiB with 24 messages,
/// 0.60, 1.09 and 1.06 with 48; 0.59, 1.07 and 1.10 at 1 MiB. On an Intel Xeon (family
/// 6 model 0xA7, 2026-11-25, 96 messages, the step constants read pre-splatted, see
/// `Lane::SPLATTED_K`): 0.63, 1.00-1.03 and 1.10-1.12 at 8 KiB.
pub(crate) const GROUPS: usize = 3;

/// Relative throughput of 1, 2 and 3 groups with full lanes (2 groups = 100), from the
/// Zen 5 figures above: what `hash_many` weighs against idle lanes in its last rounds.
pub(crate) const SPEED: [u32; 3] = [51, 100, 144];

/// The SSE2 lane kernel with `groups` groups of 4 lanes (1 to 3), on x86-64.
pub(crate) fn kernel(groups: usize) -> Option<LaneKernel> {
    imp::kernel(groups)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod imp {
    use super::super::lanes::{self, by_groups, Lane, LaneKernel};
    use core::arch::x86_64::*;

    pub(super) fn kernel(groups: usize) -> Option<LaneKernel> {
        Some(LaneKernel {
            lanes: 4 * groups,
            width: 4,
            strided: by_groups!(groups, strided)?,
            min_live: 2,
        })
    }

    /// The kernel entry (a stride between a lane's blocks; see `LaneKernel`). SSE2 is part of x86-64: no run-time check is needed.
    fn strided<const G: usize>(state: &mut [u32], lanes: &[&[u8]], nblocks: usize, stride: usize) {
        lanes::compress_strided::<Sse2, G>(state, lanes, nblocks, stride)
    }

    /// Four lanes. SSE2 is in every x86-64 CPU (the target's baseline).
    #[derive(Clone, Copy)]
    struct Sse2(__m128i);

    impl Lane for Sse2 {
        const LANES: usize = 4;
        const SPLATTED_K: bool = true;
        #[inline(always)]
        fn splat(x: u32) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
            Sse2(unsafe { _mm_set1_epi32(x as i32) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
            Sse2(unsafe { _mm_add_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
            Sse2(unsafe { _mm_sub_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
            Sse2(unsafe { _mm_and_si128(self.0, o.0) })
        }
        #[inline(always)]
        fn andnot(self, o: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
            Sse2(unsafe { _mm_andnot_si128(self.0, o.0) })
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
            Sse2(unsafe { _mm_xor_si128(self.0, o.0) })
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            debug_assert_eq!(L + R, 32);
            // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
            unsafe {
                if L == 16 {
                    // Swap the 16-bit halves of every word: [1, 0, 3, 2] in each 64 bits.
                    Sse2(_mm_shufflehi_epi16::<0xB1>(_mm_shufflelo_epi16::<0xB1>(
                        self.0,
                    )))
                } else {
                    Sse2(_mm_or_si128(
                        _mm_slli_epi32::<L>(self.0),
                        _mm_srli_epi32::<R>(self.0),
                    ))
                }
            }
        }
        #[inline(always)]
        fn load(words: &[u32]) -> Self {
            let w = &words[..4];
            // SAFETY: `w` is 4 readable words (16 bytes); the load is unaligned.
            Sse2(unsafe { _mm_loadu_si128(w.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [u32]) {
            let w = &mut out[..4];
            // SAFETY: `w` is 4 writable words (16 bytes); the store is unaligned.
            unsafe { _mm_storeu_si128(w.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16] {
            let blocks: [&[u8; 64]; 4] =
                core::array::from_fn(|i| lanes[i][offset..offset + 64].try_into().unwrap());
            // SAFETY: SSE2 is part of the x86-64 baseline; each block is 64 readable
            // bytes and `16 * quarter + 16 <= 64`; the loads are unaligned.
            unsafe {
                let mut out = [Sse2(_mm_setzero_si128()); 16];
                for quarter in 0..4 {
                    let r: [__m128i; 4] = core::array::from_fn(|i| {
                        _mm_loadu_si128(blocks[i].as_ptr().add(16 * quarter).cast())
                    });
                    let t0 = _mm_unpacklo_epi32(r[0], r[1]);
                    let t1 = _mm_unpackhi_epi32(r[0], r[1]);
                    let t2 = _mm_unpacklo_epi32(r[2], r[3]);
                    let t3 = _mm_unpackhi_epi32(r[2], r[3]);
                    out[4 * quarter] = Sse2(_mm_unpacklo_epi64(t0, t2));
                    out[4 * quarter + 1] = Sse2(_mm_unpackhi_epi64(t0, t2));
                    out[4 * quarter + 2] = Sse2(_mm_unpacklo_epi64(t1, t3));
                    out[4 * quarter + 3] = Sse2(_mm_unpackhi_epi64(t1, t3));
                }
                out
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::super::lanes::tests::{check, check_strided};

        #[test]
        fn sse2_lanes_match_scalar() {
            for g in 1..=3 {
                let k = super::kernel(g).unwrap();
                check(|s, l, n| k.compress(s, l, n), 4, k.lanes, 3, 10 + g as u64);
                check_strided(k.strided, 4, k.lanes, 3, 50 + 10 + g as u64);
            }
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
mod imp {
    use super::super::lanes::LaneKernel;
    pub(super) fn kernel(_groups: usize) -> Option<LaneKernel> {
        None
    }
}
