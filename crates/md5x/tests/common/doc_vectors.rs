//! The test vectors of `docs/modes.md`, read from that document's table itself, so
//! that what the documentation promises and what the tests check cannot drift apart.
//! Shared by the library's tests (through `common`), the command's tests and the soak
//! example (each by `#[path]`).
#![allow(dead_code)]

/// `docs/modes.md`, built in.
const MODES_MD: &str = include_str!("../../../../docs/modes.md");

/// The table's rows past its header: `(mode, len, result)`, cells trimmed.
fn rows() -> impl Iterator<Item = (&'static str, usize, &'static str)> {
    let table = MODES_MD
        .split_once("| mode | len | result |")
        .expect("docs/modes.md has its vector table")
        .1;
    table
        .lines()
        .skip(2) // the rest of the header line, and the |---| line
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let [_, mode, len, result, _] = cells[..] else {
                panic!("docs/modes.md: a vector row of three cells: {l}");
            };
            let len = len.parse().unwrap_or_else(|_| panic!("docs/modes.md: {l}"));
            (mode, len, result)
        })
}

/// The MD5-P(K) vectors: `(k, len, hex)`, in the document's order.
pub fn par_vectors() -> Vec<(usize, usize, &'static str)> {
    let v: Vec<_> = rows()
        .filter_map(|(mode, len, hex)| {
            let k = mode.strip_prefix("MD5-P")?.parse().expect(mode);
            Some((k, len, hex))
        })
        .collect();
    assert!(v.len() >= 12, "docs/modes.md: {} MD5-P(K) vectors", v.len());
    v
}

/// The ETag vectors, whose part size and threshold are equal: `(part, len, etag)`.
pub fn etag_vectors() -> Vec<(u64, usize, &'static str)> {
    let v: Vec<_> = rows()
        .filter_map(|(mode, len, etag)| {
            let mib = mode
                .strip_prefix("ETag, part = threshold = ")?
                .strip_suffix(" MiB")
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("docs/modes.md: ETag row {mode}"));
            Some((mib << 20, len, etag))
        })
        .collect();
    assert!(v.len() >= 4, "docs/modes.md: {} ETag vectors", v.len());
    v
}
