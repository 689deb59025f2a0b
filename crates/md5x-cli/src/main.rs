//! `md5x`: a byte-exact drop-in for GNU `md5sum` (coreutils 9.x) that hashes many files
//! at once, plus `-j`, `-r`, a progress bar, `--backend`, `--speed`, sums in base64
//! (`--base64`), and two other sums over standard MD5: MD5-P(K) (`-a md5-p8`) and the
//! S3 multipart ETag (`--etag`).
//!
//! The binary has its own C `main` (`#![no_main]`): Rust's start-up code would reopen
//! closed standard descriptors on /dev/null and ignore SIGPIPE before md5x could see
//! either. md5sum reports a closed stdout or stdin as EBADF and dies of SIGPIPE when
//! its reader goes away, so md5x must know the first and keep the second.
// Not under the test harness, whose own `main` runs the unit tests.
#![cfg_attr(not(test), no_main)]

mod algo;
mod args;
mod check;
mod engine;
mod lines;
mod longpath;
mod progress;
mod quote;
mod speed;
mod walk;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use algo::Algo;
use args::{Item, Opt};
use engine::{Config, Input, Job, Mode};
use lines::{push_line, LineForm};
use progress::Progress;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The most bytes of whole lines standard output gathers into one `write`: POSIX's
/// `PIPE_BUF` on Linux, the most a pipe takes in one piece when several processes write
/// to it.
const ATOMIC_WRITE: usize = 4096;

/// Standard output as md5x writes it: whole lines, gathered into writes of at most
/// [`ATOMIC_WRITE`] bytes (a line longer than that alone), so that no line is split
/// between two writes. md5sum writes a line at a time, and runs of it that share a
/// pipe (`xargs -P4 md5sum | ...`) interleave whole lines; so do md5x's, while it
/// makes a sixtieth of the writes for lines of 70 bytes. A 64 KiB buffer, which the pipe
/// took in pieces of any length, broke lines there.
struct Lines {
    buf: Vec<u8>,
}

impl Lines {
    fn stdout() -> Lines {
        Lines {
            buf: Vec::with_capacity(ATOMIC_WRITE),
        }
    }

    /// Write `b` now. Rust's `Stdout` passes a piece that ends in a newline on in one
    /// write, and holds one that ends in NUL (`-z`) until the flush, which writes it
    /// whole: one write either way, but for a `-z` piece whose names hold a newline
    /// (split there). A duplicate of the descriptor would avoid that, at the cost of
    /// one of the files a low limit on open files leaves (see [`std_state`]).
    fn write_out(b: &[u8]) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(b).and_then(|()| out.flush())
    }

    /// Add one or more whole lines.
    fn write_all(&mut self, line: &[u8]) -> io::Result<()> {
        if self.buf.len() + line.len() > ATOMIC_WRITE {
            self.flush()?;
        }
        if line.len() > ATOMIC_WRITE {
            return Lines::write_out(line);
        }
        self.buf.extend_from_slice(line);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // (What failed is not tried again: the first error is what md5sum reports.)
        let r = Lines::write_out(&self.buf);
        self.buf.clear();
        r
    }
}

/// Standard output with md5sum's error behaviour: the first failure is remembered and
/// reported as `write error` at exit, and the run goes on (a broken pipe ends it by
/// SIGPIPE, unless that signal was ignored at start-up).
pub struct Out {
    w: Lines,
    /// How stdout was left at start-up: closed or open only for reading, every write
    /// is refused (Rust's stdout would take it for a sink).
    state: Std,
    err: Option<io::Error>,
    /// Whether md5sum would still hold output in its buffer: written since the last
    /// message on stderr (md5sum flushes stdout before each). At the end, the close
    /// of a failing stdout then fails again, and md5sum names the error.
    held: bool,
    /// Flush after every write (a terminal, or a progress bar to keep clear of).
    eager: bool,
    progress: Option<Arc<Progress>>,
}

impl Out {
    pub fn write(&mut self, b: &[u8]) {
        self.held = true;
        if self.err.is_some() {
            return;
        }
        if self.state != Std::Usable {
            self.err = Some(io::Error::from_raw_os_error(9));
            return;
        }
        let r = match (&self.progress, self.eager) {
            (Some(p), true) => {
                let w = &mut self.w;
                p.quiet(|| w.write_all(b).and_then(|_| w.flush()))
            }
            (_, true) => self.w.write_all(b).and_then(|_| self.w.flush()),
            _ => self.w.write_all(b),
        };
        self.check(r)
    }

    pub fn flush(&mut self) {
        if self.err.is_some() || self.state != Std::Usable {
            return;
        }
        let r = self.w.flush();
        self.check(r)
    }

    /// Flush ahead of a message on stderr, as md5sum does.
    fn flush_for_message(&mut self) {
        self.flush();
        self.held = false;
    }

