//! [`Server`] and [`StreamHasher`]: many concurrent writers (one per upload, say) whose
//! blocks are hashed side by side in the vector lanes.
//!
//! md5-simd's model, without its failures. There is no server thread and no channel.
//! Each handle buffers its bytes locally; a full buffer (a *batch* of whole blocks) is
//! queued at the server with the stream's MD5 state, and the handle goes on filling
//! another buffer, which it hands in as the stream's *next* batch while the first is
//! still at the server (at most one batch queued or hashing per stream, and up to
//! three next ones behind it, see `AHEAD`).
//!
//! Nobody hashes until somebody needs a result: a writer whose buffer is full again
//! (or that finalizes) takes the *combiner* role when no thread holds it (a second
//! one only when a full lane set of batches is queued; never more than the cores).
//! Where two half runs on two cores are estimated to beat one full run (Zen 1's AVX2,
//! whose one group runs at 75% of the speed of two; see `split_pays`), a combiner
//! takes half of the queue and starts a second combiner on the rest. A combiner waits
//! a few microseconds for the batches of the other streams that are in
//! the middle of a write, takes everything queued, hashes it side by side in the
//! lanes (the job manager of [`Lanes`](crate::Lanes)), and then, for each stream,
//! either queues its next batch at once with the new state (no wake-up on the critical
//! path) or hands the state back to the owner. A combiner whose own batch is done
//! hands the role to a waiting owner and goes back to its stream.
//!
//! A stream that is alone (no other writer in the middle of a write, nothing at the
//! server) never touches the queue: its blocks are hashed in place on its own thread
//! by the scalar kernel, as [`Md5`](crate::Md5) does, straight from the caller's
//! writes (only a partial block is copied) for a batch's worth of bytes before it
//! looks again. Nothing about a stream stays in the server once its batches are
//! done, and a dropped handle takes its queued batches with it, so handles that come
//! and go leave nothing behind.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::Waker;
use std::time::{Duration, Instant};

use crate::hasher::{finish, state_to_digest, INIT};
use crate::kernels::lanes::LaneKernel;
use crate::lanes::hash_jobs;
use crate::many::{best_shape, shape_for, MAX_LANES};
use crate::{Backend, Digest};

/// Default bytes a handle buffers before it hands a batch to the server.
const DEFAULT_BATCH: usize = 256 * 1024;

/// How long a combiner waits for the batches of other active streams before it runs
/// with what it has.
const GATHER: Duration = Duration::from_micros(300);

/// Batches a stream may hand in behind the one at the server before its writer
/// blocks.
///
/// A writer blocked on a full queue is woken by the combiner that finished one of
/// its batches, and the scheduler tends to place it on the combiner's core, where
/// the writer's copy of its next batch preempted the combiner: on a 2-core Zen 5,
/// 16 writers kept the combiners off the CPU for about 15% of the wall time, right
/// after each run. So a woken writer yields once (the combiner goes on hashing and
/// the other core takes the copy), and the queue is deep enough that a writer so
/// delayed still has batches waiting at the next run. 16 writers
/// (`examples/server_bench.rs`, with timing instrumentation): 5.0-5.3 GiB/s with one
/// batch ahead and no yield; yielding alone, the same (the delayed writers missed
/// runs); one batch ahead of 512 KiB, or two of 256 KiB, 5.8-6.1; three of 256 KiB,
/// 6.0-6.25 (6.4-6.5 without the instrumentation; the combiners then hash during 88%
/// of the wall time, at 7.0-7.1 GiB/s).
const AHEAD: usize = 3;

/// Hashes the bytes of many concurrent streams together in the vector lanes.
///
/// Create one `Server` per process (or use [`Server::global`]), clone it freely (a
/// clone is another reference to the same server) and open a [`StreamHasher`] per
/// stream with [`Server::hasher`]. Every handle is an independent MD5 that any thread
/// may own; handles on different threads write at the same time and their blocks meet
/// in the lanes.
///
/// ```
/// let server = md5x::Server::new();
/// let threads: Vec<_> = (0..4u8)
///     .map(|i| {
///         let mut h = server.hasher();
///         std::thread::spawn(move || {
///             for _ in 0..100 {
///                 h.update(&[i; 10_000]);
///             }
///             h.finalize()
///         })
///     })
///     .collect();
/// for (i, t) in threads.into_iter().enumerate() {
///     assert_eq!(t.join().unwrap(), md5x::md5(&vec![i as u8; 1_000_000]));
/// }
/// ```
///
/// # When a `Server` pays, and when a plain `Md5` is better
///
/// The lanes need *concurrent* streams: a server earns its keep when several streams
/// (ideally at least the kernel's lane count, [`Server::lanes`]) are being written at
/// the same time, e.g. the uploads of an object store, each on its own thread or task.
/// Then each core hashes many streams for about the price of one; with AVX-512 or AVX2
/// that is several times the throughput of one [`Md5`](crate::Md5) per stream.
///
/// Use a plain [`Md5`](crate::Md5) when there is one stream at a time (a server then
/// runs the same scalar kernel with a little bookkeeping on top), when all the data is
/// already in memory ([`hash_many`](crate::hash_many) needs no coordination at all),
/// or when streams are tiny (a handle hashes its last buffered batch, up to
/// [`Server::batch_bytes`], on its own thread when it is finalized). Each handle that
/// hashes through the server holds up to five batch buffers (one being filled, one
/// at the server, up to three handed in behind it: 1.25 MiB at the default batch
/// size); a handle that never fills one holds only what it was given.
///
/// How much it pays is bounded by how many streams are written *at the same time*: a
/// stream's blocks are a chain, so `n` concurrent streams fill at most `n` lanes. On a
/// 2-core AVX-512 machine (Zen 5), 16 writers ran 3.4 to 3.75 times as fast through a
/// server as through 16 `Md5`s (`examples/server_bench.rs`): one core's lanes, 16 wide,
/// hash 16 streams at about 8 times one `Md5` (their latency bound) for 88% of the
/// time, while the other core copies the writers' bytes into batches; 32 or more
/// concurrent streams fill the wider lane sets. The runs below predate the deeper
/// per-stream queue (with one batch ahead, Zen 5 gave 3.0 to 3.15 times). On a 2-core
/// Zen 3 with AVX2 the same run gave 2.2 to 2.8 times: one core's AVX2 lanes hash at
/// about 7 times one `Md5` there, and the combiner, waiting a little for batches
/// between runs, is the bottleneck. On a 2-core Zen 1, whose 256-bit operations run at
/// half width, it gave 2.1 to 2.3 times: the lanes hash at about 5 times one `Md5`
/// there, and one group comes so close to two that the queue is split between two
/// combiners, one per core (1.9 times without that, in the same runs); copying the
/// writers' bytes into batches, out of cache, takes much of the rest.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    backend: Backend,
    /// The lane kernel with 1, 2 and 3 groups, where the backend has one.
    kernels: [Option<LaneKernel>; 3],
    /// Most batches one combiner run takes.
    max_take: usize,
    max_combiners: usize,
    /// Bit `n` set: a combiner facing `n` queued batches (counted up to `2 * max_take`)
    /// takes half and leaves the rest to a second one ([`split_pays`], worked out once
    /// here for every count).
    split_at: u128,
    /// Batches that fill the smallest lane kernel: a second combiner starts only when
    /// this many are queued (two half-empty runs on two cores hash no more than one
    /// full run on one core, and the other core is better spent copying).
    full_run: usize,
    batch: usize,
    q: Mutex<Queue>,
    /// Combiners gathering batches wait here for submissions.
    gather: Condvar,
    /// Threads inside a blocking write that overflowed their handle's buffer: streams
    /// that will hand in a batch soon.
    writing: AtomicUsize,
    /// Batches at the server (queued or being hashed).
    queued: AtomicUsize,
    /// Handles alive.
    handles: AtomicUsize,
    /// Combiner runs so far, and the batches they hashed (in lane runs, and in all).
    runs: AtomicU64,
    lane_batches: AtomicU64,
    batches: AtomicU64,
    /// Wall-clock nanoseconds combiners spent hashing, and waiting for batches.
    hash_ns: AtomicU64,
    gather_ns: AtomicU64,
}

