//! `md5x::Server` against independent `Md5`s on the same cores (issue 8's targets):
//!
//! 1. 16 writer threads (`MD5X_WRITERS`), each streaming `MD5X_SERVER_MIB` MiB
//!    (default 64) in 1 MiB writes: aggregate throughput of `Server` handles over as
//!    many independent `Md5`s, and of a server whose combiners never split the queue
//!    between two cores.
//! 2. One writer alone (`MD5X_SOLO_MIB`, default 256 MiB, in 1 MiB and in 4 KiB
//!    writes): a handle on a server over a plain `Md5`.
//! 3. `MD5X_HANDLES` (default 1,000,000) handles created, written (4 KiB) and closed
//!    in turn: throughput and resident memory per tenth of the run (the curve).
//!
//! ```text
//! cargo run --release -p md5x --example server_bench
//! MD5X_SERVER_MIB=16 MD5X_SOLO_MIB=64 MD5X_HANDLES=200000 cargo run --release ...
//! ```
//!
//! `MD5X_BATCH_KIB` sets the server's batch size (default: the server's default).
//! Each comparison alternates the two sides `MD5X_ROUNDS` times (default 3) and keeps
//! each side's best round, so that the ratios come from one run on the same machine;
//! the 16 writers' ratio is also given for each side's median round, which a single
//! lucky round of either side moves less.
use md5x::{Digest, Md5, Server};
use std::io::Write;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// The shortest of some round times.
fn best(times: &[f64]) -> f64 {
    times.iter().copied().fold(f64::MAX, f64::min)
}

/// The median of some round times (the upper one of an even count).
fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn env(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

const MIB: usize = 1 << 20;

fn chunk(seed: usize) -> Vec<u8> {
    (0..MIB)
        .map(|i| (i * 31 + seed * 7 + i / 4093) as u8)
        .collect()
}

/// Resident set size in KiB (Linux), else 0.
fn rss_kib() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4)
}

/// CPU seconds this process has used (user + system, all threads; Linux), else 0.
fn cpu_secs() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses: utime and stime are
    // the 12th and 13th, in clock ticks (100 a second on Linux).
    let f: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// `threads` writers, each writing its 1 MiB chunk `mib` times to a hasher from
/// `make`; returns seconds and the digests.
fn writers<H: Write + Send + 'static>(
    threads: usize,
    mib: usize,
    make: impl Fn() -> H,
    fin: fn(&H) -> Digest,
) -> (f64, Vec<Digest>) {
    let barrier = Arc::new(Barrier::new(threads + 1));
    let joins: Vec<_> = (0..threads)
        .map(|t| {
            let mut h = make();
            let barrier = Arc::clone(&barrier);
            let data = chunk(t);
            std::thread::spawn(move || {
                barrier.wait();
                for _ in 0..mib {
                    h.write_all(&data).unwrap();
                }
                fin(&h)
            })
        })
        .collect();
    barrier.wait();
    let t0 = Instant::now();
    let d: Vec<Digest> = joins.into_iter().map(|j| j.join().unwrap()).collect();
    (t0.elapsed().as_secs_f64(), d)
}

