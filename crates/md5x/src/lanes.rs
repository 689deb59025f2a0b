//! [`Lanes`]: many inputs hashed side by side in the vector lanes while their bytes
//! arrive in chunks (files read piece by piece, network streams).

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::hasher::{state_to_digest, INIT};
use crate::kernels::lanes::LaneKernel;
use crate::many::{lane_room, shape_for, FEW_LANES, MAX_LANES, SMALL_LANES};
use crate::{Backend, Digest};

/// Incremental multi-lane MD5: open a [`Slot`] per input with your own token, feed it
/// bytes as they arrive, close it, and collect `(token, digest)` completions.
///
/// Bytes fed to a slot are buffered (at most [`Lanes::SLOT_BUFFER`] bytes, plus up to
/// 63 of a partial block) until enough slots have blocks waiting; then all waiting
/// blocks are hashed together, one slot per vector lane. A closed slot completes the
/// next time the lanes run: during a later `feed` or `close`, or at the latest at
/// [`flush`](Lanes::flush), which hashes everything pending. Completions are never
/// delivered implicitly: read them with [`completions`](Lanes::completions).
///
/// Misuse is ruled out by ownership: a [`Slot`] is not `Clone`, [`close`](Lanes::close)
/// consumes it (nothing can be fed after closing), and a slot that is dropped without
/// being closed is abandoned: its buffer is reclaimed and it never completes. There is no
/// global state; dropping the `Lanes` drops everything pending.
///
/// For the best speed, feed each slot chunks of at most `SLOT_BUFFER` bytes in turn
/// (like reading many files round-robin): a slot whose buffer is full while no other
/// slot has blocks waiting is hashed alone on the single-stream kernel. Every byte fed
/// is copied into its slot: when a chunk of every input is at hand at once and the
/// chunks are 1.5 KiB or more, [`update_many`](crate::update_many) hashes them where
/// they lie, and [`update_many_from`](crate::update_many_from) reads many files that
/// way (1.35-2.2x `Lanes` on Zen 4, `examples/chunked_many.rs`). On smaller chunks
/// `Lanes` is the faster: it waits until the lanes have blocks to share.
///
/// ```
/// use md5x::Lanes;
///
/// let files: [(&str, &[u8]); 3] = [("a", b"hello"), ("b", &[7; 20_000]), ("c", b"")];
/// let mut lanes = Lanes::new();
/// let mut open: Vec<_> = files.iter().map(|(name, _)| lanes.open(*name)).collect();
/// // Feed every input in chunks of 4 KiB, round-robin.
/// for start in (0..20_000).step_by(4096) {
///     for (slot, (_, data)) in open.iter_mut().zip(&files) {
///         let chunk = data.get(start..).unwrap_or(&[]);
///         lanes.feed(slot, &chunk[..chunk.len().min(4096)]);
///     }
/// }
/// for slot in open {
///     lanes.close(slot);
/// }
/// lanes.flush();
/// let mut done: Vec<(&str, md5x::Digest)> = lanes.completions().collect();
/// done.sort_by_key(|d| d.0);
/// assert_eq!(done[0], ("a", md5x::md5(b"hello")));
/// assert_eq!(done[1], ("b", md5x::md5(&[7u8; 20_000][..])));
/// assert_eq!(done[2], ("c", md5x::md5(b"")));
/// ```
pub struct Lanes<T> {
    backend: Backend,
    kernel: Option<LaneKernel>,
    id: usize,
    entries: Vec<Entry<T>>,
    free: Vec<usize>,
    done: VecDeque<(T, Digest)>,
    closed: usize,
}

/// One input in a [`Lanes`]: the handle its caller feeds and closes.
///
/// Not `Clone`: there is exactly one handle per input. Dropping it without
/// [`Lanes::close`] abandons the input (no digest; its buffer is reused).
#[must_use = "a Slot dropped without Lanes::close never completes"]
#[derive(Debug)]
pub struct Slot {
    owner: usize,
    idx: usize,
    alive: Arc<()>,
}

struct Entry<T> {
    /// `None`: free.
    token: Option<T>,
    state: [u32; 4],
    /// Bytes fed so far (mod 2^64).
    len: u64,
    /// Bytes not hashed yet; once closed, whole padded blocks.
    buf: Vec<u8>,
    closed: bool,
    /// Shared with the entry's live [`Slot`]: a count of 1 means no slot holds it.
    alive: Arc<()>,
}

