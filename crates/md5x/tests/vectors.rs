//! Known answers and differential tests: every supported backend against RFC 1321,
//! RustCrypto's md-5, and Python's hashlib (OpenSSL), over many lengths and alignments.

mod common;

use common::{bytes, for_each_backend, hex, md5x_on, reference};
use md5x::{Backend, Md5};
use rand::{Rng, SeedableRng};

/// RFC 1321, appendix A.5.
const RFC1321: &[(&str, &str)] = &[
    ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ("a", "0cc175b9c0f1b6a831c399e269772661"),
    ("abc", "900150983cd24fb0d6963f7d28e17f72"),
    ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    (
        "abcdefghijklmnopqrstuvwxyz",
        "c3fcd3d76192e4007dfb496cca67e13b",
    ),
    (
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "d174ab98d277d9f5a5611c2c9f419d9f",
    ),
    (
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "57edf4a22be3c955ac49da2e2107b67a",
    ),
];

#[test]
fn rfc1321_vectors() {
    for_each_backend(|b| {
        for (input, want) in RFC1321 {
            assert_eq!(hex(&md5x_on(b, input.as_bytes())), *want, "{b}: {input:?}");
        }
    });
    for (input, want) in RFC1321 {
        assert_eq!(md5x::md5(input.as_bytes()).to_string(), *want);
    }
}

#[test]
fn every_length_to_1100_against_md5_crate() {
    let data = bytes(1100, 1);
    for_each_backend(|b| {
        for len in 0..=1100 {
            let msg = &data[..len];
            assert_eq!(md5x_on(b, msg), reference(msg), "{b}: length {len}");
        }
    });
}

/// Python's hashlib (OpenSSL underneath) as a second, unrelated reference.
#[test]
fn every_length_to_1100_against_python_hashlib() {
    let script = "import hashlib,sys\n\
                  d = bytes((i * 7 + 3) % 256 for i in range(1101))\n\
                  sys.stdout.write(''.join(hashlib.md5(d[:n]).hexdigest() + '\\n' for n in range(1101)))";
    let Some(text) = common::python3("every_length_to_1100_against_python_hashlib", script) else {
        return;
    };
    let want: Vec<&str> = text.lines().collect();
    assert_eq!(want.len(), 1101);
    let data: Vec<u8> = (0..1101).map(|i| ((i * 7 + 3) % 256) as u8).collect();
    for_each_backend(|b| {
        for (len, want) in want.iter().enumerate() {
            assert_eq!(hex(&md5x_on(b, &data[..len])), *want, "{b}: length {len}");
        }
    });
}

/// `Digest::to_base64` and `from_base64` against Python's base64 module, for the MD5s
/// of the same 1101 messages: Content-MD5 as Python code computes it.
#[test]
fn base64_against_python() {
    let script = "import base64,hashlib,sys\n\
                  d = bytes((i * 7 + 3) % 256 for i in range(1101))\n\
                  sys.stdout.write(''.join(base64.b64encode(hashlib.md5(d[:n]).digest()).decode() + '\\n' for n in range(1101)))";
    let Some(text) = common::python3("base64_against_python", script) else {
        return;
    };
    let want: Vec<&str> = text.lines().collect();
    assert_eq!(want.len(), 1101);
    let data: Vec<u8> = (0..1101).map(|i| ((i * 7 + 3) % 256) as u8).collect();
    for (len, want) in want.iter().enumerate() {
        let d = md5x::md5(&data[..len]);
        assert_eq!(d.to_base64().as_str(), *want, "length {len}");
        assert_eq!(md5x::Digest::from_base64(want), Ok(d), "length {len}");
    }
}

#[test]
fn random_lengths_up_to_8_mib() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6d64_3578);
    let big = bytes(8 << 20, 2);
    for_each_backend(|b| {
        for _ in 0..12 {
            let len = rng.random_range(0..=big.len());
            let start = rng.random_range(0..=big.len() - len);
            let msg = &big[start..start + len];
            assert_eq!(
                md5x_on(b, msg),
                reference(msg),
                "{b}: length {len} at {start}"
            );
        }
        assert_eq!(md5x_on(b, &big), reference(&big), "{b}: 8 MiB");
    });
}

#[test]
fn unaligned_inputs() {
    let buf = bytes(64 + 4096, 3);
    for_each_backend(|b| {
        for offset in 0..64 {
            for len in [0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 4096] {
                let msg = &buf[offset..offset + len];
                assert_eq!(
                    md5x_on(b, msg),
                    reference(msg),
                    "{b}: offset {offset} len {len}"
                );
            }
        }
    });
}

/// Every fill of the short block (0 to 63 bytes kept) met by every piece size up to two
/// blocks and a bit: each way a piece can top the block up, complete it or not, and leave
/// a tail (the small copies take a path per size class: 1-3, 4-7, 8-15, 16 and up).
#[test]
fn every_kept_length_and_piece_size() {
    let data = bytes(64 + 3 * 131 + 7, 11);
    for kept in 0..64 {
        for piece in 1..=131 {
            let msg = &data[..kept + 3 * piece + 7];
            let mut h = Md5::new();
            h.update(&msg[..kept]);
            for chunk in msg[kept..].chunks(piece) {
                h.update(chunk);
            }
            assert_eq!(
                <[u8; 16]>::from(h.finalize()),
                reference(msg),
                "{kept} bytes kept, then pieces of {piece}"
            );
        }
    }
}

