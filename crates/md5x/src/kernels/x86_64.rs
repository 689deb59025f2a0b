//! The tuned scalar kernel for x86-64: MD5's 64 steps in inline assembly, ordered so that
//! each step costs as few cycles as its dependency chain allows.
//!
//! Only the newest state word (`b`) is on the critical path; everything else in a step
//! (`a + m[k] + K[i]`, and the parts of F/G/H/I that use only `c` and `d`) is computed
//! while the previous step is still running. Cycles on the path per step: 5 in rounds F
//! and I, 4 in G and H, 288 per 64-byte block: a floor of 4.5 cycles per byte.
//!
//! - F = `((c ^ d) & b) ^ d`: `c ^ d` early, then AND, XOR, ADD, ROL, ADD.
//! - G = `(b & d) + (c & !d)`: the terms are disjoint, so OR is ADD, and `c & !d` is
//!   added into `a` early; then AND, ADD, ROL, ADD.
//! - H = `b ^ (c ^ d)`: `c ^ d` early; then XOR, ADD, ROL, ADD.
//! - I = `c ^ (b | !d)`: `!d` early; then OR, XOR, ADD, ROL, ADD. With BMI1, as
//!   `-1 - (c ^ (!b & d))` (ANDN, XOR, SUB, ROL, ADD), the -1 folded into the constant.
//! - `a + m[k] + K[i]`: two ADDs (one from memory) as soon as `a` is ready, three
//!   steps before the step needs it.
//!
//! Register `t` holds a copy of `d` on entry to every step of rounds F, G and H (each
//! step ends with `mov t, c`, the next step's `d`, which register renaming makes free);
//! the BMI1 form of round I does not need it, and each block starts with `mov t, d`.
//! The state at the start of a block waits in `a0..d0` for the final additions.
//!
//! On Intel's cores with AVX-512 a third variant runs the same steps in lane 0 of
//! `xmm` registers, where `vpternlogd` computes each round's function in one operation
//! and `vprold` rotates in one: 4 cycles on every step's path, a floor of 4.0 cycles
//! per byte (`compress_avx512`). Its operations are 128 bits wide, so no AVX-512
//! frequency limit applies.

/// One step of round 1. `$a..$d` are the register operand names, `$m` the message word,
/// `$k` the constant, `$s` the rotation.
#[rustfmt::skip]
macro_rules! step_f {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", stringify!($a), ":e}, dword ptr [{p} + 4*", $m, "]\n",
            "xor {t:e}, {", stringify!($c), ":e}\n",
            "add {", stringify!($a), ":e}, ", $k, "\n",
            "and {t:e}, {", stringify!($b), ":e}\n",
            "xor {t:e}, {", stringify!($d), ":e}\n",
            "add {", stringify!($a), ":e}, {t:e}\n",
            "mov {t:e}, {", stringify!($c), ":e}\n",
            "rol {", stringify!($a), ":e}, ", $s, "\n",
            "add {", stringify!($a), ":e}, {", stringify!($b), ":e}\n",
        )
    };
}

/// One step of round 2, `c & !d` with NOT and AND (no BMI1 needed).
#[rustfmt::skip]
macro_rules! step_g {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", stringify!($a), ":e}, dword ptr [{p} + 4*", $m, "]\n",
            "mov {u:e}, {", stringify!($d), ":e}\n",
            "add {", stringify!($a), ":e}, ", $k, "\n",
            "not {u:e}\n",
            "and {u:e}, {", stringify!($c), ":e}\n",
            "add {", stringify!($a), ":e}, {u:e}\n",
            "and {t:e}, {", stringify!($b), ":e}\n",
            "add {", stringify!($a), ":e}, {t:e}\n",
            "mov {t:e}, {", stringify!($c), ":e}\n",
            "rol {", stringify!($a), ":e}, ", $s, "\n",
            "add {", stringify!($a), ":e}, {", stringify!($b), ":e}\n",
        )
    };
}

/// One step of round 3.
#[rustfmt::skip]
macro_rules! step_h {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", stringify!($a), ":e}, dword ptr [{p} + 4*", $m, "]\n",
            "xor {t:e}, {", stringify!($c), ":e}\n",
            "add {", stringify!($a), ":e}, ", $k, "\n",
            "xor {t:e}, {", stringify!($b), ":e}\n",
            "add {", stringify!($a), ":e}, {t:e}\n",
            "mov {t:e}, {", stringify!($c), ":e}\n",
            "rol {", stringify!($a), ":e}, ", $s, "\n",
            "add {", stringify!($a), ":e}, {", stringify!($b), ":e}\n",
        )
    };
}

/// One step of round 4.
#[rustfmt::skip]
macro_rules! step_i {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", stringify!($a), ":e}, dword ptr [{p} + 4*", $m, "]\n",
            "not {t:e}\n",
            "add {", stringify!($a), ":e}, ", $k, "\n",
            "or {t:e}, {", stringify!($b), ":e}\n",
            "xor {t:e}, {", stringify!($c), ":e}\n",
            "add {", stringify!($a), ":e}, {t:e}\n",
            "mov {t:e}, {", stringify!($c), ":e}\n",
            "rol {", stringify!($a), ":e}, ", $s, "\n",
            "add {", stringify!($a), ":e}, {", stringify!($b), ":e}\n",
        )
    };
}

