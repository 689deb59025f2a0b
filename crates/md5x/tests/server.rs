//! `Server`/`StreamHasher`: concurrent writers against reference digests, dropped
//! handles, reset and reuse, and a bounded soak that checks nothing accumulates.

mod common;

use md5x::{Backend, Digest, Server, ServerStats, StreamHasher};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::io::Write;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

fn reference(data: &[u8]) -> Digest {
    use md5_ref::Digest as _;
    Digest::new(md5_ref::Md5::digest(data).into())
}

fn message(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

/// Nothing left at the server: no queued or running batches, no combiners, no
/// writers, and `handles` live handles.
fn assert_idle(server: &Server, handles: usize) {
    let st = server.stats();
    let now = ServerStats {
        handles: st.handles,
        writing: st.writing,
        queued: st.queued,
        pending: st.pending,
        in_flight: st.in_flight,
        combiners: st.combiners,
        ..ServerStats::default()
    };
    assert_eq!(
        now,
        ServerStats {
            handles,
            ..ServerStats::default()
        }
    );
    assert!(
        st.lane_batches <= st.batches && st.runs <= st.batches,
        "{st:?}"
    );
    // Every combiner run hashes at least one batch of whole blocks: it takes time.
    assert!(st.runs == 0 || st.hash_nanos > 0, "{st:?}");
}

/// Servers on every backend, with a small batch so that short tests cross many
/// batch boundaries.
fn servers() -> Vec<Server> {
    common::backends()
        .into_iter()
        .flat_map(|b| [Server::with_config(b, 4096), Server::with_backend(b)])
        .collect()
}

/// `threads` writers, each on its own handle, feeding its message in random chunk
/// sizes (`max_chunk` at most), released at the same moment.
fn concurrent(server: &Server, threads: usize, max_len: usize, max_chunk: usize, seed: u64) {
    let barrier = Arc::new(Barrier::new(threads));
    let joins: Vec<_> = (0..threads)
        .map(|t| {
            let mut h = server.hasher();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed + t as u64);
                let len = rng.random_range(0..=max_len);
                let msg = message(seed ^ (t as u64) << 32, len);
                barrier.wait();
                let mut pos = 0;
                while pos < msg.len() {
                    let n = rng.random_range(0..=max_chunk).min(msg.len() - pos);
                    h.write_all(&msg[pos..pos + n]).unwrap();
                    pos += n;
                }
                assert_eq!(h.len(), msg.len() as u64);
                (h.finalize(), reference(&msg), len)
            })
        })
        .collect();
    for (t, j) in joins.into_iter().enumerate() {
        let (got, want, len) = j.join().unwrap();
        assert_eq!(got, want, "{}: writer {t}, {len} bytes", server.backend());
    }
    assert_idle(server, 0);
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "threads: WASI preview 1 has none")]
fn concurrent_writers_random_chunks() {
    for (i, s) in servers().iter().enumerate() {
        concurrent(s, 8, 300_000, 70_000, 1000 + i as u64);
        concurrent(s, 3, 50_000, 5000, 2000 + i as u64);
        // Two to three lane sets' worth: where a combiner may leave half of the queue
        // to a second one (on Zen 1's AVX2; see `split_pays`).
        concurrent(s, 20, 120_000, 30_000, 3000 + i as u64);
    }
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "threads: WASI preview 1 has none")]
fn many_writers_more_than_lanes() {
    // More streams than any kernel has lanes (48), each crossing many batches.
    let s = Server::with_config(Backend::active(), 4096);
    concurrent(&s, 56, 100_000, 9000, 7);
}

#[test]
fn one_writer_alone_and_small_writes() {
    for s in servers() {
        for len in [0usize, 1, 55, 56, 63, 64, 65, 4095, 4096, 4097, 100_000] {
            let msg = message(len as u64, len);
            let mut h = s.hasher();
            for c in msg.chunks(7) {
                h.update(c);
            }
            assert_eq!(h.finalize(), reference(&msg), "{} {len}", s.backend());
            let mut h = s.hasher();
            h.update(&msg);
            assert_eq!(h.finalize(), reference(&msg), "{} {len}", s.backend());
        }
        assert_idle(&s, 0);
    }
}

