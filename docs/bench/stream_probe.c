/*
 * How fast can one core read 48 interleaved streams from memory, with no hashing at
 * all? The ceiling for the 3-group AVX-512 lane kernel on messages that come from
 * DRAM (see docs/performance.md, Zen 5). A measurement aid, not part of the library.
 *
 *     gcc -O2 -mavx512f -o /tmp/stream_probe docs/bench/stream_probe.c
 *     taskset -c 1 /tmp/stream_probe 0; taskset -c 1 /tmp/stream_probe 4
 *     taskset -c 1 /tmp/stream_probe 4 32    # 32 streams: the 2-group kernel's lanes
 *
 * 48 streams (or the second argument's count) of 1 MiB each, laid end to end as
 * hash_many's benchmarks lay messages; one 64-byte line of each stream in turn, as the
 * kernel reads a block of every lane; with the argument N > 0, each line N blocks ahead
 * is prefetched into L1 first, as the kernel does (it uses 4). Sets of streams (the
 * third argument, default 2: 96 MiB in all for 48 streams) take turns between passes,
 * so that every pass reads from memory: give enough sets to pass the L3 (32 MiB on
 * Zen 5, several hundred on large Xeons). Prints the best of 5 passes in GB/s (10^9
 * bytes a second). x86-64 with AVX512F only.
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

int main(int argc, char **argv)
{
    const size_t size = (size_t)1 << 20;
    int ahead = argc > 1 ? atoi(argv[1]) : 4;
    int lanes = argc > 2 ? atoi(argv[2]) : 48;
    int sets = argc > 3 ? atoi(argv[3]) : 2;
    if (lanes < 1 || lanes > 1024 || sets < 1 || sets > 64)
        return 2;
    size_t total = (size_t)lanes * size * sets;
    char *buf = aligned_alloc(4096, total);
    if (!buf)
        return 1;
    memset(buf, 1, total);
    double best = 1e9;
    __m512i acc = _mm512_setzero_si512();
    for (int pass = 0; pass < 5; pass++) {
        char *base = buf + (pass % sets) * (size_t)lanes * size;
        double t = now();
        for (size_t off = 0; off < size; off += 64) {
            for (int l = 0; l < lanes; l++) {
                char *line = base + (size_t)l * size + off;
                if (ahead)
                    _mm_prefetch(line + ahead * 64, _MM_HINT_T0);
                acc = _mm512_add_epi32(acc, _mm512_load_si512(line));
            }
        }
        t = now() - t;
        if (t < best)
            best = t;
    }
    int sum[16];
    _mm512_storeu_si512(sum, acc);
    printf("%d streams x 1 MiB, prefetch %d blocks ahead: %.1f GB/s (check %d)\n", lanes,
           ahead, lanes * size / best / 1e9, sum[0]);
    return 0;
}
