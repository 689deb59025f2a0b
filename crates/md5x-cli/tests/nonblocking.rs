//! Files whose reads honour `O_NONBLOCK`. On Linux md5x's workers open every file with
//! `O_NONBLOCK` (so that a named pipe's open does not wait, see `engine::open_for_worker`);
//! regular files ignore the flag, but a few files do not (`/dev/kmsg`, `/proc/kmsg`, a
//! FUSE file system's), and a read of one of those says `EAGAIN` where md5sum's read
//! waits. md5x must wait too: never report "Resource temporarily unavailable", never
//! lose the bytes read before it, and keep operand order.
//!
//! The first test makes any file such a file: a preloaded library (compiled here with
//! `cc`, which links these tests anyway) answers `EAGAIN` to every Nth read of a
//! descriptor that has `O_NONBLOCK` set, as such a device does when it has nothing yet.
//! The second uses the kernel's own `/dev/kmsg` where it can be read.
#![cfg(target_os = "linux")]

mod shim;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn md5x() -> &'static str {
    env!("CARGO_BIN_EXE_md5x")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("md5x-nonblock-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `read`/`pread` answering EAGAIN to every `MD5X_TEST_EAGAIN_EVERY`th call (counted
/// from `MD5X_TEST_EAGAIN_PHASE`) on a descriptor with O_NONBLOCK set, and one byte
/// appended to `MD5X_TEST_EAGAIN_LOG` for each, so the test knows that some were said.
const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static long every, phase, calls;
static const char *log_path;
static int ready;

static void setup(void) {
    const char *e = getenv("MD5X_TEST_EAGAIN_EVERY");
    const char *p = getenv("MD5X_TEST_EAGAIN_PHASE");
    every = e ? atol(e) : 0;
    phase = p ? atol(p) : 0;
    log_path = getenv("MD5X_TEST_EAGAIN_LOG");
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

static int not_yet(int fd) {
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) setup();
    if (every <= 0) return 0;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || !(fl & O_NONBLOCK)) return 0;
    long k = __atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST);
    if ((k + phase) % every != 0) return 0;
    if (log_path) {
        int l = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (l >= 0) { (void)!write(l, "x", 1); close(l); }
    }
    errno = EAGAIN;
    return 1;
}

/* off64_t: where off_t has 32 bits (i686), pread64's offset has 64 all the same. */
ssize_t pread64(int fd, void *buf, size_t n, off64_t off) {
    static ssize_t (*real)(int, void *, size_t, off64_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t, off64_t))dlsym(RTLD_NEXT, "pread64");
    if (not_yet(fd)) return -1;
    return real(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) { return pread64(fd, buf, n, off); }

ssize_t read(int fd, void *buf, size_t n) {
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    if (not_yet(fd)) return -1;
    return real(fd, buf, n);
}
"#;

fn run(dir: &Path, args: &[&str], shim: Option<(&Path, u32, u32, &Path)>) -> Output {
    let mut c = Command::new(md5x());
    c.current_dir(dir).args(args).env_remove("MD5X_BACKEND");
    if let Some((lib, every, phase, log)) = shim {
        c.env("LD_PRELOAD", lib)
            .env("MD5X_TEST_EAGAIN_EVERY", every.to_string())
            .env("MD5X_TEST_EAGAIN_PHASE", phase.to_string())
            .env("MD5X_TEST_EAGAIN_LOG", log);
    }
    c.stdin(Stdio::null()).output().unwrap()
}

