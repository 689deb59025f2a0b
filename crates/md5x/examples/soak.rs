//! Randomized differential soak test: for as long as you let it run, with a fresh seed
//! each time, it hashes random jobs through every multi-message and streaming API on
//! every backend this CPU runs ([`Backend::all_supported`]) and compares each digest
//! with the portable scalar kernel (`Md5::with_backend(Backend::Portable)`), which is
//! itself cross-checked on a sample against RustCrypto's `md-5`. It hunts for what
//! the fixed-seed tests miss.
//!
//! ```text
//! cargo run --release -p md5x --example soak                         # 60 s, seed from the clock
//! cargo run --release -p md5x --example soak -- --seconds 3600 --seed 42
//! cargo run --release -p md5x --example soak -- --seed 42 --iter 17  # replay one iteration
//! cargo run --release -p md5x --features rayon --example soak        # par_hash_many too
//! ```
//!
//! Every iteration draws its work from a generator seeded by (seed, iteration) and
//! checks, on each supported backend:
//!
//! - `hash_many_with` and `hash_many_into_with` (with feature `rayon`,
//!   `par_hash_many_into_with` too): 1 to 1100 messages whose lengths mix 0, block
//!   edges (55, 56, 63, 64, 65, 119-129, ...), short, medium and, rarely, 1-4 MiB ones
//!   (at most 16 MiB a job), cut at random alignments from a shared buffer, some slices
//!   repeated, sometimes all of one length or of a few;
//! - the `tuning` hooks: `hash_many_tuned` and `hash_many_generic` with 1, 2 and 3
//!   groups and random cut-overs, `hash_many_portable_lanes` in each documented shape
//!   (and a few undocumented ones, which must decline);
//! - `update_many`, several rounds of random chunks (mixed with plain `Md5::update`)
//!   into hashers of several backends, against MD5 of what each was fed;
//! - `Lanes`: slots opened, fed, closed, abandoned and flushed in random order, the
//!   completions drained at random; each closed token must complete exactly once with
//!   the digest of what it was fed, and no abandoned one ever;
//! - `chains::ParMd5` (K = 4, 8, 16) fed random splits, and `chains::md5_par`, against
//!   MD5-P(K) computed from its definition in `docs/modes.md` (block i to chain
//!   i mod K, each chain plain MD5, then MD5 of the chain digests);
//!
//! and, on the active backend (`MD5X_BACKEND`), `md5`, streaming `Md5` and `hash_many`.
//!
//! The seed is printed first. On a wrong digest (or a panic) it prints the seed, the
//! iteration, the API, the backend and the message lengths, with the command that
//! replays that iteration alone, and exits with status 1. Otherwise, after `--seconds`,
//! it prints what it checked per API and exits 0. Usage errors exit with status 2.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use md5x::chains::{self, InvalidChainCount, ParMd5};
use md5x::{tuning, Backend, Digest, Lanes, Md5, Slot};

#[path = "../tests/common/doc_vectors.rs"]
mod doc_vectors;

const USAGE: &str = "usage: soak [--seconds N] [--seed S] [--iter I]
  --seconds N  run for N seconds (default 60)
  --seed S     the seed, decimal or 0x-hex (default: from the clock)
  --iter I     run only iteration I of seed S (to replay a reported mismatch)";

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;
/// Random bytes, fixed by the seed, that most messages are cut from.
const POOL_BYTES: usize = 8 * MIB;
/// Bytes of a pattern (zeros, 0xff, a count, ...) made anew each iteration.
const SCRATCH_BYTES: usize = 256 * KIB;
/// Bytes a `Lanes` slot buffers (its chunk sizes go around it).
const SLOT_BUFFER: usize = Lanes::<u32>::SLOT_BUFFER;
/// A digest no message has: outputs not written keep it.
const UNWRITTEN: Digest = Digest::new([0xa5; 16]);

