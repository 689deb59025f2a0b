//! The multi-buffer lane algorithm, written once for every vector width.
//!
//! Independent messages run side by side, one per 32-bit lane of a vector register
//! (md5-simd's and Intel's multi-buffer MD5). The MD5 steps below are written against
//! the small [`Lane`] trait; each instruction set (`sse2.rs`, `avx2.rs`, `avx512.rs`,
//! `neon.rs`) implements only the trait's primitives. [`Portable`] implements the same
//! trait with plain arrays, so this algorithm is tested at 4, 8 and 16 lanes on every
//! machine (and under Miri), and [`PortableTernlog`] does the same with the `vpternlogd`
//! truth tables AVX-512 uses for F, G, H and I.
//!
//! A kernel runs `G` independent groups of lanes interleaved step by step: one group is
//! bound by the latency of MD5's dependent chain, several keep the vector units busy.

use super::{word_index, K};

/// One vector register of 32-bit lanes, and the few operations MD5 needs.
///
/// Implementations exist only inside kernels entered after the CPU was checked for
/// their instruction set (see each ISA file), or are plain Rust ([`Portable`]).
pub(crate) trait Lane: Copy {
    /// 32-bit lanes in one vector.
    const LANES: usize;
    /// Whether a lone group (G = 1) should pass each step's `a + m + K` through
    /// `black_box`, so the compiler cannot add `K` after the round function, on the
    /// critical path. It costs a store and a load per step, off that path: worth it
    /// where one group is bound by latency and has the ports to spare (AVX-512 on Zen 5,
    /// 1.57 -> 1.90 bytes/cycle), a loss elsewhere (AVX2 2 groups 1.32 -> 1.22).
    const OPAQUE_SUM_ALONE: bool = false;
    /// Whether the steps read their constants from [`STEP_K4`], already in every lane,
    /// instead of splatting `STEP_K[i]`. Only for `LANES == 4`: SSE2 has no broadcast
    /// load, so its splat is a load and a `pshufd`, one more shuffle every step.
    const SPLATTED_K: bool = false;
    /// Every lane set to `x`.
    fn splat(x: u32) -> Self;
    /// Lane-wise wrapping add.
    fn add(self, o: Self) -> Self;
    /// Lane-wise wrapping subtract.
    fn sub(self, o: Self) -> Self;
    /// `self & o`.
    fn and(self, o: Self) -> Self;
    /// `!self & o` (x86's `andn` operand order).
    fn andnot(self, o: Self) -> Self;
    /// `self ^ o`.
    fn xor(self, o: Self) -> Self;
    /// Rotate every lane left by `L`; `R` is `32 - L` (shift immediates must be consts).
    fn rotl<const L: i32, const R: i32>(self) -> Self;
    /// Blocks ahead that each lane's data is prefetched with 1, 2 and 3 groups; 0 for
    /// none. The default is none: AVX2 lost with it (3 groups, 48 messages of 1 MiB:
    /// 1.53 -> 1.25 bytes/cycle) and SSE2 saw no change. With 0 the prefetch code is
    /// compiled out.
    const PREFETCH_AHEAD: [usize; 3] = [0; 3];
    /// Hint that `data` will be read soon; called only where `PREFETCH_AHEAD` is not 0.
    #[inline(always)]
    fn prefetch(data: &[u8]) {
        let _ = data;
    }
    /// Load `LANES` words (lane `i` from `words[i]`).
    fn load(words: &[u32]) -> Self;
    /// Store the lanes into `out[..LANES]`.
    fn store(self, out: &mut [u32]);
    /// The 16 message words of one block per lane, transposed: word `w` of lane `i` in
    /// lane `i` of result `w`. Lane `i` reads `lanes[i][offset..offset + 64]`, little-endian.
    ///
    /// Written with plain loops over arrays, never `core::array::from_fn` or another
    /// closure around an intrinsic: a closure does not inherit the target features of
    /// the kernel this is inlined into (see [`compress_strided`]).
    fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16];

    /// Round 1's `F(b, c, d) = (b & c) | (!b & d)`, as `((c ^ d) & b) ^ d`.
    #[inline(always)]
    fn f(b: Self, c: Self, d: Self) -> Self {
        c.xor(d).and(b).xor(d)
    }
    /// `x + G(b, c, d)`, `G = (b & d) | (c & !d)`: the two terms never share a bit, so
    /// they are added separately and `c & !d` (no `b`) can join the sum early.
    #[inline(always)]
    fn add_g(x: Self, b: Self, c: Self, d: Self) -> Self {
        x.add(d.andnot(c)).add(b.and(d))
    }
    /// Round 3's `H(b, c, d) = b ^ c ^ d` (`c ^ d` does not wait for `b`).
    #[inline(always)]
    fn h(b: Self, c: Self, d: Self) -> Self {
        b.xor(c.xor(d))
    }
    /// `!I(b, c, d) = c ^ (!b & d)`, where `I = c ^ (b | !d)`. The step subtracts it
    /// from a sum whose constant was lowered by one: `x + I = (x - 1) - !I`. One `andn`
    /// replaces the `or` and the `not`.
    #[inline(always)]
    fn not_i(b: Self, c: Self, d: Self) -> Self {
        c.xor(b.andnot(d))
    }
}

