//! `hash_many` and `Lanes` on every lane backend this CPU runs, and on the portable lane
//! implementation at 4, 8 and 16 lanes (which is what tests the AVX-512 algorithm's
//! logic, including its `vpternlogd` round functions, on machines without AVX-512).
mod common;

use common::{below, bytes, for_each_backend, reference, Choppy};
use md5x::{tuning, Backend, Digest, Lanes, Slot};

fn zero() -> Digest {
    Digest::new([0; 16])
}

/// Check `hash_many_into_with` (and the portable lane shapes) against md-5.
fn check_all(inputs: &[&[u8]], what: &str) {
    let want: Vec<[u8; 16]> = inputs.iter().map(|m| reference(m)).collect();
    for_each_backend(|b| {
        let got = md5x::hash_many_with(b, inputs);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                <[u8; 16]>::from(*g),
                *w,
                "{what}: message {i} ({} bytes) on {b}",
                inputs[i].len()
            );
        }
        // Every group count, and lanes forced down to a single live message.
        for groups in 1..=3 {
            let mut out = vec![zero(); inputs.len()];
            if tuning::hash_many_tuned(b, groups, 1, inputs, &mut out) {
                for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                    assert_eq!(
                        <[u8; 16]>::from(*g),
                        *w,
                        "{what}: message {i} on {b} x{groups}"
                    );
                }
            }
        }
    });
    for (width, groups, ternlog) in tuning::PORTABLE_LANE_SHAPES {
        let mut out = vec![zero(); inputs.len()];
        assert!(tuning::hash_many_portable_lanes(
            width, groups, ternlog, 1, inputs, &mut out
        ));
        for (i, (g, w)) in out.iter().zip(&want).enumerate() {
            assert_eq!(
                <[u8; 16]>::from(*g),
                *w,
                "{what}: message {i} on portable lanes {width}x{groups} ternlog={ternlog}"
            );
        }
    }
}

#[test]
fn lane_backends_reported() {
    let lane: Vec<Backend> = common::backends()
        .into_iter()
        .filter(|b| b.lanes() > 1)
        .collect();
    eprintln!(
        "md5x lane backends run here: {:?}; AVX-512's algorithm also runs on portable lanes (16, vpternlogd tables)",
        lane
    );
}

/// The x86-64 backends are supported exactly where the CPU has their ISA (the scalar
/// kernel and SSE2 on every x86-64 CPU), as the standard library's detection says: a
/// backend wrongly refused here would leave its kernels out of every test that runs the
/// supported backends.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
#[test]
fn x86_64_backends_supported_where_the_cpu_has_them() {
    assert!(Backend::X86_64.is_supported());
    assert!(Backend::Sse2.is_supported());
    assert_eq!(
        Backend::Avx2.is_supported(),
        std::arch::is_x86_feature_detected!("avx2")
    );
    assert_eq!(
        Backend::Avx512.is_supported(),
        std::arch::is_x86_feature_detected!("avx512f")
    );
    assert!(!Backend::Neon.is_supported());
    assert!(!Backend::Simd128.is_supported());
    assert!(common::backends().contains(&Backend::Sse2));
}

#[test]
fn every_length_0_to_1000_mixed() {
    let data = bytes(1100, 1);
    // Each message is a different length, so lanes end at different blocks.
    let inputs: Vec<&[u8]> = (0..=1000).map(|n| &data[(n * 7) % 97..][..n]).collect();
    check_all(&inputs, "lengths 0..=1000");
    // The same lengths in reverse and shuffled order.
    let mut rev = inputs.clone();
    rev.reverse();
    check_all(&rev, "reversed");
}

#[test]
fn counts_around_the_lane_count() {
    let data = bytes(300_000, 2);
    let lens = [
        0usize, 55, 56, 63, 64, 65, 119, 120, 121, 127, 128, 129, 1000, 4095, 4096, 4097,
    ];
    let mut counts: Vec<usize> = (0..=33).collect();
    counts.extend([47, 48, 49, 97, 300]);
    for count in counts {
        let inputs: Vec<&[u8]> = (0..count)
            .map(|i| {
                let n = lens[(i * 5 + count) % lens.len()];
                &data[i % 61..][..n]
            })
            .collect();
        check_all(&inputs, &format!("{count} messages"));
    }
}

