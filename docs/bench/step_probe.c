/*
 * How fast can interleaved MD5 step chains run on this core, with nothing else in
 * the way? A measurement aid for the AVX2 lane kernels (see docs/performance.md, Zen 3
 * and Zen 1), not part of the library.
 *
 *     gcc -O2 -o /tmp/step_probe docs/bench/step_probe.c && /tmp/step_probe
 *
 * Each chain is one 8-lane AVX2 group running round 1's step over and over, all in
 * registers: a += mk; a += ((c ^ d) & b) ^ d; a = rotl(a, 7) (two shifts and an or);
 * a += b; then the roles rotate as in MD5. That is 9 vector operations a step and a
 * 6-operation dependent chain. G chains (G = 1, 2, 3) are interleaved step by step,
 * as the kernel interleaves its groups; registers: 4 a chain, 2 temporaries, 1 for mk.
 * Two variants of 10 operations follow: MEM also adds a message word from memory
 * (as the kernel does), LATE adds the round function before a, m and mk (an 8-op
 * chain, the order LLVM emits for some of the kernel's steps). Cycles come from a
 * dependent chain of scalar adds (1 cycle each), the same calibration the library's
 * clock uses. x86-64 with AVX2 only.
 */
#include <stdio.h>
#include <time.h>

#define ITERS 20000000L

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define R4(x) x x x x
/* Seconds per cycle: 16 dependent adds per iteration. */
static double cycle_seconds(void) {
    long i = ITERS;
    double t = now();
    __asm__ volatile("1:\n" R4(R4("add $1, %%rax\n")) "dec %0\n jnz 1b\n"
                     : "+r"(i)
                     :
                     : "rax", "cc");
    return (now() - t) / (ITERS * 16.0);
}

/* One step on registers a, b, c, d (strings like "%%ymm0"); ymm12, ymm13 are
 * temporaries, ymm14 holds mk. The new value lands in a's register. */
#define STEP(a, b, c, d)                                                             \
    "vpaddd %%ymm14," a "," a "\n"                                                   \
    "vpxor " d "," c ",%%ymm13\n"                                                    \
    "vpand " b ",%%ymm13,%%ymm13\n"                                                  \
    "vpxor " d ",%%ymm13,%%ymm13\n"                                                  \
    "vpaddd %%ymm13," a "," a "\n"                                                   \
    "vpslld $7," a ",%%ymm12\n"                                                      \
    "vpsrld $25," a "," a "\n"                                                       \
    "vpor %%ymm12," a "," a "\n"                                                     \
    "vpaddd " b "," a "," a "\n"

/* Step s of a chain whose registers are r0..r3: the roles rotate a step at a time. */
#define S0(st, r0, r1, r2, r3) st(r0, r1, r2, r3)
#define S1(st, r0, r1, r2, r3) st(r3, r0, r1, r2)
#define S2(st, r0, r1, r2, r3) st(r2, r3, r0, r1)
#define S3(st, r0, r1, r2, r3) st(r1, r2, r3, r0)
#define CALL(m, ...) m(__VA_ARGS__)
/* The chains' registers. */
#define C0 "%%ymm0", "%%ymm1", "%%ymm2", "%%ymm3"
#define C1 "%%ymm4", "%%ymm5", "%%ymm6", "%%ymm7"
#define C2 "%%ymm8", "%%ymm9", "%%ymm10", "%%ymm11"

/* Four steps (the roles back where they started) of every chain, interleaved. */
#define BODY1(st) CALL(S0, st, C0) CALL(S1, st, C0) CALL(S2, st, C0) CALL(S3, st, C0)
#define BODY2(st)                                                                    \
    CALL(S0, st, C0) CALL(S0, st, C1) CALL(S1, st, C0) CALL(S1, st, C1)              \
    CALL(S2, st, C0) CALL(S2, st, C1) CALL(S3, st, C0) CALL(S3, st, C1)
#define BODY3(st)                                                                    \
    CALL(S0, st, C0) CALL(S0, st, C1) CALL(S0, st, C2)                               \
    CALL(S1, st, C0) CALL(S1, st, C1) CALL(S1, st, C2)                               \
    CALL(S2, st, C0) CALL(S2, st, C1) CALL(S2, st, C2)                               \
    CALL(S3, st, C0) CALL(S3, st, C1) CALL(S3, st, C2)

