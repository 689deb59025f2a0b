//! `Lanes` driven by any sequence of opens, feeds, closes, abandoned slots, flushes
//! and reads of the completions, on every backend: each closed input completes
//! exactly once with `md-5`'s digest of what it was fed; an abandoned one never does.
#![no_main]

use std::collections::HashMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use md5x::{Digest, Lanes, Slot};
use md5x_fuzz::{backends, pick, Cut, Reference, MAX_BYTES};

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    Open,
    /// Feed the open slot at this index (modulo those open).
    Feed {
        slot: u8,
        bytes: Cut,
    },
    Close {
        slot: u8,
    },
    /// Drop the slot without closing it.
    Abandon {
        slot: u8,
    },
    Flush,
    /// Read this many completions (0: all there are).
    Collect {
        most: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    own: Vec<u8>,
    ops: Vec<Op>,
}

/// Check completions against the closed inputs' digests, removing them.
fn collect(lanes: &mut Lanes<u32>, closed: &mut HashMap<u32, Digest>, most: usize) {
    let most = if most == 0 { usize::MAX } else { most };
    let backend = lanes.backend();
    for (token, digest) in lanes.completions().take(most) {
        let want = closed.remove(&token);
        assert_eq!(want, Some(digest), "{backend}: completion of input {token}");
    }
}

fuzz_target!(|input: Input| {
    for backend in backends() {
        let mut lanes = Lanes::with_backend(backend);
        let mut open: Vec<(Slot, u32, Reference)> = Vec::new();
        let mut closed: HashMap<u32, Digest> = HashMap::new();
        let mut next = 0u32;
        let mut fed = 0;
        for &op in input.ops.iter().take(2000) {
            match op {
                Op::Open => {
                    open.push((lanes.open(next), next, Reference::default()));
                    next += 1;
                }
                Op::Feed { slot, bytes } if !open.is_empty() => {
                    let data = bytes.bytes(&input.own);
                    fed += data.len();
                    if fed > MAX_BYTES {
                        break;
                    }
                    let i = pick(slot, open.len());
                    let (s, _, r) = &mut open[i];
                    lanes.feed(s, data);
                    r.update(data);
                }
                Op::Close { slot } if !open.is_empty() => {
                    let (s, token, r) = open.swap_remove(pick(slot, open.len()));
                    closed.insert(token, r.digest());
                    lanes.close(s);
                }
                Op::Abandon { slot } if !open.is_empty() => {
                    drop(open.swap_remove(pick(slot, open.len())));
                }
                Op::Flush => {
                    lanes.flush();
                    // Every closed input is complete; abandoned ones are freed.
                    assert_eq!(
                        lanes.pending(),
                        open.len(),
                        "{backend}: pending once flushed"
                    );
                }
                Op::Collect { most } => collect(&mut lanes, &mut closed, usize::from(most)),
                _ => {}
            }
        }
        lanes.flush();
        collect(&mut lanes, &mut closed, 0);
        assert!(
            closed.is_empty(),
            "{backend}: inputs closed, never completed: {closed:?}"
        );
        assert_eq!(
            lanes.pending(),
            open.len(),
            "{backend}: pending at the end of the ops"
        );
        // Then close the rest: they complete too.
        for (s, token, r) in open.drain(..) {
            closed.insert(token, r.digest());
            lanes.close(s);
        }
        lanes.flush();
        collect(&mut lanes, &mut closed, 0);
        assert!(
            closed.is_empty(),
            "{backend}: the last inputs never completed: {closed:?}"
        );
        assert_eq!(lanes.pending(), 0, "{backend}: pending at the end");
    }
});