/// `vpternlogd` immediates for `(A, B, C) = (b, c, d)`: bit `4A + 2B + C` of the
/// immediate is the function's value. Checked against the scalar forms in the tests.
pub(crate) const TERNLOG_F: i32 = 0xCA;
/// `G(b, c, d) = d ? b : c`.
pub(crate) const TERNLOG_G: i32 = 0xE4;
/// `H(b, c, d) = b ^ c ^ d`.
pub(crate) const TERNLOG_H: i32 = 0x96;
/// `!I(b, c, d) = c ^ (!b & d)`.
pub(crate) const TERNLOG_NOT_I: i32 = 0xC6;

/// MD5's constants as the lane steps add them: `K[i]`, except round 4's `K[i] - 1`
/// (the `-1` of `x + I = (x - 1) - !I`, see [`Lane::not_i`]).
pub(crate) static STEP_K: [u32; 64] = {
    let mut k = K;
    let mut i = 48;
    while i < 64 {
        k[i] = k[i].wrapping_sub(1);
        i += 1;
    }
    k
};

/// [`STEP_K`] with each constant repeated in 4 lanes (see [`Lane::SPLATTED_K`]).
pub(crate) static STEP_K4: [[u32; 4]; 64] = {
    let mut k = [[0; 4]; 64];
    let mut i = 0;
    while i < 64 {
        k[i] = [STEP_K[i]; 4];
        i += 1;
    }
    k
};

/// F, G, H and `!I` as one `vpternlogd` each (the truth tables above), for a [`Lane`]
/// type with an associated `tern::<IMM>(a, b, c)`. The AVX-512 kernel and
/// [`PortableTernlog`], which runs those round functions on every machine, both expand
/// this, so what the portable tests check is what AVX-512 runs.
macro_rules! ternlog_round_functions {
    () => {
        #[inline(always)]
        fn f(b: Self, c: Self, d: Self) -> Self {
            Self::tern::<{ $crate::kernels::lanes::TERNLOG_F }>(b, c, d)
        }
        #[inline(always)]
        fn add_g(x: Self, b: Self, c: Self, d: Self) -> Self {
            x.add(Self::tern::<{ $crate::kernels::lanes::TERNLOG_G }>(b, c, d))
        }
        #[inline(always)]
        fn h(b: Self, c: Self, d: Self) -> Self {
            Self::tern::<{ $crate::kernels::lanes::TERNLOG_H }>(b, c, d)
        }
        #[inline(always)]
        fn not_i(b: Self, c: Self, d: Self) -> Self {
            Self::tern::<{ $crate::kernels::lanes::TERNLOG_NOT_I }>(b, c, d)
        }
    };
}
// Used by the AVX-512 kernel, which exists only on x86-64 outside Miri.
#[cfg_attr(
    any(not(all(target_arch = "x86_64", target_pointer_width = "64")), miri),
    allow(unused_imports)
)]
pub(crate) use ternlog_round_functions;

/// A lane kernel's entry: `(state, lanes, nblocks, stride)`, as [`LaneKernel::strided`].
pub(crate) type StridedFn = fn(&mut [u32], &[&[u8]], usize, usize);

/// A lane kernel as the schedulers see it: `compress(state, lanes, nblocks)`.
///
/// `state` holds `4 * lanes` words, laid out per group as four rows (a, b, c, d) of
/// `width` lanes: word `w` of lane `l` is at `((l / width) * 4 + w) * width + l % width`.
/// `lanes` has one slice per lane, each with at least `64 * nblocks` bytes.
///
/// `strided(state, lanes, nblocks, stride)` is the same with block `b` of lane `l` at
/// `lanes[l][b * stride..][..64]` (`compress` is `stride` = 64): MD5-P(K)'s chains
/// take every K-th block of one buffer, and run in the lanes where the data lies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneKernel {
    /// Lanes per call (`width * groups`).
    pub lanes: usize,
    /// Lanes per vector: a power of two (2, 4, 8 or 16).
    pub width: usize,
    /// The compress function, with a byte stride between a lane's blocks.
    pub strided: StridedFn,
    /// Below this many live messages, the single-stream kernel is faster (measured).
    pub min_live: usize,
}

impl LaneKernel {
    /// Compress `nblocks` consecutive blocks of every lane (stride 64).
    #[inline]
    pub(crate) fn compress(&self, state: &mut [u32], lanes: &[&[u8]], nblocks: usize) {
        (self.strided)(state, lanes, nblocks, 64)
    }

    /// Index of word `w` of lane `l` in the state layout.
    #[inline(always)]
    pub(crate) fn at(&self, lane: usize, w: usize) -> usize {
        // Every kernel's width is a power of two (2, 4, 8 or 16): shifts, not the
        // divisions that took 3-8% of `hash_many` on 64-byte messages.
        debug_assert!(self.width.is_power_of_two());
        let shift = self.width.trailing_zeros();
        (((lane >> shift) * 4 + w) << shift) + (lane & (self.width - 1))
    }

    /// Lane `l`'s four state words, out of the lane layout.
    #[inline]
    pub(crate) fn get_lane(&self, state: &[u32], l: usize) -> [u32; 4] {
        core::array::from_fn(|w| state[self.at(l, w)])
    }

    /// Set lane `l`'s four state words in the lane layout.
    #[inline]
    pub(crate) fn set_lane(&self, state: &mut [u32], l: usize, words: &[u32; 4]) {
        for (w, &v) in words.iter().enumerate() {
            state[self.at(l, w)] = v;
        }
    }
}

