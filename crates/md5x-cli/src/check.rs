//! `-c`: read checksum lines and verify the files they name, with md5sum's parsing
//! rules, messages and exit status.
//!
//! Accepted lines (after optional leading blanks and an optional `\` that marks an
//! escaped name): `HEX  NAME` (text), `HEX *NAME` (binary), `HEX NAME` (the BSD
//! `md5 -r` form: only when no two-space/asterisk line came before it in this run, and
//! the other way round), and `MD5 (NAME) = HEX`. HEX is 32 hex digits, either case.
//! Trailing CR is dropped; `#` lines and empty lines are skipped.

use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI8, Ordering};

use crate::engine::{self, Flow, Input};
use crate::{push_name, Ctx};

pub struct Opts {
    pub status: bool,
    pub warn: bool,
    pub quiet: bool,
    pub strict: bool,
    pub ignore_missing: bool,
}

pub enum Outcome {
    Done(bool),
    Stopped,
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

/// `MD5 (` has been read; `s` is the rest: `NAME) = HEX`.
fn bsd_split(s: &[u8], escaped: bool) -> Option<([u8; 32], Vec<u8>)> {
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
    let d = &s[i.min(s.len())..];
    if !valid_hex(d) {
        return None;
    }
    Some((d.try_into().ok()?, name))
}

/// Split one line (newline and CR removed) into digest and file name.
fn split_line(s: &[u8]) -> Option<([u8; 32], Vec<u8>)> {
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
    if s[i.min(len)..].starts_with(b"MD5") {
        i += 3;
        if at(s, i) == b' ' {
            i += 1;
        }
        if at(s, i) == b'(' {
            return bsd_split(&s[i + 1..], escaped);
        }
        return None;
    }
    // Long enough for 32 hex digits, a blank and a one-character name.
    if len - i < 34 + usize::from(at(s, i) == b'\\') {
        return None;
    }
    let d0 = i;
    while i < len && !white(s[i]) {
        i += 1;
    }
    if i == len {
        return None;
    }
    let digest = &s[d0..i];
    i += 1;
    if !valid_hex(digest) {
        return None;
    }
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
    Some((digest.try_into().ok()?, name))
}

enum Event {
    /// An improperly formatted line (warning text when -w).
    Bad(Option<Vec<u8>>),
    Verify {
        name: Vec<u8>,
        hex: [u8; 32],
    },
}

fn read_all(name: &[u8], stdin: bool) -> io::Result<Vec<u8>> {
    let mut v = Vec::new();
    if stdin {
        engine::READ_STDIN.store(true, Ordering::Relaxed);
        if engine::STDIN_CLOSED.load(Ordering::Relaxed) {
            return Err(io::Error::from_raw_os_error(9));
        }
        io::stdin().lock().read_to_end(&mut v)?;
    } else {
        std::fs::File::open(std::ffi::OsStr::from_bytes(name))?.read_to_end(&mut v)?;
    }
    Ok(v)
}

pub fn check_file(ctx: &mut Ctx, file: &[u8], o: &Opts) -> Outcome {
    let is_stdin = file == b"-";
    let shown: &[u8] = if is_stdin { b"standard input" } else { file };
    let data = match read_all(file, is_stdin) {
        Ok(d) => d,
        Err(e) => {
            // md5sum: an open failure names the error; a read failure says "read error".
            let open_failed =
                !is_stdin && std::fs::File::open(std::ffi::OsStr::from_bytes(file)).is_err();
            if open_failed {
                ctx.error_io(file, &e);
            } else {
                let mut m = ctx.q(shown);
                m.extend_from_slice(b": read error");
                ctx.error(&m);
            }
            return Outcome::Done(false);
        }
    };

    let mut inputs = Vec::new();
    let mut events = Vec::new();
    for (lineno, raw) in (1u64..).zip(data.split_inclusive(|&c| c == b'\n')) {
        if raw[0] == b'#' {
            continue;
        }
        let mut l = raw;
        if l.last() == Some(&b'\n') {
            l = &l[..l.len() - 1];
        }
        if l.last() == Some(&b'\r') {
            l = &l[..l.len() - 1];
        }
        if l.is_empty() {
            continue;
        }
        match split_line(l) {
            Some((hex, name)) if !(is_stdin && name == b"-") => {
                inputs.push(Some(if name == b"-" {
                    Input::Stdin
                } else {
                    Input::File(PathBuf::from(std::ffi::OsStr::from_bytes(&name)))
                }));
                events.push(Event::Verify { name, hex });
            }
            _ => {
                let warning = o.warn.then(|| {
                    let mut m = ctx.q(shown);
                    m.extend_from_slice(
                        format!(": {lineno}: improperly formatted MD5 checksum line").as_bytes(),
                    );
                    m
                });
                inputs.push(None);
                events.push(Event::Bad(warning));
            }
        }
    }

    let mut misformatted = 0u64;
    let mut mismatched = 0u64;
    let mut unreadable = 0u64;
    let mut properly = false;
    let mut matched = false;
    let cfg = ctx.cfg.clone();
    let mut line = Vec::new();
    let flow = {
        let ctx = std::cell::RefCell::new(&mut *ctx);
        engine::run(
            &cfg,
            inputs,
            events,
            |ev, res| {
                let mut ctx = ctx.borrow_mut();
                match ev {
                    Event::Bad(w) => {
                        misformatted += 1;
                        if let Some(w) = w {
                            ctx.error(&w);
                        }
                        Flow::Go
                    }
                    Event::Verify { name, hex } => {
                        properly = true;
                        // md5sum 9.1 escapes a name in check output only when it has a newline.
                        let esc = !o.status && name.contains(&b'\n');
                        line.clear();
                        if esc {
                            line.push(b'\\');
                        }
                        push_name(&mut line, &name, esc);
                        match res {
                            Some(Ok(d)) => {
                                let good =
                                    d.to_hex().as_str().as_bytes().eq_ignore_ascii_case(&hex);
                                if good {
                                    matched = true;
                                } else {
                                    mismatched += 1;
                                }
                                if o.status || (good && o.quiet) {
                                    return Flow::Go;
                                }
                                line.extend_from_slice(if good {
                                    b": OK\n"
                                } else {
                                    b": FAILED\n"
                                });
                                ctx.out.write(&line)
                            }
                            Some(Err(e))
                                if o.ignore_missing
                                    && e.kind() == io::ErrorKind::NotFound
                                    && name != b"-" =>
                            {
                                Flow::Go
                            }
                            Some(Err(e)) => {
                                unreadable += 1;
                                ctx.error_io(&name, &e);
                                if o.status {
                                    return Flow::Go;
                                }
                                line.extend_from_slice(b": FAILED open or read\n");
                                ctx.out.write(&line)
                            }
                            None => Flow::Go,
                        }
                    }
                }
            },
            || {
                let _ = ctx.borrow_mut().out.flush();
            },
        )
    };
    if flow == Flow::Stop {
        return Outcome::Stopped;
    }

    if !properly {
        let mut m = ctx.q(shown);
        m.extend_from_slice(b": no properly formatted checksum lines found");
        ctx.error(&m);
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
            let mut m = ctx.q(shown);
            m.extend_from_slice(b": no file was verified");
            ctx.error(&m);
        }
    }
    Outcome::Done(
        properly
            && matched
            && mismatched == 0
            && unreadable == 0
            && (!o.strict || misformatted == 0),
    )
}
