//! Reads that fail partway through a file, as on a disk with a bad sector: md5x says so
//! for that file as md5sum does (`md5x: NAME: Input/output error`; in check mode also
//! `NAME: FAILED open or read` and the count of such files), prints no sum for it, and
//! goes on over the other operands in order; the exit status is 1.
//!
//! Every way md5x reads a file meets the error: the batch's small files (a read
//! into its arena, short or failing), a file streamed on past the arena, large files
//! read side by side in the lanes, one large file alone (read on a helper thread, or
//! on the hashing thread with `-j1`), standard input, MD5-P(K)'s streams, the ETag's
//! parts (of one file on every core, and of many side by side) and the ETag check's
//! search for an unknown part size.
//!
//! And `-r` over a directory whose listing fails partway, and over one whose entries
//! come without their type.
//!
//! And a checksum list that fails partway: verified up to the failure, its last line
//! cut short included (as md5sum's getline gives it), then `read error`.
//!
//! The failing disk is `tests/shims/read_error.c`, preloaded: reads of a file named
//! `eio-N` fail at byte `N`; the listing of a directory named `unlistable-N` fails
//! after N entries; the entries of one named `untyped...` have no type. The same
//! operands without it are read through, so every error here is the shim's.
#![cfg(target_os = "linux")]

mod common;
mod shim;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const MD5X: &str = env!("CARGO_BIN_EXE_md5x");
const SHIM: &str = include_str!("../../../tests/shims/read_error.c");
const MIB: usize = 1 << 20;

/// The operands, `(name, size)`, in order: good files among failing ones.
const FILES: [(&str, usize); 8] = [
    ("a", 100),
    // The first read fails.
    ("eio-0", 5000),
    // A short read into the arena, then the error.
    ("eio-1000", 5000),
    // Past the arena's first 64 KiB read.
    ("eio-100000", 200_000),
    ("b", 300_000),
    // Past the arena's 256 KiB: the file streams on from the bytes read, then fails.
    ("eio-270000", 300_000),
    ("z", 1),
    // Large: read side by side with others in the lanes (as the last operand, after
    // the small files' batch); alone, on a helper thread (the pipelined reader).
    ("eio-9000000", 20 * MIB),
];

/// A file read through by the ETag check's one-pass search: 30 MiB in 6 MiB parts
/// is 5 parts, and none of the common part sizes (5, 8, 15, 16 MiB, ...) gives 5.
const SEARCHED: (&str, usize) = ("eio-20000000", 30 * MIB);

struct Disk {
    dir: PathBuf,
    lib: PathBuf,
}

