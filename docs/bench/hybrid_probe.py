#!/usr/bin/env python3
"""Would scalar MD5 chains in the integer registers come for free beside the lanes?

A probe for docs/performance.md (Zen 3, 2026-11-26), not part of the library. The
vector lane kernels keep the vector pipes busy and leave the integer ALUs idle, so a
kernel could, in principle, run one or two more messages as scalar chains in the
general registers, a step of each beside every step of the vector groups. This probe
measures whether the core gives those steps away:

    python3 docs/bench/hybrid_probe.py

It writes a C file with one loop per case (a block's 64 steps, all in registers,
each round with its own function and rotations in the kernels' instruction forms, a
message word and a step constant read from memory as the kernels read them; 2 or 3
vector groups of AVX2 (8 lanes) or SSE2 (4 lanes), then 0, 1 or 2 scalar chains),
builds it with gcc -O2 in a temporary folder and runs it twice, each run the best of
15 rounds over all the cases. Cycles come from a dependent chain of scalar adds, as
in step_probe.c. A step of every chain hashes one byte of each of its lanes:
bytes/cycle = (lanes + scalar chains) / cycles per step.
x86-64 with AVX2 only.
"""
import os
import subprocess
import tempfile


# Rotation amounts of MD5's four rounds, four steps each.
ROT = [[7, 12, 17, 22], [5, 9, 14, 20], [4, 11, 16, 23], [6, 10, 15, 21]]


def avx2_step(rnd, r, a, b, c, d):
    """One step of round `rnd` in the AVX2 kernel's forms (see avx2_asm.rs)."""
    t = "%%ymm13"
    out = [f"vpaddd (%1),{a},{a}", f"vpaddd 32(%1),{a},{a}"]
    out += [[f"vpxor {d},{c},{t}", f"vpand {b},{t},{t}", f"vpxor {d},{t},{t}",
             f"vpaddd {t},{a},{a}"],
            [f"vpandn {c},{d},{t}", f"vpaddd {t},{a},{a}", f"vpand {d},{b},{t}",
             f"vpaddd {t},{a},{a}"],
            [f"vpxor {d},{c},{t}", f"vpxor {b},{t},{t}", f"vpaddd {t},{a},{a}"],
            [f"vpandn {d},{b},{t}", f"vpxor {c},{t},{t}", f"vpsubd {t},{a},{a}"]][rnd]
    if r == 16:  # a byte shuffle (the mask's bytes do not matter to the timing)
        out += [f"vpshufb 128(%1),{a},{a}"]
    else:
        out += [f"vpslld ${r},{a},%%ymm12", f"vpsrld ${32 - r},{a},{a}",
                f"vpor %%ymm12,{a},{a}"]
    return out + [f"vpaddd {b},{a},{a}"]


def sse2_step(rnd, r, a, b, c, d):
    """The same in SSE2's two-operand forms, with the copies the SSE2 kernel needs."""
    t = "%%xmm13"
    out = [f"paddd (%1),{a}", f"paddd 32(%1),{a}"]
    out += [[f"movdqa {c},{t}", f"pxor {d},{t}", f"pand {b},{t}", f"pxor {d},{t}",
             f"paddd {t},{a}"],
            [f"movdqa {d},{t}", f"pandn {c},{t}", f"paddd {t},{a}", f"movdqa {d},{t}",
             f"pand {b},{t}", f"paddd {t},{a}"],
            [f"movdqa {c},{t}", f"pxor {d},{t}", f"pxor {b},{t}", f"paddd {t},{a}"],
            [f"movdqa {b},{t}", f"pandn {d},{t}", f"pxor {c},{t}", f"psubd {t},{a}"]][rnd]
    if r == 16:  # two word shuffles (SSE2 has no byte shuffle)
        out += [f"pshuflw $0xb1,{a},{a}", f"pshufhw $0xb1,{a},{a}"]
    else:
        out += [f"movdqa {a},%%xmm12", f"pslld ${r},%%xmm12", f"psrld ${32 - r},{a}",
                f"por %%xmm12,{a}"]
    return out + [f"paddd {b},{a}"]


def scalar_step(rnd, r, t, a, b, c, d, word="64(%1)", k=0x5a827999):
    """One step of a scalar chain: message word (at address `word`) and constant `k`,
    round function, rotate. transpose_probe.py imports it for its chains."""
    out = [f"add {word},{a}", f"add ${k:#x},{a}"]
    out += [[f"mov {c},{t}", f"xor {d},{t}", f"and {b},{t}", f"xor {d},{t}"],
            [f"mov {d},{t}", f"not {t}", f"and {c},{t}", f"add {t},{a}", f"mov {d},{t}",
             f"and {b},{t}"],
            [f"mov {c},{t}", f"xor {d},{t}", f"xor {b},{t}"],
            [f"mov {d},{t}", f"not {t}", f"or {b},{t}", f"xor {c},{t}"]][rnd]
    return out + [f"add {t},{a}", f"rol ${r},{a}", f"add {b},{a}"]


