//! WebAssembly SIMD (`simd128`): 4 lanes per `v128`; only the [`Lane`] primitives
//! live here.
//!
//! Wasm has no vector rotate: a rotation is two shifts and an `or`, by 16 a half-word
//! shuffle. It has a bit select (`v128.bitselect`), which is round 1's and round 2's
//! function in one instruction. Message words: four 16-byte loads per quarter block,
//! transposed with two rounds of 32-bit shuffles. Wasm has no run-time feature
//! detection: the backend exists where the build enables `simd128`
//! (`-C target-feature=+simd128`), and an engine without SIMD refuses such a module.
//!
//! [`Lane`]: super::lanes::Lane

use super::lanes::LaneKernel;

/// The lanes of one group: the 32-bit words of a `v128`.
pub(crate) const WIDTH: usize = 4;

/// Interleaved 4-lane groups per call in `Lanes` and `Server`. One group and two were
/// level (`many_report`, 32 messages of 8 KiB on an Intel Xeon, family 6 model 207,
/// 2026-11-29: V8 in Node 20 0.231 and 0.227 cycles/byte by its clock, Wasmtime 50
/// 0.871 and 0.870; three groups 0.254 and 0.969): 2, as SSE2 and NEON.
pub(crate) const GROUPS: usize = 2;

/// Relative throughput of 1, 2 and 3 groups with full lanes (2 groups = 100), from the
/// figures above: what `hash_many` weighs against idle lanes in its last rounds.
pub(crate) const SPEED: [u32; 3] = [100, 100, 90];

/// The simd128 lane kernel with `groups` groups of 4 lanes (1 to 3), on wasm32 built
/// with `simd128`.
pub(crate) fn kernel(groups: usize) -> Option<LaneKernel> {
    imp::kernel(groups)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod imp {
    use super::super::lanes::{self, Lane, LaneKernel};
    use core::arch::wasm32::*;

    pub(super) fn kernel(groups: usize) -> Option<LaneKernel> {
        lanes::static_kernel::<Simd128>(groups)
    }

    /// Four lanes; `simd128` is enabled for the whole build (this module's `cfg`), so
    /// its intrinsics are safe to call, but for the loads and stores through pointers.
    #[derive(Clone, Copy)]
    struct Simd128(v128);

    impl Lane for Simd128 {
        const LANES: usize = super::WIDTH;
        #[inline(always)]
        fn splat(x: u32) -> Self {
            Simd128(u32x4_splat(x))
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Simd128(i32x4_add(self.0, o.0))
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            Simd128(i32x4_sub(self.0, o.0))
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            Simd128(v128_and(self.0, o.0))
        }
        #[inline(always)]
        fn andnot(self, o: Self) -> Self {
            // `v128_andnot(a, b)` is `a & !b`.
            Simd128(v128_andnot(o.0, self.0))
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Simd128(v128_xor(self.0, o.0))
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            debug_assert_eq!(L + R, 32);
            if L == 16 {
                Simd128(i16x8_shuffle::<1, 0, 3, 2, 5, 4, 7, 6>(self.0, self.0))
            } else {
                let (l, r) = (L as u32, R as u32);
                Simd128(v128_or(i32x4_shl(self.0, l), u32x4_shr(self.0, r)))
            }
        }
        #[inline(always)]
        fn load(words: &[u32]) -> Self {
            let w = &words[..4];
            // SAFETY: `w` is 4 readable words; wasm loads have no alignment requirement.
            Simd128(unsafe { v128_load(w.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [u32]) {
            let w = &mut out[..4];
            // SAFETY: `w` is 4 writable words; wasm stores have no alignment requirement.
            unsafe { v128_store(w.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16] {
            let blocks: [&[u8; 64]; 4] =
                core::array::from_fn(|i| lanes[i][offset..offset + 64].try_into().unwrap());
            let mut out = [Simd128(u32x4_splat(0)); 16];
            for quarter in 0..4 {
                let r: [v128; 4] = core::array::from_fn(|i| {
                    let q = &blocks[i][16 * quarter..16 * quarter + 16];
                    // SAFETY: `q` is 16 readable bytes; no alignment requirement.
                    unsafe { v128_load(q.as_ptr().cast()) }
                });
                // Little-endian words, as wasm loads them. Lanes 0 and 1, then 2 and 3,
                // word by word; then the pairs side by side.
                let t0 = i32x4_shuffle::<0, 4, 1, 5>(r[0], r[1]);
                let t1 = i32x4_shuffle::<2, 6, 3, 7>(r[0], r[1]);
                let t2 = i32x4_shuffle::<0, 4, 1, 5>(r[2], r[3]);
                let t3 = i32x4_shuffle::<2, 6, 3, 7>(r[2], r[3]);
                out[4 * quarter] = Simd128(i32x4_shuffle::<0, 1, 4, 5>(t0, t2));
                out[4 * quarter + 1] = Simd128(i32x4_shuffle::<2, 3, 6, 7>(t0, t2));
                out[4 * quarter + 2] = Simd128(i32x4_shuffle::<0, 1, 4, 5>(t1, t3));
                out[4 * quarter + 3] = Simd128(i32x4_shuffle::<2, 3, 6, 7>(t1, t3));
            }
            out
        }
        /// `F(b, c, d) = b ? c : d`, one bit select.
        #[inline(always)]
        fn f(b: Self, c: Self, d: Self) -> Self {
            Simd128(v128_bitselect(c.0, d.0, b.0))
        }
        /// `x + G(b, c, d)`, `G = d ? b : c`, one bit select.
        #[inline(always)]
        fn add_g(x: Self, b: Self, c: Self, d: Self) -> Self {
            x.add(Simd128(v128_bitselect(b.0, c.0, d.0)))
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::super::lanes::tests::check_kernel;

        #[test]
        fn simd128_lanes_match_scalar() {
            for g in 1..=3 {
                check_kernel(super::kernel(g).unwrap(), 70 + g as u64);
            }
        }
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod imp {
    use super::super::lanes::LaneKernel;
    pub(super) fn kernel(_groups: usize) -> Option<LaneKernel> {
        None
    }
}