    /// Keep the first write error for the end. The work goes on, as md5sum's does
    /// (it finds the error only when it closes stdout): every later error is still
    /// reported. A reader that went away ends md5x by SIGPIPE before this, unless the
    /// signal was ignored when md5x started.
    fn check(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.err = Some(e);
        }
    }
}

/// Everything the modes share: the program name for messages, the locale's charset,
/// standard output.
pub struct Ctx {
    pub prog: Vec<u8>,
    pub utf8: bool,
    pub out: Out,
    pub cfg: Config,
}

impl Ctx {
    /// `prog: MSG` on standard error, after flushing standard output so that the two
    /// interleave as md5sum's do.
    pub fn error(&mut self, msg: &[u8]) {
        self.out.flush_for_message();
        let mut line = Vec::with_capacity(self.prog.len() + msg.len() + 3);
        line.extend_from_slice(&self.prog);
        line.extend_from_slice(b": ");
        line.extend_from_slice(msg);
        line.push(b'\n');
        let write = || {
            // A stderr closed or open only for reading at start-up fails every write.
            let ok = STDERR.load(Ordering::Relaxed) == Std::Usable as u8 && {
                let mut e = io::stderr().lock();
                e.write_all(&line).and_then(|()| e.flush()).is_ok()
            };
            if !ok {
                STDERR_FAILED.store(true, Ordering::Relaxed);
            }
        };
        match &self.cfg.progress {
            Some(p) => p.quiet(write),
            None => write(),
        }
    }

    pub fn q(&self, name: &[u8]) -> Vec<u8> {
        quote::quotef(name, self.utf8)
    }

    /// `prog: 'NAME': msg`, the name quoted as md5sum quotes it in messages.
    pub fn error_at(&mut self, name: &[u8], msg: &str) {
        let mut m = self.q(name);
        m.extend_from_slice(b": ");
        m.extend_from_slice(msg.as_bytes());
        self.error(&m);
    }

    /// `prog: 'NAME': strerror`
    pub fn error_io(&mut self, name: &[u8], e: &io::Error) {
        self.error_at(name, &strerror(e));
    }
}

/// Standard error's state at start-up ([`Std`], as a number).
static STDERR: AtomicU8 = AtomicU8::new(Std::Usable as u8);
/// Whether a message could not be written to stderr: md5sum then exits 1 (its close
/// of stderr fails), whatever else happened.
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// The C library's text for an error, without Rust's " (os error N)".
pub fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(p) if e.raw_os_error().is_some() => s[..p].to_string(),
        _ => s,
    }
}

/// Whether the locale (LC_ALL, else LC_CTYPE, else LANG) uses UTF-8, judged by its
/// name. md5sum asks the C library, which falls back to the C locale when the named
/// one is not installed: there md5sum escapes every byte >= 0x80 in its diagnostics,
/// and md5x still prints the UTF-8 names it can print.
fn locale_is_utf8() -> bool {
    for var in ["LC_ALL", "LC_CTYPE", "LANG"] {
        if let Some(v) = std::env::var_os(var) {
            if !v.is_empty() {
                let v = v.to_string_lossy().to_ascii_lowercase();
                return v.contains("utf-8") || v.contains("utf8");
            }
        }
    }
    false
}

/// Which of the standard descriptors 0, 1 and 2 were closed when the process started
/// (`/proc/self/fd/N` missing; without /proc, none is taken as closed). The closed ones
/// are then opened on /dev/null, lowest first, as Rust's start-up code would have
/// done, so that no file md5x opens later can take their place: writes to a closed
/// stdout and reads of a closed stdin are refused by md5x itself (EBADF, as md5sum),
/// and their names (`/dev/stdin`, `/dev/fd/1`, ...) find no file (`engine::open`).
#[cfg_attr(test, allow(dead_code))]
fn closed_std_fds() -> [bool; 3] {
    if std::fs::metadata("/proc/self/fd").is_err() {
        return [false; 3];
    }
    let closed =
        [0, 1, 2].map(|fd| std::fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_err());
    for _ in closed.iter().filter(|&&c| c) {
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null");
        if let Ok(f) = null {
            // Kept open for the life of the process, in the lowest free slot.
            let _ = std::os::fd::IntoRawFd::into_raw_fd(f);
        }
    }
    closed
}

/// The descriptors above 2 that the process started with (after [`closed_std_fds`]),
/// sorted, for `engine::open`; `None` without /proc. The descriptor that lists
/// them, open while it does, is left out.
#[cfg_attr(test, allow(dead_code))]
fn inherited_fds() -> Option<Vec<u32>> {
    let me = std::fs::read_link("/proc/self").ok()?;
    let listing = std::path::Path::new("/proc").join(me).join("fd");
    let mut fds: Vec<u32> = std::fs::read_dir("/proc/self/fd")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .filter(|fd| {
            std::fs::read_link(format!("/proc/self/fd/{fd}"))
                .ok()
                .as_deref()
                != Some(listing.as_path())
        })
        .collect();
    fds.sort_unstable();
    Some(fds)
}