#[test]
fn random_splits_give_the_same_digest() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let data = bytes(20_000, 4);
    for_each_backend(|b| {
        for round in 0..200 {
            let len = rng.random_range(0..data.len());
            let msg = &data[..len];
            let mut h = Md5::with_backend(b);
            let mut at = 0;
            while at < len {
                // Mix empty updates, 1-byte updates, and larger pieces.
                let n = match rng.random_range(0..4) {
                    0 => 0,
                    1 => 1,
                    2 => rng.random_range(0..=130),
                    _ => rng.random_range(0..=5000),
                }
                .min(len - at);
                h.update(&msg[at..at + n]);
                at += n;
            }
            assert_eq!(h.len(), len as u64);
            assert_eq!(
                <[u8; 16]>::from(h.finalize()),
                reference(msg),
                "{b}: round {round}"
            );
        }
    });
}

#[test]
fn byte_at_a_time() {
    let data = bytes(300, 5);
    for_each_backend(|b| {
        let mut h = Md5::with_backend(b);
        for (i, byte) in data.iter().enumerate() {
            assert_eq!(
                <[u8; 16]>::from(h.finalize()),
                reference(&data[..i]),
                "{b}: {i}"
            );
            h.update([*byte]);
        }
    });
}

#[test]
fn finalize_twice_and_continue() {
    for_each_backend(|b| {
        let mut h = Md5::with_backend(b);
        h.update(b"hello ");
        let first = h.finalize();
        assert_eq!(first, h.finalize());
        h.update(b"world");
        assert_eq!(<[u8; 16]>::from(h.finalize()), reference(b"hello world"));
        assert_ne!(first, h.finalize());
    });
}

#[test]
fn reset_starts_over_and_keeps_backend() {
    for_each_backend(|b| {
        let mut h = Md5::with_backend(b);
        h.update(bytes(1000, 6));
        h.reset();
        assert!(h.is_empty());
        assert_eq!(h.backend(), b);
        assert_eq!(h.finalize().to_string(), "d41d8cd98f00b204e9800998ecf8427e");
        h.update(b"abc");
        assert_eq!(h.finalize().to_string(), "900150983cd24fb0d6963f7d28e17f72");
    });
}

#[test]
fn clone_is_independent() {
    let mut a = Md5::new();
    a.update(b"abc");
    let mut b = a.clone();
    b.update(b"def");
    assert_eq!(a.finalize(), md5x::md5(b"abc"));
    assert_eq!(b.finalize(), md5x::md5(b"abcdef"));
    assert_eq!(Md5::default().finalize(), md5x::md5(b""));
}

#[test]
fn io_write_and_copy() {
    use std::io::Write;
    let data = bytes(100_000, 8);
    let mut h = Md5::new();
    std::io::copy(&mut &data[..], &mut h).unwrap();
    assert_eq!(<[u8; 16]>::from(h.finalize()), reference(&data));
    let mut h = Md5::new();
    let tail = "c";
    write!(h, "ab{tail}").unwrap();
    h.flush().unwrap();
    assert_eq!(h.finalize(), md5x::md5(b"abc"));
}

/// More than 4 GiB: the length must not be truncated to 32 bits anywhere.
#[test]
fn more_than_4_gib() {
    let chunk = bytes(1 << 20, 9);
    let total: u64 = (4 << 30) + 77;
    let mut ours = Md5::with_backend(Backend::detected());
    let mut theirs = <md5_ref::Md5 as md5_ref::Digest>::new();
    let mut left = total;
    while left > 0 {
        let n = left.min(chunk.len() as u64 - 3) as usize;
        ours.update(&chunk[..n]);
        md5_ref::Digest::update(&mut theirs, &chunk[..n]);
        left -= n as u64;
    }
    assert_eq!(ours.len(), total);
    let want: [u8; 16] = md5_ref::Digest::finalize(theirs).into();
    assert_eq!(<[u8; 16]>::from(ours.finalize()), want);
}

mod properties {
    use super::common::{for_each_backend, reference};
    use md5x::Md5;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any way of cutting a message into pieces gives the digest of the whole.
        #[test]
        fn split_invariance(data in proptest::collection::vec(any::<u8>(), 0..3000),
                            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12)) {
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
            points.sort_unstable();
            let want = reference(&data);
            for_each_backend(|b| {
                let mut h = Md5::with_backend(b);
                let mut prev = 0;
                for &p in points.iter().chain(std::iter::once(&data.len())) {
                    h.update(&data[prev..p]);
                    prev = p;
                }
                assert_eq!(<[u8; 16]>::from(h.finalize()), want);
                assert_eq!(<[u8; 16]>::from(md5x::md5(&data)), want);
            });
        }
    }
}
