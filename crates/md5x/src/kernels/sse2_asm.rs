//! SSE2 with 1 to 3 interleaved 4-lane groups (4 to 12 messages), scheduled by hand in
//! inline assembly: the lane kernel `sse2.rs` hands out. The same design as
//! `avx2_asm.rs` (read that file's docs first) in SSE2's two-operand forms, with no
//! VEX encoding, so it runs on every x86-64 CPU.
//!
//! Registers: `xmm0..xmm3`, `xmm4..xmm7`, `xmm8..xmm11` hold the state words of groups
//! 0, 1, 2; `xmm12` and `xmm13` are temporaries (each step copies a word into one
//! before changing it: two-operand instructions overwrite their first operand, and the
//! copy is eliminated at rename); `xmm14` carries the piped run's copies.
//!
//! A step of one group (`b` is the newest word):
//!
//! - F: `a += m; a += K; t = c; t ^= d; t &= b; t ^= d; a += t; rotl; a += b`
//! - G: `a += m; a += K; t = d; t = !t & c; a += t; t = b; t &= d; a += t; rotl; a += b`
//! - H: `a += m; a += K; t = c; t ^= d; t ^= b; a += t; rotl; a += b`
//! - I: `a += m; a += K - 1; t = b; t = !t & d; t ^= c; a -= t; rotl; a += b`
//!
//! `rotl` is a copy, two shifts and an OR, or for 16 two word shuffles (`pshuflw`,
//! `pshufhw`: SSE2 has no byte shuffle). The message rows and step constants are
//! memory operands, 16-byte aligned as SSE2 requires.
//!
//! With `VL` (`compress`'s last parameter), the steps are AVX-512VL's instead, on the
//! same registers and rows, as `avx512_asm.rs` writes them for 16 lanes:
//!
//! - `a += m; a += K; t = b; t = f(t, c, d); a += t; vprold a; a += b`
//!
//! where `f` is one `vpternlogd` (for I, `!I`, subtracted): four operations on a
//! step's path. That is the AVX-512 backend's kernel for two to four messages on
//! Intel's cores, three to eight on Zen 4 (`avx512::xmm_lanes`); the loads, the transposition and the loops
//! stay SSE2's. (Legacy SSE and EVEX instructions mix without a penalty here: EVEX
//! writes to `xmm` registers clear their upper bits, so the upper state stays clean.)
//!
//! Each block's rows come from a 4x4 transposition per 16-byte quarter and group
//! (four loads, eight unpacks), read from the lanes (a **direct** run, shorter than
//! `kernels::run::PIPED_FROM` blocks) or from a line scratch that the previous block's
//! quads filled with the lanes' next blocks, 16 bytes at a time (a **piped** run; a
//! prologue copies the first block, and after the last block the copies read it again,
//! so nothing past a lane's last block is read). With `PREFETCH` (Intel's cores, see
//! `sse2::prefetch_pays`), each lane's data 4 blocks ahead is prefetched once a block:
//! at the block's start in a direct run, beside the lane's first copy in a piped one.
//!
//! Everything here is checked against the portable kernel by `sse2.rs`' tests, both
//! loops at 1 to 9 blocks, strides of one block and more, and lanes that end at an
//! unreadable page.

/// The register holding word `$w` (0..3, that is a, b, c, d at a quad's start) of group
/// `$g`.
#[rustfmt::skip]
macro_rules! x {
    (0, 0) => { "xmm0" }; (0, 1) => { "xmm1" }; (0, 2) => { "xmm2" }; (0, 3) => { "xmm3" };
    (1, 0) => { "xmm4" }; (1, 1) => { "xmm5" }; (1, 2) => { "xmm6" }; (1, 3) => { "xmm7" };
    (2, 0) => { "xmm8" }; (2, 1) => { "xmm9" }; (2, 2) => { "xmm10" }; (2, 3) => { "xmm11" };
}