struct Settings {
    check: bool,
    binary: i8,
    tag: bool,
    zero: bool,
    status: bool,
    warn: bool,
    quiet: bool,
    strict: bool,
    ignore_missing: bool,
    jobs: Option<usize>,
    recursive: bool,
    deref: bool,
    progress: Option<bool>,
    backend: Option<OsString>,
    speed: bool,
    algo: Algo,
    etag: bool,
    part_size: Option<u64>,
    threshold: Option<u64>,
    base64: bool,
    /// The first of --part-size and --threshold given, for the error without --etag.
    etag_opt: Option<&'static str>,
}

fn usage_fail(prog: &[u8], msg: Option<&[u8]>) -> ! {
    let mut e = Vec::new();
    if let Some(m) = msg {
        e.extend_from_slice(prog);
        e.extend_from_slice(b": ");
        e.extend_from_slice(m);
        e.push(b'\n');
    }
    e.extend_from_slice(b"Try '");
    e.extend_from_slice(prog);
    e.extend_from_slice(b" --help' for more information.\n");
    let _ = io::stderr().write_all(&e);
    std::process::exit(1);
}

/// The message for a backend that cannot be used, named by `from` as `raw`: an unknown
/// name is quoted as every other value given (`quote_arg`), so that a control
/// character in it reaches the terminal escaped, and whole (the library's error keeps
/// at most 32 bytes of it, as text).
fn backend_error(from: &str, raw: &[u8], e: &md5x::BackendError) -> Vec<u8> {
    let text = e.to_string();
    let mut m = format!("{from}: ").into_bytes();
    // "unknown backend 'NAME' (known: ...); ...": the list follows the name's last
    // byte, so it is found from the end.
    match (e.backend(), text.rfind("' (known: ")) {
        (None, Some(at)) => {
            m.extend_from_slice(b"unknown backend ");
            m.extend_from_slice(&quote::quote_arg(raw, locale_is_utf8()));
            m.extend_from_slice(&text.as_bytes()[at + 1..]);
        }
        _ => m.extend_from_slice(text.as_bytes()),
    }
    m
}

fn fatal(prog: &[u8], msg: &[u8]) -> ! {
    let mut e = prog.to_vec();
    e.extend_from_slice(b": ");
    e.extend_from_slice(msg);
    e.push(b'\n');
    let _ = io::stderr().write_all(&e);
    std::process::exit(1);
}

/// `--help` and `--version`: print `text`, and exit 0 (see [`write_and_exit`]).
fn print_and_exit(prog: &[u8], text: &str, stdout: Std) -> ! {
    write_and_exit(prog, stdout, |o| {
        o.write_all(text.as_bytes()).and_then(|_| o.flush())
    })
}

/// How a standard descriptor was left when md5x started. Rust's own stdin and stdout
/// take EBADF for the end of the input and for a sink that swallows everything, so md5x
/// looks first: md5sum reports a descriptor that is closed, or open the wrong way, as
/// a read or write error.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Std {
    Usable,
    /// Closed (the runtime then puts /dev/null there).
    Closed,
    /// Open only for the other direction: writing for stdin, reading for stdout.
    WrongWay,
}

/// Descriptor `fd`'s state; `closed` from [`closed_std_fds`]. The access mode comes
/// from `/proc/self/fdinfo` (taken as usable where that cannot be read), so that no
/// descriptor is held for it: a duplicate would cost one of the files a low limit on
/// open files leaves.
#[cfg_attr(test, allow(dead_code))]
fn std_state(fd: u32, closed: bool) -> Std {
    if closed {
        return Std::Closed;
    }
    let mode = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
        .ok()
        .and_then(|info| {
            let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
            u32::from_str_radix(flags.trim(), 8).ok()
        })
        .map(|f| f & 3);
    // O_RDONLY is 0, O_WRONLY 1 (O_RDWR 2 suits both).
    match (fd, mode) {
        (0, Some(1)) | (1 | 2, Some(0)) => Std::WrongWay,
        _ => Std::Usable,
    }
}

/// Run `write` (all of the output of `--help`, `--version` or `--speed`) on standard
/// output, and exit 0; a failed write is reported as md5sum reports it (`write error`,
/// exit 1), also for a stdout that md5x cannot write (see [`Std`]).
fn write_and_exit(
    prog: &[u8],
    stdout: Std,
    write: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>,
) -> ! {
    let r = match stdout {
        Std::Usable => write(&mut io::stdout().lock()),
        _ => Err(io::Error::from_raw_os_error(9)),
    };
    if let Err(e) = r {
        fatal(prog, &write_error(&e, stdout == Std::Closed, false));
    }
    std::process::exit(0);
}

