//! md5x's other sums: `-a md5-pK` (MD5-P(K), see docs/modes.md) and `--etag` (the S3
//! multipart ETag), with the parsing of their option values and the part sizes that
//! check mode tries for an ETag whose part size is unknown.

use md5x::chains::{limits, part_count};

/// What a run computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Md5,
    /// MD5-P(K), K = 4, 8 or 16.
    Par(usize),
    Etag,
}

impl Algo {
    /// The tag of BSD-style lines (`--tag`), also the name in messages.
    pub fn tag(self) -> &'static str {
        match self {
            Algo::Md5 => "MD5",
            Algo::Par(4) => "MD5-P4",
            Algo::Par(8) => "MD5-P8",
            Algo::Par(_) => "MD5-P16",
            Algo::Etag => "ETAG",
        }
    }
}

/// The names `-a` accepts (any case), in the order `--help` and errors list them.
pub const ALGORITHMS: &[(&str, Algo)] = &[
    ("md5", Algo::Md5),
    ("md5-p4", Algo::Par(4)),
    ("md5-p8", Algo::Par(8)),
    ("md5-p16", Algo::Par(16)),
];

/// `-a NAME`, case-insensitive.
pub fn parse_algorithm(name: &[u8]) -> Option<Algo> {
    ALGORITHMS
        .iter()
        .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|&(_, a)| a)
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// A size for `--part-size` / `--threshold`: a whole number of bytes, with an optional
/// suffix (any case): K, M, G, T or KiB, MiB, GiB, TiB (powers of 1024, as the AWS CLI
/// reads K, M, G, T), or KB, MB, GB, TB (powers of 1000). Overflow and anything else
/// are `None`. Zero is a size here (a threshold of 0 puts every file in parts, an empty
/// one too); the caller refuses a part size of 0.
pub fn parse_size(s: &[u8]) -> Option<u64> {
    let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let (num, suffix) = s.split_at(digits);
    let n: u64 = std::str::from_utf8(num).ok()?.parse().ok()?;
    let suffix = suffix.to_ascii_lowercase();
    let mult: u64 = match &suffix[..] {
        b"" => 1,
        b"k" | b"kib" => KIB,
        b"m" | b"mib" => MIB,
        b"g" | b"gib" => GIB,
        b"t" | b"tib" => 1 << 40,
        b"kb" => 1_000,
        b"mb" => 1_000_000,
        b"gb" => 1_000_000_000,
        b"tb" => 1_000_000_000_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A size as people write it: `16 MiB`, `1 GiB`, `300 KiB`, `5000001 bytes`.
pub fn show_size(n: u64) -> String {
    for (unit, name) in [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if n >= unit && n.is_multiple_of(unit) {
            return format!("{} {name}", n / unit);
        }
    }
    format!("{n} bytes")
}

/// Part sizes that uploads commonly use (tools' defaults and round numbers), tried
/// first when the part size of an ETag is unknown.
pub const COMMON_PART_SIZES: [u64; 11] = [
    5 * MIB,
    8 * MIB,
    15 * MIB,
    16 * MIB,
    32 * MIB,
    64 * MIB,
    100 * MIB,
    128 * MIB,
    256 * MIB,
    512 * MIB,
    GIB,
];

/// The most part sizes check mode tries for one ETag. The common ones take a pass over
/// the file each, the others share one pass (`md5x::chains::etags_by_part_size`), whose
/// cost grows with their number: for 2 parts, 256 candidates are every whole MiB for
/// files up to 512 MiB. The worst case, a 512 MiB file in 2 parts matching none of the
/// 256, took 4.8 s on a 2-core Zen 3 (`/dev/shm`), where the 64 passes of a cap of 64
/// took 31 s; a 256 MiB one (128 candidates) 1.5 s, against 17 s.
pub const MAX_CANDIDATES: usize = 256;

/// The whole numbers of MiB that, as part sizes S3 accepts, cut `size` bytes into
/// exactly `parts` parts (two or more), as a range of MiB (empty when there are none):
/// `parts` parts of `p` bytes hold `size` when `(parts - 1) * p < size <= parts * p`.
fn whole_mib_sizes(size: u64, parts: u64) -> std::ops::RangeInclusive<u64> {
    let lo = size
        .div_ceil(parts.saturating_mul(MIB))
        .max(limits::MIN_PART_SIZE / MIB);
    let hi =
        (size.saturating_sub(1) / (parts - 1).saturating_mul(MIB)).min(limits::MAX_PART_SIZE / MIB);
    lo..=hi
}

/// The part sizes that uploaders compute for a file too big for their usual part size
/// in S3's 10,000 parts, in bytes rather than MiB: the AWS SDK for Go's uploader takes
/// `size / 10000 + 1`, others `size / 10000` rounded up.
fn computed_part_sizes(size: u64) -> [u64; 2] {
    let max = limits::MAX_PARTS;
    [size / max + 1, size.div_ceil(max)]
}

/// The part sizes to try for a multipart ETag of `parts` parts over `size` bytes:
/// those S3 accepts that cut `size` into exactly `parts` parts, the common ones first,
/// then those uploaders compute for very large files ([`computed_part_sizes`]), then
/// every other whole number of MiB in increasing order, at most [`MAX_CANDIDATES`].
/// One part is the MD5 of the file's MD5 whatever the part size, so then a single
/// candidate is enough.
pub fn part_size_candidates(size: u64, parts: u32) -> Vec<u64> {
    let n = u64::from(parts);
    let fits = |p: u64| {
        (limits::MIN_PART_SIZE..=limits::MAX_PART_SIZE).contains(&p)
            && part_count(size, p, 0) == Some(n)
    };
    let mut out: Vec<u64> = COMMON_PART_SIZES
        .iter()
        .copied()
        .filter(|&p| fits(p))
        .collect();
    if n <= 1 {
        out.truncate(1);
        if out.is_empty() && fits(size.div_ceil(MIB) * MIB) {
            out.push(size.div_ceil(MIB) * MIB);
        }
        return out;
    }
    for p in computed_part_sizes(size) {
        if fits(p) && !out.contains(&p) {
            out.push(p);
        }
    }
    for m in whole_mib_sizes(size, n) {
        if out.len() == MAX_CANDIDATES {
            break;
        }
        if !out.contains(&(m * MIB)) {
            out.push(m * MIB);
        }
    }
    out
}

/// Why a search for an ETag's part size (check mode, a `hex-N` line without
/// `--part-size`) found none: what check mode says after the line's FAILED. Such a
/// FAILED means "none of the sizes tried", and an upload may have used another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchMiss {
    /// No part size S3 accepts cuts `size` bytes into `parts` parts.
    Impossible { size: u64, parts: u32 },
    /// The file is below the `--threshold` given, so it would have been uploaded in
    /// one piece, with an ETag without `-N`.
    BelowThreshold,
    /// A stream (standard input, a pipe): its size is known only at its end, so only
    /// the common part sizes were tried.
    Stream,
    /// `tried` part sizes from `first` to `last` were tried; of the `whole` whole
    /// numbers of MiB (up to `max`) that cut the file into `parts` parts, `left` were
    /// not (the cap).
    Sizes {
        parts: u32,
        tried: usize,
        first: u64,
        last: u64,
        whole: u64,
        left: u64,
        max: u64,
    },
}

impl SearchMiss {
    /// What a search over `tried` (the candidates for `parts` parts of a `size`-byte
    /// file) that matched none leaves open; `None` when the FAILED is final: one part's
    /// ETag is the same for every part size.
    pub fn of(size: u64, parts: u32, tried: &[u64]) -> Option<SearchMiss> {
        let (Some(&first), Some(&last)) = (tried.iter().min(), tried.iter().max()) else {
            return Some(SearchMiss::Impossible { size, parts });
        };
        if parts <= 1 {
            return None;
        }
        let range = whole_mib_sizes(size, u64::from(parts));
        let max = range.end() * MIB;
        let whole = range.clone().count() as u64;
        let left = range.filter(|m| !tried.contains(&(m * MIB))).count() as u64;
        Some(SearchMiss::Sizes {
            parts,
            tried: tried.len(),
            first,
            last,
            whole,
            left,
            max,
        })
    }

    /// The note, for `NAME: note`.
    pub fn describe(&self) -> String {
        let give = "give the upload's part size with --part-size";
        match *self {
            SearchMiss::Impossible { size, parts } => format!(
                "no part size S3 accepts ({} to {}) cuts {} into {parts} part{}",
                show_size(limits::MIN_PART_SIZE),
                show_size(limits::MAX_PART_SIZE),
                show_size(size),
                if parts == 1 { "" } else { "s" },
            ),
            SearchMiss::BelowThreshold => {
                "smaller than --threshold, so uploaded in one piece: its ETag would have no -N"
                    .to_string()
            }
            SearchMiss::Stream => format!(
                "none of the common part sizes ({}) gives this ETag, and a stream can be \
                 searched for no other; {give}",
                COMMON_PART_SIZES.map(show_size).join(", ")
            ),
            SearchMiss::Sizes {
                parts,
                tried,
                first,
                last,
                whole,
                left,
                max,
            } => {
                let span = if first == last {
                    format!("{tried} part size tried: {}", show_size(first))
                } else {
                    format!(
                        "{tried} part sizes tried, {} to {}",
                        show_size(first),
                        show_size(last)
                    )
                };
                if whole == 0 {
                    format!(
                        "no part size gives this ETag ({span}; no whole MiB gives {parts} \
                         parts); if the upload used another part size, give it with \
                         --part-size"
                    )
                } else if left == 0 {
                    format!(
                        "no part size gives this ETag ({span}: every whole MiB that gives \
                         {parts} parts); if the upload used a part size that is not a whole \
                         MiB, give it with --part-size"
                    )
                } else {
                    format!(
                        "no part size gives this ETag ({span}); {left} more whole MiB sizes, \
                         up to {}, give {parts} parts and were not tried: {give}",
                        show_size(max)
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size(b"16777216"), Some(16 << 20));
        assert_eq!(parse_size(b"8MiB"), Some(8 << 20));
        assert_eq!(parse_size(b"8mib"), Some(8 << 20));
        assert_eq!(parse_size(b"8M"), Some(8 << 20));
        assert_eq!(parse_size(b"8m"), Some(8 << 20));
        assert_eq!(parse_size(b"8MB"), Some(8_000_000));
        assert_eq!(parse_size(b"1k"), Some(1024));
        assert_eq!(parse_size(b"1KB"), Some(1000));
        assert_eq!(parse_size(b"5GiB"), Some(5 << 30));
        assert_eq!(parse_size(b"2T"), Some(2 << 40));
        assert_eq!(parse_size(b"3tb"), Some(3_000_000_000_000));
        assert_eq!(parse_size(b"0"), Some(0));
        assert_eq!(parse_size(b"0MiB"), Some(0));
        for bad in [
            &b""[..],
            b"5XB",
            b"MiB",
            b"-5",
            b"+5",
            b" 5",
            b"5 MiB",
            b"1.5MiB",
            b"5B",
            b"5Mi",
            b"5iB",
            b"18446744073709551616",
            b"99999999999999999999999",
            b"17179869184GiB",
            b"5\xffM",
        ] {
            assert_eq!(parse_size(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_size(b"18446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn shown_sizes() {
        assert_eq!(show_size(16 << 20), "16 MiB");
        assert_eq!(show_size(1 << 30), "1 GiB");
        assert_eq!(show_size(1536 << 20), "1536 MiB");
        assert_eq!(show_size(1000), "1000 bytes");
        assert_eq!(show_size(3072), "3 KiB");
    }

    #[test]
    fn algorithms() {
        assert_eq!(parse_algorithm(b"MD5-P8"), Some(Algo::Par(8)));
        assert_eq!(parse_algorithm(b"md5"), Some(Algo::Md5));
        assert_eq!(parse_algorithm(b"md5-p5"), None);
        assert_eq!(Algo::Par(16).tag(), "MD5-P16");
    }

    #[test]
    fn candidates() {
        // 17 MiB in 2 parts: 15 and 16 MiB first, then 9..=14 MiB.
        let c = part_size_candidates(17 * MIB, 2);
        assert_eq!(&c[..2], &[15 * MIB, 16 * MIB]);
        let rest: Vec<u64> = (9..=14).map(|m| m * MIB).collect();
        assert_eq!(&c[2..], &rest[..]);
        for &p in &c {
            assert_eq!(part_count(17 * MIB, p, 0), Some(2));
        }
        // One part: one candidate, whatever the size.
        assert_eq!(part_size_candidates(0, 1), vec![5 * MIB]);
        assert_eq!(part_size_candidates(6 * MIB, 1), vec![8 * MIB]);
        assert_eq!(part_size_candidates(2000 * MIB, 1), vec![2000 * MIB]);
        assert!(part_size_candidates(6 * GIB, 1).is_empty());
        // Impossible counts.
        assert!(part_size_candidates(10 * MIB, 3).is_empty());
        assert!(part_size_candidates(0, 2).is_empty());
        // Bounded.
        let c = part_size_candidates(8000 * MIB, 2);
        assert_eq!(c.len(), MAX_CANDIDATES);
        assert!(c.iter().all(|&p| part_count(8000 * MIB, p, 0) == Some(2)));
        // The default is found for an AWS CLI upload.
        assert!(part_size_candidates(17 * MIB, 3).contains(&(8 * MIB)));
        // Every size tried gives the part count, and every whole MiB size that does is
        // tried up to the cap.
        for (size, parts) in [
            (17 * MIB, 2),
            (17 * MIB + 1, 3),
            (300 * MIB, 2),
            (40 * GIB, 9),
        ] {
            let c = part_size_candidates(size, parts);
            let range = whole_mib_sizes(size, u64::from(parts));
            let fitting: Vec<u64> = (1..=5 * 1024)
                .map(|m| m * MIB)
                .filter(|&p| part_count(size, p, 0) == Some(u64::from(parts)) && p >= 5 * MIB)
                .collect();
            assert_eq!(
                (fitting[0], *fitting.last().unwrap()),
                (range.start() * MIB, range.end() * MIB),
                "{size} {parts}"
            );
            assert_eq!(c.len(), fitting.len().min(MAX_CANDIDATES), "{size} {parts}");
            assert!(c.iter().all(|p| fitting.contains(p)), "{size} {parts}");
        }
    }

    #[test]
    fn search_misses() {
        // One part: a FAILED is final.
        assert_eq!(SearchMiss::of(MIB, 1, &part_size_candidates(MIB, 1)), None);
        // No candidate: impossible.
        let m = SearchMiss::of(10 * MIB, 3, &part_size_candidates(10 * MIB, 3)).unwrap();
        assert_eq!(
            m.describe(),
            "no part size S3 accepts (5 MiB to 5 GiB) cuts 10 MiB into 3 parts"
        );
        // All tried: only a size that is not a whole MiB is left.
        let m = SearchMiss::of(17 * MIB, 2, &part_size_candidates(17 * MIB, 2)).unwrap();
        assert_eq!(
            m.describe(),
            "no part size gives this ETag (8 part sizes tried, 9 MiB to 16 MiB: every whole \
             MiB that gives 2 parts); if the upload used a part size that is not a whole MiB, \
             give it with --part-size"
        );
        // The cap: the sizes not tried are counted.
        let m = SearchMiss::of(1000 * MIB, 2, &part_size_candidates(1000 * MIB, 2)).unwrap();
        assert_eq!(
            m.describe(),
            "no part size gives this ETag (256 part sizes tried, 500 MiB to 755 MiB); 244 \
             more whole MiB sizes, up to 999 MiB, give 2 parts and were not tried: give the \
             upload's part size with --part-size"
        );
        // Past 10,000 parts of the usual sizes: the sizes uploaders compute, in bytes
        // (no whole MiB gives 10,000 parts of 60 GiB).
        let size = 60 * GIB + 12_345;
        let c = part_size_candidates(size, 10_000);
        assert_eq!(c, [size / 10_000 + 1]);
        for p in computed_part_sizes(size) {
            let n = part_count(size, p, 0).unwrap();
            assert!(part_size_candidates(size, n as u32).contains(&p), "{p} {n}");
        }
        assert_eq!(
            SearchMiss::of(size, 10_000, &[size / 10_000 + 1])
                .unwrap()
                .describe(),
            "no part size gives this ETag (1 part size tried: 6442453 bytes; no whole MiB \
             gives 10000 parts); if the upload used another part size, give it with \
             --part-size"
        );
        assert!(SearchMiss::Stream
            .describe()
            .contains("(5 MiB, 8 MiB, 15 MiB"));
    }
}