thread_local! {
    /// The API being called and its backend, for the report of a panic.
    static AT: Cell<(&'static str, Option<Backend>)> = const { Cell::new(("setup", None)) };
}

fn at(api: &'static str, backend: Option<Backend>) {
    AT.set((api, backend));
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The generator of one iteration, from the seed and the iteration alone.
    fn for_iteration(seed: u64, iter: u64) -> Self {
        let mut a = Rng::new(seed);
        let mut b = Rng::new(iter ^ 0x736f_616b_5f69_7465);
        Rng::new(a.next_u64() ^ b.next_u64().rotate_left(17))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let x = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Stat {
    runs: u64,
    messages: u64,
    bytes: u64,
}

/// Where the soak is, and what it has checked.
struct Ctx {
    seed: u64,
    iter: u64,
    iterations: u64,
    /// Per API, in the order first met.
    stats: Vec<(&'static str, Stat)>,
    /// The group counts a tuning hook declined, per hook and backend (no such kernel).
    declined: BTreeMap<(&'static str, &'static str), Vec<usize>>,
    /// The longest iteration, and which.
    slowest: (Duration, u64),
}

impl Ctx {
    fn count(&mut self, api: &'static str, messages: usize, bytes: usize) {
        let i = match self.stats.iter().position(|(a, _)| *a == api) {
            Some(i) => i,
            None => {
                self.stats.push((api, Stat::default()));
                self.stats.len() - 1
            }
        };
        let s = &mut self.stats[i].1;
        s.runs += 1;
        s.messages += messages as u64;
        s.bytes += bytes as u64;
    }

    fn bytes(&self) -> u64 {
        self.stats.iter().map(|(_, s)| s.bytes).sum()
    }

    fn report(&self, what: &str, api: &str, backend: Option<Backend>, detail: &str) {
        let backend = backend.map_or("-", Backend::name);
        println!(
            "soak: {what}: seed {}, iteration {}, api {api}, backend {backend}",
            self.seed, self.iter
        );
        for line in detail.lines() {
            println!("  {line}");
        }
        let features = if cfg!(feature = "rayon") {
            " --features rayon"
        } else {
            ""
        };
        println!(
            "  replay: cargo run --release -p md5x{features} --example soak -- --seed {} --iter {}",
            self.seed, self.iter
        );
        let _ = std::io::stdout().flush();
    }

    /// Report a wrong result and exit with status 1.
    fn fail(&self, api: &str, backend: Option<Backend>, detail: &str) -> ! {
        self.report("MISMATCH", api, backend, detail);
        std::process::exit(1)
    }
}

struct Args {
    seconds: u64,
    seed: Option<u64>,
    iter: Option<u64>,
}

enum ArgError {
    Help,
    Bad(String),
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, ArgError> {
    let mut out = Args {
        seconds: 60,
        seed: None,
        iter: None,
    };
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "-h" | "--help" => return Err(ArgError::Help),
            "--seconds" | "--seed" | "--iter" => {}
            _ => return Err(ArgError::Bad(format!("unknown argument '{arg}'"))),
        }
        let value = match inline {
            Some(v) => v,
            None => args
                .next()
                .ok_or_else(|| ArgError::Bad(format!("{flag} needs a value")))?,
        };
        let n = parse_u64(&value).ok_or_else(|| {
            ArgError::Bad(format!(
                "{flag}: '{value}' is not a whole number from 0 to 2^64 - 1"
            ))
        })?;
        match flag.as_str() {
            "--seconds" => out.seconds = n,
            "--seed" => out.seed = Some(n),
            _ => out.iter = Some(n),
        }
    }
    Ok(out)
}

fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    }
}

fn clock_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    Rng::new(nanos ^ u64::from(std::process::id()).rotate_left(32)).next_u64()
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(ArgError::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(ArgError::Bad(msg)) => {
            eprintln!("soak: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = Backend::from_env() {
        eprintln!("soak: MD5X_BACKEND: {e}");
        return ExitCode::from(2);
    }
    let seed = args.seed.unwrap_or_else(clock_seed);
    let backends: Vec<Backend> = Backend::all_supported().collect();
    let names: Vec<&str> = backends.iter().map(|b| b.name()).collect();
    println!("md5x soak: seed {seed}");
    println!(
        "  backends {} (active {}), rayon {}, {}",
        names.join(", "),
        Backend::active(),
        if cfg!(feature = "rayon") { "on" } else { "off" },
        match args.iter {
            Some(i) => format!("iteration {i} only"),
            None => format!("{} s", args.seconds),
        }
    );
    let _ = std::io::stdout().flush();
    if let Err(e) = self_check() {
        println!("soak: the reference fails its self-check: {e}");
        return ExitCode::from(1);
    }

    let mut pool = vec![0u8; POOL_BYTES];
    Rng::new(seed ^ 0x706f_6f6c).fill(&mut pool);
    let mut ctx = Ctx {
        seed,
        iter: 0,
        iterations: 0,
        stats: Vec::new(),
        declined: BTreeMap::new(),
        slowest: (Duration::ZERO, 0),
    };
    let start = Instant::now();
    let limit = Duration::from_secs(args.seconds);
    let mut last_progress = start;
    let mut iter = args.iter.unwrap_or(0);
    loop {
        ctx.iter = iter;
        let began = Instant::now();
        let run = panic::catch_unwind(AssertUnwindSafe(|| {
            iteration(&mut ctx, &pool, &backends);
        }));
        if run.is_err() {
            let (api, backend) = AT.get();
            ctx.report(
                "PANIC",
                api,
                backend,
                "the library panicked (message above)",
            );
            return ExitCode::from(1);
        }
        ctx.iterations += 1;
        ctx.slowest = ctx.slowest.max((began.elapsed(), iter));
        if args.iter.is_some() || start.elapsed() >= limit {
            break;
        }
        if last_progress.elapsed() >= Duration::from_secs(30) {
            last_progress = Instant::now();
            println!(
                "  [{:>5.0} s] {} iterations, {:.2} GiB checked",
                start.elapsed().as_secs_f64(),
                ctx.iterations,
                ctx.bytes() as f64 / (1u64 << 30) as f64
            );
        }
        iter += 1;
    }

    println!(
        "md5x soak: no mismatch; seed {seed}, {:.1} s, {} iterations, {} bytes ({:.2} GiB) checked",
        start.elapsed().as_secs_f64(),
        ctx.iterations,
        ctx.bytes(),
        ctx.bytes() as f64 / (1u64 << 30) as f64
    );
    println!(
        "  {:<44} {:>9} {:>11} {:>15}",
        "api", "runs", "messages", "bytes"
    );
    for (api, s) in &ctx.stats {
        println!(
            "  {api:<44} {:>9} {:>11} {:>15}",
            s.runs, s.messages, s.bytes
        );
    }
    for ((api, backend), groups) in &ctx.declined {
        println!("  {api} declined on {backend} (no such kernel here): groups {groups:?}");
    }
    println!(
        "  slowest iteration: {} ({:.3} s)",
        ctx.slowest.1,
        ctx.slowest.0.as_secs_f64()
    );
    ExitCode::SUCCESS
}

/// One iteration: a job for the `hash_many` family, then `update_many`, `Lanes` and
/// `ParMd5` work of their own, on every backend.
fn iteration(ctx: &mut Ctx, pool: &[u8], backends: &[Backend]) {
    let mut rng = Rng::for_iteration(ctx.seed, ctx.iter);
    let rng = &mut rng;
    let scratch = make_scratch(rng);
    let big = rng.one_in(16);
    let n = gen_count(rng);
    let budget = if big { 16 * MIB } else { 4 * MIB };
    let job = gen_job(rng, pool, &scratch, n, budget, big);
    at("reference", Some(Backend::Portable));
    let want: Vec<Digest> = job.iter().map(|&m| reference(m)).collect();

    check_samples(ctx, rng, &job, &want);
    check_hash_many(ctx, rng, &job, &want, backends);
    check_tuning(ctx, rng, &job, &want, backends);
    at("update_many", None);
    md5x::update_many::<&[u8]>(&mut [], &[]);
    for &b in backends {
        check_update_many(ctx, rng, pool, &scratch, b, backends);
        check_lanes(ctx, rng, pool, &scratch, b);
    }
    check_chains(ctx, rng, pool, &scratch, backends);
}

// ---- references ----

/// MD5 on the portable scalar kernel: the reference for everything else.
fn reference(data: &[u8]) -> Digest {
    let mut h = Md5::with_backend(Backend::Portable);
    h.update(data);
    h.finalize()
}

/// RustCrypto's MD5, to check the reference itself.
fn rustcrypto(data: &[u8]) -> Digest {
    use md5_ref::Digest as _;
    Digest::new(md5_ref::Md5::digest(data).into())
}

/// MD5-P(K) from its definition (`docs/modes.md`): 64-byte block i (the last one may be
/// shorter) goes to chain i mod K, each chain is hashed with plain MD5, and the result
/// is MD5 of the K chain digests.
fn md5_par_ref(data: &[u8], k: usize) -> Digest {
    let mut chains: Vec<Vec<u8>> = vec![Vec::new(); k];
    for (i, block) in data.chunks(64).enumerate() {
        chains[i % k].extend_from_slice(block);
    }
    let mut outer = Vec::with_capacity(16 * k);
    for chain in &chains {
        outer.extend_from_slice(reference(chain).as_bytes());
    }
    reference(&outer)
}

/// The references against known answers: RFC 1321's "abc" and `docs/modes.md`'s
/// MD5-P(K) vectors (message bytes `(i * 31) mod 251`).
fn self_check() -> Result<(), String> {
    let abc = reference(b"abc").to_string();
    if abc != "900150983cd24fb0d6963f7d28e17f72" || rustcrypto(b"abc").to_string() != abc {
        return Err(format!("MD5(\"abc\") = {abc}"));
    }
    for (k, len, hex) in doc_vectors::par_vectors() {
        let msg: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        let got = md5_par_ref(&msg, k).to_string();
        if got != hex {
            return Err(format!("MD5-P{k} of {len} bytes = {got}, not {hex}"));
        }
    }
    Ok(())
}

// ---- random work ----

/// A pattern for this iteration's scratch messages.
fn make_scratch(rng: &mut Rng) -> Vec<u8> {
    let mut s = vec![0u8; SCRATCH_BYTES];
    match rng.below(6) {
        0 => {}
        1 => s.fill(0xff),
        2 => s.fill(0x80),
        3 => s.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8),
        4 => s
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = (i * 31 % 251) as u8),
        _ => rng.fill(&mut s),
    }
    s
}

