//! Standard descriptors as launchers leave them, md5x against GNU md5sum: stdout on a
//! read-write /dev/null (as Python's `subprocess.DEVNULL` opens it) is
//! an ordinary output, not a closed one; a reader that goes away ends both by SIGPIPE.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

fn md5x() -> &'static str {
    env!("CARGO_BIN_EXE_md5x")
}

fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("md5x-stdio-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("f");
    std::fs::write(&p, bytes).unwrap();
    p
}

/// All that a child writes on its piped standard error, to its end.
fn stderr_of(child: &mut std::process::Child) -> String {
    let mut err = String::new();
    let mut pipe = child.stderr.take().expect("stderr piped");
    pipe.read_to_string(&mut err).unwrap();
    err
}

/// /dev/null opened read-write (`Stdio::null()` opens it write-only for stdout).
fn null_rw() -> Stdio {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .unwrap();
    Stdio::from(f)
}

#[test]
fn stdout_on_read_write_dev_null_is_not_closed() {
    let f = temp_file("null", b"hello\n");
    for prog in ["md5sum", md5x()] {
        // /dev/null read-write, as the runtime opens it for a closed descriptor: the
        // case md5x once mistook for a closed stdout.
        let out = Command::new(prog)
            .arg(&f)
            .stdout(null_rw())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{prog}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{prog}");
        // And the check mode reads a sums file and writes OK lines there.
        let sums = f.with_file_name("sums");
        std::fs::write(
            &sums,
            format!("b1946ac92492d2347c6235b4d2611184  {}\n", f.display()),
        )
        .unwrap();
        let out = Command::new(prog)
            .args(["-c".as_ref(), sums.as_os_str()])
            .stdout(null_rw())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{prog} -c");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{prog} -c");
    }
    std::fs::remove_dir_all(f.parent().unwrap()).unwrap();
}

#[test]
fn reader_gone_ends_like_md5sum() {
    let f = temp_file("pipe", &[7u8; 100]);
    for prog in ["md5sum", md5x()] {
        let mut child = Command::new(prog)
            .args(std::iter::repeat_n(f.as_os_str(), 20_000))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read a little, then hang up.
        let mut first = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let err = stderr_of(&mut child);
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(13),
            "{prog}: {status:?}, stderr {err:?}"
        );
        assert_eq!(err, "", "{prog}");
    }
    std::fs::remove_dir_all(f.parent().unwrap()).unwrap();
}

/// A terminal on stdin: the first end of input (Ctrl-D) ends it, even after a line,
/// as md5sum takes it; `- -` then reads the second input after it. md5x used to read
/// on past the first Ctrl-D, so it waited for more and ran the two inputs together.
/// The terminal is a pseudo-terminal made by Python's `pty` module (python3 is
/// installed by scripts/test.sh); each program gets 20 seconds.
#[test]
fn end_of_input_on_a_terminal_ends_it_like_md5sum() {
    let script = r#"
import os, pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=subprocess.PIPE)
os.close(slave)
# Canonical mode: each read returns one line, and Ctrl-D on an empty line is a read
# of 0 bytes, so everything can be typed at once.
os.write(master, b"abc\n\x04def\n\x04")
try:
    out, _ = p.communicate(timeout=20)
except subprocess.TimeoutExpired:
    p.kill()
    print("TIMEOUT")
    sys.exit(0)