/// md5sum's message for a failed write to stdout. md5sum's stdout is line-buffered:
/// each line's write fails on its own, and when it closes stdout at the end only a
/// stdout closed at start-up fails again (EBADF), so only then is the error named;
/// otherwise (a full disk, a descriptor open only for reading, a broken pipe with
/// SIGPIPE ignored) just "write error". With `-z` (`nul_ended`) no newline flushes the
/// buffer, the last line is still there at the close, which fails as the writes did,
/// and the error is named.
fn write_error(e: &io::Error, stdout_closed: bool, nul_ended: bool) -> Vec<u8> {
    let mut m = b"write error".to_vec();
    if stdout_closed || nul_ended {
        m.extend_from_slice(b": ");
        m.extend_from_slice(strerror(e).as_bytes());
    }
    m
}

fn help(prog: &[u8]) -> String {
    let p = String::from_utf8_lossy(prog);
    format!(
        "Usage: {p} [OPTION]... [FILE]...
Print or check MD5 (128-bit) checksums.

With no FILE, or when FILE is -, read standard input.
  -b, --binary          read in binary mode
  -c, --check           read checksums from the FILEs and check them
      --tag             create a BSD-style checksum
  -t, --text            read in text mode (default)
  -z, --zero            end each output line with NUL, not newline,
                          and disable file name escaping

The following five options are useful only when verifying checksums:
      --ignore-missing  don't fail or report status for missing files
      --quiet           don't print OK for each successfully verified file
      --status          don't output anything, status code shows success
      --strict          exit non-zero for improperly formatted checksum lines
  -w, --warn            warn about improperly formatted checksum lines

md5x extensions:
  -j, --jobs=N          hash with N worker threads (default, and 0: all
                          cores; at most 256, or the core count where more)
  -r, --recursive       hash the files under directory operands (sorted);
                          symbolic links met in the walk are skipped (their
                          count said at the end), and FIFOs, sockets and
                          devices (each one said)
  -L, --dereference     with -r, follow symbolic links
      --progress        always show a progress line on standard error
      --no-progress     never show it (default: shown for long jobs when
                          standard error is a terminal, except with --status)
      --no-mmap         accepted for compatibility; md5x always uses reads
      --backend=NAME    force an MD5 kernel (as MD5X_BACKEND does)
      --speed           measure every kernel this CPU runs, and exit
  -a, --algorithm=NAME  md5 (default), md5-p4, md5-p8 or md5-p16 (any case):
                          MD5-P(K), K interleaved MD5 chains hashed again;
                          not an MD5 of the file (tag MD5-P4, MD5-P8, ...)
      --base64          write sums in base64, not hex (24 characters, as
                          HTTP's Content-MD5 and cksum --base64 give them);
                          with -c, read sums in either form
      --etag            print the S3 ETag of each file: its MD5 below the
                          multipart threshold, else hex-N for N parts
      --part-size=SIZE  ETag part size (default 8MiB, as the AWS CLI)
      --threshold=SIZE  ETag multipart threshold (default 8MiB; 0: every file
                          in parts, an empty one too)
                        SIZE is bytes, with an optional suffix (any case):
                          KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024,
                          as the AWS CLI reads K, M, G, T), KB, MB, GB, TB
                          (powers of 1000); S3 takes parts of 5MiB to 5GiB,
                          10000 at most: other settings are an error for a
                          file at or above the threshold, never an ETag, as
                          is a file over 5GiB below it (one PUT takes 5GiB)
                        With -c, lines tagged MD5-P4/8/16 or ETAG are checked
                          as such whatever -a says; untagged lines use -a or
                          --etag.  An ETag hex-N checked without --part-size
                          is tried with each part size that gives N parts:
                          the common sizes, a read each, then up to 256
                          others in one more read; standard
                          input is read once, for the common sizes only.
                          A FAILED there comes with a note on standard
                          error of what the search could not try

      --help        display this help and exit
      --version     output version information and exit

The sums are computed as described in RFC 1321.  MD5 is broken as a
cryptographic hash: use it to detect accidental corruption only.
When checking, the input should be a former output of this program.
The default mode is to print a line with: checksum, a space,
a character indicating input mode ('*' for binary, ' ' for text
or where binary is insignificant), and name for each FILE.

There is no difference between binary mode and text mode on GNU systems.
"
    )
}

/// The process entry point (see the crate docs for why it is not Rust's `main`).
/// Arguments are read with `std::env::args_os`, which std fills in on Linux whatever
/// the entry point.
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    let closed = closed_std_fds();
    if let Some(fds) = inherited_fds() {
        let _ = engine::INHERITED.set(fds);
    }
    // A panic must not unwind out of a C function (that aborts the process): it ends
    // md5x with Rust's usual status 101, after the panic message.
    std::panic::catch_unwind(|| -> std::ffi::c_int { run(closed) }).unwrap_or(101)
}