struct Queue {
    pending: VecDeque<Job>,
    /// Threads holding the combiner role (running, gathering, or promoted and about
    /// to run).
    combiners: usize,
    gathering: usize,
    /// Batches taken by running combiners.
    in_flight: usize,
}

/// A batch at the server: the stream's state before it, its whole blocks, and where
/// the result goes.
struct Job {
    state: [u32; 4],
    buf: Vec<u8>,
    ret: Arc<Ret>,
}

/// Where a handle's batch result arrives; one per handle, reused for every batch.
#[derive(Default)]
struct Ret {
    m: Mutex<RetState>,
    cv: Condvar,
}

#[derive(Default)]
struct RetState {
    /// The state after the batch, and the batch's buffer back for reuse.
    done: Option<([u32; 4], Vec<u8>)>,
    /// A combiner took the batch from the queue.
    taken: bool,
    /// Threads of the owner blocked in `wait` on the result or on room for the next
    /// batch: more than one when several threads call `finalize(&self)` at once. (A
    /// task that waits has its `waker` here instead.)
    waiting: u32,
    /// The owner was handed the combiner role.
    promoted: bool,
    waker: Option<Waker>,
    /// The stream's next batches, handed in while the current one is at the server
    /// (up to [`AHEAD`]): the first is queued as soon as the current one is done,
    /// without waking the owner.
    next: VecDeque<Vec<u8>>,
    /// Hashed batches' buffers, back for the owner to fill again.
    spare: Vec<Vec<u8>>,
    /// The handle was dropped: nothing of it is queued again.
    closed: bool,
}

impl RetState {
    /// Whether another batch may be handed in behind the one at the server.
    fn has_room(&self) -> bool {
        self.next.len() < AHEAD
    }

    /// What an owner waits for: its batch done or, with `slot`, room for another.
    fn ready(&self, slot: bool) -> bool {
        self.done.is_some() || (slot && self.has_room())
    }
}

fn nanos_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing the server guards is left inconsistent by a panic in user code (none
    // runs under these locks), so a poisoned lock is still good.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What [`StreamHasher::hand_in`] did.
enum HandIn {
    /// The buffer is at the server, or no batch is outstanding any more.
    Done,
    /// The stream already has [`AHEAD`] batches waiting: wait for room.
    Full,
}

/// What a combiner does after its run when batches are still queued.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A blocking writer: keep combining until its own batch is done.
    Blocking,
    /// Inside `poll_write`/`poll_flush`: one run, then hand the role on.
    OneRun,
}

/// A snapshot of a server's bookkeeping (for tests and monitoring; not stable API).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Handles alive.
    pub handles: usize,
    /// Threads inside a blocking write that overflowed their handle's buffer.
    pub writing: usize,
    /// Batches at the server (queued or being hashed).
    pub queued: usize,
    /// Batches queued.
    pub pending: usize,
    /// Batches being hashed.
    pub in_flight: usize,
    /// Threads holding the combiner role.
    pub combiners: usize,
    /// Combiner runs so far (cumulative).
    pub runs: u64,
    /// Batches hashed so far (cumulative).
    pub batches: u64,
    /// Of those, batches hashed in lane runs (with at least one other batch).
    pub lane_batches: u64,
    /// Wall-clock nanoseconds that combiners spent hashing (cumulative; a combiner
    /// that the OS preempts keeps counting).
    pub hash_nanos: u64,
    /// Wall-clock nanoseconds that combiners spent waiting for other streams' batches
    /// before a run (cumulative).
    pub gather_nanos: u64,
}

impl Server {
    /// A server on the process's [`Backend::active`] backend.
    pub fn new() -> Self {
        Self::with_backend(Backend::active())
    }

    /// A server on a chosen backend (single-stream backends work too: every batch is
    /// then hashed on its own).
    ///
    /// # Panics
    ///
    /// If this CPU cannot run `backend` (see [`Backend::is_supported`]).
    pub fn with_backend(backend: Backend) -> Self {
        Self::with_config(backend, DEFAULT_BATCH)
    }