/// What every lane kernel's safe entry checks before it reads: `count` lanes and 4 state
/// words for each, a stride of at least one block, and every lane long enough for
/// `nblocks` blocks at that stride.
///
/// # Panics
///
/// If any of these does not hold.
pub(crate) fn check_args(
    state: &[u32],
    lanes: &[&[u8]],
    count: usize,
    nblocks: usize,
    stride: usize,
) {
    assert_eq!(state.len(), 4 * count, "lane state size");
    assert_eq!(lanes.len(), count, "lane count");
    assert!(stride >= 64, "lane stride under one block");
    let need = match nblocks {
        0 => 0,
        _ => (nblocks - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(64))
            .expect("block count overflows"),
    };
    // (The shortest lane, without early exits: this runs before every kernel call,
    // and with uneven lengths those are short.)
    let shortest = lanes.iter().fold(usize::MAX, |m, l| m.min(l.len()));
    assert!(shortest >= need, "lane data too short");
}

/// [`check_args`], then the lanes' start pointers in the first `count` entries of an
/// array of `N` (`count <= N`): what the assembly kernels take, handed out only once
/// the checks their safety rests on have passed.
///
/// # Panics
///
/// As [`check_args`], or if `count > N`.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
pub(crate) fn checked_pointers<const N: usize>(
    state: &[u32],
    lanes: &[&[u8]],
    count: usize,
    nblocks: usize,
    stride: usize,
) -> [*const u8; N] {
    assert!(count <= N, "lane count");
    check_args(state, lanes, count, nblocks, stride);
    let mut ptrs = [core::ptr::null(); N];
    for (p, l) in ptrs.iter_mut().zip(lanes) {
        *p = l.as_ptr();
    }
    ptrs
}

/// Compress `nblocks` blocks of every lane into `state` with `G` interleaved groups of
/// `V::LANES` lanes (layout: see [`LaneKernel`]); block `b` of lane `l` is
/// `lanes[l][b * stride..][..64]` (`stride` = 64 for consecutive blocks).
///
/// # Panics
///
/// If `state` or `lanes` has the wrong length, `stride` is under 64, or a lane is
/// too short for `nblocks` blocks at that stride.
#[inline(always)]
pub(crate) fn compress_strided<V: Lane, const G: usize>(
    state: &mut [u32],
    lanes: &[&[u8]],
    nblocks: usize,
    stride: usize,
) {
    let n = V::LANES;
    check_args(state, lanes, n * G, nblocks, stride);
    // The step constants are read through `black_box`: seen as constants, LLVM moves
    // `+ K` after `+ F(b, c, d)`, one more add on every step's critical path (the
    // portable kernel has the same note). Loaded, they join `a + m` early.
    let k: &[u32; 64] = core::hint::black_box(&STEP_K);
    let k4: &[[u32; 4]; 64] = core::hint::black_box(&STEP_K4);
    const { assert!(!V::SPLATTED_K || V::LANES == 4) };

    // Plain loops, no closures (here and in every `load_message`): a closure is a
    // function of its own, without the target features of the kernel that inlines
    // this one, and where the compiler leaves it out of line (Cargo's default release
    // profile, 16 codegen units and no LTO, which is what a crate that depends on
    // md5x builds with) its intrinsics become calls: the generic AVX2 kernel ran 4.0-4.3
    // cycles/byte there instead of 0.50-0.55.
    let mut s = [[V::splat(0); 4]; G];
    for (g, sg) in s.iter_mut().enumerate() {
        for (w, sw) in sg.iter_mut().enumerate() {
            *sw = V::load(&state[(g * 4 + w) * n..]);
        }
    }
    // Declared once: every block overwrites all of it. Declared in the loop, its
    // zeroing (1.5 KiB for 3 AVX2 groups) stayed in, a `memset` call every block.
    let mut m = [[V::splat(0); 16]; G];
    for blk in 0..nblocks {
        let ahead = const { V::PREFETCH_AHEAD[G - 1] };
        if ahead > 0 && blk + ahead < nblocks {
            for l in lanes {
                V::prefetch(&l[(blk + ahead) * stride..]);
            }
        }
        for (g, mg) in m.iter_mut().enumerate() {
            *mg = V::load_message(&lanes[g * n..(g + 1) * n], blk * stride);
        }
        let mut x = s;

        // One step for every group: x[a] = x[b] + rotl(x[a] + fn(b, c, d) + m + K, r).
        macro_rules! step {
            ($f:ident, $i:expr, $a:expr, $b:expr, $c:expr, $d:expr, $r:literal) => {
                for (xg, mg) in x.iter_mut().zip(&m) {
                    let (a, b, c, d) = (xg[$a], xg[$b], xg[$c], xg[$d]);
                    let w = mg[const { word_index($i) }];
                    let t = step!(@$f, $i, a.add(w), b, c, d);
                    xg[$a] = b.add(t.rotl::<$r, { 32 - $r }>());
                }
            };
            // `a + m + K` (round 4's K is already K - 1, see `STEP_K`).
            (@sum, $i:expr, $p:expr) => {{
                let ki = if V::SPLATTED_K { V::load(&k4[$i]) } else { V::splat(k[$i]) };
                let sum = $p.add(ki);
                if V::OPAQUE_SUM_ALONE && G == 1 {
                    core::hint::black_box(sum)
                } else {
                    sum
                }
            }};
            (@F, $i:expr, $p:expr, $b:expr, $c:expr, $d:expr) => {
                step!(@sum, $i, $p).add(V::f($b, $c, $d))
            };
            (@G, $i:expr, $p:expr, $b:expr, $c:expr, $d:expr) => {
                V::add_g(step!(@sum, $i, $p), $b, $c, $d)
            };
            (@H, $i:expr, $p:expr, $b:expr, $c:expr, $d:expr) => {
                step!(@sum, $i, $p).add(V::h($b, $c, $d))
            };
            (@I, $i:expr, $p:expr, $b:expr, $c:expr, $d:expr) => {
                step!(@sum, $i, $p).sub(V::not_i($b, $c, $d))
            };
        }
        // Four steps; the roles of the state words rotate (a, b, c, d) -> (d, a, b, c).
        macro_rules! quad {
            ($f:ident, $i:expr, $r0:literal, $r1:literal, $r2:literal, $r3:literal) => {
                step!($f, $i, 0, 1, 2, 3, $r0);
                step!($f, $i + 1, 3, 0, 1, 2, $r1);
                step!($f, $i + 2, 2, 3, 0, 1, $r2);
                step!($f, $i + 3, 1, 2, 3, 0, $r3);
            };
        }
        quad!(F, 0, 7, 12, 17, 22);
        quad!(F, 4, 7, 12, 17, 22);
        quad!(F, 8, 7, 12, 17, 22);
        quad!(F, 12, 7, 12, 17, 22);
        quad!(G, 16, 5, 9, 14, 20);
        quad!(G, 20, 5, 9, 14, 20);
        quad!(G, 24, 5, 9, 14, 20);
        quad!(G, 28, 5, 9, 14, 20);
        quad!(H, 32, 4, 11, 16, 23);
        quad!(H, 36, 4, 11, 16, 23);
        quad!(H, 40, 4, 11, 16, 23);
        quad!(H, 44, 4, 11, 16, 23);
        quad!(I, 48, 6, 10, 15, 21);
        quad!(I, 52, 6, 10, 15, 21);
        quad!(I, 56, 6, 10, 15, 21);
        quad!(I, 60, 6, 10, 15, 21);

        for (sg, xg) in s.iter_mut().zip(&x) {
            for (sw, xw) in sg.iter_mut().zip(xg) {
                *sw = sw.add(*xw);
            }
        }
    }
    for (g, sg) in s.iter().enumerate() {
        for (w, sw) in sg.iter().enumerate() {
            sw.store(&mut state[(g * 4 + w) * n..]);
        }
    }
}

