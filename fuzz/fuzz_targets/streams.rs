//! One message fed in pieces: `Md5` and `ParMd5` on every backend, the one-shot
//! functions, a clone taken midway, and an S3 ETag of one part or none, against
//! `md-5` and the modes' definition.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use md5x::chains::{self, Etag, ParMd5};
use md5x::Md5;
use md5x_fuzz::{backends, md5_par_reference, pieces, reference, Cut, Reference};

#[derive(Arbitrary, Debug)]
struct Input {
    own: Vec<u8>,
    message: Cut,
    sizes: Vec<u16>,
    /// Which piece a clone is taken after.
    clone_at: u16,
    /// 4, 8 or 16 chains.
    k: u8,
}

fuzz_target!(|input: Input| {
    let data = input.message.bytes(&input.own);
    let pieces = pieces(data, &input.sizes);
    let want = reference(data);
    assert_eq!(md5x::md5(data), want, "md5x::md5, {} bytes", data.len());
    let k = [4, 8, 16][usize::from(input.k) % 3];
    let want_par = md5_par_reference(data, k);
    assert_eq!(
        chains::md5_par(data, k).unwrap(),
        want_par,
        "md5_par, K = {k}"
    );
    let clone_at = usize::from(input.clone_at) % pieces.len();

    for backend in backends() {
        let mut h = Md5::with_backend(backend);
        let mut par = ParMd5::with_backend(k, backend).unwrap();
        let mut so_far = Reference::default();
        for (i, piece) in pieces.iter().enumerate() {
            h.update(piece);
            par.update(piece);
            so_far.update(piece);
            if i == clone_at {
                // A clone goes on alone; the original is unchanged by it.
                let mut c = h.clone();
                assert_eq!(c.finalize(), so_far.digest(), "{backend}: a clone's digest");
                c.update(b"more");
                assert_eq!(h.finalize(), so_far.digest(), "{backend}: after the clone");
            }
        }
        assert_eq!(h.len(), data.len() as u64);
        assert_eq!(
            h.finalize(),
            want,
            "{backend}: Md5 in {} pieces",
            pieces.len()
        );
        assert_eq!(par.finalize(), want_par, "{backend}: ParMd5, K = {k}");
        h.reset();
        assert_eq!(h.finalize(), reference(b""), "{backend}: after reset");
    }

    // S3 ETags of inputs this small: a single PUT below the threshold, one part at it.
    let min = chains::limits::MIN_PART_SIZE;
    let size = data.len() as u64;
    for threshold in [0, size, size + 1, min] {
        let mut e = Etag::new(min, threshold).unwrap();
        for piece in &pieces {
            e.update(piece);
        }
        let tag = e.finalize().unwrap();
        if size < threshold {
            assert_eq!((tag.digest(), tag.parts()), (want, None), "single PUT");
        } else {
            let outer = reference(want.as_ref());
            assert_eq!((tag.digest(), tag.parts()), (outer, Some(1)), "one part");
        }
        assert_eq!(chains::s3_etag(data, min, threshold).unwrap(), tag);
    }
});
