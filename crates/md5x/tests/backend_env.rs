//! `MD5X_BACKEND`: each case runs in a child process, since the choice is process-wide.

use std::process::Command;

/// Re-run this test binary with one test and an environment, returning its output.
fn child(test: &str, value: &str) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env("MD5X_BACKEND", value)
        .env("MD5X_CHILD", "1")
        .output()
        .unwrap()
}

/// In a child: report what the process chose, or panic as `active()` does.
#[test]
fn child_reports_active() {
    if std::env::var_os("MD5X_CHILD").is_none() {
        return; // only meaningful when spawned by the tests below
    }
    println!("ACTIVE={}", md5x::Backend::active());
    assert_eq!(
        md5x::md5(b"abc").to_string(),
        "900150983cd24fb0d6963f7d28e17f72"
    );
}

#[test]
fn env_forces_each_supported_backend() {
    for b in md5x::Backend::all_supported() {
        let out = child("child_reports_active", b.name());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{b}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(&format!("ACTIVE={b}")), "{b}: {stdout}");
    }
}

/// Empty, the variable is as if unset; a name may have spaces around it.
#[test]
fn env_empty_or_spaced() {
    let out = child("child_reports_active", "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let want = format!("ACTIVE={}", md5x::Backend::detected());
    assert!(stdout.contains(&want), "{stdout}");
    let out = child("child_reports_active", " portable\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ACTIVE=portable"), "{stdout}");
    assert_eq!(" portable\n".parse(), Ok(md5x::Backend::Portable));
}

#[test]
fn env_with_unknown_backend_fails_loudly() {
    let out = child("child_reports_active", "quantum");
    assert!(
        !out.status.success(),
        "an unknown MD5X_BACKEND must not fall back silently"
    );
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("unknown backend 'quantum'"), "{text}");
    assert!(text.contains("this CPU supports: portable"), "{text}");
}

#[test]
fn env_with_unsupported_backend_fails_loudly() {
    let Some(b) = md5x::Backend::ALL.iter().find(|b| !b.is_supported()) else {
        eprintln!("every backend runs on this CPU: no unsupported one to name");
        return;
    };
    let out = child("child_reports_active", b.name());
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("is not supported by this CPU"), "{text}");
}

#[test]
fn from_env_parses() {
    // This process has no MD5X_BACKEND unless the caller set one; either way from_env
    // must agree with active().
    match md5x::Backend::from_env() {
        Ok(Some(b)) => assert_eq!(md5x::Backend::active(), b),
        Ok(None) => assert_eq!(md5x::Backend::active(), md5x::Backend::detected()),
        Err(e) => panic!("MD5X_BACKEND is set to something invalid: {e}"),
    }
}