    /// A server on `backend` whose handles hand over batches of `batch_bytes` (rounded
    /// to whole blocks, kept between 4 KiB and 64 MiB; the default is 256 KiB). Larger
    /// batches mean less coordination and more memory per handle.
    ///
    /// # Panics
    ///
    /// If this CPU cannot run `backend`.
    pub fn with_config(backend: Backend, batch_bytes: usize) -> Self {
        backend.assert_supported();
        let kernels: [Option<LaneKernel>; 3] =
            core::array::from_fn(|g| backend.lane_kernel_groups(g + 1));
        let max_take = kernels
            .iter()
            .flatten()
            .map(|k| k.lanes)
            .max()
            .unwrap_or(MAX_LANES)
            .min(MAX_LANES);
        let max_combiners = crate::tuning::cores();
        let full_run = kernels.iter().flatten().map(|k| k.lanes).min().unwrap_or(1);
        // (2 * MAX_LANES = 96 counts fit in the mask.)
        let split_at = backend.group_speed().map_or(0, |speed| {
            (0..=2 * max_take)
                .filter(|&n| split_pays(backend, speed, n, max_take, full_run))
                .fold(0u128, |m, n| m | 1 << n)
        });
        Server {
            inner: Arc::new(Inner {
                backend,
                kernels,
                max_take,
                max_combiners,
                split_at,
                full_run,
                batch: batch_bytes.clamp(4096, 64 << 20) / 64 * 64,
                q: Mutex::new(Queue {
                    pending: VecDeque::new(),
                    combiners: 0,
                    gathering: 0,
                    in_flight: 0,
                }),
                gather: Condvar::new(),
                writing: AtomicUsize::new(0),
                queued: AtomicUsize::new(0),
                handles: AtomicUsize::new(0),
                runs: AtomicU64::new(0),
                lane_batches: AtomicU64::new(0),
                batches: AtomicU64::new(0),
                hash_ns: AtomicU64::new(0),
                gather_ns: AtomicU64::new(0),
            }),
        }
    }

    /// A server like [`Server::with_config`]'s whose combiners never split the queue
    /// between two cores (see `split_pays`), to measure what splitting gains. Not
    /// stable API.
    #[doc(hidden)]
    pub fn without_split(backend: Backend, batch_bytes: usize) -> Self {
        let mut s = Self::with_config(backend, batch_bytes);
        if let Some(inner) = Arc::get_mut(&mut s.inner) {
            inner.split_at = 0;
        }
        s
    }

    /// The process-wide server on [`Backend::active`], created on first use.
    /// [`StreamHasher::default`] opens its handles here.
    pub fn global() -> &'static Server {
        static GLOBAL: OnceLock<Server> = OnceLock::new();
        GLOBAL.get_or_init(Server::new)
    }

    /// A new stream: an MD5 hasher whose blocks this server hashes.
    pub fn hasher(&self) -> StreamHasher {
        self.inner.handles.fetch_add(1, Ordering::Relaxed);
        StreamHasher {
            inner: Arc::clone(&self.inner),
            state: INIT,
            len: 0,
            buf: Vec::new(),
            spare: Vec::new(),
            ret: Arc::new(Ret::default()),
            outstanding: false,
            solo_left: 0,
        }
    }

    /// The backend hashing the streams.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// The most streams one core hashes side by side (1 for single-stream backends).
    pub fn lanes(&self) -> usize {
        self.inner
            .kernels
            .iter()
            .flatten()
            .map(|k| k.lanes)
            .max()
            .unwrap_or(1)
    }

    /// Bytes a handle buffers before it hands them to the server as one batch.
    pub fn batch_bytes(&self) -> usize {
        self.inner.batch
    }

    /// The server's bookkeeping now. Not stable API.
    #[doc(hidden)]
    pub fn stats(&self) -> ServerStats {
        let q = lock(&self.inner.q);
        ServerStats {
            handles: self.inner.handles.load(Ordering::Relaxed),
            writing: self.inner.writing.load(Ordering::Relaxed),
            queued: self.inner.queued.load(Ordering::Relaxed),
            pending: q.pending.len(),
            in_flight: q.in_flight,
            combiners: q.combiners,
            runs: self.inner.runs.load(Ordering::Relaxed),
            batches: self.inner.batches.load(Ordering::Relaxed),
            lane_batches: self.inner.lane_batches.load(Ordering::Relaxed),
            hash_nanos: self.inner.hash_ns.load(Ordering::Relaxed),
            gather_nanos: self.inner.gather_ns.load(Ordering::Relaxed),
        }
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for Server {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Server")
            .field("backend", &self.inner.backend)
            .field("lanes", &self.lanes())
            .field("batch_bytes", &self.inner.batch)
            .finish_non_exhaustive()
    }
}

impl Inner {
    /// Whether a thread that needs a queued batch's result should take a combiner
    /// role now (else it waits for the running combiners).
    fn may_combine(&self, q: &Queue) -> bool {
        q.combiners == 0 || (q.combiners < self.max_combiners && q.pending.len() >= self.full_run)
    }

    /// Hash every batch's blocks into its state.
    fn hash(&self, jobs: &mut [Job]) {
        let mut refs: Vec<(&[u8], &mut [u32; 4])> = jobs
            .iter_mut()
            .map(|j| (&j.buf[..], &mut j.state))
            .collect();
        let n = refs.len() as u64;
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.batches.fetch_add(n, Ordering::Relaxed);
        // The group count for this many batches, as hash_many chooses it.
        let kernel = shape_for(self.backend, refs.len());
        let t0 = Instant::now();
        if hash_jobs(kernel.as_ref(), self.backend, &mut refs) {
            self.lane_batches.fetch_add(n, Ordering::Relaxed);
        }
        self.hash_ns.fetch_add(nanos_since(t0), Ordering::Relaxed);
    }