/// The last messages ending in the same run: one still in its whole blocks or its
/// two-block padding (a tail of 56 to 63 bytes) while another ends, so the scalar
/// cut-over takes over lanes in every state (whole blocks left, one padding block or
/// two).
#[test]
fn last_messages_ending_in_one_run() {
    let data = bytes(400, 9);
    for a in 112..=136 {
        for b in (0..=72).chain([120, 127, 128, 184, 190]) {
            let (x, y) = (&data[..a], &data[3..][..b]);
            check_all(&[x, y], &format!("pair {a}, {b}"));
            check_all(&[y, x], &format!("pair {b}, {a}"));
            if b % 8 == 0 {
                check_all(&[x, y, &data[1..][..a - 60]], &format!("three {a}, {b}"));
            }
        }
    }
}

#[test]
fn random_large_unaligned_and_repeated() {
    let data = bytes(3 << 20, 3);
    let mut next = below(0x1234_5678_9abc_def0);
    let mut inputs: Vec<&[u8]> = (0..40)
        .map(|_| {
            let n = next(1 << 20);
            let off = next(4093);
            &data[off..off + n]
        })
        .collect();
    // The same slice given twice, and an empty one between.
    inputs.push(inputs[3]);
    inputs.push(&data[..0]);
    inputs.push(inputs[3]);
    check_all(&inputs, "random large");
}

#[test]
fn lanes_refilled_many_times() {
    // Many short messages and a few long ones: long lanes stay while short ones refill.
    let data = bytes(200_000, 4);
    let inputs: Vec<&[u8]> = (0..500)
        .map(|i| {
            let n = if i % 50 == 0 { 100_000 + i } else { i % 200 };
            &data[i % 13..][..n]
        })
        .collect();
    check_all(&inputs, "refills");
}

#[test]
fn ordered_windows_of_uneven_and_equal_lengths() {
    // More than two of the job manager's ordering windows (1024 messages): uneven
    // lengths (run longest first), then a window of equal ones (run as given), then
    // uneven again, ending in a partial window.
    let data = bytes(20_000, 5);
    let inputs: Vec<&[u8]> = (0..3100usize)
        .map(|i| {
            let n = match i {
                1024..2048 => 130,
                _ if i % 97 == 0 => 5000 + i,
                _ => (i * 7919) % 700,
            };
            &data[i % 11..][..n]
        })
        .collect();
    check_all(&inputs, "ordered windows");
}

#[test]
#[should_panic(expected = "outputs for")]
fn hash_many_into_length_mismatch_panics() {
    let mut out = [zero(); 2];
    md5x::hash_many_into(&[&b"a"[..]], &mut out);
}

#[test]
fn hash_many_default_backend_and_empty() {
    assert!(md5x::hash_many::<&[u8]>(&[]).is_empty());
    let d = md5x::hash_many(&[b"abc"]);
    assert_eq!(d[0].to_string(), "900150983cd24fb0d6963f7d28e17f72");
}

