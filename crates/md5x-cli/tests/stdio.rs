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
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
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
