//! AVX2 with 1 to 3 interleaved 8-lane groups (8 to 24 messages), scheduled by hand in
//! inline assembly: the lane kernel `avx2.rs` hands out.
//!
//! The generic lane algorithm (`lanes.rs` over `avx2.rs`'s primitives) leaves the
//! order of each step's adds and the register allocation to LLVM, which adds `F` before
//! `a + m + K` in some steps (a longer dependent chain) and spills with three groups.
//! On Zen 3, `docs/bench/step_probe.c` ran three interleaved step chains at about 2.9
//! bytes/cycle in the order below, and at 2.14 in LLVM's, where the generic kernel runs
//! (2.05-2.15). Here every step is written out in the short-chain order, with fixed
//! registers:
//!
//! - `ymm0..ymm3`, `ymm4..ymm7`, `ymm8..ymm11`: the state words of groups 0, 1, 2 (as
//!   many as the kernel has);
//! - `ymm12`, `ymm13`: temporaries (register renaming gives each step its own);
//! - `ymm14`: the piped run's copies (below).
//!
//! A step of one group (`b` is the newest word; `a + m + K` is formed while the
//! previous step runs, so the dependent chain is the round function, one add, the
//! rotation and the add of `b`):
//!
//! - F: `a += m; a += K; t = c ^ d; t &= b; t ^= d; a += t; rotl; a += b`
//! - G: `a += m; a += K; t = !d & c; a += t; t = b & d; a += t; rotl; a += b`
//! - H: `a += m; a += K; t = c ^ d; t ^= b; a += t; rotl; a += b`
//! - I: `a += m; a += K - 1; t = !b & d; t ^= c; a -= t; rotl; a += b`
//!   (`a + I = (a - 1) - !I`, see `lanes::Lane::not_i`)
//!
//! `rotl` is two shifts and an OR, or one byte shuffle for 16. The groups' steps follow
//! each other (step `i` of groups 0, 1, 2, then step `i + 1`), as in the probe; the
//! out-of-order core overlaps them.
//!
//! Each block starts by transposing the lanes' message words into a scratch area (0.5
//! KiB a group), which the steps read as memory operands (as they read the step
//! constants from a table of pre-splatted rows): for each 16-byte quarter, lane `i`'s
//! bytes and lane `i + 4`'s are loaded into the two halves of one register
//! (`vinserti128` from memory), and two rounds of unpacks finish the job, with no
//! cross-half permute (`vperm2i128`, the usual last step, runs one every 3 cycles on Zen
//! 1, where an unpack or a `vinserti128` runs one a cycle). The state goes through
//! memory between blocks, which frees all 16 registers for the transposition.
//!
//! Where the transposition reads its 16-byte quarters from, two kinds of run:
//!
//! - **direct** (runs shorter than `kernels::run::PIPED_FROM` blocks): straight from
//!   the lanes' data, each lane's 64-byte line visited once per quarter.
//! - **piped** (longer runs): from a line scratch (64 bytes a lane) that the previous
//!   block filled. While a block's steps run, each quad copies a few 32-byte halves of
//!   the lanes' next blocks there (and prefetches those lanes' data further ahead), so
//!   the loads from the lanes have a whole block's steps to arrive, spread out rather
//!   than in a burst, and each lane's line is read once, in two halves close together.
//!   A prologue copies the first block; after the last block the copies read it again
//!   (the offset stays put), so nothing past a lane's last block is read.
//!
//! Why the piped run: messages laid end to end at a multiple of 4 KiB (8 KiB, 1 MiB:
//! object-store parts, chunks of one buffer) start at the same offset in a page, so
//! every lane's current line falls in one L1 set (8 ways on AMD's cores, 12 on Intel's)
//! and lines are evicted between the direct run's visits; and a direct run's loads come
//! all at once at the start of a block, where the steps wait for them. Measured on Zen
//! 4 (AMD EPYC family 25 model 17, 2026-11-25; `MD5X_BACKENDS=avx2 many_report`, 3
//! groups, bytes/cycle, direct -> piped):
//!
//! | messages | direct | piped |
//! |---|---:|---:|
//! | 96 of 8 KiB end to end (in L2) | 1.91 | 2.42-2.48 |
//! | the same, 64 bytes apart | 2.37 | 2.44-2.51 |
//! | 16,384 of 8 KiB (from memory) | 1.64 | 2.18-2.21 |
//! | 32,768 of 4 KiB (from memory) | 1.53-1.55 | 2.06-2.07 |
//! | 32,768 of 2 KiB (from memory) | 1.22-1.26 | 1.71-1.73 |
//! | 131,072 of 1 KiB (from memory) | 1.03-1.05 | 1.06-1.07 |
//! | 131,072 of 512 B (from memory) | 0.94-0.95 | 0.77-0.78 |
//!
//! Short runs pay for the prologue and the copies without the gain (and from memory,
//! their first blocks' misses, spread over the quads, no longer overlap): hence
//! `kernels::run::PIPED_FROM`. Also tried: copying every lane's line at the start of
//! the block instead of spread over the quads (8 KiB in L2: 2.16), a burst of
//! prefetches at the block's start instead of one beside each copy (1 KiB from memory:
//! 0.99 against 1.07), and, in the direct run, visiting the lines quarter by quarter
//! across all groups rather than group by group (1.47 at 8 KiB in L2: the aliasing made
//! visible).
//!
//! Measured on Zen 1 before the piped run (AMD EPYC family 23 model 1, 2026-11-23), in
//! the same process as the generic kernel (`many_report`'s `avx2 xG` and `avx2 xG
//! generic` rows), at 8 KiB: 1 group 3-5% faster, 2 groups 7-8%, 3 groups 5-6% (and
//! 6-11% from memory).
//!
//! Everything here is checked against the portable kernel by `avx2.rs`'s tests, both
//! loops, with and without the prefetch, at 1 to 9 blocks, strides of one block and
//! more, and lanes that end at an unreadable page.

