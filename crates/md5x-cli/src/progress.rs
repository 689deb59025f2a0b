//! A progress line on standard error (files, bytes, rate, ETA) for long jobs.
//!
//! Drawn by its own thread a few times a second, only after the job has run for a
//! while (or at once with `--progress`). Everything else that writes to a terminal
//! goes through [`Progress::quiet`], which wipes the line first, so the bar never mixes
//! with messages or output.
//!
//! The files to hash may become known over time: hash mode gives them all at once,
//! check mode a checksum list to read ahead (a regular file) or its names a chunk at a
//! time (a stream). The drawing thread stats them between draws; the bar measures
//! bytes once every source is read to its end, and files until then.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where the drawing thread learns files and their sizes.
enum Source {
    /// Files already counted in `total_files`.
    Counted(std::vec::IntoIter<PathBuf>),
    /// Files counted as they are taken (a checksum list read ahead).
    Uncounted(Box<dyn Iterator<Item = PathBuf> + Send>),
}

pub struct Progress {
    files_done: AtomicU64,
    bytes_done: AtomicU64,
    total_files: AtomicU64,
    total_bytes: AtomicU64,
    /// Files in the totals whose size is not known ahead: named pipes, devices (a
    /// pipe's size is what it holds at that moment).
    streams: AtomicU64,
    /// Sources not yet read to their end, for the drawing thread (while there are
    /// some, the totals are not final).
    queue: Mutex<VecDeque<Source>>,
    start: Instant,
    /// When the line first shows.
    delay: Duration,
    /// Whether the drawing thread was started.
    started: AtomicBool,
    drawn: Mutex<bool>,
    done: Mutex<bool>,
    wake: Condvar,
}

impl Progress {
    /// A line that shows `delay` after it starts (see [`Progress::spawn`]).
    pub fn new(delay: Duration) -> Arc<Self> {
        Arc::new(Progress {
            files_done: AtomicU64::new(0),
            bytes_done: AtomicU64::new(0),
            total_files: AtomicU64::new(0),
            total_bytes: AtomicU64::new(0),
            streams: AtomicU64::new(0),
            queue: Mutex::new(VecDeque::new()),
            start: Instant::now(),
            delay,
            started: AtomicBool::new(false),
            drawn: Mutex::new(false),
            done: Mutex::new(false),
            wake: Condvar::new(),
        })
    }

    pub fn add_bytes(&self, n: u64) {
        self.bytes_done.fetch_add(n, Ordering::Relaxed);
    }

    pub fn add_file(&self) {
        self.files_done.fetch_add(1, Ordering::Relaxed);
    }

    /// Add files to the totals; their sizes are summed on the drawing thread.
    pub fn add_paths(self: &Arc<Self>, paths: Vec<PathBuf>) {
        if !paths.is_empty() {
            self.total_files
                .fetch_add(paths.len() as u64, Ordering::Relaxed);
            self.push(Source::Counted(paths.into_iter()));
        }
    }

    /// Add `n` streams whose sizes are not known ahead (standard input) to the totals.
    pub fn add_streams(&self, n: u64) {
        self.total_files.fetch_add(n, Ordering::Relaxed);
        self.streams.fetch_add(n, Ordering::Relaxed);
    }

    /// Add the files `list` yields to the totals, as the drawing thread takes them.
    pub fn add_list(self: &Arc<Self>, list: impl Iterator<Item = PathBuf> + Send + 'static) {
        self.push(Source::Uncounted(Box::new(list)));
    }

    fn push(self: &Arc<Self>, src: Source) {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(src);
        // (Under `done`'s lock, which the drawing thread holds from its look at the
        // queue to its wait: it cannot miss this.)
        let held = self.done.lock().unwrap_or_else(|e| e.into_inner());
        self.wake.notify_all();
        drop(held);
    }

