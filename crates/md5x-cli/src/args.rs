//! Command-line parsing with GNU `getopt_long` semantics: options and operands in any
//! order (unless `POSIXLY_CORRECT`), `--` ends options, short options cluster, long
//! options may be abbreviated to any unambiguous prefix.
//!
//! md5x has more long options than md5sum. So that every abbreviation md5sum accepts
//! means the same here, a prefix is first matched against md5sum's own options, and
//! only when none of those match against md5x's extensions.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opt {
    Binary,
    Check,
    IgnoreMissing,
    Quiet,
    Status,
    Strict,
    Tag,
    Text,
    Warn,
    Zero,
    Help,
    Version,
    // md5x's extensions
    Jobs,
    Recursive,
    Dereference,
    Progress,
    NoProgress,
    NoMmap,
    Backend,
    Speed,
    Algorithm,
    Etag,
    PartSize,
    Threshold,
    Base64,
}

struct Long {
    name: &'static str,
    opt: Opt,
    arg: bool,
}

const fn l(name: &'static str, opt: Opt, arg: bool) -> Long {
    Long { name, opt, arg }
}

/// md5sum's long options, in the order GNU lists ambiguous candidates.
const GNU_LONG: &[Long] = &[
    l("check", Opt::Check, false),
    l("ignore-missing", Opt::IgnoreMissing, false),
    l("quiet", Opt::Quiet, false),
    l("status", Opt::Status, false),
    l("warn", Opt::Warn, false),
    l("strict", Opt::Strict, false),
    l("tag", Opt::Tag, false),
    l("zero", Opt::Zero, false),
    l("binary", Opt::Binary, false),
    l("text", Opt::Text, false),
    l("help", Opt::Help, false),
    l("version", Opt::Version, false),
];

const EXT_LONG: &[Long] = &[
    l("jobs", Opt::Jobs, true),
    l("recursive", Opt::Recursive, false),
    l("dereference", Opt::Dereference, false),
    l("progress", Opt::Progress, false),
    l("no-progress", Opt::NoProgress, false),
    l("no-mmap", Opt::NoMmap, false),
    l("backend", Opt::Backend, true),
    l("speed", Opt::Speed, false),
    l("algorithm", Opt::Algorithm, true),
    l("etag", Opt::Etag, false),
    l("part-size", Opt::PartSize, true),
    l("threshold", Opt::Threshold, true),
    l("base64", Opt::Base64, false),
];

fn short(c: u8) -> Option<(Opt, bool)> {
    Some(match c {
        b'b' => (Opt::Binary, false),
        b'c' => (Opt::Check, false),
        b't' => (Opt::Text, false),
        b'w' => (Opt::Warn, false),
        b'z' => (Opt::Zero, false),
        b'j' => (Opt::Jobs, true),
        b'r' => (Opt::Recursive, false),
        b'L' => (Opt::Dereference, false),
        b'a' => (Opt::Algorithm, true),
        _ => return None,
    })
}

/// One parsed item, in command-line order.
pub enum Item {
    Opt(Opt, Option<OsString>),
    Operand(OsString),
}

/// A usage error, already worded as GNU words it (without the program name).
pub struct UsageError(pub Vec<u8>);

fn err(parts: &[&[u8]]) -> UsageError {
    UsageError(parts.concat())
}

/// Parse `args` (without `argv[0]`). Items come back in order; the caller stops at the
/// first error, exactly where getopt would have stopped.
pub fn parse(args: &[OsString]) -> impl Iterator<Item = Result<Item, UsageError>> + '_ {
    let posix = std::env::var_os("POSIXLY_CORRECT").is_some();
    let mut i = 0usize;
    let mut only_operands = false;
    let mut pending: std::collections::VecDeque<Result<Item, UsageError>> = Default::default();
    std::iter::from_fn(move || loop {
        if let Some(x) = pending.pop_front() {
            return Some(x);
        }
        let a = args.get(i)?;
        i += 1;
        let b = a.as_bytes();
        if only_operands || b.len() < 2 || b[0] != b'-' {
            if posix && !only_operands {
                only_operands = true;
            }
            return Some(Ok(Item::Operand(a.clone())));
        }
        if b == b"--" {
            only_operands = true;
            continue;
        }
        if let Some(rest) = b.strip_prefix(b"--") {
            return Some(long(rest, args, &mut i));
        }
        // A cluster of short options.
        let mut k = 1;
        while k < b.len() {
            let c = b[k];
            k += 1;
            match short(c) {
                None => {
                    pending.push_back(Err(err(&[b"invalid option -- '", &[c], b"'"])));
                    break;
                }
                Some((opt, false)) => pending.push_back(Ok(Item::Opt(opt, None))),
                Some((opt, true)) => {
                    if k < b.len() {
                        let v = OsStr::from_bytes(&b[k..]).to_os_string();
                        pending.push_back(Ok(Item::Opt(opt, Some(v))));
                    } else if let Some(v) = args.get(i) {
                        i += 1;
                        pending.push_back(Ok(Item::Opt(opt, Some(v.clone()))));
                    } else {
                        pending.push_back(Err(err(&[
                            b"option requires an argument -- '",
                            &[c],
                            b"'",
                        ])));
                    }
                    break;
                }
            }
        }
    })
}

fn long(rest: &[u8], args: &[OsString], i: &mut usize) -> Result<Item, UsageError> {
    let (name, value) = match rest.iter().position(|&c| c == b'=') {
        Some(p) => (&rest[..p], Some(&rest[p + 1..])),
        None => (rest, None),
    };
    let whole: &[u8] = rest;
    let all = GNU_LONG.iter().chain(EXT_LONG.iter());
    let found = match all.clone().find(|o| o.name.as_bytes() == name) {
        Some(o) => o,
        None => {
            let mut hit = None;
            for table in [GNU_LONG, EXT_LONG] {
                let cands: Vec<&Long> = table
                    .iter()
                    .filter(|o| o.name.as_bytes().starts_with(name))
                    .collect();
                match cands.len() {
                    0 => continue,
                    1 => {
                        hit = Some(cands[0]);
                        break;
                    }
                    _ => {
                        let mut m = Vec::new();
                        m.extend_from_slice(b"option '--");
                        m.extend_from_slice(whole);
                        m.extend_from_slice(b"' is ambiguous; possibilities:");
                        for c in cands {
                            m.extend_from_slice(b" '--");
                            m.extend_from_slice(c.name.as_bytes());
                            m.push(b'\'');
                        }
                        return Err(UsageError(m));
                    }
                }
            }
            match hit {
                Some(o) => o,
                None => return Err(err(&[b"unrecognized option '--", whole, b"'"])),
            }
        }
    };
    let n = found.name.as_bytes();
    match (found.arg, value) {
        (false, Some(_)) => Err(err(&[b"option '--", n, b"' doesn't allow an argument"])),
        (false, None) => Ok(Item::Opt(found.opt, None)),
        (true, Some(v)) => Ok(Item::Opt(found.opt, Some(OsString::from_vec(v.to_vec())))),
        (true, None) => match args.get(*i) {
            Some(v) => {
                *i += 1;
                Ok(Item::Opt(found.opt, Some(v.clone())))
            }
            None => Err(err(&[b"option '--", n, b"' requires an argument"])),
        },
    }
}
