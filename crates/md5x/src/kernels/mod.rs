//! Block functions only: each kernel updates an MD5 state with whole 64-byte blocks.
//!
//! No buffering, padding or policy lives here; `hasher.rs` and the schedulers above
//! call these through [`crate::Backend`].
//!
//! The x86-64 kernels (assembly, `cpuid`, intrinsics) are compiled only where
//! pointers are 64 bits wide, as every `cfg` here says with `target_pointer_width =
//! "64"`: the assembly reads lane pointers from tables of 8-byte entries and uses
//! `usize` operands as whole 64-bit registers. The x32 ABI
//! (`x86_64-unknown-linux-gnux32`), an x86-64 target with 4-byte pointers, runs the
//! portable kernels.

/// MD5's 64 steps as 16 quads, for the kernels written in assembly: expands to
/// `concat!` of `$quad!(ARGS, ROUND, i, w0, w1, w2, w3, s0, s1, s2, s3)` for each quad,
/// where `i` is its first step, `w0..w3` the message words of its four steps and
/// `s0..s3` their rotations (RFC 1321's schedule, as [`word_index`] and [`R`] give it:
/// checked by this module's test, and through the kernels' tests against the portable
/// kernel).
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
macro_rules! md5_quads {
    ($quad:ident!($($args:tt)*)) => {
        concat!(
            $quad!($($args)*, F, 0, 0, 1, 2, 3, 7, 12, 17, 22),
            $quad!($($args)*, F, 4, 4, 5, 6, 7, 7, 12, 17, 22),
            $quad!($($args)*, F, 8, 8, 9, 10, 11, 7, 12, 17, 22),
            $quad!($($args)*, F, 12, 12, 13, 14, 15, 7, 12, 17, 22),
            $quad!($($args)*, G, 16, 1, 6, 11, 0, 5, 9, 14, 20),
            $quad!($($args)*, G, 20, 5, 10, 15, 4, 5, 9, 14, 20),
            $quad!($($args)*, G, 24, 9, 14, 3, 8, 5, 9, 14, 20),
            $quad!($($args)*, G, 28, 13, 2, 7, 12, 5, 9, 14, 20),
            $quad!($($args)*, H, 32, 5, 8, 11, 14, 4, 11, 16, 23),
            $quad!($($args)*, H, 36, 1, 4, 7, 10, 4, 11, 16, 23),
            $quad!($($args)*, H, 40, 13, 0, 3, 6, 4, 11, 16, 23),
            $quad!($($args)*, H, 44, 9, 12, 15, 2, 4, 11, 16, 23),
            $quad!($($args)*, I, 48, 0, 7, 14, 5, 6, 10, 15, 21),
            $quad!($($args)*, I, 52, 12, 3, 10, 1, 6, 10, 15, 21),
            $quad!($($args)*, I, 56, 8, 15, 6, 13, 6, 10, 15, 21),
            $quad!($($args)*, I, 60, 4, 11, 2, 9, 6, 10, 15, 21),
        )
    };
}

/// A direct loop's prefetches in the SSE2 and AVX2 lane kernels' assembly: for each
/// group `g` in `[$g, ...]` and lane `l` in `[$l, ...]`, lane `$width * g + l`'s
/// pointer read from `{lp}` into `{p}`, and its data `{pf}` bytes on prefetched into L1.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
#[rustfmt::skip]
macro_rules! prefetch_lanes {
    ($width:literal, [$($g:tt),+], $ls:tt) => {
        concat!($(prefetch_lanes!(@group $width, $g, $ls),)+)
    };
    (@group $width:literal, $g:tt, [$($l:tt),+]) => {
        concat!($(
            "mov {p}, qword ptr [{lp} + 8*(", $width, "*", $g, "+", $l, ")]\n",
            "prefetcht0 byte ptr [{p} + {pf}]\n",
        )+)
    };
}

/// A piped loop's step from one block to the next, in the assembly of the three
/// hand-scheduled lane kernels: `{off}`, the offset its copies read, moves to the next
/// block, or stays on this one when it is the last (`{n}` = 1), so the copies never
/// read past a lane's last block (their `SAFETY` comments rest on this); `{p}` is
/// clobbered.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
macro_rules! next_copy_offset {
    () => {
        concat!(
            "cmp {n}, 1\n",
            "lea {p}, [{off} + {stride}]\n",
            "cmovne {off}, {p}\n",
        )
    };
}

