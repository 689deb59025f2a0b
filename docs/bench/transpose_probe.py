#!/usr/bin/env python3
"""Where could the AVX-512 lanes' transposition go? A measurement aid, not part of md5x.

Writes a C program (standard output) whose inner loop is G groups of 16 lanes running
64 MD5 steps a block the way the AVX-512 kernel does (a register copy, `vpternlogd`,
four `vpaddd` of which one reads the message row from memory and one a broadcast
constant, `vprold`), with one of four stand-ins for the work that builds the next
block's message rows:

- none:   no transposition (the ceiling: six port-0/5 operations a step a group);
- vector: 64 independent shuffles a block a group (the transposition's count, all on
          port 5 on Intel's cores), four a quad;
- scalar: the next block's 256 words a group moved by 32-bit loads and stores into a
          second row buffer (load and store ports only), four a step;
- mixed:  half of each: 2 words a step by load and store, 2 shuffles a quad;
- ms4, ms34, ms234 (and ms4a, ms34a, ms234a): the last one, two or three of the four
          shuffle stages replaced by masked stores (`vmovdqu32/64 [..]{k}`: store ports
          only) that write each 256-bit half, 128-bit chunk or 64-bit pair of a
          partly transposed vector straight to its place in the next block's rows:
          3, 2 or 1 shuffles a quad a group with 2, 4 or 8 stores, one of them a plain
          store of the low part. Their addresses are off the row by what the part's
          place in the register differs from its place in the row, so the masked ones
          span two lines; the `a` kinds store at the row itself (no split) to show what
          the split costs.

    python3 docs/bench/transpose_probe.py 2 mixed > /tmp/tp.c &&
        gcc -O2 -mavx512f -o /tmp/tp /tmp/tp.c && /tmp/tp

The kinds `avx2-none`, `avx2-vector`, `avx2-scalar` and `avx2-mixed` ask the same of
the AVX2 kernel (`avx2_asm.rs`): G groups of 8 lanes, each step as that kernel writes
it (the message row and the pre-splatted `K` row added from memory, the round function
in two or three operations, the rotation in three or one byte shuffle, the add of
`b`), with 48 vector operations a block a group as its transposition (16 `vinserti128`
from memory and 32 unpacks, three a quad), the 128 words moved by 32-bit loads and
stores (eight a quad), or half of each. Build those with `-mavx2`.

A fourth argument, CHAINS (0, 1 or 2; AVX-512 kinds other than scalar and mixed),
adds that many single-message MD5 chains in the general registers, one step of each
beside every step of the lanes (hybrid_probe.py's nine-instruction step): can the
integer ports hash a message or two more while the vector ports hash the lanes?

    python3 docs/bench/transpose_probe.py 2 ms34 5 1 > /tmp/c1.c &&
        gcc -O2 -mavx512f -o /tmp/c1 /tmp/c1.c && /tmp/c1

Prints bytes/cycle for 5 passes (with chains, the lanes' and the chains' bytes together,
and the lanes' alone); cycles come from a dependent chain of 64-bit `imul`
(3 cycles each; on Intel's recent cores a chain of `add $1` is folded at rename).
Digests are not computed: the rows stay in L1 and the values do not matter.
x86-64 with AVX-512F (AVX2 for the avx2 kinds).
"""
import sys

from hybrid_probe import roles, scalar_step

G = int(sys.argv[1]) if len(sys.argv) > 1 else 2
KIND = sys.argv[2] if len(sys.argv) > 2 else "none"
PASSES = int(sys.argv[3]) if len(sys.argv) > 3 else 5
CHAINS = int(sys.argv[4]) if len(sys.argv) > 4 else 0
MS = {"ms4": (3, 2, 256), "ms34": (2, 4, 128), "ms234": (1, 8, 64)}
MS.update({k + "a": v for k, v in MS.items()})
AVX2 = KIND.startswith("avx2-")
BASE = KIND[len("avx2-"):] if AVX2 else KIND
assert 0 <= CHAINS <= 2 and not (CHAINS and (AVX2 or BASE in ("scalar", "mixed")))
assert 1 <= G <= 3 and BASE in ("none", "vector", "scalar", "mixed", *(() if AVX2 else MS))
LANES = 8 if AVX2 else 16
ROW = 4 * LANES  # bytes in a message row (one word of every lane)
STRIDE = 4160  # bytes between lanes' data: 65 lines, so lanes fall in different sets
SCALAR = {"scalar": 4, "mixed": 2}.get(BASE, 0)  # words moved a step a group
SHUFFLES = {"vector": 4, "mixed": 2}.get(BASE, MS.get(BASE, (0,))[0])  # a quad a group
STORES, BITS = MS.get(BASE, (0, 0, 0))[1:]  # stores a quad a group, bits each
SPLIT = KIND in MS and not KIND.endswith("a")
ROTATE = [[7, 12, 17, 22], [5, 9, 14, 20], [4, 11, 16, 23], [6, 10, 15, 21]]  # by round