/// Lengths around MD5's and the scheduler's edges: the padding cut-overs (55/56), whole
/// blocks, the two-block tail buffer (119/120), `Lanes`' slot buffer.
fn edge_len(rng: &mut Rng) -> usize {
    const EDGES: [usize; 37] = [
        1, 2, 3, 55, 56, 57, 63, 64, 65, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129,
        183, 184, 191, 192, 193, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 8191, 8192,
        8193,
    ];
    if rng.one_in(2) {
        rng.pick(&EDGES)
    } else {
        let blocks = rng.below(300);
        (blocks * 64 + rng.pick(&[0, 1, 55, 56, 57, 63, 64])).saturating_sub(rng.below(2))
    }
}

/// A message length: 0, an edge, short, medium, and with `big` now and then 1-4 MiB.
fn gen_len(rng: &mut Rng, big: bool) -> usize {
    match rng.below(100) {
        0..=7 => 0,
        8..=29 => edge_len(rng),
        30..=59 => rng.below(KIB),
        60..=84 => rng.below(64 * KIB),
        85..=96 => rng.below(256 * KIB),
        _ if big => rng.range(MIB, 4 * MIB),
        _ => rng.below(16 * KIB),
    }
}

/// A message count: mostly up to 200, sometimes a few, up to 1100 (past the
/// scheduler's ordering window of 1024), or about a multiple of some lane count.
fn gen_count(rng: &mut Rng) -> usize {
    match rng.below(20) {
        0..=4 => rng.range(1, 8),
        5..=14 => rng.range(1, 200),
        15..=16 => rng.range(201, 1100),
        _ => {
            let lanes = rng.pick(&[2, 4, 8, 16, 24, 32, 48]);
            (lanes * rng.range(1, 3) + rng.below(3))
                .saturating_sub(1)
                .max(1)
        }
    }
}