/// Plain-array lanes: the lane algorithm's reference implementation, on every machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Portable<const N: usize>(pub [u32; N]);

impl<const N: usize> Portable<N> {
    #[inline(always)]
    fn map2(self, o: Self, f: impl Fn(u32, u32) -> u32) -> Self {
        Portable(core::array::from_fn(|i| f(self.0[i], o.0[i])))
    }
}

impl<const N: usize> Lane for Portable<N> {
    const LANES: usize = N;
    // Four portable lanes read the splatted table as SSE2 does, so the portable tests
    // (and Miri) check that path too.
    const SPLATTED_K: bool = N == 4;
    #[inline(always)]
    fn splat(x: u32) -> Self {
        Portable([x; N])
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.map2(o, u32::wrapping_add)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.map2(o, u32::wrapping_sub)
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self.map2(o, |a, b| a & b)
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        self.map2(o, |a, b| !a & b)
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self.map2(o, |a, b| a ^ b)
    }
    #[inline(always)]
    fn rotl<const L: i32, const R: i32>(self) -> Self {
        debug_assert_eq!(L + R, 32);
        // The same shift-and-or every vector ISA without a rotate instruction uses.
        Portable(self.0.map(|a| (a << L) | (a >> R)))
    }
    #[inline(always)]
    fn load(words: &[u32]) -> Self {
        Portable(core::array::from_fn(|i| words[i]))
    }
    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        out[..N].copy_from_slice(&self.0);
    }
    #[inline(always)]
    fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16] {
        assert_eq!(lanes.len(), N);
        let blocks: [&[u8]; N] = core::array::from_fn(|i| &lanes[i][offset..offset + 64]);
        core::array::from_fn(|w| {
            Portable(core::array::from_fn(|i| {
                let b = &blocks[i][4 * w..4 * w + 4];
                u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            }))
        })
    }
}

/// `vpternlogd`'s semantics on one word: bit `j` of the result is bit
/// `4 a_j + 2 b_j + c_j` of `imm`.
#[inline(always)]
pub(crate) fn ternlog(a: u32, b: u32, c: u32, imm: i32) -> u32 {
    let mut r = 0;
    for idx in 0..8 {
        if imm & (1 << idx) != 0 {
            let pick = |x: u32, bit: i32| if idx & bit != 0 { x } else { !x };
            r |= pick(a, 4) & pick(b, 2) & pick(c, 1);
        }
    }
    r
}

/// [`Portable`] lanes whose F, G, H and `!I` are the `vpternlogd` truth tables AVX-512
/// uses: this runs the AVX-512 kernel's round functions on any machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortableTernlog<const N: usize>(pub Portable<N>);

impl<const N: usize> PortableTernlog<N> {
    #[inline(always)]
    fn tern<const IMM: i32>(a: Self, b: Self, c: Self) -> Self {
        PortableTernlog(Portable(core::array::from_fn(|i| {
            ternlog(a.0 .0[i], b.0 .0[i], c.0 .0[i], IMM)
        })))
    }
}

