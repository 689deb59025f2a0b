//! The per-file work: reading files and hashing them, one at a time or on worker
//! threads, with results handed back strictly in input order.
//!
//! The seam for multi-buffer hashing is [`hash_batch`]: workers read a batch of small
//! files completely into one arena and hash all of them with a single call. Today that
//! call is `md5x::hash_many`, which runs the messages side by side in SIMD lanes. A
//! batch's large regular files are hashed side by side too ([`hash_large`]): a chunk
//! of each at a time, through `md5x::update_many_from`. A file given alone is
//! streamed with big reads instead, and when it has at least [`PIPELINE_MIN`] bytes it
//! is read on a second thread while the first hashes, so the copy out of the page
//! cache is hidden behind hashing. Pipes and devices are streamed too, and so are
//! large files while [`deferred_cap`] others are held open.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};

use md5x::chains::{self, limits, ETag, Etag, EtagError, ParMd5};
use md5x::{Digest, Md5};

use crate::algo::{part_size_candidates, SearchMiss};
use crate::longpath;
use crate::progress::Progress;

/// A file smaller than this is read whole and hashed as one message (batchable).
const SMALL_MAX: usize = 256 * 1024;
/// The errno of a positional read of a pipe, FIFO, socket or terminal.
const ESPIPE: i32 = 29;
/// Read size for streamed files.
const CHUNK: usize = 1 << 20;
/// Files at least this large are read on a helper thread while hashing.
const PIPELINE_MIN: u64 = 16 << 20;

/// Which of the standard descriptors were closed when the program started: bit `n`
/// for descriptor `n` (0, 1, 2). md5x put /dev/null in their slots (see `main.rs`'s
/// `closed_std_fds`), where md5sum would see EBADF, and no such file behind
/// `/dev/stdin` and the like ([`open`]).
pub static CLOSED_STD: AtomicU8 = AtomicU8::new(0);
/// The descriptors above 2 that the process started with, sorted: those a name such
/// as `/dev/fd/3` may reach; every other one is md5x's own ([`open`]). Unset where
/// /proc could not be read.
pub static INHERITED: OnceLock<Vec<u32>> = OnceLock::new();
/// The descriptor of the checksum list being read (-1: none): md5sum holds its list
/// open while it verifies it, so a listed `/dev/fd/3` reaches the list there.
pub static LIST_FD: AtomicI32 = AtomicI32::new(-1);
/// The errno of a missing file.
const ENOENT: i32 = 2;
/// Whether standard input was open only for writing when the program started.
pub static STDIN_WRITE_ONLY: AtomicBool = AtomicBool::new(false);
/// Whether standard input has been read.
pub static READ_STDIN: AtomicBool = AtomicBool::new(false);

/// What to hash.
#[derive(Clone, Debug)]
pub enum Input {
    Stdin,
    File(PathBuf),
}

/// What to compute for one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Md5,
    /// MD5-P(K).
    Par(usize),
    /// The S3 ETag with these settings. A part size outside S3's limits is an error
    /// only for inputs at or above the threshold (smaller ones are a single PUT).
    Etag {
        part_size: u64,
        threshold: u64,
    },
    /// Check mode: the multipart ETag `target`, part size unknown: try the part sizes
    /// that give its part count ([`part_size_candidates`]).
    Search {
        target: ETag,
        threshold: u64,
    },
}

/// One input and what to compute for it.
#[derive(Clone, Debug)]
pub struct Job {
    pub input: Input,
    pub mode: Mode,
}

/// Count `inputs` in the progress line's totals: standard input (`-`) as streams, then
/// the files, in order, which the drawing thread stats (the caller starts it, once
/// every source is added: `Progress::spawn`).
pub fn count_for_progress(p: &Arc<Progress>, inputs: &[Option<Job>]) {
    p.add_streams(inputs.iter().filter(|j| is_stdin(j)).count() as u64);
    let path = |j: &Option<Job>| match j {
        Some(Job {
            input: Input::File(p),
            ..
        }) => Some(p.clone()),
        _ => None,
    };
    p.add_paths(inputs.iter().filter_map(path).collect());
}

/// What hashing an input gave: a digest, with a part count for a multipart ETag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sum {
    pub digest: Digest,
    pub parts: Option<u32>,
    /// [`Mode::Search`]: the part size that matched (`parts` is `None` when none did).
    pub part_size: Option<u64>,
    /// [`Mode::Search`], when no part size matched: what that leaves open.
    pub miss: Option<SearchMiss>,
}

impl Sum {
    pub fn md5(digest: Digest) -> Self {
        Sum {
            digest,
            parts: None,
            part_size: None,
            miss: None,
        }
    }

    pub fn etag(t: ETag) -> Self {
        Sum {
            digest: t.digest(),
            parts: t.parts(),
            part_size: None,
            miss: None,
        }
    }

    /// Append `hex` or `hex-N`.
    pub fn push_hex(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.digest.to_hex().as_str().as_bytes());
        if let Some(n) = self.parts {
            out.extend_from_slice(format!("-{n}").as_bytes());
        }
    }
}

/// The result of hashing one input.
pub type Hashed = io::Result<Sum>;

#[derive(Clone)]
pub struct Config {
    pub jobs: usize,
    pub progress: Option<Arc<Progress>>,
}

impl Config {
    /// Count `n` bytes read on the progress line, if there is one.
    fn read_bytes(&self, n: u64) {
        if let Some(p) = &self.progress {
            p.add_bytes(n);
        }
    }

    /// Count a file done on the progress line, if there is one.
    fn file_done(&self) {
        if let Some(p) = &self.progress {
            p.add_file();
        }
    }
}

/// The multi-buffer seam: hash many whole messages at once.
pub fn hash_batch(msgs: &[&[u8]]) -> Vec<Digest> {
    // The library fills its SIMD lanes with these messages (sorted by length).
    md5x::hash_many(msgs)
}

fn ebadf() -> io::Error {
    io::Error::from_raw_os_error(9)
}

/// Hash standard input (in the calling thread: it must be read in order).
pub fn hash_stdin(cfg: &Config, mode: Mode) -> Hashed {
    READ_STDIN.store(true, Ordering::Relaxed);
    if !stdin_readable() {
        return Err(ebadf());
    }
    let stdin = io::stdin();
    let mut lock = stdin.lock();
    hash_stream(&mut lock, mode, cfg)
}

/// Whether standard input can be read: not closed at start-up, nor open only for
/// writing (Rust's stdin takes the EBADF of either for the end of the input, which
/// would hash as empty; md5sum reports it).
pub fn stdin_readable() -> bool {
    !stdin_closed() && !STDIN_WRITE_ONLY.load(Ordering::Relaxed)
}

/// Whether standard input was closed when the program started.
pub fn stdin_closed() -> bool {
    CLOSED_STD.load(Ordering::Relaxed) & 1 != 0
}

/// Opens a file named on the command line or in a checksum list, as md5sum would
/// find it. A name that leads to a standard descriptor closed at start-up
/// (`/dev/stdin`, `/dev/fd/1`, `/proc/self/fd/2`, `/proc/thread-self/fd/0`,
/// `/proc/self/fdinfo/0`, a link to one, or a longer name through one, such as
/// `/dev/stdin/x`) is not found, as md5sum does not find it: md5x put /dev/null in
/// that slot, and would otherwise hash /dev/null under that name (and `-c` call an
/// empty file's sum OK). Nor is a descriptor md5x opened itself (`/dev/fd/3`, while
/// it holds another operand's file there), where md5sum, holding one file at a time,
/// finds none: md5x would hash that file again under the name.
///
/// The name is looked at only where it may lead there: a name that says `fd`, or,
/// with a standard descriptor closed, an open that found the /dev/null in its slot, a
/// file of /proc (`fdinfo`), or a non-directory in the middle of the name (ENOTDIR).
/// Any other file costs one `fstat` with a descriptor closed, and nothing otherwise.
pub fn open(p: &Path) -> io::Result<File> {
    open_with(p, false)
}

/// [`open`] for a worker, which opens files ahead of their turn: on Linux, a named
/// pipe is opened without waiting for a writer (`O_NONBLOCK`), so that the worker
/// hands it back at once and the lines of the files before it go out before anything
/// waits on it, as md5sum prints each line before it opens the next file (a script
/// that writes the pipe once it has seen them waited forever). The pipe is then read
/// as md5sum reads it once [`blocking_again`] has waited for its writer. Regular files
/// ignore the flag; an open that would wait instead (a file under another process's
/// lease) is made again, waiting. Costs nothing: the flag is one more bit in the open.
pub fn open_for_worker(p: &Path) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    match open_with(p, true) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => open_with(p, false),
        r => r,
    }
    #[cfg(not(target_os = "linux"))]
    open_with(p, false)
}