/// One step of round 2 with BMI1: `andn` computes `c & !d` in one instruction.
#[rustfmt::skip]
macro_rules! step_g_andn {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", stringify!($a), ":e}, dword ptr [{p} + 4*", $m, "]\n",
            "andn {u:e}, {", stringify!($d), ":e}, {", stringify!($c), ":e}\n",
            "add {", stringify!($a), ":e}, ", $k, "\n",
            "add {", stringify!($a), ":e}, {u:e}\n",
            "and {t:e}, {", stringify!($b), ":e}\n",
            "add {", stringify!($a), ":e}, {t:e}\n",
            "mov {t:e}, {", stringify!($c), ":e}\n",
            "rol {", stringify!($a), ":e}, ", $s, "\n",
            "add {", stringify!($a), ":e}, {", stringify!($b), ":e}\n",
        )
    };
}

/// One step of round 4 with BMI1: `c ^ (b | !d) = -1 - (c ^ (!b & d))`, so
/// `a + I = (a + m + K - 1) - (c ^ andn(b, d))`, the -1 folded into the constant.
#[rustfmt::skip]
macro_rules! step_i_andn {
    ($a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", stringify!($a), ":e}, dword ptr [{p} + 4*", $m, "]\n",
            "add {", stringify!($a), ":e}, ", $k, " - 1\n",
            "andn {u:e}, {", stringify!($b), ":e}, {", stringify!($d), ":e}\n",
            "xor {u:e}, {", stringify!($c), ":e}\n",
            "sub {", stringify!($a), ":e}, {u:e}\n",
            "rol {", stringify!($a), ":e}, ", $s, "\n",
            "add {", stringify!($a), ":e}, {", stringify!($b), ":e}\n",
        )
    };
}

/// The 64 steps of one block, with the step macros for each round. The register names
/// rotate `(a, b, c, d) -> (d, a, b, c)` from one step to the next.
macro_rules! md5_block {
    ($f:ident, $g:ident, $h:ident, $i:ident) => {
        concat!(
            $f!(a, b, c, d, 0, 0xd76aa478, 7),
            $f!(d, a, b, c, 1, 0xe8c7b756, 12),
            $f!(c, d, a, b, 2, 0x242070db, 17),
            $f!(b, c, d, a, 3, 0xc1bdceee, 22),
            $f!(a, b, c, d, 4, 0xf57c0faf, 7),
            $f!(d, a, b, c, 5, 0x4787c62a, 12),
            $f!(c, d, a, b, 6, 0xa8304613, 17),
            $f!(b, c, d, a, 7, 0xfd469501, 22),
            $f!(a, b, c, d, 8, 0x698098d8, 7),
            $f!(d, a, b, c, 9, 0x8b44f7af, 12),
            $f!(c, d, a, b, 10, 0xffff5bb1, 17),
            $f!(b, c, d, a, 11, 0x895cd7be, 22),
            $f!(a, b, c, d, 12, 0x6b901122, 7),
            $f!(d, a, b, c, 13, 0xfd987193, 12),
            $f!(c, d, a, b, 14, 0xa679438e, 17),
            $f!(b, c, d, a, 15, 0x49b40821, 22),
            $g!(a, b, c, d, 1, 0xf61e2562, 5),
            $g!(d, a, b, c, 6, 0xc040b340, 9),
            $g!(c, d, a, b, 11, 0x265e5a51, 14),
            $g!(b, c, d, a, 0, 0xe9b6c7aa, 20),
            $g!(a, b, c, d, 5, 0xd62f105d, 5),
            $g!(d, a, b, c, 10, 0x02441453, 9),
            $g!(c, d, a, b, 15, 0xd8a1e681, 14),
            $g!(b, c, d, a, 4, 0xe7d3fbc8, 20),
            $g!(a, b, c, d, 9, 0x21e1cde6, 5),
            $g!(d, a, b, c, 14, 0xc33707d6, 9),
            $g!(c, d, a, b, 3, 0xf4d50d87, 14),
            $g!(b, c, d, a, 8, 0x455a14ed, 20),
            $g!(a, b, c, d, 13, 0xa9e3e905, 5),
            $g!(d, a, b, c, 2, 0xfcefa3f8, 9),
            $g!(c, d, a, b, 7, 0x676f02d9, 14),
            $g!(b, c, d, a, 12, 0x8d2a4c8a, 20),
            $h!(a, b, c, d, 5, 0xfffa3942, 4),
            $h!(d, a, b, c, 8, 0x8771f681, 11),
            $h!(c, d, a, b, 11, 0x6d9d6122, 16),
            $h!(b, c, d, a, 14, 0xfde5380c, 23),
            $h!(a, b, c, d, 1, 0xa4beea44, 4),
            $h!(d, a, b, c, 4, 0x4bdecfa9, 11),
            $h!(c, d, a, b, 7, 0xf6bb4b60, 16),
            $h!(b, c, d, a, 10, 0xbebfbc70, 23),
            $h!(a, b, c, d, 13, 0x289b7ec6, 4),
            $h!(d, a, b, c, 0, 0xeaa127fa, 11),
            $h!(c, d, a, b, 3, 0xd4ef3085, 16),
            $h!(b, c, d, a, 6, 0x04881d05, 23),
            $h!(a, b, c, d, 9, 0xd9d4d039, 4),
            $h!(d, a, b, c, 12, 0xe6db99e5, 11),
            $h!(c, d, a, b, 15, 0x1fa27cf8, 16),
            $h!(b, c, d, a, 2, 0xc4ac5665, 23),
            $i!(a, b, c, d, 0, 0xf4292244, 6),
            $i!(d, a, b, c, 7, 0x432aff97, 10),
            $i!(c, d, a, b, 14, 0xab9423a7, 15),
            $i!(b, c, d, a, 5, 0xfc93a039, 21),
            $i!(a, b, c, d, 12, 0x655b59c3, 6),
            $i!(d, a, b, c, 3, 0x8f0ccc92, 10),
            $i!(c, d, a, b, 10, 0xffeff47d, 15),
            $i!(b, c, d, a, 1, 0x85845dd1, 21),
            $i!(a, b, c, d, 8, 0x6fa87e4f, 6),
            $i!(d, a, b, c, 15, 0xfe2ce6e0, 10),
            $i!(c, d, a, b, 6, 0xa3014314, 15),
            $i!(b, c, d, a, 13, 0x4e0811a1, 21),
            $i!(a, b, c, d, 4, 0xf7537e82, 6),
            $i!(d, a, b, c, 11, 0xbd3af235, 10),
            $i!(c, d, a, b, 2, 0x2ad7d2bb, 15),
            $i!(b, c, d, a, 9, 0xeb86d391, 21),
        )
    };
}

