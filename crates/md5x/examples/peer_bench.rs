//! md5x as a peer in `../shared/bench-peers/run.sh`, through its `EXTRA` hook.
//!
//!     cargo build --release -p md5x --example peer_bench
//!     EXTRA=$PWD/target/release/examples/peer_bench MD5X_PEER_BACKENDS=portable ../shared/bench-peers/run.sh
//!
//! usage: peer_bench A_MIB B_MIB C_MIB THREADS
//!
//! Runs the harness's workloads (A: one stream fed the same 8 KiB buffer; B: one stream
//! over one big buffer; C-64/C-1K/C-8K/C-1M: independent messages, one digest each, on
//! 1..=THREADS threads) and prints one line per measurement, as run.sh expects:
//!
//!     peer=<name> workload=<A|B|C-64|...> threads=<n> mbps=<MB/s> check=<hex>
//!
//! `check` is the wrapping sum of the digests' first 8 bytes read little-endian.
//! Peers: `md5x` is what users get (`md5x::md5` and `Md5::new`, on the detected
//! backend), then `md5x-<backend>` for each backend named in `MD5X_PEER_BACKENDS`
//! (comma-separated; default `portable`; empty for none), through
//! `Md5::with_backend`; these are single-stream, one message per hasher. Last,
//! `md5x-many` runs only the C workloads, through `md5x::hash_many_into` (each thread
//! hands its share of the messages to the vector lanes, 4096 at a time): the
//! multi-buffer path.
use std::time::Instant;

use md5x::{Backend, Digest, Md5};
#[path = "common/aligned.rs"]
mod aligned;
use aligned::{aligned, padded};

const MIB: usize = 1 << 20;

/// Which hasher a peer line measures.
#[derive(Clone, Copy)]
enum Engine {
    /// `md5x::md5` / `Md5::new`: the process's active backend.
    Default,
    /// `Md5::with_backend`.
    Forced(Backend),
}

impl Engine {
    fn hasher(self) -> Md5 {
        match self {
            Engine::Default => Md5::new(),
            Engine::Forced(b) => Md5::with_backend(b),
        }
    }

    fn oneshot(self, msg: &[u8]) -> Digest {
        match self {
            Engine::Default => md5x::md5(msg),
            Engine::Forced(b) => {
                let mut h = Md5::with_backend(b);
                h.update(msg);
                h.finalize()
            }
        }
    }
}

fn first8(d: Digest) -> u64 {
    let b: [u8; 16] = d.into();
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

fn report(peer: &str, workload: &str, threads: usize, bytes: usize, t0: Instant, check: u64) {
    let mbps = bytes as f64 / t0.elapsed().as_secs_f64() / 1e6;
    println!("peer={peer} workload={workload} threads={threads} mbps={mbps:.1} check={check:016x}");
}

fn run(name: &str, engine: Engine, buf: &[u8], a: usize, b: usize, c: usize, max_threads: usize) {
    assert_eq!(
        first8(engine.oneshot(b"abc")),
        0xb04f_d23c_9850_0190,
        "self-test"
    );

    let t0 = Instant::now(); // A: one stream, the same 8 KiB buffer over and over
    let mut h = engine.hasher();
    (0..a / 8192).for_each(|_| h.update(&buf[..8192]));
    report(name, "A", 1, a, t0, first8(h.finalize()));

    let t0 = Instant::now(); // B: one stream, one big buffer
    let mut h = engine.hasher();
    h.update(&buf[..b]);
    report(name, "B", 1, b, t0, first8(h.finalize()));

    run_c(name, buf, c, max_threads, |mine: &[&[u8]]| {
        mine.iter()
            .map(|m| first8(engine.oneshot(m)))
            .fold(0, u64::wrapping_add)
    });
}

/// The C workloads: `c` bytes of messages of each size, on 1..=`max_threads` threads;
/// thread i takes messages [count * i / threads, count * (i + 1) / threads) and
/// `hash_share` returns the check of its share.
fn run_c(
    name: &str,
    buf: &[u8],
    c: usize,
    max_threads: usize,
    hash_share: impl Fn(&[&[u8]]) -> u64 + Sync,
) {
    for (workload, size) in [("C-64", 64), ("C-1K", 1024), ("C-8K", 8192), ("C-1M", MIB)] {
        let count = c / size;
        let msgs: Vec<&[u8]> = buf[..count * size].chunks(size).collect();
        for threads in 1..=max_threads {
            let t0 = Instant::now();
            let check = std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads)
                    .map(|i| {
                        let mine = &msgs[count * i / threads..count * (i + 1) / threads];
                        let hash_share = &hash_share;
                        s.spawn(move || hash_share(mine))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .fold(0, u64::wrapping_add)
            });
            report(name, workload, threads, count * size, t0, check);
        }
    }
}

/// The C workloads through the lanes: each thread hashes its share of the messages
/// side by side, `PART` messages per `md5x::hash_many_into` call into one reused
/// digest buffer. The other peers fold each digest into the check as it comes and
/// keep none; `md5x::hash_many` on the whole share would instead allocate (and
/// page-fault in) 16 bytes per message: 32 MiB for the 2 million 64-byte messages of
/// a 128 MiB run, which cost a quarter of the C-64 time on a 2-core Zen 3.
fn run_many(buf: &[u8], c: usize, max_threads: usize) {
    run_c("md5x-many", buf, c, max_threads, |mine: &[&[u8]]| {
        const PART: usize = 4096;
        let mut out = vec![md5x::Digest::new([0; 16]); PART.min(mine.len())];
        let mut check = 0u64;
        for part in mine.chunks(PART) {
            let out = &mut out[..part.len()];
            md5x::hash_many_into(part, out);
            check = out
                .iter()
                .map(|d| first8(*d))
                .fold(check, u64::wrapping_add);
        }
        check
    });
}

fn main() {
    let usage = "usage: peer_bench A_MIB B_MIB C_MIB THREADS";
    let n: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect(usage))
        .collect();
    assert!(n.len() == 4, "{usage}");
    let (a, b, c, max_threads) = (n[0] * MIB, n[1] * MIB, n[2] * MIB, n[3]);
    // The buffer starts on a 64-byte boundary, as page-aligned buffers do (Go's
    // allocator gives md5-simd one; OpenSSL's peer gets `malloc`'s, whose 16-byte offset
    // matters little to a one-stream kernel). A `Vec<u8>` this large starts 16 bytes past
    // one, which splits every block of every lane across two cache lines.
    let len = b.max(c).max(8192);
    let mut raw = padded(len);
    let buf = aligned(&mut raw, len);

    run("md5x", Engine::Default, buf, a, b, c, max_threads);
    let list = std::env::var("MD5X_PEER_BACKENDS").unwrap_or_else(|_| "portable".into());
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let backend: Backend = name.parse().unwrap_or_else(|e| panic!("{e}"));
        let backend = backend
            .require_supported()
            .unwrap_or_else(|e| panic!("{e}"));
        run(
            &format!("md5x-{backend}"),
            Engine::Forced(backend),
            buf,
            a,
            b,
            c,
            max_threads,
        );
    }
    run_many(buf, c, max_threads);
}
