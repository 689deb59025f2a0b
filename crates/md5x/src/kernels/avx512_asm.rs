//! AVX-512 with 1 to 3 interleaved 16-lane groups (16 to 48 messages), scheduled by
//! hand in inline assembly: the lane kernel `avx512.rs` hands out.
//!
//! On Zen 5 every vector operation MD5 uses (`vpaddd`, `vpternlogd`, `vprold`) has 2
//! cycles of latency, so one group's step chain (round function, add, rotate, add) takes
//! 8 cycles and the groups must overlap to fill the four vector pipes. The generic lane
//! algorithm leaves the order of each step's adds and the registers to LLVM; here every
//! step is written out in the short-chain order with fixed registers:
//!
//! - `zmm0..zmm3`, `zmm4..zmm7`, `zmm8..zmm11`: the state words of groups 0, 1, 2 (as
//!   many as the kernel has);
//! - `zmm16`, `zmm17`, `zmm18`: each group's temporary for the round function.
//!
//! A step of one group (`b` is the newest word; `a + m + K` is formed while the previous
//! step runs, from the transposed message row and the constant broadcast from
//! `lanes::STEP_K`):
//!
//! `a += m; a += K; t = b; t = f(t, c, d) (vpternlogd); a += t (or -= for !I); vprold a;
//! a += b`
//!
//! The newest word enters `vpternlogd` as its first operand, the faster one on Zen 5
//! (`docs/performance.md`), through a register copy the core eliminates: copying the
//! oldest word instead and passing `b` second (truth tables permuted) ran 8-11% slower
//! at every group count. The truth tables are `lanes.rs`' (`TERNLOG_*`, `const`
//! operands here), tested there through the portable lanes on every machine.
//!
//! Each block starts by loading every lane's 64 bytes and transposing them in
//! registers (16 rows, then unpacks of words, of word pairs, and two rounds of 128-bit
//! shuffles, alternating between the two banks of 16 registers) into a 64-byte aligned
//! scratch area (1 KiB a group) that the steps read as memory operands. The state goes
//! through memory between blocks, which frees all 32 registers for the transposition.
//!
//! Each lane's data [`AHEAD`] blocks on is prefetched into L1, a few lanes at the start
//! of each quad rather than all at the start of the block: messages laid end to end at
//! a power-of-two size start at the same offset in a page, so all 48 lanes read the same
//! L1 set, and a burst of 48 prefetches into its 12 ways evicted itself (1 MiB messages
//! from memory: 2.76 bytes/cycle with the burst, 3.83-3.88 spread out).
//!
//! Where a block's rows come from, two kinds of run (as in `avx2_asm.rs`, where the
//! idea was first measured):
//!
//! - **direct** (runs shorter than `kernels::run::PIPED_FROM` blocks): loaded from the
//!   lanes at the start of the block;
//! - **piped** (longer runs): loaded from a line scratch (64 bytes a lane) that the
//!   previous block filled: beside each prefetch, each quad copies its lanes' next
//!   blocks there (through `zmm19`), so the loads from the lanes have a whole block's
//!   steps to arrive. A prologue copies the first block; after the last block the
//!   copies read it again (the offset stays put), so nothing past a lane's last block
//!   is read.
//!
//! - **staged** (Intel's cores, runs of `PIPED_FROM` blocks or more; `kernels::run`):
//!   the next block is transposed while the steps run, four lanes at a time beside
//!   every second quad (2 groups; see `stage_at!`), into a second set of rows that the
//!   next block reads (the two swap after each block). Two stages of unpacks leave
//!   each 128-bit chunk holding one word of four lanes, and the chunks go straight to
//!   their rows by 16-byte stores (`vmovdqu32` of an `xmm` register, an AVX512VL
//!   instruction, for chunk 0; `vextracti32x4` to memory for chunks 1 to 3), which
//!   use the store ports only: the two stages of 128-bit shuffles, 32 of the 64
//!   shuffles a block a group, are gone from ports 0 and 5, which the steps' six
//!   operations a step keep busy. A row so written cannot be forwarded from the store
//!   buffer to a load; it is read a whole block later, from L1. The first block is
//!   transposed in full, as the direct loop does; after it the chaining state stays
//!   in registers (`kept_state!`), since the steps and the stages leave twelve free.
//!   On an Emerald Rapids guest (2026-11-28, `many_report`, 96 messages of 1 or 8 KiB,
//!   four pairs of runs) this loop, then with masked stores (`vmovdqu32 [..]{k}`, each
//!   spanning two lines) and the state in memory, ran 1.01-1.16x the piped loop, up to
//!   4.69 bytes/cycle at 8 KiB. On a guest of the Xeon of family 6 model 0xA7
//!   (2026-12-02) the 16-byte stores and the kept state together ran it 1.04-1.14x
//!   faster at 8 KiB and 1 MiB (1.02-1.10x at 1 KiB), 4.16-4.18 bytes/cycle at 8 KiB
//!   with 2 and 3 groups, and 1.13-1.20x the direct loop with one group, 1.07-1.18x
//!   with two (`docs/performance.md`).
//!   AMD's cores keep the piped loop: on Zen 4 (2026-12-01) the staged one, as it was
//!   then, ran 2 groups 4-10% faster in L2, but 3 groups, which AMD runs, level to 8%
//!   slower, and 8 KiB messages from memory no faster.
//!
//! Even spread out, the aliasing above cost the direct loop 15-25% on Zen 4 (AMD EPYC
//! family 25 model 17, 2026-11-25; `MD5X_BACKENDS=avx512 many_report`, 3 groups,
//! bytes/cycle, direct -> piped): 96 messages of 8 KiB end to end (in L2) 3.19-3.27 ->
//! 3.59-3.77, of 1 MiB 2.73-2.78 -> 3.22-3.39; from memory, 16,384 of 4 KiB 2.45-2.47 ->
//! 3.04-3.05, of 8 KiB 2.63-2.64 -> 3.25-3.29, 128 of 1 MiB 2.89-2.91 -> 3.32-3.37. With
//! 64 bytes between messages (no aliasing) both ran 3.55-3.79 at 8 KiB; 64-byte to
//! 1 KiB messages from memory were level (they run direct). Not yet measured on Zen 5
//! or Intel.
//!
//! Everything here is checked against the portable kernel by `avx512.rs`' tests, at 1,
//! 2 and 3 groups, both loops at 1 to 9 blocks, strides of one block and more, and
//! lanes that end at an unreadable page.

