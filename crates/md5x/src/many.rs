//! Many messages at once: [`hash_many`] fills the vector lanes of one core with
//! independent messages (and [`par_hash_many`], with feature `rayon`, every core).
//!
//! The scheduler works like a job manager: each lane holds one message; the kernel runs
//! for as many blocks as the lane with the fewest remaining blocks has left; the lanes
//! whose message (or phase) ended are then refilled. Whole blocks are hashed where they
//! lie; only the tail of each message (under 64 bytes) is copied, with its padding,
//! into the lane's two-block buffer (messages of at most 119 bytes go there whole: one
//! kernel run instead of two). Idle lanes read a live lane's data and their results are
//! dropped. Messages start longest first within windows of 1024 ([`Order`]), so that
//! the lanes of a round end close together. While a run hashes, the first lines of the
//! messages that wait for the next refills are prefetched ([`AHEAD_LINES`]), so that
//! short messages from memory do not start with a stall. Once no message is waiting,
//! the live ones move to a narrower kernel as soon as one suits their number better
//! ([`shape_for`]), so that the last messages of uneven lengths do not run in mostly
//! idle lanes. When fewer messages are left than the kernel's measured cut-over, the
//! remaining ones finish on the single-stream kernel.

use crate::hasher::{finish, md5_with, state_to_digest, INIT};
use crate::kernels::lanes::LaneKernel;
use crate::{Backend, Digest};

/// The most lanes any kernel fills (16-lane AVX-512 times 3 groups).
pub(crate) const MAX_LANES: usize = 48;

/// The lanes of the job manager's two smaller forms (see [`schedule`]): the kernels of
/// up to 4 lanes (the two-message kernel, SSE2's one group, AVX-512's `xmm_lanes` for up to 4),
/// and those up to one 16-lane group.
pub(crate) const FEW_LANES: usize = 4;
pub(crate) const SMALL_LANES: usize = 16;

/// MD5 of every input, in input order, on the process's [`Backend::active`] backend.
///
/// Inputs of any and uneven lengths are hashed side by side in the vector lanes of
/// one core (see [`Backend::lanes`]); the result is exactly `inputs.iter().map(md5)`.
///
/// Any alignment works. Messages that start on 64-byte boundaries (page-aligned or
/// `mmap`ed buffers) run fastest: otherwise every 64-byte block spans two cache lines,
/// which cost 5-15% with 32 or more lanes in this project's measurements.
///
/// ```
/// let digests = md5x::hash_many(&[&b"abc"[..], b"", b"message digest"]);
/// assert_eq!(digests[0], md5x::md5(b"abc"));
/// assert_eq!(digests[1].to_string(), "d41d8cd98f00b204e9800998ecf8427e");
/// assert_eq!(digests[2], md5x::md5(b"message digest"));
///
/// // Anything that is `AsRef<[u8]>` works, e.g. owned buffers.
/// let files: Vec<Vec<u8>> = vec![vec![1; 10_000], vec![2; 3]];
/// assert_eq!(md5x::hash_many(&files)[1], md5x::md5(&[2, 2, 2]));
/// ```
#[cfg(feature = "alloc")]
pub fn hash_many<T: AsRef<[u8]>>(inputs: &[T]) -> alloc::vec::Vec<Digest> {
    hash_many_with(Backend::active(), inputs)
}

/// [`hash_many`] on a chosen backend.
///
/// # Panics
///
/// If this CPU cannot run `backend`.
#[cfg(feature = "alloc")]
pub fn hash_many_with<T: AsRef<[u8]>>(backend: Backend, inputs: &[T]) -> alloc::vec::Vec<Digest> {
    let mut out = alloc::vec![Digest::new([0; 16]); inputs.len()];
    hash_many_into_with(backend, inputs, &mut out);
    out
}

/// Feed `data[i]` to `hashers[i]`, for every `i`, side by side in the vector lanes:
/// the streaming form of [`hash_many`], for many inputs that arrive a chunk of each at a
/// time (files read in turn, parts copied out of a buffer that may change). Each
/// hasher ends as if `hashers[i].update(&data[i])` had run; the whole blocks of every
/// chunk are hashed where they lie, with only a partial block at either end of a chunk
/// copied, into its hasher. The hashers' partial blocks that the chunks complete are
/// hashed side by side too, before the blocks that follow them.
///
/// [`Lanes`](crate::Lanes) takes chunks one at a time, whenever they come, and copies
/// them into its slots; this takes a chunk for each hasher at once and copies no whole
/// block, so it runs near [`hash_many`]'s speed when the chunks are a few KiB or more.
/// It runs the lanes once a call, on what the call brings: on chunks under about 1 KiB,
/// `Lanes`, which buffers, is the faster.
/// The lanes are those of the first hasher's backend (see
/// [`Md5::with_backend`](crate::Md5::with_backend)); the digests are the same whatever
/// the backends.
///
/// ```
/// let parts: [&[u8]; 3] = [b"hello", &[7; 20_000], b""];
/// let mut hashers = vec![md5x::Md5::new(); 3];
/// // Two chunks of each input: the first 1000 bytes, then the rest.
/// let first: Vec<&[u8]> = parts.iter().map(|p| &p[..p.len().min(1000)]).collect();
/// let rest: Vec<&[u8]> = parts.iter().map(|p| &p[p.len().min(1000)..]).collect();
/// md5x::update_many(&mut hashers, &first);
/// md5x::update_many(&mut hashers, &rest);
/// for (h, p) in hashers.iter().zip(parts) {
///     assert_eq!(h.finalize(), md5x::md5(p));
/// }
/// ```
///
/// # Panics
///
/// If `hashers.len() != data.len()`.
#[cfg(feature = "alloc")]
pub fn update_many<T: AsRef<[u8]>>(hashers: &mut [crate::Md5], data: &[T]) {
    assert_eq!(
        hashers.len(),
        data.len(),
        "md5x::update_many: {} hashers for {} inputs",
        hashers.len(),
        data.len()
    );
    update_pairs(hashers.iter_mut().zip(data.iter().map(AsRef::as_ref)));
}

/// [`update_many`] over pairs of a hasher and its chunk.
#[cfg(feature = "alloc")]
fn update_pairs<'a>(pairs: impl Iterator<Item = (&'a mut crate::Md5, &'a [u8])>) {
    let mut pairs = pairs.peekable();
    let Some(backend) = pairs.peek().map(|(h, _)| h.backend()) else {
        return;
    };
    use crate::hasher::Buffered;
    use alloc::vec::Vec;
    /// A hasher whose short block is whole, and the whole blocks and the tail of its
    /// chunk after that block.
    type Filled<'r> = (&'r mut crate::Md5, &'r [[u8; 64]], &'r [u8]);
    // Each short block is topped up first. Those made whole are hashed side by side (a
    // block each), then every chunk's whole blocks where they lie, then those hashers
    // keep their tails; the others keep theirs at once. Chunks that are not whole
    // blocks complete a short block in most calls: one hashed alone per input would
    // cost about as much as all of the chunk's other blocks in the lanes.
    let n = pairs.size_hint().0;
    let mut jobs: Vec<(&[u8], &mut [u32; 4])> = Vec::with_capacity(n);
    // Allocated at the first filled block: chunks of whole blocks fill none.
    let mut filled: Vec<Filled> = Vec::new();
    for (h, d) in pairs {
        let Some((blocks, tail)) = h.fill_ends(d) else {
            continue;
        };
        if h.whole_block().is_some() {
            if filled.is_empty() {
                filled.reserve(n);
            }
            filled.push((h, blocks, tail));
            continue;
        }
        h.keep(tail);
        if !blocks.is_empty() {
            jobs.push((blocks.as_flattened(), &mut h.state));
        }
    }
    let run = |jobs: &mut [(&[u8], &mut [u32; 4])]| {
        let kernel = shape_for(backend, jobs.len());
        crate::lanes::hash_jobs(kernel.as_ref(), backend, jobs);
    };
    if !filled.is_empty() {
        let mut wholes = Vec::with_capacity(filled.len());
        wholes.extend(filled.iter_mut().filter_map(|f| f.0.whole_block()));
        run(&mut wholes);
    }
    for f in filled.iter_mut().filter(|f| !f.1.is_empty()) {
        jobs.push((f.1.as_flattened(), &mut f.0.state));
    }
    run(&mut jobs);
    drop(jobs);
    for (h, _, tail) in filled {
        h.keep(tail);
    }
}