def move_word(g, lane, word, j):
    """Word `word` of lane `lane` of group `g` moved to its place in the message rows by a
    32-bit load and store, through the `j % 4`-th scratch register."""
    reg = ["%%eax", "%%r9d", "%%r10d", "%%r11d"][j % 4]
    return [
        f"movl {(g * LANES + lane) * STRIDE + 4 * word}(%%rsi), {reg}",
        f"movl {reg}, {g * 16 * ROW + word * ROW + 4 * lane}(%%rdi)",
    ]


def avx2_lines():
    """The AVX2 kernel's steps, with its transposition's stand-in."""
    lines = []
    for s in range(64):
        rnd = s // 16
        for g in range(G):
            a, b, c, d = (f"%%ymm{4 * g + (i - s) % 4}" for i in range(4))
            t = "%%ymm12"
            lines += [
                f"vpaddd {g * 16 * ROW + (s % 16) * ROW}(%%rdx), {a}, {a}",
                f"vpaddd {32 * s}(%%rcx), {a}, {a}",
            ]
            lines += [
                [f"vpxor {d}, {c}, {t}", f"vpand {b}, {t}, {t}", f"vpxor {d}, {t}, {t}",
                 f"vpaddd {t}, {a}, {a}"],
                [f"vpandn {c}, {d}, {t}", f"vpaddd {t}, {a}, {a}", f"vpand {d}, {b}, {t}",
                 f"vpaddd {t}, {a}, {a}"],
                [f"vpxor {d}, {c}, {t}", f"vpxor {b}, {t}, {t}", f"vpaddd {t}, {a}, {a}"],
                [f"vpandn {d}, {b}, {t}", f"vpxor {c}, {t}, {t}", f"vpsubd {t}, {a}, {a}"],
            ][rnd]
            r = ROTATE[rnd][s % 4]
            if r == 16:
                lines.append(f"vpshufb 2048(%%rcx), {a}, {a}")
            else:
                lines += [f"vpslld ${r}, {a}, %%ymm13", f"vpsrld ${32 - r}, {a}, {a}",
                          f"vpor %%ymm13, {a}, {a}"]
            lines.append(f"vpaddd {b}, {a}, {a}")
            if s % 4 == 0:
                q = s // 4
                # The 128 words a block a group by load and store: 8 a quad (a lane's
                # 16 in two quads), or 4 for mixed.
                count = 2 * SCALAR
                for j in range(count):
                    lane, word = divmod(count * q + j, 16)
                    lines += move_word(g, lane, word, j)
                # 48 vector operations a block: a vinserti128 and two unpacks a quad
                # (half of them, every other quad, for mixed).
                if BASE == "vector" or (BASE == "mixed" and q % 2 == 0):
                    lines += [f"vinserti128 $1, {g * 64 + 4 * q}(%%rsi), %%ymm14, %%ymm15",
                              "vpunpckldq %%ymm14, %%ymm14, %%ymm15",
                              "vpunpckhdq %%ymm14, %%ymm14, %%ymm15"]
    return lines


# The general registers of each scalar chain: a, b, c, d at block start, then t.
CHAIN_REGS = [["rax", "rbx", "r8", "r9", "r10"], ["r11", "r12", "r13", "r14", "r15"]]


def low32(reg):
    """The 32-bit name of a 64-bit general register, as the asm template spells it."""
    return "%%e" + reg[1:] if reg[1:] in ("ax", "bx") else f"%%{reg}d"


def chain_step(c, s):
    """Step `s` of scalar chain `c` in the general registers: hybrid_probe.py's scalar
    step in the F round's form, its word read from beside the lanes' data."""
    regs = [low32(r) for r in CHAIN_REGS[c]]
    word = f"{48 * STRIDE + 64 * c + 4 * (s % 16)}(%%rsi)"
    return scalar_step(0, ROTATE[0][s % 4], regs[4], *roles(regs[:4], s), word=word,
                       k=(s * 0x9E3779B9) % (1 << 31))


