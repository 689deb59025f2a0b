//! `-c`: read checksum lines and verify the files they name, with md5sum's parsing
//! rules, messages and exit status.
//!
//! Accepted lines (after optional leading blanks and an optional `\` that marks an
//! escaped name): `HEX  NAME` (text), `HEX *NAME` (binary), `HEX NAME` (the BSD
//! `md5 -r` form: only when no two-space/asterisk line came before it in this run, and
//! the other way round), and `MD5 (NAME) = HEX`. HEX is 32 hex digits, either case.
//! Trailing CR is dropped; `#` lines and empty lines are skipped.
//!
//! md5x's other sums: lines tagged `MD5-P4`, `MD5-P8`, `MD5-P16` (HEX) and `ETAG`
//! (HEX or HEX-N, optionally in double quotes) are checked as such whatever `-a` says;
//! untagged lines hold the sum that `-a` / `--etag` choose.

use std::io::{self, BufRead, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI8, Ordering};

use md5x::chains::{limits::DEFAULT_PART_SIZE, ETag};
use md5x::Digest;

use crate::algo::{show_size, Algo};
use crate::engine::{self, Input, Job, Mode};
use crate::longpath::as_path;
use crate::{problematic, push_name, Ctx};

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

/// md5sum decides once per run whether one-space lines are the BSD reversed format:
/// -1 undecided, 0 no (two-space/asterisk lines seen), 1 yes.
static BSD_REVERSED: AtomicI8 = AtomicI8::new(-1);

fn white(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn valid_hex(d: &[u8]) -> bool {
    d.len() == 32 && d.iter().all(u8::is_ascii_hexdigit)
}

/// Undo md5sum's escaping: `\\`, `\n`, `\r`; anything else after `\`, a trailing `\`
/// or a NUL make the line invalid.
fn unescape(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' => {
                i += 1;
                match s.get(i)? {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b'\\' => out.push(b'\\'),
                    _ => return None,
                }
            }
            0 => return None,
            c => out.push(c),
        }
        i += 1;
    }
    Some(out)
}

fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&c| c == 0) {
        Some(p) => &s[..p],
        None => s,
    }
}

fn name_of(s: &[u8], escaped: bool) -> Option<Vec<u8>> {
    if escaped {
        unescape(s)
    } else {
        Some(c_str(s).to_vec())
    }
}

/// A sum as a line writes it, for `algo`: 32 hex digits (or with `base64`, also 24
/// characters of base64), or for an ETag also `-N` and S3's double quotes. A plain
/// sum comes back as a single-PUT ETag (no `-N`).
fn parse_sum(algo: Algo, d: &[u8], base64: bool) -> Option<ETag> {
    match algo {
        Algo::Etag => std::str::from_utf8(d).ok()?.parse().ok(),
        _ if valid_hex(d) => Digest::from_hex(d).ok().map(ETag::single),
        _ if base64 => Digest::from_base64(d).ok().map(ETag::single),
        _ => None,
    }
}

/// The line `l` (newline and CR removed) without the blanks and the escape's `\` that
/// `split_line` reads before a sum, and its first word: the sum of an untagged line,
/// when a name follows it.
fn sum_word(l: &[u8]) -> (&[u8], Option<&[u8]>) {
    let s = &l[l.iter().position(|&c| !white(c)).unwrap_or(l.len())..];
    let s = s.strip_prefix(b"\\").unwrap_or(s);
    let first = s
        .iter()
        .position(|&c| white(c))
        .filter(|&end| end + 1 < s.len())
        .map(|end| &s[..end]);
    (s, first)
}

/// Whether the line `l` (newline and CR removed) is an untagged line whose sum is an
/// S3 multipart ETag (`hex-N`, as `md5x --etag` writes it) followed by a name.
fn multipart_etag_line(l: &[u8]) -> bool {
    sum_word(l)
        .1
        .is_some_and(|d| parse_sum(Algo::Etag, d, false).is_some_and(|e| e.parts().is_some()))
}

/// Whether the line `l` (newline and CR removed), improperly formatted without
/// `--base64`, holds a base64 sum: untagged and followed by a name, or at the end of a
/// tagged line.
fn base64_sum_line(l: &[u8]) -> bool {
    let (s, first) = sum_word(l);
    let last = s.rsplit(|&c| white(c)).next().unwrap_or_default();
    let untagged = first.is_some_and(|d| Digest::from_base64(d).is_ok());
    let tagged = TAGS.iter().any(|(t, _)| s.starts_with(t)) && Digest::from_base64(last).is_ok();
    untagged || tagged
}

/// A checksum line, parsed.
struct Parsed {
    algo: Algo,
    want: ETag,
    name: Vec<u8>,
}

/// The tags of BSD-style lines, longest first where one is a prefix of another.
const TAGS: &[(&[u8], Algo)] = &[
    (b"MD5-P16", Algo::Par(16)),
    (b"MD5-P4", Algo::Par(4)),
    (b"MD5-P8", Algo::Par(8)),
    (b"MD5", Algo::Md5),
    (b"ETAG", Algo::Etag),
];

