//! AVX2: 8 lanes per `__m256i`; only the [`Lane`] primitives live here.
//!
//! Rotations are two shifts and an OR (AVX2 has no rotate), except by 16: one byte
//! shuffle. Message words: eight plain 32-byte loads per half block, transposed in
//! registers (unpacks and a 128-bit permute), never gathers.

use super::lanes::LaneKernel;

/// The lanes of one group: the 32-bit words of a `ymm` register.
pub(crate) const WIDTH: usize = 8;

/// Interleaved 8-lane groups per call when the lanes can be filled: 3. Measured with
/// `many_report` on Zen 4: 1 group is latency-bound (0.78 cycles/byte), 2 and 3 tie at
/// 8 KiB (0.59), 3 wins at 1 KiB. On Zen 5 (AMD EPYC family 26, 2026-11-23, 48
/// messages), 3 wins at every size: 1.55, 0.79 and 0.61 cycles/byte at 8 KiB, 1.56,
/// 0.86 and 0.67 at 1 MiB. On Zen 3 (AMD EPYC family 25, 2026-11-23), 2 and 3 tie:
/// 1.17, 1.95 and 1.93 bytes/cycle at 8 KiB with 48 messages (3 groups 2.03 with 24),
/// 1.17, 1.79 and 1.70 at 1 MiB; issue 4 expected about 1.3, 2.4 and 2.8-3.0 there.
/// Three groups' state (12 registers) leaves 4 of the 16 for temporaries, so LLVM
/// spills in round 1. `docs/bench/step_probe.c` puts the step itself at about 2.9
/// bytes/cycle with 3 groups on Zen 3, and at 2.14 when `F` is added before
/// `a + m + K` (an order LLVM emits for some steps); yet on the kernel, forcing the
/// sum first with an empty `asm!` barrier, rolling each round into a loop, removing
/// round 1's spills and a pre-splatted constant table all measured level
/// (`docs/performance.md`, Zen 3). The groups now run the hand-scheduled kernel in
/// `avx2_asm.rs`: 3-11% faster than the generic one on Zen 1; on Zen 4, where its
/// piped loop (a block's loads spread over the previous block's steps) first ran,
/// 2.40-2.46 bytes/cycle against 1.94-2.06 at 8 KiB, 2.36-2.40 against 1.84-1.85 at
/// 1 MiB (96 messages end to end, 3 groups). On Zen 1 (family 23, 8 KiB messages, as many
/// as the lanes): 0.89, 1.19 and 1.21 bytes/cycle. With fewer messages, `hash_many`
/// picks fewer groups.
pub(crate) const GROUPS: usize = 3;

/// Relative throughput of 1, 2 and 3 groups with full lanes (2 groups = 100), from the
/// Zen 5 figures above: what `hash_many` weighs against idle lanes in its last rounds.
pub(crate) const SPEED: [u32; 3] = [50, 100, 128];

/// The same on CPUs that run 256-bit operations as two 128-bit halves (Zen and Zen+):
/// one group is no longer bound by latency alone, so it comes much closer to two. From
/// the Zen 1 figures above (0.89, 1.19 and 1.21 bytes/cycle at 8 KiB).
pub(crate) const SPEED_HALF_WIDTH: [u32; 3] = [75, 100, 102];

/// [`SPEED`] or [`SPEED_HALF_WIDTH`], whichever describes this CPU.
pub(crate) fn speed() -> [u32; 3] {
    match imp::half_width() {
        true => SPEED_HALF_WIDTH,
        false => SPEED,
    }
}

