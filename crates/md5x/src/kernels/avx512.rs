//! AVX-512: 16 lanes per `__m512i`; the [`Lane`] primitives for the generic lane
//! algorithm, and the checked entry to the hand-scheduled kernel (`avx512_asm.rs`) that
//! the schedulers use.
//!
//! `vprold` rotates in one instruction, and one `vpternlogd` computes each of F, G, H
//! and `!I` (truth tables in `lanes.rs`, checked there and run through the portable
//! lanes on every machine). Message words: sixteen plain 64-byte loads, transposed in
//! registers (unpacks and 128-bit shuffles), never gathers. Needs AVX512F; the staged
//! loop that Intel's cores run (`avx512_asm.rs`) stores from `xmm20`-`xmm24`, which
//! needs AVX512VL too, so it runs only where the CPU has both.
//!
//! [`Lane`]: super::lanes::Lane

use super::lanes::LaneKernel;

/// The lanes of one group: the 32-bit words of a `zmm` register.
pub(crate) const WIDTH: usize = 16;

/// Interleaved 16-lane groups per call: 3, in the hand-scheduled kernel
/// (`avx512_asm.rs`). Measured with `many_report` (96 messages laid end to end, 64-byte
/// aligned, two runs) on Zen 5 (AMD EPYC family 26 model 2, 2026-11-24): 1, 2 and 3
/// groups run 1.65-1.70, 2.96-3.05 and 3.67-3.87 bytes/cycle at 1 KiB, 1.89-1.97,
/// 3.47-3.69 and 4.62-4.81 at 8 KiB, 1.90-1.96, 3.42-3.51 and 4.01-4.15 at 1 MiB (from
/// memory). The generic kernel it replaced ran 3 groups at 3.16-3.27, 3.01-3.37 and
/// 2.09-2.18 in the same runs. Four groups (tried: 5.4 bytes/cycle at 8 KiB in L2, but
/// no faster from L3 or memory) would need 64 lanes in the schedulers; not shipped.
pub(crate) const GROUPS: usize = 3;

/// Relative throughput of 1, 2 and 3 groups with full lanes (2 groups = 100), from the
/// Zen 5 figures above (1 group 53-56, 3 groups 117-133): what `hash_many` weighs
/// against idle lanes in its last rounds, and so how many groups it runs.
pub(crate) const SPEED: [u32; 3] = [55, 100, 125];

/// The same on Intel's cores, which run 512-bit integer operations on two ports (0 and
/// 5) where Zen 5 has four, at one cycle of latency where Zen 5 takes two: one group
/// comes close to two, and a third adds work to ports that two already keep busy. On
/// an Intel Xeon with AVX-512 (family 6, model 0xA7 as the KVM guest reports it,
/// 2026-11-25; `MD5X_BACKENDS=avx512 MD5X_SIZES=1024,8192,1048576 MD5X_COUNTS=96
/// many_report`, three runs), 1, 2 and 3 groups ran 2.51-2.57, 2.90-2.97 and 2.87-2.94
/// bytes/cycle at 1 KiB, 3.05-3.10, 3.58-3.75 and 3.49-3.59 at 8 KiB, 2.89-2.94,
/// 3.22-3.39 and 3.03-3.12 at 1 MiB; with 192 messages 3 groups lost 3-11% to 2. The
/// staged loop (`avx512_asm.rs`) kept the proportions on an Emerald Rapids guest
/// (2026-11-28, the same command at 8 KiB, best of three runs: 3.89, 4.61 and 4.39).
pub(crate) const SPEED_TWO_PORTS: [u32; 3] = [86, 100, 96];

/// [`SPEED`] or [`SPEED_TWO_PORTS`], whichever describes this CPU.
pub(crate) fn speed() -> [u32; 3] {
    match super::cpu::intel() {
        true => SPEED_TWO_PORTS,
        false => SPEED,
    }
}

/// The AVX-512 lane kernel with `groups` groups of 16 lanes (1 to 3), if this CPU has
/// AVX512F: the hand-scheduled one (`avx512_asm.rs`).
pub(crate) fn kernel(groups: usize) -> Option<LaneKernel> {
    imp::kernel(groups)
}

/// The generic lane algorithm over this file's primitives (1 to 3 groups): what the
/// hand-scheduled kernel replaced, kept to measure it against and tested like it.
pub(crate) fn kernel_generic(groups: usize) -> Option<LaneKernel> {
    imp::kernel_generic(groups)
}