/// Read every reader to its end into its hasher (`hashers[i]` takes what `readers[i]`
/// gives), side by side in the vector lanes: a lane set of readers at a time (see
/// [`Backend::lanes`]), each read 64 KiB per round and the round hashed with
/// [`update_many`], a reader that ends making room for the next. For many files at
/// once; one 64 KiB buffer per lane is all the memory it takes.
///
/// Returns each reader's result: `Ok(())` at its first read of 0 bytes (so a file
/// that grows or shrinks while it is read is hashed as read), or its first error (not
/// `Interrupted`, which is retried), after which that reader is not read again and its
/// hasher holds the bytes of the rounds before.
///
/// ```
/// let files: [&[u8]; 3] = [b"abc", &[9; 200_000], b""];
/// let mut readers: Vec<&[u8]> = files.to_vec(); // anything that is io::Read
/// let mut hashers = vec![md5x::Md5::new(); 3];
/// let results = md5x::update_many_from(&mut hashers, &mut readers);
/// assert!(results.iter().all(|r| r.is_ok()));
/// for (h, f) in hashers.iter().zip(files) {
///     assert_eq!(h.finalize(), md5x::md5(f));
/// }
/// ```
///
/// # Panics
///
/// If `hashers.len() != readers.len()`.
#[cfg(feature = "std")]
pub fn update_many_from<R: std::io::Read>(
    hashers: &mut [crate::Md5],
    readers: &mut [R],
) -> alloc::vec::Vec<std::io::Result<()>> {
    use alloc::vec::Vec;
    assert_eq!(
        hashers.len(),
        readers.len(),
        "md5x::update_many_from: {} hashers for {} readers",
        hashers.len(),
        readers.len()
    );
    let n = readers.len();
    let mut results: Vec<std::io::Result<()>> = (0..n).map(|_| Ok(())).collect();
    let Some(first) = hashers.first() else {
        return results;
    };
    let window = first.backend().lanes().max(1);
    // The readers being read, in increasing order (refills come from `next`, above all
    // of them); a buffer for each, refilled every round; what each round read.
    let mut active: Vec<usize> = Vec::with_capacity(window);
    let mut bufs: Vec<Vec<u8>> = Vec::with_capacity(window);
    let mut got: Vec<(usize, bool)> = Vec::with_capacity(window);
    let mut next = 0;
    loop {
        while active.len() < window && next < n {
            active.push(next);
            next += 1;
        }
        if active.is_empty() {
            return results;
        }
        if bufs.len() < active.len() {
            bufs.resize_with(active.len(), || alloc::vec![0; READ_MANY_CHUNK]);
        }
        got.clear();
        for (&i, buf) in active.iter().zip(&mut bufs) {
            got.push(match read_full(&mut readers[i], buf) {
                Ok(r) => r,
                Err(e) => {
                    results[i] = Err(e);
                    (0, true)
                }
            });
        }
        // Each active reader's hasher with its chunk (`active` ascends, so each is
        // split off the rest in turn).
        let mut rest = &mut hashers[..];
        let mut base = 0;
        let mut pairs = Vec::with_capacity(active.len());
        for ((&i, buf), &(len, _)) in active.iter().zip(&bufs).zip(&got) {
            let (h, tail) = core::mem::take(&mut rest)[i - base..]
                .split_first_mut()
                .expect("active readers are in range");
            pairs.push((h, &buf[..len]));
            rest = tail;
            base = i + 1;
        }
        update_pairs(pairs.into_iter());
        // Drop the readers that ended, keeping the order.
        let mut ended = got.iter().map(|&(_, end)| end);
        active.retain(|_| !ended.next().unwrap_or(false));
    }
}

/// What [`update_many_from`] reads from each reader per round: enough that a round's
/// reads cost little beside its hashing, little enough that a lane set's buffers stay
/// in cache (48 lanes: 3 MiB). Measured through the command on Zen 4 (2 cores, files
/// in `/dev/shm`, four alternating runs, seconds): 200 files of 4 MiB, 16 KiB
/// 0.16-0.26, 64 KiB 0.16-0.17, 256 KiB 0.17-0.20 (with `-j1` 0.27-0.37, 0.22-0.25,
/// 0.33-0.38); 1000 files of 300 KiB to 2 MiB 0.20-0.34, 0.17-0.21, 0.24-0.26.
#[cfg(feature = "std")]
const READ_MANY_CHUNK: usize = 64 * 1024;

/// Fill `buf` from `r`: the bytes read, and whether `r` ended (its first read of 0).
#[cfg(feature = "std")]
fn read_full<R: std::io::Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<(usize, bool)> {
    let mut filled = 0;
    while filled < buf.len() {
        match read_some(r, &mut buf[filled..])? {
            0 => return Ok((filled, true)),
            k => filled += k,
        }
    }
    Ok((filled, false))
}

/// One read of `r` into `buf`, again where it was interrupted. A reader that says it
/// read more than `buf` holds (which `io::Read` forbids, but safe code can do) is an
/// `InvalidData` error: its count cannot be trusted, nor what was hashed with it.
#[cfg(feature = "std")]
pub(crate) fn read_some<R: std::io::Read + ?Sized>(
    r: &mut R,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    loop {
        match r.read(buf) {
            Ok(n) if n > buf.len() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the reader returned more bytes than its buffer holds",
                ))
            }
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// MD5 of every input into `out` (`out[i]` is the digest of `inputs[i]`), without
/// allocating, on the process's [`Backend::active`] backend.
///
/// ```
/// let mut out = [md5x::Digest::new([0; 16]); 2];
/// md5x::hash_many_into(&[&b"a"[..], b"b"], &mut out);
/// assert_eq!(out, [md5x::md5(b"a"), md5x::md5(b"b")]);
/// ```
///
/// # Panics
///
/// If `out.len() != inputs.len()`.
pub fn hash_many_into<T: AsRef<[u8]>>(inputs: &[T], out: &mut [Digest]) {
    hash_many_into_with(Backend::active(), inputs, out)
}

/// [`hash_many_into`] on a chosen backend.
///
/// # Panics
///
/// If `out.len() != inputs.len()`, or if this CPU cannot run `backend`.
pub fn hash_many_into_with<T: AsRef<[u8]>>(backend: Backend, inputs: &[T], out: &mut [Digest]) {
    assert_eq!(
        out.len(),
        inputs.len(),
        "md5x::hash_many_into: {} outputs for {} inputs",
        out.len(),
        inputs.len()
    );
    backend.assert_supported();
    // (`shape_for` finds a kernel wherever the backend has lanes.)
    match shape_for_lengths(backend, inputs) {
        Some(k) => schedule(&k, backend, Some(backend), inputs, out),
        None => scalar_all(backend, inputs, out),
    }
}

/// A narrower kernel than `backend`'s own for `n` messages (or chains), where that is
/// measured to be at least as fast:
///
/// - Two or fewer (one is left to the single-stream kernel by `min_live`): the
///   two-message scalar kernel (`kernels::x86_64::pair_kernel`, every x86-64 CPU with
///   BMI1), two dependent step chains interleaved in the integer registers. On Zen 3
///   (AMD EPYC family 25 model 1, 2026-11-25, `MD5X_SIZES=1024,8192,1048576
///   MD5X_COUNTS=2 many_report`, two runs): 3.05-3.08, 2.51-2.55 and 2.44-2.49
///   cycles/byte at 1 KiB, 8 KiB and 1 MiB, against 3.97-4.01, 3.32-3.34 and
///   3.24-3.29 for SSE2's or AVX2's one group with the other lanes idle (4.5-4.9 for
///   the messages one after the other). It is not a vector kernel, so it serves the
///   SSE2, AVX2 and AVX-512 backends alike, except the next case.
/// - Four or fewer on AVX-512 on Intel's cores, three to eight on Zen 4: one group of 4
///   lanes (two on Zen 4 for five to eight) with AVX-512VL's steps in `xmm` registers
///   (`kernels::avx512::xmm_lanes`).
///   On Intel it ran two messages 14-23% faster than the integer pair (7-12% faster
///   than the pair with its second chain in an `xmm` register, which it replaced), and
///   three or four level to 10% faster than one 16-lane group (most at 1 KiB). On
///   Zen 4 it ran three or four 1.25-1.55x as fast as one 16-lane group, two groups
///   ran five to eight 1.11-1.18x as fast, and one group ran two messages 10% slower
///   than the integer pair, which keeps them.
/// - Four or fewer on AVX2: they fill only half of one AVX2 group, and every AVX2 CPU
///   has SSE2, whose one group of 4 lanes ran them faster on Zen 1 (MD5-P4: 0.59
///   against 0.43 bytes/cycle; 256-bit operations are two micro-ops there, idle lanes
///   included) and as fast on Zen 3 and Zen 5 (one group: SSE2 0.60 and 0.34
///   bytes/cycle on 4 lanes, AVX2 1.17 and 0.67 on 8, half of that on 4). Three
///   messages still go there: the pair and then the single-stream kernel for the
///   third would take about 3.2 cycles/byte against SSE2's 2.2.
pub(crate) fn narrow_for(backend: Backend, n: usize) -> Option<LaneKernel> {
    let pair = match backend {
        Backend::Avx512 if n <= 8 => match crate::kernels::avx512::xmm_lanes(n) {
            Some(k) => return Some(k),
            None => (n <= 2).then(pair_kernel).flatten(),
        },
        Backend::Sse2 | Backend::Avx2 if n <= 2 => pair_kernel(),
        _ => None,
    };
    // (Without BMI1, which a hypervisor may hide, two messages go where four do.)
    pair.or_else(|| match backend {
        Backend::Avx2 if n <= 4 => Backend::Sse2.lane_kernel_groups(1),
        _ => None,
    })
}

/// The two-message scalar kernel (`kernels::x86_64::pair_kernel`), where there is one.
fn pair_kernel() -> Option<LaneKernel> {
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
    return crate::kernels::x86_64::pair_kernel();
    #[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64", not(miri))))]
    None
}

/// The group count for `n` messages (or jobs: the Server's batches and `etag_file`'s
/// parts choose with it too): the one with the least estimated time, rounds of
/// full lanes (`ceil(n / lanes) * lanes` lane-slots, idle ones included) over the
/// kernel's measured speed with that many groups. Ties go to fewer groups. With equal
/// lengths on AVX2 (speeds 50 : 100 : 128): 2 messages take the two-message scalar
/// kernel and 3 or 4 SSE2's 4 lanes (see [`narrow_for`]), 5 to 8 take 1 group, 9 to 16 take 2, 17 to 24 take 3, 25 to 32
/// take 2 (two full rounds of 16 beat 24 + 8), 33 or more take 3. Zen 1's AVX2 speeds
/// (75 : 100 : 102, `avx2::SPEED_HALF_WIDTH`) give the same shapes.
pub(crate) fn shape_for(backend: Backend, n: usize) -> Option<LaneKernel> {
    if let Some(k) = narrow_for(backend, n) {
        return Some(k);
    }
    best_shape(backend, backend.group_speed()?, n).map(|(_, k)| k)
}

/// [`shape_for`] for `hash_many`, which knows its messages' lengths: on AVX2, group
/// speeds for their mean length (`avx2::speed_for_mean`: on Zen 3, 2 groups rather
/// than 3 for messages under 512 bytes on average, 10% faster at 64 bytes). Summing
/// the lengths, on Zen 3 alone, costs under a cycle a message (and stops once they
/// reach the bound), against hundreds for its last block.
fn shape_for_lengths<T: AsRef<[u8]>>(backend: Backend, inputs: &[T]) -> Option<LaneKernel> {
    let n = inputs.len();
    if backend != Backend::Avx2 || n == 0 {
        return shape_for(backend, n);
    }
    if let Some(k) = narrow_for(backend, n) {
        return Some(k);
    }
    let speed = crate::kernels::avx2::speed_for_mean(|bound| {
        total_len_until(inputs, bound.saturating_mul(n as u64)) / n as u64
    });
    best_shape(backend, speed, n).map(|(_, k)| k)
}

