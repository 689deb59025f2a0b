//! Single-stream kernels through the public API, on every backend this CPU runs
//! (`x86_64` included where it runs): many blocks in one call, a single block, and a
//! state carried across calls, each against RustCrypto's md-5.
mod common;

use common::{bytes, for_each_backend, hex, md5x_on, reference};
use md5x::{Backend, Md5};

#[test]
fn x86_64_backend_is_known_and_detected_where_it_runs() {
    assert_eq!("x86_64".parse::<Backend>(), Ok(Backend::X86_64));
    assert_eq!(Backend::X86_64.name(), "x86_64");
    if cfg!(all(
        target_arch = "x86_64",
        target_pointer_width = "64",
        not(miri)
    )) {
        assert!(Backend::X86_64.is_supported());
        assert!(Backend::detected() >= Backend::X86_64);
    } else {
        assert!(!Backend::X86_64.is_supported());
    }
}

#[test]
fn many_blocks_in_one_call() {
    for_each_backend(|b| {
        for (len, seed) in [(64 * 1000, 1), (64 * 4096 + 17, 2), (3 << 20, 3)] {
            let data = bytes(len, seed);
            assert_eq!(
                hex(&md5x_on(b, &data)),
                hex(&reference(&data)),
                "{len} bytes"
            );
        }
    });
}

#[test]
fn single_block() {
    for_each_backend(|b| {
        // One block of data (plus padding), and messages that end within one block.
        for len in [0usize, 1, 55, 56, 63, 64] {
            for seed in 0..20 {
                let data = bytes(len, seed);
                assert_eq!(
                    hex(&md5x_on(b, &data)),
                    hex(&reference(&data)),
                    "{len} bytes"
                );
            }
        }
        // Every block value the xorshift stream gives, one block per hasher.
        let data = bytes(64 * 200, 99);
        for block in data.chunks_exact(64) {
            assert_eq!(md5x_on(b, block), reference(block));
        }
    });
}

#[test]
fn state_carried_across_calls() {
    for_each_backend(|b| {
        let data = bytes(64 * 300 + 5, 7);
        let want = reference(&data);
        // Whole blocks per call, odd pieces, and one byte at a time at the start.
        for piece in [64usize, 128, 64 * 7, 1, 63, 65, 1000] {
            let mut h = Md5::with_backend(b);
            for chunk in data.chunks(piece) {
                h.update(chunk);
            }
            assert_eq!(<[u8; 16]>::from(h.finalize()), want, "pieces of {piece}");
        }
        // A finalize in the middle does not disturb the state.
        let mut h = Md5::with_backend(b);
        h.update(&data[..64 * 100]);
        assert_eq!(<[u8; 16]>::from(h.finalize()), reference(&data[..64 * 100]));
        h.update(&data[64 * 100..]);
        assert_eq!(<[u8; 16]>::from(h.finalize()), want);
    });
}

#[test]
fn every_backend_agrees_on_the_same_state() {
    let data = bytes(64 * 513, 11);
    let digests: Vec<_> = Backend::all_supported()
        .map(|b| (b, md5x_on(b, &data)))
        .collect();
    for (b, d) in &digests {
        assert_eq!(*d, digests[0].1, "{b} vs {}", digests[0].0);
    }
}
