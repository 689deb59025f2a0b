//! Many inputs that arrive a chunk of each at a time: `update_many`, `update_many_from`
//! and `Lanes` against `hash_many` on the whole inputs (the ceiling: everything in
//! place, at once).
//!
//! ```text
//! cargo run --release -p md5x --example chunked_many                  # 32 inputs
//! MD5X_N=16 MD5X_LEN=4194304 MD5X_CHUNK=32768 cargo run --release -p md5x --example chunked_many
//! ```
//!
//! `MD5X_N` inputs of `MD5X_LEN` bytes each (default 32 of 8 MiB: from memory) are
//! hashed in rounds of one `MD5X_CHUNK`-byte chunk per input (default 256 KiB):
//!
//! - `update_many`: each round one call, the chunks hashed where they lie;
//! - `update_many_from`: the inputs as readers, 64 KiB of each per round (its own
//!   round size), copied into its buffers by `Read`;
//! - `Lanes`: each round, the chunks fed `Lanes::SLOT_BUFFER` bytes at a time, in turn
//!   (as its docs advise), which copies them into the slots;
//! - `Md5 each`: each chunk fed to its input's own `Md5`, one input after another (what
//!   a caller without these APIs does: the single-stream speed);
//! - `copy + ...`: each chunk copied out first, as md5x's Python module must do with
//!   buffers that Python code may change (bytearray, memoryview, numpy, mmap).
//!
//! Best of 5 rounds; GB/s and bytes/cycle per core (clock from `md5x::clock`), and
//! cycles per `MD5X_CHUNK` bytes of input: for small chunks, the cost of each piece.
use md5x::{clock, Digest, Lanes, Md5};
use std::time::Instant;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// One round of chunks fed to the slots: `Lanes::SLOT_BUFFER` bytes of each in turn.
fn feed_round(lanes: &mut Lanes<usize>, slots: &mut [md5x::Slot], chunks: &[&[u8]]) {
    let step = Lanes::<usize>::SLOT_BUFFER;
    let longest = chunks.iter().map(|c| c.len()).max().unwrap_or(0);
    for at in (0..longest).step_by(step) {
        for (slot, c) in slots.iter_mut().zip(chunks) {
            if let Some(piece) = c.get(at..c.len().min(at + step)) {
                lanes.feed(slot, piece);
            }
        }
    }
}

/// Close every slot and read the digests back in input order.
fn finish(mut lanes: Lanes<usize>, slots: Vec<md5x::Slot>) -> Vec<Digest> {
    let n = slots.len();
    for slot in slots {
        lanes.close(slot);
    }
    lanes.flush();
    let mut out = vec![Digest::new([0; 16]); n];
    for (i, d) in lanes.completions() {
        out[i] = d;
    }
    out
}

fn main() {
    let n = env("MD5X_N", 32);
    let len = env("MD5X_LEN", 8 << 20);
    let chunk = env("MD5X_CHUNK", 256 << 10).max(1);
    let inputs: Vec<Vec<u8>> = (0..n)
        .map(|i| (0..len).map(|j| (i * 7 + j % 251) as u8).collect())
        .collect();
    let want = md5x::hash_many(&inputs);
    let ghz = (0..5).map(|_| clock::ghz()).fold(0.0, f64::max);
    println!(
        "md5x chunked_many: backend {}, {n} inputs of {len} bytes, chunks of {chunk} bytes, {ghz:.2} GHz",
        md5x::Backend::active()
    );
    let rounds = len.div_ceil(chunk);
    let range = |r: usize| r * chunk..len.min((r + 1) * chunk);
    // The chunk rounds, either borrowed from the inputs or copied out of them.
    let mut copies: Vec<Vec<u8>> = vec![Vec::new(); n];
    let mut run = |name: &str, f: &mut dyn FnMut(&mut Vec<Vec<u8>>) -> Vec<Digest>| {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            let got = f(&mut copies);
            best = best.min(t.elapsed().as_secs_f64());
            assert_eq!(got, want, "{name}: wrong digests");
        }
        let bytes = (n * len) as f64;
        let per_cycle = bytes / best / 1e9 / ghz;
        println!(
            "{name:<22} {:>7.2} GB/s  {per_cycle:>5.2} bytes/cycle  {:>9.1} cycles a chunk",
            bytes / best / 1e9,
            chunk.min(len) as f64 / per_cycle
        );
    };
    run("hash_many (whole)", &mut |_| md5x::hash_many(&inputs));
    run("Md5 each", &mut |_| {
        let mut hashers = vec![Md5::new(); n];
        for r in 0..rounds {
            for (h, m) in hashers.iter_mut().zip(&inputs) {
                h.update(&m[range(r)]);
            }
        }
        hashers.iter().map(Md5::finalize).collect()
    });
    run("update_many", &mut |_| {
        let mut hashers = vec![Md5::new(); n];
        let mut parts: Vec<&[u8]> = Vec::with_capacity(n);
        for r in 0..rounds {
            parts.clear();
            parts.extend(inputs.iter().map(|m| &m[range(r)]));
            md5x::update_many(&mut hashers, &parts);
        }
        hashers.iter().map(Md5::finalize).collect()
    });
    run("update_many_from", &mut |_| {
        // The inputs as readers (`&[u8]` is io::Read): 64 KiB of each per round.
        let mut hashers = vec![Md5::new(); n];
        let mut readers: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let results = md5x::update_many_from(&mut hashers, &mut readers);
        assert!(results.iter().all(Result::is_ok));
        hashers.iter().map(Md5::finalize).collect()
    });
    run("copy + update_many", &mut |copies| {
        let mut hashers = vec![Md5::new(); n];
        for r in 0..rounds {
            for (c, m) in copies.iter_mut().zip(&inputs) {
                c.clear();
                c.extend_from_slice(&m[range(r)]);
            }
            md5x::update_many(&mut hashers, copies);
        }
        hashers.iter().map(Md5::finalize).collect()
    });
    run("Lanes", &mut |_| {
        let mut lanes = Lanes::new();
        let mut slots: Vec<_> = (0..n).map(|i| lanes.open(i)).collect();
        let mut parts: Vec<&[u8]> = Vec::with_capacity(n);
        for r in 0..rounds {
            parts.clear();
            parts.extend(inputs.iter().map(|m| &m[range(r)]));
            feed_round(&mut lanes, &mut slots, &parts);
        }
        finish(lanes, slots)
    });
    run("copy + Lanes", &mut |copies| {
        let mut lanes = Lanes::new();
        let mut slots: Vec<_> = (0..n).map(|i| lanes.open(i)).collect();
        for r in 0..rounds {
            for (c, m) in copies.iter_mut().zip(&inputs) {
                c.clear();
                c.extend_from_slice(&m[range(r)]);
            }
            let parts: Vec<&[u8]> = copies.iter().map(Vec::as_slice).collect();
            feed_round(&mut lanes, &mut slots, &parts);
        }
        finish(lanes, slots)
    });
}