/// A stream that [`open_for_worker`] opened, made to read as a plain open's would: no
/// longer `O_NONBLOCK`, and, for a pipe, after waiting (`poll`) until it has bytes or
/// had a writer that left. (Linux reports no hang-up on a named pipe opened without a
/// writer until one has come: the wait is for the writer that a waiting open would
/// have waited for, or for one that came and went meanwhile.)
pub fn blocking_again(f: &File) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::event::{poll, PollFd, PollFlags};
        use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
        use std::os::unix::fs::FileTypeExt;
        let flags = fcntl_getfl(f)?;
        if !flags.contains(OFlags::NONBLOCK) {
            return Ok(());
        }
        fcntl_setfl(f, flags - OFlags::NONBLOCK)?;
        if f.metadata()?.file_type().is_fifo() {
            let mut fds = [PollFd::new(f, PollFlags::IN)];
            loop {
                match poll(&mut fds, None) {
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                    Ok(_) => break,
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = f;
    Ok(())
}

/// A file that [`open_for_worker`] opened, and that a worker reads itself (a regular
/// file past the arena's first reads, or in a mode other than a plain MD5): its reads
/// made to wait as a plain open's would, so that none ends in `EAGAIN`. Regular files
/// ignore `O_NONBLOCK`; a few do not (`/proc/kmsg`, a FUSE file system's). One `fcntl`,
/// on Linux only, and only where `nonblocking` says the file was opened so.
fn reads_wait(f: &File, nonblocking: bool) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if nonblocking {
        // (F_SETFL changes only the status flags: O_NONBLOCK is the one that was set.)
        rustix::fs::fcntl_setfl(f, rustix::fs::OFlags::empty())?;
    }
    let _ = (f, nonblocking);
    Ok(())
}

/// The open of [`open`] and [`open_for_worker`].
fn open_with(p: &Path, nonblocking: bool) -> io::Result<File> {
    let plain = |p: &Path| {
        let mut o = std::fs::OpenOptions::new();
        o.read(true);
        #[cfg(target_os = "linux")]
        if nonblocking {
            use std::os::unix::fs::OpenOptionsExt;
            o.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = nonblocking;
        o.open(p)
    };
    let closed = CLOSED_STD.load(Ordering::Relaxed);
    let says_fd = p
        .as_os_str()
        .as_encoded_bytes()
        .windows(2)
        .any(|w| w == b"fd");
    if closed == 0 && !says_fd {
        return longpath::retry(p, plain);
    }
    let r = longpath::retry(p, plain);
    let look = says_fd
        || match &r {
            Ok(f) => suspect(f),
            Err(e) => e.raw_os_error() == Some(ENOTDIR),
        };
    if look && reaches_foreign_fd(p, closed) {
        return Err(io::Error::from_raw_os_error(ENOENT));
    }
    r
}

/// The errno of a name that goes on through a file that is not a directory.
const ENOTDIR: i32 = 20;

/// Whether an opened file may have been found through the name of a closed standard
/// descriptor: it is the /dev/null md5x put in the slots, or a file of /proc.
fn suspect(f: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    /// /dev/null's device and inode, and /proc's device.
    struct Known {
        null: Option<(u64, u64)>,
        proc_dev: Option<u64>,
    }
    static KNOWN: OnceLock<Known> = OnceLock::new();
    let known = KNOWN.get_or_init(|| Known {
        null: std::fs::metadata("/dev/null")
            .ok()
            .map(|m| (m.dev(), m.ino())),
        proc_dev: std::fs::metadata("/proc/self").ok().map(|m| m.dev()),
    });
    let Ok(m) = f.metadata() else { return true };
    Some((m.dev(), m.ino())) == known.null || Some(m.dev()) == known.proc_dev
}

/// Whether resolving `path` as the kernel does, component by component with its
/// symbolic links followed, looks up one of this process's descriptors in its `fd`
/// or `fdinfo` directory in `/proc` (`/proc/<pid>/fd`, or a thread's
/// `/proc/<pid>/task/<tid>/fd`) that md5sum would not find there, at the end of the
/// name or in its middle: a standard descriptor whose bit is set in `closed`, or one
/// above 2 that the process did not start with ([`INHERITED`]; none where that is
/// unknown) other than the checksum list's ([`LIST_FD`]). A name that does not
/// resolve is left to the open to report.
fn reaches_foreign_fd(path: &Path, closed: u8) -> bool {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    // The pid as /proc names it (which may differ from getpid in another namespace),
    // read once.
    static ME: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let me = ME.get_or_init(|| {
        let me = std::fs::read_link("/proc/self").ok()?;
        Some(me.into_os_string().into_vec())
    });
    let Some(me) = me else {
        return false;
    };
    let bytes = path.as_os_str().as_bytes();
    let mut cur = if bytes.first() == Some(&b'/') {
        PathBuf::from("/")
    } else {
        match std::env::current_dir() {
            Ok(d) => d,
            Err(_) => return false,
        }
    };
    // The components still to look up, the next one last.
    let mut todo: Vec<Vec<u8>> = bytes
        .split(|&b| b == b'/')
        .rev()
        .map(<[u8]>::to_vec)
        .collect();
    // As many links as the kernel follows before it gives up (ELOOP).
    let mut links = 0;
    while let Some(c) = todo.pop() {
        match &c[..] {
            b"" | b"." => continue,
            b".." => {
                cur.pop();
                continue;
            }
            _ => {}
        }
        let parts: Vec<&[u8]> = cur.iter().map(|c| c.as_encoded_bytes()).collect();
        let owner = match parts[..] {
            [b"/", b"proc", o, b"fd" | b"fdinfo"] => Some(o),
            [b"/", b"proc", o, b"task", _, b"fd" | b"fdinfo"] => Some(o),
            _ => None,
        };
        if owner == Some(&me[..]) && foreign_fd(&c, closed) {
            return true;
        }
        let next = cur.join(std::ffi::OsStr::from_bytes(&c));
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                let Ok(target) = std::fs::read_link(&next) else {
                    return false;
                };
                let t = target.as_os_str().as_bytes();
                if links > 40 || t.is_empty() {
                    return false;
                }
                if t[0] == b'/' {
                    cur = PathBuf::from("/");
                }
                todo.extend(t.split(|&b| b == b'/').rev().map(<[u8]>::to_vec));
            }
            Ok(_) => cur = next,
            Err(_) => return false,
        }
    }
    false
}

/// Whether the entry `name` of this process's `fd` directory is a descriptor md5sum
/// would not find there: see [`reaches_foreign_fd`]. (The kernel reads only decimal
/// numbers without leading zeros as descriptors.)
fn foreign_fd(name: &[u8], closed: u8) -> bool {
    let fd = match name {
        [b'0'] => 0,
        [b'1'..=b'9', ..] if name.iter().all(u8::is_ascii_digit) => {
            match std::str::from_utf8(name)
                .ok()
                .and_then(|n| n.parse::<u32>().ok())
            {
                Some(fd) => fd,
                None => return false,
            }
        }
        _ => return false,
    };
    match fd {
        0..=2 => closed >> fd & 1 != 0,
        _ if i32::try_from(fd).ok() == Some(LIST_FD.load(Ordering::Relaxed)) => false,
        _ => INHERITED
            .get()
            .is_some_and(|kept| kept.binary_search(&fd).is_err()),
    }
}

/// A hasher that takes the input in order.
trait Feed {
    fn feed(&mut self, data: &[u8]);
}

impl Feed for Md5 {
    fn feed(&mut self, data: &[u8]) {
        self.update(data);
    }
}

impl Feed for ParMd5 {
    fn feed(&mut self, data: &[u8]) {
        self.update(data);
    }
}

/// A streaming ETag whose part size may be outside S3's limits: then the input is
/// fine as long as it stays below the threshold (a single PUT: its MD5), and an error
/// once it reaches it.
enum EtagStream {
    Valid(Etag),
    Single {
        md5: Md5,
        threshold: u64,
        err: EtagError,
    },
}

impl EtagStream {
    fn new(part_size: u64, threshold: u64) -> Self {
        match Etag::new(part_size, threshold) {
            Ok(e) => EtagStream::Valid(e),
            Err(err) => EtagStream::Single {
                md5: Md5::new(),
                threshold,
                err,
            },
        }
    }

    fn finalize(&self) -> io::Result<ETag> {
        match self {
            EtagStream::Valid(e) => e.finalize().map_err(invalid),
            EtagStream::Single { md5, threshold, .. } if md5.len() < *threshold => {
                ETag::single_put(md5.finalize(), md5.len()).map_err(invalid)
            }
            EtagStream::Single { err, .. } => Err(invalid(*err)),
        }
    }
}