/// Relative throughput of 1, 2 and 3 groups (2 groups = 100) on Zen 3 for short
/// messages, where 2 groups beat 3. Zen 3 (family 25 model 1), 2026-11-30,
/// `MD5X_BACKENDS=avx2 MD5X_SIZES=64,128,256 MD5X_COUNTS=48,2097152 many_report`,
/// cycles/byte: 64 bytes, 48 messages, 2.47, 1.83 and 2.01-2.05 (74 : 100 : 90);
/// from memory 2.38, 1.71 and 1.73-1.75; 128 bytes 1.38 against 1.47-1.53, from memory
/// 1.33 against 1.40; 256 bytes 0.95 against 0.98-1.00, from memory 1.03 against
/// 1.07-1.10. They tie at 512 bytes (0.74 against 0.71, 0.93 against 0.91), and 3
/// groups win by 5-10% from 1 KiB (`docs/performance.md`, "two groups for short
/// messages on Zen 3").
pub(crate) const SPEED_SHORT_ZEN3: [u32; 3] = [74, 100, 93];

/// Below this mean message length in bytes (8 blocks), [`speed_for_mean`] gives
/// [`SPEED_SHORT_ZEN3`] on Zen 3.
pub(crate) const SHORT_MEAN: u64 = 512;

/// The group speeds for a job whose messages average `mean(SHORT_MEAN)` bytes (a mean
/// that need only be exact below its argument): [`speed`], except for short messages on
/// Zen 3 (the CPUs of `short_runs_generic`), where [`SPEED_SHORT_ZEN3`]. No other CPU
/// has been measured this way, so only Zen 3 calls `mean` (a pass over the job's
/// lengths).
pub(crate) fn speed_for_mean(mean: impl FnOnce(u64) -> u64) -> [u32; 3] {
    match imp::short_runs_generic() && mean(SHORT_MEAN) < SHORT_MEAN {
        true => SPEED_SHORT_ZEN3,
        false => speed(),
    }
}

/// The AVX2 lane kernel with `groups` groups of 8 lanes (1 to 3), if this CPU has AVX2:
/// the hand-scheduled one (`avx2_asm.rs`).
pub(crate) fn kernel(groups: usize) -> Option<LaneKernel> {
    imp::kernel(groups)
}

/// The generic lane algorithm over this file's primitives (1 to 3 groups): what the
/// hand-scheduled kernel replaced, kept to measure it against and tested like it.
pub(crate) fn kernel_generic(groups: usize) -> Option<LaneKernel> {
    imp::kernel_generic(groups)
}

#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
mod imp {
    use super::super::lanes::{self, by_groups, Lane, LaneKernel, StridedFn};
    use super::super::run::BY_LENGTH;
    use core::arch::x86_64::*;

    pub(super) fn kernel(groups: usize) -> Option<LaneKernel> {
        lane_kernel(
            groups,
            match (short_runs_generic(), prefetch_pays()) {
                // Zen 3 is AMD family 25, where the prefetch pays.
                (true, _) => by_groups!(groups, strided_by_run, true)?,
                (false, true) => by_groups!(groups, strided_asm, true, BY_LENGTH)?,
                (false, false) => by_groups!(groups, strided_asm, false, BY_LENGTH)?,
            },
        )
    }

    pub(super) fn kernel_generic(groups: usize) -> Option<LaneKernel> {
        lane_kernel(
            groups,
            match prefetch_pays() {
                true => by_groups!(groups, strided, true)?,
                false => by_groups!(groups, strided, false)?,
            },
        )
    }

    fn lane_kernel(groups: usize, strided: StridedFn) -> Option<LaneKernel> {
        if !crate::Backend::Avx2.is_supported() {
            return None;
        }
        Some(LaneKernel {
            lanes: super::WIDTH * groups,
            width: super::WIDTH,
            strided,
            min_live: 2,
        })
    }

