//! [`Digest`]: an MD5 result, 16 bytes, with hex formatting and parsing that never
//! allocate.

use core::fmt;
use core::str::FromStr;

/// A 16-byte MD5 digest.
///
/// `Display` and [`Digest::to_hex`] give 32 lowercase hex digits; [`Digest::from_hex`]
/// (and `FromStr`) accept either case. Comparison with `==` takes the same time whatever
/// the bytes are.
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
}

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

/// 32 lowercase hex digits of a [`Digest`], held inline (no allocation).
///
/// Dereferences to `&str`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HexDigest([u8; 32]);

impl HexDigest {
    /// The hex digits as a string slice.
    pub fn as_str(&self) -> &str {
        // The bytes are always ASCII hex digits, written by `Digest::to_hex`.
        core::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl core::ops::Deref for HexDigest {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for HexDigest {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for HexDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Debug for HexDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Why a string is not an MD5 digest in hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseDigestError {
    /// The input is not 32 bytes long (its length is given).
    InvalidLength(usize),
    /// The byte at this position is not a hex digit.
    InvalidCharacter(usize),
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