/// `update_many` on every backend: rounds of chunks of random sizes (empty, under a
/// block, whole blocks, large) from unaligned starts; hashers that start with a partial
/// block buffered; inputs that end in different rounds (later rounds give them empty
/// chunks); hashers on other backends than the first one's; counts from 1 to past the
/// widest lanes.
#[test]
fn update_many_random_rounds() {
    let data = bytes(400_000, 17);
    let all = common::backends();
    for_each_backend(|b| {
        for count in [1, 2, 4, 5, 8, 17, 24, 49, 100] {
            let mut next = below(count as u64 * 7919 + b as u64);
            let inputs: Vec<&[u8]> = (0..count)
                .map(|_| {
                    let start = next(64);
                    let n = [0, 1, 55, 64, 119, 1000, 8192, 100_000, next(300_000)][next(9)];
                    &data[start..start + n]
                })
                .collect();
            let mut hashers: Vec<md5x::Md5> = (0..count)
                .map(|i| match i % 3 {
                    2 => md5x::Md5::with_backend(all[i % all.len()]),
                    _ => md5x::Md5::with_backend(b),
                })
                .collect();
            let mut pos = vec![0; count];
            for (i, h) in hashers.iter_mut().enumerate() {
                if next(2) == 0 {
                    pos[i] = next(64).min(inputs[i].len());
                    h.update(&inputs[i][..pos[i]]);
                }
            }
            while pos.iter().zip(&inputs).any(|(p, m)| *p < m.len()) {
                let chunks: Vec<&[u8]> = (0..count)
                    .map(|i| {
                        let n = match next(4) {
                            0 => next(65),
                            1 => 64 * next(40),
                            2 => next(5000),
                            _ => next(70_000),
                        }
                        .min(inputs[i].len() - pos[i]);
                        pos[i] += n;
                        &inputs[i][pos[i] - n..pos[i]]
                    })
                    .collect();
                md5x::update_many(&mut hashers, &chunks);
            }
            for (i, h) in hashers.iter().enumerate() {
                assert_eq!(
                    <[u8; 16]>::from(h.finalize()),
                    reference(inputs[i]),
                    "input {i} of {count} ({} bytes) on {b}",
                    inputs[i].len()
                );
                assert_eq!(h.len(), inputs[i].len() as u64);
            }
        }
    });
}

/// `update_many` on every backend with 64 hashers, one holding each partial-block
/// length 0-63, fed rounds of pieces of one size, every size 1-131, then a last odd
/// piece: pieces that leave the short block short, that fill it (the filled ones are
/// hashed side by side), and that bring whole blocks and a tail after it, all at once
/// from every offset.
#[test]
fn update_many_every_kept_length_and_piece_size() {
    let data = bytes(64 + 3 * 131 + 7 + 64, 23);
    for_each_backend(|b| {
        for piece in 1..=131 {
            // Input `kept` starts `kept` bytes into `data`, so the hashers' data differs.
            let inputs: Vec<&[u8]> = (0..64)
                .map(|kept| &data[kept..2 * kept + 3 * piece + 7])
                .collect();
            let mut hashers = vec![md5x::Md5::with_backend(b); 64];
            for (kept, h) in hashers.iter_mut().enumerate() {
                h.update(&inputs[kept][..kept]);
            }
            for round in 0..4 {
                let chunks: Vec<&[u8]> = (0..64)
                    .map(|kept| {
                        let at = kept + round * piece;
                        let n = if round < 3 { piece } else { 7 };
                        &inputs[kept][at..at + n]
                    })
                    .collect();
                md5x::update_many(&mut hashers, &chunks);
            }
            for (kept, h) in hashers.iter().enumerate() {
                assert_eq!(
                    <[u8; 16]>::from(h.finalize()),
                    reference(inputs[kept]),
                    "{b}: {kept} bytes kept, then pieces of {piece}"
                );
            }
        }
    });
}

/// A reader that says it read more than its buffer holds (which `io::Read` forbids, but
/// safe code can do) gets an `InvalidData` error of its own; the others finish right.
#[test]
fn update_many_from_a_reader_that_overstates_its_reads() {
    enum R<'a> {
        Liar,
        Honest(&'a [u8]),
    }
    impl std::io::Read for R<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self {
                R::Liar => Ok(buf.len() + 1),
                R::Honest(d) => std::io::Read::read(d, buf),
            }
        }
    }
    let data = bytes(300_000, 5);
    let mut readers = vec![R::Honest(&data), R::Liar, R::Honest(&data[7..])];
    let mut hashers = vec![md5x::Md5::new(); 3];
    let results = md5x::update_many_from(&mut hashers, &mut readers);
    assert_eq!(
        results[1].as_ref().unwrap_err().kind(),
        std::io::ErrorKind::InvalidData
    );
    assert!(results[0].is_ok() && results[2].is_ok());
    assert_eq!(<[u8; 16]>::from(hashers[0].finalize()), reference(&data));
    assert_eq!(
        <[u8; 16]>::from(hashers[2].finalize()),
        reference(&data[7..])
    );
}

