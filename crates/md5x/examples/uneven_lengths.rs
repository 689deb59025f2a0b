//! `hash_many` on messages of uneven lengths against the same bytes in messages of
//! equal length: what the job manager's refills cost.
//!
//! With uneven lengths some lane's message (or its whole-block phase) ends at almost
//! every block, so the kernel runs one block at a time and the scheduler refills a
//! lane between every two calls; with equal lengths every lane ends together.
//!
//! ```text
//! cargo run --release -p md5x --example uneven_lengths            # 8 KiB average
//! MD5X_AVG=1024 cargo run --release -p md5x --example uneven_lengths
//! ```
//!
//! Lengths are uniform in `0..=2 * MD5X_AVG`; the equal set has the same total. Each
//! set is hashed again and again over about 200 MB, alternating, best of 5 rounds.
use std::time::Instant;

fn main() {
    let avg: usize = std::env::var("MD5X_AVG")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(8192);
    println!(
        "md5x uneven_lengths: backend {}, lengths uniform in 0..={} bytes",
        md5x::Backend::active(),
        2 * avg
    );
    for n in [16usize, 24, 48, 96, 1000] {
        // xorshift: the same lengths on every run.
        let mut seed = 12345u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let uneven: Vec<Vec<u8>> = (0..n)
            .map(|i| vec![i as u8; (rnd() % (2 * avg as u64 + 1)) as usize])
            .collect();
        let total: usize = uneven.iter().map(Vec::len).sum();
        let even: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; total / n]).collect();
        let reps = (200 << 20) / total.max(1) + 1;
        let mut best = [f64::MAX; 2];
        for _ in 0..5 {
            for (i, set) in [&even, &uneven].iter().enumerate() {
                let t = Instant::now();
                for _ in 0..reps {
                    std::hint::black_box(md5x::hash_many(set));
                }
                best[i] = best[i].min(t.elapsed().as_secs_f64());
            }
        }
        let gb = (total * reps) as f64 / 1e9;
        println!(
            "{n:5} messages: equal lengths {:.2} GB/s, uneven {:.2} GB/s: uneven/equal {:.2}",
            gb / best[0],
            gb / best[1],
            best[0] / best[1]
        );
    }
}