def avx512_lines():
    """The AVX-512 kernel's steps (the F round's form throughout), with the stand-in."""
    lines = []
    for s in range(64):
        for g in range(G):
            regs = [f"%%zmm{4 * g + i}" for i in range(4)]
            a, b, c, d = (regs[(i - s) % 4] for i in range(4))
            t = f"%%zmm{12 + g}"
            lines += [
                f"vmovdqa32 {b}, {t}",
                f"vpternlogd $0xCA, {d}, {c}, {t}",
                f"vpaddd {g * 1024 + (s % 16) * 64}(%%rdx), {a}, {a}",
                f"vpaddd {4 * s}(%%rcx)%{{1to16%}}, {a}, {a}",
                f"vpaddd {t}, {a}, {a}",
                f"vprold ${ROTATE[0][s % 4]}, {a}, {a}",
                f"vpaddd {b}, {a}, {a}",
            ]
            for j in range(SCALAR):
                word, lane = divmod(SCALAR * s + j, 16)
                lines += move_word(g, lane, word, j)
            if s % 4 == 0:
                for j in range(SHUFFLES):
                    lines.append(f"vpunpckldq %%zmm{20 + j}, %%zmm{24 + j}, %%zmm{28 + j}")
                # The quad's stores: part j of a register goes to part j + 1 of a row
                # (wrapping), except the first, a plain store of the low part.
                parts = 512 // BITS if STORES else 1
                for j in range(STORES):
                    row = g * 1024 + (4 * j + s // 4) % 16 * 64
                    src = f"%%zmm{28 + j % max(SHUFFLES, 1)}"
                    if j == 0:
                        reg = {256: "ymm", 128: "xmm", 64: "xmm"}[BITS].join(src.rsplit("zmm", 1))
                        op = "vmovq" if BITS == 64 else "vmovdqu32"
                        lines.append(f"{op} {reg}, {row}(%%rdi)")
                        continue
                    part = j % parts
                    place = (part + 1) % parts if SPLIT else part
                    off = row + (place - part) * BITS // 8
                    w = "64" if BITS == 64 else "32"
                    lines.append(f"vmovdqu{w} {src}, {off}(%%rdi)%{{%%k{part}%}}")
        for c in range(CHAINS):
            lines += chain_step(c, s)
    return lines


lines = avx2_lines() if AVX2 else avx512_lines()
body = "\n".join(f'        "{line}\\n"' for line in lines)
# With two chains, every free general register holds a chain: the block count is kept
# in memory.
gprs = ", ".join(f'"{r}"' for r in dict.fromkeys(
    ["rax", "r9", "r10", "r11"] + [r for c in CHAIN_REGS[:CHAINS] for r in c]))
count, dec = ("+m", "decq") if CHAINS == 2 else ("+r", "dec")
clobbers = ", ".join(f'"xmm{i}"' for i in list(range(16)) + ([] if AVX2 else list(range(20, 32))))

print(f"""#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}}

/* Seconds per cycle: 4 dependent imuls (3 cycles each) an iteration. */
static double cycle_seconds(void) {{
    long i = 20000000, x = 3;
    double t = now();
    __asm__ volatile("1:\\n imul %1,%1\\n imul %1,%1\\n imul %1,%1\\n imul %1,%1\\n"
                     "dec %0\\n jnz 1b\\n" : "+r"(i), "+r"(x) : : "cc");
    return (now() - t) / (20000000.0 * 12);
}}

int main(void) {{
    static unsigned char src[48 * {STRIDE} + 4096] __attribute__((aligned(64)));
    static unsigned rows[2][3 * 256 + 64] __attribute__((aligned(64)));
    static unsigned k[64 * 8 + 8] __attribute__((aligned(64)));
    memset(src, 1, sizeof src);
    memset(rows, 2, sizeof rows);
    for (int i = 0; i < 64 * 8 + 8; i++) k[i] = i * 0x9e3779b9u;
    double cs = cycle_seconds();
    const long blocks = 2000000;
    /* k1..k7: part j of a register (BITS wide) alone. */
    for (int j = 1; j < 512 / ({BITS} ? {BITS} : 512); j++) {{
        unsigned m = (({BITS} == 64 ? 1u : {BITS} == 128 ? 0xFu : 0xFFu) << (j * ({BITS} == 64 ? 1 : {BITS} / 32)));
        switch (j) {{
        case 1: __asm__ volatile("kmovw %0, %%k1" : : "r"(m)); break;
        case 2: __asm__ volatile("kmovw %0, %%k2" : : "r"(m)); break;
        case 3: __asm__ volatile("kmovw %0, %%k3" : : "r"(m)); break;
        case 4: __asm__ volatile("kmovw %0, %%k4" : : "r"(m)); break;
        case 5: __asm__ volatile("kmovw %0, %%k5" : : "r"(m)); break;
        case 6: __asm__ volatile("kmovw %0, %%k6" : : "r"(m)); break;
        case 7: __asm__ volatile("kmovw %0, %%k7" : : "r"(m)); break;
        }}
    }}
    for (int pass = 0; pass < {PASSES}; pass++) {{
        void *rd = rows[0] + 32, *wr = rows[1] + 32;
        long n = blocks;
        double t = now();
        __asm__ volatile(
        "1:\\n"
{body}
        "xchg %%rdx, %%rdi\\n"
        "{dec} %2\\n"
        "jnz 1b\\n"
        : "+d"(rd), "+D"(wr), "{count}"(n)
        : "S"(src), "c"(k)
        : {gprs}, "memory", "cc", {clobbers});
        double cycles = (now() - t) / cs;
        printf("G=%d {KIND} chains={CHAINS}: %.1f cycles a block of every group, %.2f bytes/cycle "
               "(%.2f in the lanes; %.2f GHz)\\n", {G}, cycles / blocks,
               blocks * 64.0 * ({LANES} * {G} + {CHAINS}) / cycles,
               blocks * 64.0 * {LANES} * {G} / cycles, 1 / cs / 1e9);
    }}
    return 0;
}}""")