/* Variants of the step, 10 ops each: MEM adds a message word from memory first, as
 * the kernel does (a += m; a += mk; then F); LATE adds F first and then a, m and mk,
 * the order LLVM emits for some of the kernel's steps: an 8-op dependent chain. */
#define STEP_MEM(a, b, c, d) "vpaddd (%1)," a "," a "\n" STEP(a, b, c, d)
#define STEP_LATE(a, b, c, d)                                                        \
    "vpxor " d "," c ",%%ymm13\n"                                                    \
    "vpand " b ",%%ymm13,%%ymm13\n"                                                  \
    "vpxor " d ",%%ymm13,%%ymm13\n"                                                  \
    "vpaddd " a ",%%ymm13,%%ymm13\n"                                                 \
    "vpaddd (%1),%%ymm13,%%ymm13\n"                                                  \
    "vpaddd %%ymm14,%%ymm13," a "\n"                                                 \
    "vpslld $7," a ",%%ymm12\n"                                                      \
    "vpsrld $25," a "," a "\n"                                                       \
    "vpor %%ymm12," a "," a "\n"                                                     \
    "vpaddd " b "," a "," a "\n"

#define CLOBBERS                                                                     \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",  \
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "cc"
#define RUN(body)                                                                    \
    long i = ITERS;                                                                  \
    double t = now();                                                                \
    __asm__ volatile("vpxor %%ymm14,%%ymm14,%%ymm14\n1:\n" body "dec %0\n jnz 1b\n"  \
                     : "+r"(i)                                                       \
                     : "r"(word)                                                     \
                     : CLOBBERS);                                                    \
    return (now() - t) / ITERS;

/* The message word the MEM and LATE variants add (a 64-byte aligned line). */
static const unsigned word[16] __attribute__((aligned(64)));

static double run1(void) { RUN(BODY1(STEP)) }
static double run2(void) { RUN(BODY2(STEP)) }
static double run3(void) { RUN(BODY3(STEP)) }
static double run1_mem(void) { RUN(BODY1(STEP_MEM)) }
static double run2_mem(void) { RUN(BODY2(STEP_MEM)) }
static double run3_mem(void) { RUN(BODY3(STEP_MEM)) }
static double run1_late(void) { RUN(BODY1(STEP_LATE)) }
static double run2_late(void) { RUN(BODY2(STEP_LATE)) }
static double run3_late(void) { RUN(BODY3(STEP_LATE)) }

/* Throughput: 12 independent adds, or 12 independent shifts, an iteration. */
#define TWELVE(op)                                                                   \
    op "%%ymm0\n" op "%%ymm1\n" op "%%ymm2\n" op "%%ymm3\n" op "%%ymm4\n"          \
    op "%%ymm5\n" op "%%ymm6\n" op "%%ymm7\n" op "%%ymm8\n" op "%%ymm9\n"          \
    op "%%ymm10\n" op "%%ymm11\n"
static double adds(void) { RUN(TWELVE("vpaddd %%ymm14,%%ymm14,")) }
static double shifts(void) { RUN(TWELVE("vpslld $3,%%ymm14,")) }

static double best(double (*f)(void)) {
    double b = 1e9;
    for (int k = 0; k < 7; k++) {
        double x = f();
        if (x < b) b = x;
    }
    return b;
}

int main(void) {
    double cyc = best(cycle_seconds);
    double (*runs[3][3])(void) = {
        {run1, run2, run3}, {run1_mem, run2_mem, run3_mem}, {run1_late, run2_late, run3_late}};
    const char *names[3] = {"9 ops, in registers", "MEM: + a message word from memory",
                            "LATE: + F first (8-op chain)"};
    const double ops[3] = {9, 10, 10};
    printf("core clock %.2f GHz (add chain)\n", 1e-9 / cyc);
    printf("independent vpaddd: %.2f a cycle; vpslld: %.2f a cycle\n",
           12 / (best(adds) / cyc), 12 / (best(shifts) / cyc));
    for (int v = 0; v < 3; v++) {
        printf("%s\n", names[v]);
        for (int g = 1; g <= 3; g++) {
            double per_step = best(runs[v][g - 1]) / cyc / 4; /* cycles per step of all G */
            double group_step = per_step / g;
            /* A group-step hashes one 4-byte word in each of 8 lanes. */
            printf("  G=%d: %.2f cycles per chain-step, %.2f vector ops/cycle, "
                   "%.2f bytes/cycle at 8 lanes a chain\n",
                   g, group_step, ops[v] / group_step, 8 / group_step);
        }
    }
    return 0;
}