    /// Whether the lanes' data should be prefetched (see `Lane::PREFETCH_AHEAD`): on
    /// AMD family 25 (Zen 3 and Zen 4) and on Intel's cores, where it was measured to
    /// pay; not elsewhere (on Zen 5 it cost 18% at 1 MiB, on Zen 1 it gained nothing).
    ///
    /// Zen 3, 2026-11-23, `peer_bench 0 0 128 1` (128 MiB of messages from memory,
    /// one core), median of 5 alternating runs without and with: 1248 -> 1338 MB/s at
    /// 64 B, 2676 -> 3559 at 1 KiB, 4146 -> 4982 at 8 KiB, 3253 -> 4617 at 1 MiB.
    ///
    /// Emerald Rapids (a KVM guest, AVX2 forced), 2026-11-28, `MD5X_BACKENDS=avx2
    /// many_report`, `default` row, bytes/cycle, without -> with, three alternating
    /// pairs: from memory (40,000 x 8 KiB) 1.63-1.69 -> 1.84-2.13, the same 3000 bytes
    /// apart (off a line's start) 1.30-1.40 -> 1.75-1.99, 393,216 x 1 KiB 1.16-1.20 ->
    /// 1.47-1.55, 384 x 1 MiB 1.87-1.94 -> 2.01-2.28; in cache, 96 x 8 KiB 1.53-1.74 ->
    /// 2.02-2.18, 96 x 1 KiB level (1.30-1.88 and 1.43-1.84).
    pub(super) fn prefetch_pays() -> bool {
        let cpu = super::super::cpu::amd_family_model();
        matches!(cpu, Some((0x19, _))) || super::super::cpu::intel()
    }

    /// Whether runs shorter than [`GENERIC_BELOW`] blocks should take the generic kernel
    /// rather than the hand-scheduled one ([`strided_by_run`]): on Zen 3 (AMD family 25,
    /// models 0x00-0x0f and 0x20-0x5f; Zen 4 shares the family, not the models), where
    /// the generic kernel ran short runs faster from memory and level in cache.
    ///
    /// Zen 3 (family 25 model 1), 2026-11-25, `MD5X_BACKENDS=avx2 many_report`, 3
    /// groups, bytes/cycle, hand-scheduled against generic, 128 MiB of messages (from
    /// memory) and 48 messages (in cache), two or three alternating runs: 512-byte
    /// messages (runs of 8 blocks) 1.01-1.06 against 1.09-1.12 and 1.46-1.48 against
    /// 1.50; 1 KiB (16) 1.21-1.26 against 1.29-1.38 and level (1.85-1.90); 1280 bytes
    /// (20) 1.32-1.38 against 1.44-1.46 and 1.99-2.13 against 1.97-2.05; 1536 bytes (24)
    /// 1.45 against 1.47-1.51 and 2.08-2.12 against 2.01-2.04; 2 KiB (32) 1.71-1.79
    /// against 1.40-1.42 and 2.15-2.26 against 1.99-2.07. `hash_many` with this rule
    /// against without (the default row, from memory): 1 KiB 1.16-1.20 -> 1.25-1.27
    /// bytes/cycle, 512 bytes 1.00-1.03 -> 1.03-1.06, 64 bytes level.
    pub(super) fn short_runs_generic() -> bool {
        matches!(super::super::cpu::amd_family_model(),
            Some((0x19, model)) if model < 0x10 || (0x20..0x60).contains(&model))
    }

    /// See [`short_runs_generic`]: at 24 blocks the two kernels trade places (3%
    /// either way, in cache or from memory).
    pub(super) const GENERIC_BELOW: usize = 24;