/// `len` bytes from the pool (or the scratch pattern), at a random offset: sometimes
/// 64-byte aligned, sometimes ending at the buffer's end.
fn place<'a>(rng: &mut Rng, pool: &'a [u8], scratch: &'a [u8], len: usize) -> &'a [u8] {
    let src = if len <= scratch.len() && rng.one_in(8) {
        scratch
    } else {
        pool
    };
    let len = len.min(src.len());
    let room = src.len() - len;
    let mut off = rng.below(room + 1);
    match rng.below(8) {
        0 | 1 => off -= ((src.as_ptr() as usize + off) % 64).min(off),
        2 => off = room,
        _ => {}
    }
    &src[off..off + len]
}

/// `n` messages of about `budget` bytes at most, in one of several shapes: mixed
/// lengths, all equal, nearly equal, a few lengths, rising or falling; some slices
/// repeated (most of them in some jobs).
fn gen_job<'a>(
    rng: &mut Rng,
    pool: &'a [u8],
    scratch: &'a [u8],
    n: usize,
    budget: usize,
    big: bool,
) -> Vec<&'a [u8]> {
    let shape = rng.below(100);
    let fixed = gen_len(rng, big).min(budget / n.max(1));
    let few = [gen_len(rng, false), gen_len(rng, false), edge_len(rng)];
    let step = rng.below(300);
    let repeat = match shape {
        0..=9 => 60,
        _ if rng.one_in(2) => 10,
        _ => 0,
    };
    let mut total = 0usize;
    let mut job: Vec<&[u8]> = Vec::with_capacity(n);
    for i in 0..n {
        if i > 0 && rng.below(100) < repeat {
            let m = job[rng.below(i)];
            if total + m.len() <= budget {
                total += m.len();
                job.push(m);
                continue;
            }
        }
        let mut len = match shape {
            10..=24 => fixed,
            25..=34 => fixed + rng.below(129),
            35..=44 => rng.pick(&few),
            45..=49 => i * step,
            _ => gen_len(rng, big),
        };
        if total + len > budget {
            len = rng.below(KIB).min(budget.saturating_sub(total));
        }
        total += len;
        job.push(place(rng, pool, scratch, len));
    }
    if (45..=49).contains(&shape) && rng.one_in(2) {
        job.reverse();
    }
    job
}

/// A chunk of at most `left` bytes: empty, part of a block, whole blocks, the rest,
/// around `Lanes`' slot buffer, ...
fn chunk_len(rng: &mut Rng, left: usize) -> usize {
    let c = match rng.below(10) {
        0 => 0,
        1 => rng.range(1, 63),
        2 => 64 * rng.range(1, 8),
        3 => 64 * rng.range(1, 8) + rng.pick(&[1, 63]),
        4 => left,
        5 => rng.below(left + 1),
        6 => rng.below(4 * KIB),
        7 => SLOT_BUFFER - 1 + rng.below(3),
        8 => rng.below(64 * KIB),
        _ => rng.below(2 * SLOT_BUFFER + 1),
    };
    c.min(left)
}

fn total_len<T: AsRef<[u8]>>(msgs: &[T]) -> usize {
    msgs.iter().map(|m| m.as_ref().len()).sum()
}

/// The message count, total and every length, for a report.
fn describe(msgs: &[&[u8]]) -> String {
    let mut s = format!(
        "{} messages, {} bytes; lengths [",
        msgs.len(),
        total_len(msgs)
    );
    for (i, m) in msgs.iter().enumerate() {
        let sep = if i > 0 { ", " } else { "" };
        let _ = write!(s, "{sep}{}", m.len());
    }
    s.push(']');
    s
}

/// Fail unless `got` is `want`, naming the wrong messages.
fn check_digests(
    ctx: &Ctx,
    api: &str,
    backend: Option<Backend>,
    inputs: &[&[u8]],
    got: &[Digest],
    want: &[Digest],
) {
    if got.len() != want.len() {
        let detail = format!(
            "{} digests for {} messages\n{}",
            got.len(),
            want.len(),
            describe(inputs)
        );
        ctx.fail(api, backend, &detail);
    }
    if got == want {
        return;
    }
    let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
    let i = bad[0];
    let detail = format!(
        "{} of {} digests wrong, messages {:?}{}\nfirst: message {i}, {} bytes at address % 64 = {}: want {}, got {}\n{}",
        bad.len(),
        want.len(),
        &bad[..bad.len().min(32)],
        if bad.len() > 32 { " ..." } else { "" },
        inputs[i].len(),
        inputs[i].as_ptr() as usize % 64,
        want[i],
        got[i],
        describe(inputs)
    );
    ctx.fail(api, backend, &detail);
}

// ---- the checks ----