/// A stream that is alone hashes its writes in place for a batch's worth of bytes at a
/// time, then looks again: across many such renewals, with writes of every awkward
/// size (partial blocks carried between writes), the digest is right at every point
/// and nothing goes through the server.
#[test]
fn lone_writer_in_place_across_many_batches() {
    let sizes = [1usize, 7, 63, 64, 65, 4095, 4096, 4097, 10_000, 130];
    for s in servers() {
        let total = 20 * s.batch_bytes() + 777;
        let msg = message(total as u64, total);
        let mut h = s.hasher();
        let (mut pos, mut i) = (0, 0);
        while pos < msg.len() {
            let n = sizes[i % sizes.len()].min(msg.len() - pos);
            h.update(&msg[pos..pos + n]);
            pos += n;
            i += 1;
            if i % 997 == 0 {
                assert_eq!(
                    h.finalize(),
                    reference(&msg[..pos]),
                    "{} at {pos}",
                    s.backend()
                );
            }
        }
        assert_eq!(h.finalize(), reference(&msg), "{} {total}", s.backend());
        let st = s.stats();
        assert_eq!((st.batches, st.runs), (0, 0), "{}: {st:?}", s.backend());
        drop(h);
        assert_idle(&s, 0);
    }
}

/// A lone stream, hashing in place, carrying every partial-block length 0-63 and then
/// fed pieces of every size 1-131: the writes that only add to the partial block are
/// copied without hashing (inline), the others complete blocks; every digest is right,
/// and nothing goes through the server.
#[test]
fn lone_writer_every_kept_length_and_piece_size() {
    for b in common::backends() {
        let s = Server::with_config(b, 4096);
        let first = s.batch_bytes();
        let data = message(9, first + 64 + 3 * 131 + 7);
        for kept in 0..64 {
            for piece in 1..=131 {
                let msg = &data[..first + kept + 3 * piece + 7];
                let mut h = s.hasher();
                h.update(&msg[..first + kept]);
                for chunk in msg[first + kept..].chunks(piece) {
                    h.update(chunk);
                }
                assert_eq!(
                    h.finalize(),
                    reference(msg),
                    "{b}: {kept} bytes kept, then pieces of {piece}"
                );
            }
        }
        let st = s.stats();
        assert_eq!((st.batches, st.runs), (0, 0), "{b}: {st:?}");
        assert_idle(&s, 0);
    }
}

#[test]
fn finalize_keeps_the_stream_going() {
    let s = Server::with_config(Backend::active(), 4096);
    let msg = message(3, 50_000);
    let mut h = s.hasher();
    for (i, c) in msg.chunks(10_001).enumerate() {
        h.update(c);
        let so_far = (i * 10_001 + c.len()).min(msg.len());
        assert_eq!(h.finalize(), reference(&msg[..so_far]));
    }
}

/// `finalize(&self)` from three threads at once on one handle, while another writer
/// keeps the server busy: each caller gets the digest (every waiter on a stream is
/// woken when its batch is done). A lost wake-up used to leave one caller asleep for
/// good, so a hang is reported as a failure after a generous time.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "threads: WASI preview 1 has none")]
fn finalize_from_several_threads_at_once() {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for backend in common::backends() {
            let server = Server::with_config(backend, 4096);
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                let mut other = server.hasher();
                let stop = &stop;
                s.spawn(move || {
                    while !stop.load(Relaxed) {
                        other.update([1u8; 100_000]);
                    }
                });
                let mut h = server.hasher();
                let mut msg = Vec::new();
                for i in 0..1000u32 {
                    if msg.len() > 1 << 20 {
                        // A fresh stream now and then keeps the reference cheap.
                        h.reset();
                        msg.clear();
                    }
                    let chunk = [i as u8; 30_000];
                    h.update(chunk);
                    msg.extend_from_slice(&chunk);
                    let want = reference(&msg);
                    let h = &h;
                    std::thread::scope(|s2| {
                        let a = s2.spawn(move || h.finalize());
                        let b = s2.spawn(move || h.finalize());
                        assert_eq!(h.finalize(), want);
                        assert_eq!(a.join().unwrap(), want);
                        assert_eq!(b.join().unwrap(), want);
                    });
                }
                stop.store(true, Relaxed);
            });
        }
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(300))
        .expect("finalize from several threads did not return within 5 minutes");
}