    /// Take up to `n` files from the first source and add their sizes. Whether there
    /// may be more.
    fn size_some(&self, n: usize) -> bool {
        let Some(mut src) = self
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
        else {
            return false;
        };
        for _ in 0..n {
            let p = match &mut src {
                Source::Counted(it) => it.next(),
                Source::Uncounted(it) => {
                    let p = it.next();
                    if p.is_some() {
                        self.total_files.fetch_add(1, Ordering::Relaxed);
                    }
                    p
                }
            };
            let Some(p) = p else {
                return true;
            };
            match crate::longpath::metadata(&p) {
                Ok(m) if m.is_file() => {
                    self.total_bytes.fetch_add(m.len(), Ordering::Relaxed);
                }
                Ok(m) if !m.is_dir() => {
                    self.streams.fetch_add(1, Ordering::Relaxed);
                }
                // (A directory or a missing file: an error, no bytes.)
                _ => {}
            }
        }
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_front(src);
        true
    }

    /// Start drawing: after the delay, every 200 ms, until [`Progress::finish`],
    /// learning between draws the files that [`Progress::add_paths`] and
    /// [`Progress::add_list`] give. Called once the sources known at the start are all
    /// added, so that no line drawn takes some of them for the whole (a line drawn
    /// between a named file and a walk still to be added read "0/1 files" as final);
    /// later calls do nothing. Where no thread can be started (a process limit), the
    /// work goes on without the line.
    pub fn spawn(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::Relaxed) {
            return;
        }
        let me = Arc::clone(self);
        let delay = self.delay;
        let drawer = std::thread::Builder::new().spawn(move || {
            let mut next_draw = delay;
            loop {
                // (A few hundred stats at a time, so that a long list does not hold
                // up the line.)
                let more = me.size_some(256);
                let mut done = me.done.lock().unwrap_or_else(|e| e.into_inner());
                if *done {
                    return;
                }
                if me.start.elapsed() >= next_draw {
                    drop(done);
                    me.draw();
                    next_draw = me.start.elapsed() + Duration::from_millis(200);
                    done = me.done.lock().unwrap_or_else(|e| e.into_inner());
                    if *done {
                        return;
                    }
                }
                // Until the next draw, or sooner for `finish` or a new source.
                let idle = !more
                    && me
                        .queue
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .is_empty();
                if idle {
                    let wait = next_draw.saturating_sub(me.start.elapsed());
                    drop(
                        me.wake
                            .wait_timeout(done, wait)
                            .unwrap_or_else(|e| e.into_inner()),
                    );
                }
            }
        });
        drop(drawer);
    }

    fn is_done(&self) -> bool {
        *self.done.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The line to draw now. (On the drawing thread, between its turns at the queue:
    /// every source not read to its end is in it.)
    fn line(&self) -> String {
        let (open, listing) = {
            let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            let listing = queue
                .iter()
                .filter(|s| matches!(s, Source::Uncounted(_)))
                .count();
            (queue.len() as u64, listing as u64)
        };
        Counts {
            files: self.files_done.load(Ordering::Relaxed),
            total_files: self.total_files.load(Ordering::Relaxed),
            bytes: self.bytes_done.load(Ordering::Relaxed),
            total_bytes: self.total_bytes.load(Ordering::Relaxed),
            streams: self.streams.load(Ordering::Relaxed),
            open,
            listing,
        }
        .line(self.start.elapsed().as_secs_f64())
    }

    fn draw(&self) {
        let mut drawn = self.drawn.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_done() {
            return;
        }
        let line = self.line();
        let mut e = io::stderr().lock();
        let _ = write!(e, "\r\x1b[K{line}");
        let _ = e.flush();
        *drawn = true;
    }

    /// Run `f` (which writes to the terminal) with the bar wiped off the screen.
    pub fn quiet<R>(&self, f: impl FnOnce() -> R) -> R {
        let mut drawn = self.drawn.lock().unwrap_or_else(|e| e.into_inner());
        if *drawn {
            let mut e = io::stderr().lock();
            let _ = e.write_all(b"\r\x1b[K");
            let _ = e.flush();
            *drawn = false;
        }
        f()
    }

    /// Stop drawing and wipe the bar.
    pub fn finish(&self) {
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_all();
        self.quiet(|| ());
    }
}

/// What one drawn line shows.
struct Counts {
    files: u64,
    total_files: u64,
    bytes: u64,
    total_bytes: u64,
    streams: u64,
    open: u64,
    listing: u64,
}

impl Counts {
    /// The line after `secs` seconds: "[###---] 1/2 files 1.2 GiB/4.0 GiB 600 MiB/s
    /// ETA 0:02". A total still growing (a walk or a checksum list not yet read to its
    /// end) ends in "+", and then the ETA, which would come from it, is not given.
    fn line(&self, secs: f64) -> String {
        let secs = secs.max(1e-3);
        let (files, tfiles, bytes, tbytes) =
            (self.files, self.total_files, self.bytes, self.total_bytes);
        let rate = bytes as f64 / secs;
        // (The bytes of streams are in `bytes` but not in `tbytes`: then the files say.)
        let sized = self.open == 0 && self.streams == 0;
        let frac = if sized && tbytes > 0 {
            (bytes as f64 / tbytes as f64).min(1.0)
        } else if tfiles > 0 {
            (files as f64 / tfiles as f64).min(1.0)
        } else {
            0.0
        };
        const W: usize = 20;
        let fill = ((frac * W as f64) as usize).min(W);
        let bar: String = (0..W).map(|i| if i < fill { '#' } else { '-' }).collect();
        let eta = if frac > 0.0 && frac < 1.0 && self.listing == 0 {
            let left = secs * (1.0 - frac) / frac;
            format!("ETA {}:{:02}", left as u64 / 60, left as u64 % 60)
        } else {
            "ETA --:--".to_string()
        };
        let more = match self.streams {
            0 => String::new(),
            1 => " + 1 stream".to_string(),
            n => format!(" + {n} streams"),
        };
        let growing = |yes: bool| if yes { "+" } else { "" };
        format!(
            "[{bar}] {files}/{tfiles}{} files {}/{}{}{more} {}/s {eta}",
            growing(self.listing > 0),
            human(bytes),
            human(tbytes),
            growing(self.open > 0),
            human(rate as u64)
        )
    }
}

fn human(n: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < U.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", U[u])
    }
}

