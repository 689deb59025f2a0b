//! Single-stream speed of every backend this CPU runs, at 64 B, 1 KiB, 8 KiB, 1 MiB.
//!
//!     cargo bench -p md5x --bench single
//!
//! One message per iteration, hashed from scratch (padding included), as a user of
//! `md5x::md5` sees it.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use md5x::{Backend, Md5};

fn single(c: &mut Criterion) {
    let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    for backend in Backend::all_supported() {
        let mut group = c.benchmark_group(format!("single/{backend}"));
        for size in [64usize, 1 << 10, 8 << 10, 1 << 20] {
            group.throughput(Throughput::Bytes(size as u64));
            group.bench_with_input(
                BenchmarkId::from_parameter(size),
                &data[..size],
                |b, msg| {
                    b.iter(|| {
                        let mut h = Md5::with_backend(backend);
                        h.update(std::hint::black_box(msg));
                        h.finalize()
                    })
                },
            );
        }
        group.finish();
    }
}

criterion_group!(benches, single);
criterion_main!(benches);
