//! `--speed`: MB/s and cycles/byte of every backend this CPU runs, single-stream, at
//! 64 B, 1 KiB, 8 KiB and 1 MiB (md5speed). Cycles come from `md5x::clock`, which
//! calibrates the core clock in-process with a chain of dependent adds.
//!
//! Multi-buffer rows (hash_many through the lanes) are added when the library's
//! `hash_many` lands; see the note printed at the end.

use std::io::Write;

use md5x::{Backend, Md5};

const SIZES: [(usize, &str); 4] = [
    (64, "64 B"),
    (1024, "1 KiB"),
    (8192, "8 KiB"),
    (1 << 20, "1 MiB"),
];

pub fn run() -> i32 {
    let mut out = std::io::stdout().lock();
    let ghz = md5x::clock::ghz();
    let mut text =
        format!(
        "md5x --speed: single-stream MD5, core clock ~{ghz:.2} GHz{}\n{:<10} {:>8} {:>10} {:>8}\n",
        if md5x::clock::EXACT_CHAIN { "" } else { " (approximate)" },
        "backend",
        "size",
        "MB/s",
        "cyc/B"
    );
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return 1;
    }
    for b in Backend::all_supported() {
        for (n, label) in SIZES {
            let data = vec![0x5au8; n];
            let s = md5x::clock::measure(
                || {
                    let mut h = Md5::with_backend(b);
                    h.update(std::hint::black_box(&data));
                    std::hint::black_box(h.finalize());
                },
                n,
            );
            text = format!(
                "{:<10} {:>8} {:>10.1} {:>8.2}\n",
                b.name(),
                label,
                s.mbps,
                s.cycles_per_byte
            );
            if out
                .write_all(text.as_bytes())
                .and_then(|_| out.flush())
                .is_err()
            {
                return 1;
            }
        }
    }
    let unsupported: Vec<&str> = Backend::ALL
        .iter()
        .filter(|b| !b.is_supported())
        .map(|b| b.name())
        .collect();
    text = String::new();
    if !unsupported.is_empty() {
        text.push_str(&format!(
            "not run (this CPU lacks them): {}\n",
            unsupported.join(", ")
        ));
    }
    text.push_str("multi-buffer: not measured (md5x::hash_many is not in this build yet)\n");
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return 1;
    }
    0
}