sys.stdout.write(out.decode())
"#;
    let Ok(probe) = Command::new("python3").arg("-c").arg("import pty").output() else {
        println!("python3 is not installed here: test not run");
        return;
    };
    assert!(probe.status.success(), "python3 has no pty module");
    let run = |prog: &str| {
        let out = Command::new("python3")
            .args(["-c", script, prog, "-", "-"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let want = "0bee89b07a248e27c83fc3d5951213c1  -\n614dd0e977becb4c6f7fa99e64549b12  -\n";
    assert_eq!(run("md5sum"), want, "md5sum");
    assert_eq!(run(md5x()), want, "md5x");
}

/// `--status` promises no output, so the progress line stays off by default with it,
/// even on a terminal: a run under a pseudo-terminal (`docker run -t`, `script`) once
/// captured the line's escapes there. `--progress` still draws it, and so does a check
/// without `--status` (the control: the same job is long enough to draw). The job is a
/// listed named pipe that its writer holds open for 2.5 s, past the line's 1 s delay;
/// standard error is a pseudo-terminal made by Python's `pty` module.
#[test]
fn status_keeps_the_progress_line_off_on_a_terminal() {
    let script = r#"
import os, pty, subprocess, sys, threading, time
fifo = sys.argv[1]
def hold():
    with open(fifo, "wb"):
        time.sleep(2.5)
threading.Thread(target=hold, daemon=True).start()
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=slave)
os.close(slave)
err = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:  # EIO: every end of the terminal is closed
        break
    if not chunk:
        break
    err += chunk
out, _ = p.communicate(timeout=30)
sys.stdout.write(f"rc={p.returncode} out={len(out)} err={err!r}")
"#;
    let Ok(probe) = Command::new("python3").arg("-c").arg("import pty").output() else {
        println!("python3 is not installed here: test not run");
        return;
    };
    assert!(probe.status.success(), "python3 has no pty module");
    let list = temp_file(
        "status-progress",
        b"d41d8cd98f00b204e9800998ecf8427e  pipe\n",
    );
    let dir = list.parent().unwrap();
    let fifo = dir.join("pipe");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let run = |args: &[&str]| {
        let out = Command::new("python3")
            .current_dir(dir)
            .args(["-c", script])
            .arg(&fifo)
            .arg(md5x())
            .args(args)
            .arg("f")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let quiet = run(&["-c", "--status"]);
    assert_eq!(quiet, "rc=0 out=0 err=b''");
    let forced = run(&["-c", "--status", "--progress"]);
    assert!(
        forced.starts_with("rc=0 out=0 ") && forced.contains("/1 files"),
        "{forced}"
    );
    let shown = run(&["-c"]);
    assert!(
        shown.starts_with("rc=0 out=9 ") && shown.contains("/1 files"),
        "{shown}"
    );
}

/// Where no thread can be started (a container at its process limit), md5x does the
/// work on the threads it has, as md5sum does on its one: same output, exit 0. It
/// used to panic ("failed to spawn thread"). The limit (`ulimit -u 1`) binds only a
/// user other than root, so the test runs as `nobody` through `setpriv`, which needs
/// root: elsewhere it says so and does not run.
#[test]
fn no_thread_to_spare_is_not_a_failure() {
    let root = Command::new("id").arg("-u").output().ok();
    let is_root = root.is_some_and(|o| o.stdout == b"0\n");
    let has_setpriv = Command::new("setpriv").arg("--help").output().is_ok();
    if !is_root || !has_setpriv {
        println!("not root or no setpriv here: process-limit test not run");
        return;
    }
    let dir = temp_file("nproc", b"").with_file_name("");
    let names = ["a", "b", "big"];
    for (i, n) in names.iter().enumerate() {
        let len = if *n == "big" { 40 << 20 } else { 100 * i };
        std::fs::write(dir.join(n), vec![i as u8; len]).unwrap();
    }
    let perms = Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(&dir)
        .status();
    assert!(perms.is_ok_and(|s| s.success()));
    let limited = |prog: &str, args: &str| {
        let cmd = format!(
            "cd '{}' && ulimit -u 1 && exec {prog} {args}",
            dir.display()
        );
        let out = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "bash",
                "-c",
            ])
            .arg(cmd)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            err,
        )
    };
    for (jobs, args) in [("", "a b big"), ("-j 8 ", "a b big"), ("", "big")] {
        let want = limited("md5sum", args);
        assert_eq!(want.0, Some(0), "md5sum {args}: {want:?}");
        let got = limited(md5x(), &format!("{jobs}{args}"));
        assert_eq!(got, want, "md5x {jobs}{args}");
    }
    // The parts of an ETag, read on several threads where there are some.
    let (code, out, err) = limited(md5x(), "--etag --part-size 5MiB -j 8 big");
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let (_, free, _) = {
        let o = Command::new(md5x())
            .current_dir(&dir)
            .args(["--etag", "--part-size", "5MiB", "big"])
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            (),
        )
    };
    assert_eq!(out, free);
    assert!(out.contains("-8  big"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Under a low limit on open files (`ulimit -n 40`), where md5sum, which holds one
/// file at a time, works: md5x holds fewer large files open for its lanes (it held up
/// to 128 and failed with "Too many open files"), with one worker or eight, in hash
/// and check mode, and for ETags.
#[test]
fn low_open_file_limit_like_md5sum() {
    let dir = temp_file("nofile", b"").with_file_name("");
    let mut names = Vec::new();
    for i in 0..60u32 {
        let n = format!("f{i:02}");
        let len = if i % 20 == 7 {
            (6 << 20) + 3 * i as usize
        } else {
            300_000 + i as usize
        };
        std::fs::write(dir.join(&n), vec![i as u8; len]).unwrap();
        names.push(n);
    }
    let all = names.join(" ");
    let run = |prog: &str, args: &str| {
        let cmd = format!(
            "cd '{}' && ulimit -n 40 && exec {prog} {args}",
            dir.display()
        );
        let out = Command::new("bash").args(["-c", &cmd]).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let want = run("md5sum", &all);
    assert_eq!(want.0, Some(0), "md5sum: {want:?}");
    std::fs::write(dir.join("sums"), &want.1).unwrap();
    for jobs in ["-j1", "-j2", "-j8"] {
        assert_eq!(run(md5x(), &format!("{jobs} {all}")), want, "md5x {jobs}");
        let (code, _, err) = run(md5x(), &format!("{jobs} --quiet -c sums"));
        assert_eq!((code, err.as_str()), (Some(0), ""), "md5x {jobs} -c");
        let etags = format!("{jobs} --etag --part-size 5MiB --threshold 5MiB {all}");
        let (code, out, err) = run(md5x(), &etags);
        assert_eq!((code, err.as_str()), (Some(0), ""), "md5x {etags}");
        assert_eq!(out.matches("-2  f").count(), 3, "{out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Names of descriptors the caller did not give (`/dev/fd/5`) find no file, as in
/// md5sum, also while md5x's workers hold other operands' files open under those
/// numbers (`-j8` over small files held them every time): md5x hashed those files
/// again under the names. A descriptor the caller gave (`7<`) is hashed.
#[test]
fn descriptors_md5x_holds_are_not_found_by_name() {
    let dir = temp_file("ownfd", b"").with_file_name("");
    let mut args = Vec::new();
    for i in 0..40u32 {
        let n = format!("f{i:02}");
        std::fs::write(dir.join(&n), vec![i as u8; 100 + i as usize]).unwrap();
        args.push(n);
        if i % 4 == 3 {
            args.push(format!("/dev/fd/{}", 3 + i / 4));
        }
    }
    args.push("/dev/fd/7".into());
    let all = args.join(" ");
    let run = |prog: &str| {
        // (Only descriptor 7 given: whatever else the harness left open is closed.)
        let cmd = format!(
            "cd '{}' && for n in {{3..20}}; do eval \"exec $n<&-\"; done && exec 7<f05 && \
             exec -a md5sum {prog} {all}",
            dir.display()
        );
        let out = Command::new("bash").args(["-c", &cmd]).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let want = run("md5sum");
    assert_eq!(want.2.matches("No such file").count(), 9, "{want:?}");
    assert!(want.1.contains("  /dev/fd/7\n"), "{want:?}");
    for jobs in ["-j1", "-j2", "-j8"] {
        assert_eq!(run(&format!("{} {jobs}", md5x())), want, "md5x {jobs}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With SIGPIPE ignored (as Python's subprocess, many daemons and CI runners leave
/// it), a reader that goes away is a write error: md5sum goes on, reports what else
/// fails (here a missing file after many sums), then says "write error" and exits 1.
/// md5x used to stop at the first failed write, so the later error was never
/// reported, and said "write error: Broken pipe".
#[test]
fn reader_gone_with_sigpipe_ignored_like_md5sum() {
    let f = temp_file("pipe-ignored", &[7u8; 100]);
    let run = |prog: &str| {
        let script = r#"trap '' PIPE; "$0" "$@" /nonexistent/nx | head -c 10 >/dev/null
            exit ${PIPESTATUS[0]}"#;
        let out = Command::new("bash")
            .args(["-c", script, prog])
            .args(std::iter::repeat_n(f.as_os_str(), 5000))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).replace(prog, "PROG");
        (out.status.code(), err)
    };
    let want = run("md5sum");
    assert_eq!(want.0, Some(1), "{want:?}");
    assert_eq!(
        want.1,
        "PROG: /nonexistent/nx: No such file or directory\nPROG: write error\n"
    );
    assert_eq!(run(md5x()), want);
    std::fs::remove_dir_all(f.parent().unwrap()).unwrap();
}

/// What comes before a stream in the operands is written before the stream is read, as
/// md5sum writes each line as it goes: a program that waits for the first line before
/// it feeds md5x's standard input (or opens a named pipe's writing end) must not wait
/// forever. md5x held its lines back until the stream ended, for `f -` and, with `-j1`,
/// for `f PIPE`. Each case gives the first line 60 seconds, then feeds the stream all
/// the same (so that nothing hangs) and fails.
#[test]
fn lines_before_a_stream_are_out_before_it_is_read() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::mpsc;
    use std::time::Duration;

    let f = temp_file("order", b"hello\n");
    let dir = f.parent().unwrap().to_path_buf();
    let fifo = dir.join("p");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo");
    let list = dir.join("list");
    std::fs::write(
        &list,
        format!(
            "b1946ac92492d2347c6235b4d2611184  {}\n60b725f10c9c85c70d97880dfe8191b3  -\n",
            f.display()
        ),
    )
    .unwrap();
    let (f, fifo, list) = (
        f.to_str().unwrap(),
        fifo.to_str().unwrap(),
        list.to_str().unwrap(),
    );
    // (program, arguments, whether the stream is the pipe rather than stdin, the two
    // lines expected)
    let hashed = format!("b1946ac92492d2347c6235b4d2611184  {f}\n");
    let checked = format!("{f}: OK\n");
    let mut cases: Vec<(&str, Vec<&str>, bool, String, String)> = Vec::new();
    for (prog, extra) in [("md5sum", None), (md5x(), None), (md5x(), Some("-j1"))] {
        let mut a: Vec<&str> = extra.into_iter().collect();
        a.extend([f, "-"]);
        cases.push((
            prog,
            a,
            false,
            hashed.clone(),
            "60b725f10c9c85c70d97880dfe8191b3  -\n".into(),
        ));
        let mut a: Vec<&str> = extra.into_iter().collect();
        a.extend([f, fifo]);
        cases.push((
            prog,
            a,
            true,
            hashed.clone(),
            format!("60b725f10c9c85c70d97880dfe8191b3  {fifo}\n"),
        ));
        let mut a: Vec<&str> = extra.into_iter().collect();
        a.extend(["-c", list]);
        cases.push((prog, a, false, checked.clone(), "-: OK\n".into()));
    }
    for (prog, args, pipe, first, second) in cases {
        let mut child = Command::new(prog)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take();
        let (tx, rx) = mpsc::channel();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let reader = std::thread::spawn(move || {
            let mut lines = Vec::new();
            loop {
                let mut l = String::new();
                if out.read_line(&mut l).unwrap_or(0) == 0 {
                    break;
                }
                lines.push(l.clone());
                let _ = tx.send(l);
            }
            lines
        });
        let early = rx.recv_timeout(Duration::from_secs(60));
        // Now the stream: its writer, then its end.
        if pipe {
            drop(stdin.take());
            let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            w.write_all(b"a\n").unwrap();
        } else {
            let mut s = stdin.take().unwrap();
            s.write_all(b"a\n").unwrap();
        }
        let status = child.wait().unwrap();
        let lines = reader.join().unwrap();
        let err = stderr_of(&mut child);
        assert_eq!(
            early.as_deref(),
            Ok(first.as_str()),
            "{prog} {args:?}: the first line before the stream's end"
        );
        assert_eq!(lines, [first, second], "{prog} {args:?}");
        assert_eq!(
            (status.code(), err.as_str()),
            (Some(0), ""),
            "{prog} {args:?}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs that share one pipe (`xargs -P6 md5sum | ...`) interleave whole lines, as
/// md5sum's do (it writes a line at a time): md5x gathers lines into writes of at most
/// 4 KiB, which a pipe takes in one piece. With a 64 KiB buffer, whose writes a full
/// pipe took in pieces of any length, lines came out broken (3-4 of 6,000 every run,
/// 2026-12-02). The reader starts late, so that the pipe fills and writers wait on it.
#[test]
fn lines_from_runs_sharing_a_pipe_stay_whole() {
    let dir = temp_file("shared-pipe", b"").with_file_name("");
    let stem = "n".repeat(150);
    let names: Vec<String> = (0..1500).map(|i| format!("{stem}{i:04}")).collect();
    for (i, n) in names.iter().enumerate() {
        std::fs::write(dir.join(n), format!("{i}\n")).unwrap();
    }
    for (prog, zero) in [("md5sum", false), (md5x(), false), (md5x(), true)] {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let children: Vec<_> = names
            .chunks(250)
            .map(|part| {
                let mut c = Command::new(prog);
                c.current_dir(&dir).args(zero.then_some("-z")).args(part);
                c.stdout(writer.try_clone().unwrap()).spawn().unwrap()
            })
            .collect();
        drop(writer);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        for mut c in children {
            assert!(c.wait().unwrap().success(), "{prog}");
        }
        let end = if zero { b'\0' } else { b'\n' };
        let lines: Vec<&[u8]> = out.split(|&b| b == end).filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), names.len(), "{prog} -z {zero}");
        let whole = |l: &&[u8]| {
            l.len() == 32 + 2 + stem.len() + 4
                && l[..32].iter().all(u8::is_ascii_hexdigit)
                && &l[32..34] == b"  "
                && l[34..].starts_with(stem.as_bytes())
                && l[34 + stem.len()..].iter().all(u8::is_ascii_digit)
        };
        let broken: Vec<_> = lines.iter().filter(|l| !whole(l)).collect();
        assert!(
            broken.is_empty(),
            "{prog} -z {zero}: {} broken lines",
            broken.len()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An operand that is standard output's own file (`md5sum * > sums`, run again where
/// `sums` is; or `md5x -r . > sums`): md5sum, writing a line at a time, hashes the lines
/// written before it, and so does md5x, whose workers had read it at any point (the
/// empty file's sum with `-j1`, and one that changed from run to run).
#[test]
fn an_operand_that_is_stdout_is_hashed_after_the_lines_before_it() {
    let dir = temp_file("self-out", b"").with_file_name("");
    let mut names: Vec<String> = (0..40).map(|i| format!("f{i:02}")).collect();
    for (i, n) in names.iter().enumerate() {
        std::fs::write(dir.join(n), vec![b'x'; 1000 * i]).unwrap();
    }
    // The list in the middle, after files large and small, and a missing one.
    names.insert(30, "sums".into());
    names.insert(10, "missing".into());
    let run = |prog: &str, args: &[&str], names: &[String], append: bool| {
        let sums = dir.join("sums");
        let out = if append {
            std::fs::write(&sums, b"an earlier line\n").unwrap();
            std::fs::OpenOptions::new()
                .append(true)
                .open(&sums)
                .unwrap()
        } else {
            std::fs::File::create(&sums).unwrap()
        };
        let st = Command::new(prog)
            .current_dir(&dir)
            .args(args)
            .args(names)
            .stdout(out)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        let text = String::from_utf8(std::fs::read(&sums).unwrap()).unwrap();
        (st.code(), text)
    };
    for append in [false, true] {
        let want = run("md5sum", &[], &names, append);
        assert_eq!(want.0, Some(1), "md5sum (a missing file)");
        for args in [&[][..], &["-j1"], &["-j4"]] {
            assert_eq!(
                run(md5x(), args, &names, append),
                want,
                "md5x {args:?} append {append}"
            );
        }
    }
    // A walk meets the list as one of its files.
    let (code, out) = run(md5x(), &["-r", "."], &[], false);
    assert_eq!(code, Some(0));
    let text = out;
    let at = text.find("  ./sums\n").expect("./sums hashed") - 32;
    let before = &text[..at];
    let sum = md5x::md5(before.as_bytes()).to_hex();
    assert_eq!(&text[at..at + 32], sum.as_str(), "{text}");
    // (The 40 files, the list, and `temp_file`'s empty `f`.)
    assert_eq!(text.lines().count(), 42);
    std::fs::remove_dir_all(&dir).unwrap();
}
