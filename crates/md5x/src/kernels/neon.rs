//! NEON (aarch64): 4 lanes per `uint32x4_t`; only the [`Lane`] primitives live here.
//!
//! Rotations are a shift and a shift-insert (`shl` + `sri`), by 16 a half-word reverse
//! (`rev32`). Message words: four plain 16-byte loads per quarter block, transposed in
//! registers with `trn1`/`trn2`. NEON is part of the aarch64 baseline.
//!
//! [`Lane`]: super::lanes::Lane

use super::lanes::LaneKernel;

/// The lanes of one group: the 32-bit words of a `uint32x4_t`.
pub(crate) const WIDTH: usize = 4;

/// Interleaved 4-lane groups per call (aarch64 has 32 vector registers; not measured
/// here: no aarch64 machine was available).
pub(crate) const GROUPS: usize = 2;

/// Relative throughput of 1, 2 and 3 groups (2 groups = 100). Not measured: an
/// assumption that 3 groups gain nothing, so `hash_many` never prefers them.
pub(crate) const SPEED: [u32; 3] = [50, 100, 100];

/// The NEON lane kernel with `groups` groups of 4 lanes (1 to 3), on aarch64.
pub(crate) fn kernel(groups: usize) -> Option<LaneKernel> {
    imp::kernel(groups)
}

#[cfg(all(
    target_arch = "aarch64",
    target_feature = "neon",
    target_endian = "little",
    not(miri)
))]
mod imp {
    use super::super::lanes::{self, Lane, LaneKernel};
    use core::arch::aarch64::*;

    pub(super) fn kernel(groups: usize) -> Option<LaneKernel> {
        lanes::static_kernel::<Neon>(groups)
    }

    /// Four lanes; NEON is statically enabled wherever this module is compiled.
    #[derive(Clone, Copy)]
    struct Neon(uint32x4_t);

    impl Lane for Neon {
        const LANES: usize = super::WIDTH;
        #[inline(always)]
        fn splat(x: u32) -> Self {
            // SAFETY: NEON is enabled for this build (this module's `cfg`).
            Neon(unsafe { vdupq_n_u32(x) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: NEON is enabled for this build (this module's `cfg`).
            Neon(unsafe { vaddq_u32(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: NEON is enabled for this build (this module's `cfg`).
            Neon(unsafe { vsubq_u32(self.0, o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            // SAFETY: NEON is enabled for this build (this module's `cfg`).
            Neon(unsafe { vandq_u32(self.0, o.0) })
        }
        #[inline(always)]
        fn andnot(self, o: Self) -> Self {
            // `bic(a, b)` is `a & !b`.
            // SAFETY: NEON is enabled for this build (this module's `cfg`).
            Neon(unsafe { vbicq_u32(o.0, self.0) })
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            // SAFETY: NEON is enabled for this build (this module's `cfg`).
            Neon(unsafe { veorq_u32(self.0, o.0) })
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            debug_assert_eq!(L + R, 32);
            // SAFETY: NEON is enabled for this build (this module's `cfg`).
            unsafe {
                if L == 16 {
                    Neon(vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(
                        self.0,
                    ))))
                } else {
                    Neon(vsriq_n_u32::<R>(vshlq_n_u32::<L>(self.0), self.0))
                }
            }
        }
        #[inline(always)]
        fn load(words: &[u32]) -> Self {
            let w = &words[..4];
            // SAFETY: `w` is 4 readable words.
            Neon(unsafe { vld1q_u32(w.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [u32]) {
            let w = &mut out[..4];
            // SAFETY: `w` is 4 writable words.
            unsafe { vst1q_u32(w.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16] {
            let blocks: [&[u8; 64]; 4] =
                core::array::from_fn(|i| lanes[i][offset..offset + 64].try_into().unwrap());
            // SAFETY: NEON is enabled for this build (this module's `cfg`); each block
            // is 64 readable bytes and `16 * quarter + 16 <= 64`; `vld1q_u8` has no
            // alignment requirement.
            unsafe {
                let mut out = [Neon(vdupq_n_u32(0)); 16];
                for quarter in 0..4 {
                    let r: [uint32x4_t; 4] = core::array::from_fn(|i| {
                        vreinterpretq_u32_u8(vld1q_u8(blocks[i].as_ptr().add(16 * quarter)))
                    });
                    // MD5 words are little-endian, as aarch64 loads them.
                    let t0 = vtrn1q_u32(r[0], r[1]);
                    let t1 = vtrn2q_u32(r[0], r[1]);
                    let t2 = vtrn1q_u32(r[2], r[3]);
                    let t3 = vtrn2q_u32(r[2], r[3]);
                    let w64 = |a: uint32x4_t| vreinterpretq_u64_u32(a);
                    let w32 = |a: uint64x2_t| vreinterpretq_u32_u64(a);
                    out[4 * quarter] = Neon(w32(vtrn1q_u64(w64(t0), w64(t2))));
                    out[4 * quarter + 1] = Neon(w32(vtrn1q_u64(w64(t1), w64(t3))));
                    out[4 * quarter + 2] = Neon(w32(vtrn2q_u64(w64(t0), w64(t2))));
                    out[4 * quarter + 3] = Neon(w32(vtrn2q_u64(w64(t1), w64(t3))));
                }
                out
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::super::lanes::tests::check_kernel;

        #[test]
        fn neon_lanes_match_scalar() {
            for g in 1..=3 {
                check_kernel(super::kernel(g).unwrap(), 30 + g as u64);
            }
        }
    }
}

#[cfg(not(all(
    target_arch = "aarch64",
    target_feature = "neon",
    target_endian = "little",
    not(miri)
)))]
mod imp {
    use super::super::lanes::LaneKernel;
    pub(super) fn kernel(_groups: usize) -> Option<LaneKernel> {
        None
    }
}
