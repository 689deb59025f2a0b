//! Many messages of uneven lengths at once: `hash_many` and `par_hash_many` (every
//! core) on every backend, each lane kernel with 1 to 3 groups (hand-scheduled and
//! generic) and any cut-over to the single-stream kernel, the portable lane shapes,
//! and `update_many` onto hashers that already hold part of their message, against
//! `md-5`.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use md5x::{tuning, Digest, Md5};
use md5x_fuzz::{backends, reference, Cut, MAX_BYTES};

#[derive(Arbitrary, Debug)]
struct Input {
    own: Vec<u8>,
    /// The messages (the same bytes may come twice).
    messages: Vec<Cut>,
    /// Fewest live messages that keep the lanes running.
    min_live: u8,
    /// Where `update_many` cuts each message: bytes fed before it.
    splits: Vec<u16>,
}

fuzz_target!(|input: Input| {
    let mut total = 0;
    let messages: Vec<&[u8]> = input
        .messages
        .iter()
        .take(200)
        .map(|c| c.bytes(&input.own))
        .take_while(|m| {
            total += m.len();
            total <= MAX_BYTES
        })
        .collect();
    let want: Vec<Digest> = messages.iter().map(|m| reference(m)).collect();
    let n = messages.len();
    let min_live = usize::from(input.min_live) % 50;

    assert_eq!(md5x::hash_many(&messages), want, "hash_many");
    assert_eq!(md5x::par_hash_many(&messages), want, "par_hash_many");
    for backend in backends() {
        assert_eq!(md5x::hash_many_with(backend, &messages), want, "{backend}");
        let mut out = vec![Digest::from([0; 16]); n];
        md5x::par_hash_many_into_with(backend, &messages, &mut out);
        assert_eq!(out, want, "{backend}: par_hash_many");
        for groups in 1..=3 {
            let mut out = vec![Digest::from([0; 16]); n];
            if tuning::hash_many_tuned(backend, groups, min_live, &messages, &mut out) {
                assert_eq!(out, want, "{backend}, {groups} groups, cut-over {min_live}");
            }
            let mut out = vec![Digest::from([0; 16]); n];
            if tuning::hash_many_generic(backend, groups, min_live, &messages, &mut out) {
                assert_eq!(
                    out, want,
                    "{backend} generic, {groups} groups, cut-over {min_live}"
                );
            }
        }
    }
    for (width, groups, ternlog) in [(4, 1, false), (8, 2, false), (16, 1, true), (16, 2, true)] {
        let mut out = vec![Digest::from([0; 16]); n];
        assert!(tuning::hash_many_portable_lanes(
            width, groups, ternlog, min_live, &messages, &mut out
        ));
        assert_eq!(
            out, want,
            "portable lanes {width}x{groups}, ternlog {ternlog}"
        );
    }

    // update_many onto hashers holding each message's first bytes, then the rest.
    for backend in backends() {
        let mut hashers = vec![Md5::with_backend(backend); n];
        let mut rests = Vec::with_capacity(n);
        for (i, (h, m)) in hashers.iter_mut().zip(&messages).enumerate() {
            let at = input
                .splits
                .get(i)
                .map_or(0, |&s| usize::from(s).min(m.len()));
            h.update(&m[..at]);
            rests.push(&m[at..]);
        }
        // The rests in two rounds, the second through the same hashers.
        let firsts: Vec<&[u8]> = rests.iter().map(|r| &r[..r.len() / 2]).collect();
        let seconds: Vec<&[u8]> = rests.iter().map(|r| &r[r.len() / 2..]).collect();
        md5x::update_many(&mut hashers, &firsts);
        md5x::update_many(&mut hashers, &seconds);
        let got: Vec<Digest> = hashers.iter().map(Md5::finalize).collect();
        assert_eq!(got, want, "{backend}: update_many");
    }
});