#[test]
fn reset_and_reuse() {
    for s in servers() {
        let mut h = s.hasher();
        h.update(message(1, 123_457));
        h.reset();
        assert!(h.is_empty());
        assert_eq!(h.finalize(), reference(b""));
        for round in 0..3 {
            let msg = message(round, 40_000 + round as usize * 1000);
            h.update(&msg);
            assert_eq!(h.finalize(), reference(&msg));
            h.reset();
        }
        drop(h);
        assert_idle(&s, 0);
    }
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "threads: WASI preview 1 has none")]
fn handles_dropped_mid_stream() {
    let s = Server::with_config(Backend::active(), 4096);
    // While other writers are busy, half the handles are dropped with batches queued
    // (or being hashed) and partial blocks buffered; the rest still hash correctly.
    let joins: Vec<_> = (0..12u64)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                let msg = message(t, 200_000 + t as usize * 77);
                for round in 0..4 {
                    let mut h = s.hasher();
                    let cut = if t % 2 == 0 {
                        msg.len()
                    } else {
                        10_000 * (round + 1) + 13
                    };
                    for c in msg[..cut].chunks(5000 + t as usize) {
                        h.update(c);
                    }
                    if t % 2 == 0 {
                        assert_eq!(h.finalize(), reference(&msg), "writer {t}");
                    }
                    drop(h);
                }
            })
        })
        .collect();
    for j in joins {
        j.join().unwrap();
    }
    assert_idle(&s, 0);
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "threads: WASI preview 1 has none")]
fn handle_dropped_with_its_batch_queued() {
    let s = Server::with_config(Backend::active(), 4096);
    let mut a = s.hasher();
    let mut b = s.hasher();
    // Two streams writing: neither is alone, so each hands in a batch and returns
    // with it queued (nobody needed a result yet).
    let msg = message(9, 4096 + 100);
    s_write_two(&mut a, &mut b, &msg);
    let st = s.stats();
    assert_eq!(st.handles, 2);
    drop(a);
    assert_eq!(s.stats().handles, 1);
    assert_eq!(b.finalize(), reference(&msg));
    drop(b);
    assert_idle(&s, 0);
}

/// Write `msg` to both handles with overlapping writes from two threads.
fn s_write_two(a: &mut StreamHasher, b: &mut StreamHasher, msg: &[u8]) {
    let barrier = Barrier::new(2);
    let bar = &barrier;
    std::thread::scope(|sc| {
        sc.spawn(move || {
            bar.wait();
            a.update(msg);
        });
        sc.spawn(move || {
            bar.wait();
            b.update(msg);
        });
    });
}

#[cfg(feature = "digest")]
#[test]
fn digest_traits() {
    use digest::{FixedOutput, FixedOutputReset, Update};
    fn generic<D: digest::Digest>(data: &[u8]) -> Vec<u8> {
        D::digest(data).to_vec()
    }
    let msg = message(5, 300_000);
    assert_eq!(
        generic::<StreamHasher>(&msg),
        reference(&msg).as_bytes().to_vec()
    );
    let s = Server::new();
    let mut h = s.hasher();
    Update::update(&mut h, &msg);
    let out = h.finalize_fixed_reset();
    assert_eq!(&out[..], reference(&msg).as_bytes());
    Update::update(&mut h, b"abc");
    assert_eq!(&h.finalize_fixed()[..], md5x::md5(b"abc").as_bytes());
}

