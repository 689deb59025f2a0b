//! `-c`: read checksum lines and verify the files they name, with md5sum's parsing
//! rules, messages and exit status.
//!
//! The lines' forms, escaping and tags, and how one line is split into sum and name,
//! are in `lines.rs`.

use std::io::{self, BufRead, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use md5x::chains::{limits::DEFAULT_PART_SIZE, ETag};

use crate::algo::{show_size, Algo};
use crate::engine::{self, Input, Job, Mode};
use crate::lines::{
    base64_sum_line, content, multipart_etag_line, problematic, push_name, split_line, Parsed,
};
use crate::longpath::as_path;
use crate::Ctx;

pub struct Opts {
    pub status: bool,
    pub warn: bool,
    pub quiet: bool,
    pub strict: bool,
    pub ignore_missing: bool,
    /// What untagged lines hold.
    pub algo: Algo,
    /// Explicit --part-size / --threshold, for ETags.
    pub part_size: Option<u64>,
    pub threshold: Option<u64>,
    /// `--base64`: sums may also be written in base64 (not ETags, which are hex).
    pub base64: bool,
}

/// What to compute to check a line's sum.
fn line_mode(algo: Algo, want: &ETag, o: &Opts) -> Mode {
    match algo {
        Algo::Md5 => Mode::Md5,
        Algo::Par(k) => Mode::Par(k),
        // The line's form says whether the upload was multipart; an explicit
        // --threshold is honoured.
        Algo::Etag => match (want.parts(), o.part_size) {
            (None, _) => match o.threshold {
                None => Mode::Md5,
                Some(threshold) => Mode::Etag {
                    part_size: o.part_size.unwrap_or(DEFAULT_PART_SIZE),
                    threshold,
                },
            },
            (Some(_), Some(part_size)) => Mode::Etag {
                part_size,
                threshold: o.threshold.unwrap_or(0),
            },
            (Some(_), None) => Mode::Search {
                target: *want,
                threshold: o.threshold.unwrap_or(0),
            },
        },
    }
}

enum Event {
    /// An improperly formatted line (warning text when -w).
    Bad(Option<Vec<u8>>),
    Verify {
        name: Vec<u8>,
        algo: Algo,
        want: ETag,
    },
}

/// What one check file's lines came to, over the runs of its chunks.
#[derive(Default)]
struct Tally {
    /// Lines read so far (for warnings' line numbers).
    lines: u64,
    misformatted: u64,
    mismatched: u64,
    unreadable: u64,
    /// Of the misformatted lines, those that hold an S3 multipart ETag (`hex-N`) where
    /// an MD5 was looked for: `md5x --etag` writes them, and `-c` alone cannot check
    /// them.
    etag_shaped: u64,
    /// Of the misformatted lines, those that hold a base64 sum (`md5x --base64`
    /// writes them) where `--base64` was not given.
    base64_shaped: u64,
    /// A properly formatted line was seen.
    properly: bool,
    /// A file matched its sum.
    matched: bool,
}

/// While it lives, the checksum list's descriptor ([`engine::LIST_FD`]) is one a
/// listed name may reach, as md5sum's list is (`/dev/fd/3` reads the list again).
struct ListFd;

impl Drop for ListFd {
    fn drop(&mut self) {
        engine::LIST_FD.store(-1, Ordering::Relaxed);
    }
}

/// Read `file`'s checksum lines (`-` is standard input) and verify them, a chunk at a
/// time: whatever one read returns, cut after its last complete line, is verified
/// (side by side on the worker threads) and reported before the next read, as md5sum
/// reports line by line. So a sums list that arrives slowly through a pipe is checked
/// as it comes, and one that waits on a file it names being read first does not hang.
/// Whether every line verified (md5sum's exit status for this file).
pub fn check_file(ctx: &mut Ctx, file: &[u8], o: &Opts) -> bool {
    let is_stdin = file == b"-";
    let shown: &[u8] = if is_stdin { b"standard input" } else { file };
    // The progress line's totals: a regular file's list is read ahead on the line's
    // thread; a stream's names are counted a chunk at a time, as they are verified.
    let progress = ctx.cfg.progress.clone();
    let mut count_chunks = progress.is_some();
    let _list = ListFd;
    let mut src: Box<dyn Read> = if is_stdin {
        engine::READ_STDIN.store(true, Ordering::Relaxed);
        Box::new(io::stdin().lock())
    } else {
        match engine::open(as_path(file)) {
            Ok(f) => {
                engine::LIST_FD.store(std::os::fd::AsRawFd::as_raw_fd(&f), Ordering::Relaxed);
                let regular = f.metadata().is_ok_and(|m| m.is_file());
                if let (Some(p), true) = (&progress, regular) {
                    // (Opened again: the read ahead keeps its own position.)
                    if let Ok(again) = engine::open(as_path(file)) {
                        p.add_list(listed_files(again, o.algo, o.base64));
                        p.spawn();
                        count_chunks = false;
                    }
                }
                Box::new(f)
            }
            Err(e) => {
                // md5sum: an open failure names the error; a read failure says "read
                // error".
                ctx.error_io(file, &e);
                return false;
            }
        }
    };
    let mut t = Tally::default();
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let unreadable = is_stdin && !engine::stdin_readable();
    let read_failed = unreadable
        || loop {
            let (n, failed) = match src.read(&mut buf) {
                Ok(n) => (n, false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // As at the end, a last line without its newline is verified: md5sum's
                // getline gives the bytes read before a failure as a line, and only
                // then does md5sum see the error and say "read error".
                Err(_) => (0, true),
            };
            let old = pending.len();
            pending.extend_from_slice(&buf[..n]);
            let cut = match n {
                0 => pending.len(),
                _ => pending[old..]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| old + p + 1),
            };
            if cut > 0 {
                let chunk = &pending[..cut];
                verify_lines(ctx, chunk, is_stdin, shown, o, &mut t, count_chunks);
                pending.drain(..cut);
                // Out before the next read, which may wait.
                ctx.out.flush();
            }
            if n == 0 {
                break failed;
            }
        };
    if read_failed {
        ctx.error_at(shown, "read error");
        return false;
    }
    let Tally {
        misformatted,
        etag_shaped,
        base64_shaped,
        mismatched,
        unreadable,
        properly,
        matched,
        ..
    } = t;
    // (After md5sum's own words on the misformatted lines.)
    let shape_notes = |ctx: &mut Ctx| {
        let notes = [
            (base64_shaped, "a base64 sum", "base64 sums", "--base64"),
            (
                etag_shaped,
                "an S3 multipart ETag (hex-N)",
                "S3 multipart ETags (hex-N)",
                "--etag",
            ),
        ];
        for (n, one, many, option) in notes {
            if n != 0 && !o.status {
                let (lines, them) = match n {
                    1 => (format!("line holds {one}"), "it"),
                    _ => (format!("lines hold {many}"), "them"),
                };
                ctx.error_at(
                    shown,
                    &format!("{n} improperly formatted {lines}: check {them} with {option}"),
                );
            }
        }
    };
    if !properly {
        ctx.error_at(shown, "no properly formatted checksum lines found");
        shape_notes(ctx);
    } else if !o.status {
        let plural = |n: u64, one: &str, many: &str| {
            if n == 1 {
                one.to_string()
            } else {
                many.to_string()
            }
        };
        if misformatted != 0 {
            let w = plural(misformatted, "line is", "lines are");
            ctx.error(format!("WARNING: {misformatted} {w} improperly formatted").as_bytes());
            shape_notes(ctx);
        }
        if unreadable != 0 {
            let w = plural(unreadable, "listed file", "listed files");
            ctx.error(format!("WARNING: {unreadable} {w} could not be read").as_bytes());
        }
        if mismatched != 0 {
            let w = plural(mismatched, "computed checksum", "computed checksums");
            ctx.error(format!("WARNING: {mismatched} {w} did NOT match").as_bytes());
        }
        if o.ignore_missing && !matched {
            ctx.error_at(shown, "no file was verified");
        }
    }
    properly && matched && mismatched == 0 && unreadable == 0 && (!o.strict || misformatted == 0)
}

/// The files a checksum list (`f`, read from its start) names, as `verify_lines` reads
/// its lines: for the progress line's totals, ahead of the verification.
fn listed_files(
    f: std::fs::File,
    algo: Algo,
    base64: bool,
) -> impl Iterator<Item = PathBuf> + Send {
    let mut r = io::BufReader::with_capacity(64 * 1024, f);
    let mut raw = Vec::new();
    std::iter::from_fn(move || loop {
        raw.clear();
        match r.read_until(b'\n', &mut raw) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        match content(&raw).and_then(|l| split_line(l, algo, base64)) {
            Some(Parsed { name, .. }) if name != b"-" => {
                return Some(PathBuf::from(std::ffi::OsString::from_vec(name)));
            }
            _ => {}
        }
    })
}

/// Verify the complete lines in `data` (the next ones of a check file), adding to `t`,
/// and with `count` their files to the progress line's totals.
fn verify_lines(
    ctx: &mut Ctx,
    data: &[u8],
    is_stdin: bool,
    shown: &[u8],
    o: &Opts,
    t: &mut Tally,
    count: bool,
) {
    let mut inputs = Vec::new();
    let mut events = Vec::new();
    for raw in data.split_inclusive(|&c| c == b'\n') {
        t.lines += 1;
        let lineno = t.lines;
        let Some(l) = content(raw) else {
            continue;
        };
        match split_line(l, o.algo, o.base64) {
            Some(Parsed { algo, want, name }) if !(is_stdin && name == b"-") => {
                let input = if name == b"-" {
                    Input::Stdin
                } else {
                    Input::File(PathBuf::from(std::ffi::OsStr::from_bytes(&name)))
                };
                let mode = line_mode(algo, &want, o);
                inputs.push(Some(Job { input, mode }));
                events.push(Event::Verify { name, algo, want });
            }
            _ => {
                if o.algo == Algo::Md5 && multipart_etag_line(l) {
                    t.etag_shaped += 1;
                }
                if !o.base64 && o.algo != Algo::Etag && base64_sum_line(l) {
                    t.base64_shaped += 1;
                }
                let warning = o.warn.then(|| {
                    let mut m = ctx.q(shown);
                    m.extend_from_slice(
                        format!(
                            ": {lineno}: improperly formatted {} checksum line",
                            o.algo.tag()
                        )
                        .as_bytes(),
                    );
                    m
                });
                inputs.push(None);
                events.push(Event::Bad(warning));
            }
        }
    }

    let cfg = ctx.cfg.clone();
    if let (Some(p), true) = (&cfg.progress, count) {
        engine::count_for_progress(p, &inputs);
        p.spawn();
    }
    let mut line = Vec::new();
    {
        let ctx = std::cell::RefCell::new(&mut *ctx);
        // (One engine run per chunk: its workers end with it.)
        engine::run(
            &cfg,
            inputs,
            events,
            |ev, res| {
                let mut ctx = ctx.borrow_mut();
                match ev {
                    Event::Bad(w) => {
                        t.misformatted += 1;
                        if let Some(w) = w {
                            ctx.error(&w);
                        }
                    }
                    Event::Verify { name, algo, want } => {
                        t.properly = true;
                        // As md5sum 9.4 and later: a name with a backslash, newline
                        // or carriage return is escaped, as in hash mode. 9.1 escaped only
                        // names with a newline.
                        let esc = !o.status && problematic(&name);
                        line.clear();
                        if esc {
                            line.push(b'\\');
                        }
                        push_name(&mut line, &name, esc);
                        match res {
                            Some(Ok(d)) => {
                                let good = d.digest == want.digest()
                                    && (algo != Algo::Etag || d.parts == want.parts());
                                if good {
                                    t.matched = true;
                                } else {
                                    t.mismatched += 1;
                                }
                                if o.status || (good && o.quiet) {
                                    return;
                                }
                                if !good {
                                    line.extend_from_slice(b": FAILED\n");
                                    ctx.out.write(&line);
                                    // A search's FAILED: say what it could not try.
                                    if let Some(m) = d.miss {
                                        ctx.error_at(&name, &m.describe());
                                    }
                                    return;
                                } else if d.parts == Some(1) && d.part_size.is_some() {
                                    // Any part size at least the file's size gives this
                                    // ETag: there is no one size to name.
                                    line.extend_from_slice(b": OK (one part)\n");
                                } else if let Some(p) = d.part_size {
                                    line.extend_from_slice(
                                        format!(": OK (part size {})\n", show_size(p)).as_bytes(),
                                    );
                                } else {
                                    line.extend_from_slice(b": OK\n");
                                }
                                ctx.out.write(&line);
                            }
                            Some(Err(e))
                                if o.ignore_missing
                                    && e.kind() == io::ErrorKind::NotFound
                                    && name != b"-" => {}
                            Some(Err(e)) => {
                                t.unreadable += 1;
                                ctx.error_io(&name, &e);
                                if o.status {
                                    return;
                                }
                                line.extend_from_slice(b": FAILED open or read\n");
                                ctx.out.write(&line);
                            }
                            None => {}
                        }
                    }
                }
            },
            || ctx.borrow_mut().out.flush(),
        );
    }
}