/// The AVX-512 backend's kernel for `n` messages where groups of 4 lanes in `xmm`
/// registers are measured to run them fastest: SSE2's kernel (`sse2_asm.rs`) with
/// AVX-512VL's steps (one `vpternlogd` a round function, `vprold` for the rotation).
/// `None` where the CPU lacks AVX512F or AVX512VL, and for counts where it was not
/// measured faster:
///
/// - Intel's cores: one group for up to four messages (a step's path is 4 one-cycle
///   operations there, so its 4 lanes run at about 4 cycles a step: 1 cycle a byte
///   with four messages, 2 with two).
/// - Zen 4 (AMD family 25, the only AMD family with AVX-512): one group for three or
///   four messages, two groups (8 lanes) for five to eight. Two messages run faster as
///   two integer chains (`many::narrow_for`), nine or more in 16-lane groups.
/// - Other AMD cores: none (on Zen 5 these operations take 2 cycles).
///
/// Measured on an Emerald Rapids guest (2026-11-28, `MD5X_BACKENDS=avx512,sse2
/// MD5X_SIZES=1024,8192,1048576 MD5X_COUNTS=2,3,4 many_report`, this kernel as a row of
/// the same process, two runs), cycles/byte at 1 KiB, 8 KiB and 1 MiB: two messages
/// 2.48-2.63, 2.07-2.11 and 2.00-2.05 against the hybrid two-message kernel's
/// 2.69-2.77, 2.30-2.36 and 2.25-2.30 (it had replaced the integer pair's 2.86-2.96,
/// 2.50-2.58 and 2.45-2.52) and one 16-lane group's 2.68-2.80, 2.11-2.17 and 2.02-2.09;
/// three 1.70-1.72, 1.41 and 1.33-1.36 against the 16-lane group's 1.81-1.88, 1.45-1.47
/// and 1.35-1.39; four 1.30-1.33, 1.04-1.05 and 1.03-1.04 against 1.41-1.44, 1.07-1.11
/// and 1.04-1.05. From six messages on, one 16-lane group is faster (0.76-0.87 against
/// 1.41-1.46 at 8 KiB).
///
/// On Zen 4 (AMD EPYC family 25 model 17, 2026-12-01, `MD5X_BACKENDS=avx512,sse2
/// MD5X_SIZES=64,1024,8192,1048576 MD5X_COUNTS=2,3,4 many_report`, a build with and
/// one without this kernel there, two runs each), cycles/byte at 64 B, 1 KiB, 8 KiB and
/// 1 MiB: three messages 5.05-5.14, 1.96-1.97, 1.75 and 1.72 against the 16-lane
/// group's 7.61-7.94, 2.59-2.68, 2.20-2.29 and 2.16-2.26 (SSE2's 4 lanes: 5.46-5.55,
/// 2.15-2.16, 1.94 and 1.91); four 3.90-3.98, 1.48-1.49, 1.32 and 1.30 against
/// 5.83-6.00, 1.97-2.02, 1.66-1.73 and 1.62-1.72 (SSE2: 4.18-4.28, 1.62-1.63, 1.45 and
/// 1.43); two 2.93, 2.63 (1 and 8 KiB) against the integer pair's 2.63 and 2.37.
/// Two groups (`MD5X_COUNTS=5,8,9,12,13 MD5X_SIZES=64,1024,8192`, two runs each): five
/// messages 4.22-4.23, 1.36 and 1.18 (64 B, 1 KiB, 8 KiB) against the 16-lane group's
/// 4.74-4.75, 1.56-1.61 and 1.33-1.38; eight 2.79-2.80, 0.86 and 0.74 against
/// 3.18-3.19, 0.99-1.03 and 0.83-0.87. Three groups lost to the 16-lane group at
/// nine to twelve (twelve: 2.64-2.65, 0.73 and 0.60 against 2.29, 0.67-0.69 and
/// 0.56-0.58).
pub(crate) fn xmm_lanes(n: usize) -> Option<LaneKernel> {
    imp::xmm_lanes(n)
}

#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
mod imp {
    use super::super::lanes::{
        self, by_groups, ternlog_round_functions, Lane, LaneKernel, StridedFn,
    };
    use super::super::run::{unstaged, BY_LENGTH, STAGED_BY_LENGTH};
    use core::arch::x86_64::*;

