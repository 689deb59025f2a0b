//! The single-stream hashers fed in small updates: md5x's `Md5`, `ParMd5(4)` and a lone
//! `StreamHasher` against RustCrypto's `md-5` (0.10), in the same run. Small updates are
//! where the per-call work (the partial-block fill, the call itself) shows, not the
//! compression.
//!
//!     cargo run --release -p md5x --example small_updates [-- ROUNDS]
//!     cargo run --release -p md5x --example small_updates -- HASHER SIZE [BYTES]
//!
//! Without a hasher, it prints a table: for updates of 1, 8, 16, 64, 100 and 4096 bytes,
//! core cycles and nanoseconds an update (the clock calibrated in the same process,
//! `md5x::clock`; each pass feeds 64 KiB, each cell the median of ROUNDS measurements,
//! default 3) and the speed-up of md5x's `Md5` over `md-5`.
//!
//! The `stream` column is a `StreamHasher` alone on a server of 4 KiB batches: after its
//! first 4 KiB it hashes in place (as a lone writer on any server does after its first
//! batch), so the pass measures that path more than the buffering before it.
//!
//! With a hasher (`md5`, `par`, `stream` or `md-5`) and an update size, it feeds BYTES
//! (default 1 MiB) once and prints the digest (MD5, or MD5-P(4) for `par`), untimed: the
//! form to count instructions with, `valgrind --tool=callgrind
//! target/release/examples/small_updates md5 1`. Each timed pass includes the hasher's
//! creation and finalization, which 4 KiB updates (16 a pass) feel and the others do not.
use std::hint::black_box;
use std::sync::OnceLock;

use md5_010::Digest as _;
use md5x::{chains::ParMd5, clock, Backend, Md5, Server};

const SIZES: [usize; 6] = [1, 8, 16, 64, 100, 4096];
const HASHERS: [&str; 4] = ["md5", "par", "stream", "md-5"];
const MD_5: usize = 3;
/// Bytes fed per timed pass: small enough for L2, so the updates are what is measured.
const PASS: usize = 64 << 10;

/// Feed `data` to `hasher` in updates of `size` bytes; the digest.
fn feed(hasher: &str, data: &[u8], size: usize) -> [u8; 16] {
    match hasher {
        "md5" => in_updates(Md5::new(), data, size, |h, c| h.update(c))
            .finalize()
            .into(),
        "par" => {
            let h = ParMd5::new(4).expect("4 chains is a valid count");
            in_updates(h, data, size, |h, c| h.update(c))
                .finalize()
                .into()
        }
        "stream" => feed_stream(data, size),
        "md-5" => {
            let h = md5_010::Md5::new();
            in_updates(h, data, size, |h, c| h.update(c))
                .finalize()
                .into()
        }
        _ => unreachable!("hashers are checked before feeding"),
    }
}

/// A lone `StreamHasher` fed `data` in updates of `size` bytes; the digest. Out of line,
/// so that the other hashers' loops compile as they did before it was added.
#[inline(never)]
fn feed_stream(data: &[u8], size: usize) -> [u8; 16] {
    // One server for every pass: its creation is not what is measured.
    static SERVER: OnceLock<Server> = OnceLock::new();
    let server = SERVER.get_or_init(|| Server::with_config(Backend::active(), 4096));
    let h = in_updates(server.hasher(), data, size, |h, c| h.update(c));
    h.finalize().into()
}

/// `h` fed `data` in updates of `size` bytes, each slice hidden from the optimizer.
#[inline(always)]
fn in_updates<H>(mut h: H, data: &[u8], size: usize, update: impl Fn(&mut H, &[u8])) -> H {
    for c in data.chunks(size) {
        update(&mut h, black_box(c));
    }
    h
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn usage() -> ! {
    eprintln!("usage: small_updates [ROUNDS] | small_updates md5|par|stream|md-5 SIZE [BYTES]");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = |n: usize| -> Vec<u8> { (0..n).map(|i| (i * 7 + 3) as u8).collect() };
    if let Some(hasher) = args.first().filter(|a| HASHERS.contains(&a.as_str())) {
        let size: usize = match args.get(1).map(|s| s.parse()) {
            Some(Ok(n)) if n > 0 => n,
            _ => usage(),
        };
        let bytes: usize = match args.get(2).map(|s| s.parse()) {
            None => 1 << 20,
            Some(Ok(n)) => n,
            Some(Err(_)) => usage(),
        };
        let digest = md5x::Digest::from(feed(hasher, &data(bytes), size));
        println!("{hasher} {size}: {digest}");
        return;
    }
    let rounds: usize = match args.first().map(|s| s.parse()) {
        None => 3,
        Some(Ok(n)) if n > 0 => n,
        _ => usage(),
    };
    let data = data(PASS);
    // Before any timing: each hasher gives in small updates what it gives in one, and
    // `Md5` agrees with `md-5` (`ParMd5` computes MD5-P(4), a digest of its own).
    let whole = HASHERS.map(|hasher| feed(hasher, &data, PASS));
    assert_eq!(whole[0], whole[MD_5], "md5 against md-5");
    assert_eq!(whole[0], whole[2], "md5 against stream");
    for (hasher, whole) in HASHERS.into_iter().zip(whole) {
        for size in SIZES {
            let got = feed(hasher, &data, size);
            assert_eq!(got, whole, "{hasher} in {size}-byte updates");
        }
    }
    println!(
        "clock: {:.3} GHz; ParMd5's lanes: {}; {} KiB a pass, median of {rounds}",
        clock::ghz(),
        Backend::active().name(),
        PASS >> 10
    );
    println!(
        "{:>7} {:>22} {:>22} {:>22} {:>22} {:>9}",
        "update",
        "md5 (cyc, ns)",
        "par (cyc, ns)",
        "stream (cyc, ns)",
        "md-5 (cyc, ns)",
        "speed-up"
    );
    for size in SIZES {
        let updates = PASS.div_ceil(size);
        let mut line = format!("{size:>5} B");
        let mut cycles = [0.0; HASHERS.len()];
        for (i, hasher) in HASHERS.into_iter().enumerate() {
            // Cycles "per byte" with one byte counted per update: cycles per update.
            let speeds: Vec<clock::Speed> = (0..rounds)
                .map(|_| {
                    clock::measure(
                        || {
                            black_box(feed(hasher, &data, size));
                        },
                        updates,
                    )
                })
                .collect();
            cycles[i] = median(speeds.iter().map(|s| s.cycles_per_byte).collect());
            let ns = cycles[i] / median(speeds.iter().map(|s| s.ghz).collect());
            line += &format!(" {:>12.2} {:>9.2}", cycles[i], ns);
        }
        line += &format!(" {:>8.2}x", cycles[MD_5] / cycles[0]);
        println!("{line}");
    }
}