/// `update_many_from` on every backend: more readers than the lanes (so readers that
/// end make room for the next), of lengths from 0 to past several rounds, giving short
/// reads and `Interrupted`; hashers that start with bytes fed; some readers that fail
/// part way, whose error comes back while the others finish right.
#[test]
fn update_many_from_readers() {
    let data = bytes(700_000, 23);
    for_each_backend(|b| {
        for count in [1, 3, 20, 100] {
            let mut next = below(count as u64 * 131 + b as u64);
            let inputs: Vec<&[u8]> = (0..count)
                .map(|_| {
                    let n = [0, 1, 64, 65_536, 65_537, 200_000, next(600_000)][next(7)];
                    let start = next(64);
                    &data[start..start + n]
                })
                .collect();
            let fails: Vec<Option<usize>> = (0..count)
                .map(|i| (i % 9 == 4 && inputs[i].len() > 1).then(|| next(inputs[i].len() as u64)))
                .collect();
            let mut hashers = vec![md5x::Md5::with_backend(b); count];
            let mut readers: Vec<Choppy> = (0..count)
                .map(|i| {
                    let fed = next(100).min(inputs[i].len());
                    hashers[i].update(&inputs[i][..fed]);
                    Choppy {
                        data: &inputs[i][fed..],
                        pos: 0,
                        seed: i as u64 * 7 + 1,
                        fail_at: fails[i].map(|f| f.saturating_sub(fed)),
                    }
                })
                .collect();
            let results = md5x::update_many_from(&mut hashers, &mut readers);
            for (i, r) in results.iter().enumerate() {
                let failing = readers[i]
                    .fail_at
                    .is_some_and(|f| f < readers[i].data.len());
                match r {
                    Ok(()) => {
                        assert!(!failing, "reader {i} of {count} should have failed on {b}");
                        assert_eq!(
                            <[u8; 16]>::from(hashers[i].finalize()),
                            reference(inputs[i]),
                            "reader {i} of {count} ({} bytes) on {b}",
                            inputs[i].len()
                        );
                    }
                    Err(e) => {
                        assert!(failing, "reader {i} of {count} failed on {b}: {e}");
                        assert_eq!(e.to_string(), "disk on fire");
                    }
                }
            }
        }
    });
}

#[test]
#[should_panic(expected = "2 hashers for 1 inputs")]
fn update_many_length_mismatch_panics() {
    let mut hashers = vec![md5x::Md5::new(); 2];
    md5x::update_many(&mut hashers, &[b"x"]);
}

#[test]
fn update_many_of_nothing() {
    md5x::update_many::<&[u8]>(&mut [], &[]);
    let mut hashers = vec![md5x::Md5::new(); 3];
    md5x::update_many(&mut hashers, &[b"", b"", b""]);
    assert!(hashers.iter().all(|h| h.finalize() == md5x::md5(b"")));
}