/// `a = rotl(a, s)`, with `xmm13` as the temporary.
#[rustfmt::skip]
macro_rules! rotl {
    ($a:expr, 16) => {
        concat!("pshuflw ", $a, ", ", $a, ", 0xB1\n", "pshufhw ", $a, ", ", $a, ", 0xB1\n")
    };
    ($a:expr, $s:literal) => {
        concat!(
            "movdqa xmm13, ", $a, "\n",
            "pslld ", $a, ", ", $s, "\n",
            "psrld xmm13, 32-", $s, "\n",
            "por ", $a, ", xmm13\n",
        )
    };
}

/// `a += m[w] + K[i]` for group `$g`: two adds from memory.
#[rustfmt::skip]
macro_rules! sum {
    ($g:tt, $i:expr, $w:literal, $a:expr) => {
        concat!(
            "paddd ", $a, ", xmmword ptr [{msg} + 16*(16*", stringify!($g), "+", $w, ")]\n",
            "paddd ", $a, ", xmmword ptr [{k} + 16*(", stringify!($i), ")]\n",
        )
    };
}

/// One step of one group: `$st` selects the instructions (`sse` or `vl`, see the
/// module's docs), `$r` the round; `$a..$d` are the roles' word numbers.
#[rustfmt::skip]
macro_rules! step {
    (vl, F, $($x:tt)*) => { vl_step!("{tf}", "vpaddd", $($x)*) };
    (vl, G, $($x:tt)*) => { vl_step!("{tg}", "vpaddd", $($x)*) };
    (vl, H, $($x:tt)*) => { vl_step!("{th}", "vpaddd", $($x)*) };
    (vl, I, $($x:tt)*) => { vl_step!("{ti}", "vpsubd", $($x)*) };
    (sse, F, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, x!($g, $a)),
            "movdqa xmm12, ", x!($g, $c), "\n",
            "pxor xmm12, ", x!($g, $d), "\n",
            "pand xmm12, ", x!($g, $b), "\n",
            "pxor xmm12, ", x!($g, $d), "\n",
            "paddd ", x!($g, $a), ", xmm12\n",
            rotl!(x!($g, $a), $s),
            "paddd ", x!($g, $a), ", ", x!($g, $b), "\n",
        )
    };
    (sse, G, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, x!($g, $a)),
            "movdqa xmm12, ", x!($g, $d), "\n",
            "pandn xmm12, ", x!($g, $c), "\n",
            "paddd ", x!($g, $a), ", xmm12\n",
            "movdqa xmm12, ", x!($g, $b), "\n",
            "pand xmm12, ", x!($g, $d), "\n",
            "paddd ", x!($g, $a), ", xmm12\n",
            rotl!(x!($g, $a), $s),
            "paddd ", x!($g, $a), ", ", x!($g, $b), "\n",
        )
    };
    (sse, H, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, x!($g, $a)),
            "movdqa xmm12, ", x!($g, $c), "\n",
            "pxor xmm12, ", x!($g, $d), "\n",
            "pxor xmm12, ", x!($g, $b), "\n",
            "paddd ", x!($g, $a), ", xmm12\n",
            rotl!(x!($g, $a), $s),
            "paddd ", x!($g, $a), ", ", x!($g, $b), "\n",
        )
    };
    (sse, I, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            sum!($g, $i, $w, x!($g, $a)),
            "movdqa xmm12, ", x!($g, $b), "\n",
            "pandn xmm12, ", x!($g, $d), "\n",
            "pxor xmm12, ", x!($g, $c), "\n",
            "psubd ", x!($g, $a), ", xmm12\n",
            rotl!(x!($g, $a), $s),
            "paddd ", x!($g, $a), ", ", x!($g, $b), "\n",
        )
    };
}

/// One AVX-512VL step of one group (see the module's docs): `$imm` is the round's
/// `vpternlogd` truth table (one of `lanes.rs`' `TERNLOG_*`, a `const` operand), `$op`
/// the instruction that applies the function's value (`!I` is subtracted, see
/// `lanes::Lane::not_i`); `xmm12` is the temporary.
#[rustfmt::skip]
macro_rules! vl_step {
    ($imm:literal, $op:literal, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            "vpaddd ", x!($g, $a), ", ", x!($g, $a), ", xmmword ptr [{msg} + 16*(16*", stringify!($g), "+", $w, ")]\n",
            "vpaddd ", x!($g, $a), ", ", x!($g, $a), ", xmmword ptr [{k} + 16*(", stringify!($i), ")]\n",
            "vmovdqa xmm12, ", x!($g, $b), "\n",
            "vpternlogd xmm12, ", x!($g, $c), ", ", x!($g, $d), ", ", $imm, "\n",
            $op, " ", x!($g, $a), ", ", x!($g, $a), ", xmm12\n",
            "vprold ", x!($g, $a), ", ", x!($g, $a), ", ", stringify!($s), "\n",
            "vpaddd ", x!($g, $a), ", ", x!($g, $a), ", ", x!($g, $b), "\n",
        )
    };
}

