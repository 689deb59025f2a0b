//! `-r`: the files under a directory, depth first, each directory's entries sorted by
//! the bytes of their names, so the output is the same on every run and machine.
//!
//! Symbolic links met in the walk are skipped unless `-L` (then a link to a directory
//! is walked, with loop detection); the caller counts them and says how many. FIFOs,
//! sockets and devices met in the walk are skipped (reading a FIFO could block
//! forever), each one reported so that nothing is left out unsaid. Errors are reported
//! per entry and the walk goes on.

use std::collections::VecDeque;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

use crate::longpath::{self, as_path};

pub enum Entry {
    File(Vec<u8>),
    Error(Vec<u8>, io::Error),
    /// A FIFO, socket or device: not hashed.
    Special(Vec<u8>),
    /// A symbolic link, not followed (no `-L`): not hashed.
    Link,
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = dir.to_vec();
    if p.last() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// The walk of the directory `root`: its files (and errors, and special files) in
/// order, one directory listed at a time, so that a tree of any size is walked in the
/// memory of its deepest path's directories (their listings, and one name: a tree
/// 1,000 levels deep of 200-byte names costs 200 KB of names, not a name per level).
/// Each directory's entries are read whole and sorted when the walk enters it.
pub struct Walk {
    follow: bool,
    /// The directories entered and not yet left, innermost last.
    stack: Vec<Level>,
    /// The name of the innermost directory entered; each level's name is the start of
    /// it.
    cur: Vec<u8>,
    /// (device, inode) of the directories on the path walked: a directory met again
    /// through a link (`-L`) is a loop.
    ancestors: Vec<(u64, u64)>,
    /// What to give before going on: an error met entering a directory.
    queued: VecDeque<Entry>,
    /// The root, until the first look (nothing is read before).
    root: Option<Vec<u8>>,
}

struct Level {
    /// The length of `cur` before this level was entered: its parent's name.
    parent_len: usize,
    names: std::vec::IntoIter<(Vec<u8>, Option<std::fs::FileType>)>,
    /// Whether entering it pushed it onto `ancestors`.
    counted: bool,
}

impl Walk {
    pub fn new(root: &[u8], follow: bool) -> Walk {
        Walk {
            follow,
            stack: Vec::new(),
            cur: Vec::new(),
            ancestors: Vec::new(),
            queued: VecDeque::new(),
            root: Some(root.to_vec()),
        }
    }

    /// List the directory `path` (the current directory's name and one more), to be
    /// walked next.
    fn enter(&mut self, path: Vec<u8>, counted: bool) {
        let rd = match longpath::read_dir(as_path(&path)) {
            Ok(rd) => rd,
            Err(e) => {
                if counted {
                    self.ancestors.pop();
                }
                self.queued.push_back(Entry::Error(path, e));
                return;
            }
        };
        let mut names = Vec::new();
        for ent in rd {
            match ent {
                Ok(e) => names.push((e.file_name().as_bytes().to_vec(), e.file_type().ok())),
                Err(e) => {
                    self.queued.push_back(Entry::Error(path.clone(), e));
                    break;
                }
            }
        }
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        self.stack.push(Level {
            parent_len: self.cur.len(),
            names: names.into_iter(),
            counted,
        });
        self.cur = path;
    }
}

impl Iterator for Walk {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        if let Some(root) = self.root.take() {
            if let Ok(m) = longpath::metadata(as_path(&root)) {
                self.ancestors.push((m.dev(), m.ino()));
            }
            self.enter(root, false);
        }
        loop {
            if let Some(e) = self.queued.pop_front() {
                return Some(e);
            }
            let level = self.stack.last_mut()?;
            let Some((name, ft)) = level.names.next() else {
                if let Some(done) = self.stack.pop() {
                    self.cur.truncate(done.parent_len);
                    if done.counted {
                        self.ancestors.pop();
                    }
                }
                continue;
            };
            let p = join(&self.cur, &name);
            let ft = match ft {
                Some(t) => t,
                None => match longpath::symlink_metadata(as_path(&p)) {
                    Ok(m) => m.file_type(),
                    Err(e) => return Some(Entry::Error(p, e)),
                },
            };
            let (is_dir, is_file, id) = if ft.is_symlink() {
                if !self.follow {
                    return Some(Entry::Link);
                }
                match longpath::metadata(as_path(&p)) {
                    Ok(m) => (m.is_dir(), m.is_file(), Some((m.dev(), m.ino()))),
                    Err(e) => return Some(Entry::Error(p, e)),
                }
            } else {
                (ft.is_dir(), ft.is_file(), None)
            };
            if is_dir {
                let id = match id {
                    Some(id) => Some(id),
                    None => longpath::symlink_metadata(as_path(&p))
                        .ok()
                        .map(|m| (m.dev(), m.ino())),
                };
                match id {
                    Some(id) if self.ancestors.contains(&id) => {
                        let e = io::Error::other("File system loop detected; not followed");
                        return Some(Entry::Error(p, e));
                    }
                    Some(id) => {
                        self.ancestors.push(id);
                        self.enter(p, true);
                    }
                    None => self.enter(p, false),
                }
            } else if is_file {
                return Some(Entry::File(p));
            } else {
                return Some(Entry::Special(p));
            }
        }
    }
}