/// The register holding word `$w` (0..3, that is a, b, c, d at a quad's start) of group
/// `$g`.
#[rustfmt::skip]
macro_rules! y {
    (0, 0) => { "ymm0" }; (0, 1) => { "ymm1" }; (0, 2) => { "ymm2" }; (0, 3) => { "ymm3" };
    (1, 0) => { "ymm4" }; (1, 1) => { "ymm5" }; (1, 2) => { "ymm6" }; (1, 3) => { "ymm7" };
    (2, 0) => { "ymm8" }; (2, 1) => { "ymm9" }; (2, 2) => { "ymm10" }; (2, 3) => { "ymm11" };
}

/// `a = rotl(a, s)`, with `ymm13` as the temporary.
#[rustfmt::skip]
macro_rules! rotl {
    ($a:expr, 16) => {
        concat!("vpshufb ", $a, ", ", $a, ", ymmword ptr [{rot16}]\n")
    };
    ($a:expr, $s:literal) => {
        concat!(
            "vpslld ymm13, ", $a, ", ", $s, "\n",
            "vpsrld ", $a, ", ", $a, ", 32-", $s, "\n",
            "vpor ", $a, ", ", $a, ", ymm13\n",
        )
    };
}

/// `a += m[w] + K[i]` for group `$g`: two adds from memory.
#[rustfmt::skip]
macro_rules! sum {
    ($g:tt, $i:expr, $w:literal, $a:expr) => {
        concat!(
            "vpaddd ", $a, ", ", $a, ", ymmword ptr [{msg} + 32*(16*", stringify!($g), "+", $w, ")]\n",
            "vpaddd ", $a, ", ", $a, ", ymmword ptr [{k} + 32*(", stringify!($i), ")]\n",
        )
    };
}

/// One step of one group: `$r` selects the round, `$a..$d` are the roles' word numbers.
#[rustfmt::skip]
macro_rules! step {
    (F, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, y!($g, $a)),
            "vpxor ymm12, ", y!($g, $c), ", ", y!($g, $d), "\n",
            "vpand ymm12, ymm12, ", y!($g, $b), "\n",
            "vpxor ymm12, ymm12, ", y!($g, $d), "\n",
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ymm12\n",
            rotl!(y!($g, $a), $s),
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ", y!($g, $b), "\n",
        )
    };
    (G, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, y!($g, $a)),
            "vpandn ymm12, ", y!($g, $d), ", ", y!($g, $c), "\n",
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ymm12\n",
            "vpand ymm12, ", y!($g, $b), ", ", y!($g, $d), "\n",
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ymm12\n",
            rotl!(y!($g, $a), $s),
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ", y!($g, $b), "\n",
        )
    };
    (H, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, y!($g, $a)),
            "vpxor ymm12, ", y!($g, $c), ", ", y!($g, $d), "\n",
            "vpxor ymm12, ymm12, ", y!($g, $b), "\n",
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ymm12\n",
            rotl!(y!($g, $a), $s),
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ", y!($g, $b), "\n",
        )
    };
    (I, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, y!($g, $a)),
            "vpandn ymm12, ", y!($g, $b), ", ", y!($g, $d), "\n",
            "vpxor ymm12, ymm12, ", y!($g, $c), "\n",
            "vpsubd ", y!($g, $a), ", ", y!($g, $a), ", ymm12\n",
            rotl!(y!($g, $a), $s),
            "vpaddd ", y!($g, $a), ", ", y!($g, $a), ", ", y!($g, $b), "\n",
        )
    };
}