#[cfg_attr(test, allow(dead_code))]
fn run(closed: [bool; 3]) -> ! {
    let stdout = std_state(1, closed[1]);
    STDERR.store(std_state(2, closed[2]) as u8, Ordering::Relaxed);
    let mut argv: Vec<OsString> = std::env::args_os().collect();
    let prog = if argv.is_empty() {
        b"md5x".to_vec()
    } else {
        argv.remove(0).into_vec()
    };

    let mut s = Settings {
        check: false,
        binary: -1,
        tag: false,
        zero: false,
        status: false,
        warn: false,
        quiet: false,
        strict: false,
        ignore_missing: false,
        jobs: None,
        recursive: false,
        deref: false,
        progress: None,
        backend: None,
        speed: false,
        algo: Algo::Md5,
        etag: false,
        part_size: None,
        threshold: None,
        base64: false,
        etag_opt: None,
    };
    let mut operands: Vec<OsString> = Vec::new();
    for item in args::parse(&argv) {
        let (opt, val) = match item {
            Err(args::UsageError(m)) => usage_fail(&prog, Some(&m)),
            Ok(Item::Operand(o)) => {
                operands.push(o);
                continue;
            }
            Ok(Item::Opt(o, v)) => (o, v),
        };
        match opt {
            Opt::Binary => s.binary = 1,
            Opt::Text => s.binary = 0,
            Opt::Check => s.check = true,
            Opt::IgnoreMissing => s.ignore_missing = true,
            Opt::Quiet => (s.status, s.warn, s.quiet) = (false, false, true),
            Opt::Status => (s.status, s.warn, s.quiet) = (true, false, false),
            Opt::Warn => (s.status, s.warn, s.quiet) = (false, true, false),
            Opt::Strict => s.strict = true,
            Opt::Tag => {
                s.tag = true;
                s.binary = 1;
            }
            Opt::Zero => s.zero = true,
            Opt::Help => print_and_exit(&prog, &help(&prog), stdout),
            Opt::Version => print_and_exit(
                &prog,
                &format!(
                    "md5x {VERSION}\nA GNU md5sum-compatible MD5 tool (md5sum 9.7 behaviour).\n\
                 License: MIT OR Apache-2.0.\n"
                ),
                stdout,
            ),
            Opt::Jobs => {
                let v = val.unwrap_or_default();
                // Read as 64 bits whatever the word size, so that a number takes the
                // same meaning on every machine (anything past the cap is the cap).
                match v.to_str().and_then(|t| t.trim().parse::<u64>().ok()) {
                    Some(n) => s.jobs = Some(usize::try_from(n).unwrap_or(usize::MAX)),
                    None => {
                        let mut m = b"invalid number of jobs: ".to_vec();
                        m.extend_from_slice(&quote::quote_arg(v.as_bytes(), locale_is_utf8()));
                        usage_fail(&prog, Some(&m));
                    }
                }
            }
            Opt::Recursive => s.recursive = true,
            Opt::Dereference => s.deref = true,
            Opt::Progress => s.progress = Some(true),
            Opt::NoProgress => s.progress = Some(false),
            Opt::NoMmap => {}
            Opt::Backend => s.backend = val,
            Opt::Speed => s.speed = true,
            Opt::Algorithm => {
                let v = val.unwrap_or_default();
                match algo::parse_algorithm(v.as_bytes()) {
                    Some(a) => s.algo = a,
                    None => {
                        // As GNU's argmatch words it (cksum -a).
                        let mut m = b"invalid argument ".to_vec();
                        m.extend_from_slice(&quote::quote_arg(v.as_bytes(), locale_is_utf8()));
                        m.extend_from_slice(b" for '--algorithm'\nValid arguments are:");
                        for (name, _) in algo::ALGORITHMS {
                            m.extend_from_slice(format!("\n  - '{name}'").as_bytes());
                        }
                        usage_fail(&prog, Some(&m));
                    }
                }
            }
            Opt::Etag => s.etag = true,
            Opt::Base64 => s.base64 = true,
            Opt::PartSize | Opt::Threshold => {
                let v = val.unwrap_or_default();
                let (what, name) = if opt == Opt::PartSize {
                    ("part size", "--part-size")
                } else {
                    ("threshold", "--threshold")
                };
                // A threshold may be 0 (every file in parts); a part size may not.
                match algo::parse_size(v.as_bytes()) {
                    Some(n) if opt == Opt::PartSize && n > 0 => s.part_size = Some(n),
                    Some(n) if opt == Opt::Threshold => s.threshold = Some(n),
                    _ => {
                        let mut m = format!("invalid {what}: ").into_bytes();
                        m.extend_from_slice(&quote::quote_arg(v.as_bytes(), locale_is_utf8()));
                        m.extend_from_slice(if opt == Opt::PartSize {
                            &b" (a positive number of bytes"[..]
                        } else {
                            b" (a number of bytes"
                        });
                        m.extend_from_slice(
                            b", with an optional suffix: \
                              K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB, TB)",
                        );
                        usage_fail(&prog, Some(&m));
                    }
                }
                s.etag_opt.get_or_insert(name);
            }
        }
    }

    // md5sum's checks, in md5sum's order.
    let bad = |m: &str| -> ! { usage_fail(&prog, Some(m.as_bytes())) };
    if s.tag && s.binary == 0 {
        bad("--tag does not support --text mode");
    }
    if s.zero && s.check {
        bad("the --zero option is not supported when verifying checksums");
    }
    if s.tag && s.check {
        bad("the --tag option is meaningless when verifying checksums");
    }
    if s.binary >= 0 && s.check {
        bad("the --binary and --text options are meaningless when verifying checksums");
    }
    if s.ignore_missing && !s.check {
        bad("the --ignore-missing option is meaningful only when verifying checksums");
    }
    if s.status && !s.check {
        bad("the --status option is meaningful only when verifying checksums");
    }
    if s.warn && !s.check {
        bad("the --warn option is meaningful only when verifying checksums");
    }
    if s.quiet && !s.check {
        bad("the --quiet option is meaningful only when verifying checksums");
    }
    if s.strict && !s.check {
        bad("the --strict option is meaningful only when verifying checksums");
    }
    // md5x's.
    if s.recursive && s.check {
        bad("the --recursive option is meaningless when verifying checksums");
    }
    if s.deref && !s.recursive {
        // (Operands are always followed: only the walk meets links to skip.)
        bad("the --dereference option is meaningful only with --recursive");
    }
    if s.etag && s.algo != Algo::Md5 {
        bad(&format!(
            "the --etag option and --algorithm={} are mutually exclusive",
            s.algo.tag().to_ascii_lowercase()
        ));
    }
    if let Some(name) = s.etag_opt {
        if !s.etag && !s.check {
            bad(&format!(
                "the {name} option is meaningful only with --etag or when verifying checksums"
            ));
        }
    }
    if s.etag && s.base64 {
        bad("the --etag and --base64 options are mutually exclusive (an S3 ETag is hex)");
    }
    if s.etag {
        s.algo = Algo::Etag;
    }
    if s.speed {
        // (It measures the kernels on buffers of its own: a file would be ignored.)
        if let Some(first) = operands.first() {
            let mut m = b"extra operand ".to_vec();
            m.extend_from_slice(&quote::quote_arg(first.as_bytes(), locale_is_utf8()));
            m.extend_from_slice(b" (--speed hashes no files)");
            usage_fail(&prog, Some(&m));
        }
        if s.check {
            bad("the --check option is meaningless with --speed");
        }
    }

    // Which kernel: --backend wins over MD5X_BACKEND; a bad name is an error, never a
    // panic or a silent fallback.
    match &s.backend {
        Some(name) => {
            let r = name
                .to_string_lossy()
                .parse::<md5x::Backend>()
                .and_then(md5x::Backend::force);
            if let Err(e) = r {
                fatal(&prog, &backend_error("--backend", name.as_bytes(), &e));
            }
        }
        None => {
            if let Err(e) = md5x::Backend::from_env() {
                let raw = std::env::var_os("MD5X_BACKEND").unwrap_or_default();
                fatal(&prog, &backend_error("MD5X_BACKEND", raw.as_bytes(), &e));
            }
        }
    }

    if s.speed {
        write_and_exit(&prog, stdout, speed::run);
    }

    let mask = closed.iter().rev().fold(0, |m, &c| m << 1 | u8::from(c));
    engine::CLOSED_STD.store(mask, Ordering::Relaxed);
    engine::STDIN_WRITE_ONLY.store(std_state(0, closed[0]) == Std::WrongWay, Ordering::Relaxed);
    let stdout_tty = io::stdout().is_terminal();

    let jobs = match s.jobs {
        Some(0) | None => md5x::tuning::cores(),
        // (More workers than this only cost: see `max_jobs`.)
        Some(n) => md5x::tuning::cap_jobs(n),
    };
    // (Not by default with --status, which promises no output at all; a terminal
    // run in a pseudo-terminal, `docker run -t` say, would capture the line.)
    let want_progress = s
        .progress
        .unwrap_or_else(|| !s.status && io::stderr().is_terminal());
    let delay = progress_delay(s.progress == Some(true));
    let progress = (want_progress && !s.speed).then(|| Progress::new(delay));

    let mut ctx = Ctx {
        prog: prog.clone(),
        utf8: locale_is_utf8(),
        out: Out {
            w: Lines::stdout(),
            state: stdout,
            err: None,
            held: false,
            eager: stdout_tty || progress.is_some(),
            progress: progress.clone(),
        },
        cfg: Config {
            jobs,
            progress: progress.clone(),
        },
    };

    if operands.is_empty() {
        operands.push(OsString::from("-"));
    }

    let mut ok = true;
    if s.check {
        for f in &operands {
            ok &= check::check_file(&mut ctx, f.as_bytes(), &s_check(&s));
        }
    } else {
        ok = hash_mode(&mut ctx, &operands, &s, progress.as_ref());
    }

    if let Some(p) = &progress {
        p.finish();
    }
    if engine::READ_STDIN.load(Ordering::Relaxed) && engine::stdin_closed() {
        // (Then, as md5sum, on to the check of stdout.)
        ctx.error(b"standard input: Bad file descriptor");
        ok = false;
    }
    let held = ctx.out.held;
    ctx.out.flush();
    if let Some(e) = ctx.out.err.take() {
        let m = write_error(&e, ctx.out.state == Std::Closed, s.zero && held);
        ctx.out.err = Some(e);
        ctx.error(&m);
        std::process::exit(1);
    }
    let stderr_ok = !STDERR_FAILED.load(Ordering::Relaxed);
    std::process::exit(if ok && stderr_ok { 0 } else { 1 });
}

