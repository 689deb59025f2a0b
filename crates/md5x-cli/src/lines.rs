//! Checksum lines: how hash mode writes them (md5sum's escaping and its two forms) and
//! how `-c` reads them back (md5sum's parsing rules, the BSD reversed form, md5x's
//! tags, base64 sums). Pure functions of bytes over `md5x` and `algo` only, so that
//! the fuzz crate can build this file as it is (`fuzz/fuzz_targets/lines.rs`).
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

use std::sync::atomic::{AtomicI8, Ordering};

use md5x::chains::ETag;
use md5x::Digest;

use crate::algo::Algo;

/// Whether md5sum escapes `name` in its output: it holds a backslash, newline or
/// carriage return.
pub fn problematic(name: &[u8]) -> bool {
    name.iter().any(|&c| matches!(c, b'\\' | b'\n' | b'\r'))
}

/// Append `name` with md5sum's escaping (`\\`, `\n`, `\r`) when `escape`.
pub fn push_name(out: &mut Vec<u8>, name: &[u8], escape: bool) {
    if !escape {
        out.extend_from_slice(name);
        return;
    }
    for &c in name {
        match c {
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            _ => out.push(c),
        }
    }
}

/// How hash mode writes its lines.
pub struct LineForm<'a> {
    /// `--tag`: the BSD form, `TAG (NAME) = SUM`, with this tag.
    pub tag: Option<&'a [u8]>,
    /// `-b`: `SUM *NAME` (else `SUM  NAME`).
    pub binary: bool,
    /// What ends the line: `\n`, or `\0` with `-z` (which escapes no name).
    pub delim: u8,
}

/// Append hash mode's line for `name`, its sum written by `sum`, as md5sum writes it:
/// a name with a backslash, newline or carriage return escaped (unless `-z`) and the
/// line then marked by a leading `\`.
pub fn push_line(line: &mut Vec<u8>, form: &LineForm, name: &[u8], sum: impl FnOnce(&mut Vec<u8>)) {
    let esc = form.delim == b'\n' && problematic(name);
    if esc {
        line.push(b'\\');
    }
    if let Some(tag) = form.tag {
        line.extend_from_slice(tag);
        line.extend_from_slice(b" (");
        push_name(line, name, esc);
        line.extend_from_slice(b") = ");
        sum(line);
    } else {
        sum(line);
        line.push(b' ');
        line.push(if form.binary { b'*' } else { b' ' });
        push_name(line, name, esc);
    }
    line.push(form.delim);
}

/// The line hash mode writes for `name` and the `algo` sum `want` (newline included):
/// the sum in hex (an ETag with its `-N`) or in base64, tagged or not, text or binary.
/// Hash mode writes its sums straight from the engine's results; this is for what
/// reads its lines back: the unit tests below and the fuzz target
/// (`fuzz/fuzz_targets/lines.rs`).
#[cfg_attr(not(test), allow(dead_code))]
pub fn line_for(
    name: &[u8],
    algo: Algo,
    want: ETag,
    base64: bool,
    tagged: bool,
    binary: bool,
) -> Vec<u8> {
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
    line
}

/// md5sum decides once per run whether one-space lines are the BSD reversed format:
/// -1 undecided, 0 no (two-space/asterisk lines seen), 1 yes.
pub static BSD_REVERSED: AtomicI8 = AtomicI8::new(-1);

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
pub fn multipart_etag_line(l: &[u8]) -> bool {
    sum_word(l)
        .1
        .is_some_and(|d| parse_sum(Algo::Etag, d, false).is_some_and(|e| e.parts().is_some()))
}

/// Whether the line `l` (newline and CR removed), improperly formatted without
/// `--base64`, holds a base64 sum: untagged and followed by a name, or at the end of a
/// tagged line.
pub fn base64_sum_line(l: &[u8]) -> bool {
    let (s, first) = sum_word(l);
    let last = s.rsplit(|&c| white(c)).next().unwrap_or_default();
    let untagged = first.is_some_and(|d| Digest::from_base64(d).is_ok());
    let tagged = TAGS.iter().any(|(t, _)| s.starts_with(t)) && Digest::from_base64(last).is_ok();
    untagged || tagged
}

/// A checksum line, parsed.
pub struct Parsed {
    pub algo: Algo,
    pub want: ETag,
    pub name: Vec<u8>,
}

/// The tags of BSD-style lines, longest first where one is a prefix of another: one
/// for every sum md5x computes.
pub const TAGS: &[(&[u8], Algo)] = &[
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
pub fn split_line(s: &[u8], algo: Algo, base64: bool) -> Option<Parsed> {
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

/// A checksum list's line without its newline and carriage return; `None` for a
/// comment or a blank line.
pub fn content(raw: &[u8]) -> Option<&[u8]> {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Every sum md5x computes (each has a tag).
    fn any_algo(rng: &mut Rng) -> Algo {
        TAGS[rng.below(TAGS.len())].1
    }

    /// What a line md5x writes in hash mode says, and its form.
    struct Written {
        name: Vec<u8>,
        algo: Algo,
        want: ETag,
        base64: bool,
        tagged: bool,
        binary: bool,
    }

    impl Written {
        /// The line (newline included).
        fn line(&self) -> Vec<u8> {
            let w = self;
            line_for(&w.name, w.algo, w.want, w.base64, w.tagged, w.binary)
        }
    }

    /// A random line hash mode writes.
    fn written(rng: &mut Rng) -> Written {
        let name: Vec<u8> = (0..1 + rng.below(24)).map(|_| rng.byte()).collect();
        let algo = any_algo(rng);
        let digest =
            Digest::from((u128::from(rng.next()) << 64 | u128::from(rng.next())).to_le_bytes());
        let want = match (algo, rng.below(2)) {
            (Algo::Etag, 0) => ETag::multipart(digest, 1 + rng.below(10_000) as u32),
            _ => ETag::single(digest),
        };
        let base64 = algo != Algo::Etag && rng.below(3) == 0;
        let tagged = rng.below(2) == 0;
        Written {
            name,
            algo,
            want,
            base64,
            tagged,
            binary: rng.below(2) == 0,
        }
    }

    /// `w`'s line parses back to its name and sum; an untagged line is read with its
    /// own algorithm, a tagged one with any.
    fn reads_back(w: &Written, other: Algo) {
        let line = w.line();
        let shown = String::from_utf8_lossy(&line).into_owned();
        let untagged_algo = if w.tagged { other } else { w.algo };
        BSD_REVERSED.store(-1, Ordering::Relaxed);
        let l = content(&line).unwrap_or_else(|| panic!("{shown:?} read as a comment or blank"));
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
            let other = any_algo(&mut rng);
            reads_back(&w, other);
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
                        let w = Written {
                            name: name.to_vec(),
                            algo,
                            want: ETag::single(digest),
                            base64: true,
                            tagged,
                            binary,
                        };
                        assert!(w.line().windows(24).any(|x| x == b64.as_bytes()));
                        for &(_, other) in TAGS {
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
                _ => written(&mut rng).line(),
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
            for &(_, algo) in TAGS {
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