/// The block loop in assembly, with the given step macros for rounds F, G, H, I.
macro_rules! compress_blocks {
    ($state:ident, $blocks:ident, $f:ident, $g:ident, $h:ident, $i:ident) => {{
        if $blocks.is_empty() {
            return;
        }
        let [mut a, mut b, mut c, mut d] = *$state;
        let mut p = $blocks.as_ptr().cast::<u8>();
        // SAFETY: `blocks` is non-empty, so `end` is one past its last byte, in bounds.
        let end = unsafe { p.add($blocks.len() * 64) };
        // SAFETY: the loop reads the 64 bytes at `p` (16 unaligned `u32` loads, which
        // x86 allows) and advances `p` by 64 until it reaches `end`; `p` starts at the
        // first block and `end - p` is a non-zero multiple of 64, so every load is inside
        // `blocks`. The assembly writes no memory, uses no stack, and clobbers only the
        // registers named below (and the flags, which `asm!` assumes clobbered). Callers
        // of the BMI1 variant have checked that the CPU has BMI1 (`andn`).
        unsafe {
            core::arch::asm!(
                "2:",
                "mov {a0:e}, {a:e}",
                "mov {b0:e}, {b:e}",
                "mov {c0:e}, {c:e}",
                "mov {d0:e}, {d:e}",
                "mov {t:e}, {d:e}",
                md5_block!($f, $g, $h, $i),
                "add {a:e}, {a0:e}",
                "add {b:e}, {b0:e}",
                "add {c:e}, {c0:e}",
                "add {d:e}, {d0:e}",
                "add {p}, 64",
                "cmp {p}, {end}",
                "jne 2b",
                a = inout(reg) a,
                b = inout(reg) b,
                c = inout(reg) c,
                d = inout(reg) d,
                p = inout(reg) p,
                end = in(reg) end,
                t = out(reg) _,
                u = out(reg) _,
                a0 = out(reg) _,
                b0 = out(reg) _,
                c0 = out(reg) _,
                d0 = out(reg) _,
                options(nostack, readonly),
            );
        }
        let _ = p;
        *$state = [a, b, c, d];
    }};
}

/// Compress whole 64-byte blocks into `state`: the AVX-512 variant on Intel's cores
/// with AVX512VL ([`prefer_avx512`]), else the BMI1 variant where the CPU has BMI1
/// (every x86-64 CPU since AMD Piledriver and Intel Haswell), else the plain one.
///
/// Why BMI1 before plain: on this project's AMD EPYC (family 25, 2 cores, KVM),
/// `examples/scalar_speed` (4 runs of 3, interleaved, 2026-11-22) measured 1 MiB at
/// 4.49 cycles/byte plain and 4.50 with BMI1, 8 KiB at 4.62 and 4.58: equal within the
/// noise, at the 4.5 floor. The BMI1 variant issues 528 instructions per block instead
/// of 592 (`andn` replaces `mov`/`not`/`and` in G and `not`/`or`/`mov` in I), which
/// leaves more room to a sibling hyperthread and to cores with fewer ALUs, so it is
/// preferred; the plain one serves CPUs without BMI1.
#[inline]
pub(crate) fn compress(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    if prefer_avx512() {
        // SAFETY: `prefer_avx512` holds only where the CPU has AVX512F and AVX512VL.
        unsafe { compress_avx512(state, blocks) }
    } else {
        compress_gpr(state, blocks);
    }
}