/// A few messages of the job: the reference against RustCrypto's MD5, and `md5` and
/// streaming `Md5` (random splits) on the active backend.
fn check_samples(ctx: &mut Ctx, rng: &mut Rng, job: &[&[u8]], want: &[Digest]) {
    let active = Backend::active();
    for _ in 0..rng.range(1, 8) {
        let i = rng.below(job.len());
        let (m, w) = (job[i], want[i]);
        at("md-5", None);
        let theirs = rustcrypto(m);
        if theirs != w {
            let detail = format!(
                "the reference disagrees with RustCrypto's md-5 on message {i} ({} bytes): portable {w}, md-5 {theirs}\n{}",
                m.len(),
                describe(job)
            );
            ctx.fail(
                "reference (Md5 portable) vs md-5",
                Some(Backend::Portable),
                &detail,
            );
        }
        ctx.count("md-5 (cross-check of the reference)", 1, m.len());

        at("md5", Some(active));
        let got = md5x::md5(m);
        check_digests(ctx, "md5", Some(active), &[m], &[got], &[w]);
        ctx.count("md5 (active backend)", 1, m.len());

        at("Md5::update", Some(active));
        let mut h = Md5::new();
        let mut pos = 0;
        let mut splits = Vec::new();
        while pos < m.len() {
            let c = chunk_len(rng, m.len() - pos);
            h.update(&m[pos..pos + c]);
            pos += c;
            splits.push(c);
        }
        if h.finalize() != w || h.len() != m.len() as u64 {
            let detail = format!(
                "streaming Md5 of {} bytes in chunks {splits:?}: len {}, want {w}, got {}",
                m.len(),
                h.len(),
                h.finalize()
            );
            ctx.fail("Md5::update (active backend)", Some(active), &detail);
        }
        ctx.count("Md5::update (active backend)", 1, m.len());
    }
}

/// `hash_many_with` on the whole job, `hash_many_into_with` on a part of it, on every
/// backend; owned inputs now and then; `hash_many` on the active backend.
fn check_hash_many(
    ctx: &mut Ctx,
    rng: &mut Rng,
    job: &[&[u8]],
    want: &[Digest],
    backends: &[Backend],
) {
    let bytes = total_len(job);
    for &b in backends {
        at("hash_many_with", Some(b));
        let got = md5x::hash_many_with(b, job);
        check_digests(ctx, "hash_many_with", Some(b), job, &got, want);
        ctx.count("hash_many_with", job.len(), bytes);

        let lo = rng.below(job.len() + 1);
        let hi = lo + rng.below(job.len() - lo + 1);
        let part = &job[lo..hi];
        let mut out = vec![UNWRITTEN; part.len()];
        at("hash_many_into_with", Some(b));
        md5x::hash_many_into_with(b, part, &mut out);
        check_digests(
            ctx,
            "hash_many_into_with",
            Some(b),
            part,
            &out,
            &want[lo..hi],
        );
        ctx.count("hash_many_into_with", part.len(), total_len(part));

        #[cfg(feature = "rayon")]
        {
            let mut out = vec![UNWRITTEN; job.len()];
            at("par_hash_many_into_with", Some(b));
            md5x::par_hash_many_into_with(b, job, &mut out);
            check_digests(ctx, "par_hash_many_into_with", Some(b), job, &out, want);
            ctx.count("par_hash_many_into_with", job.len(), bytes);
        }
    }

    if bytes <= 4 * MIB && rng.one_in(8) {
        let owned: Vec<Vec<u8>> = job.iter().map(|m| m.to_vec()).collect();
        let b = rng.pick(backends);
        at("hash_many_with (owned)", Some(b));
        let got = md5x::hash_many_with(b, &owned);
        check_digests(
            ctx,
            "hash_many_with (Vec<u8> inputs)",
            Some(b),
            job,
            &got,
            want,
        );
        ctx.count("hash_many_with (Vec<u8> inputs)", job.len(), bytes);
    }

    let active = Backend::active();
    at("hash_many", Some(active));
    let got = md5x::hash_many(job);
    check_digests(ctx, "hash_many", Some(active), job, &got, want);
    ctx.count("hash_many (active backend)", job.len(), bytes);

    #[cfg(feature = "rayon")]
    {
        at("par_hash_many", Some(active));
        let got = md5x::par_hash_many(job);
        check_digests(ctx, "par_hash_many", Some(active), job, &got, want);
        ctx.count("par_hash_many (active backend)", job.len(), bytes);
    }
}

