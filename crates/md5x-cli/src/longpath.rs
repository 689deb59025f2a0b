//! Names of any length. The kernel refuses a name of `PATH_MAX` bytes or more (4096 on
//! Linux) with `ENAMETOOLONG`, however short its components; `-r` meets such names in
//! any tree deeper than about twenty levels of long directory names, and writes them
//! into lists that `-c` then reads.
//!
//! [`retry`] runs a file operation on a name, and where the kernel says the name is too
//! long, runs it again on a short name for the same file: the directory part is opened
//! a piece at a time (each `openat` from the last, every piece under `PATH_MAX`), and
//! the operation is given `/proc/self/fd/N/LAST`, where `N` holds that directory. The
//! kernel resolves the pieces as it would the whole name (links in the directory part
//! are followed, `..` goes up from where the name has reached), so the file found, and
//! any error, is the one the name means. Linux only (through `rustix`, with `/proc`);
//! elsewhere, and where `/proc` is not mounted, the first error stands.

use std::io;
use std::path::Path;

/// The name `b` (bytes, as Unix names are) as a path.
pub fn as_path(b: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(b))
}

/// `op(path)`, or, where the kernel finds `path` too long, `op` on a short name for the
/// same file (see the module's notes).
pub fn retry<T>(path: &Path, op: impl Fn(&Path) -> io::Result<T>) -> io::Result<T> {
    match op(path) {
        #[cfg(target_os = "linux")]
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NAMETOOLONG.raw_os_error()) => {
            linux::again(path, &op).unwrap_or(Err(e))
        }
        r => r,
    }
}

/// [`std::fs::metadata`], for names of any length.
pub fn metadata(path: &Path) -> io::Result<std::fs::Metadata> {
    retry(path, |p| std::fs::metadata(p))
}

/// [`std::fs::symlink_metadata`], for names of any length.
pub fn symlink_metadata(path: &Path) -> io::Result<std::fs::Metadata> {
    retry(path, |p| std::fs::symlink_metadata(p))
}

