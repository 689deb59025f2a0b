//! AVX2 with three interleaved 8-lane groups (24 messages), scheduled by hand in inline
//! assembly: the kernel `avx2.rs` hands out for 3 groups.
//!
//! The generic lane algorithm (`lanes.rs` over `avx2.rs`'s primitives) leaves the
//! order of each step's adds and the register allocation to LLVM, which adds `F` before
//! `a + m + K` in some steps (a longer dependent chain) and spills with three groups.
//! On Zen 3, `docs/bench/step_probe.c` ran three interleaved step chains at about 2.9
//! bytes/cycle in the order below, and at 2.14 in LLVM's, where the generic kernel runs
//! (2.05-2.15). Here every step is written out in the short-chain order, with fixed
//! registers:
//!
//! - `ymm0..ymm3`, `ymm4..ymm7`, `ymm8..ymm11`: the state words of groups 0, 1, 2;
//! - `ymm12`, `ymm13`: temporaries (register renaming gives each step its own).
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
//! `rotl` is two shifts and an OR, or one byte shuffle for 16. The steps of the three
//! groups follow each other (step `i` of groups 0, 1, 2, then step `i + 1`), as in the
//! probe; the out-of-order core overlaps them.
//!
//! Each block starts by transposing the 24 lanes' message words into a 1.5 KiB scratch
//! area, which the steps read as memory operands (as they read the step constants from
//! a table of pre-splatted rows): for each 16-byte quarter, lane `i`'s bytes and lane
//! `i + 4`'s are loaded into the two halves of one register (`vinserti128` from
//! memory), and two rounds of unpacks finish the job, with no cross-half permute
//! (`vperm2i128`, the usual last step, is 8 micro-ops on Zen 1). The state goes
//! through memory between blocks, which frees all 16 registers for the transposition.
//!
//! Measured on Zen 1 (AMD EPYC family 23 model 1, 2026-11-23), in the same process as
//! the generic kernel (`many_report`'s `avx2 x3` and `avx2 x3 generic` rows): 4-7%
//! faster. Not yet measured on Zen 3 or on Intel; `many_report` prints both rows.
//!
//! Everything here is checked against the portable kernel by `avx2.rs`'s tests, with
//! and without the prefetch, at strides of one block and more.

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

/// One step of all three groups, group after group.
macro_rules! step3 {
    ($r:ident, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            step!($r, 0, $i, $w, $s, $a, $b, $c, $d),
            step!($r, 1, $i, $w, $s, $a, $b, $c, $d),
            step!($r, 2, $i, $w, $s, $a, $b, $c, $d),
        )
    };
}

/// Four steps of a round (message words `$w0..$w3`, rotations `$s0..$s3`); the roles of
/// the state words rotate `(a, b, c, d) -> (d, a, b, c)` from step to step.
macro_rules! quad3 {
    ($r:ident, $i:literal, $w0:literal, $w1:literal, $w2:literal, $w3:literal,
     $s0:tt, $s1:tt, $s2:tt, $s3:tt) => {
        concat!(
            step3!($r, $i, $w0, $s0, 0, 1, 2, 3),
            step3!($r, $i + 1, $w1, $s1, 3, 0, 1, 2),
            step3!($r, $i + 2, $w2, $s2, 2, 3, 0, 1),
            step3!($r, $i + 3, $w3, $s3, 1, 2, 3, 0),
        )
    };
}

