//! One big input at multi-buffer speed: MD5-P(K) against plain MD5 on one core, per
//! backend, in bytes/cycle with the core clock calibrated in the same process.
//!
//!     cargo run --release -p md5x --example chains_speed [-- MIB]
//!
//! The input is one buffer of MIB MiB (default 1024; byte i = i mod 251; a fraction
//! such as 0.25 for a buffer that stays in L2), fed to a streaming hasher 8 MiB at a
//! time (or the whole buffer, when smaller), cycling through the buffer, so the data
//! comes from memory as it would from a big file in the page cache. Each figure is the
//! median of `md5x::clock`'s interleaved work/clock slices.
use md5x::chains::ParMd5;
use md5x::{clock, Backend, Md5};

fn main() {
    let mib: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("usage: chains_speed [MIB]"))
        .unwrap_or(1024.0);
    // Whole 4 KiB pages, at least one.
    let len = ((mib * 256.0) as usize).max(1) << 12;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let step = len.min(8 << 20);
    println!(
        "core clock {:.2} GHz; one buffer of {} KiB, fed {} KiB at a time",
        clock::ghz(),
        data.len() >> 10,
        step >> 10
    );
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10}   (bytes/cycle on one core; x = vs plain MD5)",
        "backend", "MD5", "MD5-P4", "MD5-P8", "MD5-P16"
    );
    for backend in Backend::all_supported() {
        let mut at = 0;
        let mut next = || {
            let chunk = &data[at..at + step];
            at = (at + step) % (data.len() - data.len() % step);
            chunk
        };
        let mut plain = Md5::with_backend(backend);
        let md5 = 1.0 / clock::cycles_per_byte(|| plain.update(next()), step);
        let mut line = format!("{:<10} {:>10.2}", backend.name(), md5);
        for k in [4, 8, 16] {
            let mut h = ParMd5::with_backend(k, backend).unwrap();
            let bpc = 1.0 / clock::cycles_per_byte(|| h.update(next()), step);
            line += &format!(" {:>5.2} {:>4}", bpc, format!("{:.1}x", bpc / md5));
        }
        println!("{line}");
    }
}
