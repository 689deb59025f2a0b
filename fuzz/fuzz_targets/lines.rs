//! The command's checksum lines (`crates/md5x-cli/src/lines.rs`, built here from the
//! command's own source: the binary has no library to link). Two halves:
//!
//! - any line, as `-c` reads it (up to its newline), under every `-a`, with and
//!   without `--base64`, in any BSD-reversed state: no panic, no NUL in a name, and
//!   what it parses to, written again as hash mode's tagged line, reads back the same;
//! - any name and sum written in any of hash mode's forms reads back as that name and
//!   sum (the unit tests do this over random names; here the fuzzer picks them).
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/md5x-cli/src/algo.rs"]
mod algo;
#[allow(dead_code)]
#[path = "../../crates/md5x-cli/src/lines.rs"]
mod lines;

use std::sync::atomic::Ordering;

use algo::Algo;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use lines::{content, line_for, split_line, Parsed, BSD_REVERSED, TAGS};
use md5x::chains::ETag;
use md5x::Digest;

#[derive(Arbitrary, Debug)]
struct Input {
    /// `-a` for the read line's untagged sums; the algorithm of the written line.
    algo: u8,
    base64: bool,
    /// The BSD-reversed state before the read line: undecided, no, yes.
    state: u8,
    line: Vec<u8>,
    /// The written line: its name (NULs dropped: no file name holds one), its sum,
    /// an ETag's part count, and its form (tagged, binary, base64).
    name: Vec<u8>,
    sum: [u8; 16],
    parts: Option<u16>,
    tagged: bool,
    binary: bool,
}

/// `line` as `-c` reads it in a fresh run, its untagged sums under `-a algo`.
fn read(line: &[u8], algo: Algo, base64: bool) -> Option<Parsed> {
    BSD_REVERSED.store(-1, Ordering::Relaxed);
    split_line(content(line)?, algo, base64)
}

fuzz_target!(|input: Input| {
    // Every sum md5x computes has a tag.
    let algo = TAGS[usize::from(input.algo) % TAGS.len()].1;
    let other = TAGS[usize::from(input.algo / 8) % TAGS.len()].1;

    // Any line, as the reader cuts it.
    let raw = match input.line.iter().position(|&c| c == b'\n') {
        Some(end) => &input.line[..=end],
        None => &input.line[..],
    };
    BSD_REVERSED.store((input.state % 3) as i8 - 1, Ordering::Relaxed);
    if let Some(p) = content(raw).and_then(|l| split_line(l, algo, input.base64)) {
        let shown = String::from_utf8_lossy(raw);
        assert!(!p.name.contains(&0), "{shown:?}: a NUL in the name");
        let again = line_for(&p.name, p.algo, p.want, false, true, false);
        let q = read(&again, other, false).unwrap_or_else(|| {
            let again = String::from_utf8_lossy(&again);
            panic!("{shown:?} written again as {again:?} did not parse")
        });
        assert_eq!(
            (q.name, q.algo, q.want),
            (p.name, p.algo, p.want),
            "{shown:?}"
        );
    }

    // Any name and sum, written in one of hash mode's forms.
    let name: Vec<u8> = input.name.iter().copied().filter(|&c| c != 0).collect();
    if name.is_empty() {
        return;
    }
    let digest = Digest::from(input.sum);
    let want = match (algo, input.parts) {
        // S3 makes 1 to 10,000 parts; only those counts parse back.
        (Algo::Etag, Some(n)) => ETag::multipart(digest, 1 + u32::from(n) % 10_000),
        _ => ETag::single(digest),
    };
    let base64 = input.base64 && algo != Algo::Etag;
    let line = line_for(&name, algo, want, base64, input.tagged, input.binary);
    // An untagged line holds the sum `-a` names; a tagged one is read under any.
    let untagged_algo = if input.tagged { other } else { algo };
    let shown = String::from_utf8_lossy(&line);
    let p = read(&line, untagged_algo, base64)
        .unwrap_or_else(|| panic!("{shown:?} (-a {untagged_algo:?}) did not parse"));
    assert_eq!((p.name, p.algo, p.want), (name, algo, want), "{shown:?}");
});