impl<const N: usize> Lane for PortableTernlog<N> {
    const LANES: usize = N;
    #[inline(always)]
    fn splat(x: u32) -> Self {
        PortableTernlog(Portable::splat(x))
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        PortableTernlog(self.0.add(o.0))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        PortableTernlog(self.0.sub(o.0))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        PortableTernlog(self.0.and(o.0))
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        PortableTernlog(self.0.andnot(o.0))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        PortableTernlog(self.0.xor(o.0))
    }
    #[inline(always)]
    fn rotl<const L: i32, const R: i32>(self) -> Self {
        // AVX-512's `vprold` is a true rotate.
        PortableTernlog(Portable(self.0 .0.map(|a| a.rotate_left(L as u32))))
    }
    #[inline(always)]
    fn load(words: &[u32]) -> Self {
        PortableTernlog(Portable::load(words))
    }
    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        self.0.store(out)
    }
    #[inline(always)]
    fn load_message(lanes: &[&[u8]], offset: usize) -> [Self; 16] {
        Portable::load_message(lanes, offset).map(PortableTernlog)
    }
    ternlog_round_functions!();
}

/// The portable lane kernel with `N` lanes and `G` groups, as a plain function.
#[cfg(test)]
pub(crate) fn compress_portable<const N: usize, const G: usize>(
    state: &mut [u32],
    lanes: &[&[u8]],
    nblocks: usize,
) {
    compress_strided::<Portable<N>, G>(state, lanes, nblocks, 64)
}

/// The portable lane kernel with AVX-512's ternary-logic round functions.
#[cfg(test)]
pub(crate) fn compress_portable_ternlog<const N: usize, const G: usize>(
    state: &mut [u32],
    lanes: &[&[u8]],
    nblocks: usize,
) {
    compress_strided::<PortableTernlog<N>, G>(state, lanes, nblocks, 64)
}

/// [`compress_portable`] with a stride (see [`LaneKernel`]).
pub(crate) fn strided_portable<const N: usize, const G: usize>(
    state: &mut [u32],
    lanes: &[&[u8]],
    nblocks: usize,
    stride: usize,
) {
    compress_strided::<Portable<N>, G>(state, lanes, nblocks, stride)
}

/// [`compress_portable_ternlog`] with a stride (see [`LaneKernel`]).
pub(crate) fn strided_portable_ternlog<const N: usize, const G: usize>(
    state: &mut [u32],
    lanes: &[&[u8]],
    nblocks: usize,
    stride: usize,
) {
    compress_strided::<PortableTernlog<N>, G>(state, lanes, nblocks, stride)
}

/// A [`LaneKernel`] over portable lanes (the schedulers' unit tests).
#[cfg(test)]
pub(crate) fn portable_kernel<const N: usize, const G: usize>(min_live: usize) -> LaneKernel {
    LaneKernel {
        lanes: N * G,
        width: N,
        strided: strided_portable::<N, G>,
        min_live,
    }
}

/// A portable lane kernel for a run-time shape: `width` 4, 8 or 16 lanes, 1 or 2
/// groups; with `ternlog`, AVX-512's round functions (width 16 only).
pub(crate) fn portable_kernel_shape(
    width: usize,
    groups: usize,
    ternlog: bool,
    min_live: usize,
) -> Option<LaneKernel> {
    let strided: fn(&mut [u32], &[&[u8]], usize, usize) = match (width, groups, ternlog) {
        (4, 1, false) => strided_portable::<4, 1>,
        (4, 2, false) => strided_portable::<4, 2>,
        (8, 1, false) => strided_portable::<8, 1>,
        (8, 2, false) => strided_portable::<8, 2>,
        (16, 1, false) => strided_portable::<16, 1>,
        (16, 2, false) => strided_portable::<16, 2>,
        (16, 1, true) => strided_portable_ternlog::<16, 1>,
        (16, 2, true) => strided_portable_ternlog::<16, 2>,
        _ => return None,
    };
    Some(LaneKernel {
        lanes: width * groups,
        width,
        strided,
        min_live,
    })
}

/// Pick the monomorphised kernel for a run-time group count (1 to 3); any further
/// const arguments follow the group count (`by_groups!(g, f, true)` is `f::<g, true>`).
// Only x86_64's kernels use it (NEON's and simd128's are `static_kernel`s), and none
// under Miri.
#[cfg_attr(
    any(miri, not(all(target_arch = "x86_64", target_pointer_width = "64"))),
    allow(unused_macros)
)]
macro_rules! by_groups {
    ($groups:expr, $f:ident $(, $c:expr)*) => {
        match $groups {
            1 => Some($f::<1 $(, $c)*> as fn(&mut [u32], &[&[u8]], usize, usize)),
            2 => Some($f::<2 $(, $c)*> as fn(&mut [u32], &[&[u8]], usize, usize)),
            3 => Some($f::<3 $(, $c)*> as fn(&mut [u32], &[&[u8]], usize, usize)),
            _ => None,
        }
    };
}
#[allow(unused_imports)]
pub(crate) use by_groups;

