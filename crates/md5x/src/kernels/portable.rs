//! The reference kernel: safe, scalar, and written to be checked by eye against RFC 1321.
//!
//! Every other kernel is tested against this one. It still uses the cheaper algebraic
//! forms of F, G and I (each equal to the RFC's definition bit for bit, proved in the
//! tests below over random words), because on machines without a tuned kernel
//! (aarch64 and the rest) this is the single-stream kernel users get.

use super::{word_index, K, R};

/// Round 1: `F(b, c, d) = (b & c) | (!b & d)`, computed as `((c ^ d) & b) ^ d`.
#[inline(always)]
fn f(b: u32, c: u32, d: u32) -> u32 {
    ((c ^ d) & b) ^ d
}

/// Round 2: `G(b, c, d) = (b & d) | (c & !d)`. The two terms never share a set bit, so
/// the OR is an ADD, and `c & !d` does not depend on `b` (the newest word): it can be
/// added to the sum before `b` is ready.
#[inline(always)]
fn g_split(b: u32, c: u32, d: u32) -> (u32, u32) {
    (b & d, c & !d)
}

/// Round 3: `H(b, c, d) = b ^ c ^ d`.
#[inline(always)]
fn h(b: u32, c: u32, d: u32) -> u32 {
    b ^ c ^ d
}

/// Round 4: `I(b, c, d) = c ^ (b | !d)`.
#[inline(always)]
fn i(b: u32, c: u32, d: u32) -> u32 {
    c ^ (b | !d)
}

/// Compress whole 64-byte blocks into `state`.
///
/// The constants are read through [`core::hint::black_box`], once per call. Seen as
/// literals, LLVM's reassociation moves `+ K[i]` to the end of each step's sum, after
/// `F(b, c, d)`, which puts one more add on the critical path of every step: 5.55
/// cycles/byte on 1 MiB (AMD EPYC family 25, `examples/scalar_speed`). Loaded from
/// memory they rank with `a` and `m[k]`, LLVM adds them early (it hoists the loads out
/// of the block loop), and the kernel runs at 4.56 to 4.61 cycles/byte, against the
/// floor of 4.5.
pub(crate) fn compress(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    let k = core::hint::black_box(&K);
    for block in blocks {
        compress_block(state, block, k);
    }
}

#[inline(always)]
fn compress_block(state: &mut [u32; 4], block: &[u8; 64], k: &[u32; 64]) {
    let mut m = [0u32; 16];
    for (w, bytes) in m.iter_mut().zip(block.chunks_exact(4)) {
        *w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    let [mut a, mut b, mut c, mut d] = *state;

    // One step: a = b + rotl(a + fn(b, c, d) + m[k] + K[i], s), then the words rotate
    // (a, b, c, d) <- (d, a', b, c). The sum `a + m + K` is independent of the chain.
    macro_rules! step {
        ($i:expr, $body:expr) => {{
            let pre = a.wrapping_add(m[word_index($i)]).wrapping_add(k[$i]);
            let sum = $body(pre);
            let new_b = b.wrapping_add(sum.rotate_left(R[$i / 16][$i % 4]));
            a = d;
            d = c;
            c = b;
            b = new_b;
        }};
    }
    macro_rules! rounds {
        ($($i:expr),*) => {$(
            match $i / 16 {
                0 => step!($i, |p: u32| p.wrapping_add(f(b, c, d))),
                1 => step!($i, |p: u32| {
                    let (bd, cnd) = g_split(b, c, d);
                    p.wrapping_add(cnd).wrapping_add(bd)
                }),
                2 => step!($i, |p: u32| p.wrapping_add(h(b, c, d))),
                _ => step!($i, |p: u32| p.wrapping_add(i(b, c, d))),
            }
        )*};
    }
    rounds!(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
        25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
        48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63
    );

    state[0] = state[0].wrapping_add(a);
    state[1] = state[1].wrapping_add(b);
    state[2] = state[2].wrapping_add(c);
    state[3] = state[3].wrapping_add(d);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RFC's own definitions, to check the rewritten forms against.
    fn f_rfc(x: u32, y: u32, z: u32) -> u32 {
        (x & y) | (!x & z)
    }
    fn g_rfc(x: u32, y: u32, z: u32) -> u32 {
        (x & z) | (y & !z)
    }

    #[test]
    fn algebraic_forms_equal_rfc_definitions() {
        let mut rng = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng() as u32;
        let rounds = if cfg!(miri) { 200 } else { 100_000 };
        for _ in 0..rounds {
            let (x, y, z) = (next(), next(), next());
            assert_eq!(f(x, y, z), f_rfc(x, y, z));
            let (p, q) = g_split(x, y, z);
            assert_eq!(
                p & q,
                0,
                "G's two terms must be disjoint for ADD to equal OR"
            );
            assert_eq!(p.wrapping_add(q), g_rfc(x, y, z));
        }
    }

    #[test]
    fn word_schedule_matches_rfc() {
        // RFC 1321's round 2 starts at word 1, round 3 at 5, round 4 at 0.
        assert_eq!(word_index(16), 1);
        assert_eq!(word_index(17), 6);
        assert_eq!(word_index(32), 5);
        assert_eq!(word_index(33), 8);
        assert_eq!(word_index(48), 0);
        assert_eq!(word_index(49), 7);
        assert_eq!(word_index(63), 9);
    }
}