/// [`compress`] in the general registers only: the BMI1 variant where the CPU has
/// BMI1, else the plain one. The single-message kernel of the SSE2 and AVX2 backends,
/// so that forcing one of them runs no instruction past its ISA (BMI1 aside, which
/// every AVX2 CPU has).
#[inline]
pub(crate) fn compress_gpr(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    if has_bmi1() {
        compress_bmi1(state, blocks);
    } else {
        compress_plain(state, blocks);
    }
}

/// Whether the AVX-512 code written for `xmm` registers runs: [`compress`]'s AVX-512
/// variant, and the AVX-512 backend's kernel for two to four messages
/// (`avx512::xmm_lanes`). It does where the CPU has AVX512F and AVX512VL and is
/// Intel's. On an Emerald Rapids Xeon (2026-11-28) it ran 3.98-4.20 cycles/byte
/// against the BMI1 variant's 4.48-4.58 (`docs/performance.md`). AMD's cores keep the
/// general registers: Zen 5 runs `vpaddd`, `vpternlogd` and `vprold` with 2 cycles of
/// latency (`avx512_asm.rs`), which would double each step's path, and on Zen 4, whose
/// tables give 1, it ran 6.3 cycles/byte against the BMI1 variant's 4.56 (AMD EPYC
/// family 25 model 17, 2026-12-01, `scalar_speed` at 8 KiB and 1 MiB, a build that
/// allowed it there, two runs).
#[inline(always)]
pub(crate) fn prefer_avx512() -> bool {
    has_avx512() && super::cpu::intel()
}

/// Whether the CPU has BMI1: detected once by std (a cached load after the first call),
/// or, without std, whether the build targets it.
#[inline(always)]
fn has_bmi1() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("bmi1")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(target_feature = "bmi1")
    }
}

/// Whether the CPU has AVX512F and AVX512VL (see [`compress_avx512`]).
#[inline(always)]
pub(crate) fn has_avx512() -> bool {
    #[cfg(feature = "std")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(all(target_feature = "avx512f", target_feature = "avx512vl"))
    }
}

/// The variant that runs on every x86-64 CPU.
fn compress_plain(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    compress_blocks!(state, blocks, step_f, step_g, step_h, step_i)
}

/// The variant with BMI1's `andn` in rounds G and I. Only called when [`has_bmi1`].
fn compress_bmi1(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    compress_blocks!(state, blocks, step_f, step_g_andn, step_h, step_i_andn)
}

/// `vpternlogd`'s immediate for the function whose immediate over the operands
/// `(b, c, d)` is `imm` (`lanes::TERNLOG_*`), with the operands given as `(d, b, c)`:
/// the AVX-512 variant's temporary starts as a copy of `d`, so that `b`, the word on
/// the critical path, is never copied first.
const fn d_first(imm: i32) -> i32 {
    let mut out = 0;
    let mut j = 0;
    while j < 8 {
        let (d, b, c) = (j >> 2 & 1, j >> 1 & 1, j & 1);
        out |= (imm >> (4 * b + 2 * c + d) & 1) << j;
        j += 1;
    }
    out
}

/// One step of the AVX-512 variant in lane 0 of `xmm` registers, the state word `$a`
/// in the operand `{va}` and so on: `a + m + K` as soon as `a` is ready (the word of
/// the block at `{p}`, and the constant from `{k}`, which walks `kernels::K` a word a
/// step), then on the critical path one `vpternlogd` for the round's function
/// (`$imm`: `"{tf}"` to `"{ti}"`, into the temporary `{vt}`), ADD, `vprold`, ADD: 4
/// operations of one cycle each where the general registers need 4 or 5.
#[rustfmt::skip]
macro_rules! vstep {
    ($imm:literal, $a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "vpaddd {v", stringify!($a), "}, {v", stringify!($a), "}, dword ptr [{p} + 4*", $m, "]{{1to4}}\n",
            "vpaddd {v", stringify!($a), "}, {v", stringify!($a), "}, dword ptr [{k}]{{1to4}}\n",
            "add {k}, 4\n",
            "vmovdqa {vt}, {v", stringify!($d), "}\n",
            "vpternlogd {vt}, {v", stringify!($b), "}, {v", stringify!($c), "}, ", $imm, "\n",
            "vpaddd {v", stringify!($a), "}, {v", stringify!($a), "}, {vt}\n",
            "vprold {v", stringify!($a), "}, {v", stringify!($a), "}, ", $s, "\n",
            "vpaddd {v", stringify!($a), "}, {v", stringify!($a), "}, {v", stringify!($b), "}\n",
        )
    };
}
macro_rules! vstep_f {
    ($($x:tt)*) => { vstep!("{tf}", $($x)*) };
}
macro_rules! vstep_g {
    ($($x:tt)*) => { vstep!("{tg}", $($x)*) };
}
macro_rules! vstep_h {
    ($($x:tt)*) => { vstep!("{th}", $($x)*) };
}
macro_rules! vstep_i {
    ($($x:tt)*) => { vstep!("{ti}", $($x)*) };
}