impl Feed for EtagStream {
    fn feed(&mut self, data: &[u8]) {
        match self {
            EtagStream::Valid(e) => e.update(data),
            EtagStream::Single { md5, threshold, .. } => {
                // Past the threshold the result is an error: stop hashing.
                if md5.len() < *threshold {
                    md5.update(data);
                }
            }
        }
    }
}

/// An S3 settings error, as the library's `etag_file` reports it.
fn invalid(e: EtagError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}

/// The sum of a stream (standard input, a pipe, a FIFO), read once, in order.
fn hash_stream<R: Read>(r: &mut R, mode: Mode, cfg: &Config) -> Hashed {
    match mode {
        Mode::Md5 => {
            let mut h = Md5::new();
            stream(r, &mut h, cfg)?;
            Ok(Sum::md5(h.finalize()))
        }
        Mode::Par(k) => {
            let mut h = ParMd5::new(k).map_err(io::Error::other)?;
            stream(r, &mut h, cfg)?;
            Ok(Sum::md5(h.finalize()))
        }
        Mode::Etag {
            part_size,
            threshold,
        } => {
            let mut h = EtagStream::new(part_size, threshold);
            stream(r, &mut h, cfg)?;
            h.finalize().map(Sum::etag)
        }
        Mode::Search { target, threshold } => {
            // The size is known only at the end: the common part sizes all at once (one
            // read; parts that start together share an MD5, the others go side by side
            // in the lanes), then the first that gives the target is reported (every
            // size gives the same one-part ETag; check mode then says "one part").
            let sizes = crate::algo::COMMON_PART_SIZES;
            let total = std::cell::Cell::new(0u64);
            let count = |n| {
                total.set(total.get() + n);
                cfg.read_bytes(n);
                Ok(())
            };
            let r = Reading {
                inner: r,
                count: &count,
            };
            let tags = chains::etags_by_part_size(r, &sizes, threshold, cfg.jobs)?;
            // Below the threshold every size gives the plain MD5 (no `-N`).
            let below = tags
                .iter()
                .all(|t| matches!(t, Ok(t) if t.parts().is_none()));
            Ok(match first_match(&sizes, &tags, target) {
                Some(p) => matched(target, p),
                None if below => no_match(target, Some(SearchMiss::BelowThreshold)),
                None => no_match(target, stream_miss(total.get(), target)),
            })
        }
    }
}

/// A reader that tells `count` how much each read gave.
struct Reading<'a, R> {
    inner: R,
    count: &'a dyn Fn(u64) -> io::Result<()>,
}

impl<R: Read> Read for Reading<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.count)(n as u64)?;
        Ok(n)
    }
}

/// The first of `sizes` whose ETag (in `tags`, in the same order) is `target`.
fn first_match(sizes: &[u64], tags: &[Result<ETag, EtagError>], target: ETag) -> Option<u64> {
    sizes
        .iter()
        .zip(tags)
        .find(|(_, t)| t.as_ref() == Ok(&target))
        .map(|(&p, _)| p)
}

/// What a stream's search that matched none leaves open, now that its `size` is known:
/// nothing when one part was asked and a common size gave it (one part's ETag is the
/// same at every part size: an empty or short input, as for a regular file), that no
/// part size could when none gives the parts asked, and otherwise the sizes not tried.
fn stream_miss(size: u64, target: ETag) -> Option<SearchMiss> {
    let parts = target.parts().unwrap_or(1);
    let candidates = crate::algo::part_size_candidates(size, parts);
    match candidates.first() {
        None => Some(SearchMiss::Impossible { size, parts }),
        Some(p) if parts <= 1 && crate::algo::COMMON_PART_SIZES.contains(p) => None,
        Some(_) => Some(SearchMiss::Stream),
    }
}

/// A search's result when part size `p` gave `target`.
fn matched(target: ETag, p: u64) -> Sum {
    Sum {
        part_size: Some(p),
        ..Sum::etag(target)
    }
}

/// A search's result when no part size gave `target`, for check mode's FAILED (the
/// plain MD5 form never equals an ETag line's `hex-N`), with what that leaves open.
fn no_match(target: ETag, miss: Option<SearchMiss>) -> Sum {
    Sum {
        miss,
        ..Sum::md5(target.digest())
    }
}

/// The sum of the opened file `f` (named `path`) other than a plain MD5 (which
/// [`read_file`] does, batched). Regular files are hashed where they lie; other files
/// (FIFOs, devices) as streams, or, with `defer_streams`, handed back unread as
/// [`Read1::Stream`]. `threads` is for `etag_file`'s parallel reads.
fn hash_path(
    mut f: File,
    path: &PathBuf,
    mode: Mode,
    cfg: &Config,
    solo: bool,
    threads: usize,
    defer_streams: bool,
) -> io::Result<Read1> {
    let meta = f.metadata()?;
    if meta.is_file() {
        reads_wait(&f, defer_streams)?;
    }
    // A regular file that says it holds 0 bytes may hold some (procfs, sysfs): a part
    // size search, which plans its passes from the size, reads it as a stream instead.
    let unsized_search = meta.len() == 0 && matches!(mode, Mode::Search { .. });
    if meta.is_file() && !unsized_search {
        hash_regular(f, meta.len(), path, mode, cfg, solo, threads).map(Read1::Done)
    } else if meta.is_file() {
        hash_stream(&mut f, mode, cfg).map(Read1::Done)
    } else if defer_streams && !meta.is_dir() {
        Ok(Read1::Stream(Handed::new(f)))
    } else {
        hash_stream(&mut f, mode, cfg).map(Read1::Done)
    }
}

/// [`hash_path`] for a regular file of `size` bytes.
fn hash_regular(
    f: File,
    size: u64,
    path: &PathBuf,
    mode: Mode,
    cfg: &Config,
    solo: bool,
    threads: usize,
) -> Hashed {
    let pipelined = solo && size >= PIPELINE_MIN && cfg.jobs >= 2;
    let add = |n: u64| cfg.read_bytes(n);
    match mode {
        // (`hash_range` reads these files with `read_file`; this is what any other
        // caller gets: the file read through.)
        Mode::Md5 | Mode::Par(_) => {
            let mut f = f;
            hash_stream(&mut f, mode, cfg)
        }
        Mode::Etag {
            part_size,
            threshold,
        } => {
            if size < threshold {
                // A single PUT (unless the file grows while read: the streaming ETag
                // then does what its final size says).
                let mut h = EtagStream::new(part_size, threshold);
                stream_file(f, &mut h, cfg, pipelined)?;
                return h.finalize().map(Sum::etag);
            }
            drop(f);
            // (Counted in the progress line as its parts are read: a large file's
            // ETag takes minutes.)
            let backend = md5x::Backend::active();
            let read = |n| {
                add(n);
                Ok(())
            };
            let t = chains::etag_file_with(backend, path, part_size, threshold, threads, &read)?;
            Ok(Sum::etag(t))
        }
        Mode::Search { target, threshold } => {
            let Some(n) = target.parts() else {
                return Ok(no_match(target, None));
            };
            if size < threshold {
                return Ok(no_match(target, Some(SearchMiss::BelowThreshold)));
            }
            // The common part sizes one at a time, each a pass with its parts on every
            // core (the usual match); the others in one pass that computes them all
            // (a damaged file matches none, and a pass each took a read each).
            let candidates = part_size_candidates(size, n);
            let (common, others): (Vec<u64>, Vec<u64>) = candidates
                .iter()
                .partition(|p| crate::algo::COMMON_PART_SIZES.contains(p));
            // The progress line moves through the file once over all the passes the
            // search may take (each pass's reads count for 1/passes of theirs), and
            // jumps to the end at a match.
            let passes = (common.len() + usize::from(!others.is_empty())).max(1) as u64;
            let read = AtomicU64::new(0);
            let credited = AtomicU64::new(0);
            let count = |n: u64| -> io::Result<()> {
                let due = (read.fetch_add(n, Ordering::Relaxed) + n) / passes;
                let before = credited.fetch_max(due, Ordering::Relaxed);
                add(due.saturating_sub(before));
                Ok(())
            };
            let rest = || add(size.saturating_sub(credited.swap(u64::MAX, Ordering::Relaxed)));
            let backend = md5x::Backend::active();
            for p in common {
                if chains::etag_file_with(backend, path, p, threshold, threads, &count)? == target {
                    rest();
                    return Ok(matched(target, p));
                }
            }
            if !others.is_empty() {
                let f = Reading {
                    inner: f,
                    count: &count,
                };
                let tags = chains::etags_by_part_size(f, &others, threshold, threads)?;
                if let Some(p) = first_match(&others, &tags, target) {
                    rest();
                    return Ok(matched(target, p));
                }
            }
            rest();
            Ok(no_match(target, SearchMiss::of(size, n, &candidates)))
        }
    }
}