/// The `tuning` hooks on a bounded part of the job: every group count (1 to 3) with a
/// random cut-over on every backend, the portable lane shapes, the shares.
fn check_tuning(
    ctx: &mut Ctx,
    rng: &mut Rng,
    job: &[&[u8]],
    want: &[Digest],
    backends: &[Backend],
) {
    let budget = rng.range(64 * KIB, 512 * KIB);
    let start = rng.below(job.len());
    let (mut set, mut set_want, mut total) = (Vec::new(), Vec::new(), 0);
    for (&m, &w) in job[start..].iter().zip(&want[start..]) {
        if m.len() > 64 * KIB {
            continue;
        }
        if total + m.len() > budget {
            break;
        }
        total += m.len();
        set.push(m);
        set_want.push(w);
    }
    if rng.one_in(4) {
        let keep = rng.below(set.len() + 1);
        set.truncate(keep);
        set_want.truncate(keep);
    }
    let total = total_len(&set);
    let min_live = |rng: &mut Rng| match rng.below(4) {
        0 => 2,
        1 => rng.below(2),
        _ => rng.below(50),
    };

    for &b in backends {
        for groups in 1..=3 {
            for generic in [false, true] {
                let api = if generic {
                    "tuning::hash_many_generic"
                } else {
                    "tuning::hash_many_tuned"
                };
                let live = min_live(rng);
                let mut out = vec![UNWRITTEN; set.len()];
                at(api, Some(b));
                let ran = if generic {
                    tuning::hash_many_generic(b, groups, live, &set, &mut out)
                } else {
                    tuning::hash_many_tuned(b, groups, live, &set, &mut out)
                };
                let what = format!("{api} (groups {groups}, min_live {live})");
                if ran {
                    check_digests(ctx, &what, Some(b), &set, &out, &set_want);
                    ctx.count(api, set.len(), total);
                } else {
                    if out.iter().any(|d| *d != UNWRITTEN) {
                        ctx.fail(&what, Some(b), "declined, yet wrote outputs");
                    }
                    let seen = ctx.declined.entry((api, b.name())).or_default();
                    if !seen.contains(&groups) {
                        seen.push(groups);
                        seen.sort_unstable();
                    }
                }
            }
        }
    }

    // The documented shapes must run; others must decline and write nothing.
    use tuning::PORTABLE_LANE_SHAPES as SHAPES;
    const NOT_SHAPES: [(usize, usize, bool); 7] = [
        (4, 1, true),
        (8, 2, true),
        (4, 3, false),
        (16, 3, true),
        (2, 1, false),
        (32, 1, false),
        (16, 0, false),
    ];
    let api = "tuning::hash_many_portable_lanes";
    for (width, groups, ternlog) in SHAPES.into_iter().chain(NOT_SHAPES) {
        let documented = SHAPES.contains(&(width, groups, ternlog));
        let live = min_live(rng);
        let mut out = vec![UNWRITTEN; set.len()];
        at(api, Some(Backend::Portable));
        let ran = tuning::hash_many_portable_lanes(width, groups, ternlog, live, &set, &mut out);
        let what =
            format!("{api} (width {width}, groups {groups}, ternlog {ternlog}, min_live {live})");
        if ran != documented {
            let detail = format!("returned {ran} for a shape its docs say it {documented} runs");
            ctx.fail(&what, None, &detail);
        }
        if ran {
            check_digests(ctx, &what, None, &set, &out, &set_want);
            ctx.count(api, set.len(), total);
        } else if out.iter().any(|d| *d != UNWRITTEN) {
            ctx.fail(&what, None, "declined, yet wrote outputs");
        }
    }
}

/// `update_many` over rounds of random chunks into hashers of several backends (the
/// first on `backend`, whose lanes run), with plain `update`s between the rounds.
fn check_update_many(
    ctx: &mut Ctx,
    rng: &mut Rng,
    pool: &[u8],
    scratch: &[u8],
    backend: Backend,
    backends: &[Backend],
) {
    let n = match rng.below(10) {
        0..=2 => rng.range(1, 4),
        3..=8 => rng.range(1, 64),
        _ => rng.range(65, 200),
    };
    let budget = if rng.one_in(8) { 2 * MIB } else { MIB };
    let msgs = gen_job(rng, pool, scratch, n, budget, false);
    let mut hashers: Vec<Md5> = (0..n)
        .map(|i| match rng.below(4) {
            _ if i == 0 => Md5::with_backend(backend),
            0 => Md5::new(),
            1 => Md5::with_backend(rng.pick(backends)),
            _ => Md5::with_backend(backend),
        })
        .collect();
    let mut pos = vec![0usize; n];
    // What each hasher was fed: (through update_many, bytes).
    let mut fed: Vec<Vec<(bool, usize)>> = vec![Vec::new(); n];
    let mut bytes = 0;
    let fail = |ctx: &Ctx, i: usize, h: &Md5, fed: &[(bool, usize)], got: Digest, want| -> ! {
        let chunks: Vec<String> = fed
            .iter()
            .map(|&(many, c)| format!("{}{c}", if many { "" } else { "u" }))
            .collect();
        let detail = format!(
            "hasher {i} of {n} (backend {}), {} bytes fed in chunks [{}] (u: plain update): want {want}, got {got}",
            h.backend(),
            h.len(),
            chunks.join(", ")
        );
        ctx.fail("update_many", Some(backend), &detail)
    };

    let rounds = rng.range(1, 8);
    for round in 0..rounds {
        let to_end = round + 1 == rounds && !rng.one_in(4);
        let chunks: Vec<&[u8]> = msgs
            .iter()
            .zip(&mut pos)
            .zip(&mut fed)
            .map(|((m, p), f)| {
                let c = if to_end {
                    m.len() - *p
                } else {
                    chunk_len(rng, m.len() - *p)
                };
                *p += c;
                f.push((true, c));
                &m[*p - c..*p]
            })
            .collect();
        at("update_many", Some(backend));
        md5x::update_many(&mut hashers, &chunks);
        bytes += total_len(&chunks);

        if rng.one_in(3) {
            for _ in 0..rng.range(1, n) {
                let i = rng.below(n);
                let c = chunk_len(rng, msgs[i].len() - pos[i]);
                at("Md5::update", Some(hashers[i].backend()));
                hashers[i].update(&msgs[i][pos[i]..pos[i] + c]);
                pos[i] += c;
                fed[i].push((false, c));
            }
        }
        if rng.one_in(4) {
            let i = rng.below(n);
            let want = reference(&msgs[i][..pos[i]]);
            let got = hashers[i].finalize();
            if got != want {
                fail(ctx, i, &hashers[i], &fed[i], got, want);
            }
        }
    }
    for (i, (((h, m), &p), f)) in hashers.iter().zip(&msgs).zip(&pos).zip(&fed).enumerate() {
        let want = reference(&m[..p]);
        let got = h.finalize();
        if got != want || h.len() != p as u64 {
            fail(ctx, i, h, f, got, want);
        }
    }
    ctx.count("update_many", n, bytes);
}

