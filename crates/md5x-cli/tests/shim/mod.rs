//! What the tests that preload a library into md5x (`LD_PRELOAD`, to change what its
//! reads return) share: building the library, a C source, with `cc` (which links these
//! tests anyway; `MD5X_SHIM_CC` names another compiler, one for md5x's target where
//! that is not the machine's own, as the test command's 32-bit run does), and the bytes
//! of their files.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `source`, a C file's text, built as the shared library `dir/name.so`.
pub fn build(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    let lib = dir.join(format!("{name}.so"));
    std::fs::write(&src, source).unwrap();
    let cc = std::env::var_os("MD5X_SHIM_CC").unwrap_or_else(|| "cc".into());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| panic!("{} (the linker of these tests) runs: {e}", cc.display()));
    assert!(
        out.status.success(),
        "{} failed on {name}.c: {}",
        cc.display(),
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
