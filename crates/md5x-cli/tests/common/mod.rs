//! What more than one of the command's test binaries needs.

use std::path::Path;
use std::process::Command;

/// `program` to run in `dir`, in the C locale, without the test's own `MD5X_BACKEND`
/// or `POSIXLY_CORRECT` (a caller may set them again).
pub fn in_dir(program: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env("LC_ALL", "C")
        .env_remove("MD5X_BACKEND")
        .env_remove("POSIXLY_CORRECT");
    cmd
}