    pub(super) fn kernel(groups: usize) -> Option<LaneKernel> {
        // Intel's cores run two 512-bit ports, which the transposition's shuffles
        // share with the steps: there the staged loop, whose 16-byte stores take
        // half of them off those ports, runs long runs. AMD's keep the piped loop:
        // on Zen 4 the staged one (before its 16-byte stores and kept state) ran 8 KiB
        // messages from memory no faster (2.93-3.13 bytes/cycle against 3.22-3.24,
        // `docs/performance.md`).
        // (The staged loop's 16-byte stores need AVX512VL, which the Xeon Phi
        // generations, Knights Landing and Knights Mill, lack: they keep the piped loop.)
        let staged = super::super::cpu::intel() && super::super::x86_64::has_avx512();
        let strided = match staged {
            true => by_groups!(groups, strided_asm, STAGED_BY_LENGTH)?,
            false => by_groups!(groups, strided_asm, BY_LENGTH)?,
        };
        lane_kernel(groups, strided)
    }

    pub(super) fn kernel_generic(groups: usize) -> Option<LaneKernel> {
        lane_kernel(groups, by_groups!(groups, strided)?)
    }

    pub(super) fn xmm_lanes(n: usize) -> Option<LaneKernel> {
        use super::super::sse2::{vl_entry, WIDTH};
        // The groups for `n` messages: on Intel's cores one for every count up to 4
        // (one message goes to the single-stream kernel by `min_live`); on Zen 4 one
        // for 3 or 4, two for 5 to 8. Intel's 5 to 8 stay in a 16-lane group: two
        // `xmm` groups took 1-32% longer there from 1 KiB up (model 0xA7 Xeon,
        // 2026-12-02, `docs/performance.md`).
        let groups = match (
            super::super::cpu::intel(),
            super::super::cpu::amd_family(25),
        ) {
            (true, _) if n <= WIDTH => 1,
            (false, true) if (3..=WIDTH).contains(&n) => 1,
            (false, true) if (WIDTH + 1..=2 * WIDTH).contains(&n) => 2,
            _ => return None,
        };
        if !super::super::x86_64::has_avx512() {
            return None;
        }
        Some(LaneKernel {
            lanes: WIDTH * groups,
            width: WIDTH,
            strided: vl_entry(groups),
            min_live: 2,
        })
    }

    fn lane_kernel(groups: usize, strided: StridedFn) -> Option<LaneKernel> {
        if !crate::Backend::Avx512.is_supported() {
            return None;
        }
        Some(LaneKernel {
            lanes: super::WIDTH * groups,
            width: super::WIDTH,
            strided,
            min_live: 2,
        })
    }