/// The bytes of all `inputs` (saturating: the same long slice may be given many
/// times), or a sum of at least `stop` bytes once the inputs seen reach it. Summed 64
/// lengths at a time in a `u128`, which no 64 lengths can overflow: a saturating
/// addition a message made one chain of dependent additions and moves, 2.3 cycles a
/// message on Zen 3, against 1.05 this way (1000 messages).
fn total_len_until<T: AsRef<[u8]>>(inputs: &[T], stop: u64) -> u64 {
    let mut total = 0u64;
    for chunk in inputs.chunks(64) {
        let part: u128 = chunk.iter().map(|m| m.as_ref().len() as u128).sum();
        total = total.saturating_add(u64::try_from(part).unwrap_or(u64::MAX));
        if total >= stop {
            break;
        }
    }
    total
}

/// [`shape_for`]'s choice among the backend's own kernels, given their relative
/// speeds, with its estimated time ([`best_groups`]). Only the winner's kernel is
/// looked up: each look-up checks the CPU, and `hash_many` chooses once a job.
pub(crate) fn best_shape(backend: Backend, speed: [u32; 3], n: usize) -> Option<(u64, LaneKernel)> {
    let width = backend.group_width()?;
    let (estimate, g) = best_groups(width, speed, n);
    let k = backend.lane_kernel_groups(g)?;
    debug_assert_eq!(k.lanes, width * g);
    Some((estimate, k))
}

/// The group count (1 to 3) with the least estimated time for `n` messages on groups
/// of `width` lanes (a power of two), and that estimate: rounds of full lanes
/// (`ceil(n / lanes) * lanes` lane-slots, idle ones included) over the measured
/// `speed` of that many groups, times 1000. Ties go to fewer groups.
///
/// Without a division but the winner's: the rounds of one group by a shift, those of
/// `g` groups as `ceil(rounds / g)` (`g` a constant), and the estimates compared as
/// cross products. It was six divisions, and one more kernel look-up in
/// [`best_shape`]: `hash_many`'s choice took 125-170 cycles a job of 9 to 48
/// messages on Zen 3, now 63-99 (`many_report choose`, see `docs/performance.md`).
pub(crate) fn best_groups(width: usize, speed: [u32; 3], n: usize) -> (u64, usize) {
    debug_assert!(width.is_power_of_two());
    let rounds = (n.div_ceil(1 << width.trailing_zeros()) as u64).max(1);
    // The best so far as (slots, speed, groups): its estimate is slots / speed.
    let mut best = (u64::MAX, 1, 0);
    for g in 1..=3 {
        let slots = rounds.div_ceil(g as u64) * (width * g) as u64;
        let fast = u64::from(speed[g - 1].max(1));
        // slots / fast < best.0 / best.1, in `u128` so that nothing overflows.
        if u128::from(slots) * u128::from(best.1) < u128::from(best.0) * u128::from(fast) {
            best = (slots, fast, g);
        }
    }
    let (slots, fast, g) = best;
    (slots.saturating_mul(1000) / fast, g)
}

/// Benchmark hooks ([`hash_many_into_with`] with a chosen group count and cut-over), and
/// the batching the command and the Python module share. Not part of the stable API.
#[doc(hidden)]
pub mod tuning {
    use super::*;

    /// Like [`hash_many_into_with`], with `groups` interleaved vector groups (1 to 3) and
    /// `min_live` as the cut-over to the single-stream kernel. Returns `false` (and
    /// hashes nothing) when `backend` has no lane kernel with that many groups here.
    ///
    /// # Panics
    ///
    /// If `out.len() != inputs.len()`.
    pub fn hash_many_tuned<T: AsRef<[u8]>>(
        backend: Backend,
        groups: usize,
        min_live: usize,
        inputs: &[T],
        out: &mut [Digest],
    ) -> bool {
        run_kernel(
            backend.lane_kernel_groups(groups),
            backend,
            min_live,
            inputs,
            out,
        )
    }

    /// [`hash_many_tuned`] through the generic lane algorithm even where a
    /// hand-scheduled kernel is the default (AVX2, AVX-512): what the benchmarks compare it
    /// with. Returns `false` (and hashes nothing) when `backend` has no lane kernel with
    /// that many groups here.
    ///
    /// # Panics
    ///
    /// If `out.len() != inputs.len()`.
    pub fn hash_many_generic<T: AsRef<[u8]>>(
        backend: Backend,
        groups: usize,
        min_live: usize,
        inputs: &[T],
        out: &mut [Digest],
    ) -> bool {
        run_kernel(
            backend.lane_kernel_generic(groups),
            backend,
            min_live,
            inputs,
            out,
        )
    }

    /// Schedule `inputs` over `kernel` with cut-over `min_live`; `false` without one.
    fn run_kernel<T: AsRef<[u8]>>(
        kernel: Option<LaneKernel>,
        backend: Backend,
        min_live: usize,
        inputs: &[T],
        out: &mut [Digest],
    ) -> bool {
        assert_eq!(out.len(), inputs.len(), "md5x: outputs and inputs differ");
        let Some(mut k) = kernel else {
            return false;
        };
        k.min_live = min_live;
        schedule(&k, backend, None, inputs, out);
        true
    }

    /// The lanes of the kernel that [`hash_many_into_with`] chooses for `inputs` on
    /// `backend` (0: none, one message at a time, or a backend this CPU cannot run):
    /// what `many_report choose` times.
    ///
    /// ```
    /// use md5x::{tuning, Backend};
    /// assert_eq!(tuning::shape_lanes(Backend::Portable, &[b"abc"; 30]), 0);
    /// let lanes = tuning::shape_lanes(Backend::detected(), &[b"abc"; 30]);
    /// assert!(lanes <= Backend::detected().lanes().max(2));
    /// ```
    pub fn shape_lanes<T: AsRef<[u8]>>(backend: Backend, inputs: &[T]) -> usize {
        match backend.is_supported() {
            true => shape_for_lengths(backend, inputs).map_or(0, |k| k.lanes),
            false => 0,
        }
    }

    /// Whether `backend`'s lane kernel with `groups` groups is hand-scheduled, that is,
    /// differs from [`hash_many_generic`]'s.
    pub fn is_hand_scheduled(backend: Backend, groups: usize) -> bool {
        backend.hand_scheduled_lanes() && backend.lane_kernel_groups(groups).is_some()
    }

    /// The shapes `(width, groups, ternlog)` that [`hash_many_portable_lanes`] runs: the
    /// SSE2, AVX2 and AVX-512 kernels' lane counts with 1 or 2 groups, and AVX-512's
    /// with its `vpternlogd` round functions.
    pub const PORTABLE_LANE_SHAPES: [(usize, usize, bool); 8] = [
        (4, 1, false),
        (4, 2, false),
        (8, 1, false),
        (8, 2, false),
        (16, 1, false),
        (16, 2, false),
        (16, 1, true),
        (16, 2, true),
    ];

    /// [`hash_many_into_with`] through the portable lane implementation (plain arrays,
    /// any machine): `width` 4, 8 or 16 lanes, `groups` 1 or 2, and with `ternlog` the
    /// `vpternlogd` round functions of the AVX-512 kernel (width 16): one of
    /// [`PORTABLE_LANE_SHAPES`]. This is how the lane algorithm and the scheduler are
    /// tested where the vector ISA is missing. Returns `false` (and hashes nothing) for
    /// other shapes.
    ///
    /// # Panics
    ///
    /// If `out.len() != inputs.len()`.
    pub fn hash_many_portable_lanes<T: AsRef<[u8]>>(
        width: usize,
        groups: usize,
        ternlog: bool,
        min_live: usize,
        inputs: &[T],
        out: &mut [Digest],
    ) -> bool {
        assert_eq!(out.len(), inputs.len(), "md5x: outputs and inputs differ");
        let Some(k) =
            crate::kernels::lanes::portable_kernel_shape(width, groups, ternlog, min_live)
        else {
            return false;
        };
        schedule(&k, Backend::Portable, None, inputs, out);
        true
    }

    /// The most worker threads the command's `-j` and the Python module's `jobs=` start:
    /// 256, or the core count where that is more. Past it, more workers cost much and
    /// were never seen to gain: each is a thread, and with a batch per file the lanes
    /// run empty. 20,000 files of 1 KiB on Zen 3's 2 cores (`/dev/shm`) took 0.07 s at
    /// `-j 64`, 0.12 s at 256, 0.29 s at 1,024 and 2.7 s (178 MB) at 20,000. (A network
    /// file system with long round trips might gain from more requests in flight than
    /// 256; that was not measured.)
    ///
    /// ```
    /// assert_eq!(md5x::tuning::max_jobs(), md5x::tuning::cores().max(256));
    /// assert!(md5x::tuning::cap_jobs(usize::MAX) == md5x::tuning::max_jobs());
    /// assert_eq!(md5x::tuning::cap_jobs(3), 3);
    /// ```
    #[cfg(feature = "std")]
    pub fn max_jobs() -> usize {
        cores().max(256)
    }

