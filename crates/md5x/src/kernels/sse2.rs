//! SSE2: 4 lanes per `__m128i`, on every x86-64 CPU: the [`Lane`] primitives of the
//! generic lane algorithm, and the entry to the hand-scheduled kernel (`sse2_asm.rs`),
//! which is the default. On Zen 4 (AMD EPYC family 25 model 17, 2026-11-25,
//! `MD5X_BACKENDS=sse2 many_report`, 3 groups, bytes/cycle) it ran 1.36 at 8 KiB
//! against the generic kernel's 1.20, 1.27-1.28 at 1 MiB against 1.14-1.18, 1.12-1.13
//! at 1 KiB against 1.04-1.05 (96 messages end to end), and from memory 1.21 against
//! 1.07 at 8 KiB, 1.24-1.27 against 1.12 at 1 MiB; 64-byte messages 0.44 against 0.34.
//!
//! Rotations are two shifts and an OR, except by 16: two word shuffles (`pshuflw`,
//! `pshufhw`; SSE2 has no byte shuffle). Message words: four plain 16-byte loads per
//! quarter block, transposed in registers with unpacks.
//!
//! [`Lane`]: super::lanes::Lane

use super::lanes::LaneKernel;

/// The lanes of one group: the 32-bit words of an `xmm` register.
pub(crate) const WIDTH: usize = 4;

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

/// The SSE2 lane kernel with `groups` groups of 4 lanes (1 to 3), on x86-64: the
/// hand-scheduled one (`sse2_asm.rs`).
pub(crate) fn kernel(groups: usize) -> Option<LaneKernel> {
    imp::kernel(groups)
}

/// The generic lane algorithm over this file's primitives (1 to 3 groups): what the
/// hand-scheduled kernel replaced, kept to measure it against and tested like it.
pub(crate) fn kernel_generic(groups: usize) -> Option<LaneKernel> {
    imp::kernel_generic(groups)
}

/// The hand-scheduled kernel with AVX-512VL's steps (`sse2_asm.rs`), `groups` (1 or 2)
/// groups of 4 lanes: the entry of `avx512::xmm_lanes`, which decides where it runs.
/// The entry panics where the CPU lacks AVX512F or AVX512VL.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
pub(crate) fn vl_entry(groups: usize) -> super::lanes::StridedFn {
    imp::vl_entry(groups)
}

#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
mod imp {
    use super::super::lanes::{self, by_groups, Lane, LaneKernel, StridedFn};
    use super::super::run::BY_LENGTH;
    use core::arch::x86_64::*;

    pub(super) fn kernel(groups: usize) -> Option<LaneKernel> {
        Some(lane_kernel(
            groups,
            match prefetch_pays() {
                true => by_groups!(groups, strided_asm, true, BY_LENGTH)?,
                false => by_groups!(groups, strided_asm, false, BY_LENGTH)?,
            },
        ))
    }