/// The lane kernel of `groups` groups (1 to 3) of `V`'s lanes, for an ISA that the
/// whole build enables (NEON, simd128), so that no feature check stands between a
/// caller and the steps: [`compress_strided`] itself is the entry.
#[allow(dead_code)] // only where such an ISA is compiled in
pub(crate) fn static_kernel<V: Lane>(groups: usize) -> Option<LaneKernel> {
    let strided: StridedFn = match groups {
        1 => compress_strided::<V, 1>,
        2 => compress_strided::<V, 2>,
        3 => compress_strided::<V, 3>,
        _ => return None,
    };
    Some(LaneKernel {
        lanes: V::LANES * groups,
        width: V::LANES,
        strided,
        min_live: 2,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::kernels::portable;
    use crate::test_rng::xorshift;

    #[test]
    fn ternlog_immediates_match_the_round_functions() {
        let mut next = xorshift(7);
        for _ in 0..if cfg!(miri) { 50 } else { 10_000 } {
            let (b, c, d) = (next() as u32, next() as u32, next() as u32);
            assert_eq!(ternlog(b, c, d, TERNLOG_F), (b & c) | (!b & d));
            assert_eq!(ternlog(b, c, d, TERNLOG_G), (b & d) | (c & !d));
            assert_eq!(ternlog(b, c, d, TERNLOG_H), b ^ c ^ d);
            assert_eq!(ternlog(b, c, d, TERNLOG_NOT_I), !(c ^ (b | !d)));
        }
    }

    /// Run `kernel` over `nblocks` blocks of `views` (block `b` of lane `l` at
    /// `views[l][b * stride..]`), every lane from its own random state, and compare
    /// each lane with the scalar kernel over the same blocks; `what` names the case in
    /// a failure.
    fn run_against_scalar(
        kernel: impl Fn(&mut [u32], &[&[u8]], usize),
        width: usize,
        views: &[&[u8]],
        nblocks: usize,
        stride: usize,
        next: &mut impl FnMut() -> u64,
        what: &str,
    ) {
        let lanes = views.len();
        let init: Vec<[u32; 4]> = (0..lanes)
            .map(|_| core::array::from_fn(|_| next() as u32))
            .collect();
        let at = |l: usize, w: usize| ((l / width) * 4 + w) * width + l % width;
        let mut state = vec![0u32; 4 * lanes];
        for (l, s) in init.iter().enumerate() {
            for (w, &v) in s.iter().enumerate() {
                state[at(l, w)] = v;
            }
        }
        kernel(&mut state, views, nblocks);
        for (l, view) in views.iter().enumerate() {
            let mut s = init[l];
            for b in 0..nblocks {
                let block: [u8; 64] = view[b * stride..][..64].try_into().unwrap();
                portable::compress(&mut s, &[block]);
            }
            let got: [u32; 4] = core::array::from_fn(|w| state[at(l, w)]);
            assert_eq!(got, s, "lane {l} of {lanes} (width {width}, {what})");
        }
    }

    /// Lane `l` hashes `nblocks` blocks of its own bytes from its own random state;
    /// compare every lane with the scalar kernel.
    pub(crate) fn check(
        kernel: impl Fn(&mut [u32], &[&[u8]], usize),
        width: usize,
        lanes: usize,
        nblocks: usize,
        seed: u64,
    ) {
        let mut next = xorshift(seed);
        let data: Vec<Vec<u8>> = (0..lanes)
            .map(|_| (0..nblocks * 64 + 3).map(|_| next() as u8).collect())
            .collect();
        // Unaligned views: start at byte 1 or 3.
        let views: Vec<&[u8]> = data
            .iter()
            .enumerate()
            .map(|(i, d)| &d[1 + 2 * (i % 2)..])
            .collect();
        run_against_scalar(
            kernel,
            width,
            &views,
            nblocks,
            64,
            &mut next,
            "consecutive blocks",
        );
    }

    /// `k` against the scalar kernel: [`check`] over its consecutive blocks (with
    /// `seed`), then [`check_strided`] (with `50 + seed`).
    #[allow(dead_code)] // where no lane kernel is compiled in: i686, s390x
    pub(crate) fn check_kernel(k: LaneKernel, seed: u64) {
        check(|s, l, n| k.compress(s, l, n), k.width, k.lanes, 3, seed);
        check_strided(k.strided, k.width, k.lanes, 3, 50 + seed);
    }

    /// The strided entry as MD5-P(K) uses it: lane `l` takes blocks `l`, `l + lanes`,
    /// ... of one shared, unaligned buffer (stride `64 * lanes`), and again with a
    /// stride that is not a multiple of 64; every lane against the scalar kernel.
    pub(crate) fn check_strided(
        kernel: fn(&mut [u32], &[&[u8]], usize, usize),
        width: usize,
        lanes: usize,
        nblocks: usize,
        seed: u64,
    ) {
        let mut next = xorshift(seed);
        for stride in [64 * lanes, 64 * lanes + 13] {
            let data: Vec<u8> = (0..stride * nblocks + 64 * lanes + 1)
                .map(|_| next() as u8)
                .collect();
            let views: Vec<&[u8]> = (0..lanes).map(|l| &data[1 + 64 * l..]).collect();
            run_against_scalar(
                |s, l, n| kernel(s, l, n, stride),
                width,
                &views,
                nblocks,
                stride,
                &mut next,
                &format!("stride {stride}"),
            );
        }
    }

    /// The entries of hand-scheduled kernel `$f` (with `PREFETCH` and `RUN` arguments,
    /// as SSE2's and AVX2's take) for `$g` groups: without and with the prefetch, each
    /// with its loop picked by length, always direct and always piped.
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    macro_rules! prefetch_run_variants {
        ($g:expr, $f:ident) => {{
            use $crate::kernels::lanes::by_groups;
            use $crate::kernels::run::{BY_LENGTH, DIRECT, PIPED};
            [
                by_groups!($g, $f, false, BY_LENGTH).unwrap(),
                by_groups!($g, $f, true, BY_LENGTH).unwrap(),
                by_groups!($g, $f, false, DIRECT).unwrap(),
                by_groups!($g, $f, true, DIRECT).unwrap(),
                by_groups!($g, $f, false, PIPED).unwrap(),
                by_groups!($g, $f, true, PIPED).unwrap(),
            ]
        }};
    }
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    pub(crate) use prefetch_run_variants;

    /// A lane kernel's variants (`entries`, each for `groups` groups of `width` lanes)
    /// against the scalar kernel: 1, 2 and 8 blocks (8, so that a prefetch runs ahead
    /// of the kernel), then strided.
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    pub(crate) fn check_variants(entries: &[StridedFn], width: usize, groups: usize, seed: u64) {
        for (v, &e) in entries.iter().enumerate() {
            let seed = seed + 10 * v as u64 + groups as u64;
            for nblocks in [1, 2, 8] {
                check(
                    |s, l, n| e(s, l, n, 64),
                    width,
                    width * groups,
                    nblocks,
                    seed,
                );
            }
            check_strided(e, width, width * groups, 8, seed + 50);
        }
    }

    /// A kernel entry for 3 groups of `width` lanes refuses what it cannot hash: a lane
    /// one byte short, one lane too few, a state one group too small; with zero blocks
    /// it reads nothing and leaves the state as it was, even with empty lanes.
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    pub(crate) fn check_refuses_bad_arguments(entry: StridedFn, width: usize) {
        let (lanes, data) = (3 * width, [7u8; 200]);
        let mut state = vec![0u32; 4 * lanes];
        entry(&mut state, &vec![&[][..]; lanes], 0, 64);
        assert!(state.iter().all(|&w| w == 0));
        let short = std::panic::catch_unwind(|| {
            let mut views: Vec<&[u8]> = vec![&data[..128]; lanes];
            views[lanes - 1] = &data[..127];
            entry(&mut vec![0; 4 * lanes], &views, 2, 64);
        });
        assert!(short.is_err(), "a lane one byte short must be refused");
        let few = std::panic::catch_unwind(|| {
            entry(&mut vec![0; 4 * lanes], &vec![&data[..]; lanes - 1], 1, 64);
        });
        assert!(few.is_err(), "{} lanes must be refused", lanes - 1);
        let small_state = std::panic::catch_unwind(|| {
            entry(
                &mut vec![0; 4 * (lanes - width)],
                &vec![&data[..]; lanes],
                1,
                64,
            );
        });
        assert!(small_state.is_err(), "a state for 2 groups must be refused");
    }

    /// Memory whose last readable byte sits right before a page that cannot be read:
    /// a read past the end faults (and fails the test) instead of going unseen.
    #[cfg(all(unix, target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    struct Guarded {
        map: *mut u8,
        map_len: usize,
        len: usize,
    }

    #[cfg(all(unix, target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    impl Guarded {
        const PAGE: usize = 4096;

        /// `len` bytes of `fill`, followed by an unreadable page.
        fn new(len: usize, fill: u8) -> Guarded {
            let data_len = len.div_ceil(Self::PAGE) * Self::PAGE;
            let map_len = data_len + Self::PAGE;
            // SAFETY: an anonymous private mapping of `map_len` bytes, owned by this
            // value and unmapped in `drop`; no existing memory is touched.
            let map = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANON,
                    -1,
                    0,
                )
            };
            assert_ne!(map, libc::MAP_FAILED, "mmap failed");
            let map = map.cast::<u8>();
            // SAFETY: `map + data_len` is page aligned and inside the mapping, which
            // has one page past it.
            let rc = unsafe { libc::mprotect(map.add(data_len).cast(), Self::PAGE, 0) };
            assert_eq!(rc, 0, "mprotect failed");
            // SAFETY: the `data_len` bytes before the guard page are mapped writable
            // and nothing else refers to them yet.
            unsafe { core::ptr::write_bytes(map, fill, data_len) };
            Guarded { map, map_len, len }
        }

        /// The `len` bytes that end at the guard page.
        fn bytes(&self) -> &[u8] {
            let data_len = self.map_len - Self::PAGE;
            // SAFETY: these `len` bytes are mapped readable (and were initialized in
            // `new`) for as long as `self` lives; nothing writes them.
            unsafe { core::slice::from_raw_parts(self.map.add(data_len - self.len), self.len) }
        }
    }

    #[cfg(all(unix, target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    impl Drop for Guarded {
        fn drop(&mut self) {
            // SAFETY: unmaps the mapping made in `new`, which no slice outlives.
            unsafe { libc::munmap(self.map.cast(), self.map_len) };
        }
    }

    /// A kernel entry for `groups` groups of `width` lanes reads no byte past what it
    /// was given: every lane holds exactly `(nblocks - 1) * stride + 64` bytes that end
    /// at an unreadable page, for 1 to 9 blocks at strides of one block and more (a
    /// read past the end kills the test process). The digests are checked too.
    #[cfg(all(unix, target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    pub(crate) fn check_no_overread(entry: StridedFn, width: usize, groups: usize) {
        let lanes = width * groups;
        let mut next = xorshift(groups as u64);
        for stride in [64, 64 * 3 + 13, 4096] {
            for nblocks in 1..=9 {
                let len = (nblocks - 1) * stride + 64;
                let maps: Vec<Guarded> = (0..lanes).map(|l| Guarded::new(len, l as u8)).collect();
                let views: Vec<&[u8]> = maps.iter().map(Guarded::bytes).collect();
                run_against_scalar(
                    |s, l, n| entry(s, l, n, stride),
                    width,
                    &views,
                    nblocks,
                    stride,
                    &mut next,
                    &format!("{nblocks} blocks to a guard page, stride {stride}"),
                );
            }
        }
    }

    /// Off Unix there are no guard pages here (they come from `mmap`): says, once, what
    /// was not checked. The digests of the same entries are checked by `check_variants`.
    #[cfg(all(
        not(unix),
        all(target_arch = "x86_64", target_pointer_width = "64"),
        not(miri)
    ))]
    pub(crate) fn check_no_overread(_: StridedFn, _width: usize, _groups: usize) {
        use std::io::Write;
        static SAID: std::sync::Once = std::sync::Once::new();
        // Past the harness's capture: a passing test's own output is not shown.
        SAID.call_once(|| {
            let _ = writeln!(
                std::io::stderr(),
                "NOT RUN: the lane kernels' over-read checks (no mmap here for guard pages)"
            );
        });
    }

    /// A hand-scheduled kernel ends with `vzeroupper`: after each entry (one per group
    /// count, `width` lanes a group), the processor must report the upper halves of the
    /// vector registers as unused (XINUSE bit 2, read with `xgetbv` and ECX = 1 where
    /// the CPU has that leaf), or later SSE code pays for them on Intel.
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    pub(crate) fn check_upper_halves_clean(entries: &[StridedFn], width: usize) {
        use core::arch::x86_64::{__cpuid_count, _xgetbv};
        // SAFETY: `cpuid` exists on every x86-64 CPU, and leaf 0xD exists where AVX
        // does (AVX needs XSAVE); callers run this only where their kernel's ISA is.
        #[allow(unused_unsafe)]
        let xsave = unsafe { __cpuid_count(0xD, 1) };
        if xsave.eax & 4 == 0 {
            eprintln!("no xgetbv(1) on this CPU: upper-half state not checked");
            return;
        }
        let data = vec![3u8; 64 * width * entries.len()];
        for (g, &entry) in (1..).zip(entries) {
            let lanes: Vec<&[u8]> = (0..width * g).map(|l| &data[64 * l..]).collect();
            entry(&mut vec![0; 4 * width * g], &lanes, 1, 64);
            // SAFETY: XSAVE and `xgetbv` with ECX = 1 are available (checked above).
            let in_use = unsafe { _xgetbv(1) };
            assert_eq!(in_use & 4, 0, "{g} groups: upper halves left dirty");
        }
    }

    #[test]
    fn portable_strided_lanes_match_scalar() {
        let nb = if cfg!(miri) { 1 } else { 3 };
        check_strided(strided_portable::<4, 1>, 4, 4, nb, 41);
        check_strided(strided_portable::<8, 2>, 8, 16, nb, 42);
        check_strided(strided_portable_ternlog::<16, 1>, 16, 16, nb, 43);
    }

    #[test]
    #[should_panic(expected = "lane data too short")]
    fn strided_rejects_short_lanes() {
        let data = [0u8; 64 * 4 + 63];
        let lanes: Vec<&[u8]> = (0..4).map(|l| &data[64 * l..]).collect();
        let mut state = [0u32; 16];
        // Lane 3 starts at 192: its second block would be at 192 + 256 > 319.
        strided_portable::<4, 1>(&mut state, &lanes, 2, 256);
    }

    #[test]
    fn portable_lanes_4_8_16_match_scalar() {
        let nb = if cfg!(miri) { 1 } else { 3 };
        check(compress_portable::<4, 1>, 4, 4, nb, 1);
        check(compress_portable::<8, 1>, 8, 8, nb, 2);
        check(compress_portable::<16, 1>, 16, 16, nb, 3);
        check(compress_portable::<4, 2>, 4, 8, nb, 4);
        check(compress_portable::<8, 3>, 8, 24, nb, 5);
        check(compress_portable::<16, 2>, 16, 32, nb, 6);
    }

    #[test]
    fn portable_ternlog_lanes_match_scalar() {
        // AVX-512's round functions (one vpternlogd each) and true rotates.
        let nb = if cfg!(miri) { 1 } else { 3 };
        check(compress_portable_ternlog::<16, 1>, 16, 16, nb, 7);
        check(compress_portable_ternlog::<16, 2>, 16, 32, nb, 8);
        check(compress_portable_ternlog::<4, 1>, 4, 4, nb, 9);
    }

    #[test]
    fn zero_blocks_leave_state_unchanged() {
        let mut state: Vec<u32> = (0..32).collect();
        let data = [0u8; 0];
        let lanes = [&data[..]; 8];
        compress_portable::<8, 1>(&mut state, &lanes, 0);
        assert_eq!(state, (0..32).collect::<Vec<u32>>());
    }

    #[test]
    #[should_panic(expected = "lane data too short")]
    fn short_lane_panics() {
        let mut state = [0u32; 16];
        let long = [0u8; 128];
        let short = [0u8; 64];
        compress_portable::<4, 1>(&mut state, &[&long, &long, &short, &long], 2);
    }
}
