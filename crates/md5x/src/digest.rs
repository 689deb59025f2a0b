//! [`Digest`]: an MD5 result, 16 bytes, with hex and base64 formatting and parsing
//! that never allocate.

use core::fmt;
use core::str::FromStr;

/// A 16-byte MD5 digest.
///
/// `Display` and [`Digest::to_hex`] give 32 lowercase hex digits; [`Digest::from_hex`]
/// (and `FromStr`) accept either case. [`Digest::to_base64`] and
/// [`Digest::from_base64`] give and take the base64 form of HTTP's `Content-MD5`
/// header (which S3 checks uploads against). Comparison with `==` takes the same time
/// whatever the bytes are.
///
/// ```
/// let d = md5x::md5(b"abc");
/// assert_eq!(d.to_string(), "900150983cd24fb0d6963f7d28e17f72");
/// assert_eq!(d, "900150983CD24FB0D6963F7D28E17F72".parse().unwrap());
/// let bytes: [u8; 16] = d.into();
/// assert_eq!(bytes[0], 0x90);
/// ```
#[derive(Clone, Copy)]
pub struct Digest([u8; 16]);

impl Digest {
    /// Wrap 16 bytes.
    pub const fn new(bytes: [u8; 16]) -> Self {
        Digest(bytes)
    }

    /// The digest's bytes.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The digest as 32 lowercase hex digits, in a string on the stack.
    pub fn to_hex(&self) -> HexDigest {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 32];
        for (pair, byte) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 15)];
        }
        HexDigest(out)
    }

    /// Parse 32 hex digits, in either case. Anything else is an error: no whitespace,
    /// no prefix, no other length.
    ///
    /// ```
    /// use md5x::{Digest, ParseDigestError};
    /// assert!(Digest::from_hex("d41d8cd98f00b204e9800998ecf8427e").is_ok());
    /// assert_eq!(Digest::from_hex("d41d"), Err(ParseDigestError::InvalidLength(4)));
    /// ```
    pub fn from_hex(s: impl AsRef<[u8]>) -> Result<Self, ParseDigestError> {
        let s = s.as_ref();
        if s.len() != 32 {
            return Err(ParseDigestError::InvalidLength(s.len()));
        }
        let mut out = [0u8; 16];
        for (i, byte) in out.iter_mut().enumerate() {
            let hi = hex_value(s[2 * i]).ok_or(ParseDigestError::InvalidCharacter(2 * i))?;
            let lo =
                hex_value(s[2 * i + 1]).ok_or(ParseDigestError::InvalidCharacter(2 * i + 1))?;
            *byte = hi << 4 | lo;
        }
        Ok(Digest(out))
    }

    /// The digest in base64 (RFC 4648, padded): 24 characters ending in `==`, the form
    /// of HTTP's `Content-MD5` header (RFC 1864) and of GNU `cksum -a md5 --base64`. On
    /// the stack.
    ///
    /// ```
    /// let d = md5x::md5(b"abc");
    /// assert_eq!(d.to_base64().as_str(), "kAFQmDzST7DWlj99KOF/cg==");
    /// ```
    pub fn to_base64(&self) -> Base64Digest {
        let mut out = [b'='; 24];
        // Each 3 bytes make 4 characters of 6 bits: five such groups, then the last
        // byte alone as 2 characters (its 8 bits and 4 zero bits) and the `==`.
        let mut groups = self.0.chunks(3);
        for (chars, group) in out.chunks_mut(4).zip(&mut groups) {
            let mut bits = [0u8; 3];
            bits[..group.len()].copy_from_slice(group);
            let n = u32::from_be_bytes([0, bits[0], bits[1], bits[2]]);
            for (k, c) in chars.iter_mut().take(group.len() + 1).enumerate() {
                *c = BASE64[(n >> (18 - 6 * k)) as usize & 63];
            }
        }
        Base64Digest(out)
    }

    /// Parse a digest in base64 as [`Digest::to_base64`] writes it: 22 characters of
    /// RFC 4648's alphabet (`A`-`Z`, `a`-`z`, `0`-`9`, `+`, `/`) and `==`. Anything else
    /// is an error: another length, no padding, base64url's `-` and `_`, whitespace, or a
    /// last character whose 4 spare bits are not zero (each digest has one spelling).
    ///
    /// ```
    /// use md5x::{Digest, ParseDigestError};
    /// let d = Digest::from_base64("kAFQmDzST7DWlj99KOF/cg==").unwrap();
    /// assert_eq!(d, md5x::md5(b"abc"));
    /// assert_eq!(Digest::from_base64("kAFQmDzST7DWlj99KOF/cg"), Err(ParseDigestError::InvalidBase64(22)));
    /// ```
    pub fn from_base64(s: impl AsRef<[u8]>) -> Result<Self, ParseDigestError> {
        let s = s.as_ref();
        let bad = ParseDigestError::InvalidBase64;
        // 22 characters of 6 bits: 132 bits, of which the last 4 carry nothing.
        let mut n: u128 = 0;
        for i in 0..22 {
            let c = *s.get(i).ok_or(bad(i))?;
            let v = BASE64.iter().position(|&a| a == c).ok_or(bad(i))? as u128;
            n = if i < 21 {
                n << 6 | v
            } else if v & 15 == 0 {
                n << 2 | v >> 4
            } else {
                return Err(bad(i));
            };
        }
        for i in 22..24 {
            if s.get(i) != Some(&b'=') {
                return Err(bad(i));
            }
        }
        if s.len() > 24 {
            return Err(bad(24));
        }
        Ok(Digest(n.to_be_bytes()))
    }
}