/// Load quarter `$q` (words `4q..4q+3`) of group `$g`'s eight blocks and store it
/// transposed: word `w` of lane `l` to lane `l` of scratch row `16g + w`.
///
/// Row `i` (0..3) is lane `i`'s 16 bytes in the low half and lane `i + 4`'s in the high
/// half (`vinserti128` from memory); two rounds of unpacks within the halves finish
/// the transposition. No cross-half permute: `vperm2i128` is 8 micro-ops on Zen 1.
#[rustfmt::skip]
macro_rules! transpose_quarter {
    ($g:literal, $q:literal) => {
        concat!(
            load_row!($g, $q, 0, "0"), load_row!($g, $q, 1, "1"),
            load_row!($g, $q, 2, "2"), load_row!($g, $q, 3, "3"),
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
/// current block, and above it that of lane `8g + i + 4`.
#[rustfmt::skip]
macro_rules! load_row {
    ($g:literal, $q:literal, $i:literal, $y:literal) => {
        concat!(
            "mov {p}, qword ptr [{lp} + 8*(8*", $g, "+", $i, ")]\n",
            "vmovdqu xmm", $y, ", xmmword ptr [{p} + {off} + 16*", $q, "]\n",
            "mov {p}, qword ptr [{lp} + 8*(8*", $g, "+4+", $i, ")]\n",
            "vinserti128 ymm", $y, ", ymm", $y, ", xmmword ptr [{p} + {off} + 16*", $q, "], 1\n",
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

/// Prefetch lane `8g + l`'s block `$ahead` blocks ahead (into L1).
#[rustfmt::skip]
macro_rules! prefetch_lane {
    ($g:literal, $l:literal) => {
        concat!(
            "mov {p}, qword ptr [{lp} + 8*(8*", $g, "+", $l, ")]\n",
            "prefetcht0 byte ptr [{p} + {pf}]\n",
        )
    };
}

/// Prefetch all 24 lanes' data at `{pf}` bytes from their starts.
#[rustfmt::skip]
macro_rules! prefetch_all {
    () => {
        concat!(
            prefetch_lane!(0, 0), prefetch_lane!(0, 1), prefetch_lane!(0, 2), prefetch_lane!(0, 3),
            prefetch_lane!(0, 4), prefetch_lane!(0, 5), prefetch_lane!(0, 6), prefetch_lane!(0, 7),
            prefetch_lane!(1, 0), prefetch_lane!(1, 1), prefetch_lane!(1, 2), prefetch_lane!(1, 3),
            prefetch_lane!(1, 4), prefetch_lane!(1, 5), prefetch_lane!(1, 6), prefetch_lane!(1, 7),
            prefetch_lane!(2, 0), prefetch_lane!(2, 1), prefetch_lane!(2, 2), prefetch_lane!(2, 3),
            prefetch_lane!(2, 4), prefetch_lane!(2, 5), prefetch_lane!(2, 6), prefetch_lane!(2, 7),
        )
    };
}

/// The 12 state rows loaded into `ymm0..ymm11`, or added to them and stored back.
#[rustfmt::skip]
macro_rules! state_rows {
    (load) => {
        concat!(
            "vmovdqu ymm0, ymmword ptr [{st} + 32*0]\n", "vmovdqu ymm1, ymmword ptr [{st} + 32*1]\n",
            "vmovdqu ymm2, ymmword ptr [{st} + 32*2]\n", "vmovdqu ymm3, ymmword ptr [{st} + 32*3]\n",
            "vmovdqu ymm4, ymmword ptr [{st} + 32*4]\n", "vmovdqu ymm5, ymmword ptr [{st} + 32*5]\n",
            "vmovdqu ymm6, ymmword ptr [{st} + 32*6]\n", "vmovdqu ymm7, ymmword ptr [{st} + 32*7]\n",
            "vmovdqu ymm8, ymmword ptr [{st} + 32*8]\n", "vmovdqu ymm9, ymmword ptr [{st} + 32*9]\n",
            "vmovdqu ymm10, ymmword ptr [{st} + 32*10]\n", "vmovdqu ymm11, ymmword ptr [{st} + 32*11]\n",
        )
    };
    (add_store) => {
        concat!(
            add_store!(0), add_store!(1), add_store!(2), add_store!(3),
            add_store!(4), add_store!(5), add_store!(6), add_store!(7),
            add_store!(8), add_store!(9), add_store!(10), add_store!(11),
        )
    };
}

/// `state[r] += ymm_r`.
#[rustfmt::skip]
macro_rules! add_store {
    ($r:literal) => {
        concat!(
            "vpaddd ymm", $r, ", ymm", $r, ", ymmword ptr [{st} + 32*", $r, "]\n",
            "vmovdqu ymmword ptr [{st} + 32*", $r, "], ymm", $r, "\n",
        )
    };
}

/// The whole block: transposition, 64 steps of three groups, the state updated.
/// `$pre` comes first (the prefetches, or nothing).
macro_rules! block3 {
    ($pre:expr) => {
        concat!(
            $pre,
            transpose_quarter!(0, 0),
            transpose_quarter!(0, 1),
            transpose_quarter!(0, 2),
            transpose_quarter!(0, 3),
            transpose_quarter!(1, 0),
            transpose_quarter!(1, 1),
            transpose_quarter!(1, 2),
            transpose_quarter!(1, 3),
            transpose_quarter!(2, 0),
            transpose_quarter!(2, 1),
            transpose_quarter!(2, 2),
            transpose_quarter!(2, 3),
            state_rows!(load),
            quad3!(F, 0, 0, 1, 2, 3, 7, 12, 17, 22),
            quad3!(F, 4, 4, 5, 6, 7, 7, 12, 17, 22),
            quad3!(F, 8, 8, 9, 10, 11, 7, 12, 17, 22),
            quad3!(F, 12, 12, 13, 14, 15, 7, 12, 17, 22),
            quad3!(G, 16, 1, 6, 11, 0, 5, 9, 14, 20),
            quad3!(G, 20, 5, 10, 15, 4, 5, 9, 14, 20),
            quad3!(G, 24, 9, 14, 3, 8, 5, 9, 14, 20),
            quad3!(G, 28, 13, 2, 7, 12, 5, 9, 14, 20),
            quad3!(H, 32, 5, 8, 11, 14, 4, 11, 16, 23),
            quad3!(H, 36, 1, 4, 7, 10, 4, 11, 16, 23),
            quad3!(H, 40, 13, 0, 3, 6, 4, 11, 16, 23),
            quad3!(H, 44, 9, 12, 15, 2, 4, 11, 16, 23),
            quad3!(I, 48, 0, 7, 14, 5, 6, 10, 15, 21),
            quad3!(I, 52, 12, 3, 10, 1, 6, 10, 15, 21),
            quad3!(I, 56, 8, 15, 6, 13, 6, 10, 15, 21),
            quad3!(I, 60, 4, 11, 2, 9, 6, 10, 15, 21),
            state_rows!(add_store),
        )
    };
}

/// The step constants as the steps add them (round 4's lowered by one), each splat
/// across a 32-byte row.
#[repr(C, align(32))]
struct Rows<const N: usize>([[u32; 8]; N]);

static K_ROWS: Rows<64> = {
    let mut rows = [[0u32; 8]; 64];
    let mut i = 0;
    while i < 64 {
        let k = if i < 48 {
            super::K[i]
        } else {
            super::K[i].wrapping_sub(1)
        };
        rows[i] = [k; 8];
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

/// Compress `nblocks` blocks of 24 lanes (three groups of 8, state layout as
/// `lanes::LaneKernel`), block `b` of lane `l` at `lanes[l] + b * stride`; with
/// `PREFETCH`, each lane's block 4 ahead is prefetched into L1.
///
/// # Safety
///
/// The CPU has AVX2; `state` is 96 words; every `lanes[l]` is valid for reads of
/// `(nblocks - 1) * stride + 64` bytes.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn compress<const PREFETCH: bool>(
    state: &mut [u32; 96],
    lanes: &[*const u8; 24],
    nblocks: usize,
    stride: usize,
) {
    if nblocks == 0 {
        return;
    }
    // The transposed message words: written before they are read, every block.
    let mut msg = core::mem::MaybeUninit::<Rows<48>>::uninit();
    // The prefetches' offset from each lane's start: 4 blocks ahead of the block being
    // hashed. Prefetches cannot fault, so those past the end of a lane are harmless.
    let pf = stride.wrapping_mul(4);
    macro_rules! run {
        ($pre:expr) => {
            core::arch::asm!(
                "2:",
                block3!($pre),
                "add {off}, {stride}",
                "add {pf}, {stride}",
                "dec {n}",
                "jnz 2b",
                st = in(reg) state.as_mut_ptr(),
                lp = in(reg) lanes.as_ptr(),
                msg = in(reg) msg.as_mut_ptr(),
                k = in(reg) K_ROWS.0.as_ptr(),
                rot16 = in(reg) ROT16.0.as_ptr(),
                stride = in(reg) stride,
                n = inout(reg) nblocks => _,
                off = inout(reg) 0usize => _,
                pf = inout(reg) pf => _,
                p = out(reg) _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                out("ymm12") _, out("ymm13") _,
                options(nostack),
            )
        };
    }
    // SAFETY: the caller guarantees AVX2 and that every lane's blocks are readable at
    // `off = b * stride` for `b < nblocks`; the loop runs `nblocks` (> 0) times and reads
    // 64 bytes at each lane's `off`, and prefetches (which never fault). It writes only
    // `state` (96 words, as guaranteed) and `msg` (48 rows, 32-byte aligned, as
    // `vmovdqa` needs), reads the two constant tables, and clobbers only the registers
    // named.
    unsafe {
        if PREFETCH {
            run!(prefetch_all!())
        } else {
            run!("")
        }
    }
}