    /// Hold the combiner role (the caller counted itself in `combiners`) until the
    /// queue is empty or the role is handed on. `own` is the caller's result slot.
    fn combine<'a>(&'a self, mut q: MutexGuard<'a, Queue>, own: &Ret, mode: Mode) {
        loop {
            if mode == Mode::Blocking {
                q = self.gather_batches(q);
            }
            if q.pending.is_empty() {
                q.combiners -= 1;
                return;
            }
            let n = self.take_count(&q);
            let mut jobs: Vec<Job> = q.pending.drain(..n).collect();
            if self.may_combine(&q) {
                // What is left fills a lane set (or was left for a second combiner):
                // hash it on another core at the same time.
                self.promote_another(&mut q);
            }
            for j in &jobs {
                lock(&j.ret.m).taken = true;
            }
            q.in_flight += n;
            drop(q);

            self.hash(&mut jobs);
            let mut again = Vec::new();
            for j in jobs {
                let waker = {
                    let mut r = lock(&j.ret.m);
                    match r.next.pop_front() {
                        // The owner already handed in the next batch: queue it with
                        // the new state, and give the owner this buffer to refill.
                        Some(next) => {
                            r.spare.push(j.buf);
                            r.taken = false;
                            again.push(Job {
                                state: j.state,
                                buf: next,
                                ret: Arc::clone(&j.ret),
                            });
                        }
                        None => r.done = Some((j.state, j.buf)),
                    }
                    // Every thread waiting on this stream (several may be in
                    // `finalize(&self)` at once).
                    j.ret.cv.notify_all();
                    r.waker.take()
                };
                if let Some(w) = waker {
                    w.wake();
                }
            }

            q = lock(&self.q);
            q.in_flight -= n;
            let mut requeued = 0;
            for j in again {
                // (A handle dropped since is not queued again; its `Drop` holds
                // this lock while it marks itself closed.)
                if !lock(&j.ret.m).closed {
                    q.pending.push_back(j);
                    requeued += 1;
                }
            }
            self.queued.fetch_sub(n - requeued, Ordering::Relaxed);
            if q.pending.is_empty() {
                q.combiners -= 1;
                return;
            }
            let own_done = lock(&own.m).done.is_some();
            if own_done || mode == Mode::OneRun {
                // Go back to our own stream; a waiting owner takes over, or whoever
                // waits next.
                self.hand_on(&mut q);
                return;
            }
        }
    }

    /// How many queued batches a combiner run takes: as many as the widest kernel has
    /// lanes, or half of what is queued when another combiner may start and two
    /// halves on two cores are estimated to pay (see [`split_pays`]): the rest is left
    /// to a second combiner.
    fn take_count(&self, q: &Queue) -> usize {
        let p = q.pending.len().min(2 * self.max_take);
        let split = q.combiners < self.max_combiners && self.split_at >> p & 1 == 1;
        match split {
            true => p.div_ceil(2),
            false => p.min(self.max_take),
        }
    }

    /// Start another combiner on what is left queued: a blocked owner of a queued
    /// batch, else the tasks waiting on queued batches are woken (the first one polled
    /// takes the role if [`Inner::may_combine`] still allows it then).
    fn promote_another(&self, q: &mut Queue) {
        for j in &q.pending {
            let mut r = lock(&j.ret.m);
            if r.waiting > 0 && !r.promoted {
                r.promoted = true;
                q.combiners += 1;
                j.ret.cv.notify_one();
                return;
            }
        }
        for j in &q.pending {
            let w = lock(&j.ret.m).waker.take();
            if let Some(w) = w {
                w.wake();
            }
        }
    }

    /// Give up the combiner role while batches are queued: to the first queued
    /// batch's owner that is blocked waiting (it always acts on it). Else the role is
    /// freed and every task waiting on a queued batch is woken: the first one polled
    /// takes the role (a task that is never polled again holds nothing up), as does
    /// any owner that starts waiting.
    fn hand_on(&self, q: &mut Queue) {
        for j in &q.pending {
            let mut r = lock(&j.ret.m);
            if r.waiting > 0 && !r.promoted {
                r.promoted = true;
                j.ret.cv.notify_one();
                return;
            }
        }
        q.combiners -= 1;
        for j in &q.pending {
            let w = lock(&j.ret.m).waker.take();
            if let Some(w) = w {
                w.wake();
            }
        }
    }

    /// Wait (briefly) until the active streams that have no batch queued or in flight
    /// have handed in theirs, or the lanes are full.
    fn gather_batches<'a>(&'a self, mut q: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        let start = Instant::now();
        let deadline = start + GATHER;
        loop {
            let writing = self.writing.load(Ordering::Relaxed);
            let expected = writing.saturating_sub(q.pending.len() + q.in_flight);
            if q.pending.len() >= self.max_take || expected == 0 {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            q.gathering += 1;
            q = self
                .gather
                .wait_timeout(q, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            q.gathering -= 1;
        }
        self.gather_ns
            .fetch_add(nanos_since(start), Ordering::Relaxed);
        q
    }
}

/// Whether a combiner facing `n` queued batches (at most `2 * max_take`) should take
/// half and leave the other half to a second combiner on another core, rather than
/// take up to `max_take` (leaving the rest to a second combiner only if it fills a
/// lane set of `full_run`, else to its own next run).
///
/// The estimate weighs the time of the runs on the busier core (lane-slots over the
/// kernel's measured speed, as [`shape_for`] does) and splits when that is at least
/// 1.45 times shorter. Two cores hashing at once are not twice as fast: while one core
/// hashes, the other copies the writers' bytes into batches, and a split takes that
/// time from the hashing; the margin was set on Zen 1. There, whose AVX2 runs one group
/// at 75% of the speed of two, 16 to 32 batches split (a half takes 1.47 to 1.5 times
/// less): 16 writers ran at 2.11-2.31 times 16 `Md5`s with the split, 1.89-1.90
/// without, in the same runs (`examples/server_bench.rs`). With full-width AVX2 (one
/// group at half the speed of two) and on Zen 5's AVX-512 (about half), a full run of
/// `max_take` or fewer batches never splits; more than `max_take` but too few for a
/// second full lane set split in halves everywhere. On Intel's AVX-512 (one group 86%
/// of two), 32 to 64 batches split.
fn split_pays(
    backend: Backend,
    speed: [u32; 3],
    n: usize,
    max_take: usize,
    full_run: usize,
) -> bool {
    let time = |n: usize| match n {
        0 => Some(0),
        n => best_shape(backend, speed, n).map(|(t, _)| t),
    };
    let first = n.min(max_take);
    let rest = n - first;
    let (Some(a), Some(b), Some(half)) = (time(first), time(rest), time(n.div_ceil(2))) else {
        return false;
    };
    let unsplit = match rest >= full_run {
        true => a.max(b),
        false => a + b,
    };
    // The half left behind must fill a lane set, or no second combiner starts on it.
    n / 2 >= full_run.max(1) && unsplit * 100 >= half * 145
}