/// One step of every group in `[$g, ...]`, group after group.
macro_rules! steps {
    ($st:ident, [$($g:tt),+], $r:ident, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!($(step!($st, $r, $g, $i, $w, $s, $a, $b, $c, $d),)+)
    };
}

/// Four steps of a round (message words `$w0..$w3`, rotations `$s0..$s3`) of every
/// group in `$gs` (`$ng` of them), after the quad's share of a piped run's copies
/// (`$copy`: `none` or `copy`); the roles of the state words rotate
/// `(a, b, c, d) -> (d, a, b, c)` from step to step.
macro_rules! quad {
    ($gs:tt, $ng:literal, $copy:ident, $st:ident, $r:ident, $i:literal, $w0:literal, $w1:literal,
     $w2:literal, $w3:literal, $s0:tt, $s1:tt, $s2:tt, $s3:tt) => {
        concat!(
            copy_pieces!($copy, $gs, $ng, $i),
            steps!($st, $gs, $r, $i, $w0, $s0, 0, 1, 2, 3),
            steps!($st, $gs, $r, $i + 1, $w1, $s1, 3, 0, 1, 2),
            steps!($st, $gs, $r, $i + 2, $w2, $s2, 2, 3, 0, 1),
            steps!($st, $gs, $r, $i + 3, $w3, $s3, 1, 2, 3, 0),
        )
    };
}

/// Load quarter `$q` (words `4q..4q+3`) of group `$g`'s four blocks, from the lanes
/// (`direct`) or the line scratch (`piped`), and store it transposed: word `w` of lane
/// `l` to lane `l` of scratch row `16g + w`. Rows in `xmm0..xmm3`, through
/// `xmm4..xmm7`.
#[rustfmt::skip]
macro_rules! transpose_quarter {
    ($from:ident, $g:literal, $q:literal) => {
        concat!(
            load_row!($from, $g, $q, 0), load_row!($from, $g, $q, 1),
            load_row!($from, $g, $q, 2), load_row!($from, $g, $q, 3),
            // Pairs of lanes: words (0, 1) and (2, 3), lanes interleaved.
            "movdqa xmm4, xmm0\n", "punpckldq xmm4, xmm1\n",
            "punpckhdq xmm0, xmm1\n",
            "movdqa xmm5, xmm2\n", "punpckldq xmm5, xmm3\n",
            "punpckhdq xmm2, xmm3\n",
            // Four lanes: one word.
            "movdqa xmm6, xmm4\n", "punpcklqdq xmm6, xmm5\n",
            "punpckhqdq xmm4, xmm5\n",
            "movdqa xmm7, xmm0\n", "punpcklqdq xmm7, xmm2\n",
            "punpckhqdq xmm0, xmm2\n",
            store_word!($g, $q, 0, "xmm6"), store_word!($g, $q, 1, "xmm4"),
            store_word!($g, $q, 2, "xmm7"), store_word!($g, $q, 3, "xmm0"),
        )
    };
}

/// Quarter `$q` of lane `4g + i`'s current block into `xmm$i`: from the lane at `{off}`
/// (`direct`) or from its copy in the line scratch (`piped`).
#[rustfmt::skip]
macro_rules! load_row {
    (direct, $g:literal, $q:literal, $i:literal) => {
        concat!(
            "mov {p}, qword ptr [{lp} + 8*(4*", $g, "+", $i, ")]\n",
            "movdqu xmm", $i, ", xmmword ptr [{p} + {off} + 16*", $q, "]\n",
        )
    };
    (piped, $g:literal, $q:literal, $i:literal) => {
        concat!("movdqa xmm", $i, ", xmmword ptr [{msg} + {lines} + 64*(4*", $g, "+", $i, ") + 16*", $q, "]\n")
    };
}