/// The variant in lane 0 of AVX-512's `xmm` registers: `vpternlogd` gives each round's
/// function in one operation and `vprold` the rotation in one, so every step's
/// critical path is 4 one-cycle operations (`b` -> function -> ADD -> rotate -> ADD),
/// 256 cycles a block: a floor of 4.0 cycles per byte against the general registers'
/// 4.5. Only called where the CPU has AVX512F and AVX512VL.
#[target_feature(enable = "avx512f,avx512vl")]
fn compress_avx512(state: &mut [u32; 4], blocks: &[[u8; 64]]) {
    if blocks.is_empty() {
        return;
    }
    let [mut ga, mut gb, mut gc, mut gd] = *state;
    let p = blocks.as_ptr().cast::<u8>();
    let end = p.wrapping_add(blocks.len() * 64);
    // SAFETY: the CPU has AVX512F and AVX512VL (this function's target features). The
    // loop reads the 64 bytes at `p` (16 `u32`, each broadcast from memory, which needs
    // no alignment) and advances `p` by 64 until it reaches `end`; `p` starts at the
    // first block and `end - p` is a non-zero multiple of 64, so every load is inside
    // `blocks`. `{k}` walks `K`'s 64 words once a block and steps back. The assembly
    // writes no memory, uses no stack, and clobbers only the registers named below
    // (and the flags).
    unsafe {
        core::arch::asm!(
            "vmovd {va}, {ga:e}",
            "vmovd {vb}, {gb:e}",
            "vmovd {vc}, {gc:e}",
            "vmovd {vd}, {gd:e}",
            "2:",
            // The state saved for the block's final additions.
            "vmovdqa {va0}, {va}",
            "vmovdqa {vb0}, {vb}",
            "vmovdqa {vc0}, {vc}",
            "vmovdqa {vd0}, {vd}",
            md5_block!(vstep_f, vstep_g, vstep_h, vstep_i),
            "vpaddd {va}, {va}, {va0}",
            "vpaddd {vb}, {vb}, {vb0}",
            "vpaddd {vc}, {vc}, {vc0}",
            "vpaddd {vd}, {vd}, {vd0}",
            "sub {k}, 256",
            "add {p}, 64",
            "cmp {p}, {end}",
            "jne 2b",
            "vmovd {ga:e}, {va}",
            "vmovd {gb:e}, {vb}",
            "vmovd {gc:e}, {vc}",
            "vmovd {gd:e}, {vd}",
            ga = inout(reg) ga,
            gb = inout(reg) gb,
            gc = inout(reg) gc,
            gd = inout(reg) gd,
            p = inout(reg) p => _,
            end = in(reg) end,
            k = inout(reg) super::K.as_ptr() => _,
            // The round functions' truth tables, with `d` first.
            tf = const d_first(super::lanes::TERNLOG_F),
            tg = const d_first(super::lanes::TERNLOG_G),
            th = const d_first(super::lanes::TERNLOG_H),
            ti = const d_first(!super::lanes::TERNLOG_NOT_I & 0xFF),
            va = out(xmm_reg) _,
            vb = out(xmm_reg) _,
            vc = out(xmm_reg) _,
            vd = out(xmm_reg) _,
            vt = out(xmm_reg) _,
            va0 = out(xmm_reg) _,
            vb0 = out(xmm_reg) _,
            vc0 = out(xmm_reg) _,
            vd0 = out(xmm_reg) _,
            options(nostack, readonly),
        );
    }
    *state = [ga, gb, gc, gd];
}

/// Chain 1's register for chain 0's `a`, `b`, `c` or `d` in the two-message kernel.
#[rustfmt::skip]
macro_rules! twin {
    (a) => { "e" }; (b) => { "f" }; (c) => { "g" }; (d) => { "h" };
}