#[cfg(test)]
mod tests {
    use super::Counts;

    #[test]
    fn a_growing_total_says_so() {
        // (open sources, of them listing, streams, seconds): the line drawn.
        let cases = [
            // Every source read: final totals, the bar by bytes, an ETA.
            (
                (0, 0, 0, 1.0),
                "1/4 files 1.0 MiB/4.0 MiB 1.0 MiB/s ETA 0:03",
            ),
            // Named files not all sized yet: their count is final, their bytes not.
            (
                (1, 0, 0, 1.0),
                "1/4 files 1.0 MiB/4.0 MiB+ 1.0 MiB/s ETA 0:03",
            ),
            // A walk or a list still being read: neither is, and no ETA from them.
            (
                (1, 1, 0, 1.0),
                "1/4+ files 1.0 MiB/4.0 MiB+ 1.0 MiB/s ETA --:--",
            ),
            (
                (0, 0, 1, 2.0),
                "1/4 files 1.0 MiB/4.0 MiB + 1 stream 512.0 KiB/s ETA 0:06",
            ),
        ];
        for ((open, listing, streams, secs), want) in cases {
            let c = Counts {
                files: 1,
                total_files: 4,
                bytes: 1 << 20,
                total_bytes: 4 << 20,
                streams,
                open,
                listing,
            };
            // A quarter done, by bytes or by files.
            assert_eq!(c.line(secs), format!("[#####---------------] {want}"));
        }
    }
}