/// One step of every group in `[$g, ...]`, group after group.
macro_rules! steps {
    ([$($g:tt),+], $r:ident, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!($(step!($r, $g, $i, $w, $s, $a, $b, $c, $d),)+)
    };
}

/// Four steps of a round (message words `$w0..$w3`, rotations `$s0..$s3`) of every
/// group in `$gs` (`$ng` of them), after the quad's share of a piped run's copies
/// (`$copy`: `none`, `copy` or `copy_pf`); the roles of the state words rotate
/// `(a, b, c, d) -> (d, a, b, c)` from step to step.
macro_rules! quad {
    ($gs:tt, $ng:literal, $copy:ident, $r:ident, $i:literal, $w0:literal, $w1:literal,
     $w2:literal, $w3:literal, $s0:tt, $s1:tt, $s2:tt, $s3:tt) => {
        concat!(
            copy_halves!($copy, $gs, $ng, $i),
            steps!($gs, $r, $i, $w0, $s0, 0, 1, 2, 3),
            steps!($gs, $r, $i + 1, $w1, $s1, 3, 0, 1, 2),
            steps!($gs, $r, $i + 2, $w2, $s2, 2, 3, 0, 1),
            steps!($gs, $r, $i + 3, $w3, $s3, 1, 2, 3, 0),
        )
    };
}

/// Byte offset of the line scratch in the scratch area (`{lines}` in the assembly),
/// after the 48 rows of transposed words.
const LINES_AT: usize = 48 * 32;

/// Load quarter `$q` (words `4q..4q+3`) of group `$g`'s eight blocks, from the lanes
/// (`direct`) or the line scratch (`piped`), and store it transposed: word `w` of lane
/// `l` to lane `l` of scratch row `16g + w`.
///
/// Row `i` (0..3) is lane `i`'s 16 bytes in the low half and lane `i + 4`'s in the high
/// half (`vinserti128` from memory); two rounds of unpacks within the halves finish
/// the transposition. No cross-half permute: `vperm2i128` runs one every 3 cycles on
/// Zen 1.
#[rustfmt::skip]
macro_rules! transpose_quarter {
    ($from:ident, $g:literal, $q:literal) => {
        concat!(
            load_row!($from, $g, $q, 0, "0"), load_row!($from, $g, $q, 1, "1"),
            load_row!($from, $g, $q, 2, "2"), load_row!($from, $g, $q, 3, "3"),
            // Pairs of lanes: words (0, 1) and (2, 3), lanes interleaved.
            "vpunpckldq ymm4, ymm0, ymm1\n",
            "vpunpckhdq ymm5, ymm0, ymm1\n",
            "vpunpckldq ymm6, ymm2, ymm3\n",
            "vpunpckhdq ymm7, ymm2, ymm3\n",
            // Four lanes in each half: one word.
            "vpunpcklqdq ymm0, ymm4, ymm6\n",
            "vpunpckhqdq ymm1, ymm4, ymm6\n",
            "vpunpcklqdq ymm2, ymm5, ymm7\n",
            "vpunpckhqdq ymm3, ymm5, ymm7\n",
            store_word!($g, $q, 0, "ymm0"), store_word!($g, $q, 1, "ymm1"),
            store_word!($g, $q, 2, "ymm2"), store_word!($g, $q, 3, "ymm3"),
        )
    };
}