/// Stream a file into `h`, read on a helper thread when `pipelined`.
fn stream_file<H: Feed>(mut f: File, h: &mut H, cfg: &Config, pipelined: bool) -> io::Result<()> {
    if pipelined {
        stream_pipelined(f, h, cfg)
    } else {
        stream(&mut f, h, cfg)
    }
}

/// How one file came out of [`read_file`].
enum Read1 {
    /// Whole content, in the arena at this range.
    Small(Range<usize>),
    /// Not a plain MD5 (an ETag at or above its threshold, MD5-P(K), a search):
    /// already hashed.
    Done(Sum),
    /// Too big for the arena, and streamed: its MD5, and how many bytes it had.
    Whole(Digest, u64),
    /// A regular file at or above the ETag threshold, with the ETag's part size and
    /// threshold: its parts are for [`hash_multipart`] to hash, side by side with the
    /// batch's others.
    Parts(Deferred, u64, u64),
    /// A regular file too big for the arena: its first bytes are in the arena at this
    /// range, the rest is for [`hash_large`] to read, side by side with the batch's
    /// other large files.
    Large(Deferred, Range<usize>),
    /// Opened, not read to its end: a pipe or device, for the caller to read in
    /// operand order.
    Stream(Handed),
}

/// A stream that a worker hands back to be read in operand order: the file, and what
/// the worker had read of it at positions before a read would have waited (empty but
/// for a file that honours `O_NONBLOCK` and can be read at a position, such as
/// `/dev/kmsg`). Read as a whole: those bytes, then the file from where they end.
struct Handed {
    f: File,
    head: Vec<u8>,
    /// How much of `head` has been read, then how far into the file.
    at: u64,
}

impl Handed {
    fn new(f: File) -> Handed {
        Handed {
            f,
            head: Vec::new(),
            at: 0,
        }
    }
}

impl Read for Handed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.head.is_empty() {
            // (A pipe: read from where it is, as it cannot be read at a position.)
            return self.f.read(buf);
        }
        // (A position past 4 GiB is past the head, also where usize is 32 bits.)
        let rest = usize::try_from(self.at)
            .ok()
            .and_then(|at| self.head.get(at..));
        let n = if let Some(rest) = rest.filter(|r| !r.is_empty()) {
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            n
        } else {
            self.f.read_at(buf, self.at)?
        };
        self.at += n as u64;
        Ok(n)
    }
}

/// Large files held open for [`hash_large`], in all workers together.
static DEFERRED: AtomicUsize = AtomicUsize::new(0);
/// The most large files held open at once: far below the usual limit on open files
/// (1024 on Linux, 256 on macOS), however many workers run. With 2 workers, each can
/// hold a whole batch (at most 48 files). Fewer under a low limit ([`deferred_cap`]).
const MAX_DEFERRED: usize = 128;

/// [`MAX_DEFERRED`], or fewer where the limit on open files is low
/// (`md5x::tuning::open_file_cap`: with `ulimit -n 64`, 16; at 32 or below, none, and
/// every large file is streamed on its own, as md5sum reads it). Read once.
fn deferred_cap() -> usize {
    static CAP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| md5x::tuning::open_file_cap(MAX_DEFERRED))
}

/// A large file held open for [`hash_large`], counted in [`DEFERRED`] until dropped.
struct Deferred(File);

impl Deferred {
    /// Hold `f`, or give it back when [`deferred_cap`] files are held already.
    fn hold(f: File) -> Result<Deferred, File> {
        match DEFERRED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < deferred_cap()).then_some(n + 1)
        }) {
            Ok(_) => Ok(Deferred(f)),
            Err(_) => Err(f),
        }
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        DEFERRED.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A worker's reusable read buffer for a batch of small files. Its bytes stay
/// initialized between batches, so reading into it never pays for zeroing.
#[derive(Default)]
pub struct Arena {
    buf: Vec<u8>,
    used: usize,
}

