//! md5x's other sums through the binary: `-a md5-p4|md5-p8|md5-p16` (MD5-P(K)) and
//! `--etag` (the S3 multipart ETag), in hash mode and check mode; and `--base64`, sums
//! written in base64.
//!
//! Results are checked against the test vectors of docs/modes.md (message bytes
//! `byte[i] = (i * 31) mod 251`) and, when python3 is there, against hashlib running
//! the definitions of docs/modes.md.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::in_dir;

const MD5X: &str = env!("CARGO_BIN_EXE_md5x");
const MIB: usize = 1 << 20;

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("md5x-modes-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 31) % 251) as u8).collect()
}

struct Out {
    stdout: Vec<u8>,
    stderr: String,
    code: Option<i32>,
}

impl Out {
    fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Run md5x (argv[0] "md5x") in `dir` with `args` and `stdin`.
fn md5x<S: AsRef<OsStr>>(dir: &Path, args: &[S], stdin: &[u8]) -> Out {
    let mut cmd = in_dir(MD5X, dir);
    run(cmd.arg0("md5x").args(args), stdin)
}

/// Run `cmd` with `stdin` on its standard input: what it wrote, and its exit status.
fn run(cmd: &mut Command, stdin: &[u8]) -> Out {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn md5x");
    {
        let mut i = child.stdin.take().unwrap();
        let _ = i.write_all(stdin);
    }
    let o = child.wait_with_output().expect("wait md5x");
    Out {
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        code: o.status.code(),
    }
}

#[path = "../../md5x/tests/common/doc_vectors.rs"]
mod doc_vectors;

#[test]
fn par_vectors_through_the_binary() {
    let tmp = TempDir::new("parvec");
    let dir = tmp.path();
    // docs/modes.md's vectors: (K, length, result).
    let vectors = doc_vectors::par_vectors();
    for &(_, len, _) in &vectors {
        fs::write(dir.join(format!("v{len}")), pattern(len)).unwrap();
    }
    for jobs in ["-j1", "-j4"] {
        for &(k, len, want) in &vectors {
            let algo = format!("md5-p{k}");
            let name = format!("v{len}");
            // File operand, any case of the name, and standard input.
            for a in [algo.clone(), algo.to_ascii_uppercase()] {
                let o = md5x(dir, &[jobs, "-a", &a, &name], b"");
                assert_eq!(o.code, Some(0), "{algo} {len}: {}", o.stderr);
                assert_eq!(o.out(), format!("{want}  {name}\n"), "{algo} {len}");
            }
            let o = md5x(dir, &[jobs, &format!("--algorithm={algo}")], &pattern(len));
            assert_eq!(o.out(), format!("{want}  -\n"), "{algo} {len} stdin");
            assert_eq!(o.code, Some(0));
        }
    }
    // Many files in one run (workers, batching), in order.
    let names: Vec<String> = vectors
        .iter()
        .filter(|v| v.0 == 4)
        .map(|v| format!("v{}", v.1))
        .collect();
    let mut args = vec!["-j3".to_string(), "-a".into(), "md5-p4".into()];
    args.extend(names.iter().cloned());
    let o = md5x(dir, &args, b"");
    let want: String = vectors
        .iter()
        .filter(|v| v.0 == 4)
        .map(|v| format!("{}  v{}\n", v.2, v.1))
        .collect();
    assert_eq!(o.out(), want);
}

#[test]
fn etag_vectors_through_the_binary() {
    let tmp = TempDir::new("etagvec");
    let dir = tmp.path();
    // docs/modes.md's vectors with 5 MiB parts (its 8 MiB one, 17 MiB long, is
    // checked with the defaults below).
    let cases: Vec<(usize, &str)> = doc_vectors::etag_vectors()
        .into_iter()
        .filter(|v| v.0 == 5 << 20)
        .map(|(_, len, etag)| (len, etag))
        .collect();
    assert_eq!(cases.len(), 3);
    for &(len, _) in &cases {
        fs::write(dir.join(format!("v{len}")), pattern(len)).unwrap();
    }
    let five = ["--etag", "--part-size", "5MiB", "--threshold", "5MiB"];
    for &(len, want) in &cases {
        let name = format!("v{len}");
        for jobs in ["-j1", "-j2"] {
            let mut args: Vec<&str> = vec![jobs];
            args.extend(five);
            args.push(&name);
            let o = md5x(dir, &args, b"");
            assert_eq!(o.code, Some(0), "{len}: {}", o.stderr);
            assert_eq!(o.out(), format!("{want}  {name}\n"));
            // Standard input: the streaming ETag.
            let o = md5x(dir, &args[..args.len() - 1], &pattern(len));
            assert_eq!(o.out(), format!("{want}  -\n"), "{len} stdin");
        }
        // The same sizes written other ways.
        for (p, t) in [("5242880", "5m"), ("5M", "5242880"), ("5mib", "5MiB")] {
            let o = md5x(
                dir,
                &[
                    "--etag",
                    "--part-size",
                    p,
                    &format!("--threshold={t}"),
                    &name,
                ],
                b"",
            );
            assert_eq!(o.out(), format!("{want}  {name}\n"), "{p} {t}");
        }
    }
    // Both files at once, tagged.
    let mut args: Vec<&str> = five.to_vec();
    args.extend(["--tag", "v5242880", "v5242881"]);
    let o = md5x(dir, &args, b"");
    assert_eq!(
        o.out(),
        "ETAG (v5242880) = f3f302d05b6ffb933797d2454cb05255-1\n\
         ETAG (v5242881) = 9731cdf5aa09e60a812e00ece0a56504-2\n"
    );
}

/// The AWS CLI's defaults, and the unknown-part-size search of check mode.
#[test]
fn etag_defaults_and_part_size_search() {
    let tmp = TempDir::new("search");
    let dir = tmp.path();
    fs::write(dir.join("big"), pattern(17 * MIB)).unwrap();
    fs::write(dir.join("small"), pattern(1000)).unwrap();

    // docs/modes.md: 17825792 bytes, 8 MiB parts: 3 parts.
    let o = md5x(dir, &["--etag", "big"], b"");
    assert_eq!(o.out(), "b92c0b7f108a97d63e0b49bc2bd039d8-3  big\n");
    let o = md5x(dir, &["--etag", "small"], b"");
    assert_eq!(o.out(), format!("{}  small\n", md5_hex(&pattern(1000))));

    // 16 MiB parts: two of them.
    let o = md5x(
        dir,
        &["--etag", "--part-size", "16MiB", "big", "small"],
        b"",
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = o.out();
    let first = lines.lines().next().unwrap().to_string();
    assert!(first.ends_with("-2  big"), "{first}");
    fs::write(dir.join("sums"), &o.stdout).unwrap();

    // Checked without --part-size: found, and said which.
    let o = md5x(dir, &["--etag", "-c", "sums"], b"");
    assert_eq!(
        o.out(),
        "big: OK (part size 16 MiB)\nsmall: OK\n",
        "{}",
        o.stderr
    );
    assert_eq!(o.code, Some(0));
    // With the right part size: only that one, no search.
    let o = md5x(dir, &["--etag", "-c", "--part-size=16m", "sums"], b"");
    assert_eq!(o.out(), "big: OK\nsmall: OK\n");
    assert_eq!(o.code, Some(0));
    // With a wrong one: FAILED.
    let o = md5x(dir, &["--etag", "-c", "--part-size", "8MiB", "sums"], b"");
    assert_eq!(o.out(), "big: FAILED\nsmall: OK\n");
    assert!(o
        .stderr
        .contains("WARNING: 1 computed checksum did NOT match"));
    assert_eq!(o.code, Some(1));

    // Part sizes no tool defaults to (2 parts of 17 MiB: 9 to 16 MiB; 15 and 16 are
    // common and tried first, the others in one pass): found too, and named.
    for (size, shown) in [
        ("9MiB", "9 MiB"),
        ("13631488", "13 MiB"),
        ("14MiB", "14 MiB"),
    ] {
        let o = md5x(dir, &["--etag", "--part-size", size, "big"], b"");
        assert!(o.out().ends_with("-2  big\n"), "{}", o.out());
        fs::write(dir.join("sums-odd-size"), &o.stdout).unwrap();
        let o = md5x(dir, &["--etag", "-c", "sums-odd-size"], b"");
        assert_eq!(
            o.out(),
            format!("big: OK (part size {shown})\n"),
            "{}",
            o.stderr
        );
        assert_eq!(o.code, Some(0));
    }

    // A file exactly at the threshold is a multipart upload, so searched as one, as a
    // file and as a stream (a byte below, it is one PUT: the note says so).
    let at = ["--etag", "--threshold", "17MiB"];
    let o = md5x(
        dir,
        &[&at[..], &["--part-size", "16MiB", "big"]].concat(),
        b"",
    );
    assert_eq!(o.out(), lines.lines().next().unwrap().to_string() + "\n");
    fs::write(dir.join("sums-at"), &o.stdout).unwrap();
    fs::write(dir.join("sums-at-stdin"), o.out().replace("  big", "  -")).unwrap();
    let o = md5x(dir, &[&at[..], &["-c", "sums-at"]].concat(), b"");
    assert_eq!(o.out(), "big: OK (part size 16 MiB)\n", "{}", o.stderr);
    let o = md5x(
        dir,
        &[&at[..], &["-c", "sums-at-stdin"]].concat(),
        &pattern(17 * MIB),
    );
    assert_eq!(o.out(), "-: OK (part size 16 MiB)\n", "{}", o.stderr);
    let above = ["--etag", "--threshold", "17825793", "-c"];
    for (list, name) in [("sums-at", "big"), ("sums-at-stdin", "-")] {
        let o = md5x(dir, &[&above[..], &[list]].concat(), &pattern(17 * MIB));
        assert_eq!(o.out(), format!("{name}: FAILED\n"));
        assert!(
            o.stderr.contains("smaller than --threshold"),
            "{}",
            o.stderr
        );
    }

    // The file on standard input of check mode (`-` in the list): the streaming search.
    let hex = first.split("  ").next().unwrap().to_string();
    fs::write(dir.join("sums-stdin"), format!("{hex}  -\n")).unwrap();
    let o = md5x(dir, &["--etag", "-c", "sums-stdin"], &pattern(17 * MIB));
    assert_eq!(o.out(), "-: OK (part size 16 MiB)\n", "{}", o.stderr);

    // Tagged ETag lines are ETags whatever -a says; the default part size is found.
    let o = md5x(dir, &["--etag", "--tag", "big"], b"");
    fs::write(dir.join("tagged"), &o.stdout).unwrap();
    for extra in [&[][..], &["-a", "md5-p8"][..], &["--etag"][..]] {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["-c", "tagged"]);
        let o = md5x(dir, &args, b"");
        assert_eq!(o.out(), "big: OK (part size 8 MiB)\n", "{extra:?}");
        assert_eq!(o.code, Some(0));
    }

    // A part count no part size gives, a wrong digest, S3's double quotes, upper case.
    let (hex32, parts) = hex.split_once('-').unwrap();
    assert_eq!(parts, "2");
    let upper = hex.to_ascii_uppercase();
    fs::write(
        dir.join("odd"),
        format!(
            "{hex32}-9999  big\n00000000000000000000000000000000-2  big\n\"{hex}\"  big\n\
             {upper}  big\n"
        ),
    )
    .unwrap();
    let o = md5x(dir, &["--etag", "-c", "odd"], b"");
    assert_eq!(
        o.out(),
        "big: FAILED\nbig: FAILED\nbig: OK (part size 16 MiB)\nbig: OK (part size 16 MiB)\n"
    );
    assert!(o
        .stderr
        .contains("WARNING: 2 computed checksums did NOT match"));
    assert_eq!(o.code, Some(1));
    // Each FAILED of a search says what the search could not try, on standard error.
    assert!(
        o.stderr.contains(
            "big: no part size S3 accepts (5 MiB to 5 GiB) cuts 17 MiB into 9999 parts\n"
        ),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(
            "big: no part size gives this ETag (8 part sizes tried, 9 MiB to 16 MiB: every \
             whole MiB that gives 2 parts); if the upload used a part size that is not a \
             whole MiB, give it with --part-size\n"
        ),
        "{}",
        o.stderr
    );
    let o = md5x(dir, &["--etag", "-c", "--status", "odd"], b"");
    assert_eq!(
        (o.out().as_str(), o.stderr.as_str(), o.code),
        ("", "", Some(1))
    );

    // A part size that is not a whole MiB is not searched for: the note says so, and
    // --part-size checks it.
    let o = md5x(dir, &["--etag", "--part-size", "9961472", "big"], b"");
    assert!(o.out().ends_with("-2  big\n"), "{}", o.out());
    fs::write(dir.join("sums-bytes"), &o.stdout).unwrap();
    let o = md5x(dir, &["--etag", "-c", "sums-bytes"], b"");
    assert_eq!(o.out(), "big: FAILED\n");
    assert!(o.stderr.contains("not a whole MiB"), "{}", o.stderr);
    let o = md5x(
        dir,
        &["--etag", "-c", "--part-size=9961472", "sums-bytes"],
        b"",
    );
    assert_eq!(
        (o.out().as_str(), o.code),
        ("big: OK\n", Some(0)),
        "{}",
        o.stderr
    );

    // A stream is searched over the common sizes only.
    let o = md5x(dir, &["--etag", "-c", "sums-stdin"], &pattern(17 * MIB - 1));
    assert_eq!(o.out(), "-: FAILED\n");
    assert!(
        o.stderr
            .contains("-: none of the common part sizes (5 MiB, 8 MiB, 15 MiB, 16 MiB"),
        "{}",
        o.stderr
    );
    // Once a stream has ended its size is known: a short one read whole (an empty file,
    // which states 0 bytes as a /proc file does, or standard input) has the same
    // one-part ETag at every part size, so its FAILED is final, as for a short regular
    // file; and parts no size could give are said to be so.
    fs::write(dir.join("empty"), b"").unwrap();
    let wrong_one = "00000000000000000000000000000000-1";
    fs::write(
        dir.join("sums-short"),
        format!("{wrong_one}  empty\n{wrong_one}  -\n"),
    )
    .unwrap();
    let o = md5x(dir, &["--etag", "-c", "sums-short"], b"abc");
    assert_eq!(
        (o.out().as_str(), o.stderr.as_str()),
        (
            "empty: FAILED\n-: FAILED\n",
            "md5x: WARNING: 2 computed checksums did NOT match\n"
        )
    );
    fs::write(dir.join("sums-two"), format!("{}-2  -\n", &wrong_one[..32])).unwrap();
    let o = md5x(dir, &["--etag", "-c", "sums-two"], &pattern(100));
    assert_eq!(o.out(), "-: FAILED\n");
    assert!(
        o.stderr
            .contains("-: no part size S3 accepts (5 MiB to 5 GiB) cuts 100 bytes into 2 parts"),
        "{}",
        o.stderr
    );
    // Below an explicit threshold, a file or a stream would have been one PUT.
    let below = "big: smaller than --threshold, so uploaded in one piece: its ETag would \
                 have no -N\n";
    let o = md5x(
        dir,
        &["--etag", "-c", "--threshold=32MiB", "sums-odd-size"],
        b"",
    );
    assert_eq!(o.out(), "big: FAILED\n");
    assert!(o.stderr.contains(below), "{}", o.stderr);
    let o = md5x(
        dir,
        &["--etag", "-c", "--threshold=32MiB", "sums-stdin"],
        &pattern(17 * MIB),
    );
    assert_eq!(o.out(), "-: FAILED\n");
    assert!(
        o.stderr.contains(&below.replace("big", "-")),
        "{}",
        o.stderr
    );
}

/// Plain MD5 of `data`, by md5sum when present, else by md5x (whose MD5 compat.rs
/// checks).
fn md5_hex(data: &[u8]) -> String {
    for prog in ["md5sum", MD5X] {
        let Ok(mut c) = Command::new(prog)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        else {
            continue;
        };
        let _ = c.stdin.take().unwrap().write_all(data);
        let o = c.wait_with_output().unwrap();
        if o.status.success() {
            return String::from_utf8_lossy(&o.stdout[..32]).into_owned();
        }
    }
    panic!("no MD5 tool");
}

#[test]
fn tag_binary_zero_and_escaped_names() {
    let tmp = TempDir::new("names");
    let dir = tmp.path();
    let names: [&[u8]; 4] = [b"plain", b"new\nline", b"back\\slash", b"cr\rname"];
    for (i, n) in names.iter().enumerate() {
        fs::write(dir.join(OsStr::from_bytes(n)), pattern(100 + i)).unwrap();
    }
    let p8: Vec<String> = names
        .iter()
        .map(|n| {
            let o = md5x(
                dir,
                &["-a", "md5-p8", "-z", OsStr::from_bytes(n).to_str().unwrap()],
                b"",
            );
            assert_eq!(o.code, Some(0));
            // -z: no escaping, NUL at the end.
            let mut want = o.stdout[..32].to_vec();
            want.extend_from_slice(b"  ");
            want.extend_from_slice(n);
            want.push(0);
            assert_eq!(o.stdout, want);
            String::from_utf8(o.stdout[..32].to_vec()).unwrap()
        })
        .collect();
    let esc = |n: &[u8]| -> String {
        String::from_utf8(n.to_vec())
            .unwrap()
            .replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\r', "\\r")
    };
    let args: Vec<&OsStr> = names.iter().map(|n| OsStr::from_bytes(n)).collect();
    for (algo, tag) in [
        ("md5-p4", "MD5-P4"),
        ("md5-p8", "MD5-P8"),
        ("md5-p16", "MD5-P16"),
    ] {
        let mut a: Vec<&OsStr> = vec![OsStr::new("-a"), OsStr::new(algo)];
        a.extend(args.iter().copied());
        let plain = md5x(dir, &a, b"");
        let mut t = a.clone();
        t.insert(0, OsStr::new("--tag"));
        let tagged = md5x(dir, &t, b"");
        let mut b = a.clone();
        b.insert(0, OsStr::new("-b"));
        let binary = md5x(dir, &b, b"");
        let (plain, tagged, binary) = (plain.out(), tagged.out(), binary.out());
        for (i, n) in names.iter().enumerate() {
            let line = plain.lines().nth(i).unwrap();
            let tline = tagged.lines().nth(i).unwrap();
            let bline = binary.lines().nth(i).unwrap();
            let hex = &line[line.len() - line.trim_start_matches('\\').len()..][..32];
            let e = esc(n);
            let pre = if e.as_bytes() != *n { "\\" } else { "" };
            assert_eq!(line, format!("{pre}{hex}  {e}"));
            assert_eq!(tline, format!("{pre}{tag} ({e}) = {hex}"));
            assert_eq!(bline, format!("{pre}{hex} *{e}"));
            if algo == "md5-p8" {
                assert_eq!(hex, p8[i]);
            }
        }
        // Round trips: untagged with the same -a; tagged whatever -a.
        for (lines, extra) in [
            (&plain, vec!["-a", algo]),
            (&tagged, vec![]),
            (&binary, vec!["-a", algo]),
        ] {
            fs::write(dir.join("sums"), lines).unwrap();
            let mut c = extra.clone();
            c.extend(["-c", "sums"]);
            let o = md5x(dir, &c, b"");
            assert_eq!(o.code, Some(0), "{algo} {extra:?}: {}", o.stderr);
            assert_eq!(
                o.out().matches(": OK\n").count(),
                names.len(),
                "{}",
                o.out()
            );
        }
        // Untagged MD5-P(K) lines checked as another sum: every line FAILED.
        fs::write(dir.join("sums"), &plain).unwrap();
        let o = md5x(dir, &["-c", "sums"], b"");
        assert_eq!(o.code, Some(1));
        assert_eq!(o.out().matches(": FAILED\n").count(), names.len());
    }
    // --tag without -a stays MD5, and a tagged MD5 line stays MD5 under -a md5-p8.
    let o = md5x(dir, &["--tag", "plain"], b"");
    assert_eq!(
        o.out(),
        format!("MD5 (plain) = {}\n", md5_hex(&pattern(100)))
    );
    fs::write(dir.join("sums"), &o.stdout).unwrap();
    let o = md5x(dir, &["-a", "md5-p8", "-c", "sums"], b"");
    assert_eq!(o.out(), "plain: OK\n");

    // ETags too: escaped names, tag, -z, round trip.
    let mut a: Vec<&OsStr> = vec![OsStr::new("--etag")];
    a.extend(args.iter().copied());
    let plain = md5x(dir, &a, b"").out();
    a.insert(0, OsStr::new("--tag"));
    let tagged = md5x(dir, &a, b"").out();
    for (i, n) in names.iter().enumerate() {
        let e = esc(n);
        let pre = if e.as_bytes() != *n { "\\" } else { "" };
        let md5 = md5_hex(&pattern(100 + i));
        assert_eq!(plain.lines().nth(i).unwrap(), format!("{pre}{md5}  {e}"));
        assert_eq!(
            tagged.lines().nth(i).unwrap(),
            format!("{pre}ETAG ({e}) = {md5}")
        );
    }
    for (lines, extra) in [(&plain, vec!["--etag"]), (&tagged, vec![])] {
        fs::write(dir.join("sums"), lines).unwrap();
        let mut c = extra.clone();
        c.extend(["-c", "sums"]);
        let o = md5x(dir, &c, b"");
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert_eq!(o.out().matches(": OK\n").count(), names.len());
    }
    let o = md5x(dir, &["--etag", "-z", "new\nline"], b"");
    let mut want = md5_hex(&pattern(101)).into_bytes();
    want.extend_from_slice(b"  new\nline\0");
    assert_eq!(o.stdout, want);
}

#[test]
fn check_mode_failures_and_options() {
    let tmp = TempDir::new("check");
    let dir = tmp.path();
    fs::write(dir.join("a"), pattern(5000)).unwrap();
    fs::write(dir.join("b"), pattern(70)).unwrap();
    let o = md5x(dir, &["-a", "md5-p16", "a", "b"], b"");
    let good = o.out();
    // Corrupt b's line: flip its first hex digit.
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let first = if lines[1].starts_with('0') { "1" } else { "0" };
    lines[1].replace_range(0..1, first);
    let bad = lines.join("\n") + "\n";
    fs::write(dir.join("bad"), &bad).unwrap();
    let o = md5x(dir, &["-a", "md5-p16", "-c", "bad"], b"");
    assert_eq!(o.out(), "a: OK\nb: FAILED\n");
    assert_eq!(
        o.stderr,
        "md5x: WARNING: 1 computed checksum did NOT match\n"
    );
    assert_eq!(o.code, Some(1));
    let o = md5x(dir, &["-a", "md5-p16", "-c", "--quiet", "bad"], b"");
    assert_eq!(o.out(), "b: FAILED\n");
    assert_eq!(o.code, Some(1));
    let o = md5x(dir, &["-a", "md5-p16", "-c", "--status", "bad"], b"");
    assert_eq!(
        (o.out().as_str(), o.stderr.as_str(), o.code),
        ("", "", Some(1))
    );
    // Missing files, --ignore-missing, malformed lines, --strict, -w.
    let list = format!("{good}0123  short\n{}  missing\n", &good[..32]);
    fs::write(dir.join("list"), &list).unwrap();
    let o = md5x(dir, &["-a", "md5-p16", "-c", "-w", "list"], b"");
    assert_eq!(o.out(), "a: OK\nb: OK\nmissing: FAILED open or read\n");
    assert_eq!(
        o.stderr,
        "md5x: list: 3: improperly formatted MD5-P16 checksum line\n\
         md5x: missing: No such file or directory\n\
         md5x: WARNING: 1 line is improperly formatted\n\
         md5x: WARNING: 1 listed file could not be read\n"
    );
    assert_eq!(o.code, Some(1));
    let o = md5x(
        dir,
        &["-a", "md5-p16", "-c", "--ignore-missing", "list"],
        b"",
    );
    assert_eq!(o.out(), "a: OK\nb: OK\n");
    assert_eq!(o.code, Some(0));
    let o = md5x(
        dir,
        &[
            "-a",
            "md5-p16",
            "-c",
            "--ignore-missing",
            "--strict",
            "list",
        ],
        b"",
    );
    assert_eq!(o.code, Some(1));
    // The same lines read as plain MD5: well formed, but they do not match.
    let o = md5x(dir, &["-c", "--status", "list"], b"");
    assert_eq!(o.code, Some(1));

    // ETag check: a corrupted ETag line, a wrong part count.
    let o = md5x(dir, &["--etag", "--tag", "a"], b"");
    let line = o.out();
    assert!(line.starts_with("ETAG (a) = "), "{line}");
    let mut broken = line.clone().into_bytes();
    broken[11] = if broken[11] == b'0' { b'1' } else { b'0' };
    let broken = String::from_utf8(broken).unwrap();
    fs::write(dir.join("etags"), format!("{line}{broken}")).unwrap();
    let o = md5x(dir, &["-c", "etags"], b"");
    assert_eq!(o.out(), "a: OK\na: FAILED\n", "{}", o.stderr);
    assert_eq!(o.code, Some(1));
    // A plain digest with -N: a multipart ETag of a small file (one part).
    let md5 = md5_hex(&pattern(5000));
    fs::write(dir.join("etags"), format!("{md5}-1  a\n{md5}  a\n")).unwrap();
    let o = md5x(dir, &["--etag", "-c", "etags"], b"");
    assert_eq!(o.out(), "a: FAILED\na: OK\n");
    let outer = md5_hex(&hex_bytes(&md5));
    fs::write(dir.join("etags"), format!("{outer}-1  a\n")).unwrap();
    let o = md5x(dir, &["--etag", "-c", "etags"], b"");
    assert_eq!(o.out(), "a: OK (one part)\n");
    let o = md5x(dir, &["--etag", "-c", "--part-size", "5m", "etags"], b"");
    assert_eq!(o.out(), "a: OK\n");
    // An explicit threshold is honoured: a 5000-byte file is a single PUT below it.
    let o = md5x(dir, &["--etag", "-c", "--threshold", "8m", "etags"], b"");
    assert_eq!(o.out(), "a: FAILED\n");
    let o = md5x(dir, &["--etag", "-c", "--threshold", "4000", "etags"], b"");
    assert_eq!(o.out(), "a: OK (one part)\n");
}

/// `md5x --etag` output checked without `--etag`: its multipart lines are not MD5
/// lines, so they are misformatted, as md5sum says, and a note names them and how to
/// check them (`--etag`), also when no line is left to check; `--status` says
/// nothing; a line that only looks like one (no name) gets no note.
#[test]
fn etag_lines_checked_without_etag_get_a_note() {
    let tmp = TempDir::new("etag-note");
    let dir = tmp.path();
    fs::write(dir.join("small"), pattern(100)).unwrap();
    fs::write(dir.join("big"), pattern(11 << 20)).unwrap();
    let sums = md5x(
        dir,
        &["--etag", "--part-size", "5MiB", "small", "big", "big"],
        b"",
    )
    .out();
    assert_eq!(sums.matches("-3  big").count(), 2, "{sums}");
    fs::write(dir.join("sums"), &sums).unwrap();
    let o = md5x(dir, &["-c", "sums"], b"");
    assert_eq!((o.out().as_str(), o.code), ("small: OK\n", Some(0)));
    assert_eq!(
        o.stderr,
        "md5x: WARNING: 2 lines are improperly formatted\n\
         md5x: sums: 2 improperly formatted lines hold S3 multipart ETags (hex-N): check them with --etag\n"
    );
    let multipart: String = sums
        .lines()
        .skip(1)
        .take(1)
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(
        dir.join("one"),
        format!("{multipart}{}\n", &multipart[..35]),
    )
    .unwrap();
    let o = md5x(dir, &["-c", "one"], b"");
    assert_eq!((o.out().as_str(), o.code), ("", Some(1)));
    assert_eq!(
        o.stderr,
        "md5x: one: no properly formatted checksum lines found\n\
         md5x: one: 1 improperly formatted line holds an S3 multipart ETag (hex-N): check it with --etag\n"
    );
    let o = md5x(dir, &["-c", "--status", "sums"], b"");
    assert_eq!(
        (o.out().as_str(), o.stderr.as_str(), o.code),
        ("", "", Some(0))
    );
    let o = md5x(dir, &["-c", "--etag", "sums"], b"");
    assert_eq!(
        o.out(),
        "small: OK\nbig: OK (part size 5 MiB)\nbig: OK (part size 5 MiB)\n"
    );
    assert_eq!((o.stderr.as_str(), o.code), ("", Some(0)));
}

/// Base64 text to bytes, for the checks below: a bit accumulator over RFC 4648's
/// alphabet (another route than the command's, which decodes four characters at a
/// time). Padding ends the text.
fn unbase64(s: &str) -> Vec<u8> {
    const A: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut acc, mut bits, mut out) = (0u32, 0, Vec::new());
    for c in s.chars().take_while(|&c| c != '=') {
        acc = (acc << 6) | A.find(c).unwrap_or_else(|| panic!("{c:?} in {s:?}")) as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// A base64 sum can start with `MD5` (this file's does: one in 262,144), where md5sum
/// and cksum 9.7 take the line for a broken tagged one and cannot check what cksum
/// wrote; md5x checks it, and hex lines that start so stay misformatted.
#[test]
fn a_base64_sum_that_starts_with_the_tag_checks() {
    let tmp = TempDir::new("base64-tag");
    let dir = tmp.path();
    fs::write(dir.join("f"), b"25893").unwrap();
    let o = md5x(dir, &["--base64", "f"], b"");
    assert_eq!(
        (o.out().as_str(), o.code),
        ("MD5adwArj4rPhO8GR2DyPg==  f\n", Some(0))
    );
    fs::write(dir.join("sums"), o.out()).unwrap();
    for form in [
        &["-c", "--base64", "sums"][..],
        &["-c", "--base64", "--strict", "sums"],
    ] {
        let o = md5x(dir, form, b"");
        assert_eq!(
            (o.out().as_str(), o.stderr.as_str(), o.code),
            ("f: OK\n", "", Some(0))
        );
    }
    fs::write(dir.join("hex"), "MD5adwArj4rPhO8GR2DyPgMD5adwArj4r  f\n").unwrap();
    let o = md5x(dir, &["-c", "--base64", "hex"], b"");
    assert_eq!(
        (o.out().as_str(), o.stderr.as_str(), o.code),
        (
            "",
            "md5x: hex: no properly formatted checksum lines found\n",
            Some(1)
        )
    );
}

#[test]
fn base64_sums_match_the_hex_ones_and_check() {
    let tmp = TempDir::new("base64");
    let dir = tmp.path();
    let names: [&[u8]; 4] = [b"empty", b"plain", b"new\nline", b"back\\slash"];
    for (i, n) in names.iter().enumerate() {
        fs::write(dir.join(OsStr::from_bytes(n)), pattern(i * 1000)).unwrap();
    }
    let names: Vec<&OsStr> = names.iter().map(|n| OsStr::from_bytes(n)).collect();
    // Every form: each base64 line is its hex line with the sum written in base64.
    for (form, algo) in [
        (&[][..], "md5"),
        (&["--tag"][..], "md5"),
        (&["-z"][..], "md5"),
        (&["--tag"][..], "md5-p8"),
    ] {
        let args = |b64: bool| {
            let mut a: Vec<&OsStr> = vec!["-a".as_ref(), algo.as_ref()];
            a.extend(form.iter().map(OsStr::new));
            if b64 {
                a.push("--base64".as_ref());
            }
            a.extend(&names);
            a
        };
        let hex = md5x(dir, &args(false), b"");
        let b64 = md5x(dir, &args(true), b"");
        assert_eq!((hex.code, b64.code), (Some(0), Some(0)), "{}", b64.stderr);
        let sep = if form == ["-z"] { b'\0' } else { b'\n' };
        let split = |o: &Out| -> Vec<String> {
            o.stdout
                .split(|&c| c == sep)
                .filter(|l| !l.is_empty())
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect()
        };
        let (hex_lines, b64_lines) = (split(&hex), split(&b64));
        assert_eq!(hex_lines.len(), names.len());
        assert_eq!(b64_lines.len(), names.len());
        for (h, b) in hex_lines.iter().zip(&b64_lines) {
            // The sum is the first or the last word; the rest of the line is the same.
            let (hs, bs, hrest, brest) = if form == ["--tag"] {
                let (hr, hs) = h.rsplit_once(' ').unwrap();
                let (br, bs) = b.rsplit_once(' ').unwrap();
                (hs, bs, hr, br)
            } else {
                let at = usize::from(h.starts_with('\\'));
                let (hs, hr) = h[at..].split_once(' ').unwrap();
                let (bs, br) = b[at..].split_once(' ').unwrap();
                (hs, bs, hr, br)
            };
            assert_eq!((hrest, bs.len()), (brest, 24), "{h} / {b}");
            assert_eq!(unbase64(bs), hex_bytes(hs), "{h} / {b}");
        }
    }

    // Check mode: -c --base64 reads base64 and hex lines; -c alone, like md5sum, calls
    // base64 lines improperly formatted, and says how many hold base64 sums.
    let b64 = md5x(dir, &[&["--base64"][..], &["plain", "empty"]].concat(), b"").out();
    let hex = md5x(dir, &["plain"], b"").out();
    fs::write(dir.join("sums"), format!("{b64}{hex}")).unwrap();
    let o = md5x(dir, &["-c", "--base64", "sums"], b"");
    assert_eq!(
        (o.out().as_str(), o.stderr.as_str(), o.code),
        ("plain: OK\nempty: OK\nplain: OK\n", "", Some(0))
    );
    let o = md5x(dir, &["-c", "sums"], b"");
    assert_eq!(
        (o.out().as_str(), o.code, o.stderr.as_str()),
        (
            "plain: OK\n",
            Some(0),
            "md5x: WARNING: 2 lines are improperly formatted\n\
             md5x: sums: 2 improperly formatted lines hold base64 sums: check them with --base64\n"
        )
    );
    fs::write(dir.join("one"), &b64[..b64.find('\n').unwrap() + 1]).unwrap();
    let o = md5x(dir, &["-c", "one"], b"");
    assert_eq!(
        (o.out().as_str(), o.code, o.stderr.as_str()),
        (
            "",
            Some(1),
            "md5x: one: no properly formatted checksum lines found\n\
             md5x: one: 1 improperly formatted line holds a base64 sum: check it with --base64\n"
        )
    );
    // With --etag, where --base64 is refused, the note does not point at it.
    let o = md5x(dir, &["-c", "--etag", "one"], b"");
    assert_eq!(
        (o.out().as_str(), o.code, o.stderr.as_str()),
        (
            "",
            Some(1),
            "md5x: one: no properly formatted checksum lines found\n"
        )
    );
    // A changed file fails; a sum spelled as the command never writes it (the last
    // character's spare bits set, so it decodes to the same bytes) is misformatted.
    fs::write(dir.join("plain"), b"changed").unwrap();
    let o = md5x(dir, &["-c", "--base64", "one"], b"");
    assert_eq!((o.out().as_str(), o.code), ("plain: FAILED\n", Some(1)));
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut odd = b64.clone().into_bytes();
    let last = A.iter().position(|&c| c == odd[21]).unwrap();
    assert_eq!((last & 15, &odd[22..24]), (0, &b"=="[..]), "{b64}");
    odd[21] = A[last | 1];
    fs::write(dir.join("odd"), &odd).unwrap();
    let o = md5x(dir, &["-c", "--base64", "-w", "odd"], b"");
    assert!(
        o.stderr
            .starts_with("md5x: odd: 1: improperly formatted MD5 checksum line\n"),
        "{}",
        o.stderr
    );
    // ETags are hex: the two options do not go together.
    for args in [
        &["--etag", "--base64", "plain"][..],
        &["-c", "--etag", "--base64", "sums"],
    ] {
        let o = md5x(dir, args, b"");
        assert_eq!(o.code, Some(1));
        assert!(
            o.stderr.starts_with(
                "md5x: the --etag and --base64 options are mutually exclusive (an S3 ETag is hex)\n"
            ),
            "{}",
            o.stderr
        );
    }
}

fn hex_bytes(h: &str) -> Vec<u8> {
    (0..h.len() / 2)
        .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// The ETag of `data` by S3's definition, from md5sum's digests: the MD5 below the
/// threshold, else the MD5 of the parts' digests, with the part count.
fn etag_ref(data: &[u8], part_size: usize, threshold: usize) -> String {
    if data.len() < threshold {
        return md5_hex(data);
    }
    let parts: Vec<&[u8]> = match data.len() {
        0 => vec![data],
        _ => data.chunks(part_size).collect(),
    };
    let digests: Vec<u8> = parts.iter().flat_map(|p| hex_bytes(&md5_hex(p))).collect();
    format!("{}-{}", md5_hex(&digests), parts.len())
}

/// Many files on both sides of the threshold, given together: those below it are read
/// and hashed side by side with the others (a single PUT's ETag is the MD5), those at
/// or above it get the multipart ETag, in operand order, with any worker count, in
/// hash mode and check mode. A file whose size reads 0 but which holds bytes past the
/// threshold (a /proc file) gets the multipart ETag of what it holds.
#[test]
fn etag_of_many_files_on_both_sides_of_the_threshold() {
    let tmp = TempDir::new("etagmany");
    let dir = tmp.path();
    let (part, threshold) = (5 * MIB, 3 * MIB);
    let k = 256 << 10;
    let sizes = [
        3 * MIB - 1,
        0,
        1,
        64,
        1000,
        k - 1,
        k,
        k + 1,
        MIB + 7,
        3 * MIB,
        3 * MIB + 1,
        5 * MIB + 3,
        11 * MIB,
        2 * MIB,
        k + 65,
    ];
    let mut names = Vec::new();
    let mut want = String::new();
    for (i, &len) in sizes.iter().enumerate() {
        let data: Vec<u8> = pattern(len + i).split_off(i);
        let name = format!("f{i:02}");
        fs::write(dir.join(&name), &data).unwrap();
        want += &format!("{}  {name}\n", etag_ref(&data, part, threshold));
        names.push(name);
    }
    let opts = ["--etag", "--part-size", "5MiB", "--threshold", "3MiB"];
    // (-j0: all cores; the largest number: capped, with the same results.)
    for jobs in ["-j1", "-j2", "-j8", "-j0", "-j18446744073709551615"] {
        let mut args: Vec<&str> = vec![jobs];
        args.extend(opts);
        args.extend(names.iter().map(String::as_str));
        let o = md5x(dir, &args, b"");
        assert_eq!((o.code, o.stderr.as_str()), (Some(0), ""), "{jobs}");
        assert_eq!(o.out(), want, "{jobs}");
    }
    fs::write(dir.join("sums"), &want).unwrap();
    let mut args: Vec<&str> = vec!["-c", "--quiet"];
    args.extend(opts);
    args.push("sums");
    let o = md5x(dir, &args, b"");
    assert_eq!(
        (o.code, o.out(), o.stderr.as_str()),
        (Some(0), String::new(), "")
    );

    let proc_file = Path::new("/proc/version");
    if let Ok(data) = fs::read(proc_file) {
        if data.len() > 100 && fs::metadata(proc_file).is_ok_and(|m| m.len() == 0) {
            let o = md5x(
                dir,
                &["--etag", "--threshold", "100", "/proc/version", "f01"],
                b"",
            );
            let want = format!(
                "{}  /proc/version\n{}  f01\n",
                etag_ref(&data, 8 * MIB, 100),
                md5_hex(b""),
            );
            assert_eq!((o.code, o.out()), (Some(0), want.clone()), "{}", o.stderr);
            // Checked, its part size searched: read as a stream, not taken for the 0
            // bytes it states (which said FAILED, "smaller than --threshold").
            fs::write(dir.join("proc-sums"), &want).unwrap();
            let o = md5x(
                dir,
                &["-c", "--etag", "--threshold", "100", "proc-sums"],
                b"",
            );
            assert_eq!(
                (o.code, o.out(), o.stderr.as_str()),
                (
                    Some(0),
                    "/proc/version: OK (one part)\nf01: OK\n".to_string(),
                    ""
                )
            );
        } else {
            eprintln!("NOT RUN: /proc/version has no bytes past a stated size of 0 here");
        }
    }
}

#[test]
fn size_and_option_errors() {
    let tmp = TempDir::new("errors");
    let dir = tmp.path();
    fs::write(dir.join("a"), b"abc").unwrap();
    for bad in [
        "5XB",
        "",
        "1.5M",
        "5 MiB",
        "-1",
        "MiB",
        "5B",
        "18446744073709551616",
        "17179869184GiB",
    ] {
        for (opt, what) in [("--part-size", "part size"), ("--threshold", "threshold")] {
            let o = md5x(dir, &["--etag", opt, bad, "a"], b"");
            assert_eq!(o.code, Some(1), "{opt} {bad}");
            assert!(o.stdout.is_empty());
            let kind = if what == "part size" {
                "a positive"
            } else {
                "a"
            };
            assert!(
                o.stderr
                    .starts_with(&format!("md5x: invalid {what}: '{bad}' ({kind} number")),
                "{}",
                o.stderr
            );
            assert!(o
                .stderr
                .ends_with("Try 'md5x --help' for more information.\n"));
            let o = md5x(dir, &["--etag", &format!("{opt}={bad}"), "a"], b"");
            assert_eq!(o.code, Some(1));
        }
    }
    // A part size of 0 is no size; a threshold of 0 puts every file in parts, an empty
    // one too: one empty part, the MD5 of the empty part's MD5, then -1.
    for zero in ["0", "0MiB"] {
        let o = md5x(dir, &["--etag", "--part-size", zero, "a"], b"");
        assert!(
            o.stderr.starts_with(&format!(
                "md5x: invalid part size: '{zero}' (a positive number"
            )),
            "{}",
            o.stderr
        );
        assert_eq!((o.stdout.len(), o.code), (0, Some(1)));
    }
    fs::write(dir.join("empty"), b"").unwrap();
    let empty_parts = etag_ref(b"", 8 * MIB, 0);
    let abc_parts = etag_ref(b"abc", 8 * MIB, 0);
    assert!(empty_parts.ends_with("-1") && abc_parts.ends_with("-1"));
    for zero in ["0", "0KB"] {
        let o = md5x(
            dir,
            &["--etag", "--threshold", zero, "empty", "a", "-"],
            b"",
        );
        assert_eq!(
            o.out(),
            format!("{empty_parts}  empty\n{abc_parts}  a\n{empty_parts}  -\n"),
            "{}",
            o.stderr
        );
        assert_eq!(o.code, Some(0));
    }
    // Checked: the -1 line is right for the empty file, and the plain MD5 is not (a
    // single PUT, below a threshold of 0, is not possible).
    fs::write(
        dir.join("sums0"),
        format!("{empty_parts}  empty\nd41d8cd98f00b204e9800998ecf8427e  empty\n"),
    )
    .unwrap();
    let o = md5x(dir, &["--etag", "--threshold", "0", "-c", "sums0"], b"");
    assert_eq!(
        o.out(),
        "empty: OK (one part)\nempty: FAILED\n",
        "{}",
        o.stderr
    );
    assert_eq!(o.code, Some(1));
    // A bad number of jobs is quoted as the other bad values are (GNU's quote).
    for bad in ["abc", "-1", ""] {
        let o = md5x(dir, &["-j", bad, "a"], b"");
        assert_eq!(
            (o.stderr, o.code),
            (
                format!("md5x: invalid number of jobs: '{bad}'\nTry 'md5x --help' for more information.\n"),
                Some(1)
            )
        );
    }
    let o = md5x(dir, &["--etag", "-a", "md5-p8", "a"], b"");
    assert_eq!(
        o.stderr,
        "md5x: the --etag option and --algorithm=md5-p8 are mutually exclusive\n\
         Try 'md5x --help' for more information.\n"
    );
    assert_eq!(o.code, Some(1));
    // -a md5 is the default: fine with --etag.
    let o = md5x(dir, &["-a", "MD5", "--etag", "a"], b"");
    assert_eq!(o.code, Some(0));
    assert_eq!(o.out(), "900150983cd24fb0d6963f7d28e17f72  a\n");
    let o = md5x(dir, &["-a", "sha1", "a"], b"");
    assert_eq!(
        o.stderr,
        "md5x: invalid argument 'sha1' for '--algorithm'\nValid arguments are:\n  - 'md5'\n  \
         - 'md5-p4'\n  - 'md5-p8'\n  - 'md5-p16'\nTry 'md5x --help' for more information.\n"
    );
    assert_eq!(o.code, Some(1));
    let o = md5x(dir, &["--part-size", "8M", "a"], b"");
    assert!(o
        .stderr
        .contains("--part-size option is meaningful only with --etag"));
    assert_eq!(o.code, Some(1));
    let o = md5x(dir, &["-a"], b"");
    assert!(o.stderr.contains("option requires an argument -- 'a'"));
    // Abbreviations of the new long options.
    let o = md5x(dir, &["--alg=md5-p4", "a"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let o = md5x(dir, &["--et", "--thr", "1", "--part=5MiB", "a"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // --help mentions the new options.
    let o = md5x(dir, &["--help"], b"");
    let h = o.out();
    for w in [
        "--algorithm=NAME",
        "--etag",
        "--part-size=SIZE",
        "--threshold=SIZE",
        "AWS CLI",
    ] {
        assert!(h.contains(w), "--help lacks {w}");
    }
}

/// `--backend` and `MD5X_BACKEND`: a name that is no backend, or one this CPU lacks,
/// ends the run before anything is hashed, exit 1, with a message that lists what the
/// CPU has; `--backend` wants an argument and, given, wins over the variable.
#[test]
fn backend_choice_errors() {
    let tmp = TempDir::new("backend-choice");
    let dir = tmp.path();
    fs::write(dir.join("a"), b"abc").unwrap();
    let lacking = if cfg!(all(target_arch = "x86_64", target_pointer_width = "64")) {
        "neon"
    } else {
        "avx2"
    };
    let with_env = |var: &str, args: &[&str]| {
        let mut cmd = in_dir(MD5X, dir);
        run(cmd.arg0("md5x").env("MD5X_BACKEND", var).args(args), b"")
    };
    let unknown =
        "unknown backend 'bogus' (known: portable, x86_64, sse2, avx2, avx512, neon, simd128)";
    let unsupported = format!("backend '{lacking}' is not supported by this CPU");
    for (name, why) in [("bogus", unknown), (lacking, &unsupported)] {
        let by_option = md5x(dir, &["--backend", name, "a"], b"");
        for (from, o) in [
            ("--backend", by_option),
            ("MD5X_BACKEND", with_env(name, &["a"])),
        ] {
            assert_eq!((o.code, o.out()), (Some(1), String::new()), "{from} {name}");
            // (portable alone where no other kernel is built: i686, s390x.)
            let want = format!("md5x: {from}: {why}; this CPU supports: portable");
            assert!(
                o.stderr.starts_with(&want) && o.stderr.ends_with('\n'),
                "{from} {name}: {}",
                o.stderr
            );
            assert_eq!(o.stderr.lines().count(), 1, "{from} {name}: {}", o.stderr);
        }
    }
    // A name that is no backend is quoted as any other value given, whole: a control
    // character reaches the terminal escaped.
    let long = "b".repeat(40);
    for (from, o, shown) in [
        (
            "--backend",
            md5x(dir, &["--backend", "\x1b[31m", "a"], b""),
            "''$'\\033''[31m'".to_string(),
        ),
        (
            "MD5X_BACKEND",
            with_env("x\ty", &["a"]),
            "'x'$'\\t''y'".to_string(),
        ),
        ("MD5X_BACKEND", with_env(&long, &["a"]), format!("'{long}'")),
    ] {
        let want = format!("md5x: {from}: unknown backend {shown} (known: portable, ");
        assert!(o.stderr.starts_with(&want), "{from}: {}", o.stderr);
        assert_eq!(
            (o.code, o.stderr.lines().count()),
            (Some(1), 1),
            "{}",
            o.stderr
        );
    }
    let o = with_env("bogus", &["--backend", "portable", "a"]);
    let line = "900150983cd24fb0d6963f7d28e17f72  a\n";
    assert_eq!(
        (o.code, o.out(), o.stderr.as_str()),
        (Some(0), line.to_string(), "")
    );
    let o = md5x(dir, &["--backend"], b"");
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (
            Some(1),
            "md5x: option '--backend' requires an argument\n\
             Try 'md5x --help' for more information.\n"
        )
    );
}

/// Of `--progress` and `--no-progress` the last wins; `--no-mmap` is accepted (md5x
/// always reads) and changes nothing. A sparse file of 256 MiB keeps the line up long
/// enough to be drawn where it is on.
#[test]
fn progress_switches_and_no_mmap() {
    let tmp = TempDir::new("progress-switches");
    let dir = tmp.path();
    let f = fs::File::create(dir.join("zeros")).unwrap();
    f.set_len(256 << 20).unwrap();
    let want = format!("{}  zeros\n", md5_hex(&vec![0; 256 << 20]));
    for (args, drawn) in [
        (&["--progress", "--no-progress"][..], false),
        (&["--no-progress", "--progress"], true),
        (&["--progress", "--no-mmap"], true),
        (&["--no-mmap"], false),
    ] {
        let o = md5x(dir, &[args, &["zeros"]].concat(), b"");
        assert_eq!((o.code, o.out()), (Some(0), want.clone()), "{args:?}");
        assert_eq!(
            o.stderr.contains("/1 files"),
            drawn,
            "{args:?}: {}",
            o.stderr
        );
    }
}

/// Settings S3 would refuse are an error for the files they concern, never an ETag;
/// the others are still hashed and the exit status is 1.
#[test]
fn s3_limits_are_per_file_errors() {
    let tmp = TempDir::new("limits");
    let dir = tmp.path();
    fs::write(dir.join("small"), pattern(3000)).unwrap();
    fs::write(dir.join("nine"), pattern(9 * MIB)).unwrap();
    let small_md5 = md5_hex(&pattern(3000));
    // 1 MiB parts: a 9 MiB file (above the 8 MiB threshold) cannot be uploaded so;
    // a small file is a single PUT, whatever the part size.
    let o = md5x(
        dir,
        &["--etag", "--part-size", "1MiB", "small", "nine", "small"],
        b"",
    );
    assert_eq!(o.out(), format!("{small_md5}  small\n{small_md5}  small\n"));
    assert_eq!(
        o.stderr,
        "md5x: nine: part size 1048576 bytes is outside S3's limits (5242880 to 5368709120 bytes)\n"
    );
    assert_eq!(o.code, Some(1));
    // The same through a pipe.
    let o = md5x(
        dir,
        &["--etag", "--part-size", "1MiB", "-"],
        &pattern(9 * MIB),
    );
    assert!(o.stdout.is_empty());
    assert!(o.stderr.contains("outside S3's limits"), "{}", o.stderr);
    assert_eq!(o.code, Some(1));
    let o = md5x(dir, &["--etag", "--part-size", "1MiB", "-"], &pattern(3000));
    assert_eq!(o.out(), format!("{small_md5}  -\n"));
    assert_eq!(o.code, Some(0));
    // Over 5 GiB.
    let o = md5x(dir, &["--etag", "--part-size", "6GiB", "nine"], b"");
    assert!(o.stderr.contains("outside S3's limits"), "{}", o.stderr);
    assert_eq!(o.code, Some(1));
    // More than 10,000 parts: a sparse file (never read).
    let sparse = dir.join("sparse");
    let f = fs::File::create(&sparse).unwrap();
    if f.set_len(10_001 * 5 * MIB as u64).is_ok() {
        let o = md5x(
            dir,
            &["--etag", "--part-size", "5MiB", "sparse", "small"],
            b"",
        );
        assert_eq!(o.out(), format!("{small_md5}  small\n"));
        assert_eq!(
            o.stderr,
            "md5x: sparse: 10001 parts of 5242880 bytes: S3 allows at most 10000 parts; use a \
             larger part size\n"
        );
        assert_eq!(o.code, Some(1));
    }
    // Over 5 GiB below the threshold: more than one PUT takes (never read), alone, in
    // a batch, and with -j1.
    if f.set_len((5 << 30) + 1).is_ok() {
        for args in [
            &["--etag", "--threshold", "6GiB", "sparse"][..],
            &["--etag", "--threshold", "6GiB", "sparse", "small"],
            &[
                "--etag",
                "--threshold",
                "6GiB",
                "-j1",
                "small",
                "sparse",
                "small",
            ],
        ] {
            let o = md5x(dir, args, b"");
            let smalls = args.iter().filter(|&&a| a == "small").count();
            assert_eq!(o.out(), format!("{small_md5}  small\n").repeat(smalls));
            assert_eq!(
                o.stderr,
                "md5x: sparse: 5368709121 bytes in a single PUT: S3 takes at most 5368709120 \
                 bytes in one; use a lower threshold\n",
                "{args:?}"
            );
            assert_eq!(o.code, Some(1), "{args:?}");
        }
    }
    drop(f);
    let _ = fs::remove_file(&sparse);
    // In check mode: an explicit part size out of limits fails that line only.
    let o = md5x(dir, &["--etag", "nine", "small"], b"");
    fs::write(dir.join("sums"), &o.stdout).unwrap();
    let o = md5x(dir, &["--etag", "-c", "--part-size", "1m", "sums"], b"");
    assert_eq!(o.out(), "nine: FAILED open or read\nsmall: OK\n");
    assert!(o
        .stderr
        .contains("nine: part size 1048576 bytes is outside S3's limits"));
    assert_eq!(o.code, Some(1));
}

#[test]
fn fifo_and_stdin() {
    let tmp = TempDir::new("fifo");
    let dir = tmp.path();
    let data = pattern(6 * MIB + 77);
    fs::write(dir.join("f"), &data).unwrap();
    let want = md5x(
        dir,
        &["--etag", "--part-size", "5MiB", "--threshold", "5MiB", "f"],
        b"",
    )
    .out();
    assert!(want.contains("-2  f"), "{want}");
    let want_p = md5x(dir, &["-a", "md5-p8", "f"], b"").out();
    // Standard input.
    let o = md5x(
        dir,
        &["--etag", "--part-size", "5MiB", "--threshold", "5MiB"],
        &data,
    );
    assert_eq!(o.out(), want.replace("  f", "  -"));
    let o = md5x(dir, &["-a", "md5-p8", "-", "f"], &data);
    assert_eq!(o.out(), format!("{}{want_p}", want_p.replace("  f", "  -")));
    // A FIFO: streamed.
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        for args in [
            vec![
                "--etag",
                "--part-size",
                "5MiB",
                "--threshold",
                "5MiB",
                "pipe",
            ],
            vec!["-a", "md5-p8", "pipe"],
        ] {
            let writer = {
                let (fifo, data) = (fifo.clone(), data.clone());
                std::thread::spawn(move || {
                    let mut w = fs::OpenOptions::new().write(true).open(fifo).unwrap();
                    let _ = w.write_all(&data);
                })
            };
            let o = md5x(dir, &args, b"");
            writer.join().unwrap();
            let w = if args[0] == "--etag" { &want } else { &want_p };
            assert_eq!(o.out(), w.replace("  f", "  pipe"), "{}", o.stderr);
        }
    }
}

/// A loop device set up over a file (read-only), detached when dropped.
struct Loop(String);

impl Loop {
    fn over(file: &Path) -> Result<Loop, String> {
        let out = Command::new("losetup")
            .args(["--find", "--show", "--read-only"])
            .arg(file)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || !dev.starts_with("/dev/") {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Loop(dev))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A block device (what forensics and backups hash) says it holds 0 bytes in its
/// metadata and is read at positions like a regular file: in every mode, alone and
/// among files, its sums are those of the file beneath it.
#[test]
fn block_device_hashes_as_its_bytes() {
    let tmp = TempDir::new("blockdev");
    let dir = tmp.path();
    // Past the arena's 256 KiB and the multipart threshold below, in 512-byte sectors.
    let data = pattern(3 * MIB + 4096);
    let img = dir.join("img");
    fs::write(&img, &data).unwrap();
    let dev = match Loop::over(&img) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("SKIPPED: no loop device here ({e})");
            return;
        }
    };
    let d = dev.0.as_str();
    let modes: [&[&str]; 6] = [
        &[],
        &["-j1"],
        &["--etag"],
        &["--etag", "--threshold=1MiB", "--part-size=5MiB"],
        &["-a", "md5-p4"],
        &["--tag", "--base64"],
    ];
    for mode in modes {
        let run = |names: &[&str]| {
            let args: Vec<&str> = mode.iter().chain(names).copied().collect();
            let o = md5x(dir, &args, b"");
            assert_eq!(o.code, Some(0), "{args:?}: {}", o.stderr);
            o.out()
        };
        let want = run(&["img"]);
        assert_eq!(run(&[d]), want.replace("img", d), "{mode:?} alone");
        let among = run(&["img", d, "/dev/null", d]);
        let null = run(&["/dev/null"]);
        assert_eq!(
            among,
            format!(
                "{want}{}{null}{}",
                want.replace("img", d),
                want.replace("img", d)
            ),
            "{mode:?} among files"
        );
    }
    // Check mode reads it too.
    let list = format!("{}  {d}\n", md5_hex(&data));
    fs::write(dir.join("list"), list).unwrap();
    let o = md5x(dir, &["-c", "list"], b"");
    assert_eq!(
        (o.code, o.out()),
        (Some(0), format!("{d}: OK\n")),
        "{}",
        o.stderr
    );
    if let Ok(gnu) = Command::new("md5sum").arg(d).output() {
        assert_eq!(md5x(dir, &[d], b"").stdout, gnu.stdout);
    }
}

/// A file past 4 GiB (sparse: it costs time, not disk): alone (read on two threads),
/// among small files (its start read with theirs, the rest at positions), and as an S3
/// ETag whose first part is exactly 4 GiB. Bytes at its start and near its end differ
/// from the zeros between, so a position or length cut to 32 bits (where usize has 32
/// bits: the test command's i686 run) reads other bytes. md5sum reads the references.
#[test]
fn a_file_past_4_gib() {
    use std::os::unix::fs::FileExt;
    let tmp = TempDir::new("past4g");
    let dir = tmp.path();
    let four: u64 = 4 << 30;
    for name in ["big", "part1"] {
        let f = fs::File::create(dir.join(name)).unwrap();
        f.set_len(four).unwrap();
        f.write_all_at(b"head", 0).unwrap();
        f.write_all_at(b"near the end", four - 100).unwrap();
        if name == "big" {
            // 4 GiB + 5 bytes; part1 is big's first part.
            f.write_all_at(b"tail!", four).unwrap();
        }
    }
    fs::write(dir.join("small"), b"abc").unwrap();
    // The two references side by side.
    let sums: Vec<_> = ["big", "part1"]
        .map(|n| {
            Command::new("md5sum")
                .arg(n)
                .current_dir(dir)
                .stdout(Stdio::piped())
                .spawn()
                .expect("md5sum runs")
        })
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success());
            String::from_utf8(o.stdout[..32].to_vec()).unwrap()
        })
        .collect();
    let (big, part1) = (&sums[0], &sums[1]);
    let small = md5_hex(b"abc");
    let o = md5x(dir, &["big"], b"");
    assert_eq!(
        (o.code, o.out(), o.stderr.as_str()),
        (Some(0), format!("{big}  big\n"), ""),
        "alone"
    );
    let o = md5x(dir, &["small", "big", "small"], b"");
    assert_eq!(
        (o.code, o.out(), o.stderr.as_str()),
        (
            Some(0),
            format!("{small}  small\n{big}  big\n{small}  small\n"),
            ""
        ),
        "among small files"
    );
    let mut parts = hex_bytes(part1);
    parts.extend(hex_bytes(&md5_hex(b"tail!")));
    let etag = format!("{}-2", md5_hex(&parts));
    let o = md5x(
        dir,
        &["--etag", "--part-size=4GiB", "--threshold=4GiB", "big"],
        b"",
    );
    assert_eq!(
        (o.code, o.out(), o.stderr.as_str()),
        (Some(0), format!("{etag}  big\n"), ""),
        "ETag"
    );
}

/// MD5-P(K) and ETags of many lengths against hashlib running docs/modes.md's
/// definitions.
#[test]
fn matches_python_reference() {
    let py = Command::new("python3")
        .arg("-c")
        .arg("import hashlib")
        .status();
    if !py.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: python3 not found; MD5-P(K) not compared with hashlib");
        return;
    }
    let tmp = TempDir::new("python");
    let dir = tmp.path();
    let mut lens: Vec<usize> = (0..=200).step_by(7).collect();
    lens.extend([
        63, 64, 65, 127, 128, 129, 255, 256, 1023, 1024, 1025, 4095, 4096, 4097,
    ]);
    // Around 256 KiB, where a file stops being read whole in one go and is streamed
    // on from what was read (the command's SMALL_MAX).
    lens.extend([65536 + 13, 262_143, 262_144, 262_145, 262_209, 300_000]);
    lens.extend([1 << 20, (1 << 20) + 191]);
    lens.sort();
    lens.dedup();
    let mut names: Vec<String> = lens.iter().map(|l| format!("p{l}")).collect();
    for (l, n) in lens.iter().zip(&names) {
        fs::write(dir.join(n), pattern(*l)).unwrap();
    }
    // A file that states a size of 0 and holds more: read to its end all the same.
    if fs::read("/proc/version").is_ok_and(|d| !d.is_empty()) {
        names.insert(names.len() / 2, "/proc/version".into());
    }
    // Two bigger files for ETags (5 and 8 MiB parts, various thresholds).
    fs::write(dir.join("e11"), pattern(11 * MIB + 5)).unwrap();
    fs::write(dir.join("e10"), pattern(10 * MIB)).unwrap();
    let script = r#"
import hashlib, sys
def md5_par(data, k):
    chains = [hashlib.md5() for _ in range(k)]
    for i in range(0, len(data), 64):
        chains[(i // 64) % k].update(data[i:i + 64])
    return hashlib.md5(b"".join(c.digest() for c in chains)).hexdigest()
def etag(data, part, thr):
    if len(data) < thr:
        return hashlib.md5(data).hexdigest()
    n = max(1, -(-len(data) // part))
    ds = b"".join(hashlib.md5(data[i * part:(i + 1) * part]).digest() for i in range(n))
    return hashlib.md5(ds).hexdigest() + "-" + str(n)
for line in sys.stdin:
    kind, a, b, name = line.split()
    data = open(name, "rb").read()
    if kind == "par":
        print(md5_par(data, int(a)) + "  " + name)
    else:
        print(etag(data, int(a), int(b)) + "  " + name)
"#;
    let mut req = String::new();
    for k in [4, 8, 16] {
        for n in &names {
            req.push_str(&format!("par {k} 0 {n}\n"));
        }
    }
    let etag_cases: &[(usize, usize)] = &[
        (5 * MIB, 5 * MIB),
        (8 * MIB, 8 * MIB),
        (5 * MIB, 16 * MIB),
        (6 * MIB, 1),
        (16 * MIB, 1000),
    ];
    for &(p, t) in etag_cases {
        for n in ["e11", "e10", "p300000"] {
            req.push_str(&format!("etag {p} {t} {n}\n"));
        }
    }
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let reference = String::from_utf8(o.stdout).unwrap();
    let mut got = String::new();
    for (k, jobs) in [(4, "-j1"), (8, "-j2"), (16, "-j3")] {
        let mut args = vec![jobs.to_string(), "-a".into(), format!("md5-p{k}")];
        args.extend(names.iter().cloned());
        let o = md5x(dir, &args, b"");
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        got.push_str(&o.out());
    }
    for &(p, t) in etag_cases {
        let args = [
            "--etag".to_string(),
            format!("--part-size={p}"),
            format!("--threshold={t}"),
            "e11".into(),
            "e10".into(),
            "p300000".into(),
        ];
        let o = md5x(dir, &args, b"");
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        got.push_str(&o.out());
    }
    let (r, g): (Vec<&str>, Vec<&str>) = (reference.lines().collect(), got.lines().collect());
    assert_eq!(r.len(), g.len());
    for (r, g) in r.iter().zip(&g) {
        assert_eq!(r, g);
    }
}

/// `-r`: files under a directory, depth first and sorted by name; symbolic links
/// skipped without `-L` (followed with it), their count said at the end; FIFOs and
/// sockets skipped, each with a notice on stderr; the exit status stays 0; refused
/// with `-c`.
#[test]
fn recursive_walk_order_links_and_special_files() {
    let t = TempDir::new("walk");
    let d = t.path();
    fs::create_dir_all(d.join("tree/b")).unwrap();
    fs::write(d.join("tree/c"), b"c").unwrap();
    fs::write(d.join("tree/a"), b"a").unwrap();
    fs::write(d.join("tree/b/x"), b"x").unwrap();
    std::os::unix::fs::symlink("a", d.join("tree/link")).unwrap();
    let fifo = Command::new("mkfifo").arg(d.join("tree/b/fifo")).status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");
    let _sock = std::os::unix::net::UnixListener::bind(d.join("tree/sock")).unwrap();

    let line = |data: &[u8], name: &str| format!("{}  {name}\n", md5_hex(data));
    let walked = [
        line(b"a", "tree/a"),
        line(b"x", "tree/b/x"),
        line(b"c", "tree/c"),
    ];
    let o = md5x(d, &["-r", "tree"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(String::from_utf8_lossy(&o.stdout), walked.concat());
    assert_eq!(
        o.stderr,
        "md5x: tree/b/fifo: not a regular file; skipped\n\
         md5x: tree/sock: not a regular file; skipped\n\
         md5x: 1 symbolic link skipped (use -L to follow them)\n"
    );

    let o = md5x(d, &["-r", "-L", "tree"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let with_link = [walked.concat(), line(b"a", "tree/link")].concat();
    assert_eq!(String::from_utf8_lossy(&o.stdout), with_link);
    assert!(!o.stderr.contains("symbolic"), "{}", o.stderr);

    let o = md5x(d, &["-r", "-c", "tree"], b"");
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr
            .starts_with("md5x: the --recursive option is meaningless when verifying checksums\n"),
        "{}",
        o.stderr
    );
    // -L without -r (with or without -c) would change nothing: an error, as md5sum's
    // meaningless options are.
    for args in [
        &["-L", "tree/a"][..],
        &["-c", "-L", "tree/a"],
        &["--deref", "tree/a"],
    ] {
        let o = md5x(d, args, b"");
        assert_eq!(o.code, Some(1), "{args:?}");
        assert!(
            o.stderr.starts_with(
                "md5x: the --dereference option is meaningful only with --recursive\n"
            ),
            "{args:?}: {}",
            o.stderr
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// `-L`: a link to a directory on the path walked is a loop, said and not followed;
/// a link to a directory beside it is walked (the walk leaves a directory's place on
/// the path when it is done with it).
#[test]
fn recursive_walk_with_links_stops_at_loops_only() {
    let t = TempDir::new("walk-loops");
    let d = t.path();
    fs::create_dir_all(d.join("t/x")).unwrap();
    fs::create_dir_all(d.join("t/y")).unwrap();
    fs::write(d.join("t/x/f"), b"f").unwrap();
    std::os::unix::fs::symlink("..", d.join("t/x/up")).unwrap();
    std::os::unix::fs::symlink(".", d.join("t/y/self")).unwrap();
    std::os::unix::fs::symlink("../x", d.join("t/y/tox")).unwrap();
    let f = md5_hex(b"f");
    let o = md5x(d, &["-r", "-L", "t"], b"");
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_eq!(o.out(), format!("{f}  t/x/f\n{f}  t/y/tox/f\n"));
    let lp = "File system loop detected; not followed";
    assert_eq!(
        o.stderr,
        format!("md5x: t/x/up: {lp}\nmd5x: t/y/self: {lp}\nmd5x: t/y/tox/up: {lp}\n")
    );
    // Without -L the links are counted, over both directory operands, once at the
    // end; a link named as an operand is hashed, as md5sum hashes it.
    let o = md5x(d, &["-r", "t/x", "t/y/self/../x/f", "t/y"], b"");
    assert_eq!(
        (o.code, o.out(), o.stderr),
        (
            Some(0),
            format!("{f}  t/x/f\n{f}  t/y/self/../x/f\n"),
            "md5x: 3 symbolic links skipped (use -L to follow them)\n".to_string()
        )
    );
}

/// `-r` goes on past what it cannot read: a directory it may not list and, with `-L`,
/// a link to nothing are each said on stderr, the files around them are hashed, and
/// the exit status is 1. Root may list any directory, so there the walk runs as
/// `nobody` through `setpriv` (elsewhere as the user); without `setpriv`, root says
/// so and checks the link alone.
#[test]
fn recursive_walk_goes_on_past_errors() {
    let t = TempDir::new("walk-errors");
    let d = t.path();
    fs::create_dir_all(d.join("t/a/shut")).unwrap();
    fs::create_dir_all(d.join("t/b")).unwrap();
    fs::write(d.join("t/a/f"), b"f").unwrap();
    fs::write(d.join("t/a/shut/g"), b"g").unwrap();
    fs::write(d.join("t/b/h"), b"h").unwrap();
    std::os::unix::fs::symlink("nowhere", d.join("t/b/dangling")).unwrap();
    let (f, h) = (md5_hex(b"f"), md5_hex(b"h"));
    let gone = "md5x: t/b/dangling: No such file or directory\n";

    let o = md5x(d, &["-r", "-L", "t/b"], b"");
    assert_eq!(
        (o.code, o.out(), o.stderr),
        (Some(1), format!("{h}  t/b/h\n"), gone.to_string())
    );

    let id = Command::new("id").arg("-u").output().ok();
    let is_root = id.is_some_and(|o| o.stdout == b"0\n");
    let has_setpriv = Command::new("setpriv").arg("--help").output().is_ok();
    if is_root && !has_setpriv {
        println!("root and no setpriv here: the unreadable directory is not checked");
        return;
    }
    let shut = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(d.join("t/a/shut"), fs::Permissions::from_mode(mode)).unwrap();
    };
    shut(0o000);
    let walk = |args: &str| {
        let mut cmd = if is_root {
            let exec = r#"exec -a md5x "$0" "$@""#;
            let mut c = in_dir("setpriv", d);
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
            c.args(["bash", "-c", exec, MD5X]);
            c
        } else {
            let mut c = in_dir(MD5X, d);
            c.arg0("md5x");
            c
        };
        let o = run(cmd.args(args.split(' ')), b"");
        (o.code, o.out(), o.stderr)
    };
    let lines = format!("{f}  t/a/f\n{h}  t/b/h\n");
    let denied = "md5x: t/a/shut: Permission denied\n";
    let plain = walk("-r t");
    let links = walk("-r -L t");
    shut(0o755);
    let skipped = "md5x: 1 symbolic link skipped (use -L to follow them)\n";
    assert_eq!(
        plain,
        (Some(1), lines.clone(), format!("{denied}{skipped}"))
    );
    assert_eq!(links, (Some(1), lines, format!("{denied}{gone}")));
}

/// Names of `PATH_MAX` (4096) bytes or more, which the kernel refuses whole: a tree 45
/// levels of 200-byte names deep, a file at each level, is walked to the bottom by `-r`
/// (a FIFO and links down there treated as anywhere else); its list checks with `-c`;
/// a deep file named as an operand hashes in every mode; errors in such names say
/// what is wrong, not that the name is long (md5sum says "File name too long"); and
/// the progress line's totals count a file down there.
/// Linux only, as `longpath.rs` is.
#[cfg(target_os = "linux")]
#[test]
fn names_longer_than_path_max() {
    let t = TempDir::new("long-names");
    let d = t.path();
    let level = "d".repeat(200);
    // Made by walking down, as no single name reaches the bottom.
    let made = Command::new("bash")
        .current_dir(d)
        .args([
            "-c",
            r#"set -e; mkdir t; cd t
            for i in $(seq 45); do mkdir "$1"; cd "$1"; printf 'level %d\n' $i > f; done
            mkfifo fifo; ln -s f link; ln -s ../f up"#,
            "-",
            &level,
        ])
        .status();
    assert!(made.is_ok_and(|s| s.success()), "making the tree");
    let dir = |i: usize| format!("t{}", format!("/{level}").repeat(i));
    let line = |i: usize| {
        let sum = md5_hex(format!("level {i}\n").as_bytes());
        format!("{sum}  {}/f\n", dir(i))
    };
    assert!(dir(45).len() > 2 * 4096);

    // Depth first: each level's directory sorts before its file.
    let walked: String = (1..=45).rev().map(line).collect();
    let bottom = dir(45);
    let o = md5x(d, &["-r", "t"], b"");
    assert_eq!(
        (o.code, o.out(), o.stderr),
        (
            Some(0),
            walked.clone(),
            format!(
                "md5x: {bottom}/fifo: not a regular file; skipped\n\
                 md5x: 2 symbolic links skipped (use -L to follow them)\n"
            )
        )
    );
    let o = md5x(d, &["-r", "-L", "t"], b"");
    let deepest = md5_hex(b"level 45\n");
    let linked = format!(
        "{}{deepest}  {bottom}/link\n{}  {bottom}/up\n{}",
        line(45),
        md5_hex(b"level 44\n"),
        (1..=44).rev().map(line).collect::<String>()
    );
    assert_eq!((o.code, o.out()), (Some(0), linked), "{}", o.stderr);

    fs::write(d.join("list"), &walked).unwrap();
    let o = md5x(d, &["-c", "list"], b"");
    let ok: String = (1..=45)
        .rev()
        .map(|i| format!("{}/f: OK\n", dir(i)))
        .collect();
    assert_eq!((o.code, o.out(), o.stderr), (Some(0), ok, String::new()));

    // An operand, in each mode, against the same bytes under a short name.
    let deep = format!("{bottom}/f");
    fs::write(d.join("short"), b"level 45\n").unwrap();
    for mode in [
        &[][..],
        &["--tag"],
        &["-a", "md5-p4"],
        &["--etag"],
        &["--base64"],
    ] {
        let o = md5x(d, &[mode, &[deep.as_str()]].concat(), b"");
        let r = md5x(d, &[mode, &["short"]].concat(), b"");
        assert_eq!(o.code, Some(0), "{mode:?}: {}", o.stderr);
        assert_eq!(o.out(), r.out().replace("short", &deep), "{mode:?}");
    }

    // Errors: a missing file, a missing directory on the way, a file on the way.
    let short_line = md5x(d, &["short"], b"").out();
    for (name, error) in [
        (format!("{bottom}/none"), "No such file or directory"),
        (
            format!("{}/none/{level}/f", dir(30)),
            "No such file or directory",
        ),
        (format!("{deep}/{level}/f"), "Not a directory"),
    ] {
        let o = md5x(d, &[name.as_str(), "short"], b"");
        assert_eq!(
            (o.code, o.out(), o.stderr),
            (
                Some(1),
                short_line.clone(),
                format!("md5x: {name}: {error}\n")
            )
        );
    }

    // The progress line's totals count the deep files too: a sparse file of 2 GiB at
    // the bottom, long enough to hash that the line is drawn.
    let made = Command::new("bash")
        .current_dir(d)
        .args([
            "-c",
            r#"set -e; cd t; for i in $(seq 45); do cd "$1"; done
            truncate -s 2G sparse"#,
            "-",
            &level,
        ])
        .status();
    assert!(made.is_ok_and(|s| s.success()), "making the sparse file");
    let o = md5x(d, &["--progress", "-r", "t"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = drawn(&o.stderr, "a deep walk");
    assert!(lines[lines.len() - 1].contains("/2.0 GiB "), "{lines:?}");
}

/// A walk of more files than one engine run takes (4,096; a larger tree is hashed a
/// run at a time, so that memory stays bounded): every file once, in walk order, with
/// the notes for special files in their place; and the progress line's totals, which
/// its thread learns by walking the tree ahead, count them all.
#[test]
fn recursive_walk_of_more_files_than_one_run_takes() {
    let t = sparse_2gib("walk-runs");
    let d = t.path();
    let mut names = Vec::new();
    for (sub, n) in [("a", 2000), ("b", 2000), ("c", 500)] {
        fs::create_dir_all(d.join("tree").join(sub)).unwrap();
        for i in 0..n {
            let name = format!("tree/{sub}/f{i:05}");
            fs::write(d.join(&name), name.as_bytes()).unwrap();
            names.push(name);
        }
    }
    // The lines for the files named in walk order (md5sum's, where it is).
    let want = ["md5sum", MD5X]
        .iter()
        .find_map(|prog| {
            let o = Command::new(prog)
                .current_dir(d)
                .args(&names)
                .output()
                .ok()?;
            o.status
                .success()
                .then(|| String::from_utf8(o.stdout).unwrap())
        })
        .expect("an MD5 tool");
    assert_eq!(want.lines().count(), names.len());
    let fifo = Command::new("mkfifo").arg(d.join("tree/b/p")).status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");
    let o = md5x(d, &["-j1", "-r", "tree"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.out() == want, "-j1: the walk's lines differ");
    assert_eq!(o.stderr, "md5x: tree/b/p: not a regular file; skipped\n");
    // On both cores, with the sparse file after the walk, so that the line is drawn
    // once the walk ahead is done (the first lines may not have its totals yet).
    let o = md5x(d, &["--progress", "-r", "tree", "sparse"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let sparse = md5x(d, &["sparse"], b"").out();
    assert!(o.out() == want + &sparse, "the walk's lines differ");
    let lines = drawn(&o.stderr, "walk and sparse");
    let last = lines.last().unwrap();
    assert!(last.contains("/4501 files "), "{last:?}");
    // A line drawn while the walk is still counting says its total may grow.
    for l in &lines {
        assert!(
            l.contains("/4501 files ") || (l.contains("+ files ") && l.contains("ETA --:--")),
            "{l:?}"
        );
    }
}

/// The progress lines drawn on `stderr` (each "\x1b[K[##--...] 1/2 files 1.2 GiB/4.0
/// GiB 600 MiB/s ETA 0:02"), of which there must be one at least (`what` says where).
fn drawn<'a>(stderr: &'a str, what: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = stderr
        .split('\r')
        .filter(|l| l.contains(" files "))
        .collect();
    assert!(!lines.is_empty(), "{what}: no line drawn: {stderr:?}");
    lines
}

/// A new directory holding `sparse`, a sparse file of 2 GiB: long enough to hash that
/// the progress line is drawn several times.
fn sparse_2gib(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    let f = fs::File::create(dir.path().join("sparse")).unwrap();
    f.set_len(2 << 30).unwrap();
    dir
}

/// `--progress` draws the line in check mode too (it drew nothing there), with the
/// totals from the checksum list: read ahead when the list is a regular file, a chunk
/// at a time from standard input. A sparse file of 2 GiB, listed twice: each drawn
/// line's totals are the list's (2 files, 4.0 GiB) once known, and what is verified
/// is what it is without the line.
#[test]
fn progress_in_check_mode_counts_the_listed_files() {
    let dir = sparse_2gib("progress-check");
    let sum = md5x(dir.path(), &["sparse"], b"");
    assert_eq!(sum.code, Some(0), "{}", sum.stderr);
    let list = sum.out().repeat(2);
    fs::write(dir.path().join("list"), &list).unwrap();
    let plain = md5x(dir.path(), &["-c", "list"], b"");
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    assert_eq!(plain.out(), "sparse: OK\nsparse: OK\n");
    for (args, stdin) in [
        (&["--progress", "-c", "list"][..], &b""[..]),
        (&["--progress", "-c"][..], list.as_bytes()),
    ] {
        let shown = md5x(dir.path(), args, stdin);
        assert_eq!(shown.code, Some(0), "{args:?}: {}", shown.stderr);
        assert_eq!(shown.out(), plain.out(), "{args:?}");
        // Each line: "\x1b[K[###---...] 1/2 files 1.2 GiB/4.0 GiB 600 MiB/s ETA 0:02".
        let lines = drawn(&shown.stderr, &format!("{args:?}"));
        let last = lines[lines.len() - 1];
        assert!(
            last.contains("/2 files ") && last.contains("/4.0 GiB "),
            "{args:?}: {lines:?}"
        );
        // Whatever was left on standard error once the line is wiped: nothing.
        let rest = shown.stderr.rsplit('\r').next().unwrap_or("");
        assert_eq!(rest, "\x1b[K", "{args:?}: {:?}", shown.stderr);
    }
}

/// A file counts as done once it is hashed: a large file in a batch with small ones
/// (`-j1`: one batch), or on a worker of its own, is not done while it is still read.
/// The line said "3/3 files 94.4 MiB/5.0 GiB" while the large file was being read.
#[test]
fn progress_counts_a_file_done_once_hashed() {
    let dir = sparse_2gib("progress-done");
    fs::write(dir.path().join("a"), b"a").unwrap();
    fs::write(dir.path().join("b"), b"b").unwrap();
    for jobs in ["-j1", "-j2"] {
        let o = md5x(dir.path(), &["--progress", jobs, "a", "sparse", "b"], b"");
        assert_eq!(o.code, Some(0), "{jobs}: {}", o.stderr);
        let lines = drawn(&o.stderr, jobs);
        for l in &lines {
            // "... 3/3 files 2.0 GiB/2.0 GiB ...": all done only with every byte read.
            let bytes = l.split(" files ").nth(1).unwrap_or("");
            let (done, total) = bytes.split_once('/').unwrap_or(("", ""));
            assert!(
                !l.contains(" 3/3 files ") || total.starts_with(done),
                "{jobs}: {lines:?}"
            );
        }
    }
}

/// A named pipe among the operands: its size is not known ahead (a pipe's stat size is
/// what it holds at that moment, and the line said "28.0 MiB/3 B"), so the line counts
/// it apart: "2.0 GiB + 1 stream" as the total, and the bar goes by files.
#[test]
fn progress_counts_a_pipe_apart() {
    let dir = sparse_2gib("progress-pipe");
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let data = vec![7u8; 3 << 20];
    let writer = {
        let (fifo, data) = (fifo.clone(), data.clone());
        std::thread::spawn(move || {
            let mut w = fs::OpenOptions::new().write(true).open(fifo).unwrap();
            // A few bytes first, so that the pipe holds some when it is looked at.
            let _ = w.write_all(&data[..3]);
            std::thread::sleep(std::time::Duration::from_millis(100));
            let _ = w.write_all(&data[3..]);
        })
    };
    let o = md5x(dir.path(), &["--progress", "pipe", "sparse"], b"");
    writer.join().unwrap();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let sparse = md5x(dir.path(), &["sparse"], b"");
    assert_eq!(
        o.out(),
        format!("{}  pipe\n{}", md5_hex(&data), sparse.out())
    );
    let lines = drawn(&o.stderr, "pipe");
    for l in &lines {
        assert!(
            l.contains("/2 files ") && l.contains("/2.0 GiB + 1 stream "),
            "{lines:?}"
        );
    }
}

/// Standard input given as `-` is counted as a stream too, as `/dev/stdin` is (the
/// line said "1/1 files" for `- sparse`, and no stream), and as a file once read.
#[test]
fn progress_counts_standard_input_as_a_stream() {
    let dir = sparse_2gib("progress-stdin");
    let o = md5x(dir.path(), &["--progress", "-", "sparse"], b"abc");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = drawn(&o.stderr, "-");
    for l in &lines {
        assert!(
            l.contains("/2 files ") && l.contains("/2.0 GiB + 1 stream "),
            "{lines:?}"
        );
    }
    assert!(
        lines.iter().any(|l| l.contains("] 1/2 files ")),
        "standard input never counted done: {lines:?}"
    );
}

/// A check-mode search for an ETag's part size moves the progress line as it reads (it
/// said "0 B" until the search ended): a sparse file of 2 GiB whose ETag was made with
/// 7 MiB parts, a size the search must find. No line counts more than the file.
#[test]
fn progress_moves_through_an_etag_search() {
    let dir = sparse_2gib("progress-search");
    let sum = md5x(
        dir.path(),
        &["--etag", "--part-size", "7MiB", "sparse"],
        b"",
    );
    assert_eq!(sum.code, Some(0), "{}", sum.stderr);
    fs::write(dir.path().join("list"), sum.out()).unwrap();
    let o = md5x(dir.path(), &["--progress", "-c", "--etag", "list"], b"");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.out(), "sparse: OK (part size 7 MiB)\n");
    // "1.2 GiB/2.0 GiB" from each line's " files 1.2 GiB/2.0 GiB 600 MiB/s ETA 0:01".
    let read: Vec<(&str, &str)> = o
        .stderr
        .split('\r')
        .filter_map(|l| l.split(" files ").nth(1)?.split_once('/'))
        .collect();
    for (done, rest) in &read {
        assert!(rest.starts_with("2.0 GiB "), "{read:?}");
        let gib = done
            .strip_suffix(" GiB")
            .map_or(0.0, |v| v.parse::<f64>().unwrap());
        assert!(gib <= 2.0, "{read:?}");
    }
    match read.last() {
        Some((last, _)) if read.len() > 1 => assert_ne!(*last, "0 B", "{read:?}"),
        _ => eprintln!("progress_moves_through_an_etag_search: one line drawn, nothing to check"),
    }
}

/// The progress line counts a large file's ETag as its parts are read: it said "0 B"
/// until the end, however long the file took. A sparse file of 2 GiB (256 parts), with
/// `--progress` (drawn at once, then every 200 ms): the last line drawn shows bytes
/// read. Its ETag is what it is without the line.
#[test]
fn progress_counts_a_large_etag_as_it_is_read() {
    let dir = sparse_2gib("progress");
    let plain = md5x(dir.path(), &["--etag", "sparse"], b"");
    let shown = md5x(dir.path(), &["--etag", "--progress", "sparse"], b"");
    assert_eq!(
        (shown.code, plain.code),
        (Some(0), Some(0)),
        "{}",
        shown.stderr
    );
    assert!(plain.out().ends_with("-256  sparse\n"), "{}", plain.out());
    assert_eq!(shown.out(), plain.out());
    // Each line: "\x1b[K[---...] 0/1 files 1.2 GiB/2.0 GiB 600 MiB/s ETA 0:01".
    let read: Vec<&str> = shown
        .stderr
        .split('\r')
        .filter_map(|l| l.split(" files ").nth(1)?.split('/').next())
        .collect();
    match read.last() {
        Some(last) if read.len() > 1 => assert_ne!(*last, "0 B", "{read:?}"),
        _ => eprintln!(
            "progress_counts_a_large_etag_as_it_is_read: one line drawn, nothing to check"
        ),
    }
}