/// Store word `4q + w` of group `$g`'s four lanes to its scratch row.
#[rustfmt::skip]
macro_rules! store_word {
    ($g:literal, $q:literal, $w:literal, $x:literal) => {
        concat!("movdqa xmmword ptr [{msg} + 16*(16*", $g, "+4*", $q, "+", $w, ")], ", $x, "\n")
    };
}

/// Piece `h` (16 bytes) of the lanes' next blocks for the quad at step `$i` and its
/// `$j`-th copy (`$ng` copies a quad): `h = (i / 4) * ng + j`, so the 16 quads cover the
/// `16 * ng` pieces of the `4 * ng` lanes once a block. Piece `h` is bytes
/// `16 * (h % 4)..` of lane `h / 4`'s block.
macro_rules! piece {
    ($ng:literal, $i:literal, $j:tt) => {
        concat!("((", $i, "/4)*", $ng, "+", $j, ")")
    };
}

/// A piped run's share of copies at the quad starting at step `$i`: for each `j` in
/// `[$j, ...]`, piece `h` of the lanes' blocks at `{off}` (see `piece!`) into the line
/// scratch, and with `copy_pf`, beside each lane's first piece, a prefetch of that lane
/// `{pf}` bytes further on: one a lane a block, chosen by the assembler (`.if`), since
/// the piece's number is only known there. (One beside every piece, four a lane, ran
/// no faster.)
#[rustfmt::skip]
macro_rules! copy_pieces {
    (none, $js:tt, $ng:literal, $i:literal) => { "" };
    (copy, [$($j:tt),+], $ng:literal, $i:literal) => {
        concat!($(
            "mov {p}, qword ptr [{lp} + 8*(", piece!($ng, $i, $j), "/4)]\n",
            "movdqu xmm14, xmmword ptr [{p} + {off} + 16*(",
            piece!($ng, $i, $j), "-4*(", piece!($ng, $i, $j), "/4))]\n",
            "movdqa xmmword ptr [{msg} + {lines} + 16*", piece!($ng, $i, $j), "], xmm14\n",
        )+)
    };
    (copy_pf, [$($j:tt),+], $ng:literal, $i:literal) => {
        concat!($(
            copy_pieces!(copy, [$j], $ng, $i),
            ".if (", piece!($ng, $i, $j), "-4*(", piece!($ng, $i, $j), "/4)) == 0\n",
            "prefetcht0 byte ptr [{p} + {pf}]\n",
            ".endif\n",
        )+)
    };
}

/// Copy the blocks at `{off}` of the 4 lanes of each group in `[$g, ...]` to the line
/// scratch (a piped run's prologue).
#[rustfmt::skip]
macro_rules! copy_lines {
    ([$($g:tt),+]) => {
        concat!($(
            copy_line!($g, 0), copy_line!($g, 1), copy_line!($g, 2), copy_line!($g, 3),
        )+)
    };
}

/// Copy lane `4g + l`'s block at `{off}` to its line in the line scratch.
#[rustfmt::skip]
macro_rules! copy_line {
    ($g:literal, $l:literal) => {
        concat!(
            "mov {p}, qword ptr [{lp} + 8*(4*", $g, "+", $l, ")]\n",
            "movdqu xmm12, xmmword ptr [{p} + {off}]\n",
            "movdqu xmm13, xmmword ptr [{p} + {off} + 16]\n",
            "movdqu xmm14, xmmword ptr [{p} + {off} + 32]\n",
            "movdqu xmm15, xmmword ptr [{p} + {off} + 48]\n",
            "movdqa xmmword ptr [{msg} + {lines} + 64*(4*", $g, "+", $l, ")], xmm12\n",
            "movdqa xmmword ptr [{msg} + {lines} + 64*(4*", $g, "+", $l, ") + 16], xmm13\n",
            "movdqa xmmword ptr [{msg} + {lines} + 64*(4*", $g, "+", $l, ") + 32], xmm14\n",
            "movdqa xmmword ptr [{msg} + {lines} + 64*(4*", $g, "+", $l, ") + 48], xmm15\n",
        )
    };
}