impl Arena {
    /// Read up to `max` more bytes of `f` into the arena: at byte `at` of the file
    /// (`pread`), or with `None` from its current position.
    fn read_more(&mut self, f: &mut File, at: Option<u64>, max: usize) -> io::Result<usize> {
        const SPARE: usize = 64 * 1024;
        if self.buf.len() - self.used < SPARE {
            let want = (self.used + SPARE).max(self.buf.len() * 2);
            self.buf.resize(want, 0);
        }
        loop {
            let end = self.buf.len().min(self.used + max);
            let dst = &mut self.buf[self.used..end];
            let r = match at {
                Some(at) => f.read_at(dst, at),
                None => f.read(dst),
            };
            match r {
                Ok(n) => {
                    self.used += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Read the opened file `f` into `arena` if it is small, else stream-hash it. Small
/// files cost open, read, read (EOF), close: no stat. Reading goes on until EOF, so a
/// file that grows or shrinks while read is hashed as read, as md5sum does.
///
/// The arena reads are positional (`pread`), which pipes, FIFOs, sockets and
/// terminals refuse (ESPIPE) before anything is read: with `defer_streams` such a file
/// comes back as [`Read1::Stream`], else it is read from its position. That tells
/// them apart from regular files without a stat per file (an `fstat` cost 12% of the
/// time for 100,000 files of 1 KiB on 2 cores).
///
/// With `par` (MD5-P(K)), a small file comes back hashed ([`Read1::Done`]), and a
/// large one is streamed on from the arena's bytes rather than held for the batch's
/// plain MD5s.
fn read_file(
    mut f: File,
    arena: &mut Arena,
    cfg: &Config,
    solo: bool,
    defer_streams: bool,
    par: Option<usize>,
) -> io::Result<Read1> {
    let start = arena.used;
    let mut positional = true;
    let res = loop {
        if arena.used - start > SMALL_MAX {
            break Ok(());
        }
        let at = positional.then_some((arena.used - start) as u64);
        // (At most one byte past SMALL_MAX per file: a large file's first bytes stay
        // in the arena until its batch is hashed, so they must not be all of it.)
        match arena.read_more(&mut f, at, SMALL_MAX + 1 - (arena.used - start)) {
            Err(e) if positional && e.raw_os_error() == Some(ESPIPE) => {
                if defer_streams {
                    return Ok(Read1::Stream(Handed::new(f)));
                }
                positional = false;
            }
            // A file that honours `O_NONBLOCK` (`/dev/kmsg`) and has nothing to read
            // yet: handed back as a stream with what was read of it, for the caller
            // to wait on in operand order, as md5sum's read waits.
            Err(e) if defer_streams && e.kind() == io::ErrorKind::WouldBlock => {
                let head = arena.buf[start..arena.used].to_vec();
                arena.used = start;
                return Ok(Read1::Stream(Handed { f, head, at: 0 }));
            }
            Ok(0) => {
                cfg.read_bytes((arena.used - start) as u64);
                let Some(k) = par else {
                    return Ok(Read1::Small(start..arena.used));
                };
                // MD5-P(K) of a small file: hashed here (its chains are a few blocks;
                // the batch's lanes are for plain MD5s).
                let d = chains::md5_par(&arena.buf[start..arena.used], k);
                arena.used = start;
                return d
                    .map(|d| Read1::Done(Sum::md5(d)))
                    .map_err(io::Error::other);
            }
            Ok(_) => {}
            Err(e) => break Err(e),
        }
    };
    if let Err(e) = res {
        arena.used = start;
        return Err(e);
    }
    cfg.read_bytes((arena.used - start) as u64);
    // The rest is read here or with the batch's large files: reads that wait.
    reads_wait(&f, defer_streams)?;
    if positional && !solo && par.is_none() {
        // One of many files, readable at a position (a regular file): its first bytes
        // stay in the arena, and it is hashed with the batch's other large files,
        // unless too many files are held open already.
        match Deferred::hold(f) {
            Ok(d) => return Ok(Read1::Large(d, start..arena.used)),
            Err(back) => f = back,
        }
    }
    // Stream: whatever is in the arena first, then big reads.
    let head = &arena.buf[start..arena.used];
    let read = head.len() as u64;
    let res = match par {
        Some(k) => ParMd5::new(k).map_err(io::Error::other).and_then(|mut h| {
            h.update(head);
            stream_on(f, &mut h, read, positional, solo, cfg)?;
            Ok(Read1::Done(Sum::md5(h.finalize())))
        }),
        None => {
            let mut h = Md5::new();
            h.update(head);
            stream_on(f, &mut h, read, positional, solo, cfg)
                .map(|()| Read1::Whole(h.finalize(), h.len()))
        }
    };
    arena.used = start;
    res
}

/// Stream the rest of `f` into `h`, after the `read` bytes [`read_file`] took (at
/// positions, when `positional`), on a helper thread for a large file given alone.
fn stream_on<H: Feed>(
    mut f: File,
    h: &mut H,
    read: u64,
    positional: bool,
    solo: bool,
    cfg: &Config,
) -> io::Result<()> {
    if positional {
        // Go on with plain reads from where the positional ones stopped.
        f.seek(io::SeekFrom::Start(read))?;
    }
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    if solo && size >= PIPELINE_MIN && cfg.jobs >= 2 {
        stream_pipelined(f, h, cfg)
    } else {
        stream(&mut f, h, cfg)
    }
}

/// Fill `buf` from `f`: the bytes read, and whether the input ended. The first read
/// of 0 bytes is the end, even after data, as md5sum takes it: on a terminal, Ctrl-D
/// after a line gives one, and a FIFO may have a new writer behind it whose bytes are
/// not this input's.
fn read_full<R: Read>(f: &mut R, buf: &mut [u8]) -> io::Result<(usize, bool)> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => return Ok((got, true)),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((got, false))
}

/// Read `f` to its end into `h`, [`CHUNK`] bytes at a time.
fn stream<R: Read, H: Feed>(f: &mut R, h: &mut H, cfg: &Config) -> io::Result<()> {
    // One buffer per thread, kept: a zeroed MiB per file was 99% of the instructions
    // for small files in the modes that stream every file (MD5-P(K): 20,000 files of
    // 100 bytes took 3.5 times a plain MD5's time).
    thread_local! {
        static BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut buf = BUF.take();
    buf.resize(CHUNK, 0);
    let r = (|| loop {
        let (n, end) = read_full(f, &mut buf)?;
        h.feed(&buf[..n]);
        cfg.read_bytes(n as u64);
        if end {
            return Ok(());
        }
    })();
    BUF.set(buf);
    r
}

/// Read on a helper thread into a small ring of buffers while this thread hashes (or
/// all on this thread, where no thread can be started).
fn stream_pipelined<H: Feed>(mut f: File, h: &mut H, cfg: &Config) -> io::Result<()> {
    const BUFS: usize = 3;
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(Vec<u8>, usize)>>(BUFS);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<Vec<u8>>(BUFS);
    for _ in 0..BUFS {
        let _ = empty_tx.send(vec![0u8; CHUNK]);
    }
    let reader = &mut f;
    let pipelined = std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
            while let Ok(mut buf) = empty_rx.recv() {
                match read_full(reader, &mut buf) {
                    Ok((n, end)) => {
                        if (n > 0 && full_tx.send(Ok((buf, n))).is_err()) || end {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = full_tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        if spawned.is_err() {
            // A process limit: nothing was read yet.
            return None;
        }
        let mut hash = || {
            while let Ok(msg) = full_rx.recv() {
                let (buf, n) = msg?;
                h.feed(&buf[..n]);
                cfg.read_bytes(n as u64);
                let _ = empty_tx.send(buf);
            }
            Ok(())
        };
        Some(hash())
    });
    match pipelined {
        Some(r) => r,
        None => stream(&mut f, h, cfg),
    }
}

/// What a worker gives back for one input.
enum Got {
    Done(Hashed),
    /// A pipe or device it opened and left for the caller (see [`hash_range`]).
    Stream(Handed),
}

/// Hash the files of `inputs[range]`: small ones batched, big ones streamed.
/// `threads`: how many threads one file may use (`etag_file`).
///
/// With `defer_streams`, an opened input that cannot be read at a position (a pipe,
/// FIFO, socket or terminal, or a name for one such as `/dev/stdin`; see
/// [`read_file`]) is not read here but handed back open, for the caller to read in
/// operand order: its bytes can be read only once, and two operands may name the same
/// pipe, which workers reading side by side would split between them. The range then
/// ends there, at the first such input: the caller reads it once this returns, not
/// after the inputs behind it are read too. The second value is where the inputs
/// looked at end.
fn hash_range(
    inputs: &[Option<Job>],
    range: Range<usize>,
    cfg: &Config,
    solo: bool,
    threads: usize,
    arena: &mut Arena,
    defer_streams: bool,
) -> (Vec<(usize, Got)>, usize) {
    arena.used = 0;
    let mut got: Vec<(usize, io::Result<Read1>)> = Vec::with_capacity(range.len());
    let mut end = range.end;
    for i in range {
        if let Some(Job {
            input: Input::File(p),
            mode,
        }) = &inputs[i]
        {
            // A plain MD5, and an ETag whose input is below the threshold (a single
            // PUT's: the MD5), are read and hashed side by side with the batch's
            // other files (a file that grows to the threshold meanwhile is hashed
            // again, below); so are the parts of the batch's multipart ETags.
            let opened = if defer_streams {
                open_for_worker(p)
            } else {
                open(p)
            };
            let r = opened.and_then(|f| match mode {
                Mode::Md5 => read_file(f, arena, cfg, solo, defer_streams, None),
                // MD5-P(K) is read the same way (no stat), and hashed as it comes.
                &Mode::Par(k) => read_file(f, arena, cfg, solo, defer_streams, Some(k)),
                &Mode::Etag {
                    part_size,
                    threshold,
                } => match regular_size(&f) {
                    // The single PUT's limit, said before 5 GiB are read for it.
                    Some(size) if size < threshold => limits::check_single_put(size)
                        .map_err(invalid)
                        .and_then(|()| read_file(f, arena, cfg, solo, defer_streams, None)),
                    Some(size) if !solo => {
                        // (Its parts are read with the batch's: reads that wait.)
                        reads_wait(&f, defer_streams)?;
                        match hold_parts(f, size, part_size, threshold) {
                            Ok(parts) => Ok(parts),
                            Err(f) => hash_path(f, p, *mode, cfg, solo, threads, defer_streams),
                        }
                    }
                    _ => hash_path(f, p, *mode, cfg, solo, threads, defer_streams),
                },
                _ => hash_path(f, p, *mode, cfg, solo, threads, defer_streams),
            });
            let stream = matches!(r, Ok(Read1::Stream(_)));
            got.push((i, r));
            if stream {
                end = i + 1;
                break;
            }
        }
    }
    // What each input waits for: the batch's small files hashed together, its large
    // ones hashed together, or nothing more.
    enum Then {
        Small(u64),
        Large,
        Whole(Digest, u64),
        Parts,
        Got(Got),
    }
    let mut smalls: Vec<&[u8]> = Vec::new();
    let mut large: Vec<(Deferred, Range<usize>)> = Vec::new();
    let mut multipart: Vec<(Deferred, u64, u64)> = Vec::new();
    let plan: Vec<(usize, Then)> = got
        .into_iter()
        .map(|(i, r)| {
            let then = match r {
                Ok(Read1::Small(r)) => {
                    let len = r.len() as u64;
                    smalls.push(&arena.buf[r]);
                    Then::Small(len)
                }
                Ok(Read1::Large(f, prefix)) => {
                    large.push((f, prefix));
                    Then::Large
                }
                Ok(Read1::Done(d)) => Then::Got(Got::Done(Ok(d))),
                Ok(Read1::Whole(d, len)) => Then::Whole(d, len),
                Ok(Read1::Parts(f, part_size, threshold)) => {
                    multipart.push((f, part_size, threshold));
                    Then::Parts
                }
                Ok(Read1::Stream(f)) => Then::Got(Got::Stream(f)),
                Err(e) => Then::Got(Got::Done(Err(e))),
            };
            (i, then)
        })
        .collect();
    let mut digests = hash_batch(&smalls).into_iter();
    let mut large_digests = hash_large(&arena.buf, large, cfg).into_iter();
    let mut etags = hash_multipart(multipart, cfg).into_iter();
    let lost = || io::Error::other("internal error: batch size");
    // The sum of input `i`, read whole as a plain MD5 with `len` bytes.
    let whole = |i: usize, md5: io::Result<(Digest, u64)>| -> Hashed {
        let (d, len) = md5?;
        match &inputs[i] {
            Some(Job {
                input: Input::File(p),
                mode: mode @ Mode::Etag { threshold, .. },
            }) if len >= *threshold => {
                // It grew to the threshold while it was read: its ETag is a multipart
                // one, of what it holds now.
                let f = open(p)?;
                match hash_path(f, p, *mode, cfg, solo, threads, false)? {
                    Read1::Done(sum) => Ok(sum),
                    _ => Err(lost()),
                }
            }
            Some(Job {
                mode: Mode::Etag { .. },
                ..
            }) => ETag::single_put(d, len).map(Sum::etag).map_err(invalid),
            _ => Ok(Sum::md5(d)),
        }
    };
    let got = plan
        .into_iter()
        .map(|(i, then)| {
            let got = match then {
                Then::Small(len) => {
                    Got::Done(whole(i, digests.next().map(|d| (d, len)).ok_or_else(lost)))
                }
                Then::Large => Got::Done(whole(
                    i,
                    large_digests.next().unwrap_or_else(|| Err(lost())),
                )),
                Then::Whole(d, len) => Got::Done(whole(i, Ok((d, len)))),
                Then::Parts => Got::Done(etags.next().unwrap_or_else(|| Err(lost()))),
                Then::Got(got) => got,
            };
            // Done once hashed, the batch's large files too (a deferred stream counts
            // as done when the caller has read it).
            if !matches!(got, Got::Stream(_)) {
                cfg.file_done();
            }
            (i, got)
        })
        .collect();
    (got, end)
}

/// The size of the opened file `f` if it is a regular file.
fn regular_size(f: &File) -> Option<u64> {
    f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len())
}

/// The regular file `f` of `size` bytes (at or above `threshold`), held open for
/// [`hash_multipart`], or given back where those settings are outside S3's limits
/// (`etag_file` then says why) or too many files are held open.
fn hold_parts(f: File, size: u64, part_size: u64, threshold: u64) -> Result<Read1, File> {
    let parts = chains::part_count(size, part_size, threshold).unwrap_or(0);
    if Etag::new(part_size, threshold).is_err() || parts == 0 || parts > limits::MAX_PARTS {
        return Err(f);
    }
    Ok(Read1::Parts(Deferred::hold(f)?, part_size, threshold))
}

/// The ETags of a batch's files at or above the threshold (each held open, with the
/// ETag's part size and threshold): the parts of all of them side by side in the lanes
/// (`chains::etag_files`: each file read up to the size it has then, one that shrinks
/// an error), counted in the progress line as they are read. In the order given.
fn hash_multipart(files: Vec<(Deferred, u64, u64)>, cfg: &Config) -> Vec<Hashed> {
    let mut out: Vec<Option<Hashed>> = files.iter().map(|_| None).collect();
    // (Every file of a run has the same settings; groups keep it right if not.)
    let mut left: Vec<usize> = (0..files.len()).collect();
    while let Some(&first) = left.first() {
        let (_, part_size, threshold) = files[first];
        let (group, rest): (Vec<usize>, Vec<usize>) = left
            .iter()
            .partition(|&&i| (files[i].1, files[i].2) == (part_size, threshold));
        let refs: Vec<&File> = group.iter().map(|&i| &files[i].0 .0).collect();
        let progress = |n| {
            cfg.read_bytes(n);
            Ok(())
        };
        let backend = md5x::Backend::active();
        let tags = chains::etag_files_with(backend, &refs, part_size, threshold, &progress);
        for (&i, tag) in group.iter().zip(tags) {
            out[i] = Some(tag.map(Sum::etag));
        }
        left = rest;
    }
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err(io::Error::other("internal error: batch size"))))
        .collect()
}

/// Hash the large regular files of a batch (each opened, with its first bytes in
/// `arena` at the range given) side by side in the SIMD lanes: those first bytes where
/// they lie (`md5x::update_many`), then the rest of every file a chunk of each at a
/// time (`md5x::update_many_from`, positional reads). A file is done at its first read
/// of 0 bytes (so one that grows or shrinks while read is hashed as read, as md5sum
/// does), or at an error, which is its result alone. In the order given, each MD5 with
/// the length it hashed.
fn hash_large(
    arena: &[u8],
    files: Vec<(Deferred, Range<usize>)>,
    cfg: &Config,
) -> Vec<io::Result<(Digest, u64)>> {
    let mut hashers = vec![Md5::new(); files.len()];
    let prefixes: Vec<&[u8]> = files.iter().map(|(_, r)| &arena[r.clone()]).collect();
    md5x::update_many(&mut hashers, &prefixes);
    let mut rests: Vec<Rest> = files
        .into_iter()
        .map(|(file, r)| Rest {
            file,
            at: r.len() as u64,
            cfg,
        })
        .collect();
    md5x::update_many_from(&mut hashers, &mut rests)
        .into_iter()
        .zip(&hashers)
        .map(|(r, h)| r.map(|()| (h.finalize(), h.len())))
        .collect()
}

/// The rest of a large file for [`hash_large`]: read from byte `at` on with positional
/// reads, as the arena read its start, and counted in the progress line.
struct Rest<'a> {
    file: Deferred,
    at: u64,
    cfg: &'a Config,
}

impl Read for Rest<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.0.read_at(buf, self.at)?;
        self.at += n as u64;
        self.cfg.read_bytes(n as u64);
        Ok(n)
    }
}

/// Hash every input and give `sink` each task's payload with its result (`None` for a
/// task without input), in task order, as soon as that task and all before it are done.
///
/// Files go to `cfg.jobs` worker threads (none when there is at most one file; with
/// one job, one worker, so that this thread can print what is done while a named pipe
/// waits for its writer); standard input is read by the calling thread when its turn
/// comes, after what came before it is out. A file after
/// a stream is read once the stream has ended, as md5sum reads it (what writes the
/// stream may write the file: `tee f | md5sum - f`): batches after a `-` wait for it
/// ([`Gate`]), and a file a worker read before a named pipe ahead of it had ended is
/// read again.
/// `before_wait` runs whenever the caller is about to block for a result (flush output).
pub fn run<P>(
    cfg: &Config,
    inputs: Vec<Option<Job>>,
    payloads: Vec<P>,
    mut sink: impl FnMut(P, Option<Hashed>),
    mut before_wait: impl FnMut(),
) {
    let n_files = inputs
        .iter()
        .filter(|i| {
            matches!(
                i,
                Some(Job {
                    input: Input::File(_),
                    ..
                })
            )
        })
        .count();
    let jobs = cfg.jobs.max(1);
    if n_files <= 1 {
        // At most one file: no workers (its own threads, where it is large).
        let mut arena = Arena::default();
        let len = inputs.len();
        let mut payloads = payloads.into_iter();
        let cap = batch_cap();
        let mut i = 0;
        while i < len {
            if let Some(Job {
                input: Input::Stdin,
                mode,
            }) = &inputs[i]
            {
                // (Earlier results out first: a writer may wait for them.)
                before_wait();
                let r = hash_stdin(cfg, *mode);
                cfg.file_done();
                if let Some(p) = payloads.next() {
                    sink(p, Some(r));
                }
                i += 1;
                continue;
            }
            let mut j = i;
            while j < len && j - i < cap && !is_stdin(&inputs[j]) {
                j += 1;
            }
            // The one file, alone: all `jobs` threads on it. (Read in order here:
            // nothing to defer.)
            let mut res = hash_range(&inputs, i..j, cfg, true, jobs, &mut arena, false)
                .0
                .into_iter()
                .peekable();
            for k in i..j {
                let r = match res.peek() {
                    Some((idx, _)) if *idx == k => res.next().and_then(|x| match x.1 {
                        Got::Done(h) => Some(h),
                        // (Not deferred here.)
                        Got::Stream(_) => None,
                    }),
                    _ => None,
                };
                if let Some(p) = payloads.next() {
                    sink(p, r);
                }
            }
            i = j;
        }
        return;
    }

    let workers = jobs.min(n_files);
    let threads = (jobs / workers).max(1);
    let len = inputs.len();
    // A file named twice or more (`md5x p f p`) is opened by this thread at each turn,
    // never by a worker ahead of it: two early opens of one named pipe both take its
    // first writer, where md5sum opens the second once the first has ended, and so
    // waits for the next writer. (Two different names for one pipe still can.)
    let twice = named_twice(&inputs);
    let for_workers: Vec<Option<Job>>;
    let worker_inputs = if twice.contains(&true) {
        for_workers = (inputs.iter().zip(&twice))
            .map(|(j, &t)| if t { None } else { j.clone() })
            .collect();
        &for_workers[..]
    } else {
        &inputs[..]
    };
    let ends = cut_after_stdin(batch_ends(&inputs, workers), &inputs);
    let next = AtomicUsize::new(0);
    let inputs = &inputs;
    let gate = Gate::default();
    // How many `-` operands come before each batch: a batch waits for them to be read.
    let stdin_before: Vec<usize> = std::iter::once(0)
        .chain(ends.iter().scan((0, 0), |(a, n), &b| {
            *n += inputs[*a..b].iter().filter(|j| is_stdin(j)).count();
            *a = b;
            Some(*n)
        }))
        .collect();
    let (tx, rx) = mpsc::channel::<(usize, Vec<(usize, Got)>)>();
    // One worker: batches off the shared counter until none are left. With `wait`, a
    // batch after a `-` starts once it has been read (without, as when this thread
    // must do the work itself, such files are read again when their turn comes).
    let work = |tx: mpsc::Sender<(usize, Vec<(usize, Got)>)>, wait: bool| {
        let mut arena = Arena::default();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&b) = ends.get(k) else {
                break;
            };
            let a = if k == 0 { 0 } else { ends[k - 1] };
            let mut epoch = if wait {
                gate.wait_stdin(stdin_before[k])
            } else {
                gate.streams()
            };
            // The batch in pieces, each ending after a stream (`hash_range`), so that
            // what comes before one is printed before it is read, as md5sum prints it
            // (a named pipe is opened without waiting: `open_for_worker`).
            let mut a = a;
            while a < b {
                let (res, end) =
                    hash_range(worker_inputs, a..b, cfg, false, threads, &mut arena, true);
                if tx.send((epoch, res)).is_err() {
                    return;
                }
                a = end;
                epoch = gate.streams();
            }
        }
    };
    std::thread::scope(|s| {
        let mut started = 0;
        for _ in 0..workers {
            let tx = tx.clone();
            // (Fewer workers where a process limit refuses more threads.)
            if std::thread::Builder::new()
                .spawn_scoped(s, || work(tx, true))
                .is_ok()
            {
                started += 1;
            }
        }
        if started == 0 {
            // Not one thread: this thread does the work first, then reports it.
            work(tx.clone(), false);
        }
        drop(tx);
        // Results as workers send them (with the pipes and devices they opened and
        // left to this thread, to read in operand order), each with the number of
        // streams read before its batch started.
        let mut slots: Vec<Option<(usize, Got)>> = Vec::new();
        slots.resize_with(len, || None);
        let mut arena = None;
        let quiet = Config {
            jobs: cfg.jobs,
            progress: None,
        };
        for (i, p) in payloads.into_iter().enumerate() {
            // Input `i` read by this thread, now (a stream comes back open).
            let now = |cfg: &Config, arena: &mut Option<Arena>| {
                let arena = arena.get_or_insert_with(Arena::default);
                let got = hash_range(inputs, i..i + 1, cfg, false, threads, arena, true).0;
                got.into_iter().next().map_or_else(
                    || Got::Done(Err(io::Error::other("internal error"))),
                    |(_, got)| got,
                )
            };
            let r = match &inputs[i] {
                None => None,
                Some(Job {
                    input: Input::Stdin,
                    mode,
                }) => {
                    before_wait();
                    let r = hash_stdin(cfg, *mode);
                    gate.read_stream(true);
                    cfg.file_done();
                    Some(r)
                }
                Some(Job {
                    input: Input::File(_),
                    mode,
                }) => loop {
                    let got = match slots[i].take() {
                        // Named twice: opened now, at its turn (see `twice` above).
                        // (Earlier results out first, here too: the open may wait
                        // for a named pipe's writer.)
                        _ if twice[i] => {
                            before_wait();
                            Some(now(cfg, &mut arena))
                        }
                        Some((epoch, got)) if epoch == gate.streams() => Some(got),
                        Some((_, Got::Stream(f))) => Some(Got::Stream(f)),
                        // Read before a stream ahead of it had ended: md5sum reads
                        // that stream to its end first, and what writes the stream
                        // may have written this file too (`tee f | md5sum - f`).
                        // Read it again, now (counted in the progress line when
                        // first read).
                        Some(_) => {
                            before_wait();
                            Some(now(&quiet, &mut arena))
                        }
                        None => None,
                    };
                    match got {
                        Some(Got::Done(r)) => break Some(r),
                        Some(Got::Stream(mut f)) => {
                            // (Earlier results out first: this may wait on a writer.)
                            before_wait();
                            let r =
                                blocking_again(&f.f).and_then(|()| hash_stream(&mut f, *mode, cfg));
                            gate.read_stream(false);
                            cfg.file_done();
                            break Some(r);
                        }
                        None => {}
                    }
                    let got = match rx.try_recv() {
                        Ok(v) => v,
                        Err(_) => {
                            before_wait();
                            match rx.recv() {
                                Ok(v) => v,
                                // Workers gone without this result: cannot happen, but
                                // never hang or panic over it.
                                Err(_) => break Some(Err(io::Error::other("internal error"))),
                            }
                        }
                    };
                    let (epoch, got) = got;
                    for (j, r) in got {
                        slots[j] = Some((epoch, r));
                    }
                },
            };
            sink(p, r);
        }
        // (Never leave a worker waiting, whatever happened above.)
        gate.open();
        drop(rx);
    })
}