    /// Whether the hand-scheduled kernel should prefetch the lanes' data: on Intel's
    /// cores, where it was measured to pay a little from memory. Not on AMD's: there
    /// the generic SSE2 kernel saw no change with a prefetch (see
    /// `Lane::PREFETCH_AHEAD`), and neither did this kernel on Zen 3 (below), where it
    /// still runs the AVX2 backend's jobs of 3 or 4 messages.
    ///
    /// Zen 3 (family 25 model 1, a KVM guest), 2026-11-30, `many_report` with a
    /// temporary switch, three alternating pairs, cycles/byte, without -> with: SSE2
    /// forced, from memory, 3 groups (and the `default` row), 131,072 x 1 KiB
    /// 1.19-1.32 -> 1.16-1.18 (1.21-1.24 -> 1.20-1.21), 16,384 x 8 KiB 0.90-0.93 ->
    /// 0.90-0.92 (0.89-0.93 -> 0.91-1.02), 128 x 1 MiB 0.85-0.88 -> 0.92 (0.84-0.88 ->
    /// 0.84-1.03); the AVX2 backend's one SSE2 group on 3 and 4 messages of 32 MiB
    /// 2.20-2.21 and 1.64-1.65 -> 2.19-2.20 and 1.64-1.66, on 4 in cache level.
    ///
    /// Emerald Rapids (a KVM guest, SSE2 forced), 2026-11-28, `many_report` with
    /// 3 groups with and without the prefetch as rows of one process (interleaved, so
    /// this noisy guest's swings hit both alike), bytes/cycle, without -> with, five
    /// passes (some disturbed, hence the spans): from memory, 393,216 x 1 KiB
    /// 0.59-0.87 -> 0.62-0.95 (5-20% a pass), 40,000 x 8 KiB 0.69-1.12 -> 0.72-1.16
    /// (0-8%), the same 3000 bytes apart (off a line's start) 0.86-1.08 -> 0.88-1.17
    /// (2-10%), 384 x 1 MiB level (-8% to +6%, one disturbed pass aside); in cache
    /// (96 x 1 KiB, 96 x 8 KiB) level.
    pub(super) fn prefetch_pays() -> bool {
        super::super::cpu::intel()
    }

    pub(super) fn kernel_generic(groups: usize) -> Option<LaneKernel> {
        Some(lane_kernel(groups, by_groups!(groups, strided)?))
    }

    fn lane_kernel(groups: usize, strided: StridedFn) -> LaneKernel {
        LaneKernel {
            lanes: super::WIDTH * groups,
            width: super::WIDTH,
            strided,
            min_live: 2,
        }
    }