/// Group `$g`'s 4 state rows loaded into its registers (`load`), or added to them and
/// stored back (`add_store`).
#[rustfmt::skip]
macro_rules! state_rows {
    (load, $g:tt) => {
        concat!(
            "movdqu ", x!($g, 0), ", xmmword ptr [{st} + 16*(4*", $g, "+0)]\n",
            "movdqu ", x!($g, 1), ", xmmword ptr [{st} + 16*(4*", $g, "+1)]\n",
            "movdqu ", x!($g, 2), ", xmmword ptr [{st} + 16*(4*", $g, "+2)]\n",
            "movdqu ", x!($g, 3), ", xmmword ptr [{st} + 16*(4*", $g, "+3)]\n",
        )
    };
    (add_store, $g:tt) => {
        concat!(
            add_store!($g, 0), add_store!($g, 1), add_store!($g, 2), add_store!($g, 3),
        )
    };
}

/// Row `$w` of group `$g`'s state (in memory, maybe unaligned) += its register, and
/// stored back.
#[rustfmt::skip]
macro_rules! add_store {
    ($g:tt, $w:tt) => {
        concat!(
            "movdqu xmm12, xmmword ptr [{st} + 16*(4*", $g, "+", $w, ")]\n",
            "paddd ", x!($g, $w), ", xmm12\n",
            "movdqu xmmword ptr [{st} + 16*(4*", $g, "+", $w, ")], ", x!($g, $w), "\n",
        )
    };
}

/// The truth tables of the `vl` steps, named in a comment (`asm!` wants every operand
/// used, and the `sse` steps use none of them).
macro_rules! round_functions {
    () => {
        "/* vpternlogd's truth tables, for the vl steps: {tf} {tg} {th} {ti} */\n"
    };
}