    /// The threads this process may run at once (`available_parallelism`, at least 1),
    /// asked once: on Linux the answer reads cgroup files, too slow to repeat per call.
    ///
    /// ```
    /// assert!(md5x::tuning::cores() >= 1);
    /// ```
    #[cfg(feature = "std")]
    pub fn cores() -> usize {
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// `jobs`, no more than [`max_jobs`].
    #[cfg(feature = "std")]
    pub fn cap_jobs(jobs: usize) -> usize {
        jobs.min(max_jobs())
    }

    /// Where to cut `n` inputs (files) into batches for `workers` threads that each hash
    /// a batch's inputs side by side; `sizes()` gives the inputs' sizes in bytes, and is
    /// called only where there are few inputs (so a caller can look them up on many
    /// threads, and only when they are needed). Each end is a batch's end index, and
    /// the next batch starts there. Shared by the command and the Python module.
    ///
    /// A batch's inputs are what fills the lanes, so batches hold `cap` inputs (a lane
    /// set) wherever there are at least 8 such batches for every worker. With fewer
    /// inputs, batches cut by count alone are either too small to fill the lanes, or
    /// leave one worker with all the large inputs where those come first or last; so
    /// there a batch ends at `cap` inputs or at about `1 / workers` of all the bytes
    /// (before an input that would take it past that, or at the input that reaches
    /// it): a worker's share of the large inputs in its lanes at once, and no worker
    /// with more than its share.
    #[cfg(feature = "alloc")]
    pub fn batch_ends(
        n: usize,
        workers: usize,
        cap: usize,
        sizes: impl FnOnce() -> alloc::vec::Vec<u64>,
    ) -> alloc::vec::Vec<usize> {
        let (workers, cap) = (workers.max(1), cap.max(1));
        if n >= workers.saturating_mul(8).saturating_mul(cap) {
            return (1..=n.div_ceil(cap)).map(|k| (k * cap).min(n)).collect();
        }
        let sizes = sizes();
        assert_eq!(
            sizes.len(),
            n,
            "md5x::tuning::batch_ends: sizes for {n} inputs"
        );
        // (Sizes are saturated: a sparse file may say almost 2^63 bytes.)
        let total = sizes.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let target = total.div_ceil(workers as u64).max(1);
        let (mut ends, mut count, mut bytes) = (alloc::vec::Vec::new(), 0, 0u64);
        for (i, &len) in sizes.iter().enumerate() {
            if count > 0 && bytes.saturating_add(len) > target {
                ends.push(i);
                (count, bytes) = (0, 0);
            }
            count += 1;
            bytes = bytes.saturating_add(len);
            if count == cap || bytes >= target {
                ends.push(i + 1);
                (count, bytes) = (0, 0);
            }
        }
        if count > 0 {
            ends.push(n);
        }
        ends
    }

    /// How many files a tool may hold open at once for hashing side by side: `most`, or
    /// fewer where the process's limit on open files (its soft `RLIMIT_NOFILE`, as
    /// Linux's `/proc/self/limits` gives it; read at each call, since a process may
    /// change it) leaves less than twice that beyond 32 for everything else. With a
    /// limit of 64, 16; at 32 or below, none (each file is then read on its own, as
    /// md5sum reads it). Where the limit cannot be read, `most`.
    #[cfg(feature = "std")]
    pub fn open_file_cap(most: usize) -> usize {
        let limit = std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|t| open_files_limit(&t));
        match limit {
            Some(limit) => open_file_cap_under(limit, most),
            None => most,
        }
    }

    /// [`open_file_cap`]'s arithmetic for a soft limit of `limit` open files (`None`:
    /// unlimited): half of what lies beyond 32, at most `most`.
    #[cfg(feature = "std")]
    pub(crate) fn open_file_cap_under(limit: Option<u64>, most: usize) -> usize {
        match limit {
            Some(n) => usize::try_from(n.saturating_sub(32) / 2).map_or(most, |c| c.min(most)),
            None => most,
        }
    }

    /// The soft limit on open files in the text of `/proc/self/limits`: `Some(None)`
    /// when it is unlimited, `None` where the text does not say.
    #[cfg(feature = "std")]
    pub fn open_files_limit(limits: &str) -> Option<Option<u64>> {
        let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
        let soft = line["Max open files".len()..].split_whitespace().next()?;
        match soft {
            "unlimited" => Some(None),
            n => n.parse().ok().map(Some),
        }
    }

    /// The sizes of the regular files at `paths` (0 for `None`, for what is not a regular
    /// file, and where the lookup fails), for [`batch_ends`]: looked up on up to
    /// `threads` threads, since on a network file system each lookup is a round trip,
    /// as each open is. The first share is looked up on the calling thread (so one
    /// share, as for a single file, starts no thread: that cost 50 us, 3x the lookup),
    /// and so is a share whose thread a process limit refuses.
    #[cfg(feature = "std")]
    pub fn file_sizes(paths: &[Option<&std::path::Path>], threads: usize) -> alloc::vec::Vec<u64> {
        use alloc::vec::Vec;
        let size = |p: &Option<&std::path::Path>| {
            p.and_then(|p| std::fs::metadata(p).ok())
                .filter(|m| m.is_file())
                .map_or(0, |m| m.len())
        };
        let per = paths.len().div_ceil(threads.max(1)).max(1);
        let mut shares = paths.chunks(per);
        let first = shares.next().unwrap_or_default();
        std::thread::scope(|s| {
            let others: Vec<_> = shares
                .map(|ps| {
                    let looked_up = std::thread::Builder::new()
                        .spawn_scoped(s, move || ps.iter().map(size).collect::<Vec<u64>>());
                    (ps, looked_up.ok())
                })
                .collect();
            let mut sizes: Vec<u64> = first.iter().map(size).collect();
            for (ps, h) in others {
                match h.and_then(|h| h.join().ok()) {
                    Some(more) => sizes.extend(more),
                    None => sizes.extend(ps.iter().map(size)),
                }
            }
            sizes
        })
    }

    /// The default group count and lanes of `backend`'s lane kernel here, if any.
    pub fn lane_shape(backend: Backend) -> Option<(usize, usize)> {
        backend.lane_kernel().map(|k| (k.lanes / k.width, k.lanes))
    }

    /// The least work (bytes, and [`PAR_MESSAGE_BYTES`] a message) in a share of
    /// [`par_hash_many`]: about 18 microseconds of one core's AVX2 lanes at 8 KiB a
    /// message, so that the hand-off to another thread stays a small part of it. Measured
    /// on Zen 3 (AMD EPYC family 25 model 1, a 2-core virtual machine, 2026-12-01,
    /// `MD5X_SIZES=S MD5X_COUNTS=N many_report par`, two threads against one): before,
    /// 48 and 512 messages of 64 bytes ran at 0.19-0.22 and 0.47-0.84 times one
    /// thread's speed, 48 of 1 KiB at 0.48-0.69; now at 0.98-1.00 (on one thread). From
    /// 256 KiB of work two shares pay (1024 messages of 64 bytes: 1.22-1.29x); twice this
    /// bound (a first cut) gave that up (`docs/performance.md`, "`par_hash_many` on small
    /// jobs").
    #[cfg(feature = "rayon")]
    pub const PAR_TASK_BYTES: u64 = 128 << 10;

    /// What a message weighs in [`PAR_TASK_BYTES`]' work besides its bytes: its padding
    /// block and its share of the job manager's refills. At 64 bytes, the lanes of one
    /// core hash about a quarter as many bytes a second as at 8 KiB (1.95 against 7.3 GB/s
    /// on Zen 3), so a 64-byte message weighs as 256.
    #[cfg(feature = "rayon")]
    pub const PAR_MESSAGE_BYTES: u64 = 192;

    /// How [`par_hash_many`] shares out `n` messages of `total` bytes in all (asked
    /// only when there are two threads and two lane sets) for `threads` threads whose
    /// kernels fill `lanes` lanes: the messages in each share, whole lane sets, or
    /// `None` to hash them all on the calling thread.
    ///
    /// The work (the bytes plus [`PAR_MESSAGE_BYTES`] a message) is cut into shares of
    /// at least [`PAR_TASK_BYTES`], at most eight a thread, so that uneven lengths and
    /// set counts that do not divide by the threads still balance; a share holds one
    /// lane set at least. Work for fewer than two shares: `None`.
    ///
    /// ```
    /// use md5x::tuning::par_chunk;
    /// // 48 messages of 64 bytes: too little to share.
    /// assert_eq!(par_chunk(48, 24, 2, || 48 * 64), None);
    /// // 512 of 64 bytes: 32 KiB, and 96 KiB of weight, still too little.
    /// assert_eq!(par_chunk(512, 24, 2, || 512 * 64), None);
    /// // 32 of 8 KiB: two shares, a lane set (24) and the rest.
    /// assert_eq!(par_chunk(32, 24, 2, || 32 << 13), Some(24));
    /// // 4096 of 64 bytes (1 MiB of work): 8 shares of 21 lane sets, and a ninth.
    /// assert_eq!(par_chunk(4096, 24, 2, || 4096 * 64), Some(504));
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_chunk(
        n: usize,
        lanes: usize,
        threads: usize,
        total: impl FnOnce() -> u64,
    ) -> Option<usize> {
        let lanes = lanes.max(1);
        let sets = n.div_ceil(lanes);
        if threads < 2 || sets < 2 {
            return None;
        }
        let work = total().saturating_add((n as u64).saturating_mul(PAR_MESSAGE_BYTES));
        let by_work = usize::try_from(work / PAR_TASK_BYTES).unwrap_or(usize::MAX);
        if by_work < 2 {
            return None;
        }
        let shares = threads.saturating_mul(8).min(by_work);
        Some((sets / shares).max(1) * lanes)
    }
}

/// With feature `rayon`: [`hash_many`] spread over the cores of rayon's pool, each
/// core filling its own lanes with a contiguous share of the inputs.
///
/// Handing work to other threads costs microseconds (tens on a virtual machine whose
/// idle cores sleep), so a job too small for two shares of at least 128 KiB of work
/// each (its bytes, plus 192 a message) or of a lane set each runs on the calling
/// thread, as [`hash_many`] would.
///
/// ```
/// let msgs: Vec<Vec<u8>> = (0..100).map(|i| vec![i as u8; 1000 + i]).collect();
/// let d = md5x::par_hash_many(&msgs);
/// assert_eq!(d, md5x::hash_many(&msgs));
/// ```
#[cfg(feature = "rayon")]
pub fn par_hash_many<T: AsRef<[u8]> + Sync>(inputs: &[T]) -> alloc::vec::Vec<Digest> {
    let mut out = alloc::vec![Digest::new([0; 16]); inputs.len()];
    par_hash_many_into_with(Backend::active(), inputs, &mut out);
    out
}

