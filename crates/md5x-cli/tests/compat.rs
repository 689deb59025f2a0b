//! Compatibility suite: run GNU md5sum and md5x on the same argv, stdin and files, and
//! require the same stdout bytes, stderr bytes and exit status.
//!
//! Both programs get argv[0] = "md5sum" (`CommandExt::arg0`), so their messages are
//! comparable byte for byte (GNU prints argv[0] as given; so does md5x). Cases are
//! generated from combinations: options x operands x stdin in hash mode, options x
//! check files in check mode, and the option parser's error paths. A few cases also
//! run with stdout and stderr sent to the same file, which checks how they interleave.
//! Three more tests draw cases at random from a fixed seed (`COMPAT_SEED` varies it):
//! checksum lists built from the pieces md5sum's parser looks at, odd file names, and
//! command lines from md5sum's options.
//!
//! Needs GNU coreutils md5sum 9.x at /usr/bin/md5sum (or `MD5SUM=path`;
//! `scripts/coreutils-release.sh` fetches Debian 13's 9.7, which scripts/test.sh runs the
//! suite against). Where releases differ, md5x does what 9.7 does (`Flavour`): names
//! in `--check`'s lines are escaped when they hold a backslash or carriage return too
//! (9.1: only a newline), a NUL right after a line's sum ends the sum (9.1 read on), and
//! a name holding a `'` and ending in an escaped character is quoted as any other (9.1
//! and 9.4 quoted it a second time). Against an older md5sum, its `--check` lines are
//! rewritten to the newer form before the comparison (`escaped_status_names`), and the
//! cases that would meet the other two differences are left out and counted;
//! `a_nul_after_a_sum_reads_as_in_9_4` and `quoted_as_in_9_7` check some of them against
//! the newer releases' answers.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MD5X: &str = env!("CARGO_BIN_EXE_md5x");

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("md5x-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// GNU md5sum 9.x, the authority. Its absence fails the suite (scripts/test.sh installs
/// coreutils) unless `MD5X_SKIP_COMPAT=1` says, on purpose, not to compare. So does an
/// md5sum whose `--check` lines name files in a form this suite does not know.
fn md5sum_path() -> Option<PathBuf> {
    let found = gnu_md5sum();
    let skip = std::env::var_os("MD5X_SKIP_COMPAT").is_some_and(|v| v == "1");
    let Some(p) = found else {
        assert!(
            skip,
            "GNU coreutils md5sum 9.x not found (set MD5SUM=path, or MD5X_SKIP_COMPAT=1 to skip \
             the comparison knowingly)"
        );
        return None;
    };
    if let Err(e) = flavour(&p) {
        assert!(
            skip,
            "{e} (or MD5X_SKIP_COMPAT=1 to skip the comparison knowingly)"
        );
        return None;
    }
    Some(p)
}

/// What the md5sum under test does where GNU releases differ. md5x does what 9.7 does.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Flavour {
    /// As 9.1: a name in `--check`'s lines ("NAME: OK") is escaped (a `\` first, then
    /// `\\`, `\n`, `\r`) only when it holds a newline, and a NUL after a line's sum does
    /// not end it. 9.4 and later escape a name holding a backslash or carriage return
    /// too, as in hash mode, and end the sum at a NUL.
    old_check: bool,
    /// As 9.1 and 9.4: a name holding a `'` and ending in an escaped character is
    /// quoted a second time from what gnulib's first pass left (`'''it'\''s'$'\r'` for
    /// "it's\r"); 9.7 and later quote it as any other (`'it'\''s'$'\r'`).
    requotes: bool,
}

/// Asks the md5sum at `gnu` (once) how it names `a\b` in `--check`'s output, and how it
/// quotes the missing file "it's\r".
fn flavour(gnu: &Path) -> Result<Flavour, String> {
    static FOUND: std::sync::OnceLock<Result<Flavour, String>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let tmp = TempDir::new("flavour");
            fs::write(tmp.0.join("a\\b"), b"x").unwrap();
            // md5("x"), with the name escaped: every 9.x reads that form.
            let sums = b"\\9dd4e461268c8034f5c8564e155c67a6  a\\\\b\n";
            fs::write(tmp.0.join("sums"), sums).unwrap();
            let ask = |args: &[&OsStr]| {
                Command::new(gnu)
                    .args(args)
                    .current_dir(&tmp.0)
                    .env("LC_ALL", "C")
                    .output()
                    .map_err(|e| format!("{}: {e}", gnu.display()))
            };
            let check = ask(&["-c".as_ref(), "sums".as_ref()])?;
            let old_check = match check.stdout.as_slice() {
                b"a\\b: OK\n" => true,
                b"\\a\\\\b: OK\n" => false,
                other => {
                    return Err(format!(
                        "{} -c names the file a\\b as {}, a form this suite does not know \
                         (coreutils 9.11 quotes names there; md5x writes them as 9.7 does): \
                         set MD5SUM to an md5sum 9.1 to 9.7, e.g. \
                         $(scripts/coreutils-release.sh trixie)",
                        gnu.display(),
                        show(other)
                    ))
                }
            };
            let missing = ask(&["--".as_ref(), OsStr::from_bytes(b"it's\r")])?;
            let requotes = missing.stderr.windows(5).any(|w| w == b"'''it");
            Ok(Flavour {
                old_check,
                requotes,
            })
        })
        .clone()
}

/// Whether md5sum 9.1 or 9.4 would quote the name `n` a second time
/// (`Flavour::requotes`): it holds a `'` and ends in a character that is escaped, or in
/// an escape's text (a name from a list may be escaped). Errs on the side of yes.
fn requoted(n: &[u8]) -> bool {
    n.contains(&b'\'')
        && (n.last().is_some_and(|c| !(0x20..0x7f).contains(c))
            || n.ends_with(b"\\r")
            || n.ends_with(b"\\n"))
}

/// Whether a line of the checksum list `l` may name a file that `requoted` holds for
/// (md5sum drops a line's newline and one carriage return before it): the name ends
/// the line, or, in a tag line (`MD5 (NAME) = ...`), comes before a `)`.
fn requoted_in_list(l: &[u8]) -> bool {
    l.split(|&c| c == b'\n').any(|l| {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        requoted(l) || (0..l.len()).any(|i| l[i] == b')' && requoted(&l[..i]))
    })
}

/// Whether `c` may run in check mode: `-c`, `--check` or an abbreviation, or a cluster
/// of short options with a `c`, before any `--`. Errs on the side of yes.
fn checks(c: &Case) -> bool {
    c.args
        .iter()
        .map(|a| a.as_bytes())
        .take_while(|a| *a != b"--")
        .any(|a| {
            a.starts_with(b"--c")
                || (a.len() > 1 && a[0] == b'-' && a[1] != b'-' && a.contains(&b'c'))
        })
}

/// `out` with the names in its `--check` lines ("NAME: OK", ": FAILED", ": FAILED open
/// or read") escaped as md5sum 9.4 and later escape them: a name that 9.1 wrote as it is,
/// holding a backslash or carriage return, gets a `\` first and its `\` and `\r`
/// escaped. A name 9.1 escaped (it held a newline) is already in that form.
fn escaped_status_names(out: &[u8]) -> Vec<u8> {
    const ENDS: [&[u8]; 3] = [b": FAILED open or read\n", b": FAILED\n", b": OK\n"];
    let mut v = Vec::with_capacity(out.len());
    for line in out.split_inclusive(|&c| c == b'\n') {
        let Some(end) = ENDS.iter().find(|e| line.ends_with(e)) else {
            v.extend_from_slice(line);
            continue;
        };
        let name = &line[..line.len() - end.len()];
        let was_escaped = name.first() == Some(&b'\\')
            && unescaped(&name[1..]).is_some_and(|n| n.contains(&b'\n'));
        if was_escaped || !name.iter().any(|&c| c == b'\\' || c == b'\r') {
            v.extend_from_slice(line);
            continue;
        }
        v.push(b'\\');
        for &c in name {
            match c {
                b'\\' => v.extend_from_slice(b"\\\\"),
                b'\r' => v.extend_from_slice(b"\\r"),
                _ => v.push(c),
            }
        }
        v.extend_from_slice(end);
    }
    v
}

/// `s` with md5sum's escapes (`\\`, `\n`, `\r`) undone; `None` if it holds another.
fn unescaped(s: &[u8]) -> Option<Vec<u8>> {
    let mut v = Vec::with_capacity(s.len());
    let mut it = s.iter();
    while let Some(&c) = it.next() {
        if c != b'\\' {
            v.push(c);
            continue;
        }
        v.push(match it.next()? {
            b'\\' => b'\\',
            b'n' => b'\n',
            b'r' => b'\r',
            _ => return None,
        });
    }
    Some(v)
}

fn gnu_md5sum() -> Option<PathBuf> {
    let p = PathBuf::from(std::env::var_os("MD5SUM").unwrap_or_else(|| "/usr/bin/md5sum".into()));
    let out = Command::new(&p).arg("--version").output().ok()?;
    let v = String::from_utf8_lossy(&out.stdout).to_string();
    let first = v.lines().next().unwrap_or("");
    if !first.contains("GNU coreutils") {
        return None;
    }
    let ver = first.rsplit(' ').next().unwrap_or("0");
    let major: u32 = ver.split('.').next().unwrap_or("0").parse().unwrap_or(0);
    (major >= 9).then_some(p)
}

#[derive(Clone)]
struct Case {
    args: Vec<OsString>,
    stdin: Vec<u8>,
    locale: &'static str,
    /// Extra md5x-only arguments placed first (e.g. "-j1"); md5sum never sees them.
    extra: Vec<&'static str>,
    merged: bool,
}