impl<T> Lanes<T> {
    /// Bytes a slot buffers before its blocks must be hashed.
    pub const SLOT_BUFFER: usize = 8192;

    /// Lanes on the process's [`Backend::active`] backend.
    pub fn new() -> Self {
        Self::with_backend(Backend::active())
    }

    /// Lanes on a chosen backend (single-stream backends work too, one input at a time).
    ///
    /// # Panics
    ///
    /// If this CPU cannot run `backend`.
    pub fn with_backend(backend: Backend) -> Self {
        backend.assert_supported();
        static NEXT_ID: AtomicUsize = AtomicUsize::new(0);
        Lanes {
            backend,
            kernel: backend.lane_kernel(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            entries: Vec::new(),
            free: Vec::new(),
            done: VecDeque::new(),
            closed: 0,
        }
    }

    /// The backend hashing the inputs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Inputs hashed side by side (1 for single-stream backends): keep at least this
    /// many slots open for full speed.
    pub fn lanes(&self) -> usize {
        self.kernel.map_or(1, |k| k.lanes)
    }

    /// Slots opened and not yet completed (closed ones waiting for the lanes included).
    pub fn pending(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// Start an input; `token` comes back with its digest.
    pub fn open(&mut self, token: T) -> Slot {
        if self.free.is_empty() {
            self.reclaim();
        }
        let idx = match self.free.pop() {
            Some(i) => i,
            None => {
                self.entries.push(Entry {
                    token: None,
                    state: INIT,
                    len: 0,
                    buf: Vec::new(),
                    closed: false,
                    alive: Arc::new(()),
                });
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[idx];
        e.token = Some(token);
        e.state = INIT;
        e.len = 0;
        e.buf.clear();
        e.closed = false;
        Slot {
            owner: self.id,
            idx,
            alive: Arc::clone(&e.alive),
        }
    }

    /// Feed the next bytes of `slot`'s input.
    ///
    /// # Panics
    ///
    /// If `slot` was opened by another `Lanes`.
    #[inline]
    pub fn feed(&mut self, slot: &mut Slot, data: &[u8]) {
        let i = self.check(slot);
        let cap = self.cap();
        let e = &mut self.entries[i];
        e.len = e.len.wrapping_add(data.len() as u64);
        // Most small pieces only join the slot's buffer: copy them here, inline, and
        // leave the buffer's first reservation and the hashing to `feed_more`.
        if data.len() <= cap - e.buf.len() && e.buf.capacity() != 0 {
            e.buf.extend_from_slice(data);
        } else {
            self.feed_more(i, cap, data);
        }
    }

    /// The rest of [`feed`](Lanes::feed) for entry `i` (`data` already counted in its
    /// length), where the piece does not simply fit the buffer of `cap` bytes or the
    /// buffer is not reserved yet: fill, hash, and fill again.
    #[inline(never)]
    fn feed_more(&mut self, i: usize, cap: usize, mut data: &[u8]) {
        let e = &mut self.entries[i];
        if e.buf.capacity() == 0 {
            e.buf.reserve_exact(cap + 128);
        }
        loop {
            let e = &mut self.entries[i];
            let take = (cap - e.buf.len()).min(data.len());
            e.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if data.is_empty() {
                return;
            }
            // The buffer is full and more is coming: hash what every slot has waiting.
            if !self.pump() {
                // No other slot had blocks waiting: hash this input alone, in place.
                let e = &mut self.entries[i];
                let need = 64 - e.buf.len();
                if data.len() >= need {
                    e.buf.extend_from_slice(&data[..need]);
                    data = &data[need..];
                    self.backend
                        .compress(&mut e.state, e.buf.as_chunks::<64>().0);
                    e.buf.clear();
                    let (blocks, rest) = data.as_chunks::<64>();
                    self.backend.compress(&mut e.state, blocks);
                    data = rest;
                }
            }
        }
    }

    /// End `slot`'s input. Its `(token, digest)` arrives in
    /// [`completions`](Lanes::completions) once the lanes have hashed its last blocks
    /// (at the latest after [`flush`](Lanes::flush)).
    ///
    /// # Panics
    ///
    /// If `slot` was opened by another `Lanes`.
    pub fn close(&mut self, slot: Slot) {
        let i = self.check(&slot);
        drop(slot);
        let e = &mut self.entries[i];
        let used = e.buf.len();
        let t = used % 64;
        let end = used - t + if t < 56 { 64 } else { 128 };
        e.buf.push(0x80);
        e.buf.resize(end - 8, 0);
        e.buf
            .extend_from_slice(&e.len.wrapping_mul(8).to_le_bytes());
        e.closed = true;
        self.closed += 1;
        if self.closed >= self.lanes() {
            self.pump();
        }
    }

    /// Hash everything pending: every closed slot completes; open slots keep only a
    /// partial block buffered.
    pub fn flush(&mut self) {
        self.pump();
    }

    /// Take the completions so far, in the order they completed. Each is removed as
    /// the iterator yields it: what is not read (`.next()` once, `.take(n)`, a loop
    /// that breaks early) stays for the next call.
    ///
    /// ```
    /// let mut lanes = md5x::Lanes::new();
    /// for token in 0..3 {
    ///     let slot = lanes.open(token);
    ///     lanes.close(slot);
    /// }
    /// lanes.flush();
    /// assert_eq!(lanes.completions().next().map(|c| c.0), Some(0));
    /// let rest: Vec<u32> = lanes.completions().map(|c| c.0).collect();
    /// assert_eq!(rest, [1, 2]);
    /// ```
    pub fn completions(&mut self) -> impl Iterator<Item = (T, Digest)> + '_ {
        core::iter::from_fn(move || self.done.pop_front())
    }

    fn cap(&self) -> usize {
        if self.kernel.is_some() {
            Self::SLOT_BUFFER
        } else {
            64
        }
    }

    fn check(&self, slot: &Slot) -> usize {
        assert_eq!(
            slot.owner, self.id,
            "md5x::Lanes: slot opened by another Lanes"
        );
        debug_assert!(Arc::ptr_eq(&slot.alive, &self.entries[slot.idx].alive));
        slot.idx
    }

    /// Free the entries whose slot was dropped without being closed.
    fn reclaim(&mut self) {
        for (i, e) in self.entries.iter_mut().enumerate() {
            if e.token.is_some() && !e.closed && Arc::strong_count(&e.alive) == 1 {
                e.token = None;
                e.buf.clear();
                self.free.push(i);
            }
        }
    }

    /// Hash every whole block waiting in any slot; complete the closed slots. Returns
    /// whether the lane kernel ran (else the single-stream kernel did, or nothing).
    fn pump(&mut self) -> bool {
        self.reclaim();
        let ready = |e: &Entry<T>| e.token.is_some() && e.buf.len() >= 64;
        let mut jobs: Vec<(&[u8], &mut [u32; 4])> = self
            .entries
            .iter_mut()
            .filter(|e| ready(e))
            .map(|e| {
                let whole = e.buf.len() / 64 * 64;
                (&e.buf[..whole], &mut e.state)
            })
            .collect();
        // The group count for this many jobs, as hash_many and the Server choose it
        // (16 slots on AVX-512's 48 lanes run on one group, not a third of three).
        // (A kernel for a backend without group counts to choose from, as the unit
        // tests give portable lanes, runs as given.)
        let kernel = self
            .kernel
            .map(|k| shape_for(self.backend, jobs.len()).unwrap_or(k));
        let used_lanes = hash_jobs(kernel.as_ref(), self.backend, &mut jobs);
        drop(jobs);
        for (i, e) in self.entries.iter_mut().enumerate() {
            if !ready(e) {
                continue;
            }
            if e.closed {
                let token = e.token.take().expect("ready entries have tokens");
                self.done.push_back((token, state_to_digest(&e.state)));
                e.buf.clear();
                e.closed = false;
                self.closed -= 1;
                self.free.push(i);
            } else {
                let whole = e.buf.len() / 64 * 64;
                e.buf.drain(..whole);
            }
        }
        used_lanes
    }
}

impl<T> Default for Lanes<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for Lanes<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lanes")
            .field("backend", &self.backend)
            .field("lanes", &self.lanes())
            .field("pending", &self.pending())
            .field("completions", &self.done.len())
            .finish_non_exhaustive()
    }
}

/// Hash every job's whole blocks (`data.len()` a multiple of 64) into its state: side
/// by side in `kernel`'s lanes when there are jobs enough for the lanes to pay (the
/// kernel's `min_live`, and at least two), else one by one on `scalar`'s kernel.
/// Returns whether the lanes ran.
pub(crate) fn hash_jobs(
    kernel: Option<&LaneKernel>,
    scalar: Backend,
    jobs: &mut [(&[u8], &mut [u32; 4])],
) -> bool {
    match kernel {
        Some(k) if jobs.len() >= k.min_live.max(2) => {
            compress_jobs(k, scalar, jobs);
            true
        }
        _ => {
            for (data, state) in jobs.iter_mut() {
                scalar.compress(state, data.as_chunks::<64>().0);
            }
            false
        }
    }
}

/// Compress every job's whole blocks (`data.len()` a multiple of 64) into its state,
/// side by side in the lanes, refilling lanes as jobs end (the job manager of
/// `many.rs`, without tails). Its lane arrays are sized as the job manager's are
/// ([`lane_room`]): a call with few blocks pays for initializing them.
pub(crate) fn compress_jobs(k: &LaneKernel, scalar: Backend, jobs: &mut [(&[u8], &mut [u32; 4])]) {
    match lane_room(k.lanes) {
        FEW_LANES => compress_jobs_in::<FEW_LANES>(k, scalar, jobs),
        SMALL_LANES => compress_jobs_in::<SMALL_LANES>(k, scalar, jobs),
        _ => compress_jobs_in::<MAX_LANES>(k, scalar, jobs),
    }
}

/// [`compress_jobs`] with room for `N` lanes.
fn compress_jobs_in<const N: usize>(
    k: &LaneKernel,
    scalar: Backend,
    jobs: &mut [(&[u8], &mut [u32; 4])],
) {
    const IDLE: usize = usize::MAX;
    let lanes = k.lanes;
    assert!(lanes <= N);
    let n = jobs.len();
    let mut state = [[0u32; 4]; N];
    let state = &mut state.as_flattened_mut()[..4 * lanes];
    let mut job = [IDLE; N];
    let mut pos = [0usize; N];
    let mut next = 0;
    loop {
        let mut live = 0;
        let mut first_live = 0;
        let mut nblocks = usize::MAX;
        for l in 0..lanes {
            if job[l] == IDLE && next < n {
                job[l] = next;
                pos[l] = 0;
                k.set_lane(state, l, jobs[next].1);
                next += 1;
            }
            if job[l] != IDLE {
                if live == 0 {
                    first_live = l;
                }
                live += 1;
                nblocks = nblocks.min(jobs[job[l]].0.len() / 64 - pos[l]);
            }
        }
        if live == 0 {
            return;
        }
        if live < k.min_live && next == n {
            for l in 0..lanes {
                if job[l] != IDLE {
                    let (data, st) = &mut jobs[job[l]];
                    let mut s = k.get_lane(state, l);
                    scalar.compress(&mut s, data[pos[l] * 64..].as_chunks::<64>().0);
                    **st = s;
                }
            }
            return;
        }
        let src = |l: usize| &jobs[job[l]].0[pos[l] * 64..];
        let ptrs: [&[u8]; N] = core::array::from_fn(|l| {
            if l < lanes && job[l] != IDLE {
                src(l)
            } else {
                src(first_live)
            }
        });
        k.compress(state, &ptrs[..lanes], nblocks);
        for l in 0..lanes {
            if job[l] == IDLE {
                continue;
            }
            pos[l] += nblocks;
            if pos[l] * 64 == jobs[job[l]].0.len() {
                *jobs[job[l]].1 = k.get_lane(state, l);
                job[l] = IDLE;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hasher::md5_with;
    use crate::kernels::lanes::portable_kernel;

    fn lanes_with(kernel: LaneKernel) -> Lanes<usize> {
        let mut l = Lanes::with_backend(Backend::Portable);
        l.kernel = Some(kernel);
        l
    }

    #[test]
    fn interleaved_chunks_portable_lanes() {
        let inputs: Vec<Vec<u8>> = [0usize, 1, 63, 64, 65, 200, 9000, 20_000, 119, 56]
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (j * 13 + i) as u8).collect())
            .collect();
        let inputs = if cfg!(miri) {
            &inputs[..6]
        } else {
            &inputs[..]
        };
        // Kernels for each of `compress_jobs`' three sizes (4, 16 and 48 lanes); the
        // widest costs Miri too much.
        let mut kernels = vec![portable_kernel::<4, 1>(2), portable_kernel::<8, 1>(1)];
        if !cfg!(miri) {
            kernels.push(portable_kernel::<16, 3>(2));
        }
        for k in kernels {
            let mut lanes = lanes_with(k);
            let mut slots: Vec<Option<Slot>> =
                (0..inputs.len()).map(|i| Some(lanes.open(i))).collect();
            let mut pos = vec![0usize; inputs.len()];
            let mut step = 1usize;
            while slots.iter().any(|s| s.is_some()) {
                for i in 0..inputs.len() {
                    let Some(slot) = slots[i].as_mut() else {
                        continue;
                    };
                    step = (step * 7 + 3) % 5000;
                    let end = (pos[i] + step).min(inputs[i].len());
                    lanes.feed(slot, &inputs[i][pos[i]..end]);
                    pos[i] = end;
                    if end == inputs[i].len() {
                        lanes.close(slots[i].take().unwrap());
                    }
                }
            }
            lanes.flush();
            let mut done: Vec<(usize, Digest)> = lanes.completions().collect();
            done.sort_by_key(|d| d.0);
            assert_eq!(done.len(), inputs.len());
            for (i, d) in done {
                assert_eq!(d, md5_with(Backend::Portable, &inputs[i]), "input {i}");
            }
            assert_eq!(lanes.pending(), 0);
        }
    }

    /// `compress_jobs` in each of its three sizes against the scalar kernel: jobs of
    /// uneven block counts (none among them), more jobs than lanes, refills.
    #[test]
    fn compress_jobs_portable_lanes() {
        let data: Vec<u8> = (0..64 * 40).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut kernels = vec![portable_kernel::<4, 1>(2), portable_kernel::<8, 2>(1)];
        if !cfg!(miri) {
            kernels.push(portable_kernel::<16, 3>(2));
        }
        let counts: &[usize] = if cfg!(miri) {
            &[2, 5]
        } else {
            &[2, 3, 5, 17, 49, 60]
        };
        for k in &kernels {
            for &n in counts {
                let blocks = |i: usize| match cfg!(miri) {
                    true => [1, 2, 0][i % 3],
                    false => [1, 3, 0, 2, 40, 1, 7][i % 7] + i % 5,
                };
                let start = |i: usize| i % 4 * 64;
                let slice = |i: usize| {
                    &data[start(i)..][..(blocks(i) * 64).min(data.len() - start(i)) / 64 * 64]
                };
                let init = |i: usize| [i as u32, !(i as u32), 0x1234_5678 ^ i as u32, 7];
                let mut states: Vec<[u32; 4]> = (0..n).map(init).collect();
                let mut jobs: Vec<(&[u8], &mut [u32; 4])> = states
                    .iter_mut()
                    .enumerate()
                    .map(|(i, s)| (slice(i), s))
                    .collect();
                assert!(
                    hash_jobs(Some(k), Backend::Portable, &mut jobs),
                    "lanes ran"
                );
                for (i, got) in states.iter().enumerate() {
                    let mut want = init(i);
                    Backend::Portable.compress(&mut want, slice(i).as_chunks::<64>().0);
                    assert_eq!(*got, want, "{} lanes, {n} jobs, job {i}", k.lanes);
                }
            }
        }
    }

    #[test]
    fn dropped_slot_is_reclaimed() {
        let mut lanes = lanes_with(portable_kernel::<4, 1>(2));
        let mut a = lanes.open(1);
        lanes.feed(&mut a, &[1; 100]);
        drop(a);
        assert_eq!(lanes.pending(), 1);
        let b = lanes.open(2);
        assert_eq!(lanes.pending(), 1, "the abandoned entry is reused");
        lanes.close(b);
        lanes.flush();
        let done: Vec<_> = lanes.completions().collect();
        assert_eq!(done, vec![(2, md5_with(Backend::Portable, b""))]);
    }

    #[test]
    #[should_panic(expected = "another Lanes")]
    fn slot_of_another_lanes_panics() {
        let mut a: Lanes<u8> = Lanes::with_backend(Backend::Portable);
        let mut b: Lanes<u8> = Lanes::with_backend(Backend::Portable);
        let mut s = a.open(0);
        b.feed(&mut s, b"x");
    }
}