fn main() {
    let rounds = env("MD5X_ROUNDS", 3).max(1);
    let mib = env("MD5X_SERVER_MIB", 64).max(1);
    let solo_mib = env("MD5X_SOLO_MIB", 256).max(1);
    let handles = env("MD5X_HANDLES", 1_000_000).max(10);
    let batch = env("MD5X_BATCH_KIB", 0) * 1024;
    let server = match batch {
        0 => Server::new(),
        b => Server::with_config(md5x::Backend::active(), b),
    };
    println!(
        "md5x server_bench: backend {}, {} lanes, batch {} KiB, {} cores",
        server.backend(),
        server.lanes(),
        server.batch_bytes() / 1024,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    // 1. 16 writers (`MD5X_WRITERS`): as many Md5s, the server, and the server with its
    // combiners never splitting the queue between cores (what the split gains, in the
    // same run).
    let threads = env("MD5X_WRITERS", 16).max(1);
    let gib = (threads * mib) as f64 / 1024.0;
    let unsplit = Server::without_split(server.backend(), server.batch_bytes());
    let (mut t_md5, mut t_srv, mut t_unsplit) = (Vec::new(), Vec::new(), Vec::new());
    let before = server.stats();
    let (mut srv_wall, mut srv_cpu) = (0.0, 0.0);
    for _ in 0..rounds {
        let (t, a) = writers(threads, mib, Md5::new, Md5::finalize);
        t_md5.push(t);
        let s = server.clone();
        let cpu0 = cpu_secs();
        let (t, b) = writers(threads, mib, move || s.hasher(), |h| h.finalize());
        srv_cpu += cpu_secs() - cpu0;
        srv_wall += t;
        t_srv.push(t);
        assert_eq!(a, b, "server digests differ from Md5's");
        let s = unsplit.clone();
        let (t, c) = writers(threads, mib, move || s.hasher(), |h| h.finalize());
        t_unsplit.push(t);
        assert_eq!(a, c, "server digests differ from Md5's");
    }
    let after = server.stats();
    let runs = after.runs - before.runs;
    let (best_md5, best_srv, best_unsplit) = (best(&t_md5), best(&t_srv), best(&t_unsplit));
    println!(
        "{threads} writers x {mib} MiB (1 MiB writes): {threads} Md5s {:.2} GiB/s, Server {:.2} GiB/s: \
         ratio {:.2}x (target 4x; of the median rounds {:.2}x); {:.1} batches per combiner \
         run, {:.0}% in lanes",
        gib / best_md5,
        gib / best_srv,
        best_md5 / best_srv,
        median(&mut t_md5) / median(&mut t_srv),
        (after.batches - before.batches) as f64 / runs.max(1) as f64,
        100.0 * (after.lane_batches - before.lane_batches) as f64
            / (after.batches - before.batches).max(1) as f64
    );
    println!(
        "  without splitting the queue between cores: {:.2} GiB/s, ratio {:.2}x",
        gib / best_unsplit,
        best_md5 / best_unsplit
    );
    // Where the server's time went, over all its rounds: combiners hashing and
    // gathering (wall clock), and the CPU the process used out of what the cores had.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let hashing = (after.hash_nanos - before.hash_nanos) as f64 * 1e-9;
    let gathering = (after.gather_nanos - before.gather_nanos) as f64 * 1e-9;
    println!(
        "  server rounds: {srv_wall:.2} s; combiners hashing {hashing:.2} s ({:.1} GiB/s \
         while hashing), gathering {gathering:.2} s; CPU {srv_cpu:.2} s of {:.2} s on \
         {cores} cores",
        gib * rounds as f64 / hashing.max(1e-9),
        srv_wall * cores
    );

    // 2. One writer alone, in 1 MiB writes and in 4 KiB writes.
    let data = chunk(99);
    for write in [MIB, 4096] {
        let (mut best_md5, mut best_srv) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let t0 = Instant::now();
            let mut h = Md5::new();
            for _ in 0..solo_mib {
                data.chunks(write).for_each(|c| h.update(c));
            }
            let a = h.finalize();
            best_md5 = best_md5.min(t0.elapsed().as_secs_f64());
            let t0 = Instant::now();
            let mut h = server.hasher();
            for _ in 0..solo_mib {
                data.chunks(write).for_each(|c| h.update(c));
            }
            let b = h.finalize();
            best_srv = best_srv.min(t0.elapsed().as_secs_f64());
            assert_eq!(a, b);
        }
        let g = solo_mib as f64 / 1024.0;
        println!(
            "one writer x {solo_mib} MiB ({} KiB writes): Md5 {:.3} GiB/s, Server {:.3} GiB/s: \
             ratio {:.3}x (target 0.95x)",
            write / 1024,
            g / best_md5,
            g / best_srv,
            best_md5 / best_srv
        );
    }

    // 3. Handles created, written and closed in turn.
    let four = &data[..4096];
    let want = md5x::md5(four);
    let tenth = handles / 10;
    let t_all = Instant::now();
    let rss0 = rss_kib();
    println!("{handles} handles, 4 KiB each, in turn (per tenth: handles/s, RSS KiB):");
    let mut rates = Vec::new();
    for part in 0..10 {
        let t0 = Instant::now();
        for _ in 0..tenth {
            let mut h = server.hasher();
            h.update(four);
            assert_eq!(h.finalize(), want);
        }
        let rate = tenth as f64 / t0.elapsed().as_secs_f64();
        rates.push(rate);
        let st = server.stats();
        println!(
            "  {:>8}: {:>9.0} handles/s ({:.2} GiB/s), RSS {} KiB, live handles {}, queued {}",
            (part + 1) * tenth,
            rate,
            rate * 4096.0 / (1u64 << 30) as f64,
            rss_kib(),
            st.handles,
            st.queued
        );
    }
    let min = rates.iter().copied().fold(f64::MAX, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    println!(
        "  total {:.2} s; rate min/max {:.2}; RSS {} -> {} KiB",
        t_all.elapsed().as_secs_f64(),
        min / max,
        rss0,
        rss_kib()
    );
}