    /// Safe entry to the hand-scheduled kernel with `G` groups (1 to 3): checks
    /// AVX512F (and AVX512VL where `RUN` may pick the staged loop) and the arguments,
    /// then runs it (`RUN`: which loop, see `kernels::run`).
    pub(super) fn strided_asm<const G: usize, const RUN: u8>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        const { assert!(G >= 1 && G <= 3) };
        assert!(
            crate::Backend::Avx512.is_supported(),
            "AVX-512 not available"
        );
        assert!(
            unstaged(RUN) || super::super::x86_64::has_avx512(),
            "AVX512VL not available: the staged loop needs it"
        );
        let ptrs = lanes::checked_pointers::<48>(state, lanes, 16 * G, nblocks, stride);
        // SAFETY: the CPU has AVX512F, and AVX512VL where `RUN` may pick the staged
        // loop; `G` is 1 to 3, `state` is `64 * G` words, and
        // the `16 * G` lanes each hold at least `(nblocks - 1) * stride + 64` bytes (all
        // checked above).
        unsafe {
            super::super::avx512_asm::compress::<G, RUN>(state, &ptrs[..16 * G], nblocks, stride)
        }
    }

    /// Safe entry: checks AVX512F (a cached flag), then runs the kernel
    /// with a stride between a lane's blocks.
    fn strided<const G: usize>(state: &mut [u32], lanes: &[&[u8]], nblocks: usize, stride: usize) {
        assert!(
            crate::Backend::Avx512.is_supported(),
            "AVX-512 not available"
        );
        // SAFETY: the CPU has AVX512F (checked just above), the only requirement of
        // `compress_avx512` beyond its (checked) arguments.
        unsafe { compress_avx512::<G>(state, lanes, nblocks, stride) }
    }

    #[target_feature(enable = "avx512f")]
    fn compress_avx512<const G: usize>(
        state: &mut [u32],
        lanes: &[&[u8]],
        nblocks: usize,
        stride: usize,
    ) {
        lanes::compress_strided::<Avx512, G>(state, lanes, nblocks, stride)
    }

    /// Sixteen lanes. Values of this type exist only inside `compress_avx512`, which runs
    /// only on CPUs with AVX512F: that is what makes the intrinsics below sound.
    #[derive(Clone, Copy)]
    struct Avx512(__m512i);

    impl Avx512 {
        #[inline(always)]
        fn tern<const IMM: i32>(a: Self, b: Self, c: Self) -> Self {
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_ternarylogic_epi32::<IMM>(a.0, b.0, c.0) })
        }
    }

    impl Lane for Avx512 {
        const LANES: usize = 16;
        const OPAQUE_SUM_ALONE: bool = true;
        /// Measured on Zen 5 (`many_report`, 64 messages of 1 MiB from memory, 64-byte
        /// aligned): 1 group 1.72 -> 1.89 bytes/cycle, 3 groups 1.42 -> 2.25 (48 streams
        /// are more than the hardware prefetchers follow); 2 groups lost 3-5%.
        const PREFETCH_AHEAD: [usize; 3] = [4, 0, 4];
        #[inline(always)]
        fn splat(x: u32) -> Self {
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_set1_epi32(x as i32) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_add_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_sub_epi32(self.0, o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_and_si512(self.0, o.0) })
        }
        #[inline(always)]
        fn andnot(self, o: Self) -> Self {
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_andnot_si512(self.0, o.0) })
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_xor_si512(self.0, o.0) })
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            debug_assert_eq!(L + R, 32);
            // SAFETY: AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_rol_epi32::<L>(self.0) })
        }
        #[inline(always)]
        fn prefetch(data: &[u8]) {
            // SAFETY: a prefetch reads nothing the program sees and cannot fault; the
            // address is inside `data`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(data.as_ptr().cast()) }
        }
        #[inline(always)]
        fn load(words: &[u32]) -> Self {
            let w = &words[..16];
            // SAFETY: `w` is 16 readable words (64 bytes); the load is unaligned;
            // AVX512F is available (see the type's comment).
            Avx512(unsafe { _mm512_loadu_si512(w.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [u32]) {
            let w = &mut out[..16];
            // SAFETY: `w` is 16 writable words (64 bytes); the store is unaligned;
            // AVX512F is available (see the type's comment).
            unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16] {
            // Plain loops, no closures: see `lanes::Lane::load_message`.
            let mut blocks: [&[u8; 64]; 16] = [&[0; 64]; 16];
            for i in 0..16 {
                blocks[i] = lanes[i][offset..offset + 64].try_into().unwrap();
            }
            // SAFETY: each block is 64 readable bytes; the loads are unaligned; AVX512F
            // is available (see the type's comment).
            unsafe {
                let zero = _mm512_setzero_si512();
                let mut r = [zero; 16];
                for i in 0..16 {
                    r[i] = _mm512_loadu_si512(blocks[i].as_ptr().cast());
                }
                // t[2p], t[2p + 1]: rows 2p and 2p + 1 interleaved (low and high pairs).
                let mut t = [zero; 16];
                for j in 0..16 {
                    let (a, b) = (r[j & !1], r[j | 1]);
                    t[j] = if j % 2 == 0 {
                        _mm512_unpacklo_epi32(a, b)
                    } else {
                        _mm512_unpackhi_epi32(a, b)
                    };
                }
                // u[4k + q]: 128-bit chunk c holds word 4c + q of lanes 4k..4k+3.
                let mut u = [zero; 16];
                for (j, uj) in u.iter_mut().enumerate() {
                    let (k, q) = (j / 4, j % 4);
                    let (a, b) = (t[4 * k + q / 2], t[4 * k + 2 + q / 2]);
                    *uj = if q % 2 == 0 {
                        _mm512_unpacklo_epi64(a, b)
                    } else {
                        _mm512_unpackhi_epi64(a, b)
                    };
                }
                // A 4x4 transpose of 128-bit chunks across u[q], u[4 + q], u[8 + q],
                // u[12 + q] gives words q, 4 + q, 8 + q, 12 + q of all 16 lanes.
                let mut out = [Avx512(zero); 16];
                for q in 0..4 {
                    let v0 = _mm512_shuffle_i32x4::<0x44>(u[q], u[4 + q]);
                    let v1 = _mm512_shuffle_i32x4::<0xEE>(u[q], u[4 + q]);
                    let v2 = _mm512_shuffle_i32x4::<0x44>(u[8 + q], u[12 + q]);
                    let v3 = _mm512_shuffle_i32x4::<0xEE>(u[8 + q], u[12 + q]);
                    out[q] = Avx512(_mm512_shuffle_i32x4::<0x88>(v0, v2));
                    out[4 + q] = Avx512(_mm512_shuffle_i32x4::<0xDD>(v0, v2));
                    out[8 + q] = Avx512(_mm512_shuffle_i32x4::<0x88>(v1, v3));
                    out[12 + q] = Avx512(_mm512_shuffle_i32x4::<0xDD>(v1, v3));
                }
                out
            }
        }
        ternlog_round_functions!();
    }

    #[cfg(test)]
    mod tests {
        use super::super::super::lanes::by_groups;
        use super::super::super::lanes::tests::{
            check_kernel, check_no_overread, check_refuses_bad_arguments, check_upper_halves_clean,
            check_variants,
        };
        use super::super::super::run::{BY_LENGTH, DIRECT, PIPED, STAGED};
        use super::{strided, strided_asm};

        #[test]
        fn avx512_lanes_match_scalar() {
            if super::kernel(1).is_none() {
                eprintln!("AVX-512 not available: avx512 lane kernels not tested");
                return;
            }
            for g in 1..=3 {
                for k in [super::kernel(g).unwrap(), super::kernel_generic(g).unwrap()] {
                    check_kernel(k, 20 + g as u64);
                }
                // The hand-scheduled kernel's direct, piped and staged loops each at
                // every length, not only where `PIPED_FROM` sends them.
                let mut variants = std::vec![
                    by_groups!(g, strided).unwrap(),
                    by_groups!(g, strided_asm, BY_LENGTH).unwrap(),
                    by_groups!(g, strided_asm, DIRECT).unwrap(),
                    by_groups!(g, strided_asm, PIPED).unwrap(),
                ];
                if staged_runs() {
                    variants.push(by_groups!(g, strided_asm, STAGED).unwrap());
                }
                check_variants(&variants, 16, g, 200);
            }
        }

        #[test]
        fn kernels_read_nothing_past_their_lanes() {
            if super::kernel(1).is_none() {
                eprintln!("AVX-512 not available: avx512 lane kernels not tested");
                return;
            }
            for g in 1..=3 {
                check_no_overread(by_groups!(g, strided).unwrap(), 16, g);
                check_no_overread(by_groups!(g, strided_asm, DIRECT).unwrap(), 16, g);
                check_no_overread(by_groups!(g, strided_asm, PIPED).unwrap(), 16, g);
                if staged_runs() {
                    check_no_overread(by_groups!(g, strided_asm, STAGED).unwrap(), 16, g);
                }
            }
        }

        #[test]
        fn asm_kernel_leaves_the_upper_halves_clean() {
            if super::kernel(1).is_none() {
                eprintln!("AVX-512 not available: avx512 lane kernels not tested");
                return;
            }
            let direct = [1, 2, 3].map(|g| by_groups!(g, strided_asm, DIRECT).unwrap());
            check_upper_halves_clean(&direct, 16);
            let piped = [1, 2, 3].map(|g| by_groups!(g, strided_asm, PIPED).unwrap());
            check_upper_halves_clean(&piped, 16);
            if staged_runs() {
                let staged = [1, 2, 3].map(|g| by_groups!(g, strided_asm, STAGED).unwrap());
                check_upper_halves_clean(&staged, 16);
            }
        }

        #[test]
        fn asm_kernel_checks_its_arguments() {
            if super::kernel(1).is_none() {
                eprintln!("AVX-512 not available: avx512 lane kernels not tested");
                return;
            }
            check_refuses_bad_arguments(strided_asm::<3, DIRECT>, 16);
            check_refuses_bad_arguments(strided_asm::<3, PIPED>, 16);
            if staged_runs() {
                check_refuses_bad_arguments(strided_asm::<3, STAGED>, 16);
            }
        }

        /// Whether the staged loop can run here (it needs AVX512VL too); says so if not.
        fn staged_runs() -> bool {
            let vl = super::super::super::x86_64::has_avx512();
            if !vl {
                eprintln!("AVX512VL not available: the avx512 staged loop not tested");
            }
            vl
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64", not(miri))))]
mod imp {
    use super::super::lanes::LaneKernel;
    pub(super) fn kernel(_groups: usize) -> Option<LaneKernel> {
        None
    }
    pub(super) fn xmm_lanes(_n: usize) -> Option<LaneKernel> {
        None
    }
    pub(super) fn kernel_generic(_groups: usize) -> Option<LaneKernel> {
        None
    }
}