/// The top of a hand-scheduled lane kernel's block loop (label `2`), on a 64-byte
/// boundary. These loops are 6 to 26 KiB of straight-line code, far more than the op
/// cache holds, so they run from the decoders, whose throughput depends on where
/// instructions fall in the fetch windows; the padding runs once a call. Without it,
/// the loop sat wherever the linker put the function (16-byte aligned), and so its
/// speed depended on unrelated code: on Zen 3 (AMD EPYC family 25 model 1,
/// 2026-12-01), a change to `many.rs` alone moved AVX2's 3-group kernel 16 bytes and
/// made it 27% slower (0.447 against 0.567 cycles/byte, 8 KiB messages; with the loop
/// aligned 0.40-0.45: `docs/performance.md`, "loop tops on a 64-byte boundary").
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
macro_rules! loop_top {
    () => {
        ".p2align 6\n2:\n"
    };
}

/// Which loop a hand-scheduled lane kernel (`sse2_asm.rs`, `avx2_asm.rs`,
/// `avx512_asm.rs`) runs: *direct*, which reads each block's data from the lanes at the
/// block's start; *piped*, which copies the next block's data into a line scratch while
/// the steps run (see `avx2_asm.rs`); or *staged* (AVX-512 only), which transposes the
/// next block while the steps run (see `avx512_asm.rs`). Chosen by the run's length, or
/// forced (for tests that run every loop at every length).
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
pub(crate) mod run {
    /// Piped from [`PIPED_FROM`] blocks on, direct below.
    pub(crate) const BY_LENGTH: u8 = 0;
    /// Always direct.
    pub(crate) const DIRECT: u8 = 1;
    /// Always piped.
    pub(crate) const PIPED: u8 = 2;
    /// Always staged (AVX-512 only).
    pub(crate) const STAGED: u8 = 3;
    /// Staged from [`PIPED_FROM`] blocks on, direct below (AVX-512 only): what Intel's
    /// cores run.
    pub(crate) const STAGED_BY_LENGTH: u8 = 4;

    /// The shortest run (in blocks) that goes to the piped or staged loop; shorter
    /// ones run direct. Measured on Zen 4 with AVX2 (`many_report`, 3 groups, see
    /// `avx2_asm.rs`): from memory, 8-block runs lost 18% piped, 16-block runs were
    /// level, 32-block runs gained 40%; in cache, runs of 4 or fewer lost 5-15%. The
    /// AVX-512 and SSE2 kernels were level at 16 blocks too, and on Intel's cores
    /// the staged loop was level to 5-10% slower on runs of 1-8 blocks.
    pub(crate) const PIPED_FROM: usize = 16;

    /// A kernel's loops.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) enum Loop {
        Direct,
        Piped,
        Staged,
    }

    /// Whether `run` is one of the kinds a kernel without a staged loop (SSE2's,
    /// AVX2's) takes; their `compress` asserts it when compiling, rather than run a
    /// staged kind direct.
    pub(crate) const fn unstaged(run: u8) -> bool {
        matches!(run, BY_LENGTH | DIRECT | PIPED)
    }

    /// The loop a run of `nblocks` blocks takes under `run` (one of the constants
    /// above).
    pub(crate) const fn pick(run: u8, nblocks: usize) -> Loop {
        let long = nblocks >= PIPED_FROM;
        match run {
            DIRECT => Loop::Direct,
            PIPED => Loop::Piped,
            STAGED => Loop::Staged,
            STAGED_BY_LENGTH if long => Loop::Staged,
            BY_LENGTH if long => Loop::Piped,
            _ => Loop::Direct,
        }
    }
}