struct Run {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
}

fn run(prog: &Path, dir: &Path, c: &Case, extra: &[&str]) -> Run {
    let mut cmd = Command::new(prog);
    cmd.arg0("md5sum")
        .args(extra)
        .args(&c.args)
        .current_dir(dir)
        .env_remove("LANG")
        .env_remove("LC_CTYPE")
        .env_remove("LANGUAGE")
        .env_remove("MD5X_BACKEND")
        .env_remove("POSIXLY_CORRECT")
        .env("LC_ALL", c.locale)
        .stdin(Stdio::piped());
    let merged_file = if c.merged {
        let p = dir.join(format!(".merged-{}", std::process::id()));
        let f = fs::File::create(&p).unwrap();
        cmd.stdout(f.try_clone().unwrap()).stderr(f);
        Some(p)
    } else {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        None
    };
    let mut child = cmd.spawn().expect("spawn");
    {
        let mut stdin = child.stdin.take().unwrap();
        // The program may not read stdin at all: ignore EPIPE.
        let _ = stdin.write_all(&c.stdin);
    }
    let out = child.wait_with_output().expect("wait");
    match merged_file {
        Some(p) => {
            let both = fs::read(&p).unwrap();
            let _ = fs::remove_file(&p);
            Run {
                stdout: both,
                stderr: Vec::new(),
                code: out.status.code(),
            }
        }
        None => Run {
            stdout: out.stdout,
            stderr: out.stderr,
            code: out.status.code(),
        },
    }
}

fn os(s: &[u8]) -> OsString {
    OsString::from_vec(s.to_vec())
}

fn show(b: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(b))
}