/// One step of one chain of the two-message kernel: `$w` picks the chain's register
/// for a state word (`stringify` for chain 0, `twin` for chain 1), `$p` its message
/// pointer. Every round in its BMI1 form, written so that no value but the state
/// survives a step: the one temporary, `t`, is shared by the two chains (register
/// renaming gives each write its own register).
#[rustfmt::skip]
macro_rules! pair_step {
    (F, $w:ident, $p:literal, $a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", $w!($a), ":e}, dword ptr [{", $p, "} + 4*", $m, "]\n",
            "add {", $w!($a), ":e}, ", $k, "\n",
            "mov {t:e}, {", $w!($c), ":e}\n",
            "xor {t:e}, {", $w!($d), ":e}\n",
            "and {t:e}, {", $w!($b), ":e}\n",
            "xor {t:e}, {", $w!($d), ":e}\n",
            "add {", $w!($a), ":e}, {t:e}\n",
            "rol {", $w!($a), ":e}, ", $s, "\n",
            "add {", $w!($a), ":e}, {", $w!($b), ":e}\n",
        )
    };
    (G, $w:ident, $p:literal, $a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", $w!($a), ":e}, dword ptr [{", $p, "} + 4*", $m, "]\n",
            "add {", $w!($a), ":e}, ", $k, "\n",
            "andn {t:e}, {", $w!($d), ":e}, {", $w!($c), ":e}\n",
            "add {", $w!($a), ":e}, {t:e}\n",
            "mov {t:e}, {", $w!($d), ":e}\n",
            "and {t:e}, {", $w!($b), ":e}\n",
            "add {", $w!($a), ":e}, {t:e}\n",
            "rol {", $w!($a), ":e}, ", $s, "\n",
            "add {", $w!($a), ":e}, {", $w!($b), ":e}\n",
        )
    };
    (H, $w:ident, $p:literal, $a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", $w!($a), ":e}, dword ptr [{", $p, "} + 4*", $m, "]\n",
            "add {", $w!($a), ":e}, ", $k, "\n",
            "mov {t:e}, {", $w!($c), ":e}\n",
            "xor {t:e}, {", $w!($d), ":e}\n",
            "xor {t:e}, {", $w!($b), ":e}\n",
            "add {", $w!($a), ":e}, {t:e}\n",
            "rol {", $w!($a), ":e}, ", $s, "\n",
            "add {", $w!($a), ":e}, {", $w!($b), ":e}\n",
        )
    };
    (I, $w:ident, $p:literal, $a:ident, $b:ident, $c:ident, $d:ident, $m:literal, $k:literal, $s:literal) => {
        concat!(
            "add {", $w!($a), ":e}, dword ptr [{", $p, "} + 4*", $m, "]\n",
            "add {", $w!($a), ":e}, ", $k, " - 1\n",
            "andn {t:e}, {", $w!($b), ":e}, {", $w!($d), ":e}\n",
            "xor {t:e}, {", $w!($c), ":e}\n",
            "sub {", $w!($a), ":e}, {t:e}\n",
            "rol {", $w!($a), ":e}, ", $s, "\n",
            "add {", $w!($a), ":e}, {", $w!($b), ":e}\n",
        )
    };
}

/// A step of both chains (`md5_block!`'s step macros for the two-message kernel).
macro_rules! pair_f {
    ($($x:tt)*) => { concat!(pair_step!(F, stringify, "p", $($x)*), pair_step!(F, twin, "q", $($x)*)) };
}
macro_rules! pair_g {
    ($($x:tt)*) => { concat!(pair_step!(G, stringify, "p", $($x)*), pair_step!(G, twin, "q", $($x)*)) };
}
macro_rules! pair_h {
    ($($x:tt)*) => { concat!(pair_step!(H, stringify, "p", $($x)*), pair_step!(H, twin, "q", $($x)*)) };
}
macro_rules! pair_i {
    ($($x:tt)*) => { concat!(pair_step!(I, stringify, "p", $($x)*), pair_step!(I, twin, "q", $($x)*)) };
}

/// What the two-message kernel's loop keeps in memory: the state at the start of the
/// block (for the final additions), the stride and the blocks left. All 8 state words
/// and both message pointers live in registers, so the rest cannot.
#[repr(C)]
struct PairFrame {
    /// Words `a, b, c, d` of chain 0, then of chain 1.
    state: [u32; 8],
    stride: usize,
    left: usize,
}

impl PairFrame {
    /// The frame for `nblocks` blocks `stride` bytes apart, from a two-lane state
    /// (`[a0, a1, b0, b1, c0, c1, d0, d1]`).
    fn new(state: &[u32], stride: usize, nblocks: usize) -> PairFrame {
        PairFrame {
            state: [
                state[0], state[2], state[4], state[6], state[1], state[3], state[5], state[7],
            ],
            stride,
            left: nblocks,
        }
    }
}

/// Chain 0's and chain 1's words `a, b, c, d` back into a two-lane state.
fn put_pair(state: &mut [u32], chains: [[u32; 4]; 2]) {
    for w in 0..4 {
        state[2 * w] = chains[0][w];
        state[2 * w + 1] = chains[1][w];
    }
}

/// A lane kernel of two lanes (see [`pair_kernel`]) that runs `strided`.
fn two_chains(strided: super::lanes::StridedFn) -> super::lanes::LaneKernel {
    super::lanes::LaneKernel {
        lanes: 2,
        width: 2,
        strided,
        min_live: 2,
    }
}