/// One stream's MD5, hashed through a [`Server`]: [`std::io::Write`], the hasher
/// methods of [`Md5`](crate::Md5), RustCrypto's `digest` traits (feature `digest`)
/// and tokio's `AsyncWrite` (feature `tokio`).
///
/// Bytes are buffered in the handle; whole batches go to the server, which hashes them
/// side by side with other streams' batches. Dropping the handle at any point releases
/// everything it had at the server.
///
/// [`update`](StreamHasher::update) and `io::Write` block the calling thread while the
/// stream has four batches at the server and a fifth full buffer (and may hash other
/// streams' batches meanwhile). In async code use `tokio::io::AsyncWrite` (feature
/// `tokio`), which returns `Pending` instead, and `flush().await` before
/// [`finalize`](StreamHasher::finalize) so that it has nothing to wait for.
///
/// ```
/// use std::io::Write;
/// let server = md5x::Server::new();
/// let mut h = server.hasher();
/// h.write_all(b"hello ").unwrap();
/// h.update(b"world");
/// assert_eq!(h.finalize(), md5x::md5(b"hello world"));
/// h.reset();
/// assert_eq!(h.finalize(), md5x::md5(b""));
/// ```
pub struct StreamHasher {
    inner: Arc<Inner>,
    /// The state after every byte hashed so far (valid when no batch is outstanding).
    state: [u32; 4],
    /// Bytes fed, mod 2^64.
    len: u64,
    /// Bytes not handed in yet: whole blocks, then a partial block.
    buf: Vec<u8>,
    /// The buffer the last batch returned, reused for the next one.
    spare: Vec<u8>,
    ret: Arc<Ret>,
    /// A batch is at the server; `state` is the one before it.
    outstanding: bool,
    /// Bytes this stream may still hash in place on its own thread, without copying,
    /// since it last found itself alone (see [`StreamHasher::hash_solo`]).
    solo_left: usize,
}

impl Default for StreamHasher {
    /// A handle on [`Server::global`].
    fn default() -> Self {
        Server::global().hasher()
    }
}

impl core::fmt::Debug for StreamHasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StreamHasher")
            .field("len", &self.len)
            .field("backend", &self.inner.backend)
            .finish_non_exhaustive()
    }
}