/// Names that exercise quoting and escaping; every one is created as a file.
fn tricky_names() -> Vec<Vec<u8>> {
    [
        &b"a"[..],
        b"empty",
        b"sp ace",
        b"it's",
        b"it's here",
        b"back\\slash",
        b"new\nline",
        b"cr\rname",
        b"tab\tname",
        b"\xff\xfe-latin1",
        "é-utf8".as_bytes(),
        b":colon",
        b"#hash",
        b"x#y",
        b"~tilde",
        b"star*",
        b"(paren)",
        b"q\"uote",
        b"dollar$",
        b"{",
        b"@at",
        b" lead",
        b"trail ",
        b"MD5 (odd)",
        b"multi\\\n\r",
        b"bell\x07",
        b"bs\x08ff\x0cvt\x0b",
        b"del\x7f",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect()
}

type CheckFiles = Vec<(String, Vec<u8>)>;

/// The sum md5sum (`gnu`) prints for the file `name` in `dir`.
fn md5sum_hex(gnu: &Path, dir: &Path, name: &[u8]) -> String {
    let out = Command::new(gnu)
        .arg("--")
        .arg(std::ffi::OsStr::from_bytes(name))
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim_start_matches('\\')[..32].to_string()
}

fn setup(gnu: &Path, dir: &Path) -> (Vec<Vec<u8>>, CheckFiles) {
    let names = tricky_names();
    for (i, n) in names.iter().enumerate() {
        let content: Vec<u8> = if n == b"empty" {
            Vec::new()
        } else {
            format!("content {i}\n").into_bytes()
        };
        fs::write(dir.join(std::ffi::OsStr::from_bytes(n)), content).unwrap();
    }
    // Larger files: through the small-file arena limit, and a streamed one.
    let big: Vec<u8> = (0..(3u32 << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    fs::write(dir.join("big"), &big).unwrap();
    fs::write(dir.join("edge"), &big[..256 * 1024 + 1]).unwrap();
    fs::write(dir.join("-dash"), b"dash\n").unwrap();
    fs::create_dir_all(dir.join("dir/sub")).unwrap();
    fs::write(dir.join("dir/f1"), b"one").unwrap();
    fs::write(dir.join("dir/sub/f2"), b"two").unwrap();

    // Check files: built from md5sum's own output, then edited.
    let hex = |name: &[u8]| md5sum_hex(gnu, dir, name);
    let ha = hex(b"a");
    let he = hex(b"empty");
    let hbig = hex(b"big");
    let hsp = hex(b"sp ace");
    let hbs = hex(b"back\\slash");
    let hnl = hex(b"new\nline");
    let hcr = hex(b"cr\rname");
    let hlead = hex(b" lead");
    let bad = "0123456789abcdef0123456789abcdef";
    let mut checks: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, body: String| checks.push((name.to_string(), body.into_bytes()));
    add("ok", format!("{ha}  a\n{he}  empty\n{hbig}  big\n"));
    add("okbin", format!("{ha} *a\n{he} *empty\n"));
    add("upper", format!("{}  a\n", ha.to_uppercase()));
    add("crlf", format!("{ha}  a\r\n{he}  empty\r\n"));
    add("nonl", format!("{ha}  a"));
    add("tag", format!("MD5 (a) = {ha}\nMD5 (empty) = {he}\n"));
    add(
        "tagodd",
        format!("MD5(a)= {ha}\nMD5 (a)  =  {ha}\nMD5 (a)={ha}\nMD5  (a) = {ha}\n"),
    );
    add(
        "tagparen",
        format!("MD5 (sp ace) = {hsp}\nMD5 (a)) = {ha}\nMD5 (a = {ha}\n"),
    );
    add(
        "tagbad",
        format!("MD5 (a) = {}\nMD5 (a) = {ha}x\nMD5 (a) {ha}\n", &ha[..31]),
    );
    add("mismatch", format!("{bad}  a\n{ha}  a\n{bad}  empty\n"));
    add("allbad", format!("{bad}  a\n"));
    add(
        "missing",
        format!("{ha}  a\n{ha}  nonexistent\n{ha}  also-missing\n"),
    );
    add("onlymissing", format!("{ha}  nonexistent\n"));
    add("dirline", format!("{ha}  dir\n{ha}  a\n"));
    add(
        "malformed",
        format!("garbage\n{ha}  a\nnot a line at all\n\n#comment\n{ha}\n"),
    );
    add("allmalformed", "garbage\nmore garbage\n".to_string());
    add("empty", String::new());
    add("comments", "# only a comment\n\n\n".to_string());
    add("short", format!("{}  a\n{ha}  \n{ha} \n", &ha[..30]));
    add("long", format!("{ha}0  a\n"));
    add("nonhex", format!("{}g  a\n", &ha[..31]));
    add("reversed", format!("{ha} a\n{he} empty\n"));
    add("reversed_then_std", format!("{ha} a\n{ha}  a\n"));
    add("std_then_reversed", format!("{ha}  a\n{ha} a\n"));
    add("leadws", format!("  {ha}  a\n\t{ha}  a\n"));
    add("tabsep", format!("{ha}\ta\n{ha}\t a\n"));
    add("leadname", format!("{hlead}   lead\n{hlead} * lead\n"));
    add(
        "escaped",
        format!("\\{hbs}  back\\\\slash\n\\{hnl}  new\\nline\n\\{hcr}  cr\\rname\n"),
    );
    add(
        "escaped_tag",
        format!("\\MD5 (back\\\\slash) = {hbs}\n\\MD5 (new\\nline) = {hnl}\n"),
    );
    add(
        "badescape",
        format!("\\{ha}  a\\x\n\\{ha}  a\\\n\\{ha}  a\n"),
    );
    add("unescaped_bs", format!("{hbs}  back\\slash\n"));
    add("dashline", format!("{he}  -\n{ha}  a\n"));
    add("dash_twice", format!("{he}  -\n{he}  -\n"));
    add(
        "mixed",
        format!("{ha}  a\nMD5 (a) = {ha}\n{ha} *a\ngarbage\n{bad}  empty\n{ha}  nope\n"),
    );
    add("hash_comment", format!("#{ha}  a\n {ha}  #x\n"));
    add("nul", format!("{ha}  a\0junk\n{ha}\0 a\n"));
    add("nul_escaped", format!("\\{ha}  a\0b\n\\{ha}  a\n"));
    add(
        "nul_tag",
        format!("MD5 (a) = {ha}\0junk\nMD5 (a) = {ha}\0\r\nMD5 (a) = \0{ha}\n"),
    );
    add("crmid", format!("{ha}  a\r\r\n{ha}  a\rb\n"));
    add(
        "many",
        (0..40)
            .map(|i| {
                if i % 3 == 0 {
                    format!("{ha}  a\n")
                } else {
                    format!("{bad}  empty\n")
                }
            })
            .collect(),
    );
    add("starname", format!("{ha} **a\n"));
    add(
        "md5prefix",
        format!("MD5 a\nMD5\nMD5(\nMD5 ()\nMD5 () = {he}\n"),
    );
    for (name, body) in &checks {
        fs::write(dir.join(format!("ck-{name}")), body).unwrap();
    }
    (names, checks)
}

fn hash_cases(names: &[Vec<u8>]) -> Vec<Case> {
    let optsets: Vec<Vec<&str>> = vec![
        vec![],
        vec!["-b"],
        vec!["-t"],
        vec!["--tag"],
        vec!["-z"],
        vec!["--tag", "-z"],
        vec!["-bz"],
        vec!["--binary", "--tag"],
        vec!["-t", "--tag"],
        vec!["--bin"],
        vec!["--ta"],
        vec!["--ze", "--te"],
    ];
    let mut operand_sets: Vec<Vec<Vec<u8>>> = vec![
        vec![],
        vec![b"-".to_vec()],
        vec![b"a".to_vec()],
        vec![b"a".to_vec(), b"-".to_vec(), b"a".to_vec(), b"-".to_vec()],
        vec![b"missing".to_vec()],
        vec![b"dir".to_vec()],
        vec![
            b"a".to_vec(),
            b"missing".to_vec(),
            b"dir".to_vec(),
            b"empty".to_vec(),
            b"nope\nx".to_vec(),
        ],
        vec![b"big".to_vec(), b"edge".to_vec(), b"a".to_vec()],
        vec![b"--".to_vec(), b"-dash".to_vec(), b"-".to_vec()],
        vec![b"a".to_vec(), b"--".to_vec(), b"--tag".to_vec()],
        vec![b"".to_vec()],
        vec![
            b"missing 'quoted'".to_vec(),
            b"miss:ing".to_vec(),
            b"\xffmiss".to_vec(),
            "é-missing".as_bytes().to_vec(),
        ],
        vec![b"dir/".to_vec(), b"./a".to_vec(), b"dir/f1".to_vec()],
    ];
    operand_sets.push(names.to_vec());
    for n in names {
        operand_sets.push(vec![n.clone()]);
    }
    let mut cases = Vec::new();
    for o in &optsets {
        for ops in &operand_sets {
            let mut args: Vec<OsString> = o.iter().map(OsString::from).collect();
            args.extend(ops.iter().map(|x| os(x)));
            cases.push(Case {
                args,
                stdin: b"standard input data\n".to_vec(),
                locale: "C",
                extra: vec![],
                merged: false,
            });
        }
    }
    // Options after operands (GNU permutes), empty stdin, other locales.
    for args in [
        vec!["a", "-b"],
        vec!["a", "--tag", "empty"],
        vec!["a", "-z", "-", "-t"],
        vec!["-", "--", "-b"],
    ] {
        cases.push(Case {
            args: args.iter().map(OsString::from).collect(),
            stdin: Vec::new(),
            locale: "C",
            extra: vec![],
            merged: false,
        });
    }
    for n in names {
        for loc in ["C.UTF-8", "POSIX"] {
            let mut missing = n.clone();
            missing.extend_from_slice(b"-missing");
            cases.push(Case {
                args: vec![os(n), os(&missing)],
                stdin: Vec::new(),
                locale: loc,
                extra: vec![],
                merged: false,
            });
        }
    }
    cases
}

fn check_cases(checks: &[(String, Vec<u8>)]) -> Vec<Case> {
    let optsets: Vec<Vec<&str>> = vec![
        vec!["-c"],
        vec!["-c", "--quiet"],
        vec!["-c", "--status"],
        vec!["-c", "-w"],
        vec!["-c", "--strict"],
        vec!["-c", "--ignore-missing"],
        vec!["-c", "-w", "--strict"],
        vec!["--check", "--status", "-w"],
        vec!["-c", "-w", "--status"],
        vec!["-c", "--quiet", "--ignore-missing"],
        vec!["-c", "--warn", "--quiet"],
        vec!["--ch", "--ig", "--q", "--str"],
    ];
    let mut cases = Vec::new();
    for o in &optsets {
        for (name, body) in checks {
            let mut args: Vec<OsString> = o.iter().map(OsString::from).collect();
            args.push(format!("ck-{name}").into());
            cases.push(Case {
                args,
                stdin: b"stdin data".to_vec(),
                locale: "C",
                extra: vec![],
                merged: false,
            });
            // The same check file on standard input.
            let mut args: Vec<OsString> = o.iter().map(OsString::from).collect();
            args.push("-".into());
            cases.push(Case {
                args,
                stdin: body.clone(),
                locale: "C",
                extra: vec![],
                merged: false,
            });
        }
    }
    // Several check files at once, missing and directory check files, order of
    // results and summaries.
    for args in [
        vec!["-c", "ck-ok", "ck-mismatch", "ck-missing"],
        vec!["-c", "ck-reversed", "ck-ok"],
        vec!["-c", "ck-ok", "ck-reversed"],
        vec!["-c", "no-such-checkfile", "ck-ok"],
        vec!["-c", "dir", "ck-ok"],
        vec!["-c", "-w", "ck-malformed", "ck-allmalformed", "ck-empty"],
        vec!["-c", "--ignore-missing", "ck-onlymissing", "ck-ok"],
        vec!["-c", "-", "-"],
        vec!["-c", "ck-dashline", "-"],
    ] {
        cases.push(Case {
            args: args.iter().map(OsString::from).collect(),
            stdin: b"stdin data".to_vec(),
            locale: "C",
            extra: vec![],
            merged: false,
        });
    }
    cases
}

fn usage_cases() -> Vec<Case> {
    let sets: Vec<Vec<&str>> = vec![
        vec!["--s", "a"],
        vec!["--st=3", "a"],
        vec!["--t", "a"],
        vec!["--foo"],
        vec!["--foo=bar"],
        vec!["-x"],
        vec!["-bx"],
        vec!["-Q", "a"],
        vec!["--bin=3", "a"],
        vec!["--help=x"],
        vec!["--check=x"],
        vec!["--tag", "-t", "a"],
        vec!["-c", "-z", "x"],
        vec!["-c", "--tag", "x"],
        vec!["-c", "-b", "x"],
        vec!["-c", "-t", "x"],
        vec!["--ignore-missing", "a"],
        vec!["--status", "a"],
        vec!["-w", "a"],
        vec!["--quiet", "a"],
        vec!["--strict", "a"],
        vec!["--tag", "-t", "-c", "-z"],
        vec!["a", "--foo", "--help"],
        vec!["--", "--foo"],
        vec!["-", "-x"],
        vec!["--=x"],
    ];
    sets.into_iter()
        .map(|a| Case {
            args: a.iter().map(OsString::from).collect(),
            stdin: Vec::new(),
            locale: "C",
            extra: vec![],
            merged: false,
        })
        .collect()
}

/// Run every case on both programs; return the failures, described.
/// `out` without the lines md5x adds in check mode after md5sum's words on misformatted
/// lines, where some hold S3 multipart ETags (`hex-N  name`, which `md5x --etag`
/// writes and only `-c --etag` checks): its one addition to md5sum's messages, tested
/// in modes.rs.
fn without_etag_notes(out: &[u8]) -> Vec<u8> {
    out.split_inclusive(|&c| c == b'\n')
        .filter(|l| {
            let l = String::from_utf8_lossy(l);
            !(l.contains(" improperly formatted line") && l.ends_with(" with --etag\n"))
        })
        .flatten()
        .copied()
        .collect()
}

/// Whether `b` holds 32 hex digits followed by a NUL: a sum that md5sum 9.1 and 9.4
/// read differently (see the module's comment).
fn nul_after_sum(b: &[u8]) -> bool {
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == 0 && i >= 32 && b[i - 32..i].iter().all(u8::is_ascii_hexdigit))
}

fn compare(gnu: &Path, dir: &Path, cases: &[Case]) -> Vec<String> {
    let (fails, left_out) = compare_counting(gnu, dir, cases);
    left_out.report(cases.len());
    fails
}

/// Cases that `compare` left out, as this md5sum's release does them otherwise than
/// md5x's (see `Flavour`).
#[derive(Default)]
struct LeftOut {
    /// A list holds a NUL after a sum (`Flavour::old_check`).
    nul: usize,
    /// A name is quoted a second time (`Flavour::requotes`).
    requote: usize,
}

impl LeftOut {
    fn add(&mut self, o: LeftOut) {
        self.nul += o.nul;
        self.requote += o.requote;
    }

    /// Say what was left out of `cases` cases, past the harness's capture, so that a
    /// passing run says it too.
    fn report(&self, cases: usize) {
        let mut err = std::io::stderr();
        if self.nul > 0 {
            let _ = writeln!(
                err,
                "NOT COMPARED: {} of {cases} cases, whose lists hold a NUL after a sum, which \
                 this md5sum (9.1) reads unlike 9.4 and md5x \
                 (a_nul_after_a_sum_reads_as_in_9_4 checks them)",
                self.nul
            );
        }
        if self.requote > 0 {
            let _ = writeln!(
                err,
                "NOT COMPARED: {} of {cases} cases, with a name holding a ' and ending in an \
                 escape, which this md5sum (9.1 or 9.4) quotes unlike 9.7 and md5x \
                 (quoted_as_in_9_7 checks some)",
                self.requote
            );
        }
    }
}

/// `compare`, which leaves the report of the cases left out to its caller.
fn compare_counting(gnu: &Path, dir: &Path, cases: &[Case]) -> (Vec<String>, LeftOut) {
    let mut fails = Vec::new();
    let f = flavour(gnu).expect("md5sum_path checked it");
    let mut left_out = LeftOut::default();
    for c in cases {
        // In check mode, whether a list (a file named, or standard input) holds what
        // `p` looks for. The files are read only against a release that differs.
        let in_check = (f.old_check || f.requotes) && checks(c);
        let files: Vec<Vec<u8>> = if in_check {
            let read = |a: &OsString| fs::read(dir.join(a)).ok();
            c.args.iter().filter_map(read).collect()
        } else {
            Vec::new()
        };
        let in_lists =
            |p: fn(&[u8]) -> bool| in_check && (p(&c.stdin) || files.iter().any(|l| p(l)));
        if f.old_check && in_lists(nul_after_sum) {
            left_out.nul += 1;
            continue;
        }
        if f.requotes
            && (c.args.iter().any(|a| requoted(a.as_bytes())) || in_lists(requoted_in_list))
        {
            left_out.requote += 1;
            continue;
        }
        let mut g = run(gnu, dir, c, &[]);
        if f.old_check {
            g.stdout = escaped_status_names(&g.stdout);
        }
        let mut m = run(Path::new(MD5X), dir, c, &c.extra);
        m.stdout = without_etag_notes(&m.stdout);
        m.stderr = without_etag_notes(&m.stderr);
        if g.stdout != m.stdout || g.stderr != m.stderr || g.code != m.code {
            fails.push(format!(
                "args {:?} extra {:?} locale {} stdin {}{}\n  md5sum: rc {:?}\n    out {}\n    err {}\n  md5x:   rc {:?}\n    out {}\n    err {}",
                c.args,
                c.extra,
                c.locale,
                show(&c.stdin),
                if c.merged { " (stdout+stderr merged)" } else { "" },
                g.code,
                show(&g.stdout),
                show(&g.stderr),
                m.code,
                show(&m.stdout),
                show(&m.stderr)
            ));
        }
    }
    (fails, left_out)
}

#[test]
fn md5x_matches_gnu_md5sum_byte_for_byte() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU coreutils md5sum 9.x not found (set MD5SUM=path); compatibility NOT checked");
        return;
    };
    let tmp = TempDir::new("compat");
    let dir = &tmp.0;
    let (names, checks) = setup(&gnu, dir);

    let mut cases = hash_cases(&names);
    cases.extend(check_cases(&checks));
    cases.extend(usage_cases());
    // Every case again with one worker thread and with many (md5x only): output must
    // not depend on how the work is scheduled. And a sample with stdout and stderr in
    // one file, to check their interleaving.
    let base = cases.len();
    let mut more = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if i % 3 == 0 && !c.args.iter().any(|a| a == "--") {
            let mut j1 = c.clone();
            j1.extra = vec!["-j1"];
            more.push(j1);
            let mut j4 = c.clone();
            j4.extra = vec!["--jobs=4"];
            more.push(j4);
        }
        if i % 2 == 0 {
            let mut mg = c.clone();
            mg.merged = true;
            more.push(mg);
        }
    }
    cases.extend(more);
    let fails = compare(&gnu, dir, &cases);
    eprintln!(
        "compat: {} cases ({} distinct argv/stdin combinations), {} differ",
        cases.len(),
        base,
        fails.len()
    );
    if std::env::var_os("COMPAT_BRIEF").is_some() {
        for f in &fails {
            eprintln!("{}", f.lines().next().unwrap_or(""));
        }
    }
    for f in fails.iter().take(25) {
        eprintln!("{f}\n");
    }
    assert!(
        fails.is_empty(),
        "{} of {} cases differ from GNU md5sum",
        fails.len(),
        cases.len()
    );
}

