//! md5x under RustCrypto's `digest` 0.10 traits (feature `digest010`), against `md-5`
//! 0.10 and `hmac` 0.12: generic and boxed code, the block core in `digest` 0.10's own
//! `CoreWrapper` (what `md-5` 0.10's `Md5` is), and HMAC both ways 0.10 offers.
#![cfg(feature = "digest010")]

mod common;

use common::{bytes, for_each_backend, reference};
use hmac_012::{Hmac, Mac, SimpleHmac};
use md5_010::digest::{core_api::CoreWrapper, Digest, DynDigest, FixedOutput, Update};
use md5x::block_api::Md5Core;

/// `md-5` 0.10's `Md5`, built from md5x's core as `md-5` builds its own.
type Wrapped = CoreWrapper<Md5Core>;

/// Code written against 0.10's traits, as users of `md5::Md5` 0.10 write it.
fn generic<D: Digest>(pieces: &[&[u8]]) -> Vec<u8> {
    let mut h = D::new();
    for p in pieces {
        h.update(p);
    }
    h.finalize().to_vec()
}

/// `data` cut at `cuts` (offsets, any order).
fn cut<'a>(data: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|&c| c.min(data.len())).collect();
    at.sort_unstable();
    let mut pieces = Vec::new();
    let mut from = 0;
    for c in at.into_iter().chain([data.len()]) {
        pieces.push(&data[from..c]);
        from = c;
    }
    pieces
}

#[test]
fn generic_code_on_every_length_and_cut() {
    let data = bytes(300, 21);
    for len in 0..=data.len() {
        let want = reference(&data[..len]).to_vec();
        let seed = bytes(3, len as u64);
        let cuts = [seed[0] as usize, seed[1] as usize + 1, 64, seed[2] as usize];
        let pieces = cut(&data[..len], &cuts);
        assert_eq!(generic::<md5_010::Md5>(&pieces), want, "md-5 0.10, {len}");
        assert_eq!(generic::<md5x::Md5>(&pieces), want, "md5x::Md5, {len}");
        assert_eq!(
            generic::<Wrapped>(&pieces),
            want,
            "CoreWrapper<Md5Core>, {len}"
        );
    }
    // Past several blocks in one update: the core takes them a block at a time.
    let big = bytes(100_000, 22);
    let want = reference(&big).to_vec();
    assert_eq!(generic::<Wrapped>(&cut(&big, &[1, 70_000])), want);
    assert_eq!(<md5x::Md5 as Digest>::digest(&big).to_vec(), want);
}

/// The 0.10 traits on `md5x::Md5` hash on the backend it was made with, each one.
#[test]
fn every_backend_through_the_traits() {
    let data = bytes(5000, 23);
    for_each_backend(|b| {
        for len in [0, 55, 56, 64, 119, 1000, 5000] {
            let mut h = md5x::Md5::with_backend(b);
            Update::update(&mut h, &data[..len]);
            assert_eq!(
                h.finalize_fixed()[..],
                reference(&data[..len]),
                "{b}, {len}"
            );
        }
    });
}

#[test]
fn boxed_resets_and_names() {
    let data = bytes(1000, 24);
    let want = reference(&data).to_vec();
    let hashers: [Box<dyn DynDigest>; 2] = [Box::new(md5x::Md5::new()), Box::new(Wrapped::new())];
    for mut h in hashers {
        for _ in 0..2 {
            h.update(&data);
            assert_eq!(h.finalize_reset().to_vec(), want, "after a reset too");
        }
        h.update(b"dropped");
        h.reset();
        assert_eq!(h.finalize().to_vec(), reference(b"").to_vec());
    }
    let mut h = <md5x::Md5 as Digest>::new();
    Digest::update(&mut h, &data);
    assert_eq!(Digest::finalize_reset(&mut h).to_vec(), want);
    assert_eq!(Digest::finalize(h).to_vec(), reference(b"").to_vec());
    assert_eq!(<md5x::Md5 as Digest>::output_size(), 16);
    // The name and the OID `md-5` 0.10 gives.
    assert_eq!(
        format!("{:?}", Wrapped::new()),
        format!("{:?}", md5_010::Md5::new())
    );
    use md5_010::digest::const_oid::AssociatedOid;
    assert_eq!(md5x::Md5::OID, md5_010::Md5::OID);
    assert_eq!(Md5Core::OID.to_string(), "1.2.840.113549.2.5");
}

#[test]
fn hmac_012_known_answers_and_against_md5_010() {
    for (key, data, want) in common::hmac_rfc2202() {
        let mut mac = Hmac::<Wrapped>::new_from_slice(&key).unwrap();
        Mac::update(&mut mac, &data);
        assert_eq!(mac.finalize().into_bytes()[..], want);
        let mut mac = SimpleHmac::<md5x::Md5>::new_from_slice(&key).unwrap();
        Mac::update(&mut mac, &data);
        assert_eq!(mac.finalize().into_bytes()[..], want);
    }
    // Keys shorter than, as long as and longer than a block, over messages of every
    // length to past two blocks.
    for key_len in [0, 1, 63, 64, 65, 200] {
        let key = bytes(key_len, 25);
        let data = bytes(140, key_len as u64);
        for len in 0..=data.len() {
            let mut theirs = Hmac::<md5_010::Md5>::new_from_slice(&key).unwrap();
            Mac::update(&mut theirs, &data[..len]);
            let want = theirs.finalize().into_bytes();
            let mut ours = Hmac::<Wrapped>::new_from_slice(&key).unwrap();
            Mac::update(&mut ours, &data[..len]);
            assert_eq!(ours.finalize().into_bytes(), want, "key {key_len}, {len}");
            let mut simple = SimpleHmac::<md5x::Md5>::new_from_slice(&key).unwrap();
            Mac::update(&mut simple, &data[..len]);
            assert_eq!(simple.finalize().into_bytes(), want, "key {key_len}, {len}");
        }
    }
}
