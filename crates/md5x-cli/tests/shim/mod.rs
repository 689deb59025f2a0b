//! What the tests that preload a library into md5x (`LD_PRELOAD`, to change what its
//! reads return) share: building the library, a C source, with `cc` (which links these
//! tests anyway), and the bytes of their files.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `source`, a C file's text, built as the shared library `dir/name.so`.
pub fn build(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    let lib = dir.join(format!("{name}.so"));
    std::fs::write(&src, source).unwrap();
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-ldl")
        .output()
        .expect("cc (the linker of these tests) runs");
    assert!(
        out.status.success(),
        "cc failed on {name}.c: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

/// `n` bytes of a xorshift sequence that goes on from `seed` (updated).
pub fn noise(n: usize, seed: &mut u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed as u8
        })
        .collect()
}
