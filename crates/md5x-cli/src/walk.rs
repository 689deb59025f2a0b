//! `-r`: the files under a directory, depth first, each directory's entries sorted by
//! the bytes of their names, so the output is the same on every run and machine.
//!
//! Symbolic links met in the walk are skipped unless `-L` (then a link to a directory
//! is walked, with loop detection). FIFOs, sockets and devices met in the walk are
//! skipped (reading a FIFO could block forever), each one reported so that nothing is
//! left out unsaid. Errors are reported per entry and the walk goes on.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

pub enum Entry {
    File(Vec<u8>),
    Error(Vec<u8>, io::Error),
    /// A FIFO, socket or device: not hashed.
    Special(Vec<u8>),
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = dir.to_vec();
    if p.last() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// Walk the directory `root`, calling `f` for each file (and error) in order.
pub fn walk(root: &[u8], follow: bool, f: &mut dyn FnMut(Entry)) {
    let mut ancestors = Vec::new();
    if let Ok(m) = std::fs::metadata(OsStr::from_bytes(root)) {
        ancestors.push((m.dev(), m.ino()));
    }
    dir(root, follow, &mut ancestors, f);
}

fn dir(path: &[u8], follow: bool, ancestors: &mut Vec<(u64, u64)>, f: &mut dyn FnMut(Entry)) {
    let rd = match std::fs::read_dir(OsStr::from_bytes(path)) {
        Ok(rd) => rd,
        Err(e) => return f(Entry::Error(path.to_vec(), e)),
    };
    let mut names = Vec::new();
    for ent in rd {
        match ent {
            Ok(e) => names.push((e.file_name().as_bytes().to_vec(), e.file_type().ok())),
            Err(e) => {
                f(Entry::Error(path.to_vec(), e));
                break;
            }
        }
    }
    names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, ft) in names {
        let p = join(path, &name);
        let ft = match ft {
            Some(t) => t,
            None => match std::fs::symlink_metadata(OsStr::from_bytes(&p)) {
                Ok(m) => m.file_type(),
                Err(e) => {
                    f(Entry::Error(p, e));
                    continue;
                }
            },
        };
        let (is_dir, is_file, id) = if ft.is_symlink() {
            if !follow {
                continue;
            }
            match std::fs::metadata(OsStr::from_bytes(&p)) {
                Ok(m) => (m.is_dir(), m.is_file(), Some((m.dev(), m.ino()))),
                Err(e) => {
                    f(Entry::Error(p, e));
                    continue;
                }
            }
        } else {
            (ft.is_dir(), ft.is_file(), None)
        };
        if is_dir {
            let id = match id {
                Some(id) => Some(id),
                None => std::fs::symlink_metadata(OsStr::from_bytes(&p))
                    .ok()
                    .map(|m| (m.dev(), m.ino())),
            };
            if let Some(id) = id {
                if ancestors.contains(&id) {
                    let e = io::Error::other("File system loop detected; not followed");
                    f(Entry::Error(p, e));
                    continue;
                }
                ancestors.push(id);
                dir(&p, follow, ancestors, f);
                ancestors.pop();
            } else {
                dir(&p, follow, ancestors, f);
            }
        } else if is_file {
            f(Entry::File(p));
        } else {
            f(Entry::Special(p));
        }
    }
}