impl Disk {
    /// The files in a directory of the test's own (`tag`: the tests run side by side).
    fn new(tag: &str) -> Disk {
        let dir =
            std::env::temp_dir().join(format!("md5x-read-errors-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for (name, size) in FILES.iter().chain([&SEARCHED]) {
            std::fs::write(dir.join(name), shim::noise(*size, &mut seed)).unwrap();
        }
        let lib = shim::build(&dir, "read_error", SHIM);
        Disk { dir, lib }
    }

    /// `md5x args` (argv[0] "md5x") in the directory, with standard input from the
    /// file `stdin` (or empty), with the failing disk or without.
    fn run(&self, failing: bool, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = common::in_dir(MD5X, &self.dir);
        cmd.arg0("md5x").args(args).stdin(match stdin {
            Some(name) => Stdio::from(File::open(self.dir.join(name)).unwrap()),
            None => Stdio::null(),
        });
        if failing {
            cmd.env("LD_PRELOAD", &self.lib);
        }
        cmd.output().expect("run md5x")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn failing(name: &str) -> bool {
    name.starts_with("eio-")
}

/// md5sum's message for a file whose read failed.
fn io_error(name: &str) -> String {
    format!("md5x: {name}: Input/output error\n")
}

/// `Err` with everything about the run unless it wrote `stdout` and `stderr` and
/// exited with `code`.
fn expect(case: &str, got: &Output, stdout: &[u8], stderr: &str, code: i32) -> Result<(), String> {
    if got.stdout == stdout && got.stderr == stderr.as_bytes() && got.status.code() == Some(code) {
        return Ok(());
    }
    Err(format!(
        "{case}: exit {:?} (wanted {code})\nstdout:\n{}wanted:\n{}stderr:\n{}wanted:\n{}",
        got.status.code(),
        String::from_utf8_lossy(&got.stdout),
        String::from_utf8_lossy(stdout),
        String::from_utf8_lossy(&got.stderr),
        stderr
    ))
}

fn args<'a>(jobs: &'a str, mode: &[&'a str], operands: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![jobs];
    v.extend_from_slice(mode);
    v.extend_from_slice(operands);
    v
}

const MODES: [&[&str]; 7] = [
    &[],
    &["--tag"],
    &["-a", "md5-p4"],
    &["--etag"],
    // The large file a single PUT: its MD5, streamed.
    &["--etag", "--threshold=64MiB"],
    // Every file in parts, small ones too.
    &["--etag", "--threshold=0", "--part-size=5MiB"],
    &["--etag", "--part-size=5MiB"],
];

#[test]
fn a_failing_read_fails_that_file_alone() {
    let disk = Disk::new("batch");
    let all: Vec<&str> = FILES.iter().map(|f| f.0).collect();
    let good: Vec<&str> = all.iter().copied().filter(|n| !failing(n)).collect();
    let errors: String = all
        .iter()
        .filter(|n| failing(n))
        .map(|n| io_error(n))
        .collect();
    let mut failures = Vec::new();
    for mode in MODES {
        for jobs in ["-j1", "-j2", "-j4"] {
            let sound = disk.run(false, &args(jobs, mode, &all), None);
            assert!(sound.status.success(), "{jobs} {mode:?} without the shim");
            let want = disk.run(false, &args(jobs, mode, &good), None);
            assert!(want.status.success());
            let got = disk.run(true, &args(jobs, mode, &all), None);
            let case = format!("{jobs} {mode:?}, every file");
            failures.extend(expect(&case, &got, &want.stdout, &errors, 1).err());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_failing_read_of_one_large_file_or_of_stdin() {
    let disk = Disk::new("alone");
    let large = FILES[7].0;
    let mut failures = Vec::new();
    for mode in MODES {
        for jobs in ["-j1", "-j2"] {
            // Alone: with -j2, read on a helper thread while the caller hashes.
            let got = disk.run(true, &args(jobs, mode, &[large]), None);
            let case = format!("{jobs} {mode:?} {large}");
            failures.extend(expect(&case, &got, b"", &io_error(large), 1).err());
            // Standard input, alone and before a file.
            let want = disk.run(false, &args(jobs, mode, &["a"]), None);
            for stdin in [large, "eio-1000"] {
                let got = disk.run(true, &args(jobs, mode, &[]), Some(stdin));
                let case = format!("{jobs} {mode:?} < {stdin}");
                failures.extend(expect(&case, &got, b"", &io_error("-"), 1).err());
                let got = disk.run(true, &args(jobs, mode, &["-", "a"]), Some(stdin));
                let case = format!("{jobs} {mode:?} - a < {stdin}");
                failures.extend(expect(&case, &got, &want.stdout, &io_error("-"), 1).err());
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn check_mode_says_failed_open_or_read() {
    let disk = Disk::new("check");
    let listed = ["a", "eio-1000", "b", "eio-270000", "eio-9000000", "z"];
    let sums = disk.run(false, &listed, None);
    assert!(sums.status.success());
    std::fs::write(disk.path("sums"), &sums.stdout).unwrap();
    // ETags: one at the default part size (found by the search's first pass) and one
    // at 6 MiB (found only by its pass over the uncommon sizes).
    let mut etags = disk
        .run(false, &["--etag", "a", "eio-9000000"], None)
        .stdout;
    let (searched, _) = SEARCHED;
    let six = disk.run(false, &["--etag", "--part-size=6MiB", searched], None);
    etags.extend_from_slice(&six.stdout);
    std::fs::write(disk.path("etags"), &etags).unwrap();
    let sound = disk.run(false, &["--etag", "-c", "etags"], None);
    let found =
        format!("a: OK\neio-9000000: OK (part size 8 MiB)\n{searched}: OK (part size 6 MiB)\n");
    assert_eq!(String::from_utf8_lossy(&sound.stdout), found);

    let verdicts: String = listed
        .iter()
        .map(|n| match failing(n) {
            true => format!("{n}: FAILED open or read\n"),
            false => format!("{n}: OK\n"),
        })
        .collect();
    let errors: String = listed
        .iter()
        .filter(|n| failing(n))
        .map(|n| io_error(n))
        .collect();
    let warning = "md5x: WARNING: 3 listed files could not be read\n";
    let etag_verdicts =
        format!("a: OK\neio-9000000: FAILED open or read\n{searched}: FAILED open or read\n");
    let etag_errors = format!(
        "{}{}md5x: WARNING: 2 listed files could not be read\n",
        io_error("eio-9000000"),
        io_error(searched)
    );
    let mut failures = Vec::new();
    for jobs in ["-j1", "-j2"] {
        let got = disk.run(true, &[jobs, "-c", "sums"], None);
        let case = format!("{jobs} -c sums");
        failures.extend(
            expect(
                &case,
                &got,
                verdicts.as_bytes(),
                &(errors.clone() + warning),
                1,
            )
            .err(),
        );
        // --status: the errors still said, nothing else.
        let got = disk.run(true, &[jobs, "-c", "--status", "sums"], None);
        let case = format!("{jobs} -c --status sums");
        failures.extend(expect(&case, &got, b"", &errors, 1).err());
        let got = disk.run(true, &[jobs, "--etag", "-c", "etags"], None);
        let case = format!("{jobs} --etag -c etags");
        failures.extend(expect(&case, &got, etag_verdicts.as_bytes(), &etag_errors, 1).err());
    }
    // A list that fails partway, past two reads' worth of lines (64 KiB each), inside
    // a line that names `abc`: the lines before are verified, and so is the part read
    // of that one, which names `a` (md5sum's getline gives it as a line), before "read
    // error". (compat.rs checks the same against md5sum through standard input.)
    let line = format!("{}  a\n", &String::from_utf8_lossy(&sums.stdout)[..32]);
    let whole = 4000;
    let cut = line.len() * whole + line.len() - 1;
    let list = format!("eio-{cut}");
    let text = line.repeat(whole) + line.trim_end() + "bc\n" + &line;
    std::fs::write(disk.path(&list), text).unwrap();
    let oks = "a: OK\n".repeat(whole + 1);
    for jobs in ["-j1", "-j2"] {
        let got = disk.run(true, &[jobs, "-c", &list], None);
        let case = format!("{jobs} -c {list}");
        let said = format!("md5x: {list}: read error\n");
        failures.extend(expect(&case, &got, oks.as_bytes(), &said, 1).err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `-r` over a directory whose listing fails partway (the shim's EIO after 3
/// entries): the error said for that directory, the entries listed before it walked as
/// ever, exit 1. And over a directory whose entries come without their type
/// (`DT_UNKNOWN`, as some file systems give them): the same walk as with types, links
/// and the FIFO included.
#[test]
fn recursive_walk_past_a_failing_listing_and_untyped_entries() {
    let disk = Disk::new("walk");
    let top = "unlistable-3";
    std::fs::create_dir_all(disk.path(top).join("sub")).unwrap();
    for i in 0..6 {
        std::fs::write(disk.path(top).join(format!("f{i}")), format!("{i}")).unwrap();
    }
    std::fs::write(disk.path(top).join("sub/y"), "y").unwrap();
    let untyped = disk.path("untyped");
    std::fs::create_dir_all(untyped.join("sub/deeper")).unwrap();
    std::fs::write(untyped.join("f"), "f").unwrap();
    std::fs::write(untyped.join("sub/g"), "g").unwrap();
    std::fs::write(untyped.join("sub/deeper/h"), "h").unwrap();
    std::os::unix::fs::symlink("f", untyped.join("link")).unwrap();
    std::os::unix::fs::symlink("sub", untyped.join("dirlink")).unwrap();
    let fifo = Command::new("mkfifo").arg(untyped.join("fifo")).status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");

    // What the shim leaves of the listing: its first 3 entries, in the order this file
    // system lists them.
    let mut listed: Vec<String> = std::fs::read_dir(disk.path(top))
        .unwrap()
        .take(3)
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    listed.sort();
    let mut failures = Vec::new();
    for mode in [&["-r"][..], &["-r", "-L"]] {
        for jobs in ["-j1", "-j2"] {
            let walk = |failing, dir| disk.run(failing, &args(jobs, mode, &[dir]), None);
            let case = format!("{jobs} {mode:?}");
            let want = walk(false, "untyped");
            let got = walk(true, "untyped");
            let (stderr, code) = (String::from_utf8_lossy(&want.stderr), want.status.code());
            assert!(stderr.contains("fifo"), "{stderr}");
            let untyped_case = case.clone() + " untyped";
            failures
                .extend(expect(&untyped_case, &got, &want.stdout, &stderr, code.unwrap()).err());
            // Each entry listed, on its own, then the directory's error.
            let mut stdout = Vec::new();
            for name in &listed {
                let sub = format!("{top}/{name}");
                stdout.extend(disk.run(false, &args(jobs, mode, &[&sub]), None).stdout);
            }
            assert!(!stdout.is_empty());
            let got = walk(true, top);
            let stderr = format!("md5x: {top}: Input/output error\n");
            failures.extend(expect(&(case + " " + top), &got, &stdout, &stderr, 1).err());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