/// A token's life in [`check_lanes`].
#[derive(Clone, Copy)]
enum Tok {
    Unopened,
    Open,
    /// Closed after this many bytes, whose digest this is.
    Closed(Digest, usize),
    Abandoned,
    Done,
}

/// An open slot of [`check_lanes`] and how much of its message it was fed.
struct Live {
    slot: Slot,
    token: usize,
    pos: usize,
}

/// What `check_lanes` did, for a report.
#[derive(Default)]
struct OpLog(Vec<String>);

impl OpLog {
    fn push(&mut self, op: String) {
        self.0.push(op);
    }

    fn tail(&self) -> String {
        let from = self.0.len().saturating_sub(400);
        let skipped = if from > 0 { "... " } else { "" };
        format!(
            "operations (o open, f feed, c close, a abandon, F flush, d drain): {skipped}{}",
            self.0[from..].join(" ")
        )
    }
}

/// `Lanes` on `backend`: slots opened, fed, closed, abandoned in random order, flushes
/// and partial drains between; every closed token completes once, rightly.
fn check_lanes(ctx: &mut Ctx, rng: &mut Rng, pool: &[u8], scratch: &[u8], backend: Backend) {
    let n = match rng.below(10) {
        0..=2 => rng.range(1, 4),
        3..=8 => rng.range(1, 100),
        _ => rng.range(100, 300),
    };
    let budget = if rng.one_in(8) { 2 * MIB } else { MIB };
    let msgs = gen_job(rng, pool, scratch, n, budget, false);
    at("Lanes", Some(backend));
    let mut lanes: Lanes<u32> = Lanes::with_backend(backend);
    let mut toks = vec![Tok::Unopened; n];
    let mut live: Vec<Live> = Vec::new();
    let mut log = OpLog::default();
    let (mut next, mut step, mut closed, mut bytes) = (0, 0, 0, 0);
    let keep_open = rng.range(1, 64);
    let steps = n * rng.range(2, 12) + 10;

    let completed = |ctx: &Ctx, toks: &mut [Tok], log: &OpLog, token: u32, got: Digest| {
        let t = token as usize;
        let problem = match toks.get(t).copied() {
            None => "an unknown token completed".to_string(),
            Some(Tok::Closed(want, _)) if got == want => {
                toks[t] = Tok::Done;
                return;
            }
            Some(Tok::Closed(want, len)) => {
                format!("token {t} ({len} bytes fed): want {want}, got {got}")
            }
            Some(Tok::Done) => format!("token {t} completed twice"),
            Some(Tok::Abandoned) => format!("token {t} completed after its slot was dropped"),
            Some(Tok::Open | Tok::Unopened) => format!("token {t} completed before its close"),
        };
        let detail = format!("{n} tokens: {problem}\n{}", log.tail());
        ctx.fail("Lanes", Some(backend), &detail);
    };

    while next < n || !live.is_empty() {
        step += 1;
        let act = rng.below(100);
        if next < n && (live.is_empty() || (live.len() < keep_open && act < 30)) {
            at("Lanes::open", Some(backend));
            let slot = lanes.open(next as u32);
            toks[next] = Tok::Open;
            log.push(format!("o{next}"));
            live.push(Live {
                slot,
                token: next,
                pos: 0,
            });
            next += 1;
            continue;
        }
        let i = rng.below(live.len());
        if step > steps || act < 8 {
            let mut l = live.swap_remove(i);
            let m = msgs[l.token];
            if rng.one_in(2) && l.pos < m.len() {
                at("Lanes::feed", Some(backend));
                lanes.feed(&mut l.slot, &m[l.pos..]);
                log.push(format!("f{}+{}", l.token, m.len() - l.pos));
                l.pos = m.len();
            }
            toks[l.token] = Tok::Closed(reference(&m[..l.pos]), l.pos);
            log.push(format!("c{}", l.token));
            closed += 1;
            bytes += l.pos;
            at("Lanes::close", Some(backend));
            lanes.close(l.slot);
        } else if act < 9 {
            let l = live.swap_remove(i);
            toks[l.token] = Tok::Abandoned;
            log.push(format!("a{}", l.token));
            drop(l);
        } else if act < 11 {
            at("Lanes::flush", Some(backend));
            lanes.flush();
            log.push("F".to_string());
            if lanes.pending() != live.len() {
                let detail = format!(
                    "pending() is {} after a flush, with {} slots open\n{}",
                    lanes.pending(),
                    live.len(),
                    log.tail()
                );
                ctx.fail("Lanes::pending", Some(backend), &detail);
            }
        } else if act < 16 {
            let take = rng.below(6);
            let got: Vec<(u32, Digest)> = lanes.completions().take(take).collect();
            log.push(format!("d{}", got.len()));
            for (t, d) in got {
                completed(ctx, &mut toks, &log, t, d);
            }
        } else {
            let l = &mut live[i];
            let m = msgs[l.token];
            let c = chunk_len(rng, m.len() - l.pos);
            at("Lanes::feed", Some(backend));
            lanes.feed(&mut l.slot, &m[l.pos..l.pos + c]);
            log.push(format!("f{}+{c}", l.token));
            l.pos += c;
        }
    }
    at("Lanes::flush", Some(backend));
    lanes.flush();
    log.push("F".to_string());
    let got: Vec<(u32, Digest)> = lanes.completions().collect();
    log.push(format!("d{}", got.len()));
    for (t, d) in got {
        completed(ctx, &mut toks, &log, t, d);
    }
    if lanes.pending() != 0 {
        let detail = format!(
            "pending() is {} with every slot closed or dropped, after a flush\n{}",
            lanes.pending(),
            log.tail()
        );
        ctx.fail("Lanes::pending", Some(backend), &detail);
    }
    if let Some(t) = toks.iter().position(|t| matches!(t, Tok::Closed(..))) {
        let detail = format!("token {t} of {n} never completed\n{}", log.tail());
        ctx.fail("Lanes", Some(backend), &detail);
    }
    ctx.count("Lanes", closed, bytes);
}