/// For each input, whether it names a file that another input names too (by the same
/// path, as given).
fn named_twice(inputs: &[Option<Job>]) -> Vec<bool> {
    fn path(j: &Option<Job>) -> Option<&Path> {
        match j {
            Some(Job {
                input: Input::File(p),
                ..
            }) => Some(p),
            _ => None,
        }
    }
    let mut count: HashMap<&Path, usize> = HashMap::new();
    for p in inputs.iter().filter_map(path) {
        *count.entry(p).or_default() += 1;
    }
    inputs
        .iter()
        .map(|j| path(j).is_some_and(|p| count[p] > 1))
        .collect()
}

/// How far the printing thread has read the streams among the operands, for the
/// workers: a batch after a `-` waits until it has been read ([`Gate::wait_stdin`]),
/// and a file read before a stream ahead of it ended (a named pipe, found only when a
/// worker opens it) is read again.
#[derive(Default)]
struct Gate {
    /// `-` operands read, and whether waiting is over for good.
    stdin: std::sync::Mutex<(usize, bool)>,
    read: std::sync::Condvar,
    /// Streams of every kind read (`-`, pipes and devices named by path).
    streams: AtomicUsize,
}

impl Gate {
    /// Wait until `n` `-` operands have been read; then the number of streams read.
    fn wait_stdin(&self, n: usize) -> usize {
        let mut g = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        while g.0 < n && !g.1 {
            g = self.read.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        self.streams()
    }

    fn streams(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }

    /// One more stream read to its end (a `-` operand when `stdin`).
    fn read_stream(&self, stdin: bool) {
        let mut g = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        self.streams.fetch_add(1, Ordering::AcqRel);
        if stdin {
            g.0 += 1;
            self.read.notify_all();
        }
    }

    /// Let every waiting worker go.
    fn open(&self) {
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.read.notify_all();
    }
}

/// `ends` with a batch ending at each `-` operand too, so that no batch holds files on
/// both sides of one.
fn cut_after_stdin(ends: Vec<usize>, inputs: &[Option<Job>]) -> Vec<usize> {
    let mut out = Vec::with_capacity(ends.len());
    let mut a = 0;
    for b in ends {
        out.extend(
            (a + 1..b).filter(|&e| is_stdin(&inputs[e - 1])), // (batch a..e ends at a `-`)
        );
        out.push(b);
        a = b;
    }
    out
}

/// Where the workers' batches of `inputs` end ([`md5x::tuning::batch_ends`]: a lane set
/// of inputs each, or, with few inputs per worker, about a worker's share of their
/// bytes, the sizes looked up on `workers` threads). 40 files of 20 MiB on 2 workers,
/// in the batches of 2 that this cut by count before, took 0.45-0.50 s, 2.6x `-j1`.
fn batch_ends(inputs: &[Option<Job>], workers: usize) -> Vec<usize> {
    md5x::tuning::batch_ends(inputs.len(), workers, batch_cap(), || {
        let paths: Vec<Option<&std::path::Path>> = inputs
            .iter()
            .map(|j| match j {
                Some(Job {
                    input: Input::File(p),
                    ..
                }) => Some(p.as_path()),
                _ => None,
            })
            .collect();
        md5x::tuning::file_sizes(&paths, workers)
    })
}

fn is_stdin(j: &Option<Job>) -> bool {
    matches!(
        j,
        Some(Job {
            input: Input::Stdin,
            ..
        })
    )
}

/// The most small files a batch holds: 32, or one set of the active backend's lanes
/// where that is more (AVX-512: 48), so that a batch can fill them. Every file of a
/// batch is in memory at once, up to [`SMALL_MAX`] bytes each. Measured on Zen 5 (2
/// cores, page cache, best of 10, three alternating runs): 10,000 files of 64 KiB
/// 0.065-0.068 s with 32, 0.062-0.065 s with 48; 20,000 files of 1 KiB 0.049-0.051 s
/// and 0.047 s (md5sum: 0.89 s and 0.123 s).
fn batch_cap() -> usize {
    md5x::Backend::active().lanes().max(32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The tests that hold large files, one at a time (they share `DEFERRED`).
    static HOLDING: Mutex<()> = Mutex::new(());

    /// `reaches_foreign_fd` finds this process's descriptors 0-2 behind each name
    /// Linux gives them, behind a link to one and through one, only for the
    /// descriptors asked about; never another process's, or a name that does not
    /// resolve. Then, once the descriptors the process started with are known, the
    /// others above 2 (md5x's own) are found too. (The only test that sets
    /// `INHERITED`.)
    #[test]
    fn names_of_standard_descriptors() {
        let dir = std::env::temp_dir().join(format!("md5x-stdfd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("in");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/dev/stdin", &link).unwrap();
        let chain = dir.join("chain");
        let _ = std::fs::remove_file(&chain);
        std::os::unix::fs::symlink("in", &chain).unwrap();
        let pid = format!("/proc/{}/fd/2", std::process::id());
        let found = |p: &str, fds: u8| reaches_foreign_fd(Path::new(p), fds);
        let all = [
            ("/dev/stdin", 1),
            ("/dev/fd/0", 1),
            ("/proc/self/fd/0", 1),
            ("/proc/thread-self/fd/0", 1),
            ("/dev/stdout", 2),
            ("/dev/fd/1", 2),
            ("/dev/stderr", 4),
            (&pid, 4),
            ("/dev/stdin/x", 1),
            ("/dev/fd/0/..", 1),
            ("/dev/stdin/.", 1),
            ("/proc/self/fdinfo/0", 1),
            ("/proc/thread-self/fdinfo/2", 4),
            (link.to_str().unwrap(), 1),
            (chain.to_str().unwrap(), 1),
        ];
        for (p, bit) in all {
            assert!(found(p, bit), "{p}");
            assert!(found(p, 7), "{p}");
            assert!(!found(p, 7 & !bit), "{p}");
            assert!(!found(p, 0), "{p}");
        }
        for p in [
            "/dev/null",
            "/proc/self/fd/3",
            "/proc/self/fd/00",
            "/proc/self/fd",
            "/proc/1/fd/0",
            "/nonexistent/fd/0",
            "fd/0",
            "/",
            "",
        ] {
            assert!(!found(p, 7), "{p}");
        }
        // This process's own descriptor 3 (not one it started with, by this list).
        let own = File::open(link.with_file_name("")).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&own) as u32;
        let name = format!("/proc/self/fd/{fd}");
        assert!(!found(&name, 0), "unknown at start-up: {name}");
        INHERITED.set(vec![fd + 1]).unwrap();
        for p in [
            name.clone(),
            format!("/dev/fd/{fd}/x"),
            format!("/proc/self/fdinfo/{fd}"),
        ] {
            assert!(found(&p, 0), "{p}");
        }
        let kept = format!("/proc/self/fd/{}", fd + 1);
        for p in [
            &kept,
            "/proc/self/fd/0",
            "/proc/self/fd/4294967296",
            "/proc/self/fd/03",
        ] {
            assert!(!found(p, 0), "{p}");
        }
        assert!(!foreign_fd(format!("0{fd}").as_bytes(), 7));
        assert!(foreign_fd(b"0", 1) && !foreign_fd(b"00", 1) && !foreign_fd(b"", 7));
        drop(own);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A large file leaves at most `SMALL_MAX + 1` bytes in the arena, however much room
    /// the arena has (it grows by doubling, and a batch of large files held their whole
    /// contents there before this bound), and the rest is hashed with it.
    #[test]
    fn large_files_leave_only_their_start_in_the_arena() {
        let _one = HOLDING.lock().unwrap_or_else(|e| e.into_inner());
        let dir = std::env::temp_dir().join(format!("md5x-engine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = Config {
            jobs: 2,
            progress: None,
        };
        let mut arena = Arena::default();
        arena.buf.resize(64 << 20, 0);
        let mut files = Vec::new();
        for (i, len) in [SMALL_MAX + 1, 3 << 20, 5 << 20].into_iter().enumerate() {
            let data: Vec<u8> = (0..len).map(|j| (j * 7 + i) as u8).collect();
            let path = dir.join(format!("f{i}"));
            std::fs::write(&path, &data).unwrap();
            let before = arena.used;
            match read_file(
                File::open(&path).unwrap(),
                &mut arena,
                &cfg,
                false,
                true,
                None,
            ) {
                Ok(Read1::Large(f, prefix)) => {
                    assert_eq!(
                        prefix,
                        before..before + SMALL_MAX + 1,
                        "file of {len} bytes"
                    );
                    files.push((f, prefix, data));
                }
                _ => panic!("a file of {len} bytes was not deferred"),
            }
        }
        let want: Vec<Digest> = files.iter().map(|(_, _, d)| md5x::md5(d)).collect();
        let held = files.into_iter().map(|(f, r, _)| (f, r)).collect();
        let got: Vec<Digest> = hash_large(&arena.buf, held, &cfg)
            .into_iter()
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Multipart ETags hashed part by part across held files: each as `s3_etag` gives
    /// it for the bytes the file holds when the batch's parts are hashed (one that
    /// grew or shrank after it was opened included), in order.
    #[test]
    fn multipart_etags_of_held_files() {
        let _one = HOLDING.lock().unwrap_or_else(|e| e.into_inner());
        let dir = std::env::temp_dir().join(format!("md5x-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = Config {
            jobs: 1,
            progress: None,
        };
        const MIB: usize = 1 << 20;
        let (part, threshold) = (5 * MIB as u64, 0);
        let sizes = [0, 1, 5 * MIB, 5 * MIB + 1, 12 * MIB + 3, 7 * MIB, 6 * MIB];
        let mut held = Vec::new();
        let mut want = Vec::new();
        for (i, &len) in sizes.iter().enumerate() {
            let mut data: Vec<u8> = (0..len).map(|j| (j * 13 + i) as u8).collect();
            let path = dir.join(format!("p{i}"));
            std::fs::write(&path, &data).unwrap();
            let f = File::open(&path).unwrap();
            match hold_parts(f, len as u64, part, threshold) {
                Ok(Read1::Parts(d, p, t)) => held.push((d, p, t)),
                _ => panic!("file {i} not held"),
            }
            match i {
                5 => data.extend_from_slice(&[7; 1000]),
                6 => data.truncate(4 * MIB),
                _ => {}
            }
            std::fs::write(&path, &data).unwrap();
            want.push(Sum::etag(chains::s3_etag(&data, part, threshold).unwrap()));
        }
        let got: Vec<Sum> = hash_multipart(held, &cfg)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Batches end after each `-`, so that a batch after it can wait for it to be read.
    #[test]
    fn batches_end_at_each_stdin() {
        let file = || {
            Some(Job {
                input: Input::File("f".into()),
                mode: Mode::Md5,
            })
        };
        let stdin = || {
            Some(Job {
                input: Input::Stdin,
                mode: Mode::Md5,
            })
        };
        let inputs = vec![stdin(), file(), file(), stdin(), None, file(), stdin()];
        assert_eq!(cut_after_stdin(vec![7], &inputs), [1, 4, 7]);
        assert_eq!(cut_after_stdin(vec![2, 4, 7], &inputs), [1, 2, 4, 7]);
        assert_eq!(cut_after_stdin(vec![3, 5, 7], &inputs), [1, 3, 4, 5, 7]);
        assert_eq!(cut_after_stdin(vec![1, 2], &inputs[1..3]), [1, 2]);
    }

    /// At most `deferred_cap()` large files are held open at once, and a file let go
    /// frees its place.
    #[test]
    fn large_files_held_open_are_capped() {
        let _one = HOLDING.lock().unwrap_or_else(|e| e.into_inner());
        let null = || File::open("/dev/null").unwrap();
        let mut held: Vec<Deferred> = (0..deferred_cap())
            .map(|i| Deferred::hold(null()).unwrap_or_else(|_| panic!("refused file {i}")))
            .collect();
        assert!(Deferred::hold(null()).is_err());
        held.pop();
        let again = Deferred::hold(null());
        assert!(again.is_ok());
        drop(again);
        drop(held);
        assert_eq!(DEFERRED.load(Ordering::Acquire), 0);
    }

    /// A handed-back stream whose worker read a head reads the file itself past the
    /// head, also 4 GiB on, where a 32-bit position would wrap into the head again.
    #[test]
    fn a_handed_stream_reads_past_4_gib_from_the_file() {
        let dir = std::env::temp_dir().join(format!("md5x-handed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sparse");
        let far: u64 = (4 << 30) + 3;
        {
            let f = File::create(&path).unwrap();
            f.set_len(far).unwrap();
            std::os::unix::fs::FileExt::write_all_at(&f, b"tail", far).unwrap();
        }
        let mut h = Handed::new(File::open(&path).unwrap());
        h.head = b"head bytes".to_vec();
        let mut buf = [0u8; 4];
        assert_eq!(h.read(&mut buf).unwrap(), 4);
        assert_eq!(&buf, b"head");
        for at in [far, (4 << 30) + 1] {
            h.at = at;
            let mut got = Vec::new();
            h.read_to_end(&mut got).unwrap();
            let want: &[u8] = if at == far { b"tail" } else { b"\0\0tail" };
            assert_eq!(got, want, "from {at}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
