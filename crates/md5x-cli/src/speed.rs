//! `--speed`: the md5speed of the papers. MB/s and cycles/byte of every backend this
//! CPU runs, at 64 B, 1 KiB, 8 KiB and 1 MiB: single-stream (one message at a time,
//! as `md5sum` and `md5x::md5` hash) and multi-buffer (`md5x::hash_many` over enough
//! messages to fill the backend's lanes three times). Cycles come from `md5x::clock`,
//! which calibrates the core clock in the same process with a chain of dependent adds.

use std::io::Write;

use md5x::{Backend, Digest, Md5};

const SIZES: [(usize, &str); 4] = [
    (64, "64 B"),
    (1024, "1 KiB"),
    (8192, "8 KiB"),
    (1 << 20, "1 MiB"),
];

/// One row of the table.
fn row(b: Backend, mode: &str, label: &str, s: &md5x::clock::Speed) -> String {
    format!(
        "{:<8} {:<24} {:>8} {:>10.1} {:>8.2}\n",
        b.name(),
        mode,
        label,
        s.mbps,
        s.cycles_per_byte
    )
}

/// Write and flush (each row shows as soon as it is measured).
fn say(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Measure and print every row; the first write error ends it.
pub fn run(out: &mut impl Write) -> std::io::Result<()> {
    let ghz = md5x::clock::ghz();
    let head = format!(
        "md5x --speed: core clock ~{ghz:.2} GHz{}; MB = 10^6 bytes, cycles per byte per core\n\
         {:<8} {:<24} {:>8} {:>10} {:>8}\n",
        if md5x::clock::EXACT_CHAIN {
            ""
        } else {
            " (approximate)"
        },
        "backend",
        "mode",
        "size",
        "MB/s",
        "cyc/B"
    );
    say(out, &head)?;
    // Distinct bytes for every message of the largest batch measured (three rounds of
    // the widest backend's lanes, 1 MiB each), so no row reads cached copies.
    let most = 3 * Backend::all_supported()
        .map(|b| b.lanes())
        .max()
        .unwrap_or(1);
    let data: Vec<u8> = (0..most << 20).map(|i| (i % 251) as u8).collect();
    for b in Backend::all_supported() {
        for (n, label) in SIZES {
            let msg = &data[..n];
            let s = md5x::clock::measure(
                || {
                    let mut h = Md5::with_backend(b);
                    h.update(std::hint::black_box(msg));
                    std::hint::black_box(h.finalize());
                },
                n,
            );
            let line = row(b, "single-stream", label, &s);
            say(out, &line)?;
        }
        if b.lanes() == 1 {
            continue;
        }
        // Three rounds of full lanes: what hash_many does with a big batch.
        let count = 3 * b.lanes();
        let mode = format!("multi-buffer, {count} msgs");
        for (n, label) in SIZES {
            let msgs: Vec<&[u8]> = data.chunks(n).take(count).collect();
            let mut digests = vec![Digest::new([0; 16]); count];
            let s = md5x::clock::measure(
                || md5x::hash_many_into_with(b, std::hint::black_box(&msgs), &mut digests),
                n * count,
            );
            let line = row(b, &mode, label, &s);
            say(out, &line)?;
        }
    }
    let unsupported: Vec<&str> = Backend::ALL
        .iter()
        .filter(|b| !b.is_supported())
        .map(|b| b.name())
        .collect();
    if !unsupported.is_empty() {
        let tail = format!(
            "not run (this CPU or build lacks them): {}\n",
            unsupported.join(", ")
        );
        say(out, &tail)?;
    }
    Ok(())
}
