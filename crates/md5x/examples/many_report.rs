//! Aggregate multi-buffer speed per backend and group count: bytes/cycle and
//! cycles/byte per core, with the core clock calibrated in-process (`md5x::clock`).
//!
//!     cargo run --release -p md5x --example many_report               # the table
//!     cargo run --release -p md5x --example many_report -- cutover    # lanes vs scalar
//!     cargo run --release -p md5x --example many_report -- choose     # hash_many's choice
//!     cargo run --release -p md5x --features rayon --example many_report -- par
//!
//! Messages are laid end to end in one buffer (byte i = i mod 251), as in
//! `../shared/bench-peers`. `MD5X_SIZES` and `MD5X_COUNTS` (comma-separated) override
//! the default sizes (64, 1024, 8192, 1048576) and message counts (16, 24, 32, 48);
//! `MD5X_BACKENDS` (comma-separated names, e.g. `avx2`) keeps only those lane backends.
//! `MD5X_GAP` leaves that many bytes between messages (default 0): messages end to end
//! at a power-of-two size start at the same offset within a page, so every lane reads
//! the same L1 cache set at once; a gap of a few cache lines spreads them.
//! `MD5X_SAME=1` makes every message the same bytes (one slice, hot in L1 for small
//! sizes): the kernels' own speed, without the memory system's.
//!
//! Timing: these machines are shared, so each figure is the best of many short slices
//! of about 1 ms (a slice that was interrupted only reads slower), interleaved over all
//! the figures of the table, and converted to cycles with the core clock from
//! `md5x::clock::ghz` (an add chain of known length): the fastest of the readings
//! taken at the start and after every round, since a reading only errs slow.
use md5x::{clock, tuning, Backend, Digest};
#[path = "common/aligned.rs"]
mod aligned;
use aligned::{aligned, padded};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Nanoseconds since the first call.
fn cpu_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The fastest reading of the core clock so far, in GHz (0 before the first).
static CLOCK: Mutex<f64> = Mutex::new(0.0);

/// Read the core clock again (the best of 5 readings) and return the fastest reading so
/// far. An add chain only ever reads slow (a host that takes the core away, a clock not
/// yet ramped up), and one slow reading at the start once put a whole table 1.5x low on
/// a Zen 3 guest, so the table reads the clock again after every round.
fn read_clock() -> f64 {
    let g = (0..5).map(|_| clock::ghz()).fold(0.0, f64::max);
    let mut best = CLOCK.lock().unwrap();
    *best = best.max(g);
    *best
}

/// The core clock in GHz: the fastest reading so far.
fn ghz() -> f64 {
    let best = *CLOCK.lock().unwrap();
    if best > 0.0 {
        best
    } else {
        read_clock()
    }
}

/// What `measure` found.
struct Speed {
    /// Nanoseconds per byte: cycles per byte once multiplied by the clock.
    ns_per_byte: f64,
    cycles_per_byte: f64,
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    mbps: f64,
}

/// Best of 5 slices of about 1 ms.
fn measure(mut work: impl FnMut(), bytes_per_call: usize) -> Speed {
    let mut calls = 1u64;
    loop {
        let t0 = cpu_ns();
        (0..calls).for_each(|_| work());
        let dt = cpu_ns() - t0;
        if dt >= 250_000 || calls >= 1 << 30 {
            calls = (calls * 1_000_000 / dt.max(1)).max(1);
            break;
        }
        calls *= 4;
    }
    let best = (0..5)
        .map(|_| {
            let t0 = cpu_ns();
            (0..calls).for_each(|_| work());
            (cpu_ns() - t0) as f64 / (calls as f64 * bytes_per_call as f64)
        })
        .fold(f64::INFINITY, f64::min);
    Speed {
        ns_per_byte: best,
        cycles_per_byte: best * ghz(),
        mbps: 1e3 / best,
    }
}

fn list(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var)
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