/// `TAG (` has been read; `s` is the rest: `NAME) = SUM`.
fn bsd_split(s: &[u8], escaped: bool, algo: Algo, base64: bool) -> Option<Parsed> {
    if s.is_empty() {
        return None;
    }
    let mut i = s.len() - 1;
    while i > 0 && s[i] != b')' {
        i -= 1;
    }
    if s[i] != b')' {
        return None;
    }
    let name = name_of(&s[..i], escaped)?;
    i += 1;
    while white(at(s, i)) {
        i += 1;
    }
    if at(s, i) != b'=' {
        return None;
    }
    i += 1;
    while white(at(s, i)) {
        i += 1;
    }
    // The sum runs to the end of the line: a NUL after it makes the line invalid, as in
    // md5sum 9.4 (9.1 read the sum as a C string and ignored what followed a NUL).
    let want = parse_sum(algo, &s[i.min(s.len())..], base64)?;
    Some(Parsed { algo, want, name })
}

/// Split one line (newline and CR removed) into sum and file name; untagged lines hold
/// an `algo` sum. With `base64`, sums may also be written in base64.
fn split_line(s: &[u8], algo: Algo, base64: bool) -> Option<Parsed> {
    let len = s.len();
    let mut i = 0;
    while white(at(s, i)) {
        i += 1;
    }
    let mut escaped = false;
    if at(s, i) == b'\\' {
        i += 1;
        escaped = true;
    }
    let rest = &s[i.min(len)..];
    let tagged = TAGS
        .iter()
        .find(|(t, _)| rest.starts_with(t) && matches!(rest.get(t.len()), Some(b' ' | b'(')));
    if let Some(&(t, tag_algo)) = tagged {
        i += t.len();
        if at(s, i) == b' ' {
            i += 1;
        }
        if at(s, i) == b'(' {
            return bsd_split(&s[i + 1..], escaped, tag_algo, base64);
        }
        return None;
    }
    // md5sum (and cksum 9.7) give up here on any other line that starts with the tag,
    // which cannot be a hex sum; but a base64 sum can start with `MD5` or `ETAG` (one in
    // 262,144 starts with `MD5`), and `md5x --base64` writes such lines: they are read
    // as the untagged lines they are.
    //
    // Long enough for 32 hex digits (24 base64 characters), a blank and a
    // one-character name.
    let shortest = if base64 && algo != Algo::Etag { 24 } else { 32 };
    if len - i < shortest + 2 + usize::from(at(s, i) == b'\\') {
        return None;
    }
    // The sum ends at a blank or, as in md5sum 9.4, a NUL, which then stands for the
    // blank (9.1 took a NUL into the sum, which made the line invalid).
    let d0 = i;
    while i < len && s[i] != 0 && !white(s[i]) {
        i += 1;
    }
    if i == len {
        return None;
    }
    let digest = &s[d0..i];
    i += 1;
    let want = parse_sum(algo, digest, base64)?;
    let c = at(s, i);
    if len - i == 1 || (c != b' ' && c != b'*') {
        if BSD_REVERSED.load(Ordering::Relaxed) == 0 {
            return None;
        }
        BSD_REVERSED.store(1, Ordering::Relaxed);
    } else if BSD_REVERSED.load(Ordering::Relaxed) != 1 {
        BSD_REVERSED.store(0, Ordering::Relaxed);
        i += 1;
    }
    let name = name_of(&s[i.min(len)..], escaped)?;
    Some(Parsed { algo, want, name })
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

/// A checksum list's line without its newline and carriage return; `None` for a
/// comment or a blank line.
fn content(raw: &[u8]) -> Option<&[u8]> {
    if raw.first() == Some(&b'#') {
        return None;
    }
    let mut l = raw;
    if l.last() == Some(&b'\n') {
        l = &l[..l.len() - 1];
    }
    if l.last() == Some(&b'\r') {
        l = &l[..l.len() - 1];
    }
    (!l.is_empty()).then_some(l)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{push_line, LineForm};

    /// xorshift64: the same names and sums in every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// A byte, mostly one that means something to the parser.
        fn byte(&mut self) -> u8 {
            const TRICKY: &[u8] = b" \t\\\n\r()=*#-\"M5DPETAGabcdef0123456789+/";
            match self.below(4) {
                0 => 1 + self.below(255) as u8,
                _ => TRICKY[self.below(TRICKY.len())],
            }
        }
    }

    /// `BSD_REVERSED` is the process's: one test at a time sets it.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    const ALGOS: [Algo; 5] = [
        Algo::Md5,
        Algo::Par(4),
        Algo::Par(8),
        Algo::Par(16),
        Algo::Etag,
    ];

    /// A line md5x writes in hash mode (newline included), and what it says.
    struct Written {
        line: Vec<u8>,
        algo: Algo,
        want: ETag,
        name: Vec<u8>,
        base64: bool,
        tagged: bool,
    }

    /// The line hash mode writes for `name` and `want`, with these settings.
    fn write(
        name: &[u8],
        algo: Algo,
        want: ETag,
        base64: bool,
        tagged: bool,
        binary: bool,
    ) -> Written {
        let form = LineForm {
            tag: tagged.then(|| algo.tag().as_bytes()),
            binary,
            delim: b'\n',
        };
        let mut line = Vec::new();
        push_line(&mut line, &form, name, |l| match base64 {
            true => l.extend_from_slice(want.digest().to_base64().as_bytes()),
            false => l.extend_from_slice(want.to_string().as_bytes()),
        });
        Written {
            line,
            algo,
            want,
            name: name.to_vec(),
            base64,
            tagged,
        }
    }

    /// A random line hash mode writes.
    fn written(rng: &mut Rng) -> Written {
        let name: Vec<u8> = (0..1 + rng.below(24)).map(|_| rng.byte()).collect();
        let algo = ALGOS[rng.below(ALGOS.len())];
        let digest =
            Digest::from((u128::from(rng.next()) << 64 | u128::from(rng.next())).to_le_bytes());
        let want = match (algo, rng.below(2)) {
            (Algo::Etag, 0) => ETag::multipart(digest, 1 + rng.below(10_000) as u32),
            _ => ETag::single(digest),
        };
        let base64 = algo != Algo::Etag && rng.below(3) == 0;
        write(
            &name,
            algo,
            want,
            base64,
            rng.below(2) == 0,
            rng.below(2) == 0,
        )
    }

    /// `w`'s line parses back to its name and sum; an untagged line is read with its
    /// own algorithm, a tagged one with any.
    fn reads_back(w: &Written, other: Algo) {
        let shown = String::from_utf8_lossy(&w.line).into_owned();
        let untagged_algo = if w.tagged { other } else { w.algo };
        BSD_REVERSED.store(-1, Ordering::Relaxed);
        let l = content(&w.line).unwrap_or_else(|| panic!("{shown:?} read as a comment or blank"));
        let p = split_line(l, untagged_algo, w.base64)
            .unwrap_or_else(|| panic!("{shown:?} (-a {untagged_algo:?}) did not parse"));
        assert_eq!(p.name, w.name, "{shown:?}: the name");
        assert_eq!((p.algo, p.want), (w.algo, w.want), "{shown:?}: the sum");
    }

    /// Every line hash mode writes reads back as its name and sum: any name bytes
    /// (blanks, parentheses, `=`, backslashes, newlines and carriage returns among
    /// them), each sum, tagged or not, text or binary, hex or base64.
    #[test]
    fn hash_mode_lines_read_back() {
        let _one = ONE_AT_A_TIME.lock();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..100_000 {
            let w = written(&mut rng);
            reads_back(&w, ALGOS[rng.below(ALGOS.len())]);
        }
    }

    /// Base64 sums that start with a tag's letters (md5sum gives up on a line that
    /// starts with its tag and is not tagged): in every form, under every `-a`.
    #[test]
    fn base64_sums_that_start_like_a_tag() {
        let _one = ONE_AT_A_TIME.lock();
        for b64 in [
            "MD5adwArj4rPhO8GR2DyPg==",
            "ETAGxxxxxxxxxxxxxxxxxA==",
            "MD5Pxxxxxxxxxxxxxxxxxg==",
        ] {
            let digest = Digest::from_base64(b64).unwrap();
            for algo in [Algo::Md5, Algo::Par(4), Algo::Par(8), Algo::Par(16)] {
                for (tagged, binary) in [(false, false), (false, true), (true, false)] {
                    for name in [&b"f"[..], b"MD5 (x) = y", b"back\\slash"] {
                        let w = write(name, algo, ETag::single(digest), true, tagged, binary);
                        assert!(w.line.windows(24).any(|x| x == b64.as_bytes()));
                        for other in ALGOS {
                            reads_back(&w, other);
                        }
                    }
                }
            }
        }
    }

    /// Lines a byte off those md5x writes (cut short, a byte changed, added or taken
    /// out), and lines of random bytes: the parser never panics, and a name it reads
    /// holds no NUL (which no file name can).
    #[test]
    fn damaged_lines_never_panic() {
        let _one = ONE_AT_A_TIME.lock();
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        for round in 0..200_000 {
            let mut line = match round % 8 {
                0 => (0..rng.below(90)).map(|_| rng.byte()).collect(),
                _ => written(&mut rng).line,
            };
            let at = rng.below(line.len() + 1);
            match rng.below(5) {
                0 => line.truncate(at),
                1 if at < line.len() => line[at] = rng.byte(),
                2 => line.insert(at, if rng.below(8) == 0 { 0 } else { rng.byte() }),
                3 if at < line.len() => {
                    line.remove(at);
                }
                _ => {}
            }
            let Some(l) = content(&line) else {
                continue;
            };
            for algo in ALGOS {
                for base64 in [false, true] {
                    BSD_REVERSED.store(rng.below(3) as i8 - 1, Ordering::Relaxed);
                    if let Some(p) = split_line(l, algo, base64) {
                        assert!(
                            !p.name.contains(&0),
                            "{:?}: a NUL in the name",
                            String::from_utf8_lossy(l)
                        );
                    }
                }
            }
        }
    }
}
