/*
 * Does this core lose speed when a loop that keeps the vector ALUs busy also reads 24
 * streams from memory? A probe for docs/performance.md (Zen 3, 2026-11-25), not part of
 * the library.
 *
 *     gcc -O2 -mavx2 -o /tmp/mix_probe docs/bench/mix_probe.c && /tmp/mix_probe
 *
 * Each 64-byte line of 24 streams (8 KiB messages laid end to end, read as the AVX2
 * kernel's 3 groups read them: one line of every lane in turn, one load instruction per
 * lane) is followed by 96 independent vector adds and xors, about what the kernel
 * spends per line (24 cycles at 4 a cycle: 2.67 bytes/cycle). Three kinds of pass,
 * interleaved, best of 15 each: the ALU work alone; with the loads from 24 messages
 * hot in L2 (the same 192 KiB every time); with the loads walking 128 MiB (from
 * memory). Prints GB/s for each and the ratios.
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define LANES 24
#define SIZE 8192
#define W                                                                              \
    __asm__ volatile("vpaddd %%ymm1,%%ymm0,%%ymm0\n vpxor %%ymm3,%%ymm2,%%ymm2\n"      \
                     "vpaddd %%ymm5,%%ymm4,%%ymm4\n vpxor %%ymm7,%%ymm6,%%ymm6\n"      \
                     "vpaddd %%ymm9,%%ymm8,%%ymm8\n vpxor %%ymm11,%%ymm10,%%ymm10\n"   \
                     "vpaddd %%ymm1,%%ymm12,%%ymm12\n vpxor %%ymm3,%%ymm13,%%ymm13\n" :: \
                         : "xmm0", "xmm2", "xmm4", "xmm6", "xmm8", "xmm10", "xmm12",    \
                           "xmm13");
#define WORK W W W W W W W W W W W W
#define L(l)                                                                           \
    {                                                                                  \
        if (load) {                                                                    \
            const char *line = base + m + (l) * SIZE + off;                            \
            acc = _mm256_add_epi32(acc, _mm256_load_si256((const void *)line));        \
            acc = _mm256_add_epi32(acc, _mm256_load_si256((const void *)(line + 32))); \
        }                                                                              \
        WORK                                                                           \
    }

static __m256i acc;

/* One pass over `total` bytes of messages at `base`; `load` = 0 for the ALU work only. */
static double pass(const char *base, size_t total, size_t span, int load)
{
    double t = now();
    for (size_t done = 0; done < total; done += LANES * SIZE) {
        size_t m = done % span;
        for (size_t off = 0; off < SIZE; off += 64) {
            L(0) L(1) L(2) L(3) L(4) L(5) L(6) L(7) L(8) L(9) L(10) L(11)
            L(12) L(13) L(14) L(15) L(16) L(17) L(18) L(19) L(20) L(21) L(22) L(23)
        }
    }
    return now() - t;
}

int main(void)
{
    const size_t total = (size_t)128 << 20;
    char *buf = aligned_alloc(4096, total);
    if (!buf)
        return 1;
    memset(buf, 1, total);
    double best[3] = {1e9, 1e9, 1e9};
    for (int r = 0; r < 15; r++) {
        double t;
        if ((t = pass(buf, total, total, 0)) < best[0])
            best[0] = t;
        if ((t = pass(buf, total, LANES * SIZE, 1)) < best[1])
            best[1] = t;
        if ((t = pass(buf, total, total, 1)) < best[2])
            best[2] = t;
    }
    int s[8];
    _mm256_storeu_si256((void *)s, acc);
    printf("ALU only %.2f GB/s; loads from L2 %.2f (%.2fx); loads from memory %.2f (%.2fx) (check %d)\n",
           total / best[0] / 1e9, total / best[1] / 1e9, best[0] / best[1],
           total / best[2] / 1e9, best[0] / best[2], s[0]);
    return 0;
}