/// Feed inputs in random chunks, interleaved across slots, and check every completion.
fn lanes_random(b: Backend, inputs: &[Vec<u8>], seed: u64) {
    let mut next = below(seed);
    let mut lanes: Lanes<usize> = Lanes::with_backend(b);
    let mut open: Vec<(usize, md5x::Slot, usize)> = Vec::new();
    let mut started = 0;
    let mut done: Vec<Option<Digest>> = vec![None; inputs.len()];
    while started < inputs.len() || !open.is_empty() {
        // Open new slots at random moments, up to a few more than the lanes.
        if started < inputs.len()
            && (open.is_empty() || next(3) == 0)
            && open.len() < lanes.lanes() + 3
        {
            open.push((started, lanes.open(started), 0));
            started += 1;
            continue;
        }
        let k = next(open.len() as u64);
        let (i, slot, pos) = &mut open[k];
        let rest = inputs[*i].len() - *pos;
        let n = match next(4) {
            0 => next(65),
            1 => next(9000),
            2 => 64 * next(70),
            _ => next(70_000),
        }
        .min(rest);
        lanes.feed(slot, &inputs[*i][*pos..*pos + n]);
        *pos += n;
        if *pos == inputs[*i].len() && next(2) == 0 {
            let (_, slot, _) = open.swap_remove(k);
            lanes.close(slot);
        }
        if next(50) == 0 {
            lanes.flush();
        }
        // Read only some of the completions at times: the rest must wait for later.
        let read = [0, 1, 2, usize::MAX][next(4)];
        for (t, d) in lanes.completions().take(read) {
            assert!(done[t].replace(d).is_none(), "token {t} completed twice");
        }
    }
    lanes.flush();
    for (t, d) in lanes.completions() {
        assert!(done[t].replace(d).is_none(), "token {t} completed twice");
    }
    assert_eq!(lanes.pending(), 0);
    for (i, d) in done.iter().enumerate() {
        let d = d.unwrap_or_else(|| panic!("input {i} never completed on {b}"));
        assert_eq!(
            <[u8; 16]>::from(d),
            reference(&inputs[i]),
            "input {i} ({} bytes) on {b}",
            inputs[i].len()
        );
    }
}

#[test]
fn lanes_random_chunks_interleaved() {
    let data = bytes(400_000, 5);
    let inputs: Vec<Vec<u8>> = (0..120)
        .map(|i| {
            let n = match i % 4 {
                0 => i,
                1 => 64 * i + 55,
                2 => 9000 + 13 * i,
                _ => (i * 3331) % 300_000,
            };
            data[i % 7..i % 7 + n].to_vec()
        })
        .collect();
    for_each_backend(|b| lanes_random(b, &inputs, 99 + b as u64));
}

/// Closed slots complete once a lane set of them is waiting, without a flush: a
/// caller that only opens, feeds and closes holds a bounded number of them.
#[test]
fn lanes_complete_without_flush() {
    for_each_backend(|b| {
        let mut lanes: Lanes<usize> = Lanes::with_backend(b);
        let mut done = 0;
        for t in 0..1000 {
            let mut s = lanes.open(t);
            lanes.feed(&mut s, &[t as u8; 10]);
            lanes.close(s);
            assert!(
                lanes.pending() <= 2 * lanes.lanes(),
                "{b}: {}",
                lanes.pending()
            );
            for (t, d) in lanes.completions() {
                assert_eq!(<[u8; 16]>::from(d), reference(&[t as u8; 10]), "{b}");
                done += 1;
            }
        }
        assert!(
            done + lanes.pending() == 1000 && done >= 1000 - 2 * lanes.lanes(),
            "{b}"
        );
    });
}

#[test]
fn lanes_dropped_slots_never_complete() {
    for_each_backend(|b| {
        let mut lanes: Lanes<u32> = Lanes::with_backend(b);
        let mut kept = Vec::new();
        for t in 0..40 {
            let mut s = lanes.open(t);
            lanes.feed(&mut s, &[t as u8; 5000]);
            if t % 3 == 0 {
                drop(s); // abandoned
            } else {
                kept.push(s);
            }
        }
        for s in kept {
            lanes.close(s);
        }
        lanes.flush();
        let mut done: Vec<(u32, Digest)> = lanes.completions().collect();
        done.sort_by_key(|d| d.0);
        assert_eq!(done.len(), 26);
        for (t, d) in done {
            assert_ne!(t % 3, 0);
            assert_eq!(d, md5x::md5(&[t as u8; 5000][..]));
        }
        assert_eq!(lanes.pending(), 0, "abandoned slots are reclaimed");
    });
}