/// Row `$i` of a quarter's transposition into `ymm$i`: quarter `$q` of lane `8g + i`'s
/// current block, and above it that of lane `8g + i + 4`; read from the lanes at
/// `{off}` (`direct`) or from their copies in the line scratch (`piped`).
#[rustfmt::skip]
macro_rules! load_row {
    (direct, $g:literal, $q:literal, $i:literal, $y:literal) => {
        concat!(
            "mov {p}, qword ptr [{lp} + 8*(8*", $g, "+", $i, ")]\n",
            "vmovdqu xmm", $y, ", xmmword ptr [{p} + {off} + 16*", $q, "]\n",
            "mov {p}, qword ptr [{lp} + 8*(8*", $g, "+4+", $i, ")]\n",
            "vinserti128 ymm", $y, ", ymm", $y, ", xmmword ptr [{p} + {off} + 16*", $q, "], 1\n",
        )
    };
    (piped, $g:literal, $q:literal, $i:literal, $y:literal) => {
        concat!(
            "vmovdqa xmm", $y, ", xmmword ptr [{msg} + {lines} + 64*(8*", $g, "+", $i, ") + 16*", $q, "]\n",
            "vinserti128 ymm", $y, ", ymm", $y,
            ", xmmword ptr [{msg} + {lines} + 64*(8*", $g, "+4+", $i, ") + 16*", $q, "], 1\n",
        )
    };
}

/// Store word `4q + w` of group `$g`'s eight lanes to its scratch row.
#[rustfmt::skip]
macro_rules! store_word {
    ($g:literal, $q:literal, $w:literal, $y:literal) => {
        concat!("vmovdqa ymmword ptr [{msg} + 32*(16*", $g, "+4*", $q, "+", $w, ")], ", $y, "\n")
    };
}

/// Half `h` of the lanes' next blocks, as an assembler expression, for the quad at step
/// `$i` and its `$j`-th copy (`$ng` copies a quad): `h = (i / 4) * ng + j`, so the 16
/// quads cover the `16 * ng` halves of the `8 * ng` lanes once a block. Half `h` is
/// bytes `32 * (h % 2)..` of lane `h / 2`'s block.
macro_rules! half {
    ($ng:literal, $i:literal, $j:tt) => {
        concat!("((", $i, "/4)*", $ng, "+", $j, ")")
    };
}

/// A piped run's share of copies at the quad starting at step `$i`: for each `j` in
/// `[$j, ...]`, half `h` of the lanes' blocks at `{off}` (see `half!`) into the line
/// scratch, and with `copy_pf` a prefetch of the same half `{pf}` bytes further on. The
/// lane's pointer is loaded again for each half: `{p}` is the only spare register.
#[rustfmt::skip]
macro_rules! copy_halves {
    (none, $js:tt, $ng:literal, $i:literal) => { "" };
    (copy, [$($j:tt),+], $ng:literal, $i:literal) => {
        concat!($(
            "mov {p}, qword ptr [{lp} + 8*(", half!($ng, $i, $j), "/2)]\n",
            "vmovdqu ymm14, ymmword ptr [{p} + {off} + 32*(",
            half!($ng, $i, $j), "-2*(", half!($ng, $i, $j), "/2))]\n",
            "vmovdqa ymmword ptr [{msg} + {lines} + 32*", half!($ng, $i, $j), "], ymm14\n",
        )+)
    };
    (copy_pf, [$($j:tt),+], $ng:literal, $i:literal) => {
        concat!($(
            copy_halves!(copy, [$j], $ng, $i),
            "prefetcht0 byte ptr [{p} + {pf} + 32*(",
            half!($ng, $i, $j), "-2*(", half!($ng, $i, $j), "/2))]\n",
        )+)
    };
}

/// Copy the blocks at `{off}` of the 8 lanes of each group in `[$g, ...]` to the line
/// scratch (a piped run's prologue).
#[rustfmt::skip]
macro_rules! copy_lines {
    ([$($g:tt),+]) => {
        concat!($(
            copy_line!($g, 0), copy_line!($g, 1), copy_line!($g, 2), copy_line!($g, 3),
            copy_line!($g, 4), copy_line!($g, 5), copy_line!($g, 6), copy_line!($g, 7),
        )+)
    };
}