/// The loop over the blocks of every group in `[$g, ...]` (`$ng` of them): a direct run
/// (`$pre` first in each block: the prefetches, or nothing), or a piped one (`$copy`:
/// `copy` or `copy_pf`).
macro_rules! blocks {
    (direct, [$($g:tt),+], $ng:literal, $pre:expr, $st:ident) => {
        concat!(
            "/* no line scratch (at {lines}) in a direct run */\n",
            round_functions!(),
            loop_top!(),
            $pre,
            $(
                transpose_quarter!(direct, $g, 0),
                transpose_quarter!(direct, $g, 1),
                transpose_quarter!(direct, $g, 2),
                transpose_quarter!(direct, $g, 3),
            )+
            $(state_rows!(load, $g),)+
            md5_quads!(quad!([$($g),+], $ng, none, $st)),
            $(state_rows!(add_store, $g),)+
            "add {off}, {stride}\n",
            "add {pf}, {stride}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
    (piped, [$($g:tt),+], $ng:literal, $copy:ident, $st:ident) => {
        concat!(
            round_functions!(),
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
            md5_quads!(quad!([$($g),+], $ng, $copy, $st)),
            $(state_rows!(add_store, $g),)+
            "add {pf}, {stride}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
}

/// 16-byte rows, 16-byte aligned (as SSE2's memory operands need).
#[repr(C, align(16))]
struct Rows<const N: usize>([[u32; 4]; N]);

/// The step constants as the steps add them (`lanes::STEP_K`: round 4's lowered by
/// one), each splat across a 16-byte row, 16-byte aligned for `paddd`'s memory operand
/// (`lanes::STEP_K4` holds the same words, without that alignment).
static K_ROWS: Rows<64> = {
    let mut rows = [[0u32; 4]; 64];
    let mut i = 0;
    while i < 64 {
        rows[i] = [super::lanes::STEP_K[i]; 4];
        i += 1;
    }
    Rows(rows)
};

/// Byte offset of the line scratch in the scratch area (`{lines}` in the assembly),
/// after the 48 rows of transposed words.
const LINES_AT: usize = 48 * 16;

/// Compress `nblocks` blocks of `4 * G` lanes (`G` groups of 4, 1 to 3; state layout as
/// `lanes::LaneKernel`), block `b` of lane `l` at `lanes[l] + b * stride`; with
/// `PREFETCH`, each lane's block 4 ahead is prefetched into L1. `RUN` picks the loop
/// (see `kernels::run`); with `VL`, the steps are AVX-512VL's (see the module's docs).
///
/// # Safety
///
/// `G` is 1, 2 or 3; `state` is `16 * G` words; `lanes` has `4 * G` pointers, each valid
/// for reads of `(nblocks - 1) * stride + 64` bytes. With `VL`, the CPU has AVX512F and
/// AVX512VL. (SSE2 is in every x86-64 CPU.)
pub(crate) unsafe fn compress<
    const G: usize,
    const PREFETCH: bool,
    const RUN: u8,
    const VL: bool,
>(
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
    debug_assert!((1..=3).contains(&G) && state.len() == 16 * G && lanes.len() == 4 * G);
    let piped = super::run::pick(RUN, nblocks) == super::run::Loop::Piped;
    // The transposed message words (16 rows a group), then the line scratch (64 bytes
    // a lane, at `LINES_AT`): each written before it is read.
    let mut msg = core::mem::MaybeUninit::<Rows<{ LINES_AT / 16 + 48 }>>::uninit();
    // The prefetches' offset from each lane's start: 4 blocks ahead of the block being
    // hashed (3 ahead of the block a piped run copies). Prefetches cannot fault, so
    // those past the end of a lane are harmless.
    let pf = stride.wrapping_mul(4);
    macro_rules! go {
        ($gs:tt, $ng:literal) => {
            match VL {
                false => go!($gs, $ng, sse),
                true => go!($gs, $ng, vl),
            }
        };
        ($gs:tt, $ng:literal, $st:ident) => {
            match (piped, PREFETCH) {
                (false, true) => go!(blocks!(direct, $gs, $ng, prefetch_lanes!(4, $gs, [0, 1, 2, 3]), $st)),
                (false, false) => go!(blocks!(direct, $gs, $ng, "", $st)),
                (true, true) => go!(blocks!(piped, $gs, $ng, copy_pf, $st)),
                (true, false) => go!(blocks!(piped, $gs, $ng, copy, $st)),
            }
        };
        ($code:expr) => {
            core::arch::asm!(
                $code,
                st = in(reg) state.as_mut_ptr(),
                lp = in(reg) lanes.as_ptr(),
                msg = in(reg) msg.as_mut_ptr(),
                k = in(reg) K_ROWS.0.as_ptr(),
                lines = const LINES_AT,
                tf = const super::lanes::TERNLOG_F,
                tg = const super::lanes::TERNLOG_G,
                th = const super::lanes::TERNLOG_H,
                ti = const super::lanes::TERNLOG_NOT_I,
                stride = in(reg) stride,
                n = inout(reg) nblocks => _,
                off = inout(reg) 0usize => _,
                pf = inout(reg) pf => _,
                p = out(reg) _,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
                options(nostack),
            )
        };
    }
    // SAFETY: for `G` groups the caller guarantees a state of `16 * G` words and `4 * G`
    // lanes whose blocks are readable at `off = b * stride` for `b < nblocks`; SSE2 is part
    // of x86-64, and with `VL` the caller guarantees AVX512F and AVX512VL. Either loop runs
    // `nblocks` (> 0) times and reads the lanes only at such offsets: the direct one at
    // `off` of the block it hashes; the piped one at 0 (its prologue) and then at `off` of
    // the next block, which stays at the last block's offset once no block follows
    // (`cmp n, 1` before the steps). Both read 64 bytes a lane there (unaligned loads; and
    // prefetch, which never faults), write only the state's `4 * G` rows (unaligned) and
    // `msg` (rows of transposed words at 0, the line scratch at `LINES_AT`; 16-byte
    // aligned, as `movdqa` and SSE2's memory operands need), read `K_ROWS` (16-byte
    // aligned), and clobber only the registers named.
    unsafe {
        match G {
            1 => go!([0], 1),
            2 => go!([0, 1], 2),
            _ => go!([0, 1, 2], 3),
        }
    }
}