/// Two messages' blocks at once in general-purpose registers, each step of the one
/// followed by the same step of the other: a "lane kernel" of 2 lanes (layout as
/// `lanes::LaneKernel`'s with a width of 2: `[a0, a1, b0, b1, c0, c1, d0, d1]`) for
/// when only two messages are left to hash.
///
/// One message is bound by the latency of its 64 dependent steps (4.5 cycles a byte),
/// which leaves most of the core's four integer ALUs idle; a second, independent chain
/// fills them. Two messages in the vector lanes instead leave 2 of SSE2's 4 lanes (6 of
/// AVX2's 8) idle. On Zen 3, 8 KiB messages: 2.5 cycles a byte for the pair here,
/// 3.3 in one vector group, 4.6 one after the other (`many::narrow_for` has the
/// figures and the command).
///
/// The steps are `md5_block!`'s, with the `pair_f!` to `pair_i!` macros that emit each step for
/// chain 0 (registers `a..d`, message at `p`) and then for chain 1 (`e..h`, at `q`).
///
/// `None` where the CPU lacks BMI1 (`andn`), which every AVX2 CPU has.
pub(crate) fn pair_kernel() -> Option<super::lanes::LaneKernel> {
    has_bmi1().then(|| two_chains(pair_strided))
}

/// The two-message kernel's entry (see [`pair_kernel`]): block `b` of lane `l` at
/// `lanes[l][b * stride..][..64]`.
///
/// # Panics
///
/// As `lanes::check_args`: wrong state or lane count, a stride under 64, or a lane too
/// short for `nblocks` blocks.
fn pair_strided(state: &mut [u32], lanes: &[&[u8]], nblocks: usize, stride: usize) {
    super::lanes::check_args(state, lanes, 2, nblocks, stride);
    assert!(has_bmi1(), "the two-message kernel needs BMI1");
    if nblocks == 0 {
        return;
    }
    let mut frame = PairFrame::new(state, stride, nblocks);
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = frame.state;
    // SAFETY: both lanes hold at least `(nblocks - 1) * stride + 64` bytes and
    // `nblocks` > 0 (checked above). The loop runs `nblocks` times; pass `i` reads the
    // 64 bytes at `p + i * stride` and `q + i * stride` (16 unaligned `u32` loads each,
    // which x86 allows), then advances both by `stride`, so every load is inside its
    // lane. It reads and writes `frame` only through `fr` (the block's starting state,
    // the stride and the count), uses no stack, clobbers only the registers named and
    // the flags, and needs BMI1 (`andn`), asserted above.
    unsafe {
        core::arch::asm!(
            "2:",
            md5_block!(pair_f, pair_g, pair_h, pair_i),
            "add {a:e}, dword ptr [{fr}]",
            "add {b:e}, dword ptr [{fr} + 4]",
            "add {c:e}, dword ptr [{fr} + 8]",
            "add {d:e}, dword ptr [{fr} + 12]",
            "add {e:e}, dword ptr [{fr} + 16]",
            "add {f:e}, dword ptr [{fr} + 20]",
            "add {g:e}, dword ptr [{fr} + 24]",
            "add {h:e}, dword ptr [{fr} + 28]",
            "mov dword ptr [{fr}], {a:e}",
            "mov dword ptr [{fr} + 4], {b:e}",
            "mov dword ptr [{fr} + 8], {c:e}",
            "mov dword ptr [{fr} + 12], {d:e}",
            "mov dword ptr [{fr} + 16], {e:e}",
            "mov dword ptr [{fr} + 20], {f:e}",
            "mov dword ptr [{fr} + 24], {g:e}",
            "mov dword ptr [{fr} + 28], {h:e}",
            "add {p}, qword ptr [{fr} + 32]",
            "add {q}, qword ptr [{fr} + 32]",
            "dec qword ptr [{fr} + 40]",
            "jnz 2b",
            a = inout(reg) a,
            b = inout(reg) b,
            c = inout(reg) c,
            d = inout(reg) d,
            e = inout(reg) e,
            f = inout(reg) f,
            g = inout(reg) g,
            h = inout(reg) h,
            p = inout(reg) lanes[0].as_ptr() => _,
            q = inout(reg) lanes[1].as_ptr() => _,
            fr = in(reg) &mut frame,
            t = out(reg) _,
            options(nostack),
        );
    }
    put_pair(state, [[a, b, c, d], [e, f, g, h]]);
}

#[cfg(test)]
mod tests {
    use super::super::portable;

    use crate::test_rng::xorshift as rng;

    fn random_blocks(next: &mut impl FnMut() -> u64, n: usize) -> Vec<[u8; 64]> {
        (0..n)
            .map(|_| core::array::from_fn(|_| next() as u8))
            .collect()
    }

    type Compress = fn(&mut [u32; 4], &[[u8; 64]]);