/// A million-handle soak, scaled to a bounded time: handles created, written and
/// closed in turn (some dropped unfinished) while two other threads stream; the
/// server's counts must return to zero and the live-handle count stay bounded.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "threads: WASI preview 1 has none")]
fn soak_nothing_accumulates() {
    let s = Server::with_config(Backend::active(), 8192);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let streamers: Vec<_> = (0..2u64)
        .map(|t| {
            let s = s.clone();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let chunk = message(t, 50_000);
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut h = s.hasher();
                    let mut whole = Vec::new();
                    for _ in 0..5 {
                        h.update(&chunk);
                        whole.extend_from_slice(&chunk);
                    }
                    assert_eq!(h.finalize(), reference(&whole));
                    n += 1;
                }
                n
            })
        })
        .collect();
    let data = message(77, 4096);
    let want = reference(&data);
    let start = Instant::now();
    let mut created = 0u64;
    let mut max_handles = 0;
    while start.elapsed() < Duration::from_millis(1500) {
        for i in 0..1000 {
            let mut h = s.hasher();
            h.update(&data);
            if i % 3 != 0 {
                assert_eq!(h.finalize(), want);
            }
            created += 1;
        }
        max_handles = max_handles.max(s.stats().handles);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let streamed: u64 = streamers.into_iter().map(|j| j.join().unwrap()).sum();
    assert!(created >= 1000 && streamed >= 1, "{created} {streamed}");
    // At most this thread's handle and one per streamer were ever alive at once.
    assert!(max_handles <= 3, "{max_handles} handles alive");
    assert_idle(&s, 0);
}

#[test]
fn server_and_handles_are_send_and_sync() {
    fn check<T: Send + Sync + 'static>() {}
    check::<Server>();
    check::<StreamHasher>();
}

#[test]
fn stats_after_concurrent_use_and_clone_sharing() {
    let s = Server::new();
    let s2 = s.clone();
    let h = s2.hasher();
    assert_eq!(s.stats().handles, 1);
    assert_eq!(h.server().backend(), s.backend());
    assert!(s.lanes() >= 1 && s.batch_bytes().is_multiple_of(64));
    drop(h);
    assert_idle(&s, 0);
    // Batch sizes are clamped and rounded, never rejected.
    assert_eq!(
        Server::with_config(Backend::Portable, 0).batch_bytes(),
        4096
    );
    assert_eq!(
        Server::with_config(Backend::Portable, 100_001).batch_bytes(),
        100_000 / 64 * 64
    );
}

