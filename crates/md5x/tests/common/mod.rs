//! Shared helpers for md5x's integration tests.
//!
//! [`backends`] is the one place that decides which kernels a test runs: every backend
//! this CPU supports. It also reports (once per test binary, on stderr, past the test
//! harness's capture) which backends ran and which this CPU could not run, so a green
//! run never hides an untested kernel.
#![allow(dead_code)]

pub mod doc_vectors;

use md5x::Backend;
use std::io::Write;
use std::sync::Once;

/// Every backend this CPU runs; prints the report the first time it is called.
pub fn backends() -> Vec<Backend> {
    static REPORT: Once = Once::new();
    REPORT.call_once(|| {
        let ran: Vec<&str> = Backend::all_supported().map(Backend::name).collect();
        let skipped: Vec<&str> = Backend::ALL
            .iter()
            .filter(|b| !b.is_supported())
            .map(|b| b.name())
            .collect();
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "md5x backends run here: {}", ran.join(", "));
        if skipped.is_empty() {
            let _ = writeln!(err, "md5x backends this CPU could not run: none");
        } else {
            let _ = writeln!(
                err,
                "md5x backends this CPU could not run: {}",
                skipped.join(", ")
            );
        }
    });
    let all: Vec<Backend> = Backend::all_supported().collect();
    assert!(
        all.contains(&Backend::Portable),
        "the portable backend always runs"
    );
    all
}

/// Run `f` once per supported backend, naming the backend if it panics.
pub fn for_each_backend(mut f: impl FnMut(Backend)) {
    for b in backends() {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(b)));
        if let Err(e) = result {
            eprintln!("failure on backend '{b}'");
            std::panic::resume_unwind(e);
        }
    }
}

/// RustCrypto's md-5: an independent implementation, the reference digest.
pub fn reference(data: &[u8]) -> [u8; 16] {
    use md5_ref::Digest as _;
    md5_ref::Md5::digest(data).into()
}

/// Digest through md5x's streaming hasher on `backend`, in one update.
pub fn md5x_on(backend: Backend, data: &[u8]) -> [u8; 16] {
    let mut h = md5x::Md5::with_backend(backend);
    h.update(data);
    h.finalize().into()
}

/// Deterministic bytes: `len` of them from a seed (xorshift64*).
pub fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// One step of xorshift64 (Marsaglia's 13, 7, 17), the tests' seeded stream where
/// they draw their own numbers: the same on every run, so a failure replays.
pub fn xorshift_step(mut s: u64) -> u64 {
    s ^= s << 13;
    s ^= s >> 7;
    s ^ (s << 17)
}

/// A seeded draw: `below(seed)(m)` is the stream's next number below `m`.
pub fn below(seed: u64) -> impl FnMut(u64) -> usize {
    let mut s = seed | 1;
    move |m| {
        s = xorshift_step(s);
        (s % m) as usize
    }
}

/// Lowercase hex of bytes.
pub fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A reader that gives its bytes in pieces of random sizes, is interrupted now and then,
/// and, when `fail_at` is set, fails once it has given that many bytes.
pub struct Choppy<'a> {
    pub data: &'a [u8],
    pub pos: usize,
    pub seed: u64,
    pub fail_at: Option<usize>,
}

impl std::io::Read for Choppy<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.seed = xorshift_step(self.seed);
        if self.seed.is_multiple_of(7) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let end = self.fail_at.unwrap_or(usize::MAX).min(self.data.len());
        if self.pos >= end && self.fail_at.is_some_and(|f| f < self.data.len()) {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = (1 + self.seed as usize % 100_000)
            .min(buf.len())
            .min(end - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A path of this test process's own in the temporary folder, `md5x-{name}-{id}`,
/// where `id` is the process ID. WASI has neither a temporary folder
/// (`std::env::temp_dir` panics there) nor process IDs: there it is `$TMPDIR` (or
/// `/tmp`), reached through the runner's preopened `/`, and the clock's nanoseconds.
pub fn scratch(name: &str) -> std::path::PathBuf {
    #[cfg(not(target_os = "wasi"))]
    let (dir, id) = (std::env::temp_dir(), u128::from(std::process::id()));
    #[cfg(target_os = "wasi")]
    let (dir, id) = (
        std::env::var_os("TMPDIR").map_or_else(|| "/tmp".into(), std::path::PathBuf::from),
        std::time::SystemTime::UNIX_EPOCH
            .elapsed()
            .map_or(0, |t| t.as_nanos()),
    );
    dir.join(format!("md5x-{name}-{id}"))
}

/// What `python3 -c script` writes on standard output: Python's hashlib is the second,
/// unrelated reference of some tests. Python must be there (a failed start fails the
/// test), except where `MD5X_TEST_NO_PYTHON=1` says there is none to start (the
/// Windows build under Wine, whose processes cannot start Linux programs): then `None`,
/// after a NOT RUN line naming `test`.
pub fn python3(test: &str, script: &str) -> Option<String> {
    if std::env::var_os("MD5X_TEST_NO_PYTHON").is_some_and(|v| v == "1") {
        // Past the harness's capture, as `backends` reports.
        let _ = writeln!(
            std::io::stderr(),
            "NOT RUN: {test} (MD5X_TEST_NO_PYTHON=1: no Python reference here)"
        );
        return None;
    }
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap_or_else(|e| panic!("{test}: python3 is its reference and did not start: {e}"));
    assert!(
        out.status.success(),
        "{test}: python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("python3 wrote UTF-8"))
}

/// HMAC-MD5's known answers, RFC 2202 section 2's test cases 1-4, 6 and 7: (key, data,
/// MAC).
pub fn hmac_rfc2202() -> Vec<(Vec<u8>, Vec<u8>, [u8; 16])> {
    use hex_literal::hex;
    let cases: [(&[u8], &[u8], [u8; 16]); 6] = [
        (
            &[0x0b; 16],
            b"Hi There",
            hex!("9294727a3638bb1c13f48ef8158bfc9d"),
        ),
        (
            b"Jefe",
            b"what do ya want for nothing?",
            hex!("750c783e6ab0b503eaa86e310a5db738"),
        ),
        (
            &[0xaa; 16],
            &[0xdd; 50],
            hex!("56be34521d144c88dbb8c733f0e8b3f6"),
        ),
        (
            &hex!("0102030405060708090a0b0c0d0e0f10111213141516171819"),
            &[0xcd; 50],
            hex!("697eaf0aca3a3aea3a75164746ffaa79"),
        ),
        (
            &[0xaa; 80],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
            hex!("6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd"),
        ),
        (
            &[0xaa; 80],
            b"Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data",
            hex!("6f630fad67cda0ee1fb1f562db3aa53e"),
        ),
    ];
    cases
        .iter()
        .map(|(k, d, m)| (k.to_vec(), d.to_vec(), *m))
        .collect()
}