/// Copy lane `8g + l`'s block at `{off}` to its line in the line scratch.
#[rustfmt::skip]
macro_rules! copy_line {
    ($g:literal, $l:literal) => {
        concat!(
            "mov {p}, qword ptr [{lp} + 8*(8*", $g, "+", $l, ")]\n",
            "vmovdqu ymm14, ymmword ptr [{p} + {off}]\n",
            "vmovdqu ymm15, ymmword ptr [{p} + {off} + 32]\n",
            "vmovdqa ymmword ptr [{msg} + {lines} + 64*(8*", $g, "+", $l, ")], ymm14\n",
            "vmovdqa ymmword ptr [{msg} + {lines} + 64*(8*", $g, "+", $l, ") + 32], ymm15\n",
        )
    };
}

/// Group `$g`'s 4 state rows loaded into its registers (`load`), or added to them and
/// stored back (`add_store`).
#[rustfmt::skip]
macro_rules! state_rows {
    (load, $g:tt) => {
        concat!(
            "vmovdqu ", y!($g, 0), ", ymmword ptr [{st} + 32*(4*", $g, "+0)]\n",
            "vmovdqu ", y!($g, 1), ", ymmword ptr [{st} + 32*(4*", $g, "+1)]\n",
            "vmovdqu ", y!($g, 2), ", ymmword ptr [{st} + 32*(4*", $g, "+2)]\n",
            "vmovdqu ", y!($g, 3), ", ymmword ptr [{st} + 32*(4*", $g, "+3)]\n",
        )
    };
    (add_store, $g:tt) => {
        concat!(
            add_store!($g, 0), add_store!($g, 1), add_store!($g, 2), add_store!($g, 3),
        )
    };
}

/// Row `$w` of group `$g`'s state (in memory) += its register, and stored back.
#[rustfmt::skip]
macro_rules! add_store {
    ($g:tt, $w:tt) => {
        concat!(
            "vpaddd ", y!($g, $w), ", ", y!($g, $w), ", ymmword ptr [{st} + 32*(4*", $g, "+", $w, ")]\n",
            "vmovdqu ymmword ptr [{st} + 32*(4*", $g, "+", $w, ")], ", y!($g, $w), "\n",
        )
    };
}