fn scalar_backend() -> Backend {
    if Backend::X86_64.is_supported() {
        Backend::X86_64
    } else {
        Backend::Portable
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    println!(
        "core clock: {:.2} GHz (add chain{})",
        ghz(),
        if clock::EXACT_CHAIN {
            ""
        } else {
            ", inexact here"
        }
    );
    match mode.as_str() {
        "cutover" => cutover(),
        "choose" => choose(),
        "par" => par(),
        _ => table(),
    }
}

/// Bytes between one message's start and the next's: the size plus `MD5X_GAP`.
fn pitch(size: usize) -> usize {
    match std::env::var("MD5X_SAME").as_deref() {
        Ok("1") => 0,
        _ => size + list("MD5X_GAP", &[0])[0],
    }
}

fn msgs(data: &[u8], size: usize, count: usize) -> Vec<&[u8]> {
    let pitch = pitch(size);
    (0..count)
        .map(|i| &data[i * pitch..i * pitch + size])
        .collect()
}

type Work<'a> = Box<dyn Fn(&[&[u8]], &mut [Digest]) + 'a>;

/// The rows of the table: the scalar baseline, then every lane backend at 1 to 3 groups
/// and at its default.
fn rows() -> Vec<(String, Work<'static>)> {
    let mut rows: Vec<(String, Work)> = Vec::new();
    let s = scalar_backend();
    rows.push((
        format!("{s} (1 lane)"),
        Box::new(move |m, o| md5x::hash_many_into_with(s, m, o)),
    ));
    let only = std::env::var("MD5X_BACKENDS").ok();
    let wanted = |b: &Backend| match &only {
        Some(names) => names.split(',').any(|n| n.trim() == b.to_string()),
        None => true,
    };
    for b in Backend::all_supported().filter(|b| b.lanes() > 1 && wanted(b)) {
        let (def, _) = tuning::lane_shape(b).unwrap();
        for g in 1..=3 {
            let mut probe = [Digest::new([0; 16])];
            if !tuning::hash_many_tuned(b, g, 1, &[&[0u8][..]], &mut probe) {
                continue;
            }
            let star = if g == def { "*" } else { "" };
            rows.push((
                format!("{b} x{g}{star}"),
                Box::new(move |m, o| {
                    tuning::hash_many_tuned(b, g, 2, m, o);
                }),
            ));
            // Where the default is hand-scheduled, the generic kernel it replaced.
            if tuning::is_hand_scheduled(b, g) {
                rows.push((
                    format!("{b} x{g} generic"),
                    Box::new(move |m, o| {
                        tuning::hash_many_generic(b, g, 2, m, o);
                    }),
                ));
            }
        }
        rows.push((
            format!("{b} default"),
            Box::new(move |m, o| md5x::hash_many_into_with(b, m, o)),
        ));
    }
    rows
}

fn table() {
    let sizes = list("MD5X_SIZES", &[64, 1 << 10, 8 << 10, 1 << 20]);
    let counts = list("MD5X_COUNTS", &[16, 24, 32, 48]);
    let rounds = list("MD5X_ROUNDS", &[9])[0];
    let biggest = *sizes.iter().max().unwrap();
    let max = biggest + pitch(biggest) * counts.iter().max().unwrap();
    let mut buf = padded(max);
    let data = aligned(&mut buf, max);
    let rows = rows();
    // Every cell is measured once per round, rounds interleaved over all cells, and
    // the best round kept: interference from other work only ever slows a slice.
    let mut cells: Vec<(usize, usize, usize, f64)> = Vec::new();
    for &count in &counts {
        for r in 0..rows.len() {
            for &size in &sizes {
                cells.push((r, count, size, f64::INFINITY));
            }
        }
    }
    // Cells keep nanoseconds per byte; the clock is read again after every round and
    // cycles are counted at its fastest reading, once all rounds are in.
    let first = ghz();
    for _ in 0..rounds {
        for (r, count, size, best) in cells.iter_mut() {
            let m = msgs(data, *size, *count);
            let mut out = vec![Digest::new([0; 16]); *count];
            let f = &rows[*r].1;
            let sp = measure(|| f(std::hint::black_box(&m), &mut out), *size * *count);
            *best = best.min(sp.ns_per_byte);
        }
        read_clock();
    }
    let ghz = ghz();
    if ghz > first * 1.03 {
        println!(
            "core clock: {ghz:.2} GHz, the fastest reading after the rounds \
             ({first:.2} at the start, which would have read every cycle figure low)"
        );
    }
    println!(
        "cycles/byte per core (bytes/cycle) at {ghz:.2} GHz, hash_many_into, one thread, \
         best of {rounds} rounds"
    );
    println!(
        "{:<16} {:>6} {}",
        "backend",
        "msgs",
        sizes.iter().map(|s| format!("{s:>16}")).collect::<String>()
    );
    for line in cells.chunks(sizes.len()) {
        let (r, count, _, _) = line[0];
        let mut text = format!("{:<16} {count:>6}", rows[r].0);
        for &(_, _, _, ns) in line {
            let cpb = ns * ghz;
            text += &format!(" {cpb:>7.3} ({:>5.2})", 1.0 / cpb);
        }
        println!("{text}");
    }
    println!(
        "(xG = G interleaved vector groups; * = the lane set of Lanes and Server; \
         hash_many picks its groups per job: the default row)"
    );
}

/// What `hash_many` spends choosing its kernel for a job (`tuning::shape_lanes`), in
/// cycles a call, for every lane backend, message size and count.
fn choose() {
    let sizes = list("MD5X_SIZES", &[64, 1 << 10]);
    let counts = list("MD5X_COUNTS", &[9, 24, 48, 1000]);
    let biggest = *sizes.iter().max().unwrap();
    let max = biggest + pitch(biggest) * counts.iter().max().unwrap();
    let mut buf = padded(max);
    let data = aligned(&mut buf, max);
    println!("hash_many's choice of kernel: cycles a call (lanes chosen)");
    for b in Backend::all_supported().filter(|b| b.lanes() > 1) {
        for &size in &sizes {
            for &count in &counts {
                let m = msgs(data, size, count);
                let lanes = tuning::shape_lanes(b, &m);
                let t = measure(
                    || {
                        std::hint::black_box(tuning::shape_lanes(b, std::hint::black_box(&m)));
                    },
                    1,
                );
                println!(
                    "{:<8} {count:>5} x {size:>5} B  {:>7.1}  ({lanes})",
                    b.to_string(),
                    t.cycles_per_byte
                );
            }
        }
    }
}

/// With `n` live messages, lanes (forced, cut-over 1) against the single-stream kernel.
fn cutover() {
    let scalar = scalar_backend();
    let mut buf = padded(16 << 20);
    let data = aligned(&mut buf, 16 << 20);
    for b in Backend::all_supported().filter(|b| b.lanes() > 1) {
        for size in [64usize, 1 << 10, 8 << 10] {
            println!("{b}, {size}-byte messages: cycles/byte, scalar ({scalar}) vs lanes (groups to fit)");
            for n in 1..=6usize {
                let m = msgs(data, size, n);
                let mut out = vec![Digest::new([0; 16]); n];
                let s = measure(
                    || md5x::hash_many_into_with(scalar, std::hint::black_box(&m), &mut out),
                    size * n,
                );
                let width = b.lanes() / tuning::lane_shape(b).unwrap().0;
                let g = n.div_ceil(width);
                let l = measure(
                    || {
                        tuning::hash_many_tuned(b, g, 1, std::hint::black_box(&m), &mut out);
                    },
                    size * n,
                );
                println!(
                    "  n={n}: scalar {:>6.3}  lanes {:>6.3}  ({})",
                    s.cycles_per_byte,
                    l.cycles_per_byte,
                    if l.cycles_per_byte < s.cycles_per_byte {
                        "lanes win"
                    } else {
                        "scalar wins"
                    }
                );
            }
        }
    }
}

#[cfg(feature = "rayon")]
fn par() {
    // `MD5X_SIZES` / `MD5X_COUNTS`: the first of each (default 512 messages of 8 KiB).
    let size = list("MD5X_SIZES", &[8 << 10])[0];
    let count = list("MD5X_COUNTS", &[512])[0];
    let mut buf = padded(size + pitch(size) * count);
    let data = aligned(&mut buf, size + pitch(size) * count);
    let m = msgs(data, size, count);
    let mut out = vec![Digest::new([0; 16]); count];
    let b = Backend::active();
    let rounds = list("MD5X_ROUNDS", &[9])[0];
    // Rounds alternate the two, and each keeps its best: on these shared machines a
    // noisy stretch then slows both sides alike instead of skewing the ratio.
    let (mut one, mut all) = (0f64, 0f64);
    for _ in 0..rounds {
        let s = measure(|| md5x::hash_many_into_with(b, &m, &mut out), size * count);
        one = one.max(s.mbps);
        let s = measure(
            || md5x::par_hash_many_into_with(b, &m, &mut out),
            size * count,
        );
        all = all.max(s.mbps);
    }
    println!(
        "{count} x {size} B on {b}: 1 thread {one:.0} MB/s, {} threads {all:.0} MB/s: {:.2}x (best of {rounds} alternating rounds)",
        rayon::current_num_threads(),
        all / one
    );
}

#[cfg(not(feature = "rayon"))]
fn par() {
    println!("build with --features rayon for the multi-core comparison");
}