#[test]
fn reads_that_would_wait_are_waited_for() {
    let dir = temp_dir("shim");
    let lib = shim::build(&dir, "eagain", SHIM);
    // Sizes around the arena's reads (64 KiB first, 256 KiB the most a small file
    // holds) and a file the batch's large files read side by side; one named twice.
    let sizes = [
        0usize,
        1,
        100,
        5000,
        65536,
        70000,
        262_144,
        262_145,
        300_000,
        2 << 20,
    ];
    let mut names = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for (i, &n) in sizes.iter().enumerate() {
        let name = format!("f{i}");
        std::fs::write(dir.join(&name), shim::noise(n, &mut seed)).unwrap();
        names.push(name);
    }
    names.push("f3".into());
    let files: Vec<&str> = names.iter().map(String::as_str).collect();
    let sums = run(&dir, &files, None);
    assert!(sums.status.success());
    std::fs::write(dir.join("sums"), &sums.stdout).unwrap();
    // Checked against md5sum where it is: the reference below is md5x without the shim.
    if let Ok(gnu) = Command::new("md5sum")
        .current_dir(&dir)
        .args(&files)
        .output()
    {
        assert_eq!(
            String::from_utf8_lossy(&gnu.stdout),
            String::from_utf8_lossy(&sums.stdout)
        );
    }
    // The modes, and whether a worker reads with O_NONBLOCK still set (small files,
    // read side by side, and the first bytes of the others); in the other modes it is
    // cleared before any read, and the shim has nothing to say.
    let modes: [(&[&str], bool); 5] = [
        (&[], true),
        (&["--etag"], true),
        // Every file in parts: the batch's multipart reads.
        (&["--etag", "--threshold=0", "--part-size=5MiB"], false),
        (&["-a", "md5-p4"], false),
        (&["-c", "sums"], true),
    ];
    let log = dir.join("said");
    let mut failures = Vec::new();
    for (mode, flag_read) in modes {
        let operands: &[&str] = if mode.first() == Some(&"-c") {
            &[]
        } else {
            &files
        };
        for jobs in ["-j1", "-j2", "-j4"] {
            let args: Vec<&str> = [jobs].iter().chain(mode).chain(operands).copied().collect();
            let want = run(&dir, &args, None);
            assert!(want.status.success(), "{args:?} without the shim");
            for (every, phase) in [(1, 0), (2, 0), (2, 1), (3, 1), (5, 2), (7, 3)] {
                let _ = std::fs::remove_file(&log);
                let got = run(&dir, &args, Some((&lib, every, phase, &log)));
                let said = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
                let case = format!("{args:?}, EAGAIN every {every} (phase {phase})");
                if flag_read && said == 0 {
                    failures.push(format!("{case}: the shim said EAGAIN to no read"));
                } else if got.status.code() != Some(0)
                    || got.stdout != want.stdout
                    || !got.stderr.is_empty()
                {
                    failures.push(format!(
                        "{case}: status {:?}\nstdout:\n{}\nwanted:\n{}\nstderr:\n{}",
                        got.status.code(),
                        String::from_utf8_lossy(&got.stdout),
                        String::from_utf8_lossy(&want.stdout),
                        String::from_utf8_lossy(&got.stderr)
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `md5x /dev/null /dev/kmsg`, as md5sum: the first line out, then a read that waits
/// for the kernel's next message (no end, no error).
#[test]
fn dev_kmsg_waits_for_more_as_md5sum_does() {
    if let Err(e) = std::fs::File::open("/dev/kmsg") {
        eprintln!("SKIPPED: /dev/kmsg cannot be read here ({e})");
        return;
    }
    let dir = temp_dir("kmsg");
    let mut progs = vec![md5x().to_string()];
    if Command::new("md5sum").arg("--version").output().is_ok() {
        progs.push("md5sum".into());
    }
    for prog in progs {
        for args in [
            &["/dev/null", "/dev/kmsg"][..],
            &["-j1", "/dev/null", "/dev/kmsg", "/dev/null"],
            &["--etag", "/dev/null", "/dev/kmsg"],
        ] {
            let args = if prog == "md5sum" {
                args.iter()
                    .filter(|a| !a.starts_with('-'))
                    .copied()
                    .collect()
            } else {
                args.to_vec()
            };
            // A reader that falls behind the kernel's ring is told EPIPE and ends (both
            // programs alike): tried again then, a few times.
            let mut tries = 0;
            let err = loop {
                tries += 1;
                match kmsg_case(&prog, &args, &dir.join("out")) {
                    Err(e) if e.contains("Broken pipe") && tries < 4 => {}
                    r => break r.err(),
                }
            };
            assert_eq!(err, None, "{prog} {args:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run `prog args` with its output in `out`: `Err` unless the line for /dev/null is out
/// and it is still running, with nothing on stderr, a moment after.
fn kmsg_case(prog: &str, args: &[&str], out: &Path) -> Result<(), String> {
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = "d41d8cd98f00b204e9800998ecf8427e  /dev/null\n";
    let start = Instant::now();
    while std::fs::read_to_string(out).unwrap() != line
        && start.elapsed() < Duration::from_secs(10)
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Still reading a moment later, as a read that waits is.
    std::thread::sleep(Duration::from_millis(300));
    let status = child.try_wait().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let got = std::fs::read_to_string(out).unwrap();
    if status.is_some() || got != line || !err.is_empty() {
        return Err(format!(
            "ended: {status:?}; stdout {got:?}, want {line:?}; stderr {err:?}"
        ));
    }
    Ok(())
}