/// RFC 4648's base64 alphabet.
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl PartialEq for Digest {
    /// Constant time: every byte is compared, whatever the first difference.
    fn eq(&self, other: &Self) -> bool {
        let diff = self
            .0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        core::hint::black_box(diff) == 0
    }
}

impl Eq for Digest {}

impl core::hash::Hash for Digest {
    // Consistent with `eq`: equal digests have equal bytes.
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl From<[u8; 16]> for Digest {
    fn from(bytes: [u8; 16]) -> Self {
        Digest(bytes)
    }
}

impl From<Digest> for [u8; 16] {
    fn from(d: Digest) -> Self {
        d.0
    }
}

impl AsRef<[u8]> for Digest {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex().as_str())
    }
}

impl fmt::LowerHex for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.to_hex())
    }
}

impl fmt::UpperHex for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut hex = self.to_hex().0;
        hex.make_ascii_uppercase();
        f.pad(core::str::from_utf8(&hex).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for Digest {
    type Err = ParseDigestError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Digest::from_hex(s)
    }
}

/// The string-like impls of an inline digest text ([`HexDigest`], [`Base64Digest`]):
/// `as_str`, `Deref<Target = str>`, `AsRef<str>`, `Display` (padded as a `str` is) and
/// `Debug` (quoted).
macro_rules! inline_text {
    ($name:ident, $len:literal, $what:literal) => {
        #[doc = concat!($what, " of a [`Digest`], held inline (no allocation).")]
        ///
        /// Dereferences to `&str`.
        #[derive(Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name([u8; $len]);

        impl $name {
            /// The characters as a string slice.
            pub fn as_str(&self) -> &str {
                // Always ASCII: only `Digest`'s own formatting makes one.
                core::str::from_utf8(&self.0).unwrap_or_default()
            }
        }

        impl core::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                self.as_str()
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.as_str(), f)
            }
        }
    };
}

inline_text!(HexDigest, 32, "32 lowercase hex digits");
inline_text!(Base64Digest, 24, "The 24 base64 characters (`==` included)");

/// Why a string is not an MD5 digest in hex ([`Digest::from_hex`]) or base64
/// ([`Digest::from_base64`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseDigestError {
    /// Hex: the input is not 32 bytes long (its length is given).
    InvalidLength(usize),
    /// Hex: the byte at this position is not a hex digit.
    InvalidCharacter(usize),
    /// Base64: the input goes wrong at this byte position (where it is missing, for a
    /// short input; 21 where the last character's spare bits are not zero; 24 for a
    /// long one).
    InvalidBase64(usize),
}