/// When the progress line first shows: at once with `--progress`, else once the job
/// has run a second.
fn progress_delay(forced: bool) -> Duration {
    if forced {
        Duration::ZERO
    } else {
        Duration::from_millis(1000)
    }
}

fn s_check(s: &Settings) -> check::Opts {
    check::Opts {
        status: s.status,
        warn: s.warn,
        quiet: s.quiet,
        strict: s.strict,
        ignore_missing: s.ignore_missing,
        algo: s.algo,
        part_size: s.part_size,
        threshold: s.threshold,
        base64: s.base64,
    }
}

/// What one output line (or message) of hash mode is about.
enum Task {
    Hash(Vec<u8>),
    /// An error: said on stderr, and the exit status is 1.
    Msg(Vec<u8>),
    /// A notice: said on stderr; the exit status is unchanged.
    Note(Vec<u8>),
}

/// The most inputs one engine run takes in hash mode: a walk (`-r`) of a larger tree,
/// or a longer operand list, is hashed a run at a time, so that memory stays bounded
/// (every name held at once took about 270 bytes a file: 53 MB for 200,000 files; 4.6
/// MB now) and the first lines are out before the walk ends, as md5sum's are behind
/// `find | xargs`. Runs of 4,096 and of 16,384 files were level with one run for all
/// 200,000 (a run's workers wait for its last batch: a few hundred microseconds).
const RUN_MAX: usize = 4 * 1024;