/// [`par_hash_many`] into `out`, on a chosen backend.
///
/// # Panics
///
/// If `out.len() != inputs.len()`, or if this CPU cannot run `backend`.
#[cfg(feature = "rayon")]
pub fn par_hash_many_into_with<T: AsRef<[u8]> + Sync>(
    backend: Backend,
    inputs: &[T],
    out: &mut [Digest],
) {
    use rayon::prelude::*;
    assert_eq!(
        out.len(),
        inputs.len(),
        "md5x::par_hash_many: outputs and inputs differ"
    );
    // Checked here too, so that the panic does not depend on there being work.
    backend.assert_supported();
    let threads = rayon::current_num_threads();
    match tuning::par_chunk(inputs.len(), backend.lanes(), threads, || {
        total_len_until(inputs, u64::MAX)
    }) {
        Some(chunk) => inputs
            .par_chunks(chunk)
            .zip(out.par_chunks_mut(chunk))
            .for_each(|(i, o)| hash_many_into_with(backend, i, o)),
        None => hash_many_into_with(backend, inputs, out),
    }
}

fn scalar_all<T: AsRef<[u8]>>(backend: Backend, inputs: &[T], out: &mut [Digest]) {
    for (d, m) in out.iter_mut().zip(inputs) {
        *d = md5_with(backend, m.as_ref());
    }
}

/// Lane `job` value of an idle lane.
const IDLE: usize = usize::MAX;

/// The most bytes a lane's two-block buffer holds with their padding (128, less the
/// 0x80 byte and the 8-byte length): messages of at most this many bytes go there
/// whole, and are read there rather than where they lie.
const SHORT: usize = 119;

/// Copy `tail` (at most [`SHORT`] bytes) and MD5's padding for a message of `total_len`
/// bytes into `buf`; returns the number of blocks (1 or 2). The whole buffer is zeroed
/// first with fixed-size stores, where a `fill` of the gap (its length varies) called
/// `memset` for every message: 6-15% of `hash_many`'s time on 64-byte messages.
#[inline]
fn pad_into(buf: &mut [u8; 128], tail: &[u8], total_len: u64) -> usize {
    let t = tail.len();
    debug_assert!(t <= SHORT);
    let nb = if t < 56 { 1 } else { 2 };
    *buf = [0; 128];
    buf[..t].copy_from_slice(tail);
    buf[t] = 0x80;
    buf[nb * 64 - 8..nb * 64].copy_from_slice(&total_len.wrapping_mul(8).to_le_bytes());
    nb
}

/// The scheduler's lanes, one array per field, so that the loop run between two kernel
/// calls touches little: with uneven lengths a message (or its phase) ends at almost
/// every call, and the calls are then short (one or two blocks).
/// `N` is its capacity in lanes.
struct Sched<'a, const N: usize> {
    /// The message each lane holds, or [`IDLE`].
    job: [usize; N],
    /// Its whole blocks (the message itself; empty once in the padded tail).
    body: [&'a [u8]; N],
    /// In the padded tail, read from the lane's `pad` buffer.
    in_pad: [bool; N],
    /// Blocks read so far in the current phase.
    pos: [usize; N],
    /// Blocks left in the current phase; `usize::MAX` in an idle lane, so that it never
    /// bounds a run.
    left: [usize; N],
    pad: [[u8; 128]; N],
}

impl<'a, const N: usize> Sched<'a, N> {
    /// Start `data` (message `job`) in lane `l`, whose state the caller resets.
    #[inline]
    fn begin(&mut self, l: usize, job: usize, data: &'a [u8]) {
        self.job[l] = job;
        self.pos[l] = 0;
        if data.len() <= SHORT {
            // Short messages go to the buffer whole: one phase instead of two.
            self.left[l] = pad_into(&mut self.pad[l], data, data.len() as u64);
            self.in_pad[l] = true;
            self.body[l] = &[];
        } else {
            self.left[l] = data.len() / 64;
            self.in_pad[l] = false;
            self.body[l] = data;
        }
    }

    /// Lane `l` has hashed its whole blocks: go on with the tail (the rest of `body`)
    /// and its padding, for a message of `total` bytes.
    #[inline]
    fn pad_tail(&mut self, l: usize, total: u64) {
        let tail = &self.body[l][self.pos[l] * 64..];
        self.left[l] = pad_into(&mut self.pad[l], tail, total);
        self.in_pad[l] = true;
        self.body[l] = &[];
        self.pos[l] = 0;
    }

    /// Move the live lanes, in order, to the first lanes of kernel `to` (fewer lanes
    /// than `from`, at least as many as are live), their state from `from`'s layout to
    /// `to`'s; the lanes after them go idle.
    fn compact(&mut self, from: &LaneKernel, to: &LaneKernel, state: &mut [u32]) {
        let mut old = [[0u32; 4]; N];
        let old = old.as_flattened_mut();
        old[..4 * from.lanes].copy_from_slice(&state[..4 * from.lanes]);
        let mut j = 0;
        for l in 0..from.lanes {
            if self.job[l] == IDLE {
                continue;
            }
            to.set_lane(state, j, &from.get_lane(old, l));
            // (j <= l: nothing live is overwritten before it moves.)
            self.job[j] = self.job[l];
            self.body[j] = self.body[l];
            self.in_pad[j] = self.in_pad[l];
            self.pos[j] = self.pos[l];
            self.left[j] = self.left[l];
            self.pad[j] = self.pad[l];
            j += 1;
        }
        debug_assert!(j <= to.lanes);
        for l in j..from.lanes {
            self.idle(l);
        }
    }

    fn idle(&mut self, l: usize) {
        self.job[l] = IDLE;
        self.left[l] = usize::MAX;
        self.in_pad[l] = false;
        self.body[l] = &[];
        self.pos[l] = 0;
    }

    /// The bytes lane `l` reads next.
    #[inline(always)]
    fn source(&self, l: usize) -> &[u8] {
        match self.in_pad[l] {
            true => &self.pad[l][self.pos[l] * 64..],
            false => &self.body[l][self.pos[l] * 64..],
        }
    }
}

/// The cache lines the job manager asks for (into L2) at the start of each message
/// that waits for the next refill, while the run before it hashes: a message's first
/// blocks are read right after its refill, before the hardware prefetchers have seen
/// its stream, and the lane kernels' own prefetches, where they have them (AVX2 on AMD
/// family 25, AVX-512), reach a few blocks past the block they hash: 4 for AVX2, so
/// a message's first 4 blocks were never prefetched.
///
/// Measured on Zen 4 (AMD EPYC family 25 model 17, 2026-11-25; `many_report`'s
/// default rows, messages end to end, 128 MiB of them, so from memory), bytes/cycle
/// before -> after:
///
/// | backend | 256 B | 1 KiB | 4 KiB | 8 KiB |
/// |---|---:|---:|---:|---:|
/// | AVX2 | 0.79 -> 1.11-1.13 | 1.06-1.14 -> 1.69-1.70 | 2.05 -> 2.10 | 2.22 -> 2.30 |
/// | AVX-512 | 1.00-1.02 -> 1.35-1.36 | 1.67 -> 1.87-1.93 | 2.94 -> 2.99 | 3.23 -> 3.28 |
/// | SSE2 | 0.65-0.66 -> 0.75-0.76 | 0.73-0.74 -> 0.98-0.99 | 1.15 -> 1.18 | level |
///
/// 64 B and 1 MiB were level. Its cost shows in cache: 96 messages of 1 KiB with
/// AVX-512 went 2.90-2.95 -> 2.85-2.90 (eight alternating runs). At 1 KiB with AVX2, 2
/// lines gained nothing, 8 were level with 4, and 16 lost a third of the gain; into L1
/// (`prefetcht0`) or with `prefetchnta`, 1.25. Messages of at most [`SHORT`] bytes are
/// left out, and windows of them skipped: with them, 64-byte messages (which the
/// hardware prefetchers follow end to end) lost 11%.
const AHEAD_LINES: usize = 4;

/// Messages the job manager orders by length at a time (see [`Order`]).
const ORDER_WINDOW: usize = 1024;

/// The order in which the job manager starts messages: window by window of
/// [`ORDER_WINDOW`], longest first within each window where their lengths differ.
///
/// Lanes that start together then end together: with lengths in random order, some
/// lane's message ends at almost every block, and the kernel runs a block at a time
/// with a refill between every two calls; in order, the lanes of a round end within a
/// block or two of each other. Longest first also leaves the shortest messages for
/// last, when lanes go idle. Windows keep the index table on the stack.
struct Order {
    /// Position of the window's first message.
    start: usize,
    len: usize,
    /// The window's messages, as offsets from `start`, in the order they run.
    idx: [u16; ORDER_WINDOW],
    sorted: bool,
    /// Whether some message in the window is longer than [`SHORT`].
    long: bool,
}

impl Order {
    fn new() -> Self {
        Order {
            start: 0,
            len: 0,
            idx: [0; ORDER_WINDOW],
            sorted: false,
            long: false,
        }
    }

    /// The message to run `p`-th, if `p` is in the current window: a look ahead, which
    /// does not move the window.
    #[inline(always)]
    fn peek(&self, p: usize) -> Option<usize> {
        if p < self.start || p >= self.start + self.len {
            return None;
        }
        Some(match self.sorted {
            true => self.start + usize::from(self.idx[p - self.start]),
            false => p,
        })
    }

    /// The message to run `p`-th (`p` counts up from 0, one at a time).
    #[inline(always)]
    fn get<T: AsRef<[u8]>>(&mut self, p: usize, inputs: &[T]) -> usize {
        if p >= self.start + self.len {
            self.fill(p, inputs);
        }
        match self.sorted {
            true => self.start + usize::from(self.idx[p - self.start]),
            false => p,
        }
    }

    #[inline(never)]
    fn fill<T: AsRef<[u8]>>(&mut self, start: usize, inputs: &[T]) {
        let window = &inputs[start..inputs.len().min(start + ORDER_WINDOW)];
        self.start = start;
        self.len = window.len();
        // Blocks per message; sort only where they differ by more than one (equal
        // lengths, the common case of a benchmark or of fixed-size records, cost one
        // pass).
        let blocks = |m: &T| m.as_ref().len() / 64;
        let (shortest, longest) = window.iter().fold((usize::MAX, 0), |(lo, hi), m| {
            (lo.min(m.as_ref().len()), hi.max(m.as_ref().len()))
        });
        let (lo, hi) = (shortest / 64, longest / 64);
        self.sorted = hi > lo.saturating_add(1);
        self.long = longest > SHORT;
        if self.sorted {
            let idx = &mut self.idx[..window.len()];
            for (i, x) in idx.iter_mut().enumerate() {
                // (ORDER_WINDOW fits in u16.)
                *x = i as u16;
            }
            idx.sort_unstable_by_key(|&i| core::cmp::Reverse(blocks(&window[usize::from(i)])));
        }
    }
}