/// `par_hash_many` (feature `rayon`): many uneven messages over every core, on every
/// backend, against md-5; also fewer messages than one core's lanes, and none.
#[cfg(feature = "rayon")]
#[test]
fn par_hash_many_every_backend() {
    let data = bytes(3 << 20, 61);
    let mut at = 0;
    let msgs: Vec<&[u8]> = (0..700usize)
        .map(|i| {
            let len = (i * 7919) % 9000 + if i % 50 == 0 { 200_000 } else { 0 };
            let m = &data[at % (1 << 20)..][..len];
            at += 4097;
            m
        })
        .collect();
    let want: Vec<[u8; 16]> = msgs.iter().map(|m| reference(m)).collect();
    for_each_backend(|b| {
        for n in [0, 1, 5, msgs.len()] {
            let mut out = vec![zero(); n];
            md5x::par_hash_many_into_with(b, &msgs[..n], &mut out);
            for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                assert_eq!(<[u8; 16]>::from(*g), *w, "{b}: {n} messages, #{i}");
            }
        }
    });
    let d = md5x::par_hash_many(&msgs);
    assert_eq!(d, md5x::hash_many(&msgs));
}

/// A backend this CPU cannot run is refused even when there is nothing to hash, as
/// `hash_many_into_with` refuses it.
#[cfg(feature = "rayon")]
#[test]
fn par_hash_many_refuses_an_unsupported_backend_without_work() {
    let Some(b) = md5x::Backend::ALL
        .iter()
        .copied()
        .find(|b| !b.is_supported())
    else {
        println!("every backend runs on this CPU: nothing to refuse");
        return;
    };
    let none: [&[u8]; 0] = [];
    let caught = std::panic::catch_unwind(|| md5x::par_hash_many_into_with(b, &none, &mut []));
    let msg = caught.expect_err("an unsupported backend must panic");
    let msg = msg
        .downcast_ref::<String>()
        .map(String::as_str)
        .unwrap_or("");
    assert!(msg.contains("is not supported by this CPU"), "{msg}");
}

/// Close every slot, flush, and the digests in the order of their tokens.
fn closed_in_token_order(
    lanes: &mut Lanes<u8>,
    slots: impl IntoIterator<Item = Slot>,
) -> Vec<[u8; 16]> {
    for slot in slots {
        lanes.close(slot);
    }
    lanes.flush();
    let mut done: Vec<(u8, Digest)> = lanes.completions().collect();
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1.into()).collect()
}