#[cfg(feature = "tokio")]
mod tokio_tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A single-threaded runtime: tasks and the combiner role share one thread.
    fn current_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn async_writers_on_current_thread() {
        let rt = current_thread();
        for s in servers() {
            let s2 = s.clone();
            rt.block_on(async move {
                let tasks: Vec<_> = (0..10u64)
                    .map(|t| {
                        let s = s2.clone();
                        tokio::task::spawn(async move {
                            let msg = message(t + 100, 30_000 + t as usize * 10_007);
                            let mut h = s.hasher();
                            let mut rng = StdRng::seed_from_u64(t);
                            let mut pos = 0;
                            while pos < msg.len() {
                                let n = rng.random_range(1..=9000).min(msg.len() - pos);
                                AsyncWriteExt::write_all(&mut h, &msg[pos..pos + n])
                                    .await
                                    .unwrap();
                                pos += n;
                                if rng.random_range(0..4) == 0 {
                                    tokio::task::yield_now().await;
                                }
                            }
                            AsyncWriteExt::flush(&mut h).await.unwrap();
                            // Some tasks drop their handle with a batch at the server.
                            if t % 4 == 3 {
                                AsyncWriteExt::write_all(&mut h, &msg).await.unwrap();
                                drop(h);
                                return None;
                            }
                            Some((h.finalize(), reference(&msg)))
                        })
                    })
                    .collect();
                for t in tasks {
                    if let Some((got, want)) = t.await.unwrap() {
                        assert_eq!(got, want);
                    }
                }
            });
            assert_idle(&s, 0);
            // Async writers hand in every full batch and hash when they need a
            // result: on one runtime thread, batches of several tasks meet.
            let st = s.stats();
            if s.batch_bytes() > 100_000 {
                // Every message fits in one batch: hashed on finalize.
                assert_eq!(st.batches, 0, "{}: {st:?}", s.backend());
            } else if s.lanes() > 1 {
                assert!(st.lane_batches > 0, "{}: {st:?}", s.backend());
            } else {
                assert_eq!(st.lane_batches, 0, "{}: {st:?}", s.backend());
            }
        }
    }

    /// One task, no other stream: every batch is handed in (the next one while the
    /// previous is queued) and hashed when the task needs room or the result.
    #[test]
    fn async_single_task_chains_its_batches() {
        let rt = current_thread();
        let s = Server::with_config(Backend::active(), 4096);
        let msg = message(11, 10 * 4096 + 100);
        let s2 = s.clone();
        let d = rt.block_on(async move {
            let mut h = s2.hasher();
            AsyncWriteExt::write_all(&mut h, &msg).await.unwrap();
            AsyncWriteExt::flush(&mut h).await.unwrap();
            assert_eq!(s2.stats().queued, 0, "flush waits for every batch");
            (h.finalize(), reference(&msg))
        });
        assert_eq!(d.0, d.1);
        let st = s.stats();
        // Ten full buffers handed in, one at a time (nothing else to combine with);
        // the last 100 bytes stay in the handle for finalize.
        assert_eq!(st.batches, 10, "{st:?}");
        assert_eq!(st.runs, 10, "{st:?}");
        assert_eq!(st.lane_batches, 0, "{st:?}");
        assert_idle(&s, 0);
    }

    /// One handle written through both interfaces: `AsyncWrite` leaves whole blocks
    /// buffered (or a batch at the server), and blocking writes that hash in place
    /// must take those first.
    #[test]
    fn async_and_blocking_writes_on_one_handle() {
        let rt = current_thread();
        for s in servers() {
            let msg = message(21, 6 * s.batch_bytes() + 1234);
            let mut h = s.hasher();
            let mut pos = 0;
            let mut step = 0;
            while pos < msg.len() {
                let n = [10_000, 3000, 50, 5000, 64, 129][step % 6].min(msg.len() - pos);
                let piece = &msg[pos..pos + n];
                if step % 2 == 0 {
                    h.update(piece);
                } else {
                    rt.block_on(AsyncWriteExt::write_all(&mut h, piece))
                        .unwrap();
                }
                pos += n;
                step += 1;
                assert_eq!(
                    h.finalize(),
                    reference(&msg[..pos]),
                    "{} at {pos}",
                    s.backend()
                );
            }
            rt.block_on(AsyncWriteExt::flush(&mut h)).unwrap();
            assert_eq!(h.finalize(), reference(&msg), "{}", s.backend());
            drop(h);
            assert_idle(&s, 0);
        }
    }

    #[test]
    fn async_and_blocking_writers_together() {
        let s = Server::with_config(Backend::active(), 4096);
        let blocking = {
            let s = s.clone();
            std::thread::spawn(move || {
                let msg = message(5, 500_000);
                let mut h = s.hasher();
                for c in msg.chunks(3000) {
                    h.update(c);
                }
                assert_eq!(h.finalize(), reference(&msg));
            })
        };
        let rt = current_thread();
        let s2 = s.clone();
        rt.block_on(async move {
            let tasks: Vec<_> = (0..6u64)
                .map(|t| {
                    let s = s2.clone();
                    tokio::task::spawn(async move {
                        let msg = message(t, 200_000);
                        let mut h = s.hasher();
                        for c in msg.chunks(5000) {
                            AsyncWriteExt::write_all(&mut h, c).await.unwrap();
                        }
                        AsyncWriteExt::shutdown(&mut h).await.unwrap();
                        assert_eq!(h.finalize(), reference(&msg));
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        });
        blocking.join().unwrap();
        assert_idle(&s, 0);
    }
}
