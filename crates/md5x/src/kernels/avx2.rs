//! AVX2: 8 lanes per `__m256i`; only the [`Lane`] primitives live here.
//!
//! Rotations are two shifts and an OR (AVX2 has no rotate), except by 16: one byte
//! shuffle. Message words: eight plain 32-byte loads per half block, transposed in
//! registers (unpacks and a 128-bit permute), never gathers.

use super::lanes::LaneKernel;

/// Interleaved 8-lane groups per call when the lanes can be filled: 3. Measured with
/// `many_report` on Zen 4: 1 group is latency-bound (0.78 cycles/byte), 2 and 3 tie at
/// 8 KiB (0.59), 3 wins at 1 KiB. On Zen 5 (AMD EPYC family 26, 2026-11-23, 48
/// messages), 3 wins at every size: 1.55, 0.79 and 0.61 cycles/byte at 8 KiB, 1.56,
/// 0.86 and 0.67 at 1 MiB. (Issue 4's figures for Zen 3 agree: about 1.3, 2.4 and
/// 2.8-3.0 bytes/cycle.) With fewer messages, `hash_many` picks fewer groups.
pub(crate) const GROUPS: usize = 3;

/// Relative throughput of 1, 2 and 3 groups with full lanes (2 groups = 100), from the
/// Zen 5 figures above: what `hash_many` weighs against idle lanes in its last rounds.
pub(crate) const SPEED: [u32; 3] = [50, 100, 128];

/// The AVX2 lane kernel with `groups` groups of 8 lanes (1 to 3), if this CPU has AVX2.
pub(crate) fn kernel(groups: usize) -> Option<LaneKernel> {
    imp::kernel(groups)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod imp {
    use super::super::lanes::{self, by_groups, Lane, LaneKernel};
    use core::arch::x86_64::*;

    pub(super) fn kernel(groups: usize) -> Option<LaneKernel> {
        if !crate::Backend::Avx2.is_supported() {
            return None;
        }
        Some(LaneKernel {
            lanes: 8 * groups,
            width: 8,
            strided: by_groups!(groups, strided)?,
            min_live: 2,
        })
    }

    /// Safe entry: checks AVX2 (a cached flag), then runs the kernel
    /// with a stride between a lane's blocks.
    fn strided<const G: usize>(state: &mut [u32], lanes: &[&[u8]], nblocks: usize, stride: usize) {
        assert!(crate::Backend::Avx2.is_supported(), "AVX2 not available");
        // SAFETY: the CPU has AVX2 (checked just above), the only requirement of
        // `compress_avx2` beyond its (checked) arguments.
        unsafe { compress_avx2::<G>(state, lanes, nblocks, stride) }
    }

    #[target_feature(enable = "avx2")]
    fn compress_avx2<const G: usize>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        lanes::compress_strided::<Avx2, G>(state, lanes, nblocks, stride)
    }

    /// Eight lanes. Values of this type exist only inside `compress_avx2`, which runs
    /// only on CPUs with AVX2: that is what makes the intrinsics below sound.
    #[derive(Clone, Copy)]
    struct Avx2(__m256i);

    impl Lane for Avx2 {
        const LANES: usize = 8;
        #[inline(always)]
        fn splat(x: u32) -> Self {
            // SAFETY: AVX2 is available (see the type's comment).
            Avx2(unsafe { _mm256_set1_epi32(x as i32) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: AVX2 is available (see the type's comment).
            Avx2(unsafe { _mm256_add_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: AVX2 is available (see the type's comment).
            Avx2(unsafe { _mm256_sub_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            // SAFETY: AVX2 is available (see the type's comment).
            Avx2(unsafe { _mm256_and_si256(self.0, o.0) })
        }
        #[inline(always)]
        fn andnot(self, o: Self) -> Self {
            // SAFETY: AVX2 is available (see the type's comment).
            Avx2(unsafe { _mm256_andnot_si256(self.0, o.0) })
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            // SAFETY: AVX2 is available (see the type's comment).
            Avx2(unsafe { _mm256_xor_si256(self.0, o.0) })
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            debug_assert_eq!(L + R, 32);
            // SAFETY: AVX2 is available (see the type's comment).
            unsafe {
                if L == 16 {
                    let swap = _mm256_setr_epi8(
                        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4,
                        5, 10, 11, 8, 9, 14, 15, 12, 13,
                    );
                    Avx2(_mm256_shuffle_epi8(self.0, swap))
                } else {
                    Avx2(_mm256_or_si256(
                        _mm256_slli_epi32::<L>(self.0),
                        _mm256_srli_epi32::<R>(self.0),
                    ))
                }
            }
        }
        #[inline(always)]
        fn load(words: &[u32]) -> Self {
            let w = &words[..8];
            // SAFETY: `w` is 8 readable words (32 bytes); the load is unaligned.
            Avx2(unsafe { _mm256_loadu_si256(w.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [u32]) {
            let w = &mut out[..8];
            // SAFETY: `w` is 8 writable words (32 bytes); the store is unaligned.
            unsafe { _mm256_storeu_si256(w.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16] {
            let blocks: [&[u8; 64]; 8] =
                core::array::from_fn(|i| lanes[i][offset..offset + 64].try_into().unwrap());
            let mut out = [Avx2(blocks_zero()); 16];
            for half in 0..2 {
                // SAFETY: each block is 64 readable bytes and `half * 32 + 32 <= 64`;
                // the loads are unaligned; AVX2 is available (see the type's comment).
                unsafe {
                    let r: [__m256i; 8] = core::array::from_fn(|i| {
                        _mm256_loadu_si256(blocks[i].as_ptr().add(half * 32).cast())
                    });
                    let t: [__m256i; 8] = core::array::from_fn(|j| {
                        let (a, b) = (r[j & !1], r[j | 1]);
                        if j % 2 == 0 {
                            _mm256_unpacklo_epi32(a, b)
                        } else {
                            _mm256_unpackhi_epi32(a, b)
                        }
                    });
                    // u[4k + q]: 128-bit half h holds word 4h + q of lanes 4k..4k+3.
                    let u: [__m256i; 8] = core::array::from_fn(|j| {
                        let (k, q) = (j / 4, j % 4);
                        let (a, b) = (t[4 * k + q / 2], t[4 * k + 2 + q / 2]);
                        if q % 2 == 0 {
                            _mm256_unpacklo_epi64(a, b)
                        } else {
                            _mm256_unpackhi_epi64(a, b)
                        }
                    });
                    for q in 0..4 {
                        out[half * 8 + q] = Avx2(_mm256_permute2x128_si256::<0x20>(u[q], u[4 + q]));
                        out[half * 8 + 4 + q] =
                            Avx2(_mm256_permute2x128_si256::<0x31>(u[q], u[4 + q]));
                    }
                }
            }
            out
        }
    }

    #[inline(always)]
    fn blocks_zero() -> __m256i {
        // SAFETY: AVX2 is available (only called from `load_message`).
        unsafe { _mm256_setzero_si256() }
    }

    #[cfg(test)]
    mod tests {
        use super::super::super::lanes::tests::{check, check_strided};

        #[test]
        fn avx2_lanes_match_scalar() {
            if super::kernel(1).is_none() {
                eprintln!("AVX2 not available: avx2 lane kernel not tested");
                return;
            }
            for g in 1..=3 {
                let k = super::kernel(g).unwrap();
                check(|s, l, n| k.compress(s, l, n), 8, k.lanes, 3, g as u64);
                check_strided(k.strided, 8, k.lanes, 3, 50 + g as u64);
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