/// Run bash `script` in `dir` with `$0` = `prog` and `$1`... = `args`, in the C locale.
/// A NUL right after a line's sum, as md5sum 9.4 reads it (its output, seen on Ubuntu
/// 24.04's coreutils 9.4, 2026-11-26): it ends an untagged line's sum and stands for the
/// blank after it; after a tagged line's sum it makes the line invalid. The comparison
/// leaves such lists out against a 9.1 (which reads both the other way), so this checks
/// them everywhere; against a 9.4 the comparison covers them too.
#[test]
fn a_nul_after_a_sum_reads_as_in_9_4() {
    let tmp = TempDir::new("nul-after-sum");
    let dir = &tmp.0;
    fs::write(dir.join("a"), b"x").unwrap();
    let ha = "9dd4e461268c8034f5c8564e155c67a6"; // md5("x")
    let cases: [(String, &[u8], &[u8], i32); 2] = [
        (
            format!("{ha}  a\0junk\n{ha}\0 a\n"),
            b"a: OK\na: OK\n",
            b"",
            0,
        ),
        (
            format!("MD5 (a) = {ha}\0junk\nMD5 (a) = {ha}\0\r\nMD5 (a) = \0{ha}\n"),
            b"",
            b"md5sum: ck: no properly formatted checksum lines found\n",
            1,
        ),
    ];
    for (list, out, err, code) in cases {
        fs::write(dir.join("ck"), &list).unwrap();
        let c = Case {
            args: vec!["-c".into(), "ck".into()],
            stdin: Vec::new(),
            locale: "C",
            extra: Vec::new(),
            merged: false,
        };
        let m = run(Path::new(MD5X), dir, &c, &[]);
        let got = (show(&m.stdout), show(&m.stderr), m.code);
        assert_eq!(
            got,
            (show(out), show(err), Some(code)),
            "list {}",
            show(list.as_bytes())
        );
    }
}

/// Names holding a `'` and ending in an escaped character, quoted as md5sum 9.7 quotes
/// them (its messages, seen on Debian 13's coreutils 9.7, 2026-11-26). The comparison
/// leaves such names out against a 9.1 or 9.4, which quote them another way
/// (`Flavour::requotes`), so this checks some of them everywhere.
#[test]
fn quoted_as_in_9_7() {
    let tmp = TempDir::new("quoted");
    let names: [&[u8]; 5] = [
        b"it's\r",
        b"\x01'\x01",
        "é'\r".as_bytes(),
        b"\r'a\r",
        b"a'\rb'",
    ];
    let seen = |e: &str| format!("md5sum: {e}: No such file or directory\n");
    for (locale, e_acute) in [
        ("C", r"''$'\303\251'\'''$'\r'"),
        ("C.UTF-8", r"'é'\'''$'\r'"),
    ] {
        let want: String = [
            r"'it'\''s'$'\r'",
            r"''$'\001'\'''$'\001'",
            e_acute,
            r"''$'\r'\''a'$'\r'",
            r"'a'\'''$'\r''b'\'''",
        ]
        .map(seen)
        .concat();
        let c = Case {
            args: names.iter().map(|n| os(n)).collect(),
            stdin: Vec::new(),
            locale,
            extra: Vec::new(),
            merged: false,
        };
        let m = run(Path::new(MD5X), &tmp.0, &c, &[]);
        assert_eq!(
            (show(&m.stderr), m.code),
            (show(want.as_bytes()), Some(1)),
            "{locale}"
        );
    }
}

fn bash(dir: &Path, prog: &Path, script: &str, args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(prog)
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .unwrap()
}