    /// Runs shorter than [`GENERIC_BELOW`] blocks through the generic kernel, longer
    /// ones through the hand-scheduled one (which picks its loop by length): where
    /// [`short_runs_generic`].
    pub(super) fn strided_by_run<const G: usize, const PREFETCH: bool>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        if nblocks < GENERIC_BELOW {
            strided::<G, PREFETCH>(state, lanes, nblocks, stride)
        } else {
            strided_asm::<G, PREFETCH, BY_LENGTH>(state, lanes, nblocks, stride)
        }
    }

    /// Whether this CPU splits 256-bit operations into two 128-bit micro-ops: AMD
    /// family 23 (0x17) below model 0x30, that is Zen and Zen+ (Zen 2 has full-width
    /// units). `docs/bench/step_probe.c` measured 1.44 `vpaddd ymm` a cycle on Zen 1,
    /// against 3.99 on Zen 3.
    pub(super) fn half_width() -> bool {
        matches!(super::super::cpu::amd_family_model(), Some((0x17, model)) if model < 0x30)
    }

    /// Safe entry to the hand-scheduled kernel with `G` groups (1 to 3): checks AVX2
    /// and the arguments, then runs it (`RUN`: which loop, see `kernels::run`).
    pub(super) fn strided_asm<const G: usize, const PREFETCH: bool, const RUN: u8>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        const { assert!(G >= 1 && G <= 3) };
        assert!(crate::Backend::Avx2.is_supported(), "AVX2 not available");
        let ptrs = lanes::checked_pointers::<24>(state, lanes, 8 * G, nblocks, stride);
        // SAFETY: the CPU has AVX2, `G` is 1 to 3, `state` is `32 * G` words, and the
        // `8 * G` lanes each hold at least `(nblocks - 1) * stride + 64` bytes (all
        // checked above).
        unsafe {
            super::super::avx2_asm::compress::<G, PREFETCH, RUN>(
                state,
                &ptrs[..8 * G],
                nblocks,
                stride,
            )
        }
    }

    /// Safe entry: checks AVX2 (a cached flag), then runs the kernel with a stride
    /// between a lane's blocks; with `PREFETCH`, each lane's data is prefetched 4
    /// blocks ahead.
    pub(super) fn strided<const G: usize, const PREFETCH: bool>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        assert!(crate::Backend::Avx2.is_supported(), "AVX2 not available");
        // SAFETY: the CPU has AVX2 (checked just above), the only requirement of
        // `compress_avx2` beyond its (checked) arguments.
        unsafe { compress_avx2::<G, PREFETCH>(state, lanes, nblocks, stride) }
    }

    #[target_feature(enable = "avx2")]
    fn compress_avx2<const G: usize, const PREFETCH: bool>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        lanes::compress_strided::<Avx2<PREFETCH>, G>(state, lanes, nblocks, stride)
    }

    /// Eight lanes; with `PREFETCH`, each lane's data is prefetched 4 blocks ahead.
    /// Values of this type exist only inside `compress_avx2`, which runs only on CPUs
    /// with AVX2: that is what makes the intrinsics below sound.
    #[derive(Clone, Copy)]
    struct Avx2<const PREFETCH: bool>(__m256i);

    impl<const PREFETCH: bool> Lane for Avx2<PREFETCH> {
        const LANES: usize = 8;
        const PREFETCH_AHEAD: [usize; 3] = if PREFETCH { [4; 3] } else { [0; 3] };
        #[inline(always)]
        fn prefetch(data: &[u8]) {
            // SAFETY: a prefetch reads nothing the program sees and cannot fault; the
            // address is inside `data`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(data.as_ptr().cast()) }
        }
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
            // Plain loops, no closures: see `lanes::Lane::load_message`.
            let mut blocks: [&[u8; 64]; 8] = [&[0; 64]; 8];
            for i in 0..8 {
                blocks[i] = lanes[i][offset..offset + 64].try_into().unwrap();
            }
            let mut out = [Avx2(blocks_zero()); 16];
            for half in 0..2 {
                // SAFETY: each block is 64 readable bytes and `half * 32 + 32 <= 64`;
                // the loads are unaligned; AVX2 is available (see the type's comment).
                unsafe {
                    let mut r = [blocks_zero(); 8];
                    for i in 0..8 {
                        r[i] = _mm256_loadu_si256(blocks[i].as_ptr().add(half * 32).cast());
                    }
                    let mut t = [blocks_zero(); 8];
                    for j in 0..8 {
                        let (a, b) = (r[j & !1], r[j | 1]);
                        t[j] = if j % 2 == 0 {
                            _mm256_unpacklo_epi32(a, b)
                        } else {
                            _mm256_unpackhi_epi32(a, b)
                        };
                    }
                    // u[4k + q]: 128-bit half h holds word 4h + q of lanes 4k..4k+3.
                    let mut u = [blocks_zero(); 8];
                    for (j, uj) in u.iter_mut().enumerate() {
                        let (k, q) = (j / 4, j % 4);
                        let (a, b) = (t[4 * k + q / 2], t[4 * k + 2 + q / 2]);
                        *uj = if q % 2 == 0 {
                            _mm256_unpacklo_epi64(a, b)
                        } else {
                            _mm256_unpackhi_epi64(a, b)
                        };
                    }
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
        use super::super::super::lanes::by_groups;
        use super::super::super::lanes::tests::{
            check, check_kernel, check_no_overread, check_refuses_bad_arguments,
            check_upper_halves_clean, check_variants, prefetch_run_variants,
        };
        use super::super::super::run::{DIRECT, PIPED};
        use super::{strided, strided_asm, strided_by_run, GENERIC_BELOW};

        #[test]
        fn avx2_lanes_match_scalar() {
            if super::kernel(1).is_none() {
                eprintln!("AVX2 not available: avx2 lane kernels not tested");
                return;
            }
            for g in 1..=3 {
                for k in [super::kernel(g).unwrap(), super::kernel_generic(g).unwrap()] {
                    check_kernel(k, g as u64);
                }
            }
            // Every variant, whichever this CPU picks: with the prefetch and without;
            // generic and hand-scheduled, the latter's direct and piped loops each at
            // every length (not only where `PIPED_FROM` sends them).
            for g in 1..=3 {
                let mut variants = vec![
                    by_groups!(g, strided, false).unwrap(),
                    by_groups!(g, strided, true).unwrap(),
                ];
                variants.extend(prefetch_run_variants!(g, strided_asm));
                variants.extend([
                    by_groups!(g, strided_by_run, false).unwrap(),
                    by_groups!(g, strided_by_run, true).unwrap(),
                ]);
                check_variants(&variants, 8, g, 100);
                // Both sides of the split by run length.
                let by_run = by_groups!(g, strided_by_run, true).unwrap();
                for n in [GENERIC_BELOW - 1, GENERIC_BELOW, GENERIC_BELOW + 1] {
                    check(|s, l, nb| by_run(s, l, nb, 64), 8, 8 * g, n, 200 + n as u64);
                }
            }
            std::eprintln!(
                "avx2 lanes: prefetch {}, half-width units {}, short runs generic {}",
                super::prefetch_pays(),
                super::half_width(),
                super::short_runs_generic()
            );
        }

        #[test]
        fn kernels_read_nothing_past_their_lanes() {
            if super::kernel(1).is_none() {
                eprintln!("AVX2 not available: avx2 lane kernels not tested");
                return;
            }
            for g in 1..=3 {
                for entry in [
                    by_groups!(g, strided, true).unwrap(),
                    by_groups!(g, strided_asm, true, DIRECT).unwrap(),
                    by_groups!(g, strided_asm, true, PIPED).unwrap(),
                    by_groups!(g, strided_asm, false, PIPED).unwrap(),
                ] {
                    check_no_overread(entry, 8, g);
                }
            }
        }

        #[test]
        fn asm_kernel_leaves_the_upper_halves_clean() {
            if super::kernel(1).is_none() {
                eprintln!("AVX2 not available: avx2 lane kernels not tested");
                return;
            }
            let direct = [1, 2, 3].map(|g| by_groups!(g, strided_asm, false, DIRECT).unwrap());
            check_upper_halves_clean(&direct, 8);
            let piped = [1, 2, 3].map(|g| by_groups!(g, strided_asm, false, PIPED).unwrap());
            check_upper_halves_clean(&piped, 8);
        }

        #[test]
        fn asm_kernel_checks_its_arguments() {
            if super::kernel(1).is_none() {
                eprintln!("AVX2 not available: avx2 lane kernels not tested");
                return;
            }
            check_refuses_bad_arguments(strided_asm::<3, false, DIRECT>, 8);
            check_refuses_bad_arguments(strided_asm::<3, false, PIPED>, 8);
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64", not(miri))))]
mod imp {
    use super::super::lanes::LaneKernel;
    pub(super) fn kernel(_groups: usize) -> Option<LaneKernel> {
        None
    }
    pub(super) fn kernel_generic(_groups: usize) -> Option<LaneKernel> {
        None
    }
    pub(super) fn half_width() -> bool {
        false
    }
    pub(super) fn short_runs_generic() -> bool {
        false
    }
}
