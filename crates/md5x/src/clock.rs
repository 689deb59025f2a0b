//! Cycles per byte without performance counters (`std` only).
//!
//! Shared, virtualised machines often have no performance counters, and `rdtsc` ticks at
//! a fixed rate that is not the core clock. So md5x measures the core clock in the same
//! process, next to the work: it runs a chain of dependent one-cycle `add`s (inline
//! assembly on x86-64 and aarch64, so the compiler cannot fold it) whose length in cycles
//! is known, and interleaves short slices of it with short slices of the work. Each pair
//! of slices gives one ratio, `work seconds per byte / chain seconds per add`, which is
//! cycles per byte; the median of many pairs shrugs off the slices that the scheduler
//! interrupted or that ran while the clock changed speed.
//!
//! ```
//! let data = vec![0u8; 8192];
//! let speed = md5x::clock::measure(|| { std::hint::black_box(md5x::md5(&data)); }, data.len());
//! assert!(speed.cycles_per_byte > 0.0 && speed.mbps > 0.0);
//! ```

use std::time::{Duration, Instant};

use crate::kernels::clock::{add_chain, CHAIN, EXACT};

/// Pairs of slices (work, chain) timed per measurement; the median ratio is reported.
const ROUNDS: usize = 61;
/// Length of one slice of work, and of one slice of the add chain: short, so that most
/// pairs run between two interruptions of the scheduler (its ticks are 1 to 4 ms apart).
const SLICE: Duration = Duration::from_micros(500);

/// What [`measure`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speed {
    /// Core cycles per byte of work: the median over the interleaved pairs of slices.
    pub cycles_per_byte: f64,
    /// The core clock in GHz, from the median chain slice.
    pub ghz: f64,
    /// Throughput in MB/s (10^6 bytes per second), from the median work slice.
    pub mbps: f64,
}

/// Whether the clock is exact here: `true` on x86-64 and aarch64, where the add chain is
/// assembly. Elsewhere it is an opaque Rust loop slower than one add per cycle, so
/// [`ghz`] reads low and [`Speed::cycles_per_byte`] with it.
pub const EXACT_CHAIN: bool = EXACT;

/// The core clock in GHz: the median of 15 short timings of the add chain.
pub fn ghz() -> f64 {
    let iters = iters_for(SLICE);
    let mut g: Vec<f64> = (0..15)
        .map(|_| {
            let t = time(|| {
                std::hint::black_box(add_chain(iters));
            });
            (iters * CHAIN) as f64 / t.as_secs_f64() / 1e9
        })
        .collect();
    median(&mut g)
}

/// Cycles per byte of `work`, which processes `bytes_per_call` bytes each time it runs.
/// Shorthand for `measure(work, bytes_per_call).cycles_per_byte`.
pub fn cycles_per_byte(work: impl FnMut(), bytes_per_call: usize) -> f64 {
    measure(work, bytes_per_call).cycles_per_byte
}

/// Time `work` (which processes `bytes_per_call` bytes per call) against the add chain,
/// in interleaved slices of about 0.5 ms each (or one call, if longer), 61 pairs in all
/// (about 60 ms for short calls).
///
/// # Panics
///
/// If `bytes_per_call` is zero.
pub fn measure(mut work: impl FnMut(), bytes_per_call: usize) -> Speed {
    assert!(
        bytes_per_call > 0,
        "md5x::clock::measure: no bytes per call"
    );
    // Warm up (caches, clock ramp), and size the work slice.
    let mut calls = 1u64;
    loop {
        let t = time(|| (0..calls).for_each(|_| work()));
        if t >= SLICE / 4 || calls >= 1 << 30 {
            let per_call = t.as_secs_f64() / calls as f64;
            calls = ((SLICE.as_secs_f64() / per_call.max(1e-12)) as u64).max(1);
            break;
        }
        calls *= 4;
    }
    let iters = iters_for(SLICE);
    let bytes = calls as f64 * bytes_per_call as f64;
    let adds = (iters * CHAIN) as f64;
    let (mut ratios, mut work_s, mut chain_s) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let w = time(|| (0..calls).for_each(|_| work())).as_secs_f64();
        let c = time(|| {
            std::hint::black_box(add_chain(iters));
        })
        .as_secs_f64();
        ratios.push((w / bytes) / (c / adds));
        work_s.push(w);
        chain_s.push(c);
    }
    Speed {
        cycles_per_byte: median(&mut ratios),
        ghz: adds / median(&mut chain_s) / 1e9,
        mbps: bytes / median(&mut work_s) / 1e6,
    }
}

/// Chain iterations that take about `d` (at least one).
fn iters_for(d: Duration) -> u64 {
    let probe = 64;
    let t = time(|| {
        std::hint::black_box(add_chain(probe));
    });
    ((d.as_secs_f64() / t.as_secs_f64().max(1e-9)) * probe as f64).max(1.0) as u64
}

fn time(f: impl FnOnce()) -> Duration {
    let t0 = Instant::now();
    f();
    t0.elapsed()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_picks_the_middle() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [5.0, 1.0, 4.0, 2.0, 3.0]), 3.0);
    }
}