/// The job manager (see the module docs). `scalar` is the single-stream backend for
/// the messages below the cut-over. With `adapt`, the job manager adapts to the
/// inputs: it starts messages longest first within windows ([`Order`]), and once no
/// message is waiting and lanes have gone idle, the live messages move to the
/// narrower kernel of that backend that [`shape_for`] picks for their number, where
/// there is one; `k` is then `shape_for`'s kernel for `inputs.len()` messages, so the
/// choice is made again only when the number of live messages changes (each choice
/// costs a few hundred instructions, which a job of a few short messages would feel).
/// Without it, messages run in input order on `k` alone (to measure a kernel shape).
///
/// Its lane arrays (a 128-byte padding buffer a lane among them) are initialized on
/// every call, which short jobs feel, so it comes in three sizes: up to
/// [`FEW_LANES`] lanes (0.7 KiB), up to [`SMALL_LANES`] (all but AVX2's 3 groups and
/// AVX-512's 2 and 3; 2.9 KiB), and [`MAX_LANES`] (8.7 KiB). Timed in one process on
/// an Emerald Rapids guest (2026-11-28, a temporary test, 12 rounds, medians,
/// cycles/byte), each size against the largest: five 64-byte messages (16 lanes) 3.66
/// against 4.67 and 5.37 against 6.67 in two runs, sixteen 2.29 against 2.72, three
/// (4 lanes) 5.27 against 7.88, two 7.20 against 11.13, five of 1 KiB 1.38 against
/// 1.43.
pub(crate) fn schedule<T: AsRef<[u8]>>(
    k: &LaneKernel,
    scalar: Backend,
    adapt: Option<Backend>,
    inputs: &[T],
    out: &mut [Digest],
) {
    match lane_room(k.lanes) {
        FEW_LANES => schedule_in::<T, FEW_LANES>(k, scalar, adapt, inputs, out),
        SMALL_LANES => schedule_in::<T, SMALL_LANES>(k, scalar, adapt, inputs, out),
        _ => schedule_in::<T, MAX_LANES>(k, scalar, adapt, inputs, out),
    }
}

/// The room for lanes, of the three sizes, that a kernel of `lanes` lanes needs:
/// [`FEW_LANES`], [`SMALL_LANES`] or [`MAX_LANES`].
pub(crate) const fn lane_room(lanes: usize) -> usize {
    if lanes <= FEW_LANES {
        FEW_LANES
    } else if lanes <= SMALL_LANES {
        SMALL_LANES
    } else {
        MAX_LANES
    }
}