def roles(regs, k):
    """Step k's (a, b, c, d): the roles move one register a step, as in MD5."""
    return [regs[(i - k) % 4] for i in range(4)]


VECTOR = {
    "avx2": (avx2_step, 8, [[f"%%ymm{4 * g + i}" for i in range(4)] for g in range(3)]),
    "sse2": (sse2_step, 4, [[f"%%xmm{4 * g + i}" for i in range(4)] for g in range(3)]),
}
SCALAR = [("%%esi", ["%%r8d", "%%r9d", "%%r10d", "%%r11d"]),
          ("%%edi", ["%%r12d", "%%r13d", "%%r14d", "%%r15d"])]
STEPS = 64  # per loop iteration: one block


def body(isa, groups, chains):
    step, _, regs = VECTOR[isa]
    out = []
    for k in range(STEPS):
        rnd, r = k // 16, ROT[k // 16][k % 4]
        for g in range(groups):
            out += step(rnd, r, *roles(regs[g], k))
        for t, regs_t in SCALAR[:chains]:
            out += scalar_step(rnd, r, t, *roles(regs_t, k))
    return "".join(f'"{i}\\n"\n' for i in out)


HEAD = r"""
#include <stdio.h>
#include <time.h>
#define ITERS 500000L
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
#define R4(x) x x x x
static double cycle_seconds(void) {
    long i = ITERS * 4;
    double t = now();
    __asm__ volatile("1:\n" R4(R4("add $1, %%rax\n")) "dec %0\n jnz 1b\n"
                     : "+r"(i) : : "rax", "cc");
    return (now() - t) / (ITERS * 4 * 16.0);
}
#define CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
    "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "rsi", "rdi", "r8", "r9", \
    "r10", "r11", "r12", "r13", "r14", "r15", "cc"
#define RUN(body) long i = ITERS; double t = now(); \
    __asm__ volatile("1:\n" body "dec %0\n jnz 1b\n" : "+r"(i) : "r"(words) : CLOBBERS); \
    return (now() - t) / (ITERS * (double)STEPS);
static const unsigned words[48] __attribute__((aligned(64)));
"""

TAIL = r"""
#define NCASES (sizeof cases / sizeof cases[0])
int main(void) {
    /* Rounds over every case in turn, each case keeping its best: a noisy stretch of
     * this shared machine then slows one round of all cases, not one case. */
    double cyc = 1e9, t[NCASES];
    for (unsigned k = 0; k < NCASES; k++) t[k] = 1e9;
    for (int r = 0; r < 15; r++) {
        double c = cycle_seconds();
        if (c < cyc) cyc = c;
        for (unsigned k = 0; k < NCASES; k++) {
            double x = cases[k].f();
            if (x < t[k]) t[k] = x;
        }
    }
    printf("core clock %.2f GHz (add chain)\n", 1e-9 / cyc);
    for (unsigned k = 0; k < NCASES; k++) {
        double c = t[k] / cyc;
        printf("%-28s %5.2f cycles a step  %.2f bytes/cycle\n", cases[k].name, c,
               cases[k].bytes / c);
    }
    return 0;
}
"""


def source():
    cases = [(f"scalar, {n} chain(s) alone", "avx2", 0, n) for n in (1, 2)]
    cases += [(f"{isa} {g} groups + {n} scalar", isa, g, n)
              for isa in ("avx2", "sse2") for g in (2, 3) for n in (0, 1, 2)]
    funcs, rows = [], []
    for i, (name, isa, groups, chains) in enumerate(cases):
        funcs.append(f"static double f{i}(void) {{ RUN({body(isa, groups, chains)}) }}\n")
        rows.append(f'{{"{name}", f{i}, {VECTOR[isa][1] * groups + chains}}},\n')
    table = ("struct { const char *name; double (*f)(void); int bytes; } cases[] = {\n"
             + "".join(rows) + "};\n")
    return f"#define STEPS {STEPS}\n" + HEAD + "".join(funcs) + table + TAIL


def main():
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "hybrid_probe.c"), os.path.join(d, "hybrid_probe")
        with open(c, "w") as f:
            f.write(source())
        subprocess.run(["gcc", "-O2", "-o", exe, c], check=True)
        for _ in range(2):
            subprocess.run([exe], check=True)


if __name__ == "__main__":
    main()