impl StreamHasher {
    /// Feed more bytes. Blocks while the stream's previous batch is being hashed and
    /// its buffer is full; may hash other streams' batches meanwhile.
    #[inline]
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        self.update_bytes(data.as_ref());
    }

    /// The digest of everything fed so far. The hasher is unchanged and can take more
    /// input. Waits for a batch still at the server; hashes the buffered rest on this
    /// thread. (Where `digest::Digest` is in scope, `h.finalize()` is that trait's,
    /// which consumes the hasher, as for [`Md5`](crate::Md5); this one is then
    /// `StreamHasher::finalize(&h)`.)
    pub fn finalize(&self) -> Digest {
        let mut state = match self.outstanding {
            true => self.wait_result(),
            false => self.state,
        };
        let whole = self.buf.len() / 64 * 64;
        self.inner
            .backend
            .compress(&mut state, self.buf[..whole].as_chunks::<64>().0);
        finish(self.inner.backend, &mut state, &self.buf[whole..], self.len);
        state_to_digest(&state)
    }

    /// Start over, as if new (on the same server).
    pub fn reset(&mut self) {
        if self.outstanding {
            self.collect_blocking();
        }
        self.state = INIT;
        self.len = 0;
        self.buf.clear();
    }

    /// Bytes fed so far (mod 2^64).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing has been fed yet (or exactly 2^64 bytes).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The server this handle hashes through.
    pub fn server(&self) -> Server {
        Server {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Whether no other stream is hashing or about to hand in a batch: nothing is at
    /// the server and no thread but the `mine` counted by the caller is inside an
    /// overflowing write. (This stream has no batch at the server when it asks.)
    fn alone(&self, mine: usize) -> bool {
        self.inner.writing.load(Ordering::Relaxed) <= mine
            && self.inner.queued.load(Ordering::Relaxed) == 0
    }

    /// Whether writes now hash in place, alone (`hash_solo`), rather than buffer.
    #[inline(always)]
    fn in_place(&self) -> bool {
        self.solo_left > 0 && !self.outstanding
    }

    /// A write that only fills a buffer is copied here, inline: small writes cost
    /// little more than the copy (`docs/performance.md`, "small writes to a stream").
    #[inline(always)]
    fn update_bytes(&mut self, data: &[u8]) {
        let n = data.len();
        let alone = self.in_place();
        let copy_only = match alone {
            // Hashing alone: a write that neither completes a block nor ends the
            // stretch alone (`feed`) only adds to the partial block.
            true => self.buf.len() + n < 64 && n < self.solo_left,
            false => self.buf.len() + n <= self.inner.batch,
        };
        if !copy_only {
            return self.update_hashing(data);
        }
        self.len = self.len.wrapping_add(n as u64);
        if alone {
            self.solo_left -= n;
        }
        self.buf.extend_from_slice(data);
    }

    /// A write that may hash, hand in a batch or wait for one.
    #[inline(never)]
    fn update_hashing(&mut self, mut data: &[u8]) {
        self.len = self.len.wrapping_add(data.len() as u64);
        while !data.is_empty() {
            data = self.feed(data);
        }
    }

    /// Take bytes from `data`; return what is left for another pass (only after this
    /// stream found itself alone and has more to hash in place).
    fn feed<'d>(&mut self, mut data: &'d [u8]) -> &'d [u8] {
        let cap = self.inner.batch;
        while self.in_place() {
            data = self.hash_solo(data);
            // A batch's worth hashed alone: look again, as a buffer-full write would.
            if self.solo_left == 0 && self.alone(0) {
                self.solo_left = cap;
            }
            if data.is_empty() {
                return data;
            }
        }
        if self.buf.len() + data.len() <= cap {
            self.buf.extend_from_slice(data);
            return &[];
        }
        self.inner.writing.fetch_add(1, Ordering::Relaxed);
        loop {
            let room = cap.saturating_sub(self.buf.len());
            if data.len() <= room {
                self.buf.extend_from_slice(data);
                data = &[];
                break;
            }
            if !self.outstanding && self.alone(1) {
                // No other stream is hashing: this one alone, in place, on the scalar
                // kernel, like `Md5` (`hash_solo`, on the caller's next pass: the
                // buffer, then a batch's worth of `data`).
                self.solo_left = cap;
                break;
            }
            // Fill the buffer (while the previous batch, if any, is being hashed),
            // then hand it in.
            self.buf.extend_from_slice(&data[..room]);
            data = &data[room..];
            loop {
                match self.hand_in() {
                    HandIn::Done => {}
                    HandIn::Full => self.wait(true),
                }
                if !self.outstanding {
                    self.submit();
                }
                if self.buf.len() < cap {
                    break;
                }
            }
        }
        self.inner.writing.fetch_sub(1, Ordering::Relaxed);
        data
    }

    /// Hash what the buffer holds and up to `solo_left` bytes of `data` in place on the
    /// scalar kernel, as [`Md5`](crate::Md5) does: only a partial block is copied. A
    /// stream that found itself alone does this for a batch's worth of writes before
    /// it looks again, so a lone writer's small writes are never copied into batches.
    /// Meanwhile it counts in `writing`, so that a stream that starts writing sees it
    /// and does not go alone too; once the other stream's batch is queued, this one's
    /// next look finds it. Returns the rest of `data`.
    fn hash_solo<'d>(&mut self, data: &'d [u8]) -> &'d [u8] {
        debug_assert!(!self.outstanding);
        let b = self.inner.backend;
        let n = data.len().min(self.solo_left);
        self.solo_left -= n;
        let (mut now, rest) = data.split_at(n);
        self.inner.writing.fetch_add(1, Ordering::Relaxed);
        // Whole blocks buffered (by `AsyncWrite`), then the partial block, first.
        let whole = self.buf.len() / 64 * 64;
        if whole > 0 {
            b.compress(&mut self.state, self.buf[..whole].as_chunks::<64>().0);
            self.buf.drain(..whole);
        }
        if !self.buf.is_empty() {
            let take = (64 - self.buf.len()).min(now.len());
            self.buf.extend_from_slice(&now[..take]);
            now = &now[take..];
            if self.buf.len() == 64 {
                b.compress(&mut self.state, self.buf.as_chunks::<64>().0);
                self.buf.clear();
            }
        }
        let (blocks, tail) = now.as_chunks::<64>();
        if !blocks.is_empty() {
            b.compress(&mut self.state, blocks);
        }
        self.buf.extend_from_slice(tail);
        self.inner.writing.fetch_sub(1, Ordering::Relaxed);
        rest
    }

    /// Hand the buffer's whole blocks to the server as a batch. Whoever needs a
    /// result first hashes everything queued by then.
    fn submit(&mut self) {
        debug_assert!(!self.outstanding);
        let whole = self.buf.len() / 64 * 64;
        if whole == 0 {
            return;
        }
        let mut next = std::mem::take(&mut self.spare);
        next.clear();
        next.extend_from_slice(&self.buf[whole..]);
        self.buf.truncate(whole);
        let blocks = std::mem::replace(&mut self.buf, next);
        {
            let mut r = lock(&self.ret.m);
            r.done = None;
            r.taken = false;
        }
        self.outstanding = true;
        let inner = &*self.inner;
        inner.queued.fetch_add(1, Ordering::Relaxed);
        let mut q = lock(&inner.q);
        q.pending.push_back(Job {
            state: self.state,
            buf: blocks,
            ret: Arc::clone(&self.ret),
        });
        if q.gathering > 0 {
            inner.gather.notify_all();
        }
    }

    /// Take the outstanding batch's result, waiting for it (and combining when the
    /// role comes to this thread).
    fn collect_blocking(&mut self) {
        self.wait(false);
        self.take_result();
    }

    /// With a batch at the server and a full buffer: hand the buffer in as the
    /// stream's next batch if there is room for it (`Done`, also when the batch at the
    /// server finished: its result is then in the handle), else `Full`.
    fn hand_in(&mut self) -> HandIn {
        if !self.outstanding {
            return HandIn::Done;
        }
        let mut r = lock(&self.ret.m);
        if let Some((state, buf)) = r.done.take() {
            drop(r);
            self.state = state;
            self.spare = buf;
            self.outstanding = false;
            return HandIn::Done;
        }
        let whole = self.buf.len() / 64 * 64;
        if whole == 0 {
            return HandIn::Done;
        }
        if !r.has_room() {
            return HandIn::Full;
        }
        let mut fresh = r
            .spare
            .pop()
            .unwrap_or_else(|| std::mem::take(&mut self.spare));
        fresh.clear();
        fresh.extend_from_slice(&self.buf[whole..]);
        self.buf.truncate(whole);
        r.next.push_back(std::mem::replace(&mut self.buf, fresh));
        HandIn::Done
    }

    /// Move a finished batch's result into the handle.
    fn take_result(&mut self) {
        let done = lock(&self.ret.m).done.take();
        if let Some((state, buf)) = done {
            self.state = state;
            self.spare = buf;
            self.outstanding = false;
        }
    }

    /// Block until the outstanding batch is done (or, with `slot`, until there is room
    /// for the next batch), combining when the role comes to this thread.
    fn wait(&self, slot: bool) {
        let inner = &*self.inner;
        loop {
            let mut q = lock(&inner.q);
            let mut r = lock(&self.ret.m);
            if r.promoted {
                r.promoted = false;
                drop(r);
                inner.combine(q, &self.ret, Mode::Blocking);
                continue;
            }
            if r.ready(slot) {
                return;
            }
            if !r.taken && inner.may_combine(&q) {
                q.combiners += 1;
                drop(r);
                inner.combine(q, &self.ret, Mode::Blocking);
                continue;
            }
            r.waiting += 1;
            drop(q);
            let mut r = self
                .ret
                .cv
                .wait_while(r, |r| !r.ready(slot) && !r.promoted)
                .unwrap_or_else(PoisonError::into_inner);
            r.waiting -= 1;
            if !r.promoted {
                drop(r);
                // Woken by a combiner, most likely onto its core: let it go on
                // hashing, and this thread go on copying where another core is free
                // (see `AHEAD`).
                std::thread::yield_now();
            }
        }
    }

    /// Block until the outstanding batch is done; the stream's state after it.
    fn wait_result(&self) -> [u32; 4] {
        self.wait(false);
        lock(&self.ret.m).done.as_ref().map_or(self.state, |d| d.0)
    }
}

impl Drop for StreamHasher {
    fn drop(&mut self) {
        let inner = &*self.inner;
        let mut q = lock(&inner.q);
        if self.outstanding {
            let before = q.pending.len();
            q.pending.retain(|j| !Arc::ptr_eq(&j.ret, &self.ret));
            inner
                .queued
                .fetch_sub(before - q.pending.len(), Ordering::Relaxed);
        }
        let mut r = lock(&self.ret.m);
        r.waiting = 0;
        r.waker = None;
        r.closed = true;
        r.next.clear();
        if r.promoted {
            // The combiner role came to this handle: pass it on.
            r.promoted = false;
            drop(r);
            if q.pending.is_empty() {
                q.combiners -= 1;
            } else {
                inner.hand_on(&mut q);
            }
        }
        drop(q);
        inner.handles.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::io::Write for StreamHasher {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.update_bytes(buf);
        Ok(buf.len())
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.update_bytes(buf);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "tokio")]
mod async_write {
    use super::*;
    use core::pin::Pin;
    use core::task::{Context, Poll};

