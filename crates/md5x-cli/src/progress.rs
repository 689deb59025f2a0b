//! A progress line on standard error (files, bytes, rate, ETA) for long jobs.
//!
//! Drawn by its own thread a few times a second, only after the job has run for a
//! while (or at once with `--progress`). Everything else that writes to a terminal
//! goes through [`Progress::quiet`], which wipes the line first, so the bar never mixes
//! with messages or output.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub struct Progress {
    files_done: AtomicU64,
    bytes_done: AtomicU64,
    total_files: AtomicU64,
    total_bytes: AtomicU64,
    sized: AtomicBool,
    start: Instant,
    drawn: Mutex<bool>,
    done: Mutex<bool>,
    wake: Condvar,
}

impl Progress {
    pub fn new() -> Arc<Self> {
        Arc::new(Progress {
            files_done: AtomicU64::new(0),
            bytes_done: AtomicU64::new(0),
            total_files: AtomicU64::new(0),
            total_bytes: AtomicU64::new(0),
            sized: AtomicBool::new(false),
            start: Instant::now(),
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

    /// Add files to the total; their sizes are summed on the drawing thread.
    pub fn add_total(&self, files: u64) {
        self.total_files.fetch_add(files, Ordering::Relaxed);
    }

    /// Start drawing: after `delay`, every 200 ms, until [`Progress::finish`].
    /// `paths` are stat'ed on this thread to learn the total size. `None` when no
    /// thread can be started (a process limit): the work goes on without the line.
    pub fn spawn(
        self: &Arc<Self>,
        paths: Vec<PathBuf>,
        delay: Duration,
    ) -> Option<std::thread::JoinHandle<()>> {
        let me = Arc::clone(self);
        let drawer = std::thread::Builder::new().spawn(move || {
            let mut total = 0u64;
            for p in &paths {
                if me.is_done() {
                    return;
                }
                total += std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            }
            me.total_bytes.store(total, Ordering::Relaxed);
            me.sized.store(true, Ordering::Relaxed);
            let mut done = me.done.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if *done {
                    return;
                }
                let elapsed = me.start.elapsed();
                let wait = if elapsed < delay {
                    delay - elapsed
                } else {
                    drop(done);
                    me.draw();
                    done = me.done.lock().unwrap_or_else(|e| e.into_inner());
                    Duration::from_millis(200)
                };
                done = me
                    .wake
                    .wait_timeout(done, wait)
                    .map(|r| r.0)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
        });
        drawer.ok()
    }

    fn is_done(&self) -> bool {
        *self.done.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn line(&self) -> String {
        let files = self.files_done.load(Ordering::Relaxed);
        let tfiles = self.total_files.load(Ordering::Relaxed);
        let bytes = self.bytes_done.load(Ordering::Relaxed);
        let tbytes = self.total_bytes.load(Ordering::Relaxed);
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        let rate = bytes as f64 / secs;
        let frac = if self.sized.load(Ordering::Relaxed) && tbytes > 0 {
            (bytes as f64 / tbytes as f64).min(1.0)
        } else if tfiles > 0 {
            (files as f64 / tfiles as f64).min(1.0)
        } else {
            0.0
        };
        const W: usize = 20;
        let fill = ((frac * W as f64) as usize).min(W);
        let bar: String = (0..W).map(|i| if i < fill { '#' } else { '-' }).collect();
        let eta = if frac > 0.0 && frac < 1.0 {
            let left = secs * (1.0 - frac) / frac;
            format!("ETA {}:{:02}", left as u64 / 60, left as u64 % 60)
        } else {
            "ETA --:--".to_string()
        };
        format!(
            "[{bar}] {files}/{tfiles} files {}/{} {}/s {eta}",
            human(bytes),
            human(tbytes),
            human(rate as u64)
        )
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