/// The register holding word `$w` (0..3, that is a, b, c, d at a quad's start) of group
/// `$g`.
#[rustfmt::skip]
macro_rules! z {
    (0, 0) => { "zmm0" }; (0, 1) => { "zmm1" }; (0, 2) => { "zmm2" }; (0, 3) => { "zmm3" };
    (1, 0) => { "zmm4" }; (1, 1) => { "zmm5" }; (1, 2) => { "zmm6" }; (1, 3) => { "zmm7" };
    (2, 0) => { "zmm8" }; (2, 1) => { "zmm9" }; (2, 2) => { "zmm10" }; (2, 3) => { "zmm11" };
}

/// Group `$g`'s temporary for the round function.
#[rustfmt::skip]
macro_rules! t {
    (0) => { "zmm16" }; (1) => { "zmm17" }; (2) => { "zmm18" };
}

/// One step of one group: `$r` selects the round (its `vpternlogd` immediate, one of
/// `lanes.rs`' `TERNLOG_*` passed in as a `const` operand, and the instruction that
/// applies the function to the sum: `!I` is subtracted, see `lanes::Lane::not_i`),
/// `$a..$d` are the roles' word numbers.
#[rustfmt::skip]
macro_rules! step {
    (F, $($x:tt)*) => { step!(@ "{tf}", "vpaddd", $($x)*) };
    (G, $($x:tt)*) => { step!(@ "{tg}", "vpaddd", $($x)*) };
    (H, $($x:tt)*) => { step!(@ "{th}", "vpaddd", $($x)*) };
    (I, $($x:tt)*) => { step!(@ "{ti}", "vpsubd", $($x)*) };
    (@ $imm:literal, $op:literal, $g:tt, $i:expr, $w:literal, $s:tt, $a:tt, $b:tt, $c:tt, $d:tt) => {
        concat!(
            "vpaddd ", z!($g, $a), ", ", z!($g, $a), ", zmmword ptr [{msg} + 64*(16*", stringify!($g), "+", $w, ")]\n",
            "vpaddd ", z!($g, $a), ", ", z!($g, $a), ", dword ptr [{k} + 4*(", stringify!($i), ")]{{1to16}}\n",
            "vmovdqa32 ", t!($g), ", ", z!($g, $b), "\n",
            "vpternlogd ", t!($g), ", ", z!($g, $c), ", ", z!($g, $d), ", ", $imm, "\n",
            $op, " ", z!($g, $a), ", ", z!($g, $a), ", ", t!($g), "\n",
            "vprold ", z!($g, $a), ", ", z!($g, $a), ", ", stringify!($s), "\n",
            "vpaddd ", z!($g, $a), ", ", z!($g, $a), ", ", z!($g, $b), "\n",
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
/// group in `$gs` (`$ng` of them), after the quad's share of the prefetches (a direct
/// run, `$each` = `prefetch`) or of the copies with their prefetches (a piped one,
/// `copy`); the roles of the state words rotate `(a, b, c, d) -> (d, a, b, c)` from step
/// to step.
macro_rules! quad {
    ($gs:tt, $ng:tt, $each:ident, $r:ident, $i:tt, $w0:literal, $w1:literal,
     $w2:literal, $w3:literal, $s0:tt, $s1:tt, $s2:tt, $s3:tt) => {
        concat!(
            $each!($gs, $ng, $i),
            steps!($gs, $r, $i, $w0, $s0, 0, 1, 2, 3),
            steps!($gs, $r, $i + 1, $w1, $s1, 3, 0, 1, 2),
            steps!($gs, $r, $i + 2, $w2, $s2, 2, 3, 0, 1),
            steps!($gs, $r, $i + 3, $w3, $s3, 1, 2, 3, 0),
        )
    };
}

/// `$op dst, src1, src2` for the register numbers given.
#[rustfmt::skip]
macro_rules! op3 {
    ($op:literal, $d:literal, $s1:literal, $s2:literal) => {
        concat!($op, " zmm", $d, ", zmm", $s1, ", zmm", $s2, "\n")
    };
    ($op:literal, $d:literal, $s1:literal, $s2:literal, $imm:literal) => {
        concat!($op, " zmm", $d, ", zmm", $s1, ", zmm", $s2, ", ", $imm, "\n")
    };
}

/// Lane `$lane`'s block at `{off}` into register `$reg`, its pointer left in `{p}`
/// (`$lane`: an assembler expression, from `concat!`).
#[rustfmt::skip]
macro_rules! lane_block {
    ($lane:expr, $reg:expr) => {
        concat!(
            "mov {p}, qword ptr [{lp} + 8*(", $lane, ")]\n",
            "vmovdqu32 ", $reg, ", zmmword ptr [{p} + {off}]\n",
        )
    };
}

/// Lane `16g + l`'s current block into `zmm$l`: from the lane at `{off}` (`direct`) or
/// from its copy in the line scratch (`piped`).
#[rustfmt::skip]
macro_rules! load_row {
    (direct, $g:literal, $l:literal) => {
        lane_block!(concat!("16*", $g, "+", $l), concat!("zmm", $l))
    };
    (piped, $g:literal, $l:literal) => {
        concat!("vmovdqa32 zmm", $l, ", zmmword ptr [{msg} + {lines} + 64*(16*", $g, "+", $l, ")]\n")
    };
}

/// Pairs of rows (`zmm2j`, `zmm2j+1`) interleaved word by word into `zmm16 + 2j` (low
/// halves of each 128-bit chunk) and `zmm17 + 2j` (high halves).
#[rustfmt::skip]
macro_rules! unpack_words {
    ($lo:literal, $hi:literal, $r0:literal, $r1:literal) => {
        concat!(op3!("vpunpckldq", $lo, $r0, $r1), op3!("vpunpckhdq", $hi, $r0, $r1))
    };
}

/// `u[4k + q]` into `zmm(4k + q)`: 128-bit chunk c holds word `4c + q` of lanes
/// `4k..4k+3` (from `t[4k + q / 2]` and `t[4k + 2 + q / 2]` in `zmm16..zmm31`).
#[rustfmt::skip]
macro_rules! unpack_pairs {
    ($u0:literal, $u1:literal, $u2:literal, $u3:literal,
     $t0:literal, $t1:literal, $t2:literal, $t3:literal) => {
        concat!(
            op3!("vpunpcklqdq", $u0, $t0, $t2),
            op3!("vpunpckhqdq", $u1, $t0, $t2),
            op3!("vpunpcklqdq", $u2, $t1, $t3),
            op3!("vpunpckhqdq", $u3, $t1, $t3),
        )
    };
}

/// For `q`: a 4x4 transposition of 128-bit chunks across `u[q]`, `u[4 + q]`, `u[8 + q]`,
/// `u[12 + q]` (in `zmm$a..$d`, through `zmm$v0..$v3`) gives words `q`, `4 + q`,
/// `8 + q`, `12 + q` of all 16 lanes, stored to group `$g`'s scratch rows.
#[rustfmt::skip]
macro_rules! chunks {
    ($g:literal, $q:literal, $a:literal, $b:literal, $c:literal, $d:literal,
     $v0:literal, $v1:literal, $v2:literal, $v3:literal) => {
        concat!(
            op3!("vshufi32x4", $v0, $a, $b, "0x44"),
            op3!("vshufi32x4", $v1, $a, $b, "0xEE"),
            op3!("vshufi32x4", $v2, $c, $d, "0x44"),
            op3!("vshufi32x4", $v3, $c, $d, "0xEE"),
            op3!("vshufi32x4", $a, $v0, $v2, "0x88"),
            op3!("vshufi32x4", $b, $v0, $v2, "0xDD"),
            op3!("vshufi32x4", $c, $v1, $v3, "0x88"),
            op3!("vshufi32x4", $d, $v1, $v3, "0xDD"),
            store_word!($g, $q, $a), store_word!($g, 4 + $q, $b),
            store_word!($g, 8 + $q, $c), store_word!($g, 12 + $q, $d),
        )
    };
}

/// Word `$w` of group `$g`'s sixteen lanes, from `zmm$r` to its scratch row.
#[rustfmt::skip]
macro_rules! store_word {
    ($g:literal, $w:expr, $r:literal) => {
        concat!("vmovdqa32 zmmword ptr [{msg} + 64*(16*", $g, "+", stringify!($w), ")], zmm", $r, "\n")
    };
}

/// Group `$g`'s sixteen blocks at `{off}`, transposed into its scratch rows: word `w` of
/// lane `l` to lane `l` of row `16g + w`.
#[rustfmt::skip]
macro_rules! transpose {
    ($from:ident, $g:literal) => {
        concat!(
            load_row!($from, $g, 0), load_row!($from, $g, 1), load_row!($from, $g, 2),
            load_row!($from, $g, 3), load_row!($from, $g, 4), load_row!($from, $g, 5),
            load_row!($from, $g, 6), load_row!($from, $g, 7), load_row!($from, $g, 8),
            load_row!($from, $g, 9), load_row!($from, $g, 10), load_row!($from, $g, 11),
            load_row!($from, $g, 12), load_row!($from, $g, 13), load_row!($from, $g, 14),
            load_row!($from, $g, 15),
            // t[j] in zmm(16 + j): rows 2p and 2p + 1 interleaved (low and high pairs).
            unpack_words!(16, 17, 0, 1), unpack_words!(18, 19, 2, 3),
            unpack_words!(20, 21, 4, 5), unpack_words!(22, 23, 6, 7),
            unpack_words!(24, 25, 8, 9), unpack_words!(26, 27, 10, 11),
            unpack_words!(28, 29, 12, 13), unpack_words!(30, 31, 14, 15),
            // u[j] in zmm(j).
            unpack_pairs!(0, 1, 2, 3, 16, 17, 18, 19),
            unpack_pairs!(4, 5, 6, 7, 20, 21, 22, 23),
            unpack_pairs!(8, 9, 10, 11, 24, 25, 26, 27),
            unpack_pairs!(12, 13, 14, 15, 28, 29, 30, 31),
            chunks!($g, 0, 0, 4, 8, 12, 16, 17, 18, 19),
            chunks!($g, 1, 1, 5, 9, 13, 20, 21, 22, 23),
            chunks!($g, 2, 2, 6, 10, 14, 24, 25, 26, 27),
            chunks!($g, 3, 3, 7, 11, 15, 28, 29, 30, 31),
        )
    };
}

/// At the quad starting at step `$i`, prefetch `G` lanes' data `{pf}` bytes ahead into
/// L1 (`G` = `$ng`, the number of groups): lanes `(i / 4) * G + j` for `j < G`, so the
/// 16 quads cover all `16 * G` lanes once a block, spread out rather than in a burst.
#[rustfmt::skip]
macro_rules! prefetch {
    ([$($j:tt),+], $ng:literal, $i:literal) => {
        concat!($(
            "mov {p}, qword ptr [{lp} + 8*((", $i, "/4)*", $ng, " + ", $j, ")]\n",
            "prefetcht0 byte ptr [{p} + {pf}]\n",
        )+)
    };
}

/// The same lanes as `prefetch!`, for a piped run: each lane's block at `{off}` (the
/// next one) copied to its line in the line scratch (through `zmm19`), then its data
/// `{pf}` bytes ahead prefetched.
#[rustfmt::skip]
macro_rules! copy {
    ([$($j:tt),+], $ng:literal, $i:literal) => {
        concat!($(
            lane_block!(concat!("(", $i, "/4)*", $ng, " + ", $j), "zmm19"),
            "vmovdqa32 zmmword ptr [{msg} + {lines} + 64*((", $i, "/4)*", $ng, " + ", $j, ")], zmm19\n",
            "prefetcht0 byte ptr [{p} + {pf}]\n",
        )+)
    };
}

/// Copy the blocks at `{off}` of the 16 lanes of each group in `[$g, ...]` to the line
/// scratch (a piped run's prologue).
#[rustfmt::skip]
macro_rules! copy_lines {
    ([$($g:tt),+]) => {
        concat!($(
            copy_line!($g, 0), copy_line!($g, 1), copy_line!($g, 2), copy_line!($g, 3),
            copy_line!($g, 4), copy_line!($g, 5), copy_line!($g, 6), copy_line!($g, 7),
            copy_line!($g, 8), copy_line!($g, 9), copy_line!($g, 10), copy_line!($g, 11),
            copy_line!($g, 12), copy_line!($g, 13), copy_line!($g, 14), copy_line!($g, 15),
        )+)
    };
}

/// Copy lane `16g + l`'s block at `{off}` to its line in the line scratch.
#[rustfmt::skip]
macro_rules! copy_line {
    ($g:literal, $l:literal) => {
        concat!(
            lane_block!(concat!("16*", $g, "+", $l), "zmm19"),
            "vmovdqa32 zmmword ptr [{msg} + {lines} + 64*(16*", $g, "+", $l, ")], zmm19\n",
        )
    };
}

/// Rows `4k..4k+3` of group `$g`'s next block (lanes `16g + 4k + r` at `{off}`),
/// transposed by two stages of unpacks (in `zmm20..zmm24`, each result over a register
/// already read) and stored straight into the next block's scratch rows at `{nxt}`:
/// 128-bit chunk `c` of `u[q]` (word `4c + q` of the four lanes) to bytes `16k..16k+16`
/// of row `16g + 4c + q`, chunk 0 by a plain store and the others by `vextracti32x4` to
/// memory, so no shuffle moves chunks between the 128-bit lanes.
#[rustfmt::skip]
macro_rules! stage {
    ($g:literal, $k:literal) => {
        concat!(
            stage_row!($g, $k, 0), stage_row!($g, $k, 1), stage_row!($g, $k, 2), stage_row!($g, $k, 3),
            // t0..t3 into zmm24, zmm20, zmm21, zmm22, each over a row read already.
            unpack_words!(24, 20, 20, 21), unpack_words!(21, 22, 22, 23),
            // u0..u3 into zmm23, zmm24, zmm21, zmm20.
            unpack_pairs!(23, 24, 21, 20, 24, 20, 21, 22),
            stage_store!($g, $k, 0, 23), stage_store!($g, $k, 1, 24),
            stage_store!($g, $k, 2, 21), stage_store!($g, $k, 3, 20),
        )
    };
}

/// Lane `16g + 4k + r`'s block at `{off}` into `zmm(20 + r)`.
#[rustfmt::skip]
macro_rules! stage_row {
    ($g:literal, $k:literal, $r:literal) => {
        lane_block!(concat!("16*", $g, "+4*", $k, "+", $r), concat!("zmm2", $r))
    };
}

/// The four chunks of `u[q]` (in `zmm$r`) to their rows (see `stage!`).
#[rustfmt::skip]
macro_rules! stage_store {
    ($g:literal, $k:literal, $q:literal, $r:literal) => {
        concat!(
            "vmovdqu32 xmmword ptr [{nxt} + 64*(16*", $g, "+", $q, ") + 16*", $k, "], xmm", $r, "\n",
            "vextracti32x4 xmmword ptr [{nxt} + 64*(16*", $g, "+4+", $q, ") + 16*", $k, "], zmm", $r, ", 1\n",
            "vextracti32x4 xmmword ptr [{nxt} + 64*(16*", $g, "+8+", $q, ") + 16*", $k, "], zmm", $r, ", 2\n",
            "vextracti32x4 xmmword ptr [{nxt} + 64*(16*", $g, "+12+", $q, ") + 16*", $k, "], zmm", $r, ", 3\n",
        )
    };
}

/// A staged run's work beside the quad starting at step `$i`: `prefetch!`'s, and one
/// of the `4G` stages of the next block (`stage!`) spread over the 16 quads: every
/// fourth quad for 1 group, every second for 2, and all but every fourth for 3.
#[rustfmt::skip]
macro_rules! staged {
    ($gs:tt, $ng:tt, $i:tt) => {
        concat!(prefetch!($gs, $ng, $i), stage_at!($ng, $i))
    };
}

/// Which stage (group, rows) goes beside the quad at step `$i` with `$ng` groups.
#[rustfmt::skip]
macro_rules! stage_at {
    (1, 0) => { stage!(0, 0) }; (1, 16) => { stage!(0, 1) };
    (1, 32) => { stage!(0, 2) }; (1, 48) => { stage!(0, 3) };
    (2, 0) => { stage!(0, 0) }; (2, 8) => { stage!(0, 1) }; (2, 16) => { stage!(0, 2) };
    (2, 24) => { stage!(0, 3) }; (2, 32) => { stage!(1, 0) }; (2, 40) => { stage!(1, 1) };
    (2, 48) => { stage!(1, 2) }; (2, 56) => { stage!(1, 3) };
    (3, 0) => { stage!(0, 0) }; (3, 4) => { stage!(0, 1) }; (3, 8) => { stage!(0, 2) };
    (3, 16) => { stage!(0, 3) }; (3, 20) => { stage!(1, 0) }; (3, 24) => { stage!(1, 1) };
    (3, 32) => { stage!(1, 2) }; (3, 36) => { stage!(1, 3) }; (3, 40) => { stage!(2, 0) };
    (3, 48) => { stage!(2, 1) }; (3, 52) => { stage!(2, 2) }; (3, 56) => { stage!(2, 3) };
    ($ng:tt, $i:tt) => { "" };
}

/// Group `$g`'s 4 state rows loaded into its registers (`load`), added to them and
/// stored back (`add_store`), or stored from them (`store`).
#[rustfmt::skip]
macro_rules! state_rows {
    (load, $g:tt) => {
        concat!(
            "vmovdqu32 ", z!($g, 0), ", zmmword ptr [{st} + 64*(4*", $g, "+0)]\n",
            "vmovdqu32 ", z!($g, 1), ", zmmword ptr [{st} + 64*(4*", $g, "+1)]\n",
            "vmovdqu32 ", z!($g, 2), ", zmmword ptr [{st} + 64*(4*", $g, "+2)]\n",
            "vmovdqu32 ", z!($g, 3), ", zmmword ptr [{st} + 64*(4*", $g, "+3)]\n",
        )
    };
    (add_store, $g:tt) => {
        concat!(
            add_store!($g, 0), add_store!($g, 1), add_store!($g, 2), add_store!($g, 3),
        )
    };
    (store, $g:tt) => {
        concat!(
            "vmovdqu32 zmmword ptr [{st} + 64*(4*", $g, "+0)], ", z!($g, 0), "\n",
            "vmovdqu32 zmmword ptr [{st} + 64*(4*", $g, "+1)], ", z!($g, 1), "\n",
            "vmovdqu32 zmmword ptr [{st} + 64*(4*", $g, "+2)], ", z!($g, 2), "\n",
            "vmovdqu32 zmmword ptr [{st} + 64*(4*", $g, "+3)], ", z!($g, 3), "\n",
        )
    };
}

/// Row `$w` of group `$g`'s state (in memory) += its register, and stored back.
#[rustfmt::skip]
macro_rules! add_store {
    ($g:tt, $w:tt) => {
        concat!(
            "vpaddd ", z!($g, $w), ", ", z!($g, $w), ", zmmword ptr [{st} + 64*(4*", $g, "+", $w, ")]\n",
            "vmovdqu32 zmmword ptr [{st} + 64*(4*", $g, "+", $w, ")], ", z!($g, $w), "\n",
        )
    };
}

/// A staged run's chaining state of group `$g`, kept in registers (`kept!`) from block
/// to block rather than in memory as the other loops keep it (`state_rows!`, whose
/// transpositions need all 32 registers): loaded and copied before the loop (`before`),
/// added to and copied again at the end of each block (`end`), stored after the last
/// (`after`). So a block's first steps wait on no store of the last one. The steps and
/// the stages leave twelve registers free (see `kept!`), enough for 3 groups.
#[rustfmt::skip]
macro_rules! kept_state {
    (before, $g:tt) => {
        concat!(
            state_rows!(load, $g),
            keep!($g, 0), keep!($g, 1), keep!($g, 2), keep!($g, 3),
        )
    };
    (end, $g:tt) => {
        concat!(add_keep!($g, 0), add_keep!($g, 1), add_keep!($g, 2), add_keep!($g, 3))
    };
    (after, $g:tt) => { state_rows!(store, $g) };
}

/// The register that keeps word `$w` of group `$g`'s chaining state through a staged
/// run (see `kept_state!`): none of the steps' (`zmm0..zmm11`, `zmm16..zmm18`) or the
/// stages' (`zmm20..zmm24`).
#[rustfmt::skip]
macro_rules! kept {
    (0, 0) => { "zmm12" }; (0, 1) => { "zmm13" }; (0, 2) => { "zmm14" }; (0, 3) => { "zmm15" };
    (1, 0) => { "zmm25" }; (1, 1) => { "zmm26" }; (1, 2) => { "zmm27" }; (1, 3) => { "zmm28" };
    (2, 0) => { "zmm29" }; (2, 1) => { "zmm30" }; (2, 2) => { "zmm31" }; (2, 3) => { "zmm19" };
}

/// Copy word `$w` of group `$g`'s state to its kept register.
macro_rules! keep {
    ($g:tt, $w:tt) => {
        concat!("vmovdqa32 ", kept!($g, $w), ", ", z!($g, $w), "\n")
    };
}

/// Word `$w` of group `$g`'s state += its kept register, and kept again: what
/// `add_store!` does through memory.
macro_rules! add_keep {
    ($g:tt, $w:tt) => {
        concat!(
            "vpaddd ",
            z!($g, $w),
            ", ",
            z!($g, $w),
            ", ",
            kept!($g, $w),
            "\n",
            keep!($g, $w)
        )
    };
}

/// The loop over the blocks of every group in `[$g, ...]` (`$ng` of them): direct,
/// piped or staged (see the module's docs).
macro_rules! blocks {
    (direct, [$($g:tt),+], $ng:tt) => {
        concat!(
            "/* no line scratch (at {lines}) or next rows (at {nxt}) in a direct run */\n",
            loop_top!(),
            $(transpose!(direct, $g),)+
            $(state_rows!(load, $g),)+
            md5_quads!(quad!([$($g),+], $ng, prefetch)),
            $(state_rows!(add_store, $g),)+
            "add {off}, {stride}\n",
            "add {pf}, {stride}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
    (piped, [$($g:tt),+], $ng:tt) => {
        concat!(
            "/* no next rows (at {nxt}) in a piped run */\n",
            copy_lines!([$($g),+]),
            loop_top!(),
            $(transpose!(piped, $g),)+
            $(state_rows!(load, $g),)+
            // The copies' block: the next one, or this one again after the last.
            next_copy_offset!(),
            md5_quads!(quad!([$($g),+], $ng, copy)),
            $(state_rows!(add_store, $g),)+
            "add {pf}, {stride}\n",
            "dec {n}\n",
            "jnz 2b\n",
        )
    };
    (staged, [$($g:tt),+], $ng:tt) => {
        concat!(
            "/* the next rows at {nxt}: {msg} + {lines} at first, then swapped */\n",
            // The first block transposed in full, as the direct loop does.
            $(transpose!(direct, $g),)+
            $(kept_state!(before, $g),)+
            loop_top!(),
            // The stages' block: the next one, or this one again after the last.
            next_copy_offset!(),
            md5_quads!(quad!([$($g),+], $ng, staged)),
            $(kept_state!(end, $g),)+
            "xchg {msg}, {nxt}\n",
            "add {pf}, {stride}\n",
            "dec {n}\n",
            "jnz 2b\n",
            $(kept_state!(after, $g),)+
        )
    };
}

/// The transposed message words: 16 rows of 16 lanes per group, 64-byte aligned.
#[repr(C, align(64))]
struct Rows<const N: usize>([[u32; 16]; N]);

/// Blocks ahead that each lane's data is prefetched. Measured on Zen 5 (`many_report`,
/// 48 messages, 3 groups): 2 and 4 level at 8 KiB, 4 ahead by 2-4% at 1 MiB; 1 lost 4%.
const AHEAD: usize = 4;

/// Byte offset of the line scratch in the scratch area (`{lines}` in the assembly),
/// after the 48 rows of transposed words; in a staged run, of the second set of rows.
const LINES_AT: usize = 48 * 64;

/// Compress `nblocks` blocks of `16 * G` lanes (`G` groups of 16, 1 to 3; state layout
/// as `lanes::LaneKernel`), block `b` of lane `l` at `lanes[l] + b * stride`; each
/// lane's block [`AHEAD`] blocks on is prefetched into L1 as the steps run. `RUN` picks
/// the loop (see `kernels::run`).
///
/// # Safety
///
/// The CPU has AVX512F, and AVX512VL too where `RUN` may pick the staged loop (its
/// 16-byte stores from `xmm20`-`xmm24`); `G` is 1 to 3; `state` is `64 * G` words;
/// `lanes` has `16 * G` pointers, each valid for reads of `(nblocks - 1) * stride + 64`
/// bytes.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn compress<const G: usize, const RUN: u8>(
    state: &mut [u32],
    lanes: &[*const u8],
    nblocks: usize,
    stride: usize,
) {
    if nblocks == 0 {
        return;
    }
    debug_assert!((1..=3).contains(&G) && state.len() == 64 * G && lanes.len() == 16 * G);
    use super::run::Loop;
    let pick = super::run::pick(RUN, nblocks);
    // The transposed message words (16 rows a group), then the line scratch (64 bytes
    // a lane, at `LINES_AT`) or the staged loop's second rows: each written before it
    // is read.
    let mut msg = core::mem::MaybeUninit::<Rows<{ LINES_AT / 64 + 48 }>>::uninit();
    // The prefetches' offset from each lane's start: `AHEAD` blocks past the block
    // being hashed. Prefetches cannot fault, so those past the end of a lane are
    // harmless.
    let pf = stride.wrapping_mul(AHEAD);
    macro_rules! run {
        ($gs:tt, $ng:tt) => {
            match pick {
                Loop::Staged => run!(blocks!(staged, $gs, $ng)),
                Loop::Direct => run!(blocks!(direct, $gs, $ng)),
                Loop::Piped => run!(blocks!(piped, $gs, $ng)),
            }
        };
        ($code:expr) => {
            core::arch::asm!(
                $code,
                // Clean upper halves before any SSE code runs (LLVM adds this after its
                // own wide code, not after `asm!`).
                "vzeroupper",
                st = in(reg) state.as_mut_ptr(),
                lp = in(reg) lanes.as_ptr(),
                msg = inout(reg) msg.as_mut_ptr().cast::<u8>() => _,
                nxt = inout(reg) msg.as_mut_ptr().cast::<u8>().wrapping_add(LINES_AT) => _,
                k = in(reg) super::lanes::STEP_K.as_ptr(),
                tf = const super::lanes::TERNLOG_F,
                tg = const super::lanes::TERNLOG_G,
                th = const super::lanes::TERNLOG_H,
                ti = const super::lanes::TERNLOG_NOT_I,
                lines = const LINES_AT,
                stride = in(reg) stride,
                n = inout(reg) nblocks => _,
                off = inout(reg) 0usize => _,
                pf = inout(reg) pf => _,
                p = out(reg) _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
                out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
                out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
                out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
                out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
                out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
                options(nostack),
            )
        };
    }
    // SAFETY: the caller guarantees AVX512F (and AVX512VL for the staged loop, the only
    // one with an instruction that needs it), and for `G` groups a state of `64 * G`
    // words and `16 * G` lanes whose blocks are readable at `off = b * stride` for
    // `b < nblocks`. Each loop runs `nblocks` (> 0) times and reads the lanes only at
    // such offsets: the direct one at `off` of the block it hashes; the piped and the
    // staged ones at 0 (their prologues) and then at `off` of the next block, which
    // stays at the last block's offset once no block follows (`cmp n, 1` before the
    // steps). All read 64 bytes a lane there (and prefetch, which never faults), write
    // only the state's `4 * G` rows and `msg`'s scratch (rows of transposed words at 0,
    // the line scratch or the staged loop's second rows at `LINES_AT`, 48 rows each;
    // 64-byte aligned, as `vmovdqa32` needs; the staged loop's 16-byte stores fall
    // inside those rows), read `STEP_K`, and clobber only the registers named.
    unsafe {
        match G {
            1 => run!([0], 1),
            2 => run!([0, 1], 2),
            _ => run!([0, 1, 2], 3),
        }
    }
}