    impl StreamHasher {
        /// Poll until the outstanding batch is done (or, with `slot`, until there is
        /// room for the next batch). Never blocks: registers the waker instead (and
        /// runs one combiner pass when the role comes to this task).
        fn poll_wait(&mut self, cx: &mut Context<'_>, slot: bool) -> Poll<()> {
            let inner = Arc::clone(&self.inner);
            loop {
                let mut q = lock(&inner.q);
                let mut r = lock(&self.ret.m);
                r.waker = None;
                if r.promoted {
                    r.promoted = false;
                    drop(r);
                    inner.combine(q, &self.ret, Mode::OneRun);
                    continue;
                }
                if r.ready(slot) {
                    return Poll::Ready(());
                }
                if !r.taken && inner.may_combine(&q) {
                    q.combiners += 1;
                    drop(r);
                    inner.combine(q, &self.ret, Mode::OneRun);
                    continue;
                }
                r.waker = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
    }

    /// Writes never block the executor: a handle whose buffer is full while its
    /// previous batch is still being hashed returns `Pending` and is woken when the
    /// batch is done. When the combiner role comes to a task, it hashes one run of
    /// batches inside `poll_write`/`poll_flush` (CPU work, like any hasher's
    /// `update`) and hands the role on. `poll_flush` waits for the batch at the server,
    /// so that [`StreamHasher::finalize`] after `flush().await` never waits.
    impl tokio::io::AsyncWrite for StreamHasher {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            data: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            let this = self.get_mut();
            if data.is_empty() {
                return Poll::Ready(Ok(0));
            }
            let cap = this.inner.batch;
            while this.buf.len() >= cap {
                // Hand the batch in and go on buffering: whoever needs a result next
                // (this task included) hashes everything queued by then, in the lanes.
                if let HandIn::Full = this.hand_in() {
                    if this.poll_wait(cx, true).is_pending() {
                        return Poll::Pending;
                    }
                    continue;
                }
                if !this.outstanding {
                    this.submit();
                }
            }
            let n = (cap - this.buf.len()).min(data.len());
            this.buf.extend_from_slice(&data[..n]);
            this.len = this.len.wrapping_add(n as u64);
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            let this = self.get_mut();
            while this.outstanding {
                if this.poll_wait(cx, false).is_pending() {
                    return Poll::Pending;
                }
                this.take_result();
            }
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            self.poll_flush(cx)
        }
    }
}

#[cfg(feature = "digest")]
mod digest_traits {
    use super::StreamHasher;
    use ::digest::{
        typenum::U16, FixedOutput, FixedOutputReset, HashMarker, Output, OutputSizeUser, Reset,
        Update,
    };

    impl HashMarker for StreamHasher {}

    impl OutputSizeUser for StreamHasher {
        type OutputSize = U16;
    }

    impl Update for StreamHasher {
        #[inline]
        fn update(&mut self, data: &[u8]) {
            self.update_bytes(data);
        }
    }

    impl FixedOutput for StreamHasher {
        fn finalize_into(self, out: &mut Output<Self>) {
            out.copy_from_slice(StreamHasher::finalize(&self).as_bytes());
        }
    }

    impl FixedOutputReset for StreamHasher {
        fn finalize_into_reset(&mut self, out: &mut Output<Self>) {
            out.copy_from_slice(StreamHasher::finalize(self).as_bytes());
            StreamHasher::reset(self);
        }
    }

