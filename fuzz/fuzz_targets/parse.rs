//! Parsing digests and ETags from any bytes: hex, base64, `str::parse` of `Digest`
//! and `ETag`. Nothing panics; what parses prints back as the one canonical spelling,
//! which parses to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use md5x::chains::ETag;
use md5x::Digest;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(d) = Digest::from_hex(bytes) {
        assert_eq!(bytes.len(), 32);
        let hex = d.to_hex();
        assert!(hex
            .as_str()
            .eq_ignore_ascii_case(std::str::from_utf8(bytes).unwrap()));
        assert_eq!(Digest::from_hex(hex.as_str()), Ok(d));
    }
    if let Ok(d) = Digest::from_base64(bytes) {
        let b64 = d.to_base64();
        assert_eq!(Digest::from_base64(b64.as_str()), Ok(d));
        assert_eq!(
            b64.as_str().as_bytes(),
            bytes,
            "base64 has one spelling of 16 bytes"
        );
    }
    let Ok(s) = std::str::from_utf8(bytes) else {
        return;
    };
    if let Ok(d) = s.parse::<Digest>() {
        assert_eq!(Digest::from_hex(d.to_string()), Ok(d));
    }
    if let Ok(tag) = s.parse::<ETag>() {
        let shown = tag.to_string();
        assert_eq!(shown.parse::<ETag>(), Ok(tag), "{s:?} shown as {shown:?}");
        // The spellings: bare or in S3's double quotes, hex in either case.
        let bare = s
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(s);
        assert!(shown.eq_ignore_ascii_case(bare), "{s:?} shown as {shown:?}");
    }
});