    /// Safe entry to the hand-scheduled kernel with `G` groups (1 to 3): checks the
    /// arguments, then runs it (`RUN`: which loop, see `kernels::run`).
    pub(super) fn strided_asm<const G: usize, const PREFETCH: bool, const RUN: u8>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        entry::<G, PREFETCH, RUN, false>(state, lanes, nblocks, stride)
    }

    /// The same kernel with AVX-512VL's steps (see [`super::vl_entry`]), prefetching as
    /// on Intel's cores.
    pub(super) fn strided_vl<const G: usize, const RUN: u8>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        entry::<G, true, RUN, true>(state, lanes, nblocks, stride)
    }

    pub(super) fn vl_entry(groups: usize) -> StridedFn {
        match groups {
            1 => strided_vl::<1, BY_LENGTH>,
            _ => strided_vl::<2, BY_LENGTH>,
        }
    }

    /// Both entries: checks the arguments and, for AVX-512VL's steps (`VL`), AVX512F
    /// and AVX512VL, then runs the kernel.
    fn entry<const G: usize, const PREFETCH: bool, const RUN: u8, const VL: bool>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        const { assert!(G >= 1 && G <= 3) };
        assert!(
            !VL || super::super::x86_64::has_avx512(),
            "AVX512F and AVX512VL not available"
        );
        let ptrs = lanes::checked_pointers::<12>(state, lanes, 4 * G, nblocks, stride);
        // SAFETY: `G` is 1 to 3, `state` is `16 * G` words, and the `4 * G` lanes each
        // hold at least `(nblocks - 1) * stride + 64` bytes (all checked above); SSE2 is
        // part of x86-64, and with `VL` the CPU has AVX512F and AVX512VL (asserted above).
        unsafe {
            super::super::sse2_asm::compress::<G, PREFETCH, RUN, VL>(
                state,
                &ptrs[..4 * G],
                nblocks,
                stride,
            )
        }
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
            // Plain loops, no closures: see `lanes::Lane::load_message`.
            let mut blocks: [&[u8; 64]; 4] = [&[0; 64]; 4];
            for i in 0..4 {
                blocks[i] = lanes[i][offset..offset + 64].try_into().unwrap();
            }
            // SAFETY: SSE2 is part of the x86-64 baseline; each block is 64 readable
            // bytes and `16 * quarter + 16 <= 64`; the loads are unaligned.
            unsafe {
                let mut out = [Sse2(_mm_setzero_si128()); 16];
                for quarter in 0..4 {
                    let mut r = [_mm_setzero_si128(); 4];
                    for i in 0..4 {
                        r[i] = _mm_loadu_si128(blocks[i].as_ptr().add(16 * quarter).cast());
                    }
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
        use super::super::super::lanes::by_groups;
        use super::super::super::lanes::tests::{
            check, check_kernel, check_no_overread, check_refuses_bad_arguments, check_strided,
            check_upper_halves_clean, check_variants, prefetch_run_variants,
        };
        use super::super::super::run::{BY_LENGTH, DIRECT, PIPED};
        use super::{strided, strided_asm, strided_vl};

        #[test]
        fn sse2_lanes_match_scalar() {
            for g in 1..=3 {
                for k in [super::kernel(g).unwrap(), super::kernel_generic(g).unwrap()] {
                    check_kernel(k, 10 + g as u64);
                }
                // Every variant, whichever this CPU picks: the hand-scheduled kernel
                // with the prefetch and without, its direct and piped loops each at
                // every length (not only where `PIPED_FROM` sends them).
                let mut variants = vec![by_groups!(g, strided).unwrap()];
                variants.extend(prefetch_run_variants!(g, strided_asm));
                check_variants(&variants, 4, g, 300);
            }
            std::eprintln!("sse2 lanes: prefetch {}", super::prefetch_pays());
        }

        #[test]
        fn kernels_read_nothing_past_their_lanes() {
            for g in 1..=3 {
                check_no_overread(by_groups!(g, strided).unwrap(), 4, g);
                for entry in [
                    by_groups!(g, strided_asm, false, DIRECT).unwrap(),
                    by_groups!(g, strided_asm, true, DIRECT).unwrap(),
                    by_groups!(g, strided_asm, false, PIPED).unwrap(),
                    by_groups!(g, strided_asm, true, PIPED).unwrap(),
                ] {
                    check_no_overread(entry, 4, g);
                }
            }
        }

        #[test]
        fn asm_kernel_checks_its_arguments() {
            check_refuses_bad_arguments(strided_asm::<3, false, DIRECT>, 4);
            check_refuses_bad_arguments(strided_asm::<3, false, PIPED>, 4);
        }

        /// The kernel with AVX-512VL's steps (`avx512::xmm_lanes` runs it on Intel's
        /// cores and Zen 4), wherever the CPU has AVX512F and AVX512VL: every loop and group
        /// count, as the SSE2 steps are tested above.
        #[test]
        fn vl_steps_match_scalar() {
            if !super::super::super::x86_64::has_avx512() {
                eprintln!("AVX512VL not available: SSE2's kernel with AVX-512VL steps not tested");
                return;
            }
            for g in 1..=2 {
                let k = super::lane_kernel(g, super::vl_entry(g));
                check(|s, l, n| k.compress(s, l, n), 4, k.lanes, 3, 90 + g as u64);
            }
            for g in 1..=3 {
                let variants = [
                    by_groups!(g, strided_vl, BY_LENGTH).unwrap(),
                    by_groups!(g, strided_vl, DIRECT).unwrap(),
                    by_groups!(g, strided_vl, PIPED).unwrap(),
                ];
                check_strided(variants[0], 4, 4 * g, 3, 95 + g as u64);
                check_variants(&variants, 4, g, 400);
                for v in variants {
                    check_no_overread(v, 4, g);
                }
            }
            let direct = [1, 2, 3].map(|g| by_groups!(g, strided_vl, DIRECT).unwrap());
            check_upper_halves_clean(&direct, 4);
            check_refuses_bad_arguments(strided_vl::<3, DIRECT>, 4);
            check_refuses_bad_arguments(strided_vl::<3, PIPED>, 4);
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
}