    /// Both variants where this CPU runs them (the plain one always).
    fn variants() -> Vec<(&'static str, Compress)> {
        let mut v: Vec<(&'static str, Compress)> = vec![("plain", super::compress_plain)];
        if super::has_bmi1() {
            v.push(("bmi1", super::compress_bmi1));
        } else {
            eprintln!("x86_64 kernel: this CPU has no BMI1; the BMI1 variant was not run");
        }
        if super::has_avx512() {
            // SAFETY: the CPU has AVX512F and AVX512VL.
            v.push(("avx512", |s, b| unsafe { super::compress_avx512(s, b) }));
        } else {
            eprintln!("x86_64 kernel: this CPU has no AVX512VL; the AVX-512 variant was not run");
        }
        v
    }

    #[test]
    #[cfg_attr(miri, ignore = "inline assembly")]
    fn matches_portable_on_random_states_and_blocks() {
        let mut next = rng(0x5eed);
        for n in [1usize, 2, 3, 7, 16, 100] {
            for _ in 0..50 {
                let state: [u32; 4] = core::array::from_fn(|_| next() as u32);
                let blocks = random_blocks(&mut next, n);
                let mut want = state;
                portable::compress(&mut want, &blocks);
                for (name, f) in variants() {
                    let mut got = state;
                    f(&mut got, &blocks);
                    assert_eq!(got, want, "{name}: {n} blocks from state {state:08x?}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "inline assembly")]
    fn state_carries_across_calls() {
        let mut next = rng(42);
        let blocks = random_blocks(&mut next, 37);
        let mut whole = [1, 2, 3, 4];
        portable::compress(&mut whole, &blocks);
        // Any split into calls, including empty ones, gives the same state.
        for (name, f) in variants() {
            for cut in [0usize, 1, 5, 36, 37] {
                let mut s = [1, 2, 3, 4];
                f(&mut s, &blocks[..cut]);
                f(&mut s, &[]);
                f(&mut s, &blocks[cut..]);
                assert_eq!(s, whole, "{name}: cut at {cut}");
            }
            let mut s = [1, 2, 3, 4];
            for b in &blocks {
                f(&mut s, core::slice::from_ref(b));
            }
            assert_eq!(s, whole, "{name}: one block per call");
        }
    }

    /// The two-message kernel is two single-message compressions: random states, 0 to
    /// 9 blocks and 100, strides of one block and more, lanes at odd addresses, and
    /// the same slice in both lanes.
    #[test]
    #[cfg_attr(miri, ignore = "inline assembly")]
    fn pair_matches_portable_per_lane() {
        let Some(k) = super::pair_kernel() else {
            eprintln!("x86_64 kernel: this CPU has no BMI1; the two-message kernel was not run");
            return;
        };
        pair_kernel_matches_portable(k);
    }

    fn pair_kernel_matches_portable(k: crate::kernels::lanes::LaneKernel) {
        assert_eq!((k.lanes, k.width, k.min_live), (2, 2, 2));
        let mut next = rng(0x9a1e);
        let data: Vec<u8> = (0..400 * 64 + 3).map(|_| next() as u8).collect();
        for nblocks in (0..=9).chain([100]) {
            for stride in [64usize, 128, 64 * 3 + 8] {
                for (o0, o1) in [(0usize, 64 * 50), (1, 3), (7, 7)] {
                    let need = match nblocks {
                        0 => 0,
                        n => (n - 1) * stride + 64,
                    };
                    let lanes = [&data[o0..o0 + need], &data[o1..o1 + need]];
                    let init: [[u32; 4]; 2] =
                        core::array::from_fn(|_| core::array::from_fn(|_| next() as u32));
                    let mut state = [0u32; 8];
                    for (l, words) in init.iter().enumerate() {
                        k.set_lane(&mut state, l, words);
                    }
                    (k.strided)(&mut state, &lanes, nblocks, stride);
                    for (l, lane) in lanes.iter().enumerate() {
                        let blocks: Vec<[u8; 64]> = (0..nblocks)
                            .map(|b| lane[b * stride..][..64].try_into().unwrap())
                            .collect();
                        let mut want = init[l];
                        portable::compress(&mut want, &blocks);
                        assert_eq!(
                            k.get_lane(&state, l),
                            want,
                            "lane {l}: {nblocks} blocks, stride {stride}, at {o0}/{o1}"
                        );
                    }
                }
            }
        }
    }

    /// Blocks at every offset from an aligned address, through every variant and
    /// through `compress` and `compress_gpr`, which pick one.
    #[test]
    #[cfg_attr(miri, ignore = "inline assembly")]
    fn unaligned_blocks_and_the_variant_picked() {
        eprintln!(
            "x86_64 kernel: compress runs the {} variant here",
            match (super::prefer_avx512(), super::has_bmi1()) {
                (true, _) => "avx512",
                (false, true) => "bmi1",
                (false, false) => "plain",
            }
        );
        let mut next = rng(0xa11);
        let data: Vec<u8> = (0..9 * 64 + 64).map(|_| next() as u8).collect();
        let mut all = variants();
        all.push(("compress", super::compress));
        all.push(("compress_gpr", super::compress_gpr));
        for off in 0..64 {
            let blocks = data[off..][..9 * 64].as_chunks::<64>().0;
            let mut want = [9, 8, 7, 6];
            portable::compress(&mut want, blocks);
            for (name, f) in &all {
                let mut s = [9, 8, 7, 6];
                f(&mut s, blocks);
                assert_eq!(s, want, "{name}: blocks at offset {off}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "inline assembly")]
    fn empty_input_leaves_state_alone() {
        for (name, f) in variants() {
            let mut s = [5, 6, 7, 8];
            f(&mut s, &[]);
            assert_eq!(s, [5, 6, 7, 8], "{name}");
        }
    }
}