/// [`std::fs::read_dir`], for names of any length. (The listing holds a descriptor of
/// its own: it outlives the short name it was opened by.)
pub fn read_dir(path: &Path) -> io::Result<std::fs::ReadDir> {
    retry(path, |p| std::fs::read_dir(p))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::OnceLock;

    use rustix::fs::{openat, Mode, OFlags, CWD};

    /// The longest piece given to one `openat`: under `PATH_MAX` (4096, its NUL
    /// included), with room to spare.
    const PIECE: usize = 4000;

    /// `op` on `/proc/self/fd/N/LAST`, `N` holding the directory part of `path`; `None`
    /// where that cannot help (no directory part, or no `/proc`), so that the caller
    /// keeps the first error. An error opening the directory part is the answer: it
    /// says what is wrong with the name (a directory missing, or not searchable).
    pub fn again<T>(path: &Path, op: &impl Fn(&Path) -> io::Result<T>) -> Option<io::Result<T>> {
        let bytes = path.as_os_str().as_bytes();
        let cut = bytes.iter().rposition(|&b| b == b'/')?;
        let (dir, last) = (&bytes[..cut.max(1)], &bytes[cut + 1..]);
        if !proc_fds() {
            return None;
        }
        let fd = match open_dir(dir) {
            Ok(fd) => fd,
            Err(e) => return Some(Err(e)),
        };
        // (`dir/`, with nothing after the slash, stays the directory itself, still
        // required to be one.)
        let mut short = format!("/proc/self/fd/{}/", fd.as_raw_fd()).into_bytes();
        short.extend_from_slice(last);
        Some(op(super::as_path(&short)))
    }

    /// Whether this process's descriptors can be reached by name, looked at once.
    fn proc_fds() -> bool {
        static SEEN: OnceLock<bool> = OnceLock::new();
        *SEEN.get_or_init(|| Path::new("/proc/self/fd").is_dir())
    }

    /// The directory `dir` (a name of any length), opened for lookups only (`O_PATH`),
    /// a piece of at most [`PIECE`] bytes at a time, each cut at a `/`.
    pub(super) fn open_dir(dir: &[u8]) -> io::Result<OwnedFd> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut at: Option<OwnedFd> = None;
        let mut rest = dir;
        loop {
            // The longest piece that ends at a `/` (or the whole rest): a component is
            // at most 255 bytes, so there is one unless the name is wrong anyway, and
            // then the kernel says so.
            let n = if rest.len() <= PIECE {
                rest.len()
            } else {
                rest[..=PIECE]
                    .iter()
                    .rposition(|&b| b == b'/')
                    .filter(|&i| i > 0)
                    .unwrap_or(rest.len())
            };
            let (piece, tail) = rest.split_at(n);
            let fd = match &at {
                Some(fd) => openat(fd.as_fd(), piece, flags, Mode::empty()),
                None => openat(CWD, piece, flags, Mode::empty()),
            }?;
            // The next piece starts past the slashes: one that began with `/` would be
            // read from the root, not from the piece before it.
            let skip = tail.iter().take_while(|&&b| b == b'/').count();
            rest = &tail[skip..];
            if rest.is_empty() {
                return Ok(fd);
            }
            at = Some(fd);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::MetadataExt;

    /// A directory `levels` deep under a fresh directory in the temporary directory,
    /// each level a name of `width` bytes, made by walking down with `openat`-relative
    /// names (the whole name is too long for `mkdir`); returns the root and the deep
    /// name.
    fn deep(tag: &str, levels: usize, width: usize) -> (std::path::PathBuf, Vec<u8>) {
        use std::os::unix::ffi::OsStrExt;
        let root = std::env::temp_dir().join(format!("md5x-longpath-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        let mut at = linux::open_dir(root.as_os_str().as_bytes()).unwrap();
        let mut name = root.as_os_str().as_bytes().to_vec();
        let level = vec![b'd'; width];
        for _ in 0..levels {
            rustix::fs::mkdirat(&at, &level[..], rustix::fs::Mode::RWXU).unwrap();
            at = rustix::fs::openat(
                &at,
                &level[..],
                rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY,
                rustix::fs::Mode::empty(),
            )
            .unwrap();
            name.push(b'/');
            name.extend_from_slice(&level);
        }
        (root, name)
    }

    #[test]
    fn names_past_path_max_reach_the_file_they_name() {
        // 45 levels of 200 bytes: past 4096 twice, so three pieces.
        let (root, dir) = deep("reach", 45, 200);
        assert!(dir.len() > 2 * 4096);
        // Made through the directory part, as a name this long cannot be made.
        let mut file = dir.clone();
        file.extend_from_slice(b"/f");
        let fd = linux::open_dir(&dir).unwrap();
        let f = rustix::fs::openat(
            &fd,
            "f",
            rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CREATE,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        rustix::io::write(&f, b"deep\n").unwrap();
        drop(f);

        // The plain operation fails: this is what retry is for.
        let e = fs::read(as_path(&file)).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NAMETOOLONG.raw_os_error())
        );
        assert_eq!(retry(as_path(&file), |p| fs::read(p)).unwrap(), b"deep\n");
        let m = retry(as_path(&file), |p| fs::metadata(p)).unwrap();
        assert!(m.is_file());
        assert_eq!(m.len(), 5);
        // The directory, named with and without a trailing slash, is the one made.
        let d = retry(as_path(&dir), |p| fs::symlink_metadata(p)).unwrap();
        let mut slashed = dir.clone();
        slashed.push(b'/');
        let d2 = retry(as_path(&slashed), |p| fs::metadata(p)).unwrap();
        assert!(d.is_dir() && d2.is_dir());
        assert_eq!((d.dev(), d.ino()), (d2.dev(), d2.ino()));
        let names: Vec<_> = retry(as_path(&dir), |p| fs::read_dir(p))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f"]);
        // A name through `..` and doubled slashes, cut across pieces, means the same.
        let mut odd = dir.clone();
        odd.extend_from_slice(b"//..//");
        odd.extend_from_slice(&[b'd'; 200]);
        odd.extend_from_slice(b"///f");
        assert_eq!(retry(as_path(&odd), |p| fs::read(p)).unwrap(), b"deep\n");
        // Errors name what is wrong: a missing file, a missing directory on the way, a
        // file taken for a directory.
        let mut missing = dir.clone();
        missing.extend_from_slice(b"/nothing");
        let e = retry(as_path(&missing), |p| fs::read(p)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let mut gap = dir.clone();
        gap.extend_from_slice(b"/nothing/f");
        let e = retry(as_path(&gap), |p| fs::read(p)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let mut through = file.clone();
        through.extend_from_slice(b"/f");
        let e = retry(as_path(&through), |p| fs::read(p)).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NOTDIR.raw_os_error())
        );
        // A component longer than any file system takes stays too long.
        let mut wide = dir.clone();
        wide.push(b'/');
        wide.extend_from_slice(&[b'x'; 300]);
        let e = retry(as_path(&wide), |p| fs::read(p)).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NAMETOOLONG.raw_os_error())
        );
        // Short names are left alone.
        assert!(retry(&root, |p| fs::metadata(p)).unwrap().is_dir());
        fs::remove_dir_all(&root).ok();
    }
}