    impl Reset for StreamHasher {
        fn reset(&mut self) {
            StreamHasher::reset(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels;

    /// The batch counts in `0..=2 * max_take` that `split_pays` splits.
    fn splits(backend: Backend, speed: [u32; 3]) -> Vec<usize> {
        let lanes: Vec<usize> = (1..=3)
            .filter_map(|g| backend.lane_kernel_groups(g))
            .map(|k| k.lanes)
            .collect();
        let (full_run, max_take) = (lanes[0], lanes[2]);
        (0..=2 * max_take)
            .filter(|&n| split_pays(backend, speed, n, max_take, full_run))
            .collect()
    }

    #[test]
    fn split_pays_where_one_group_nears_two_or_a_run_would_overflow() {
        // (backend, speeds, the batch counts that split). Everywhere, a queue of more
        // than 3 groups' worth but too few for a second lane set is halved. With AVX2's
        // half-width speeds (Zen 1), every count from two lane sets of 8 up splits, and
        // nothing below (the half left behind would not fill a lane set).
        let cases = [
            (Backend::Sse2, kernels::sse2::SPEED, 13..=15),
            (Backend::Avx2, kernels::avx2::SPEED, 25..=31),
            (Backend::Avx2, kernels::avx2::SPEED_HALF_WIDTH, 16..=32),
            (Backend::Avx512, kernels::avx512::SPEED, 49..=63),
            // Intel's: one group runs at 86% of two, so from two full groups' worth
            // (32 batches, each half one group) up to a lane set plus one group.
            (Backend::Avx512, kernels::avx512::SPEED_TWO_PORTS, 32..=64),
        ];
        for (backend, speed, want) in cases {
            if backend.lane_kernel_groups(1).is_none() {
                std::eprintln!("no {backend} lane kernel here: split_pays({backend}) not tested");
                continue;
            }
            assert_eq!(
                splits(backend, speed),
                want.collect::<Vec<_>>(),
                "{backend} {speed:?}"
            );
        }
    }

    /// A stream hands in at most `AHEAD` batches behind the one at the server, in
    /// order, and the hashed batches' buffers come back for reuse: with nobody
    /// combining, a writer holds at most `AHEAD + 2` buffers.
    #[test]
    fn a_stream_queues_at_most_ahead_batches_and_reuses_their_buffers() {
        let server = Server::with_config(Backend::Portable, 4096);
        let mut h = server.hasher();
        let data: Vec<u8> = (0..(AHEAD + 3) * 4096)
            .map(|i| (i * 7 + i / 251) as u8)
            .collect();
        let mut batches = data.chunks(4096);
        h.buf.extend_from_slice(batches.next().unwrap());
        h.submit();
        for _ in 0..AHEAD {
            h.buf.extend_from_slice(batches.next().unwrap());
            assert!(matches!(h.hand_in(), HandIn::Done));
            assert!(h.buf.is_empty());
        }
        h.buf.extend_from_slice(batches.next().unwrap());
        assert!(
            matches!(h.hand_in(), HandIn::Full),
            "more than AHEAD handed in"
        );
        assert_eq!(lock(&h.ret.m).next.len(), AHEAD);
        assert_eq!(server.stats().queued, 1);
        // Each combiner run hashes the queued batch and queues the next one behind it
        // with the new state, and hands the buffer back.
        for run in 0..=AHEAD {
            let mut q = lock(&server.inner.q);
            q.combiners += 1;
            server.inner.combine(q, &Ret::default(), Mode::OneRun);
            assert_eq!(lock(&server.inner.q).combiners, 0);
            let r = lock(&h.ret.m);
            assert_eq!(r.next.len(), (AHEAD - run).saturating_sub(1));
            assert_eq!(r.spare.len(), (run + 1).min(AHEAD));
            assert_eq!(r.done.is_some(), run == AHEAD);
        }
        // The stream's last batch is done: the fifth buffer (the full one) goes in.
        assert!(matches!(h.hand_in(), HandIn::Done));
        h.submit();
        h.buf.extend_from_slice(batches.next().unwrap());
        h.len = data.len() as u64;
        assert_eq!(h.finalize(), crate::md5(&data));
    }

    /// A handle on `server` with one batch of 4096 bytes of `byte` at the server.
    fn with_batch_queued(server: &Server, byte: u8) -> StreamHasher {
        let mut h = server.hasher();
        h.buf.resize(4096, byte);
        h.len = 4096;
        h.submit();
        h
    }

    /// A waker that drops a handle when it is woken. A combiner wakes the owner of a
    /// batch it has hashed after it has taken the stream's next batch to queue it and
    /// before it queues it, with no lock held: a handle dropped from the waker is
    /// dropped in that window every time, where a thread dropping its handle hits it
    /// only by chance.
    struct DropOnWake(Mutex<Option<StreamHasher>>);

    impl std::task::Wake for DropOnWake {
        fn wake(self: Arc<Self>) {
            drop(lock(&self.0).take());
        }
    }

    /// A handle dropped while its batch is being hashed, with its next batch handed
    /// in, leaves nothing at the server: the next batch is not queued again. (Queued,
    /// it would count in `queued` until another stream's combiner hashed it for
    /// nothing, and meanwhile no stream would find itself alone and hash in place.)
    #[test]
    fn a_handle_dropped_during_a_run_leaves_nothing_queued() {
        let server = Server::with_config(Backend::Portable, 4096);
        let mut h = with_batch_queued(&server, 1);
        h.buf.resize(4096, 2);
        assert!(matches!(h.hand_in(), HandIn::Done));
        let ret = Arc::clone(&h.ret);
        assert_eq!(lock(&ret.m).next.len(), 1);
        let dropper = Arc::new(DropOnWake(Mutex::new(Some(h))));
        lock(&ret.m).waker = Some(Waker::from(dropper));
        let mut q = lock(&server.inner.q);
        q.combiners += 1;
        server.inner.combine(q, &Ret::default(), Mode::OneRun);
        assert!(
            lock(&ret.m).closed,
            "the handle was not dropped during the run"
        );
        let st = server.stats();
        assert_eq!(
            (st.queued, st.pending, st.batches),
            (0, 0, 1),
            "the dropped handle's next batch was queued: {st:?}"
        );
        assert_eq!(
            (st.handles, st.in_flight, st.combiners),
            (0, 0, 0),
            "{st:?}"
        );
    }

    /// A combiner whose run leaves enough queued for a second combiner promotes the
    /// blocked owner of a queued batch to one, and counts it in `combiners`, since
    /// the owner gives the role back when it is done. Uncounted, the count went below
    /// zero: a panic in debug builds; in release builds a count at which no thread
    /// takes the role again, so that every writer that blocks waits forever.
    #[test]
    #[cfg_attr(target_os = "wasi", ignore = "threads: WASI preview 1 has none")]
    fn a_promoted_owner_counts_as_a_combiner() {
        let mut server = Server::with_config(Backend::Portable, 4096);
        // Runs of one batch, and a second combiner only from three queued batches,
        // on any machine: the owner, finding this thread combining and two batches
        // queued, blocks instead of combining too, and the run below takes one of
        // four, leaving three.
        let inner = Arc::get_mut(&mut server.inner).unwrap();
        inner.max_take = 1;
        inner.full_run = 3;
        inner.max_combiners = 2;
        // This thread holds the combiner role (and runs it below).
        lock(&server.inner.q).combiners += 1;
        let first = with_batch_queued(&server, 1);
        let owner = with_batch_queued(&server, 2);
        let owner_ret = Arc::clone(&owner.ret);
        let owner = std::thread::spawn(move || owner.finalize());
        while lock(&owner_ret.m).waiting == 0 {
            assert!(!owner.is_finished(), "the owner did not block");
            std::thread::yield_now();
        }
        let rest = [with_batch_queued(&server, 3), with_batch_queued(&server, 4)];
        assert_eq!(server.stats().pending, 4);
        // Takes `first`'s batch and promotes the owner to hash its own.
        let q = lock(&server.inner.q);
        server.inner.combine(q, &Ret::default(), Mode::OneRun);
        // (Bounded, so that a change that leaves the owner blocked fails, not hangs.)
        let deadline = Instant::now() + Duration::from_secs(60);
        while !owner.is_finished() {
            assert!(Instant::now() < deadline, "the owner is still blocked");
            std::thread::sleep(Duration::from_millis(1));
        }
        let digest = owner.join().expect("the promoted owner panicked");
        assert_eq!(digest, crate::md5(&[2; 4096]));
        let st = server.stats();
        assert_eq!(st.combiners, 0, "{st:?}");
        assert_eq!((st.runs, st.batches, st.pending), (2, 2, 2), "{st:?}");
        assert_eq!(first.finalize(), crate::md5(&[1; 4096]));
        drop((first, rest));
        let st = server.stats();
        assert_eq!((st.handles, st.queued, st.pending), (0, 0, 0), "{st:?}");
    }
}
