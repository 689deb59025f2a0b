//! `--base64`: a 16-byte digest in RFC 4648 base64 (24 characters with `==`), the form
//! of HTTP's Content-MD5 header (RFC 1864) and of GNU `cksum --base64`.

use md5x::Digest;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The characters `digest` takes in base64.
pub const LEN: usize = 24;

/// `digest` in base64, padded.
pub fn encode(digest: &Digest) -> [u8; LEN] {
    let b: &[u8] = digest.as_ref();
    let mut out = [b'='; LEN];
    // Five groups of 3 bytes give 20 characters; the 16th byte gives 2 and `==`.
    for (i, g) in b.chunks(3).enumerate() {
        let n = g
            .iter()
            .enumerate()
            .fold(0u32, |n, (k, &x)| n | (u32::from(x) << (16 - 8 * k)));
        for k in 0..=g.len() {
            out[4 * i + k] = ALPHABET[(n >> (18 - 6 * k)) as usize & 63];
        }
    }
    out
}

fn value(c: u8) -> Option<u32> {
    ALPHABET.iter().position(|&a| a == c).map(|v| v as u32)
}

/// A digest written in base64 as [`encode`] writes it: 22 characters of the alphabet
/// and `==`. Anything else is `None`, including a last character whose low bits,
/// which carry nothing, are not zero (the one spelling `encode` gives is accepted).
pub fn decode(s: &[u8]) -> Option<Digest> {
    if s.len() != LEN || &s[22..] != b"==" {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, g) in s[..22].chunks(4).enumerate() {
        let mut n = 0u32;
        for (k, &c) in g.iter().enumerate() {
            n |= value(c)? << (18 - 6 * k);
        }
        let bytes = n.to_be_bytes();
        let take = (g.len() * 6) / 8;
        out[3 * i..3 * i + take].copy_from_slice(&bytes[1..1 + take]);
        if g.len() < 4 && n & 0xffff != 0 {
            // The two characters of the last byte leave 4 bits over.
            return None;
        }
    }
    Some(Digest::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // RFC 1321's vectors in the form Content-MD5 gives them (`openssl md5 -binary |
        // base64` and coreutils' `cksum -a md5 --base64` print the same).
        for (msg, b64) in [
            (&b""[..], "1B2M2Y8AsgTpgAmY7PhCfg=="),
            (b"a", "DMF1ucDxtqgxw5niaXcmYQ=="),
            (b"abc", "kAFQmDzST7DWlj99KOF/cg=="),
            (b"message digest", "+WtpfXy3k41SWi8xqvFh0A=="),
        ] {
            let d = md5x::md5(msg);
            assert_eq!(std::str::from_utf8(&encode(&d)).unwrap(), b64);
            assert_eq!(decode(b64.as_bytes()), Some(d));
        }
    }

    #[test]
    fn round_trip_and_every_character() {
        // Pseudo-random digests (xorshift), until every position of the text has held
        // every character it can: all 64, and at the last (2 bits of data) A, Q, g, w.
        let mut seen = [[false; 64]; 22];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..4096 {
            let d = Digest::from(core::array::from_fn(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            }));
            let e = encode(&d);
            for (k, c) in e[..22].iter().enumerate() {
                seen[k][value(*c).expect("alphabet") as usize] = true;
            }
            assert_eq!(&e[22..], b"==");
            assert_eq!(decode(&e), Some(d));
        }
        for (k, s) in seen.iter().enumerate() {
            let n = s.iter().filter(|&&b| b).count();
            assert_eq!(n, if k == 21 { 4 } else { 64 }, "position {k}");
        }
    }

    #[test]
    fn rejects_what_encode_never_writes() {
        let good = *b"DMF1ucDxtqgxw5niaXcmYQ==";
        assert!(decode(&good).is_some());
        let bad: [&[u8]; 7] = [
            b"DMF1ucDxtqgxw5niaXcmYR==", // spare bits set
            b"DMF1ucDxtqgxw5niaXcmYQ=",  // short
            b"DMF1ucDxtqgxw5niaXcmYQ===",
            b"DMF1ucDxtqgxw5niaXcmYQAA", // no padding
            b"DMF1ucDxtqgxw5niaXcm-Q==", // base64url's alphabet
            b"DMF1ucDxtqgxw5niaXcm YQ=",
            b"0cc175b9c0f1b6a831c399e269772661", // hex
        ];
        for b in bad {
            assert_eq!(decode(b), None, "{}", String::from_utf8_lossy(b));
        }
    }
}
