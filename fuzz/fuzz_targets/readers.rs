//! `update_many_from` over readers that give their bytes in reads of any sizes, are
//! interrupted, fail partway or claim more bytes than their buffer holds, onto hashers
//! that already hold a prefix, on every backend: a reader that ends leaves its
//! hasher with `md-5`'s digest of prefix and message; one that fails leaves it with
//! the digest of the prefix and some start of what it gave, never more.
#![no_main]

use std::io::{self, Read};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use md5x::Md5;
use md5x_fuzz::{backends, reference, Cut, MAX_BYTES};

#[derive(Arbitrary, Debug, Clone)]
struct Spec {
    prefix: Cut,
    message: Cut,
    /// Each read's size in turn (0: that read is interrupted).
    reads: Vec<u16>,
    /// Fail (or, with `lie`, claim too many bytes) once this many bytes were given.
    fail_at: Option<u32>,
    lie: bool,
}

#[derive(Arbitrary, Debug)]
struct Input {
    own: Vec<u8>,
    specs: Vec<Spec>,
}

struct Reader<'a> {
    data: &'a [u8],
    given: usize,
    spec: &'a Spec,
    turn: usize,
    /// Interruptions in a row (at most 3, so a reader always moves on).
    interrupted: u8,
}

impl Read for Reader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(at) = self.spec.fail_at {
            if self.given >= at as usize {
                return match self.spec.lie {
                    true => Ok(buf.len() + 1),
                    false => Err(io::Error::other("planted failure")),
                };
            }
        }
        let size = match self
            .spec
            .reads
            .get(self.turn % self.spec.reads.len().max(1))
        {
            Some(0) if self.interrupted < 3 => {
                self.turn += 1;
                self.interrupted += 1;
                return Err(io::ErrorKind::Interrupted.into());
            }
            Some(&n) => usize::from(n).max(1),
            None => buf.len(),
        };
        self.turn += 1;
        self.interrupted = 0;
        let n = size.min(buf.len()).min(self.data.len() - self.given);
        buf[..n].copy_from_slice(&self.data[self.given..self.given + n]);
        self.given += n;
        Ok(n)
    }
}

fuzz_target!(|input: Input| {
    let mut total = 0;
    let specs: Vec<(&Spec, &[u8], &[u8])> = input
        .specs
        .iter()
        .take(100)
        .map(|s| (s, s.prefix.bytes(&input.own), s.message.bytes(&input.own)))
        .take_while(|(_, p, m)| {
            total += p.len() + m.len();
            total <= MAX_BYTES
        })
        .collect();
    for backend in backends() {
        let mut hashers: Vec<Md5> = specs
            .iter()
            .map(|(_, prefix, _)| {
                let mut h = Md5::with_backend(backend);
                h.update(prefix);
                h
            })
            .collect();
        let mut readers: Vec<Reader> = specs
            .iter()
            .map(|&(spec, _, data)| Reader {
                data,
                given: 0,
                spec,
                turn: 0,
                interrupted: 0,
            })
            .collect();
        let results = md5x::update_many_from(&mut hashers, &mut readers);
        assert_eq!(results.len(), specs.len());
        for (i, (((spec, prefix, data), h), (r, result))) in specs
            .iter()
            .zip(&hashers)
            .zip(readers.iter().zip(&results))
            .enumerate()
        {
            let fed = h.len() as usize - prefix.len();
            let whole = [*prefix, &data[..fed.min(data.len())]].concat();
            assert_eq!(
                h.finalize(),
                reference(&whole),
                "{backend}: reader {i}'s hasher"
            );
            match result {
                Ok(()) => assert_eq!(fed, data.len(), "{backend}: reader {i} ended early"),
                Err(e) => {
                    assert!(
                        fed <= r.given,
                        "{backend}: reader {i}: hashed more than given"
                    );
                    let kind = match spec.lie {
                        true => io::ErrorKind::InvalidData,
                        false => io::ErrorKind::Other,
                    };
                    assert_eq!(e.kind(), kind, "{backend}: reader {i}: {e}");
                }
            }
        }
    }
});
