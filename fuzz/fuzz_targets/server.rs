//! `Server` and its `StreamHasher`s driven by any sequence of updates, digests taken
//! midway, resets, clones of the server handle and streams dropped with a batch still
//! out, on one thread, on every backend and batch size from 4 KiB: each stream's
//! digest is `md-5`'s of what it was fed.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use md5x::{Server, StreamHasher};
use md5x_fuzz::{backends, pick, Cut, Reference, MAX_BYTES};

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    New,
    /// Feed the stream at this index (modulo those live).
    Update {
        stream: u8,
        bytes: Cut,
    },
    Digest {
        stream: u8,
    },
    Reset {
        stream: u8,
    },
    Drop {
        stream: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    own: Vec<u8>,
    /// Batch size in KiB (clamped by the server to 4 KiB and up).
    batch_kib: u8,
    ops: Vec<Op>,
}

fn check(h: &StreamHasher, r: &Reference, what: &str) {
    assert_eq!(h.finalize(), r.digest(), "{}: {what}", h.server().backend());
}

fuzz_target!(|input: Input| {
    for backend in backends() {
        let server = Server::with_config(backend, usize::from(input.batch_kib) << 10);
        let mut live: Vec<(StreamHasher, Reference)> = Vec::new();
        let mut fed = 0;
        for &op in input.ops.iter().take(2000) {
            match op {
                Op::New => live.push((server.hasher(), Reference::default())),
                Op::Update { stream, bytes } if !live.is_empty() => {
                    let data = bytes.bytes(&input.own);
                    fed += data.len();
                    if fed > MAX_BYTES {
                        break;
                    }
                    let i = pick(stream, live.len());
                    let (h, r) = &mut live[i];
                    h.update(data);
                    r.update(data);
                    assert_eq!(h.len(), r.len(), "{backend}: len");
                }
                Op::Digest { stream } if !live.is_empty() => {
                    let (h, r) = &live[pick(stream, live.len())];
                    check(h, r, "digest midway");
                }
                Op::Reset { stream } if !live.is_empty() => {
                    let i = pick(stream, live.len());
                    let (h, r) = &mut live[i];
                    h.reset();
                    *r = Reference::default();
                    assert!(h.is_empty());
                }
                Op::Drop { stream } if !live.is_empty() => {
                    drop(live.swap_remove(pick(stream, live.len())));
                }
                _ => {}
            }
        }
        for (h, r) in &live {
            check(h, r, "digest at the end");
        }
    }
});