/// Each bash script run once with md5sum as `$0` and once with md5x, in `dir`: same
/// exit status, stdout and stderr, or the differences in the panic.
fn assert_scripts_match(gnu: &Path, dir: &Path, scripts: &[&str]) {
    let mut fails = Vec::new();
    for s in scripts {
        let g = bash(dir, gnu, s, &[]);
        let m = bash(dir, Path::new(MD5X), s, &[]);
        fails.extend(differs(s, &g, &m));
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// How `m` (md5x) differs from `g` (md5sum) in exit status, stdout or stderr, as a
/// report line under `what`; `None` if it does not.
fn differs(what: &str, g: &std::process::Output, m: &std::process::Output) -> Option<String> {
    let same = g.stdout == m.stdout && g.stderr == m.stderr && g.status.code() == m.status.code();
    (!same).then(|| {
        format!(
            "{what}\n  md5sum: {:?} {} {}\n  md5x:   {:?} {} {}",
            g.status.code(),
            show(&g.stdout),
            show(&g.stderr),
            m.status.code(),
            show(&m.stdout),
            show(&m.stderr)
        )
    })
}

/// Standard input in its other forms: closed, open only for writing, a directory, a
/// file; standard output closed, open only for reading, full. (Rust's own stdin and
/// stdout take EBADF for an empty input and a sink: md5x once hashed a write-only
/// stdin as empty, verified `-` against that, and lost its output silently.) Then a
/// limit of 4 open files, which leaves md5sum and md5x one.
#[test]
fn stdin_forms_match() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("stdin");
    let dir = &tmp.0;
    fs::write(dir.join("a"), b"hello\n").unwrap();
    let scripts = [
        "exec -a md5sum \"$0\" <&-",
        "exec -a md5sum \"$0\" - a <&-",
        "exec -a md5sum \"$0\" -c <&-",
        // The names of a descriptor closed at start-up find no file (md5x puts
        // /dev/null in the slot, and hashed it under those names).
        "ln -sf /dev/stdin in; exec -a md5sum \"$0\" /dev/stdin a /dev/fd/0 /proc/self/fd/0 /proc/thread-self/fd/0 in <&-",
        "exec -a md5sum \"$0\" -c /dev/stdin <&-",
        "printf 'd41d8cd98f00b204e9800998ecf8427e  /dev/stdin\\n' > l0; exec -a md5sum \"$0\" -c l0 <&-",
        "exec -a md5sum \"$0\" --ignore-missing -c l0 <&-",
        "exec -a md5sum \"$0\" /dev/stdout a >&-",
        "exec -a md5sum \"$0\" a /proc/self/fd/2 2>&-",
        "exec -a md5sum \"$0\" /proc/self/fdinfo/0 /dev/stdin/x /dev/fd/0/.. a <&-",
        "printf 'd41d8cd98f00b204e9800998ecf8427e  /dev/fd/2/x\\nb1946ac92492d2347c6235b4d2611184  a\\n' > l2; \
         exec -a md5sum \"$0\" -c --ignore-missing l2 2>&-",
        // Descriptors the caller did not give: md5x's own are not found either (it
        // holds files open for its lanes), those it was given are. (What the harness
        // left open above 2 is closed first.)
        "for n in {3..20}; do eval \"exec $n<&-\"; done; \
         exec -a md5sum \"$0\" a /dev/fd/3 /dev/fd/4 /proc/self/fd/5 /proc/self/fdinfo/6 a",
        "for n in {3..20}; do eval \"exec $n<&-\"; done; \
         exec 3<a; exec -a md5sum \"$0\" /dev/fd/3 a /dev/fd/4",
        "for n in {3..20}; do eval \"exec $n<&-\"; done; \
         cat a | exec -a md5sum \"$0\" - /dev/fd/0 /dev/fd/3",
        // md5sum holds its checksum list open while it verifies it: a listed
        // /dev/fd/3 reads the list (whose sum is not this one), and a name through
        // it is not a directory.
        "for n in {3..20}; do eval \"exec $n<&-\"; done; \
         printf 'b1946ac92492d2347c6235b4d2611184  /dev/fd/3\\nb1946ac92492d2347c6235b4d2611184  /dev/fd/3/x\\n' > l3; \
         exec -a md5sum \"$0\" -c l3",
        "exec -a md5sum \"$0\" < .",
        "exec -a md5sum \"$0\" - - < a",
        "exec -a md5sum \"$0\" a >&-",
        "exec -a md5sum \"$0\" nope >&-",
        "exec -a md5sum \"$0\" a nope a >&-",
        "exec -a md5sum \"$0\" -c - < a",
        "exec -a md5sum \"$0\" a > /dev/full",
        // With -z no newline flushes the line, and md5sum names the error the close
        // meets (md5x said just "write error").
        "exec -a md5sum \"$0\" -z a > /dev/full",
        "exec -a md5sum \"$0\" -z --tag a nope a > /dev/full",
        "exec -a md5sum \"$0\" -z a 1<a",
        // A message flushes stdout: with nothing written after it, the close at the
        // end does not fail again, and the error is not named.
        "exec -a md5sum \"$0\" -z a nope 1<a",
        "exec -a md5sum \"$0\" -z a nope > /dev/full",
        "exec -a md5sum \"$0\" -z a nope a 1<a",
        // A closed stdin read, then a failing stdout: both said, in that order.
        "exec -a md5sum \"$0\" - a <&- >&-",
        "exec -a md5sum \"$0\" - a <&- > /dev/full",
        "exec -a md5sum \"$0\" a - <&- 1<a",
        // A warning that cannot be written makes the exit status 1 (md5sum's close of
        // stderr fails); with nothing to say, it does not.
        "printf 'b1946ac92492d2347c6235b4d2611184  a\\ngarbage\\n' > lg; exec -a md5sum \"$0\" -c lg 2>&-",
        "printf 'b1946ac92492d2347c6235b4d2611184  a\\ngarbage\\n' > lg; exec -a md5sum \"$0\" -c --quiet lg 2> /dev/full",
        "printf 'b1946ac92492d2347c6235b4d2611184  a\\ngarbage\\n' > lg; exec -a md5sum \"$0\" -c -w lg 2<a",
        "printf 'b1946ac92492d2347c6235b4d2611184  a\\ngarbage\\n' > lg; exec -a md5sum \"$0\" -c --status lg 2>&-",
        "exec -a md5sum \"$0\" a 2>&-",
        "exec -a md5sum \"$0\" -z a >&-",
        "trap '' PIPE; exec -a md5sum \"$0\" -z $(printf 'a %.0s' {1..3000}) | head -c 10",
        "exec -a md5sum \"$0\" 0>wo",
        "exec -a md5sum \"$0\" a - 0>wo",
        "exec -a md5sum \"$0\" -c 0>wo",
        "printf 'd41d8cd98f00b204e9800998ecf8427e  -\\n' > e0; exec -a md5sum \"$0\" -c e0 0>wo",
        "exec -a md5sum \"$0\" a 1<a",
        "exec -a md5sum \"$0\" a nope 1<a",
        "printf 'b1946ac92492d2347c6235b4d2611184  a\\n' > s1; exec -a md5sum \"$0\" -c s1 1<a",
        "exec -a md5sum \"$0\" --help 1<a",
        // Found so without holding a descriptor: md5sum needs one beyond 0-2 here.
        "exec < a; ulimit -n 4; exec -a md5sum \"$0\" a -",
        // A check stream is verified as it comes: its second line is written only
        // once the FIFO its first line names has been read (md5x once read the whole
        // list first, and hung here).
        "rm -f ff; mkfifo ff; { echo '401b30e3b8b5d629635a5c613cdb7919  ff'; timeout 20 sh -c 'echo x > ff'; \
         echo 'b1946ac92492d2347c6235b4d2611184  a'; } | timeout 20 \"$0\" -c",
        // --help and --version report a failed write too.
        "exec -a md5sum \"$0\" --help >&-",
        "exec -a md5sum \"$0\" --version >&-",
        "exec -a md5sum \"$0\" --help > /dev/full",
        "exec -a md5sum \"$0\" --version > /dev/full",
    ];
    assert_scripts_match(&gnu, dir, &scripts);
}

/// A standard input that fails partway (EIO after some bytes, as a disk with a bad
/// sector fails), in hash and check mode: `tests/shims/failing_stdin.py` makes it out
/// of the helper's own memory, so that md5sum, whose reads md5x's preloaded shim cannot
/// reach (`read_errors.rs`), meets it too. A check list's last line cut short by the
/// failure is still verified, as md5sum's getline gives it (md5x once dropped it), and
/// only then comes "read error".
#[cfg(target_os = "linux")]
#[test]
fn a_failing_stdin_reads_as_in_md5sum() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no python3 to run tests/shims/failing_stdin.py");
        return;
    }
    let tmp = TempDir::new("failing-stdin");
    let dir = &tmp.0;
    fs::write(dir.join("a"), b"hello\n").unwrap();
    let line = "b1946ac92492d2347c6235b4d2611184  a\n";
    let lists: [(&str, String); 9] = [
        // Cut at a line's end, and before anything.
        ("whole", line.repeat(3)),
        ("empty", String::new()),
        // The last line's newline lost: its file checked.
        ("nonl", line.repeat(100) + line.trim_end()),
        // Its name cut short (of `abc`, say): another file, missing.
        (
            "name",
            line.repeat(3) + "b1946ac92492d2347c6235b4d2611184  ab",
        ),
        // Its sum cut short: improperly formatted.
        ("sum", line.repeat(3) + "b1946ac92492d"),
        (
            "tag",
            "MD5 (a) = b1946ac92492d2347c6235b4d2611184\n".repeat(2) + "MD5 (a) = b19",
        ),
        // Mismatches and a misformatted line before it: no summary follows the error.
        (
            "bad",
            "00000000000000000000000000000000  a\nnot a line\n".to_string() + line.trim_end(),
        ),
        // More than one read's worth (md5x reads 64 KiB at a time, md5sum 4 KiB).
        ("long", line.repeat(3000) + "b1946ac92492d2347c6235b4d21"),
        (
            "missing",
            line.to_string() + "b1946ac92492d2347c6235b4d2611184  nope",
        ),
    ];
    for (name, text) in &lists {
        fs::write(dir.join(format!("l_{name}")), text).unwrap();
    }
    let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(dir.join("bytes"), bytes).unwrap();
    let helper = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/shims/failing_stdin.py"
    );
    let mut scripts = Vec::new();
    for (name, _) in &lists {
        for opts in [
            "-c",
            "-c -w",
            "-c --strict",
            "-c --quiet",
            "-c --status",
            "-c --ignore-missing",
        ] {
            scripts.push(format!("python3 \"$1\" l_{name} md5sum \"$0\" {opts}"));
        }
    }
    scripts.push("python3 \"$1\" l_nonl md5sum \"$0\" -c -".to_string());
    // A list (a file) that names standard input, which fails.
    let dash = "d41d8cd98f00b204e9800998ecf8427e  -\n".to_string() + line;
    fs::write(dir.join("dash"), dash).unwrap();
    for opts in ["-c", "-c --quiet", "-c --status", "-c --ignore-missing"] {
        scripts.push(format!("python3 \"$1\" bytes md5sum \"$0\" {opts} dash"));
    }
    for data in ["bytes", "l_empty"] {
        for args in ["", "-", "- a", "a -", "--tag -", "-z -", "a - a"] {
            scripts.push(format!("python3 \"$1\" {data} md5sum \"$0\" {args}"));
        }
    }
    let mut fails = Vec::new();
    for s in &scripts {
        let g = bash(dir, &gnu, s, &[helper]);
        let said = String::from_utf8_lossy(&g.stderr);
        assert!(
            said.contains("read error") || said.contains("Input/output error"),
            "md5sum met no failing read: {s}\n{said}"
        );
        let m = bash(dir, Path::new(MD5X), s, &[helper]);
        fails.extend(differs(s, &g, &m));
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// With `POSIXLY_CORRECT` set, options end at the first operand, as in md5sum: what
/// follows is read as file names (the other cases run without it).
#[test]
fn posixly_correct_ends_options_at_the_first_operand() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("posix");
    let dir = &tmp.0;
    fs::write(dir.join("a"), b"hello\n").unwrap();
    fs::write(dir.join("s1"), b"b1946ac92492d2347c6235b4d2611184  a\n").unwrap();
    let scripts = [
        "POSIXLY_CORRECT=1 exec -a md5sum \"$0\" a --tag",
        "POSIXLY_CORRECT=1 exec -a md5sum \"$0\" --tag a -b",
        "POSIXLY_CORRECT=1 exec -a md5sum \"$0\" a -- a",
        "POSIXLY_CORRECT=1 exec -a md5sum \"$0\" -c s1 --quiet",
        "POSIXLY_CORRECT= exec -a md5sum \"$0\" -z a -c",
        // Unset, options still come after operands.
        "exec -a md5sum \"$0\" a --tag",
    ];
    assert_scripts_match(&gnu, dir, &scripts);
}