impl fmt::Display for ParseDigestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseDigestError::InvalidLength(n) => {
                write!(f, "an MD5 digest is 32 hex digits, got {n} bytes")
            }
            ParseDigestError::InvalidCharacter(i) => {
                write!(f, "not a hex digit at position {i}")
            }
            ParseDigestError::InvalidBase64(i) => write!(
                f,
                "an MD5 digest in base64 is 22 characters of RFC 4648's alphabet and `==`; \
                 wrong at position {i}"
            ),
        }
    }
}

impl core::error::Error for ParseDigestError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_every_byte_value() {
        for v in 0..=255u8 {
            let d = Digest([v; 16]);
            let hex = d.to_hex();
            assert_eq!(&hex[..2], &format!("{v:02x}"));
            assert_eq!(Digest::from_hex(hex.as_str()), Ok(d));
            assert_eq!(Digest::from_hex(hex.to_ascii_uppercase()), Ok(d));
            assert_eq!(format!("{d:X}"), hex.to_ascii_uppercase());
            assert_eq!(format!("{d:x}"), hex.as_str());
        }
    }

    #[test]
    fn rejects_bad_hex() {
        let good = "d41d8cd98f00b204e9800998ecf8427e";
        assert_eq!(
            Digest::from_hex(""),
            Err(ParseDigestError::InvalidLength(0))
        );
        assert_eq!(
            Digest::from_hex(&good[..31]),
            Err(ParseDigestError::InvalidLength(31))
        );
        assert_eq!(
            Digest::from_hex(format!("{good}0")),
            Err(ParseDigestError::InvalidLength(33))
        );
        for (pos, bad) in [(0, 'g'), (5, ' '), (31, 'z'), (17, '-')] {
            let mut s = good.as_bytes().to_vec();
            s[pos] = bad as u8;
            assert_eq!(
                Digest::from_hex(&s),
                Err(ParseDigestError::InvalidCharacter(pos))
            );
        }
        // Non-ASCII: 'é' is two bytes, so the length is off first.
        assert!(Digest::from_hex(format!("é{}", &good[2..])).is_err());
    }

    #[test]
    fn base64_of_rfc_1321_vectors() {
        // As `openssl md5 -binary | base64` and `cksum -a md5 --base64` print them.
        for (msg, b64) in [
            (&b""[..], "1B2M2Y8AsgTpgAmY7PhCfg=="),
            (b"a", "DMF1ucDxtqgxw5niaXcmYQ=="),
            (b"abc", "kAFQmDzST7DWlj99KOF/cg=="),
            (b"message digest", "+WtpfXy3k41SWi8xqvFh0A=="),
        ] {
            let d = crate::md5(msg);
            assert_eq!(d.to_base64().as_str(), b64);
            assert_eq!(Digest::from_base64(b64), Ok(d));
        }
    }

    /// Each position's 6 bits, read back by hand: the value of character `k`.
    fn sextet(d: &Digest, k: usize) -> usize {
        // Bits 127-6k down to 122-6k of the 128; the last character holds bits 1 and 0
        // and 4 zero bits.
        let v = u128::from_be_bytes(d.0);
        if k < 21 {
            (v >> (122 - 6 * k)) as usize & 63
        } else {
            ((v & 3) << 4) as usize
        }
    }

    #[test]
    fn base64_round_trip_every_character_at_every_position() {
        // 64 digests built to put every character at every position it can take (the
        // k-th of digest i is character (i + k) mod 64; the last, which holds 2 bits of
        // data, A, Q, g or w); then, but under Miri (slow), the 256 digests of one byte
        // repeated and pseudo-random ones (xorshift).
        let mut seen = [[false; 64]; 22];
        let built = (0..64u128).map(|i| {
            let n = (0..21).fold(0u128, |n, k| n << 6 | ((i + k) % 64));
            Digest((n << 2 | (i % 4)).to_be_bytes())
        });
        let mut next = crate::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
        let (repeated, random) = if cfg!(miri) { (0, 0) } else { (256, 4096) };
        let digests: Vec<Digest> = built
            .chain((0..repeated).map(|v| Digest([v as u8; 16])))
            .chain((0..random).map(|_| Digest(core::array::from_fn(|_| next() as u8))))
            .collect();
        for d in digests {
            let e = d.to_base64();
            assert_eq!(e.len(), 24);
            assert!(e.ends_with("=="));
            for (k, c) in e.bytes().take(22).enumerate() {
                let v = BASE64.iter().position(|&a| a == c).expect("alphabet");
                assert_eq!(v, sextet(&d, k), "{e} position {k}");
                seen[k][v] = true;
            }
            assert_eq!(Digest::from_base64(e.as_str()), Ok(d));
            assert_eq!(format!("{e:>26}"), format!("  {e}"));
            assert_eq!(format!("{e:?}"), format!("\"{e}\""));
        }
        for (k, s) in seen.iter().enumerate() {
            let n = s.iter().filter(|&&b| b).count();
            assert_eq!(n, if k == 21 { 4 } else { 64 }, "position {k}");
        }
    }

    #[test]
    fn base64_rejects_what_to_base64_never_writes() {
        let good = "DMF1ucDxtqgxw5niaXcmYQ==";
        assert!(Digest::from_base64(good).is_ok());
        let bad = ParseDigestError::InvalidBase64;
        for (s, err) in [
            ("DMF1ucDxtqgxw5niaXcmYR==", bad(21)), // spare bits set
            ("DMF1ucDxtqgxw5niaXcmYQ=", bad(23)),  // short
            ("DMF1ucDxtqgxw5niaXcmYQ", bad(22)),
            ("", bad(0)),
            ("DMF1ucDxtqgxw5niaXcmYQ===", bad(24)),
            ("DMF1ucDxtqgxw5niaXcmYQAA", bad(22)), // no padding
            ("DMF1ucDxtqgxw5niaXcm-Q==", bad(20)), // base64url's alphabet
            ("DMF1ucDxtqgxw5niaXcm_Q==", bad(20)),
            (" DMF1ucDxtqgxw5niaXcmYQ==", bad(0)),
            ("DMF1ucDxtqgxw5niaXcmYQ==\n", bad(24)),
            ("0cc175b9c0f1b6a831c399e269772661", bad(21)), // hex: its 22nd has spare bits
        ] {
            assert_eq!(Digest::from_base64(s), Err(err), "{s:?}");
        }
        // The 22nd character carries 2 bits and 4 spare ones: of the 64 characters,
        // exactly the 4 with the spare bits clear are read, each as what it encodes.
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let high = Digest::from_base64(good).unwrap().0[15] & !3;
        let mut read = 0;
        for (v, &c) in ALPHABET.iter().enumerate() {
            let s = format!("DMF1ucDxtqgxw5niaXcmY{}==", c as char);
            match Digest::from_base64(&s) {
                Ok(d) => {
                    assert_eq!(v & 15, 0, "{s}");
                    assert_eq!(d.0[15], high | (v >> 4) as u8, "{s}");
                    assert_eq!(d.to_base64().as_str(), s);
                    read += 1;
                }
                Err(e) => assert_eq!((e, v & 15 != 0), (bad(21), true), "{s}"),
            }
        }
        assert_eq!(read, 4);
        // Non-ASCII: é is two bytes, neither of them base64.
        assert_eq!(Digest::from_base64("éMF1ucDxtqgxw5niaXcmYQ=="), Err(bad(0)));
        assert!(bad(7).to_string().contains("position 7"));
    }

    #[test]
    fn equality_sees_every_byte() {
        for i in 0..16 {
            let a = Digest([0; 16]);
            let mut b = [0u8; 16];
            b[i] = 0x80;
            assert_ne!(a, Digest(b));
            assert_eq!(a, Digest([0; 16]));
        }
    }

    #[test]
    fn display_pads() {
        let d = Digest([0xab; 16]);
        assert_eq!(format!("{d:>34}"), format!("  {}", d.to_hex().as_str()));
        // The hex forms take width and fill as `{}` does.
        assert_eq!(format!("{d:*<33x}"), format!("{}*", d.to_hex().as_str()));
        assert_eq!(format!("{d:^34X}"), format!(" {} ", "AB".repeat(16)));
    }
}
