//! Single-stream cycles/byte of every backend this CPU runs, at 64 B, 8 KiB and 1 MiB,
//! with the clock calibrated in the same process (`md5x::clock`).
//!
//!     cargo run --release -p md5x --example scalar_speed [-- ROUNDS]
//!
//! Each message is hashed from scratch (padding included), as `md5x::md5` users see it;
//! a 64-byte message is two compressions (data, then padding). Each cell is the median
//! over ROUNDS (default 3) measurements, themselves medians over interleaved slices.
use md5x::{clock, Backend, Md5};

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("usage: scalar_speed [ROUNDS]"))
        .unwrap_or(3);
    let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    println!("clock: {:.3} GHz (median of the add chain)", clock::ghz());
    println!(
        "{:<10} {:>12} {:>12} {:>12}   (cycles/byte, median of {rounds})",
        "backend", "64 B", "8 KiB", "1 MiB"
    );
    for backend in Backend::all_supported() {
        let mut line = format!("{:<10}", backend.name());
        for size in [64usize, 8 << 10, 1 << 20] {
            let msg = &data[..size];
            let mut cpb: Vec<f64> = (0..rounds)
                .map(|_| {
                    clock::cycles_per_byte(
                        || {
                            let mut h = Md5::with_backend(backend);
                            h.update(std::hint::black_box(msg));
                            std::hint::black_box(h.finalize());
                        },
                        size,
                    )
                })
                .collect();
            cpb.sort_by(f64::total_cmp);
            line += &format!(" {:>12.3}", cpb[cpb.len() / 2]);
        }
        println!("{line}");
    }
}
