//! `md5x --speed` lists what it promises: every backend this CPU runs, single-stream
//! at four sizes, multi-buffer rows for the lane backends, and the backends it could
//! not run. It asserts the table's shape and that figures are positive, not speeds.

use std::os::unix::process::CommandExt;
use std::process::Command;

#[test]
fn speed_lists_every_backend_and_mode() {
    let out = Command::new(env!("CARGO_BIN_EXE_md5x"))
        .arg("--speed")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| r.len() >= 5 && r[0] != "not")
        .collect();
    for b in md5x::Backend::all_supported() {
        let mine: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == b.name()).collect();
        let single = mine.iter().filter(|r| r[1] == "single-stream").count();
        let multi = mine.iter().filter(|r| r[1] == "multi-buffer,").count();
        assert_eq!(single, 4, "{b}: {text}");
        assert_eq!(multi, if b.lanes() > 1 { 4 } else { 0 }, "{b}: {text}");
        for r in mine {
            let n = r.len();
            let (mbps, cpb): (f64, f64) = (r[n - 2].parse().unwrap(), r[n - 1].parse().unwrap());
            assert!(mbps > 0.0 && cpb > 0.0, "{r:?}");
        }
    }
    let missing: Vec<&str> = md5x::Backend::ALL
        .iter()
        .filter(|b| !b.is_supported())
        .map(|b| b.name())
        .collect();
    if !missing.is_empty() {
        assert!(
            text.contains(&format!(
                "not run (this CPU or build lacks them): {}",
                missing.join(", ")
            )),
            "{text}"
        );
    }
}

/// A table that cannot be written is said so, as md5sum says it of its sums: `write
/// error` and exit 1 on a full device. (It used to exit 1 without a word.)
#[test]
fn speed_to_a_full_device_is_a_write_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("no /dev/full here: test not run");
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_md5x"))
        .arg("--speed")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.ends_with(": write error\n"), "{err}");
}

/// `--speed` hashes buffers of its own: a file operand or `-c` with it is a usage error
/// (it used to be ignored without a word), and nothing is measured.
#[test]
fn speed_with_files_or_check_is_a_usage_error() {
    for (args, msg) in [
        (
            &["--speed", "some file"][..],
            "md5x: extra operand 'some file' (--speed hashes no files)\n",
        ),
        (
            &["-c", "--speed"][..],
            "md5x: the --check option is meaningless with --speed\n",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_md5x"))
            .arg0("md5x")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err,
            format!("{msg}Try 'md5x --help' for more information.\n")
        );
    }
}