/// Ask for the first `lines` cache lines of `data` (fewer if it is shorter) to be
/// brought into L2, ahead of a kernel reading them: a hint, which changes no result.
/// Does nothing off x86-64.
#[inline]
pub(crate) fn prefetch_l2(data: &[u8], lines: usize) {
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    for i in 0..lines.min(data.len().div_ceil(64)) {
        // SAFETY: `prefetcht1` reads nothing the program sees and cannot fault (the
        // address is inside `data` anyway), and the SSE it needs is part of x86-64.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
            _mm_prefetch::<_MM_HINT_T1>(data.as_ptr().wrapping_add(64 * i).cast());
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64", not(miri))))]
    let _ = (data, lines);
}

pub(crate) mod avx2;
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
mod avx2_asm;
pub(crate) mod avx512;
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
mod avx512_asm;
#[cfg(feature = "std")]
pub(crate) mod clock;
pub(crate) mod cpu;
pub(crate) mod lanes;
pub(crate) mod neon;
pub(crate) mod portable;
pub(crate) mod simd128;
pub(crate) mod sse2;
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
mod sse2_asm;
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64"))]
pub(crate) mod x86_64;

/// MD5's 64 additive constants, `floor(abs(sin(i + 1)) * 2^32)` (RFC 1321, section 3.4).
pub(crate) const K: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

/// Rotation amounts, four per round (RFC 1321, section 3.4).
pub(crate) const R: [[u32; 4]; 4] = [
    [7, 12, 17, 22],
    [5, 9, 14, 20],
    [4, 11, 16, 23],
    [6, 10, 15, 21],
];

/// Message word used by step `i`: identity in round 1, then `5i+1`, `3i+5`, `7i` (mod 16).
pub(crate) const fn word_index(i: usize) -> usize {
    match i / 16 {
        0 => i,
        1 => (5 * i + 1) % 16,
        2 => (3 * i + 5) % 16,
        _ => (7 * i) % 16,
    }
}

#[cfg(all(test, target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
mod tests {
    use super::{word_index, R};

    /// `md5_quads!`, the schedule the assembly kernels are written from, is
    /// `word_index` and `R` step by step.
    #[test]
    fn md5_quads_is_the_md5_schedule() {
        macro_rules! text {
            (_, $r:ident, $($n:expr),+) => {
                concat!(stringify!($r), $(" ", $n),+, ";")
            };
        }
        let quads: Vec<&str> = md5_quads!(text!(_)).split_terminator(';').collect();
        assert_eq!(quads.len(), 16);
        for (q, line) in quads.iter().enumerate() {
            let f: Vec<&str> = line.split(' ').collect();
            let n: Vec<usize> = f[1..].iter().map(|x| x.parse().unwrap()).collect();
            assert_eq!(f[0], ["F", "G", "H", "I"][q / 4], "quad {q}");
            assert_eq!(n[0], 4 * q, "quad {q}");
            for k in 0..4 {
                assert_eq!(n[1 + k], word_index(4 * q + k), "quad {q}, step {k}");
                assert_eq!(n[5 + k] as u32, R[q / 4][k], "quad {q}, step {k}");
            }
        }
    }

    /// Each run kind takes the loop its documentation gives, the by-length kinds
    /// switch at `PIPED_FROM` blocks, and `unstaged` holds for exactly those that never
    /// stage.
    #[test]
    fn each_run_kind_picks_its_loop() {
        use super::run::{
            pick, unstaged, Loop, BY_LENGTH, DIRECT, PIPED, PIPED_FROM, STAGED, STAGED_BY_LENGTH,
        };
        for n in [1, 2, PIPED_FROM - 1, PIPED_FROM, PIPED_FROM + 1, 1 << 20] {
            let long = n >= PIPED_FROM;
            assert_eq!(pick(DIRECT, n), Loop::Direct, "{n} blocks");
            assert_eq!(pick(PIPED, n), Loop::Piped, "{n} blocks");
            assert_eq!(pick(STAGED, n), Loop::Staged, "{n} blocks");
            let by_length = if long { Loop::Piped } else { Loop::Direct };
            assert_eq!(pick(BY_LENGTH, n), by_length, "{n} blocks");
            let staged_by_length = if long { Loop::Staged } else { Loop::Direct };
            assert_eq!(pick(STAGED_BY_LENGTH, n), staged_by_length, "{n} blocks");
        }
        // The kinds SSE2's and AVX2's kernels accept are those that never stage.
        for run in [BY_LENGTH, DIRECT, PIPED, STAGED, STAGED_BY_LENGTH] {
            let stages = pick(run, 1 << 20) == Loop::Staged;
            assert_eq!(unstaged(run), !stages, "run kind {run}");
        }
    }
}