/// Operands that name one pipe (`/dev/stdin`, `/dev/fd/0`, `-`) are read in turn, the
/// first to its end, as md5sum reads them, also when worker threads read the other
/// files ahead: a worker that opens a pipe leaves it to be read in operand order.
#[test]
fn one_pipe_named_twice_is_read_in_turn() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("pipe-twice");
    let dir = &tmp.0;
    // Big enough that two readers side by side would each get part of it.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let big: Vec<u8> = (0..3_000_000).map(|_| rng.next() as u8).collect();
    fs::write(dir.join("big"), &big).unwrap();
    fs::write(dir.join("small"), b"hello\n").unwrap();
    let want_big = Command::new(&gnu)
        .arg("big")
        .current_dir(dir)
        .output()
        .unwrap()
        .stdout;
    let mut sums = want_big[..32].to_vec();
    sums.extend_from_slice(b"  /dev/stdin\nd41d8cd98f00b204e9800998ecf8427e  /dev/fd/0\n");
    sums.extend_from_slice(b"b1946ac92492d2347c6235b4d2611184  small\n");
    fs::write(dir.join("sums"), &sums).unwrap();
    let sh = |prog: &Path, jobs: &str, script: &str| bash(dir, prog, script, &[jobs]);
    let scripts = [
        "cat big | exec -a md5sum \"$0\" $1 /dev/stdin small /dev/stdin /dev/fd/0 - small",
        "cat big | exec -a md5sum \"$0\" $1 small /dev/fd/0 small /dev/stdin",
        "cat big | exec -a md5sum \"$0\" $1 -c sums",
    ];
    let mut fails = Vec::new();
    for s in scripts {
        let g = sh(&gnu, "", s);
        assert_eq!(g.status.code(), Some(0), "md5sum: {s}");
        for jobs in ["-j1", "-j2", "-j4"] {
            // Several runs: a race would show in some of them.
            for _ in 0..3 {
                let m = sh(Path::new(MD5X), jobs, s);
                fails.extend(differs(&format!("{s} ({jobs})"), &g, &m));
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// A named pipe (FIFO) named twice takes a writer each time, as md5sum opens it only
/// once the earlier operand has ended: md5x's workers once opened it twice at once,
/// both opens took the first writer, and the second operand hashed as empty while the
/// next writer waited for a reader forever. (The writer's pause lets each reader close
/// before it opens again; without it md5sum's result would depend on timing too.)
#[test]
fn one_fifo_named_twice_takes_its_next_writer() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("fifo-twice");
    let dir = &tmp.0;
    fs::write(dir.join("small"), b"hello\n").unwrap();
    fs::write(
        dir.join("sums"),
        "5d41402abc4b2a76b9719d911017c592  p\n7d793037a0760186574b0282f2f435e7  p\n",
    )
    .unwrap();
    let writer =
        "rm -f p; mkfifo p; timeout 20 sh -c 'printf hello > p; sleep 1; printf world > p' \
                  >/dev/null 2>&1 &";
    let scripts = [
        format!("{writer} exec -a md5sum \"$0\" $1 p small p"),
        format!("{writer} exec -a md5sum \"$0\" $1 p p small"),
        format!("{writer} exec -a md5sum \"$0\" $1 -c sums"),
    ];
    let mut fails = Vec::new();
    for s in &scripts {
        let g = bash(dir, &gnu, s, &[""]);
        assert_eq!(g.status.code(), Some(0), "md5sum: {s}");
        for jobs in ["-j1", "-j2", "-j4"] {
            let m = bash(dir, Path::new(MD5X), s, &[jobs]);
            fails.extend(differs(&format!("{s} ({jobs})"), &g, &m));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// The lines of the files before a named pipe are out before md5x waits for its
/// writer, as md5sum prints each line before it opens the next file: a script that
/// writes the pipe only once it has seen those lines waits for them. md5x's workers
/// opened the pipe in the same batch as the files before it, and sent their lines only
/// once the pipe had a writer (the script below then gives up after 10 s with fewer
/// lines); a file named twice held the lines before its second open in the output
/// buffer. Each script waits for as many lines as md5sum has printed by then, with
/// 1,100 files before the pipe too (batches cut by count, not by bytes).
#[test]
fn lines_before_a_named_pipe_are_out_before_its_writer_comes() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("fifo-lines");
    let dir = &tmp.0;
    fs::write(dir.join("small"), b"hello\n").unwrap();
    fs::create_dir(dir.join("many")).unwrap();
    let many: Vec<String> = (0..1100).map(|i| format!("many/f{i:04}")).collect();
    for (i, name) in many.iter().enumerate() {
        fs::write(dir.join(name), format!("{i}\n")).unwrap();
    }
    // `$2`: the lines to wait for before writing the second time; the rest: operands.
    let script = "rm -f p1 p2 out; mkfifo p1 p2
        jobs=$1 n=$2; shift 2
        exec -a md5sum \"$0\" $jobs \"$@\" > out &
        timeout 10 sh -c 'printf a > p1'
        i=0; until [ \"$(wc -l < out)\" -ge $n ] || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
        echo \"lines before the second writer: $(wc -l < out)\"
        if [ \"${@: -1}\" = p1 ]; then last=p1; else last=p2; fi
        timeout 10 sh -c \"printf b > $last\"
        wait $!; echo \"status $?\"; cat out";
    let cases: Vec<Vec<String>> = vec![
        vec!["2".into(), "small".into(), "p1".into(), "p2".into()],
        vec!["1".into(), "p1".into(), "p2".into()],
        vec!["2".into(), "p1".into(), "small".into(), "p2".into()],
        vec!["2".into(), "small".into(), "p1".into(), "p1".into()],
        [
            vec!["1102".into()],
            many,
            vec!["p1".into(), "small".into(), "p2".into()],
        ]
        .concat(),
    ];
    // A worker opens a named pipe without waiting for its writer, and the printing
    // thread then waits for one: a writer that comes and goes without a byte, one that
    // writes and leaves before the pipe's turn, and pipes whose writer has left.
    let waits = [
        "rm -f q; mkfifo q; (sleep 0.3; timeout 10 sh -c \": > q\") & timeout 10 \"$0\" $1 small q; echo $?; wait",
        "rm -f q; mkfifo q; (sleep 0.3; timeout 10 sh -c \"echo data > q\") & timeout 10 \"$0\" $1 many/f0001 q; echo $?; wait",
        "true | (sleep 0.3; timeout 10 \"$0\" $1 small /dev/stdin /dev/fd/0; echo $?)",
        "echo hi | (sleep 0.3; timeout 10 \"$0\" $1 small /dev/stdin; echo $?)",
    ];
    let mut fails = Vec::new();
    for s in waits {
        let g = bash(dir, &gnu, s, &["--"]);
        for jobs in ["-j1", "-j2", "-j4"] {
            let m = bash(dir, Path::new(MD5X), s, &[jobs]);
            fails.extend(differs(&format!("{s} ({jobs})"), &g, &m));
        }
    }
    for args in &cases {
        let what = format!(
            "{} ... {}",
            &args[..2].join(" "),
            args[args.len() - 2..].join(" ")
        );
        let run = |prog: &Path, jobs: &str| {
            let mut a: Vec<&str> = vec![jobs];
            a.extend(args.iter().map(String::as_str));
            bash(dir, prog, script, &a)
        };
        let g = run(&gnu, "--");
        assert_eq!(g.status.code(), Some(0), "md5sum: {what}");
        for jobs in ["-j1", "-j2", "-j4"] {
            let m = run(Path::new(MD5X), jobs);
            fails.extend(differs(&format!("{what} ({jobs})"), &g, &m));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// An operand after a stream (`-`, a named pipe) is read once that stream has ended, as
/// md5sum reads it: in a pipeline like `tee f | md5sum - f`, what writes the stream
/// writes the file too. Worker threads read files ahead of the printing thread; md5x
/// once hashed `f` half written. The writers below change or create a file only after
/// a pause, well after workers would have read it ahead (the pause makes the old bug
/// show; the right result does not depend on it).
#[test]
fn operands_after_a_stream_are_read_after_it_ends() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("after-stream");
    let dir = &tmp.0;
    let big: Vec<u8> = (0..2_000_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    fs::write(dir.join("big"), &big).unwrap();
    fs::write(dir.join("small"), b"hello\n").unwrap();
    let big_hex = md5sum_hex(&gnu, dir, b"big");
    let mut twice = big.clone();
    twice.extend_from_slice(&big);
    fs::write(dir.join("twice"), &twice).unwrap();
    let twice_hex = md5sum_hex(&gnu, dir, b"twice");
    fs::write(
        dir.join("sums"),
        format!("{twice_hex}  -\n{twice_hex}  t.out\n{big_hex}  big\n"),
    )
    .unwrap();
    let sh = |prog: &Path, jobs: &str, script: &str| bash(dir, prog, script, &[jobs]);
    let scripts = [
        "echo old > f2; { cat small; sleep 0.3; echo new > f2; } | exec -a md5sum \"$0\" $1 - f2 big small",
        "rm -f late; { cat small; sleep 0.3; echo new > late; } | exec -a md5sum \"$0\" $1 - late small",
        "rm -f t.out; cat big big | tee t.out | exec -a md5sum \"$0\" $1 - t.out small",
        "rm -f t.out; cat big big | tee t.out | exec -a md5sum \"$0\" $1 -c sums",
        "rm -f ff; mkfifo ff; echo old > f2; ({ cat small; sleep 0.3; echo new > f2; } > ff &); \
         exec -a md5sum \"$0\" $1 small ff f2 big",
    ];
    let mut fails = Vec::new();
    for s in scripts {
        let g = sh(&gnu, "", s);
        for jobs in ["-j1", "-j2", "-j4"] {
            let m = sh(Path::new(MD5X), jobs, s);
            fails.extend(differs(&format!("{s} ({jobs})"), &g, &m));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// Hundreds of operands, hashed in batches of small files (up to one set of the lanes,
/// 48 with AVX-512) beside big files streamed, with missing files and a directory
/// among them: every line in operand order and every message as md5sum's, with one
/// worker, two and the default, and on every lane backend this CPU runs (each has its
/// own batch size).
#[test]
fn many_operands_in_batches_keep_their_order() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("batches");
    let dir = &tmp.0;
    // Sizes around MD5's padding and the 256 KiB line between batched and streamed.
    let sizes = [
        0, 1, 55, 56, 64, 119, 1000, 8192, 65536, 262_143, 262_144, 262_145,
    ];
    let names = operands(
        dir,
        300,
        &[17, 48, 49, 150],
        96,
        0x5eed_0ba7,
        |rng| match rng.below(3) {
            0 => rng.pick(&sizes),
            _ => rng.below(20_000),
        },
    );
    let fails = compare(&gnu, dir, &on_every_backend(&[names]));
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// `count` operands `f000`, `f001`, ... in `dir`: files of random bytes, their lengths
/// drawn by `len`, except those numbered in `missing` (named, never written) and the
/// one numbered `directory` (a directory).
fn operands(
    dir: &Path,
    count: usize,
    missing: &[usize],
    directory: usize,
    seed: u64,
    mut len: impl FnMut(&mut Rng) -> usize,
) -> Vec<OsString> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|i| {
            let name = format!("f{i:03}");
            if i == directory {
                fs::create_dir(dir.join(&name)).unwrap();
            } else if !missing.contains(&i) {
                let n = len(&mut rng);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                fs::write(dir.join(&name), bytes).unwrap();
            }
            name.into()
        })
        .collect()
}

/// Each command line of `arg_sets` with one worker, two and eight, on every backend md5x
/// runs on this CPU (each has its own lane count, so its own batches and rounds),
/// saying which backends it cannot run.
fn on_every_backend(arg_sets: &[Vec<OsString>]) -> Vec<Case> {
    let backends = ["portable", "sse2", "avx2", "avx512"]
        .into_iter()
        .filter(|b| {
            let ok = Command::new(MD5X)
                .args(["--backend", b, "/dev/null"])
                .output()
                .is_ok_and(|o| o.status.success());
            if !ok {
                eprintln!("backend {b} not run here: this CPU lacks it");
            }
            ok
        });
    let mut cases = Vec::new();
    for b in backends {
        for jobs in ["-j1", "-j2", "--jobs=8"] {
            for args in arg_sets {
                cases.push(Case {
                    args: args.clone(),
                    stdin: Vec::new(),
                    locale: "C",
                    extra: vec![jobs, "--backend", b],
                    merged: false,
                });
            }
        }
    }
    cases
}

/// Files over the 256 KiB line, which workers hash side by side a chunk of each at a
/// time, among small files, missing ones and a directory: sizes just past the line,
/// at and past multiples of the chunk, and up to a few MiB, so files end in different
/// rounds. Output, messages and exit code as md5sum's, hashing and checking (with one
/// line that fails), with one worker, two and eight, on every backend this CPU runs.
#[test]
fn many_large_files_side_by_side_keep_their_order() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let tmp = TempDir::new("large");
    let dir = &tmp.0;
    let sizes = [
        262_145,
        300_000,
        524_288,
        524_289,
        786_431,
        (1 << 20) + 7,
        3 << 20,
    ];
    let names = operands(dir, 90, &[5, 60], 33, 0x1a56_e5f1, |rng| {
        match rng.below(4) {
            0 => rng.below(5000),
            1 => rng.pick(&sizes),
            _ => 262_145 + rng.below(1_500_000),
        }
    });
    // A check list from md5sum itself, with one digest made wrong.
    let present: Vec<&OsString> = names.iter().filter(|n| dir.join(n).is_file()).collect();
    let listed = Command::new(&gnu)
        .args(&present)
        .current_dir(dir)
        .output()
        .unwrap();
    let mut list = listed.stdout;
    list[0] = if list[0] == b'0' { b'1' } else { b'0' };
    fs::write(dir.join("list"), list).unwrap();
    let check = vec!["-c".into(), "list".into()];
    let fails = compare(&gnu, dir, &on_every_backend(&[names, check]));
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// xorshift64*: a small seeded generator, so a failing random case can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A random test's seed (`COMPAT_SEED`, else `default_seed`) and its number of cases
/// (the variable `count_var`, else `default_count`).
fn draw(default_seed: u64, count_var: &str, default_count: usize) -> (u64, usize) {
    let num = |var: &str| std::env::var(var).ok().and_then(|s| s.parse::<u64>().ok());
    let seed = num("COMPAT_SEED").unwrap_or(default_seed);
    let count = num(count_var).map_or(default_count, |n| n as usize);
    (seed, count)
}

/// Report a random test's differences (the first ten in full) and fail if any.
fn require_none(what: &str, seed: u64, cases: usize, fails: &[String]) {
    eprintln!(
        "{what}: {cases} cases (COMPAT_SEED={seed}), {} differ",
        fails.len()
    );
    for f in fails.iter().take(10) {
        eprintln!("{f}\n");
    }
    assert!(
        fails.is_empty(),
        "{what}: {} of {cases} cases differ from GNU md5sum (replay: COMPAT_SEED={seed})",
        fails.len()
    );
}

/// One random checksum line, built from the pieces md5sum's parser looks at (leading
/// blanks, the `\` escape mark, sums of every length and case, separators, `MD5 (..) =`,
/// escaped and odd names, CR, NUL, `#`), then sometimes mutated byte by byte. It never
/// holds md5x's own tags (`MD5-P4`, `ETAG`), which md5sum would reject.
fn random_check_line(rng: &mut Rng, files: &[(Vec<u8>, String)]) -> Vec<u8> {
    let (name, hex) = files[rng.below(files.len())].clone();
    let bad = "0123456789abcdef0123456789abcdef".to_string();
    let sum = match rng.below(10) {
        0..=4 => hex.clone(),
        5 => hex.to_uppercase(),
        6 => bad,
        7 => hex[..rng.below(32)].to_string(),
        8 => format!("{hex}{}", rng.pick(&["0", "g", " ", "-2", "\"", ")"])),
        _ => format!("{}g{}", &hex[..10], &hex[11..]),
    };
    let escaped_name = |n: &[u8]| -> Vec<u8> {
        let mut o = Vec::new();
        for &c in n {
            match c {
                b'\\' => o.extend_from_slice(b"\\\\"),
                b'\n' => o.extend_from_slice(b"\\n"),
                b'\r' => o.extend_from_slice(b"\\r"),
                c => o.push(c),
            }
        }
        o
    };
    let escape = rng.chance(30);
    let name = if escape && rng.chance(80) {
        escaped_name(&name)
    } else {
        name
    };
    let mut line = Vec::new();
    let lead: [&[u8]; 6] = [b"", b"", b"", b" ", b"\t", b"  "];
    line.extend_from_slice(rng.pick(&lead));
    if escape {
        line.push(b'\\');
    }
    match rng.below(10) {
        0..=5 => {
            line.extend_from_slice(sum.as_bytes());
            let seps: [&[u8]; 10] = [
                b"  ", b"  ", b" *", b" *", b" ", b"\t", b" \t", b"*", b"   ", b" **",
            ];
            let sep = rng.pick(&seps);
            line.extend_from_slice(sep);
            line.extend_from_slice(&name);
        }
        6..=8 => {
            let opens: [&[u8]; 4] = [b"MD5 (", b"MD5 (", b"MD5(", b"MD5  ("];
            let closes: [&[u8]; 6] = [b") = ", b") = ", b")= ", b") =", b")=", b" ) = "];
            line.extend_from_slice(rng.pick(&opens));
            line.extend_from_slice(&name);
            line.extend_from_slice(rng.pick(&closes));
            line.extend_from_slice(sum.as_bytes());
        }
        _ => {
            let parts: [&[u8]; 12] = [
                b"#", b" ", b"MD5", b"(", b")", b"=", b"*", b"\\", b"a", b"\r", b"\0", b"\t",
            ];
            for _ in 0..rng.below(8) {
                line.extend_from_slice(rng.pick(&parts));
            }
            line.extend_from_slice(sum.as_bytes());
        }
    }
    // Byte-level mutations, drawn from an alphabet without md5x's tag letters.
    let alphabet = b" \t*\\()=#\r\0anM5D0f";
    for _ in 0..rng.below(3) {
        if rng.chance(70) || line.is_empty() {
            continue;
        }
        let i = rng.below(line.len());
        match rng.below(3) {
            0 => line[i] = rng.pick(alphabet),
            1 => {
                line.remove(i);
            }
            _ => line.insert(i, rng.pick(alphabet)),
        }
    }
    let ends: [&[u8]; 5] = [b"\n", b"\n", b"\n", b"\r\n", b"\r\r\n"];
    line.extend_from_slice(rng.pick(&ends));
    line
}

/// Random checksum lists, checked by md5sum and by md5x under random option sets, must
/// give the same bytes and status: the parser, the messages and the counts, beyond the
/// hand-written cases above. `COMPAT_SEED` replays (or varies) the generator;
/// `COMPAT_LISTS` sets how many lists (default 400).
#[test]
fn random_check_lists_match() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let (seed, lists) = draw(0x6d35_7863_6865_636b, "COMPAT_LISTS", 400);
    let tmp = TempDir::new("random-check");
    let dir = &tmp.0;
    let mut files: Vec<(Vec<u8>, String)> = Vec::new();
    for (i, n) in tricky_names().into_iter().enumerate() {
        let content = format!("content {i}\n");
        fs::write(dir.join(std::ffi::OsStr::from_bytes(&n)), &content).unwrap();
        let hex = md5sum_hex(&gnu, dir, &n);
        files.push((n, hex));
    }
    fs::create_dir(dir.join("dir")).unwrap();
    let some = files[0].1.clone();
    files.push((b"dir".to_vec(), some.clone()));
    files.push((b"missing".to_vec(), some.clone()));
    files.push((b"".to_vec(), some.clone()));
    files.push((b"a)".to_vec(), some));

    let optsets: [&[&str]; 8] = [
        &["-c"],
        &["-c", "-w"],
        &["-c", "--strict"],
        &["-c", "--quiet", "-w"],
        &["-c", "--status"],
        &["-c", "--ignore-missing"],
        &["-c", "--ignore-missing", "--strict", "-w"],
        &["-c", "--warn", "--quiet", "--strict"],
    ];
    let mut rng = Rng(seed | 1);
    let mut cases = Vec::new();
    for k in 0..lists {
        let body: Vec<u8> = (0..1 + rng.below(6))
            .flat_map(|_| random_check_line(&mut rng, &files))
            .collect();
        let ck = format!("ck{k}");
        fs::write(dir.join(&ck), &body).unwrap();
        let mut args: Vec<OsString> = optsets[rng.below(optsets.len())]
            .iter()
            .map(OsString::from)
            .collect();
        // Sometimes on standard input, sometimes after another list (md5sum decides
        // once per run whether one-space lines are the reversed BSD form).
        let stdin = if rng.chance(25) {
            args.push("-".into());
            body
        } else {
            if k > 0 && rng.chance(25) {
                args.push(format!("ck{}", rng.below(k)).into());
            }
            args.push(ck.into());
            Vec::new()
        };
        cases.push(Case {
            args,
            stdin,
            locale: if rng.chance(30) { "C.UTF-8" } else { "C" },
            extra: if rng.chance(50) { vec!["-j1"] } else { vec![] },
            merged: rng.chance(20),
        });
    }
    let mut fails = Vec::new();
    let mut left_out = LeftOut::default();
    for c in &cases {
        let (these, left) = compare_counting(&gnu, dir, std::slice::from_ref(c));
        left_out.add(left);
        for f in these {
            // The report names the lists; show what they held.
            let lists: Vec<String> = c
                .args
                .iter()
                .filter_map(|a| {
                    fs::read(dir.join(a))
                        .ok()
                        .map(|b| format!("\n  {a:?}: {}", show(&b)))
                })
                .collect();
            fails.push(format!("{f}{}", lists.concat()));
        }
    }
    left_out.report(cases.len());
    require_none("random check lists", seed, cases.len(), &fails);
}

/// A random file name: bytes that quoting and escaping treat differently (quotes,
/// blanks, shell characters, control bytes, `\`, newline, CR, bytes >= 0x80 that are
/// or are not valid UTF-8, characters glibc does not print: a C1 control, the line
/// and paragraph separators), 1 to 8 pieces.
fn random_name(rng: &mut Rng) -> Vec<u8> {
    let pieces: [&[u8]; 37] = [
        b"a",
        b"Z",
        b"0",
        b"-",
        b".",
        b"_",
        b"'",
        b"\"",
        b" ",
        b"\t",
        b"\n",
        b"\r",
        b"\\",
        b":",
        b"#",
        b"~",
        b"{",
        b"}",
        b"*",
        b"?",
        b"$",
        b"=",
        b"(",
        b")",
        b"\x01",
        b"\x07",
        b"\x7f",
        b"\x1b",
        b"\xff",
        b"\xc3",
        b"\xc3\xa9",
        b"\xe2\x82\xac",
        b"\xe2\x82",
        b"\xef\xbf\xbe",
        b"\xe2\x80\xa8",
        b"\xe2\x80\xa9",
        b"\xc2\x85",
    ];
    let mut n = Vec::new();
    for _ in 0..1 + rng.below(8) {
        n.extend_from_slice(rng.pick(&pieces));
    }
    n.retain(|&b| b != b'/' && b != 0);
    if n == b"." || n == b".." || n == b"-" {
        n.push(b'x');
    }
    n
}

/// Random file names, hashed by md5sum and by md5x (present ones printed with the `\`
/// escaping, absent ones named in quoted diagnostics, in both locales, with and
/// without `--tag` and `-z`), must give the same bytes and status. `COMPAT_SEED`
/// replays or varies the generator; `COMPAT_NAMES` sets how many runs (default 300).
#[test]
fn random_names_match() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let (seed, runs) = draw(0x6e61_6d65_7321, "COMPAT_NAMES", 300);
    let tmp = TempDir::new("random-names");
    let dir = &tmp.0;
    let mut rng = Rng(seed | 1);
    let optsets: [&[&str]; 5] = [&[], &["--tag"], &["-z"], &["-b"], &["--tag", "-z"]];
    let mut cases = Vec::new();
    for _ in 0..runs {
        let mut args: Vec<OsString> = optsets[rng.below(optsets.len())]
            .iter()
            .map(OsString::from)
            .collect();
        args.push("--".into());
        for _ in 0..1 + rng.below(3) {
            let n = random_name(&mut rng);
            if rng.chance(60) {
                fs::write(dir.join(std::ffi::OsStr::from_bytes(&n)), &n).unwrap();
            }
            args.push(os(&n));
        }
        cases.push(Case {
            args,
            stdin: Vec::new(),
            locale: if rng.chance(50) { "C.UTF-8" } else { "C" },
            extra: vec![],
            merged: false,
        });
    }
    let fails = compare(&gnu, dir, &cases);
    require_none("random names", seed, cases.len(), &fails);
}

/// Random command lines from md5sum's own options (short clusters, long options and
/// their prefixes, `=values`, unknown options, `--`, `-`) and operands that are
/// present, absent, a directory or a checksum list: the option parser's verdicts,
/// its messages and whatever runs after it must match md5sum. Prefixes that name only
/// md5x's extensions (`--sp`, `--j`, ...) and the short options `-j -r -L -a` are left
/// out, and so are `--help` and `--version`, whose texts are md5x's own: there the two
/// differ on purpose. `COMPAT_SEED` replays or varies the draw;
/// `COMPAT_ARGVS` sets how many (default 400).
#[test]
fn random_command_lines_match() {
    let Some(gnu) = md5sum_path() else {
        eprintln!("SKIPPED: GNU md5sum 9.x not found");
        return;
    };
    let (seed, runs) = draw(0x6172_6776, "COMPAT_ARGVS", 400);
    let tmp = TempDir::new("random-argv");
    let dir = &tmp.0;
    fs::write(dir.join("a"), b"hello\n").unwrap();
    fs::write(dir.join("empty"), b"").unwrap();
    fs::create_dir(dir.join("d")).unwrap();
    fs::write(
        dir.join("sums"),
        b"b1946ac92492d2347c6235b4d2611184  a\nd41d8cd98f00b204e9800998ecf8427e *empty\n\
          MD5 (a) = b1946ac92492d2347c6235b4d2611184\nbad line\n",
    )
    .unwrap();
    fs::write(
        dir.join("sums0"),
        b"b1946ac92492d2347c6235b4d2611184  a\0d41d8cd98f00b204e9800998ecf8427e  empty\0",
    )
    .unwrap();
    let shorts = b"bctwz";
    let bad_shorts = b"xqQ1?";
    let longs = [
        "check",
        "ignore-missing",
        "quiet",
        "status",
        "warn",
        "strict",
        "tag",
        "zero",
        "binary",
        "text",
    ];
    let operands = ["a", "empty", "missing", "d", "sums", "sums0", "-", "a"];
    let mut rng = Rng(seed | 1);
    let mut cases = Vec::new();
    for _ in 0..runs {
        let mut args: Vec<OsString> = Vec::new();
        for _ in 0..rng.below(6) {
            let arg = match rng.below(12) {
                0..=2 => {
                    let mut s = "-".to_string();
                    for _ in 0..1 + rng.below(3) {
                        s.push(rng.pick(shorts) as char);
                    }
                    if rng.chance(5) {
                        s.push(rng.pick(bad_shorts) as char);
                    }
                    s
                }
                3..=7 => {
                    let l = rng.pick(&longs);
                    // A prefix of it, mostly the whole name; sometimes a value.
                    let cut = if rng.chance(60) {
                        l.len()
                    } else {
                        1 + rng.below(l.len())
                    };
                    let mut s = format!("--{}", &l[..cut]);
                    if rng.chance(8) {
                        s.push_str("=x");
                    }
                    s
                }
                8 => rng
                    .pick(&["--", "-", "--bogus", "--=", "---", "-b-"])
                    .to_string(),
                _ => rng.pick(&operands).to_string(),
            };
            args.push(arg.into());
        }
        if rng.chance(70) {
            args.push(rng.pick(&operands).into());
        }
        cases.push(Case {
            args,
            stdin: b"b1946ac92492d2347c6235b4d2611184  a\n".to_vec(),
            locale: "C",
            extra: vec![],
            merged: rng.chance(20),
        });
    }
    let fails = compare(&gnu, dir, &cases);
    require_none("random command lines", seed, cases.len(), &fails);
}