/// `ParMd5` for K = 4, 8, 16 on every backend, fed random splits (checked midway now and
/// then), and `md5_par`, against MD5-P(K) from its definition; invalid K refused.
fn check_chains(ctx: &mut Ctx, rng: &mut Rng, pool: &[u8], scratch: &[u8], backends: &[Backend]) {
    for k in [4usize, 8, 16] {
        let round = 64 * k;
        let len = match rng.below(10) {
            0 => rng.below(65),
            1 | 2 => rng.below(2 * round + 2),
            3 | 4 => (round * rng.range(1, 8) + rng.pick(&[0, 1, 63, 64, 65]))
                .saturating_sub(rng.below(2)),
            5..=8 => rng.below(256 * KIB),
            _ if rng.one_in(4) => rng.range(MIB, 2 * MIB),
            _ => rng.below(64 * KIB),
        };
        let msg = place(rng, pool, scratch, len);
        let len = msg.len();
        at("MD5-P(K) reference", None);
        let want = md5_par_ref(msg, k);
        for &b in backends {
            at("ParMd5", Some(b));
            let mut h = match ParMd5::with_backend(k, b) {
                Ok(h) => h,
                Err(e) => ctx.fail("ParMd5::with_backend", Some(b), &e.to_string()),
            };
            if h.chains() != k {
                let detail = format!("chains() is {} for K = {k}", h.chains());
                ctx.fail("ParMd5::chains", Some(b), &detail);
            }
            if rng.one_in(16) {
                h.update(&pool[..rng.below(300)]);
                h.reset();
            }
            let mut mid = if rng.one_in(3) {
                Some(rng.below(len + 1))
            } else {
                None
            };
            let (mut pos, mut splits) = (0, Vec::new());
            let check = |h: &ParMd5, pos: usize, splits: &[usize], want: Digest| {
                let got = h.finalize();
                if got != want {
                    let detail = format!(
                        "MD5-P{k} of {pos} bytes (of a {len}-byte message at address % 64 = {}) fed in chunks {splits:?}: want {want}, got {got}",
                        msg.as_ptr() as usize % 64
                    );
                    ctx.fail("chains::ParMd5", Some(b), &detail);
                }
            };
            while pos < len {
                let c = if rng.one_in(4) {
                    (round * rng.range(1, 3) + rng.pick(&[0, 1, 63])).min(len - pos)
                } else {
                    chunk_len(rng, len - pos)
                };
                h.update(&msg[pos..pos + c]);
                pos += c;
                splits.push(c);
                if mid.is_some_and(|m| pos >= m) {
                    mid = None;
                    check(&h, pos, &splits, md5_par_ref(&msg[..pos], k));
                }
            }
            if rng.one_in(8) {
                h.update(b"");
                splits.push(0);
            }
            check(&h, pos, &splits, want);
            ctx.count("chains::ParMd5", 1, len);
        }

        let active = Backend::active();
        at("chains::md5_par", Some(active));
        match chains::md5_par(msg, k) {
            Ok(got) if got == want => {}
            got => {
                let detail = format!(
                    "MD5-P{k} of {len} bytes (address % 64 = {}): want {want}, got {got:?}",
                    msg.as_ptr() as usize % 64
                );
                ctx.fail("chains::md5_par", Some(active), &detail);
            }
        }
        ctx.count("chains::md5_par (active backend)", 1, len);
    }

    let bad = rng.pick(&[0, 1, 2, 3, 5, 6, 7, 12, 15, 17, 32, 64, usize::MAX]);
    at("chains::md5_par", None);
    if chains::md5_par(b"", bad) != Err(InvalidChainCount(bad)) {
        ctx.fail(
            "chains::md5_par",
            None,
            &format!("K = {bad} was not refused"),
        );
    }
    for &b in backends {
        if ParMd5::with_backend(bad, b).err() != Some(InvalidChainCount(bad)) {
            ctx.fail(
                "ParMd5::with_backend",
                Some(b),
                &format!("K = {bad} was not refused"),
            );
        }
    }
}
