//! md5x::Md5 under RustCrypto's `digest` 0.11 traits: digest's own test macros, HMAC,
//! state serialization compatible with `md-5`, and generic code.

mod common;

use common::{bytes, reference};
use digest::dev::{feed_rand_16mib, fixed_reset_test};
use hex_literal::hex;

// tests/data/ is written by `cargo run -p md5x --example gen_digest_test_data`, from md-5.
digest::new_test!(md5_kat, md5x::Md5, fixed_reset_test);
digest::hash_serialization_test!(md5_serialization, md5x::Md5);

#[test]
fn feed_rand_16mib_known_answer() {
    use digest::Digest;
    let mut h = md5x::Md5::new();
    feed_rand_16mib(&mut h);
    assert_eq!(h.finalize(), hex!("61aec26f1b909578ef638ae02dac0977"));
}

/// Code written against the traits, as users of `md5::Md5` write it.
fn generic_hex<D: digest::Digest>(data: &[u8]) -> Vec<u8> {
    let mut h = D::new();
    h.update(data);
    h.finalize().to_vec()
}

fn dyn_hex(h: &mut dyn digest::DynDigest, data: &[u8]) -> Vec<u8> {
    h.update(data);
    h.finalize_reset().to_vec()
}

#[test]
fn generic_code_takes_md5x_unchanged() {
    for len in [0, 3, 64, 1000] {
        let data = bytes(len, 11);
        let want = reference(&data).to_vec();
        assert_eq!(generic_hex::<md5x::Md5>(&data), want);
        assert_eq!(generic_hex::<md5_ref::Md5>(&data), want);
        let mut boxed: Box<dyn digest::DynDigest> = Box::new(md5x::Md5::new());
        assert_eq!(dyn_hex(boxed.as_mut(), &data), want);
        assert_eq!(dyn_hex(boxed.as_mut(), &data), want, "after finalize_reset");
        assert_eq!(<md5x::Md5 as digest::Digest>::digest(&data).to_vec(), want);
    }
    assert_eq!(<md5x::Md5 as digest::Digest>::output_size(), 16);
    use digest::block_api::AlgorithmName;
    struct Name;
    impl std::fmt::Display for Name {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            md5x::Md5::write_alg_name(f)
        }
    }
    assert_eq!(Name.to_string(), "Md5");
    use digest::const_oid::AssociatedOid;
    assert_eq!(md5x::Md5::OID.to_string(), "1.2.840.113549.2.5");
}

/// HMAC-MD5, RFC 2202 section 2's test cases 1-4, 6 and 7.
#[test]
fn hmac_md5_rfc2202() {
    use hmac::{KeyInit, Mac};
    type HmacMd5 = hmac::Hmac<md5x::Md5>;
    for (key, data, want) in common::hmac_rfc2202() {
        let mut mac = HmacMd5::new_from_slice(&key).unwrap();
        mac.update(&data);
        assert_eq!(mac.finalize().into_bytes()[..], want);
    }
}

/// md5x's serialized state is md-5's, byte for byte, at every buffer fill, and a state
/// serialized by either crate resumes in the other.
#[test]
fn serialized_state_matches_md5_crate() {
    use digest::common::hazmat::SerializableState;
    use digest::Digest;
    let data = bytes(300, 12);
    for len in 0..=data.len() {
        let mut ours = md5x::Md5::new();
        Digest::update(&mut ours, &data[..len]);
        let mut theirs = md5_ref::Md5::new();
        theirs.update(&data[..len]);
        let s = ours.serialize();
        assert_eq!(s.as_slice(), theirs.serialize().as_slice(), "length {len}");
        let mut resumed = md5x::Md5::deserialize(&s).unwrap();
        Digest::update(&mut resumed, b"tail");
        theirs.update(b"tail");
        assert_eq!(Digest::finalize(resumed), theirs.finalize(), "length {len}");
    }
}

#[test]
fn block_core_and_buffer_round_trip() {
    use digest::block_api::{Block, CoreProxy, UpdateCore};
    let data = bytes(1000, 13);
    // A hasher split into core and buffer and put back together loses nothing.
    let mut h = md5x::Md5::new();
    h.update(&data[..130]);
    let (core, buffer) = h.decompose();
    assert_eq!(buffer.get_pos(), 2);
    let back = md5x::Md5::compose(core, buffer);
    assert_eq!(<[u8; 16]>::from(back.finalize()), reference(&data[..130]));
    // The core alone hashes whole blocks.
    let blocks: Vec<Block<md5x::block_api::Md5Core>> = data[..192]
        .chunks_exact(64)
        .map(|c| c.try_into().unwrap())
        .collect();
    let mut core = md5x::block_api::Md5Core::default();
    core.update_blocks(&blocks);
    let h = md5x::Md5::compose(core.clone(), Default::default());
    assert_eq!(<[u8; 16]>::from(h.finalize()), reference(&data[..192]));
    // Reset forgets the blocks and their count (the length in the padding).
    digest::Reset::reset(&mut core);
    core.update_blocks(&blocks[..1]);
    let h = md5x::Md5::compose(core, Default::default());
    assert_eq!(<[u8; 16]>::from(h.finalize()), reference(&data[..64]));
}