/// [`schedule`] with room for `N` lanes.
fn schedule_in<T: AsRef<[u8]>, const N: usize>(
    k: &LaneKernel,
    scalar: Backend,
    adapt: Option<Backend>,
    inputs: &[T],
    out: &mut [Digest],
) {
    let n = inputs.len();
    let mut k = *k;
    let mut lanes = k.lanes;
    assert!(lanes <= N);
    if n < k.min_live.max(1) {
        return scalar_all(scalar, inputs, out);
    }
    let mut state_buf = [[0u32; 4]; N];
    let state = state_buf.as_flattened_mut();
    let mut s = Sched::<N> {
        job: [IDLE; N],
        body: [&[]; N],
        in_pad: [false; N],
        pos: [0; N],
        left: [usize::MAX; N],
        pad: [[0; 128]; N],
    };
    // Messages in the order they run (`next` counts them); ordering only pays when
    // lanes are refilled.
    let mut order = Order::new();
    let ordered = adapt.is_some() && n > lanes;
    // (A macro, not a closure: the look-ahead below reads `order` too.)
    macro_rules! job_at {
        ($p:expr) => {
            match ordered {
                true => order.get($p, inputs),
                false => $p,
            }
        };
    }
    let mut next = 0;
    let mut live = 0;
    // Messages before this position have been prefetched or started.
    let mut ahead = 0;
    for l in 0..lanes.min(n) {
        let job = job_at!(l);
        k.set_lane(state, l, &INIT);
        s.begin(l, job, inputs[job].as_ref());
        next += 1;
        live += 1;
    }

    // The live count `k` was chosen for (see the docs above).
    let mut shaped = live;
    let mut nblocks = s.left[..lanes].iter().fold(usize::MAX, |m, &x| m.min(x));
    while live > 0 {
        if live < k.min_live && next == n {
            // Too few messages left for the lanes to pay: finish them one by one.
            for l in 0..lanes {
                if s.job[l] == IDLE {
                    continue;
                }
                let mut st = k.get_lane(state, l);
                let src = s.source(l);
                if s.in_pad[l] {
                    scalar.compress(&mut st, src[..s.left[l] * 64].as_chunks::<64>().0);
                } else {
                    let (blocks, tail) = src.as_chunks::<64>();
                    scalar.compress(&mut st, blocks);
                    finish(
                        scalar,
                        &mut st,
                        tail,
                        inputs[s.job[l]].as_ref().len() as u64,
                    );
                }
                out[s.job[l]] = state_to_digest(&st);
            }
            return;
        }

        if next == n && live < lanes && live != shaped {
            shaped = live;
            if let Some(k2) = adapt
                .and_then(|b| shape_for(b, live))
                .filter(|k2| k2.lanes < lanes)
            {
                s.compact(&k, &k2, state);
                k = k2;
                lanes = k.lanes;
                // (`nblocks` stands: the live lanes kept their blocks left.)
                continue;
            }
        }

        let mut ptrs: [&[u8]; N] = [&[]; N];
        for (l, p) in ptrs[..lanes].iter_mut().enumerate() {
            *p = s.source(l);
        }
        if live < lanes {
            // Idle lanes read a live lane's data; their results are dropped.
            let first = (0..lanes).find(|&l| s.job[l] != IDLE).unwrap_or(0);
            let src = ptrs[first];
            for (p, &job) in ptrs[..lanes].iter_mut().zip(&s.job) {
                if job == IDLE {
                    *p = src;
                }
            }
        }
        // The first lines of the messages that the next refills start (up to one a
        // lane), on their way while this run hashes: see `AHEAD_LINES`.
        ahead = ahead.max(next);
        while ahead < n.min(next + lanes) {
            let job = match ordered {
                false => ahead,
                true => match order.peek(ahead) {
                    Some(job) if order.long => job,
                    // Past this window (the next one is not known yet), or none long.
                    _ => break,
                },
            };
            let data = inputs[job].as_ref();
            if data.len() > SHORT {
                crate::kernels::prefetch_l2(data, AHEAD_LINES);
            }
            ahead += 1;
        }
        k.compress(&mut state[..4 * lanes], &ptrs[..lanes], nblocks);

        // Advance every lane; refill the ones whose message ended; the next run is as
        // long as the shortest phase left (found in the same pass).
        let ran = nblocks;
        nblocks = usize::MAX;
        for l in 0..lanes {
            if s.job[l] != IDLE {
                s.pos[l] += ran;
                s.left[l] -= ran;
                if s.left[l] == 0 {
                    if s.in_pad[l] {
                        let st = k.get_lane(state, l);
                        out[s.job[l]] = state_to_digest(&st);
                        if next < n {
                            k.set_lane(state, l, &INIT);
                            let job = job_at!(next);
                            s.begin(l, job, inputs[job].as_ref());
                            next += 1;
                        } else {
                            s.idle(l);
                            live -= 1;
                        }
                    } else {
                        // Whole blocks done: the tail and its padding.
                        let total = inputs[s.job[l]].as_ref().len() as u64;
                        s.pad_tail(l, total);
                    }
                }
            }
            nblocks = nblocks.min(s.left[l]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::lanes::portable_kernel;
    use alloc::vec::Vec;

    /// The soft limit on open files, as `/proc/self/limits` writes it.
    #[cfg(feature = "std")]
    #[test]
    fn open_files_limit_from_proc_limits() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max processes             63704                63704                processes \n\
                    Max open files            1024                 524288               files     \n";
        assert_eq!(tuning::open_files_limit(text), Some(Some(1024)));
        let unlimited = text.replace("1024 ", "unlimited");
        assert_eq!(tuning::open_files_limit(&unlimited), Some(None));
        assert_eq!(
            tuning::open_files_limit("Max processes 5 5 processes"),
            None
        );
        assert_eq!(tuning::open_files_limit("Max open files x y files"), None);
        // Whatever this process's limit is, the cap stays within what was asked.
        // (Not under Miri: its isolation allows no file system.)
        #[cfg(not(miri))]
        assert!(tuning::open_file_cap(128) <= 128);
        // The arithmetic at the limits a test cannot set for the whole process (the
        // command's test runs at 40, where the cap is 4): `ulimit -n 64` leaves 16,
        // 32 or below none, and a high or no limit what was asked.
        let cap = tuning::open_file_cap_under;
        assert_eq!(cap(Some(64), 128), 16);
        assert_eq!(cap(Some(65), 128), 16);
        assert_eq!(cap(Some(66), 128), 17);
        assert_eq!(cap(Some(40), 128), 4);
        assert_eq!(cap(Some(33), 128), 0);
        assert_eq!(cap(Some(32), 128), 0);
        assert_eq!(cap(Some(0), 128), 0);
        assert_eq!(cap(Some(1024), 128), 128);
        assert_eq!(cap(Some(288), 128), 128);
        assert_eq!(cap(Some(287), 128), 127);
        assert_eq!(cap(Some(u64::MAX), 128), 128);
        assert_eq!(cap(None, 128), 128);
        assert_eq!(cap(None, 7), 7);
    }

    /// `par_hash_many`'s shares: whole lane sets, two at least, no more than eight a
    /// thread (or one a lane set), and none under `PAR_TASK_BYTES` of work; jobs too
    /// small for two stay on the calling thread, without the total asked where the
    /// count alone decides.
    #[cfg(feature = "rayon")]
    #[test]
    fn par_shares_are_whole_lane_sets_of_enough_work() {
        use tuning::par_chunk as chunk;
        let t = tuning::PAR_TASK_BYTES;
        // One thread, or one lane set at most: the total is not needed.
        assert_eq!(chunk(1000, 24, 1, || panic!("total asked")), None);
        assert_eq!(chunk(24, 24, 4, || panic!("total asked")), None);
        assert_eq!(chunk(0, 0, 4, || panic!("total asked")), None);
        // The work at the bound: the bytes plus a weight a message.
        let per = tuning::PAR_MESSAGE_BYTES;
        assert_eq!(chunk(48, 24, 2, || 2 * t - 48 * per - 1), None);
        assert_eq!(chunk(48, 24, 2, || 2 * t - 48 * per), Some(24));
        // Many 64-byte messages: the shares follow the work, not the count.
        assert_eq!(chunk(4096, 24, 2, || 4096 * 64), Some(504));
        // Plenty of work: eight shares a thread, whole lane sets.
        assert_eq!(chunk(4800, 24, 2, || u64::MAX), Some(288));
        assert_eq!(chunk(48, 24, 2, || u64::MAX), Some(24));
        let mut next = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
        for round in 0..if cfg!(miri) { 50 } else { 5000 } {
            let n = (next() % 3000) as usize;
            let lanes = [1, 4, 8, 16, 24, 32, 48][round % 7];
            let threads = 1 + (next() % 16) as usize;
            let total = (next() % (64 << 20)) >> (next() % 24);
            let sets = n.div_ceil(lanes);
            let work = total + n as u64 * per;
            let alone = threads < 2 || sets < 2 || work < 2 * t;
            match chunk(n, lanes, threads, || total) {
                None => assert!(
                    alone,
                    "round {round}: {n} messages, {lanes} lanes, {threads} threads, {total} bytes"
                ),
                Some(c) => {
                    assert!(!alone, "round {round}: shared, {n} messages, {total} bytes");
                    let shares = n.div_ceil(c);
                    assert!(c % lanes == 0 && shares >= 2, "round {round}");
                    // No more shares than lane sets, nor (give or take the rounding
                    // to whole sets) than eight a thread or the work allows.
                    let target = (threads * 8).min((work / t) as usize);
                    assert!(shares <= sets && shares < 2 * target, "round {round}");
                }
            }
        }
    }

    /// Batches: a worker's share of the bytes, never more than `cap` inputs, and never
    /// past a worker's share by more than one input.
    #[test]
    fn batches_share_the_bytes_out() {
        const MIB: u64 = 1 << 20;
        let cut = |sizes: &[u64], workers| {
            tuning::batch_ends(sizes.len(), workers, 48, || sizes.to_vec())
        };
        // Large files alike: one batch for each worker.
        assert_eq!(cut(&[20 * MIB; 40], 2), [20, 40]);
        assert_eq!(cut(&[20 * MIB; 40], 4), [10, 20, 30, 40]);
        // The same with small files after them, or before them.
        let mut sizes = vec![20 * MIB; 40];
        sizes.extend([1000; 200]);
        let ends = cut(&sizes, 2);
        assert!(ends[0] == 20 && ends[1] >= 40, "{ends:?}");
        sizes.rotate_left(40);
        let ends = cut(&sizes, 2);
        assert_eq!(&ends[ends.len() - 2..], [220, 240]);
        // Two huge files and many small ones: a huge file alone in the first batch.
        let mut sizes = vec![1 << 30, 1 << 30];
        sizes.extend([MIB; 100]);
        assert_eq!(cut(&sizes, 2)[0], 1);
        // Enough inputs for 8 lane sets a worker: batches of a lane set, sizes unasked.
        let ends = tuning::batch_ends(2 * 8 * 48 + 5, 2, 48, || panic!("sizes asked"));
        assert_eq!(
            (ends.len(), ends[0], ends[15], ends[16]),
            (17, 48, 768, 773)
        );
        // Exactly 8 lane sets a worker is enough.
        let ends = tuning::batch_ends(2 * 8 * 48, 2, 48, || panic!("sizes asked"));
        assert_eq!((ends.len(), ends[0], ends[15]), (16, 48, 768));
        // Sizes that overflow a sum (sparse files): no panic, one batch each.
        assert_eq!(cut(&[u64::MAX / 2; 3], 2), [1, 2, 3]);
        // No bytes at all (empty files, errors): batches of `cap`.
        assert_eq!(cut(&[0; 100], 2), [48, 96, 100]);
        assert_eq!(cut(&[], 2), Vec::<usize>::new());
        // Random sizes: the ends rise to the last input, batches are 1 to `cap`
        // inputs, and only a batch of one input goes past a worker's share.
        let mut next = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        for round in 0..if cfg!(miri) { 20 } else { 500 } {
            let n = round % 200;
            let workers = 1 + round % 5;
            let sizes: Vec<u64> = (0..n)
                .map(|_| {
                    let x = next();
                    (x % 4096) << (x % 20)
                })
                .collect();
            let target = sizes.iter().sum::<u64>().div_ceil(workers as u64).max(1);
            let ends = cut(&sizes, workers);
            let mut a = 0;
            for &b in &ends {
                assert!(a < b && b - a <= 48, "round {round}: batch {a}..{b}");
                let bytes: u64 = sizes[a..b].iter().sum();
                assert!(
                    b - a == 1 || bytes <= target,
                    "round {round}: batch {a}..{b}"
                );
                a = b;
            }
            assert_eq!(a, n, "round {round}");
        }
    }

    #[test]
    fn shape_for_weighs_idle_lanes_against_group_speed() {
        assert!(shape_for(Backend::Portable, 100).is_none());
        if !Backend::Avx2.is_supported() {
            std::eprintln!("AVX2 not available: shape_for(avx2) not tested");
            return;
        }
        // (messages, lanes, lanes per vector): up to 2 run in the two-message scalar
        // kernel (SSE2's one group where the CPU lacks BMI1), up to 4 in SSE2's.
        let pair = pair_kernel().is_some();
        if !pair {
            std::eprintln!("no BMI1: shape_for's two-message kernel not tested");
        }
        for (n, lanes, width) in [
            (0, 2, 2),
            (1, 2, 2),
            (2, 2, 2),
            (3, 4, 4),
            (4, 4, 4),
            (5, 8, 8),
            (8, 8, 8),
            (9, 16, 8),
            (16, 16, 8),
            (17, 24, 8),
            (24, 24, 8),
            (25, 16, 8),
            (32, 16, 8),
            (33, 24, 8),
            (48, 24, 8),
            (1000, 24, 8),
        ] {
            let (lanes, width) = match (pair, lanes) {
                (false, 2) => (4, 4),
                _ => (lanes, width),
            };
            let k = shape_for(Backend::Avx2, n).unwrap();
            assert_eq!((k.lanes, k.width), (lanes, width), "{n} messages");
        }
        // SSE2 too takes the two-message kernel for 2, its own group for 3.
        let lanes = |n| shape_for(Backend::Sse2, n).map(|k| k.lanes);
        assert_eq!(lanes(2), Some(if pair { 2 } else { 4 }));
        assert_eq!(lanes(3), Some(4));
    }

    /// `best_groups` picks the least `slots / speed`, ties to fewer groups, for every
    /// group width, against the estimate worked out in floating point (exact here:
    /// the numbers are far below 2^26).
    #[test]
    fn best_groups_least_estimate_ties_to_fewer() {
        let mut next = crate::test_rng::xorshift(0x5eed_0bad_cafe_f00d);
        let known = [[50, 100, 128], [75, 100, 102], [74, 100, 93], [86, 100, 96]];
        for round in 0..if cfg!(miri) { 300 } else { 20_000 } {
            let width = [4, 8, 16][round % 3];
            let speed = match round % 4 {
                0 => known[(round / 4) % known.len()],
                // Small speeds tie often; 0 counts as 1.
                1 => core::array::from_fn(|_| (next() % 4) as u32),
                _ => core::array::from_fn(|_| (next() % 200) as u32),
            };
            let n = match round % 5 {
                0 => (next() % 1_000_000) as usize,
                _ => (next() % 200) as usize,
            };
            let (estimate, g) = best_groups(width, speed, n);
            let slots = |g: usize| (n.div_ceil(width * g).max(1) * width * g) as f64;
            let time = |g: usize| slots(g) / f64::from(speed[g - 1].max(1));
            let want = (1..=3)
                .reduce(|b, g| if time(g) < time(b) { g } else { b })
                .unwrap();
            let case = format!("width {width}, speed {speed:?}, {n} messages");
            assert_eq!(g, want, "{case}");
            let fast = u64::from(speed[g - 1].max(1));
            assert_eq!(estimate, slots(g) as u64 * 1000 / fast, "{case}");
        }
        // The shapes the docs of `shape_for` give for AVX2.
        let avx2 = |n| best_groups(8, [50, 100, 128], n).1;
        for (n, g) in [
            (1, 1),
            (8, 1),
            (9, 2),
            (16, 2),
            (17, 3),
            (24, 3),
            (25, 2),
            (32, 2),
        ] {
            assert_eq!(avx2(n), g, "{n} messages");
        }
        assert_eq!(avx2(33), 3);
    }

    /// `total_len_until` is the exact sum, or stops at some sum from `stop` up.
    #[test]
    fn total_len_sums_and_stops() {
        let mut next = crate::test_rng::xorshift(0x70_7a1);
        let data = [0u8; 5000];
        for round in 0..if cfg!(miri) { 20 } else { 300 } {
            let n = (next() % 700) as usize;
            let m: Vec<&[u8]> = (0..n).map(|_| &data[..(next() % 5001) as usize]).collect();
            let sum: u64 = m.iter().map(|x| x.len() as u64).sum();
            assert_eq!(total_len_until(&m, u64::MAX), sum, "round {round}");
            let stop = next() % (sum + 2);
            let got = total_len_until(&m, stop);
            match sum < stop {
                true => assert_eq!(got, sum, "round {round}"),
                false => assert!(stop <= got && got <= sum, "round {round}"),
            }
        }
    }

    /// With Zen 3's speeds for short messages, 2 groups where 3 fill no better; and
    /// `hash_many` takes them for 48 messages of 64 bytes on Zen 3 only, 3 groups
    /// for 48 of 1 KiB everywhere.
    #[test]
    fn short_messages_take_two_groups_on_zen3() {
        if !Backend::Avx2.is_supported() {
            std::eprintln!("AVX2 not available: shape_for_lengths(avx2) not tested");
            return;
        }
        let short = crate::kernels::avx2::SPEED_SHORT_ZEN3;
        for (n, lanes) in [(8, 8), (16, 16), (24, 24), (32, 16), (48, 16), (1000, 16)] {
            let (_, k) = best_shape(Backend::Avx2, short, n).unwrap();
            assert_eq!(k.lanes, lanes, "{n} messages");
        }
        let zen3 = crate::kernels::avx2::speed_for_mean(|_| 64) == short;
        let small = [[0u8; 64]; 48];
        let large = std::vec![[0u8; 1024]; 48];
        let lanes = |k: Option<LaneKernel>| k.unwrap().lanes;
        assert_eq!(
            lanes(shape_for_lengths(Backend::Avx2, &small)),
            if zen3 { 16 } else { 24 }
        );
        assert_eq!(lanes(shape_for_lengths(Backend::Avx2, &large)), 24);
        assert_eq!(lanes(shape_for_lengths(Backend::Avx2, &small[..4])), 4);
        std::eprintln!("short messages take Zen 3's group speeds here: {zen3}");
    }

    /// On AVX-512, two to four messages take the 4-lane kernel with AVX-512VL's steps
    /// where the CPU is Intel's; where it is Zen 4, three or four take it and five to
    /// eight its two groups (`xmm_lanes`); else two take the two-message kernel and
    /// the rest a 16-lane group.
    #[test]
    fn shape_for_avx512_few_messages() {
        if !Backend::Avx512.is_supported() {
            std::eprintln!("AVX-512 not available: shape_for(avx512) not tested");
            return;
        }
        let intel = crate::kernels::cpu::intel();
        #[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
        let zen4 = crate::kernels::cpu::amd_family(25);
        #[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64", not(miri))))]
        let zen4 = false;
        let pair = pair_kernel().is_some();
        std::eprintln!("shape_for(avx512): Intel {intel}, Zen 4 {zen4}, two-message kernel {pair}");
        for n in 2..=10 {
            let k = shape_for(Backend::Avx512, n).unwrap();
            let want = match n {
                2..=4 if intel => (4, 4),
                3..=4 if zen4 => (4, 4),
                5..=8 if zen4 => (8, 4),
                2 if pair => (2, 2),
                _ => (16, 16),
            };
            assert_eq!((k.lanes, k.width), want, "{n} messages");
        }
    }

    /// Intel's AVX-512 speeds (86 : 100 : 96): 2 groups wherever they waste no more
    /// lanes than 3, 3 groups only where 2 would leave a whole group idle.
    #[test]
    fn shape_for_intel_avx512_prefers_two_groups() {
        if !Backend::Avx512.is_supported() {
            std::eprintln!("AVX-512 not available: best_shape(avx512) not tested");
            return;
        }
        let speed = crate::kernels::avx512::SPEED_TWO_PORTS;
        for (n, lanes) in [
            (1, 16),
            (16, 16),
            (17, 32),
            (32, 32),
            (33, 48),
            (48, 48),
            (49, 32),
            (64, 32),
            (96, 32),
            (1000, 32),
        ] {
            let (_, k) = best_shape(Backend::Avx512, speed, n).unwrap();
            assert_eq!(k.lanes, lanes, "{n} messages");
        }
    }

    #[test]
    fn order_runs_every_message_once_longest_first_per_window() {
        let lens: Vec<usize> = (0..2 * ORDER_WINDOW + 300)
            .map(|i| match i {
                // The second window: lengths within one block of each other.
                _ if (ORDER_WINDOW..2 * ORDER_WINDOW).contains(&i) => 64 + i % 64,
                _ => (i * 7919) % 3000,
            })
            .collect();
        // (Order reads only lengths: slices of one buffer, cheap under Miri too.)
        let buf = alloc::vec![0u8; 3000];
        let m: Vec<&[u8]> = lens.iter().map(|&n| &buf[..n]).collect();
        let mut order = Order::new();
        let seq: Vec<usize> = (0..m.len()).map(|p| order.get(p, &m)).collect();
        let mut seen = seq.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..m.len()).collect::<Vec<_>>(), "not a permutation");
        for (w, win) in seq.chunks(ORDER_WINDOW).enumerate() {
            // Every window holds its own messages.
            let start = w * ORDER_WINDOW;
            assert!(win.iter().all(|&j| (start..start + win.len()).contains(&j)));
            let blocks: Vec<usize> = win.iter().map(|&j| lens[j] / 64).collect();
            if w == 1 {
                assert!(win.iter().enumerate().all(|(p, &j)| j == start + p));
            } else {
                assert!(blocks.windows(2).all(|b| b[0] >= b[1]), "window {w}");
            }
        }
    }

    /// The look-ahead's `peek` gives what `get` will, inside the window only, and
    /// moves nothing; `long` says whether the window has a message past `SHORT`.
    #[test]
    fn order_peek_matches_get_within_the_window() {
        let lens: Vec<usize> = (0..3 * ORDER_WINDOW + 5)
            .map(|i| match i / ORDER_WINDOW {
                // Window 1: short messages only (lengths 0..=SHORT, unsorted).
                1 => i % (SHORT + 1),
                _ => (i * 7919) % 3000,
            })
            .collect();
        let buf = alloc::vec![0u8; 3000];
        let m: Vec<&[u8]> = lens.iter().map(|&n| &buf[..n]).collect();
        let mut order = Order::new();
        assert_eq!(order.peek(0), None, "no window yet");
        let mut p = 0;
        while p < m.len() {
            let first = order.get(p, &m);
            let (start, len) = (order.start, order.len);
            assert_eq!(start, p);
            assert_eq!(order.long, p / ORDER_WINDOW != 1, "window at {p}");
            // The window and a few positions either side (Miri runs this test too).
            let around = start.saturating_sub(3)..(start + len + 3).min(m.len());
            let peeked: Vec<(usize, Option<usize>)> = around.map(|q| (q, order.peek(q))).collect();
            assert_eq!(
                (order.start, order.len),
                (start, len),
                "peek moved the window"
            );
            for &(q, got) in &peeked {
                if !(start..start + len).contains(&q) {
                    assert_eq!(got, None, "position {q}, window at {start}");
                } else if q == p {
                    assert_eq!(got, Some(first));
                } else {
                    assert_eq!(got, Some(order.get(q, &m)), "position {q}");
                }
            }
            p = start + len;
        }
    }

    fn msgs(lens: &[usize]) -> Vec<Vec<u8>> {
        lens.iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (j * 31 + i * 7 + n) as u8).collect())
            .collect()
    }

    fn check(k: &LaneKernel, lens: &[usize]) {
        let m = msgs(lens);
        let mut out = alloc::vec![Digest::new([0; 16]); m.len()];
        schedule(k, Backend::Portable, None, &m, &mut out);
        for (i, d) in out.iter().enumerate() {
            assert_eq!(
                *d,
                md5_with(Backend::Portable, &m[i]),
                "message {i} of {} ({} bytes), {} lanes",
                m.len(),
                m[i].len(),
                k.lanes
            );
        }
    }

    /// `update_many` in rounds of uneven chunks (empty ones, partial blocks, several
    /// blocks) against one `md5` each; small enough for Miri.
    #[test]
    fn update_many_rounds_match_md5() {
        let m = msgs(&[0, 1, 63, 64, 65, 130, 200, 257]);
        let mut hashers = alloc::vec![crate::Md5::with_backend(Backend::Portable); m.len()];
        let mut pos = alloc::vec![0; m.len()];
        for (round, step) in [3, 64, 0, 61, 129, 1000].into_iter().enumerate() {
            let chunks: Vec<&[u8]> = m
                .iter()
                .zip(&mut pos)
                .enumerate()
                .map(|(i, (msg, p))| {
                    let n = (step + i * round).min(msg.len() - *p);
                    *p += n;
                    &msg[*p - n..*p]
                })
                .collect();
            update_many(&mut hashers, &chunks);
        }
        for (h, msg) in hashers.iter().zip(&m) {
            assert_eq!(h.len(), msg.len() as u64);
            assert_eq!(h.finalize(), md5_with(Backend::Portable, msg));
        }
    }

    #[test]
    fn pad_into_matches_rfc_layout() {
        let mut buf = [0xffu8; 128];
        assert_eq!(pad_into(&mut buf, b"abc", 3), 1);
        assert_eq!(&buf[..4], b"abc\x80");
        assert!(buf[4..56].iter().all(|&b| b == 0));
        assert_eq!(buf[56], 24);
        assert_eq!(pad_into(&mut buf, &[1; 56], 56), 2);
        assert_eq!(pad_into(&mut buf, &[1; 64], 64), 2);
        assert_eq!(pad_into(&mut buf, &[1; 119], 119), 2);
    }

    #[test]
    fn portable_lanes_uneven_lengths() {
        let k4 = portable_kernel::<4, 1>(2);
        let k8 = portable_kernel::<8, 2>(1);
        let k16 = portable_kernel::<16, 1>(3);
        let lens: &[usize] = if cfg!(miri) {
            &[0, 55, 56, 64, 119, 120, 200, 3, 64, 130]
        } else {
            &[
                0, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 3, 4096, 777, 64, 1, 300,
                2000, 0, 5, 190, 191, 192, 193,
            ]
        };
        for k in [&k4, &k8, &k16] {
            for count in [0, 1, 2, 3, 4, 5, 8, 9, 16, 17, lens.len()] {
                check(k, &lens[..count.min(lens.len())]);
            }
        }
    }
}
