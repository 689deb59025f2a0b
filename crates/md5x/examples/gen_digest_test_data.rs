//! Writes the data files that `digest`'s test macros read (tests/data/), computed with
//! RustCrypto's `md-5` as the independent reference:
//!
//!     cargo run -p md5x --example gen_digest_test_data
//!
//! - `md5_kat.blb`: input/output pairs (RFC 1321's vectors and lengths around the block
//!   and padding boundaries), in `blobby`'s format, for `digest::new_test!`.
//! - `md5_serialization.bin`: `md-5`'s serialized state after 65 bytes of 0x13, for
//!   `digest::hash_serialization_test!` (md5x must serialize the same bytes).
use md5_ref::Digest as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut inputs: Vec<Vec<u8>> = [
        "",
        "a",
        "abc",
        "message digest",
        "abcdefghijklmnopqrstuvwxyz",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    for len in [55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000] {
        inputs.push((0..len).map(|i| (i * 31 % 251) as u8).collect());
    }
    let mut blobs = Vec::new();
    for input in &inputs {
        blobs.push(input.clone());
        blobs.push(md5_ref::Md5::digest(input).to_vec());
    }
    let (kat, _) = blobby::encode_blobs(&blobs);
    std::fs::write(dir.join("md5_kat.blb"), kat).expect("write md5_kat.blb");

    let mut h = md5_ref::Md5::new();
    h.update([0x13; 65]);
    let state = digest::common::hazmat::SerializableState::serialize(&h);
    std::fs::write(dir.join("md5_serialization.bin"), state.as_slice())
        .expect("write md5_serialization.bin");
    println!(
        "wrote {} vectors and the serialized state to {}",
        inputs.len(),
        dir.display()
    );
}