/// `Lanes` slots past 4 GiB, fed a piece at a time from one buffer, so that the test
/// runs where usize has 32 bits too (the test command's i686 run), where no slice
/// reaches 4 GiB: two long slots (two live messages stay in the lanes) of lengths that
/// end off a block's alignment and at its padding's edge, beside a short one, against
/// md-5 fed the same pieces (each long reference on its own thread).
#[cfg(not(miri))]
#[test]
fn lanes_past_4_gib_in_pieces() {
    let chunk = bytes(1 << 20, 11);
    let lens: [u64; 2] = [(4 << 30) + 77, (4 << 30) + 55];
    // Piece k of a long slot: the chunk cut at a length that moves with k.
    let piece = |k: u64| &chunk[..chunk.len() - (k % 64) as usize];
    let pieces = |len: u64| {
        let (mut left, mut k) = (len, 0u64);
        std::iter::from_fn(move || {
            let p = piece(k);
            let n = left.min(p.len() as u64) as usize;
            (left > 0).then(|| {
                (left, k) = (left - n as u64, k + 1);
                &p[..n]
            })
        })
    };
    let want: Vec<[u8; 16]> = std::thread::scope(|s| {
        let refs: Vec<_> = lens
            .map(|len| {
                s.spawn(move || {
                    let mut h = <md5_ref::Md5 as md5_ref::Digest>::new();
                    pieces(len).for_each(|p| md5_ref::Digest::update(&mut h, p));
                    <[u8; 16]>::from(md5_ref::Digest::finalize(h))
                })
            })
            .into_iter()
            .collect();
        refs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let b = Backend::detected();
    let mut lanes: Lanes<u8> = Lanes::with_backend(b);
    let mut slots = [lanes.open(0), lanes.open(1), lanes.open(2)];
    lanes.feed(&mut slots[0], b"abc");
    let (mut a, mut c) = (pieces(lens[0]), pieces(lens[1]));
    loop {
        let (pa, pc) = (a.next(), c.next());
        if pa.is_none() && pc.is_none() {
            break;
        }
        if let Some(p) = pa {
            lanes.feed(&mut slots[1], p);
        }
        if let Some(p) = pc {
            lanes.feed(&mut slots[2], p);
        }
    }
    let done = closed_in_token_order(&mut lanes, slots);
    assert_eq!(done, [reference(b"abc"), want[0], want[1]], "Lanes on {b}");
}

/// Messages past 4 GiB in the lanes: `hash_many` and `Lanes` keep lengths in 64 bits
/// (block counts, the padding's bit length). A zeroed allocation is read from the
/// kernel's zero page, so 4 GiB here costs time, not memory (hence Unix only: Windows
/// commits it). Two long messages, so that both are still in the lanes when they end
/// (one alone is handed to the scalar hasher): one off a block's alignment whose tail
/// needs a second padding block, one whose tail takes its padding in its last block;
/// short messages end early beside them. On the detected backend only: the job
/// manager's arithmetic is the same for every lane backend, and each 4 GiB costs
/// seconds (the scalar backends' streaming hasher has `vectors.rs`' `more_than_4_gib`).
#[cfg(all(unix, target_pointer_width = "64", not(miri)))]
#[test]
fn past_4_gib_in_the_lanes() {
    let long = (4usize << 30) + 64 + 57;
    let zeros = vec![0u8; long + 3];
    let (big, big2) = (&zeros[3..], &zeros[..long - 70]);
    // The references side by side: md-5 takes seconds a message.
    let (want, want2) = std::thread::scope(|s| {
        let other = s.spawn(|| reference(big2));
        (reference(big), other.join().unwrap())
    });
    let small = &zeros[..1000];
    let want_small = reference(small);
    let b = Backend::detected();
    let got = md5x::hash_many_with(b, &[small, big, b"abc", big2, small]);
    let got: Vec<[u8; 16]> = got.into_iter().map(<[u8; 16]>::from).collect();
    let abc = reference(b"abc");
    assert_eq!(
        got,
        [want_small, want, abc, want2, want_small],
        "hash_many on {b}"
    );
    // Lanes, fed in pieces of 1 GiB and a few bytes, beside a short slot.
    let mut lanes: Lanes<u8> = Lanes::with_backend(b);
    let mut slots = [lanes.open(0), lanes.open(1), lanes.open(2)];
    lanes.feed(&mut slots[0], small);
    for (slot, m) in slots[1..].iter_mut().zip([big, big2]) {
        for piece in m.chunks((1 << 30) + 5) {
            lanes.feed(slot, piece);
        }
    }
    let done = closed_in_token_order(&mut lanes, slots);
    assert_eq!(done, [want_small, want, want2], "Lanes on {b}");
}

/// `tuning::file_sizes` (the command's sizes for its batches): a regular file's size, 0
/// for a directory, a missing path and no path, in order, on one thread or several
/// (and where no thread can be started, as on WASI, on this one).
#[test]
fn file_sizes_in_order() {
    let dir = common::scratch("sizes");
    std::fs::create_dir_all(&dir).unwrap();
    let mut want = Vec::new();
    let mut owned = Vec::new();
    for i in 0..7u64 {
        let p = dir.join(format!("s{i}"));
        std::fs::write(&p, vec![1u8; (i * 1000) as usize]).unwrap();
        owned.push(p);
        want.push(i * 1000);
    }
    let missing = dir.join("missing");
    let mut paths: Vec<Option<&std::path::Path>> =
        owned.iter().map(|p| Some(p.as_path())).collect();
    paths.extend([Some(dir.as_path()), Some(missing.as_path()), None]);
    want.extend([0, 0, 0]);
    for threads in [0, 1, 3, 20] {
        assert_eq!(
            tuning::file_sizes(&paths, threads),
            want,
            "{threads} threads"
        );
    }
    assert!(tuning::file_sizes(&[], 2).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