/// Standard output's file, where it is a regular one: the last component of its name,
/// and its device and inode.
struct OutFile {
    name: Vec<u8>,
    dev: u64,
    ino: u64,
}

impl OutFile {
    fn of_stdout() -> Option<OutFile> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata("/proc/self/fd/1").ok()?;
        let target = std::fs::read_link("/proc/self/fd/1").ok()?;
        Some(OutFile {
            name: target.file_name()?.as_bytes().to_vec(),
            dev: m.dev(),
            ino: m.ino(),
        })
        .filter(|_| m.is_file())
    }

    /// Whether the input `name` is this file. Only a name that ends in the file's own
    /// name is looked up (a `stat`): every other input costs a comparison. (So another
    /// name for it, a link, is not seen, and is read as any file is.)
    fn is(&self, name: &[u8]) -> bool {
        use std::os::unix::fs::MetadataExt;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(name));
        path.file_name().is_some_and(|n| n.as_bytes() == self.name)
            && longpath::metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == (self.dev, self.ino))
    }
}

fn hash_mode(
    ctx: &mut Ctx,
    operands: &[OsString],
    s: &Settings,
    progress: Option<&Arc<Progress>>,
) -> bool {
    use md5x::chains::limits::DEFAULT_PART_SIZE;
    let mode = match s.algo {
        Algo::Md5 => Mode::Md5,
        Algo::Par(k) => Mode::Par(k),
        Algo::Etag => Mode::Etag {
            part_size: s.part_size.unwrap_or(DEFAULT_PART_SIZE),
            threshold: s.threshold.unwrap_or(DEFAULT_PART_SIZE),
        },
    };
    let job = |input: Input| Some(Job { input, mode });
    let utf8 = ctx.utf8;
    // Each operand once: a directory to walk (`-r`), or an input (`-` is standard input,
    // even where a directory has that name). Looked at once, so the progress line's
    // totals and the runs agree.
    let walked: Vec<bool> = operands
        .iter()
        .map(|op| {
            s.recursive
                && op.as_bytes() != b"-"
                && longpath::metadata(op.as_ref()).is_ok_and(|m| m.is_dir())
        })
        .collect();
    let input = |op: &OsString| match op.as_bytes() {
        b"-" => job(Input::Stdin),
        _ => job(Input::File(PathBuf::from(op))),
    };

    if let Some(p) = progress {
        // The totals: standard input and the named files at once, a walk's files as
        // the line's thread walks the tree ahead (as check mode reads a list ahead).
        // The thread starts once all are added, so that its lines never take the named
        // files for the whole while a walk is still to come.
        let named: Vec<Option<Job>> = operands
            .iter()
            .zip(&walked)
            .filter(|(_, &w)| !w)
            .map(|(op, _)| input(op))
            .collect();
        engine::count_for_progress(p, &named);
        for (op, _) in operands.iter().zip(&walked).filter(|(_, &w)| w) {
            p.add_list(
                walk::Walk::new(op.as_bytes(), s.deref).filter_map(|e| match e {
                    walk::Entry::File(name) => Some(PathBuf::from(OsString::from_vec(name))),
                    _ => None,
                }),
            );
        }
        // (Also with no file: standard input's bytes are counted.)
        p.spawn();
    }

    let form = LineForm {
        tag: s.tag.then(|| s.algo.tag().as_bytes()),
        binary: s.binary == 1,
        delim: if s.zero { b'\0' } else { b'\n' },
    };
    let in_base64 = s.base64;
    let push_sum = |line: &mut Vec<u8>, d: &engine::Sum| {
        if in_base64 {
            line.extend_from_slice(d.digest.to_base64().as_bytes());
        } else {
            d.push_hex(line);
        }
    };
    let mut ok = true;
    let cfg = ctx.cfg.clone();
    let mut line = Vec::with_capacity(256);
    // One engine run over the inputs gathered so far (its workers end with it).
    let mut run = |inputs: Vec<Option<Job>>, tasks: Vec<Task>, flush_first: bool| {
        if flush_first {
            ctx.out.flush();
        }
        let ctx = std::cell::RefCell::new(&mut *ctx);
        engine::run(
            &cfg,
            inputs,
            tasks,
            |task, res| {
                let mut ctx = ctx.borrow_mut();
                match (task, res) {
                    (Task::Msg(m), _) => {
                        ok = false;
                        ctx.error(&m);
                    }
                    (Task::Note(m), _) => ctx.error(&m),
                    (Task::Hash(name), Some(Ok(d))) => {
                        line.clear();
                        push_line(&mut line, &form, &name, |l| push_sum(l, &d));
                        ctx.out.write(&line);
                    }
                    (Task::Hash(name), Some(Err(e))) => {
                        ok = false;
                        ctx.error_io(&name, &e);
                    }
                    (Task::Hash(_), None) => {}
                }
            },
            || ctx.borrow_mut().out.flush(),
        );
    };

    let mut inputs = Vec::with_capacity(operands.len().min(RUN_MAX));
    let mut tasks = Vec::with_capacity(operands.len().min(RUN_MAX));
    // An input that is standard output's own file (`md5x * > sums`, run again where
    // `sums` is): md5sum, which writes a line at a time, hashes the lines before it.
    // So does md5x: what comes before it is hashed and written first, then it alone.
    let out_file = OutFile::of_stdout();
    let is_out = |name: &[u8]| out_file.as_ref().is_some_and(|o| o.is(name));
    fn last_alone(
        run: &mut impl FnMut(Vec<Option<Job>>, Vec<Task>, bool),
        inputs: &mut Vec<Option<Job>>,
        tasks: &mut Vec<Task>,
    ) {
        let last = (inputs.pop(), tasks.pop());
        run(std::mem::take(inputs), std::mem::take(tasks), false);
        if let (Some(i), Some(t)) = last {
            run(vec![i], vec![t], true);
        }
    }
    // Symbolic links the walks skipped: said once at the end, as a count (a tree can
    // hold thousands: a line each would bury the rest).
    let mut links_skipped: u64 = 0;
    for (op, &to_walk) in operands.iter().zip(&walked) {
        let b = op.as_bytes();
        if to_walk {
            for entry in walk::Walk::new(b, s.deref) {
                match entry {
                    walk::Entry::File(name) => {
                        inputs.push(job(Input::File(PathBuf::from(OsString::from_vec(
                            name.clone(),
                        )))));
                        let out = is_out(&name);
                        tasks.push(Task::Hash(name));
                        if out {
                            last_alone(&mut run, &mut inputs, &mut tasks);
                        }
                    }
                    walk::Entry::Error(name, e) => {
                        let mut m = quote::quotef(&name, utf8);
                        m.extend_from_slice(b": ");
                        m.extend_from_slice(strerror(&e).as_bytes());
                        inputs.push(None);
                        tasks.push(Task::Msg(m));
                    }
                    walk::Entry::Special(name) => {
                        let mut m = quote::quotef(&name, utf8);
                        m.extend_from_slice(b": not a regular file; skipped");
                        inputs.push(None);
                        tasks.push(Task::Note(m));
                    }
                    walk::Entry::Link => links_skipped += 1,
                }
                if inputs.len() >= RUN_MAX {
                    run(
                        std::mem::take(&mut inputs),
                        std::mem::take(&mut tasks),
                        false,
                    );
                }
            }
        } else {
            inputs.push(input(op));
            tasks.push(Task::Hash(b.to_vec()));
            if b != b"-" && is_out(b) {
                last_alone(&mut run, &mut inputs, &mut tasks);
            }
        }
        if inputs.len() >= RUN_MAX {
            run(
                std::mem::take(&mut inputs),
                std::mem::take(&mut tasks),
                false,
            );
        }
    }
    run(inputs, tasks, false);
    if links_skipped > 0 {
        let plural = if links_skipped == 1 { "" } else { "s" };
        ctx.error(
            format!("{links_skipped} symbolic link{plural} skipped (use -L to follow them)")
                .as_bytes(),
        );
    }
    ok
}