/// The loop over the blocks of every group in `[$g, ...]` (`$ng` of them): a direct run
/// (`$pre` first in each block: the prefetches, or nothing), or a piped one (`$copy`:
/// `copy` or `copy_pf`).
macro_rules! blocks {
    (direct, [$($g:tt),+], $ng:literal, $pre:expr) => {
        concat!(
            "/* no line scratch (at {lines}) in a direct run */\n",
            loop_top!(),
            $pre,
            $(
                transpose_quarter!(direct, $g, 0),
                transpose_quarter!(direct, $g, 1),
                transpose_quarter!(direct, $g, 2),
                transpose_quarter!(direct, $g, 3),
            )+
            $(state_rows!(load, $g),)+
            md5_quads!(quad!([$($g),+], $ng, none)),
            $(state_rows!(add_store, $g),)+
            "add {off}, {stride}\n",
            "add {pf}, {stride}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
    (piped, [$($g:tt),+], $ng:literal, $copy:ident) => {
        concat!(
            copy_lines!([$($g),+]),
            loop_top!(),
            $(
                transpose_quarter!(piped, $g, 0),
                transpose_quarter!(piped, $g, 1),
                transpose_quarter!(piped, $g, 2),
                transpose_quarter!(piped, $g, 3),
            )+
            $(state_rows!(load, $g),)+
            // The copies' block: the next one, or this one again after the last.
            next_copy_offset!(),
            md5_quads!(quad!([$($g),+], $ng, $copy)),
            $(state_rows!(add_store, $g),)+
            "add {pf}, {stride}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// The step constants as the steps add them (`lanes::STEP_K`: round 4's lowered by
/// one), each splat across a 32-byte row.
#[repr(C, align(32))]
struct Rows<const N: usize>([[u32; 8]; N]);

static K_ROWS: Rows<64> = {
    let mut rows = [[0u32; 8]; 64];
    let mut i = 0;
    while i < 64 {
        rows[i] = [super::lanes::STEP_K[i]; 8];
        i += 1;
    }
    Rows(rows)
};

/// `vpshufb`'s control for a rotation by 16 (swap the halves of every word).
static ROT16: Rows<1> = Rows([[
    0x0100_0302,
    0x0504_0706,
    0x0908_0b0a,
    0x0d0c_0f0e,
    0x0100_0302,
    0x0504_0706,
    0x0908_0b0a,
    0x0d0c_0f0e,
]]);

/// Compress `nblocks` blocks of `8 * G` lanes (`G` groups of 8, 1 to 3; state layout as
/// `lanes::LaneKernel`), block `b` of lane `l` at `lanes[l] + b * stride`; with
/// `PREFETCH`, each lane's block 4 ahead is prefetched into L1. `RUN` picks the loop
/// (see `kernels::run`).
///
/// # Safety
///
/// The CPU has AVX2; `G` is 1, 2 or 3; `state` is `32 * G` words; `lanes` has `8 * G`
/// pointers, each valid for reads of `(nblocks - 1) * stride + 64` bytes.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn compress<const G: usize, const PREFETCH: bool, const RUN: u8>(
    state: &mut [u32],
    lanes: &[*const u8],
    nblocks: usize,
    stride: usize,
) {
    // Only AVX-512 has a staged loop: its run kinds fail here when compiling.
    const { assert!(super::run::unstaged(RUN)) };
    if nblocks == 0 {
        return;
    }
    debug_assert!((1..=3).contains(&G) && state.len() == 32 * G && lanes.len() == 8 * G);
    let piped = super::run::pick(RUN, nblocks) == super::run::Loop::Piped;
    // The transposed message words (16 rows a group), then the line scratch (64 bytes
    // a lane, at `LINES_AT`): each written before it is read.
    let mut msg = core::mem::MaybeUninit::<Rows<{ LINES_AT / 32 + 48 }>>::uninit();
    // The prefetches' offset from each lane's start: 4 blocks ahead of the block being
    // hashed (3 ahead of the block a piped run copies). Prefetches cannot fault, so
    // those past the end of a lane are harmless.
    let pf = stride.wrapping_mul(4);
    macro_rules! go {
        ($gs:tt, $ng:literal) => {
            match (piped, PREFETCH) {
                (false, true) => go!(blocks!(direct, $gs, $ng, prefetch_lanes!(8, $gs, [0, 1, 2, 3, 4, 5, 6, 7]))),
                (false, false) => go!(blocks!(direct, $gs, $ng, "")),
                (true, true) => go!(blocks!(piped, $gs, $ng, copy_pf)),
                (true, false) => go!(blocks!(piped, $gs, $ng, copy)),
            }
        };
        ($code:expr) => {
            core::arch::asm!(
                $code,
                // Clean upper halves before any SSE code runs: LLVM adds this after its
                // own 256-bit code, not after `asm!` (Intel cores before Skylake pay a
                // state transition otherwise, later ones a false dependency on every
                // SSE instruction).
                "vzeroupper",
                st = in(reg) state.as_mut_ptr(),
                lp = in(reg) lanes.as_ptr(),
                msg = in(reg) msg.as_mut_ptr(),
                k = in(reg) K_ROWS.0.as_ptr(),
                rot16 = in(reg) ROT16.0.as_ptr(),
                lines = const LINES_AT,
                stride = in(reg) stride,
                n = inout(reg) nblocks => _,
                off = inout(reg) 0usize => _,
                pf = inout(reg) pf => _,
                p = out(reg) _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
                options(nostack),
            )
        };
    }
    // SAFETY: the caller guarantees AVX2, and for `G` groups a state of `32 * G` words
    // and `8 * G` lanes whose blocks are readable at `off = b * stride` for
    // `b < nblocks`. Either loop runs `nblocks` (> 0) times and reads the lanes only at
    // such offsets: the direct one at `off` of the block it hashes; the piped one at 0
    // (its prologue) and then at `off` of the next block, which stays at the last
    // block's offset once no block follows (`cmp n, 1` before the step). Both read 64
    // bytes a lane there (and prefetch, which never faults), write only the state's
    // `4 * G` rows and `msg` (rows of transposed words at 0, the line scratch at
    // `LINES_AT`; 32-byte aligned, as `vmovdqa` needs), read the two constant tables,
    // and clobber only the registers named (all 16 vector registers: `vzeroupper`
    // zeroes the upper halves of those the kernel does not use too).
    unsafe {
        match G {
            1 => go!([0], 1),
            2 => go!([0, 1], 2),
            _ => go!([0, 1, 2], 3),
        }
    }
}
