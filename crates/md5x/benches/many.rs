//! Multi-buffer speed: `hash_many` on every lane backend this CPU runs, at 64 B, 1 KiB,
//! 8 KiB and 1 MiB messages, 16 and 32 messages per call (and the single-stream
//! x86-64/portable backend as the baseline).
//!
//!     cargo bench -p md5x --bench many
//!
//! Throughput is aggregate bytes per second over all messages of one call. For
//! cycles/byte per backend and group count, run `cargo run --release --example
//! many_report`.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use md5x::{Backend, Digest};

fn many(c: &mut Criterion) {
    let data: Vec<u8> = (0..32usize << 20).map(|i| (i % 251) as u8).collect();
    let baseline = if Backend::X86_64.is_supported() {
        Backend::X86_64
    } else {
        Backend::Portable
    };
    let backends: Vec<Backend> = std::iter::once(baseline)
        .chain(Backend::all_supported().filter(|b| b.lanes() > 1))
        .collect();
    for count in [16usize, 32] {
        for backend in &backends {
            let mut group = c.benchmark_group(format!("many{count}/{backend}"));
            for size in [64usize, 1 << 10, 8 << 10, 1 << 20] {
                let msgs: Vec<&[u8]> = (0..count)
                    .map(|i| &data[i * size..(i + 1) * size])
                    .collect();
                let mut out = vec![Digest::new([0; 16]); count];
                group.throughput(Throughput::Bytes((size * count) as u64));
                group.bench_with_input(BenchmarkId::from_parameter(size), &msgs, |b, msgs| {
                    b.iter(|| {
                        md5x::hash_many_into_with(*backend, std::hint::black_box(msgs), &mut out)
                    })
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, many);
criterion_main!(benches);
