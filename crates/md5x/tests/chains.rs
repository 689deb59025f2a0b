//! MD5-P(K) and S3 ETags against docs/modes.md's vectors and an independent Python
//! reference (hashlib), over many lengths and random splits.

mod common;

use common::Choppy;

use md5x::chains::{md5_par, part_count, s3_etag, ETag, Etag, EtagError, ParMd5};
use rand::{Rng, SeedableRng};

/// docs/modes.md's message bytes: byte[i] = (i * 31 + seed) mod 251.
fn message(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 31 + seed) % 251) as u8).collect()
}

#[test]
fn md5_par_vectors() {
    let cases = common::doc_vectors::par_vectors();
    common::for_each_backend(|b| {
        for &(k, len, want) in &cases {
            let mut h = ParMd5::with_backend(k, b).unwrap();
            h.update(message(len, 0));
            assert_eq!(h.finalize().to_string(), want, "{b}: P{k} len {len}");
        }
    });
    for &(k, len, want) in &cases {
        assert_eq!(
            md5_par(&message(len, 0), k).unwrap().to_string(),
            want,
            "P{k} len {len}"
        );
        // Reset forgets what was fed, buffered bytes too.
        let mut h = ParMd5::new(k).unwrap();
        h.update(message(len + 3, 7));
        h.reset();
        h.update(message(len, 0));
        assert_eq!(h.finalize().to_string(), want, "reset, P{k} len {len}");
    }
}

#[test]
fn etag_vectors() {
    for (part, len, want) in common::doc_vectors::etag_vectors() {
        let tag = s3_etag(&message(len, 0), part, part).unwrap();
        assert_eq!(tag.to_string(), want, "len {len}");
        assert_eq!(want.parse::<ETag>().unwrap(), tag);
    }
}

/// The definition, executed by Python's hashlib (docs/modes.md's reference code).
#[test]
fn md5_par_against_python_reference() {
    let lens: Vec<usize> = (0..300)
        .chain([1000, 1023, 1024, 1025, 4096, 65537])
        .collect();
    let script = format!(
        "import hashlib,sys\n\
         def par(d,k):\n\
         \x20   c=[hashlib.md5() for _ in range(k)]\n\
         \x20   for i in range(0,len(d),64): c[(i//64)%k].update(d[i:i+64])\n\
         \x20   return hashlib.md5(b''.join(x.digest() for x in c)).hexdigest()\n\
         for n in {lens:?}:\n\
         \x20   d=bytes((i*31+7)%251 for i in range(n))\n\
         \x20   print(' '.join(par(d,k) for k in (4,8,16)))\n"
    );
    let Some(text) = common::python3("md5_par_against_python_reference", &script) else {
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), lens.len());
    common::for_each_backend(|b| {
        for (len, line) in lens.iter().zip(&lines) {
            let data = message(*len, 7);
            for (k, want) in [4, 8, 16].into_iter().zip(line.split(' ')) {
                let mut h = ParMd5::with_backend(k, b).unwrap();
                h.update(&data);
                assert_eq!(h.finalize().to_string(), want, "{b}: P{k} len {len}");
            }
        }
    });
}

/// Large inputs cross the lane kernels' slabs (2 MiB) and, with K = 16 on narrow
/// kernels, run several batches of chains: every backend against the scalar
/// definition (K plain MD5 chains over the blocks dealt round-robin).
#[test]
fn md5_par_large_inputs_every_backend() {
    let data = common::bytes(5 * (1 << 20) + 4321, 77);
    for k in [4, 8, 16] {
        let mut chains: Vec<md5x::Md5> = (0..k)
            .map(|_| md5x::Md5::with_backend(md5x::Backend::Portable))
            .collect();
        for (i, block) in data.chunks(64).enumerate() {
            chains[i % k].update(block);
        }
        let mut outer = md5x::Md5::new();
        chains
            .iter()
            .for_each(|c| outer.update(c.finalize().as_bytes()));
        let want = outer.finalize();
        common::for_each_backend(|b| {
            // One shot, then unaligned and in uneven pieces.
            let mut h = ParMd5::with_backend(k, b).unwrap();
            h.update(&data);
            assert_eq!(h.finalize(), want, "{b}: P{k}");
            let mut h = ParMd5::with_backend(k, b).unwrap();
            for piece in data.chunks(1_000_003) {
                h.update(piece);
            }
            assert_eq!(h.finalize(), want, "{b}: P{k} in pieces");
        });
    }
}

/// As `every_kept_length_and_piece_size` in `vectors.rs`, for `ParMd5`: every fill of
/// its short block met by every piece size up to two blocks and a bit.
#[test]
fn par_every_kept_length_and_piece_size() {
    let data = common::bytes(64 + 3 * 131 + 7, 12);
    for kept in 0..64 {
        for piece in 1..=131 {
            let msg = &data[..kept + 3 * piece + 7];
            let mut h = ParMd5::new(4).unwrap();
            h.update(&msg[..kept]);
            for chunk in msg[kept..].chunks(piece) {
                h.update(chunk);
            }
            assert_eq!(
                h.finalize(),
                md5_par(msg, 4).unwrap(),
                "{kept} bytes kept, then pieces of {piece}"
            );
        }
    }
}

#[test]
fn streaming_splits_match_one_shot() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let data = common::bytes(200_000, 21);
    for k in [4, 8, 16] {
        for _ in 0..40 {
            let len = rng.random_range(0..data.len());
            let msg = &data[..len];
            let mut h = ParMd5::new(k).unwrap();
            let mut at = 0;
            while at < len {
                let n = rng.random_range(0..=3000).min(len - at);
                h.update(&msg[at..at + n]);
                at += n;
            }
            assert_eq!(h.finalize(), md5_par(msg, k).unwrap(), "P{k} len {len}");
            // Byte-oriented chain assignment, recomputed the slow way.
            let mut chains: Vec<md5x::Md5> = (0..k).map(|_| md5x::Md5::new()).collect();
            for (i, block) in msg.chunks(64).enumerate() {
                chains[i % k].update(block);
            }
            let mut outer = md5x::Md5::new();
            chains
                .iter()
                .for_each(|c| outer.update(c.finalize().as_bytes()));
            assert_eq!(h.finalize(), outer.finalize(), "P{k} len {len}");
        }
    }
}

#[test]
fn invalid_k_is_an_error() {
    for k in [0, 1, 2, 3, 5, 12, 32] {
        assert!(ParMd5::new(k).is_err());
        assert!(md5_par(b"x", k)
            .unwrap_err()
            .to_string()
            .contains("4, 8 or 16"));
    }
}

/// ETags against the definition computed with plain MD5, for sizes around part
/// boundaries and thresholds, fed in random pieces.
#[test]
fn etag_streaming_against_definition() {
    let p = 5u64 << 20;
    let data = common::bytes((3 * p + 100) as usize, 22);
    let mut rng = rand::rngs::StdRng::seed_from_u64(43);
    for (threshold, len) in [
        (p, 0),
        (p, 1),
        (p, p - 1),
        (p, p),
        (p, p + 1),
        (p, 2 * p),
        (p, 3 * p + 100),
        (2 * p + 7, 2 * p + 6),
        (2 * p + 7, 2 * p + 7),
        (0, 0),
        (1, 1),
        (u64::MAX, 3 * p),
    ] {
        let msg = &data[..len as usize];
        let want = match part_count(len, p, threshold) {
            None => md5x::md5(msg).to_string(),
            Some(n) => {
                let mut outer = md5x::Md5::new();
                if len == 0 {
                    outer.update(md5x::md5(b"").as_bytes());
                }
                for part in msg.chunks(p as usize) {
                    outer.update(md5x::md5(part).as_bytes());
                }
                format!("{}-{n}", outer.finalize())
            }
        };
        let mut e = Etag::new(p, threshold).unwrap();
        let mut at = 0;
        while at < msg.len() {
            let n = rng.random_range(0..=(3 << 20)).min(msg.len() - at);
            e.update(&msg[at..at + n]);
            at += n;
        }
        assert_eq!(
            e.finalize().unwrap().to_string(),
            want,
            "threshold {threshold} len {len}"
        );
    }
}

#[test]
fn etag_limits() {
    assert_eq!(
        Etag::new((5 << 20) - 1, 8 << 20).unwrap_err(),
        EtagError::PartSize((5 << 20) - 1)
    );
    assert!(Etag::new((5 << 30) + 1, 8 << 20).is_err());
    assert!(Etag::new(5 << 30, 8 << 20).is_ok());
    // 10,001 parts: an error, never a wrong ETag. Check the arithmetic without
    // hashing 50 GB: part_count is what finalize uses.
    assert_eq!(
        part_count(10_000 * (5 << 20), 5 << 20, 8 << 20),
        Some(10_000)
    );
    assert_eq!(
        part_count(10_000 * (5 << 20) + 1, 5 << 20, 8 << 20),
        Some(10_001)
    );
    let msg = EtagError::TooManyParts {
        parts: 10_001,
        part_size: 5 << 20,
    }
    .to_string();
    assert!(msg.contains("at most 10000 parts"), "{msg}");
}

/// A sparse file of `size` bytes through `etag_file` and through `etag_files` beside a
/// small file (whose ETag is checked: it is hashed all the same): the two results.
/// Unless `readable`, `etag_files` gets a handle opened to write only: any read of it
/// fails (EBADF), so a file read for nothing shows as another error, where a read
/// through would end in the same one (a single PUT's size is checked again at its
/// end). (`etag_file` opens the path itself: there only the answer can be checked.)
fn sparse_etags(
    tag: &str,
    size: u64,
    part_size: u64,
    threshold: u64,
    readable: bool,
) -> [std::io::Result<ETag>; 2] {
    use md5x::chains::{etag_file, etag_files};
    let dir = common::scratch(tag);
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(size).unwrap();
    // (The write handle closed when another is opened: Windows removes no open file.)
    let f = match readable {
        true => {
            drop(f);
            std::fs::File::open(&big).unwrap()
        }
        false => f,
    };
    std::fs::write(dir.join("small"), b"abc").unwrap();
    let small = std::fs::File::open(dir.join("small")).unwrap();
    let by_path = etag_file(&big, part_size, threshold, 0);
    let mut side_by_side = etag_files(&[&f, &small], part_size, threshold);
    assert_eq!(
        side_by_side[1].as_ref().unwrap(),
        &ETag::single(md5x::md5(b"abc"))
    );
    // (Closed first: Windows removes no open file.)
    drop((f, small));
    std::fs::remove_dir_all(&dir).unwrap();
    [by_path, side_by_side.swap_remove(0)]
}

/// `etag_file` and `etag_files` refuse a sparse file of `size` bytes with `want` at
/// `part_size` and each of `thresholds`, said before any of it is read (a file that
/// is read through to its end would take minutes and give an ETag).
fn refused_unread(tag: &str, size: u64, part_size: u64, thresholds: &[u64], want: &EtagError) {
    let is_want = |e: &std::io::Error| {
        e.kind() == std::io::ErrorKind::InvalidInput
            && e.get_ref().and_then(|x| x.downcast_ref::<EtagError>()) == Some(want)
    };
    for &threshold in thresholds {
        for got in sparse_etags(tag, size, part_size, threshold, false) {
            assert!(matches!(&got, Err(e) if is_want(e)), "{got:?}");
        }
    }
}

/// A single PUT takes at most 5 GiB: a larger file below the threshold has no ETag S3
/// could have given it (its real one is `hex-N`), so it is an error, said before any
/// of it is read; 5 GiB itself is not refused.
#[test]
fn etag_single_put_over_5_gib_is_an_error() {
    use md5x::chains::limits;
    let size = limits::MAX_PUT_SIZE + 1;
    let want = EtagError::PutTooLarge(size);
    refused_unread("put", size, 8 << 20, &[6 << 30, u64::MAX], &want);
    // At the threshold it is a multipart upload, as it would be (not read here).
    assert_eq!(part_count(size, 8 << 20, size), Some(641));
    let msg = want.to_string();
    assert!(
        msg.contains("single PUT") && msg.contains("5368709120"),
        "{msg}"
    );
}

/// More than 10,000 parts (a file of 50 GB in 5 MiB parts): an error for that file,
/// said before any of it is read.
#[test]
fn etag_over_10000_parts_is_an_error() {
    use md5x::chains::limits;
    let part = limits::MIN_PART_SIZE;
    let want = EtagError::TooManyParts {
        parts: limits::MAX_PARTS + 1,
        part_size: part,
    };
    refused_unread(
        "parts",
        limits::MAX_PARTS * part + 1,
        part,
        &[8 << 20],
        &want,
    );
}

#[test]
fn etag_parsing() {
    let hex = "b92c0b7f108a97d63e0b49bc2bd039d8";
    assert_eq!(hex.parse::<ETag>().unwrap().parts(), None);
    assert_eq!(format!("\"{hex}\"").parse::<ETag>().unwrap().parts(), None);
    assert_eq!(
        format!("{hex}-10000").parse::<ETag>().unwrap().parts(),
        Some(10000)
    );
    assert_eq!(
        format!("{}-2", hex.to_uppercase())
            .parse::<ETag>()
            .unwrap()
            .to_string(),
        format!("{hex}-2")
    );
    // Display pads to a width, as Digest's does.
    let t: ETag = format!("{hex}-12").parse().unwrap();
    assert_eq!(
        format!("{t:>40}|{t:<38}|"),
        format!("     {hex}-12|{hex}-12   |")
    );
    assert_eq!(
        format!("{:^36}", ETag::single(md5x::md5(b""))),
        format!("  {}  ", md5x::md5(b""))
    );
    assert_eq!(
        ETag::multipart(md5x::md5(b""), u32::MAX).to_string(),
        format!("{}-4294967295", md5x::md5(b""))
    );
    for bad in [
        String::new(),
        format!("{hex}-"),
        format!("{hex}-0"),
        format!("{hex}-10001"),
        format!("{hex}-+3"),
        format!("{hex}-03"),
        format!("{hex}-00"),
        format!("{hex}-010000"),
        format!("{hex}-3x"),
        format!("\"{hex}"),
        hex[1..].to_string(),
        format!("{hex} "),
    ] {
        assert!(bad.parse::<ETag>().is_err(), "{bad:?}");
    }
}

#[test]
fn etag_file_matches_streaming_at_any_thread_count() {
    let dir = common::scratch("etag");
    std::fs::create_dir_all(&dir).unwrap();
    let p = 5u64 << 20;
    for (i, len) in [0u64, 1, p - 1, p, p + 1, 3 * p + 4097]
        .into_iter()
        .enumerate()
    {
        let data = common::bytes(len as usize, 30 + i as u64);
        let path = dir.join(format!("f{i}"));
        std::fs::write(&path, &data).unwrap();
        let want = s3_etag(&data, p, p).unwrap();
        for threads in [0, 1, 2, 3] {
            let got = md5x::chains::etag_file(&path, p, p, threads).unwrap();
            assert_eq!(got, want, "len {len} threads {threads}");
        }
    }
    let err = md5x::chains::etag_file(dir.join("f0"), 1 << 20, 0, 0).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("outside S3's limits"), "{err}");
    let missing = md5x::chains::etag_file(dir.join("nope"), p, p, 0).unwrap_err();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The lane path of `etag_file`: runs of full-size parts side by side (fewer parts
/// than lanes, exactly a kernel's lanes, more than one kernel's worth), part sizes
/// that leave a partial block (5 MiB + 13), a short last part or none; every backend
/// and several thread counts against the streaming definition.
#[test]
fn etag_file_lanes_every_backend() {
    let dir = common::scratch("etag-lanes");
    std::fs::create_dir_all(&dir).unwrap();
    let p = (5u64 << 20) + 13;
    let data = common::bytes(17 * p as usize + 100, 91);
    for (i, len) in [2 * p, 3 * p + 1, 8 * p, 17 * p, 17 * p + 100]
        .into_iter()
        .enumerate()
    {
        let data = &data[..len as usize];
        let path = dir.join(format!("g{i}"));
        std::fs::write(&path, data).unwrap();
        let want = s3_etag(data, p, p).unwrap();
        common::for_each_backend(|b| {
            for threads in [1, 2, 5] {
                let got =
                    md5x::chains::etag_file_with(b, &path, p, p, threads, &|_| Ok(())).unwrap();
                assert_eq!(got, want, "{b}: len {len} threads {threads}");
            }
        });
        std::fs::remove_file(&path).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What is not a regular file has no size to go by (a FIFO's is 0): `etag_file` reads
/// it through to its end, giving the ETag of what was written into it, not the empty
/// object's. Three parts and a short one through a FIFO, on every backend; and a
/// directory is an error, never an ETag.
#[cfg(unix)]
#[test]
fn etag_file_reads_a_fifo_to_its_end() {
    let dir = common::scratch("etag-fifo");
    std::fs::create_dir_all(&dir).unwrap();
    let p = 5u64 << 20;
    let data = common::bytes(3 * p as usize + 4097, 17);
    let want = s3_etag(&data, p, p).unwrap();
    assert_eq!(want.parts(), Some(4));
    common::for_each_backend(|b| {
        let fifo = dir.join(format!("fifo-{b}"));
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", fifo.display());
        std::thread::scope(|s| {
            let writer = s.spawn(|| std::fs::write(&fifo, &data));
            let got = md5x::chains::etag_file_with(b, &fifo, p, p, 0, &|_| Ok(())).unwrap();
            writer.join().unwrap().unwrap();
            assert_eq!(got, want, "{b}");
        });
        std::fs::remove_file(&fifo).unwrap();
    });
    let err = md5x::chains::etag_file(&dir, p, p, 0).unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("directory"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A progress callback that lets `limit` bytes be read, then says to stop (with
/// `kind`), and counts the reads after that in `after`. Reads that go on past 1,000
/// of those calls ignored it: it panics so that the test ends.
fn stop_after(
    limit: u64,
    kind: std::io::ErrorKind,
    after: &std::sync::atomic::AtomicUsize,
) -> impl Fn(u64) -> std::io::Result<()> + Sync + '_ {
    use std::sync::atomic::{AtomicU64, Ordering};
    let read = AtomicU64::new(0);
    move |n| {
        if read.fetch_add(n, Ordering::Relaxed) + n <= limit {
            return Ok(());
        }
        let calls = after.fetch_add(1, Ordering::Relaxed) + 1;
        assert!(
            calls < 1000,
            "the reads went on after progress said to stop"
        );
        Err(std::io::Error::new(kind, "stop here"))
    }
}

/// An error from the progress callback stops the reads, whoever makes them: the
/// threads of `etag_file_with` (on a file of 7 parts, 1 to 4 threads), the part
/// readers of `etag_files_with`, and both on `/dev/zero`, which has no end. Each
/// returns that error, after at most one more read per thread or part; an
/// `Interrupted` one comes back as `Other` (read loops retry `Interrupted`, and would
/// lose the bytes just read).
#[test]
fn a_progress_error_stops_the_reads() {
    use std::io::ErrorKind;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = common::scratch("etag-stop");
    std::fs::create_dir_all(&dir).unwrap();
    let p = 5u64 << 20;
    let path = dir.join("seven");
    std::fs::write(&path, common::bytes(6 * p as usize + 100, 5)).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let b = md5x::Backend::active();
    for (kind, want) in [
        (ErrorKind::Other, ErrorKind::Other),
        (ErrorKind::Interrupted, ErrorKind::Other),
        (ErrorKind::TimedOut, ErrorKind::TimedOut),
    ] {
        for threads in 1..=4 {
            let after = AtomicUsize::new(0);
            let err =
                md5x::chains::etag_file_with(b, &path, p, p, threads, &stop_after(p, kind, &after))
                    .unwrap_err();
            assert_eq!(
                (err.kind(), err.to_string().contains("stop here")),
                (want, true),
                "{threads} threads: {err}"
            );
            let after = after.into_inner();
            assert!(
                (1..=threads).contains(&after),
                "{threads} threads: {after} reads after the stop"
            );
        }
        let after = AtomicUsize::new(0);
        let tags =
            md5x::chains::etag_files_with(b, &[&file, &file], p, p, &stop_after(p, kind, &after));
        for tag in tags {
            let err = tag.unwrap_err();
            assert_eq!(
                (err.kind(), err.to_string().contains("stop here")),
                (want, true),
                "{err}"
            );
        }
        let after = after.into_inner();
        assert!(
            (2..=14).contains(&after),
            "{after} reads after the stop, of 14 parts"
        );
    }
    let zero = std::path::Path::new("/dev/zero");
    if zero.exists() {
        let after = AtomicUsize::new(0);
        let err = md5x::chains::etag_file_with(
            b,
            zero,
            p,
            p,
            0,
            &stop_after(3 * p, ErrorKind::Other, &after),
        )
        .unwrap_err();
        assert!(err.to_string().contains("stop here"), "{err}");
        assert_eq!(after.load(Ordering::Relaxed), 1);
        let f = std::fs::File::open(zero).unwrap();
        let after = AtomicUsize::new(0);
        let tags = md5x::chains::etag_files_with(
            b,
            &[&f],
            p,
            p,
            &stop_after(3 * p, ErrorKind::Other, &after),
        );
        assert!(
            tags[0]
                .as_ref()
                .is_err_and(|e| e.to_string().contains("stop here")),
            "{tags:?}"
        );
        assert_eq!(after.into_inner(), 1);
    } else {
        eprintln!("a_progress_error_stops_the_reads: no /dev/zero here; only regular files ran");
    }
    drop(file); // Windows removes no open file
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `etag_files`: many files at once, each against `s3_etag` of its bytes, on every
/// backend: sizes on both sides of the threshold and of the part size, part sizes that
/// leave a partial block, more parts in all than a lane set, a threshold of 0; a
/// directory and settings outside S3's limits are errors, never ETags.
#[test]
fn etag_files_matches_one_by_one_every_backend() {
    let dir = common::scratch("etag-files");
    std::fs::create_dir_all(&dir).unwrap();
    let p = (5u64 << 20) + 13;
    let data = common::bytes(12 * p as usize + 200, 57);
    let lens = [
        0,
        1,
        55,
        64,
        4097,
        p - 1,
        p,
        p + 1,
        3 * p + 4097,
        12 * p + 100,
        2 * p,
    ];
    let mut files = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        let path = dir.join(format!("e{i}"));
        std::fs::write(&path, &data[i..i + len as usize]).unwrap();
        files.push(std::fs::File::open(&path).unwrap());
    }
    // A directory opens as a file on Unix; Windows refuses the open itself.
    #[cfg(unix)]
    files.push(std::fs::File::open(&dir).unwrap());
    let refs: Vec<&std::fs::File> = files.iter().collect();
    for threshold in [p, 0, 4097, u64::MAX] {
        common::for_each_backend(|b| {
            let read = std::sync::atomic::AtomicU64::new(0);
            let count = |n| {
                read.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            };
            let got = md5x::chains::etag_files_with(b, &refs, p, threshold, &count);
            assert_eq!(
                read.into_inner(),
                lens.iter().sum::<u64>(),
                "{b}: bytes read"
            );
            assert_eq!(got.len(), refs.len());
            for (i, &len) in lens.iter().enumerate() {
                let want = s3_etag(&data[i..i + len as usize], p, threshold).unwrap();
                let tag = got[i]
                    .as_ref()
                    .unwrap_or_else(|e| panic!("{b}: file {i}: {e}"));
                assert_eq!(*tag, want, "{b}: threshold {threshold}, len {len}");
            }
            if cfg!(unix) {
                assert!(got[lens.len()].is_err(), "{b}: a directory gave an ETag");
            }
        });
    }
    for bad in md5x::chains::etag_files(&refs, 1 << 20, p) {
        let err = bad.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("outside S3's limits"), "{err}");
    }
    assert!(md5x::chains::etag_files(&[], p, p).is_empty());
    drop(files); // Windows removes no open file
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A regular file with fewer bytes than its size says (a sysfs file states 4096): as a
/// single PUT or as one part it is read to its end, and its ETag is of what it holds.
/// (A file of more parts that shrinks is an error: `etag_files_reports_a_shrunk_file`.)
#[cfg(target_os = "linux")]
#[test]
fn etag_of_a_file_shorter_than_its_size() {
    let path = "/sys/devices/system/cpu/online";
    let (Ok(meta), Ok(bytes)) = (std::fs::metadata(path), std::fs::read(path)) else {
        eprintln!("NOT RUN: no {path} here");
        return;
    };
    if !meta.is_file() || meta.len() <= bytes.len() as u64 {
        eprintln!("NOT RUN: {path} is not shorter than its size here");
        return;
    }
    let f = std::fs::File::open(path).unwrap();
    let p = 5 << 20;
    let want = s3_etag(&bytes, p, p).unwrap();
    assert_eq!(want.parts(), None);
    assert_eq!(
        md5x::chains::etag_files(&[&f], p, p)
            .pop()
            .unwrap()
            .unwrap(),
        want
    );
    assert_eq!(md5x::chains::etag_file(path, p, p, 1).unwrap(), want);
    // At or below its stated size, the threshold makes it one part by that size: it
    // is read to its end, as a single PUT is, and its ETag is of what it holds (a
    // multipart one at threshold 0; a single PUT's where what it holds is below the
    // threshold). Both gave "file shrank while it was read".
    for threshold in [0, 1, bytes.len() as u64, bytes.len() as u64 + 1, meta.len()] {
        let want = s3_etag(&bytes, p, threshold).unwrap();
        let files = md5x::chains::etag_files(&[&f, &f], p, threshold);
        for r in files {
            assert_eq!(r.unwrap(), want, "threshold {threshold}");
        }
        let one = md5x::chains::etag_file(path, p, threshold, 1).unwrap();
        assert_eq!(one, want, "threshold {threshold}");
    }
    assert_eq!(s3_etag(&bytes, p, 0).unwrap().parts(), Some(1));
}

/// A `/proc` file says it is empty whatever it holds: its ETag is of what it holds,
/// as a single PUT and as a multipart upload (threshold 0), from its start even where
/// the caller has read some of it, beside a regular file.
#[cfg(target_os = "linux")]
#[test]
fn etag_of_a_proc_file_is_of_what_it_holds() {
    use std::io::Read;
    let path = "/proc/version";
    let (Ok(meta), Ok(bytes)) = (std::fs::metadata(path), std::fs::read(path)) else {
        eprintln!("NOT RUN: no {path} here");
        return;
    };
    if !meta.is_file() || meta.len() != 0 || bytes.is_empty() {
        eprintln!("NOT RUN: {path} is not an empty-seeming regular file here");
        return;
    }
    let plain = common::scratch("proc");
    std::fs::write(&plain, b"beside it").unwrap();
    let p = 5 << 20;
    for threshold in [0, 1, p] {
        let want = s3_etag(&bytes, p, threshold).unwrap();
        assert_eq!(
            md5x::chains::etag_file(path, p, threshold, 1).unwrap(),
            want,
            "etag_file, threshold {threshold}"
        );
        let mut f = std::fs::File::open(path).unwrap();
        f.read_exact(&mut [0; 3]).unwrap();
        let g = std::fs::File::open(&plain).unwrap();
        let got = md5x::chains::etag_files(&[&f, &g], p, threshold);
        assert_eq!(
            got[0].as_ref().unwrap(),
            &want,
            "etag_files, threshold {threshold}"
        );
        assert_eq!(
            got[1].as_ref().unwrap(),
            &s3_etag(b"beside it", p, threshold).unwrap()
        );
    }
    std::fs::remove_file(&plain).unwrap();
}

/// A reader that says it read more than the buffer it was given (which `io::Read`
/// forbids, but safe code can do) is an `InvalidData` error, never an ETag of bytes
/// that were not there.
#[test]
fn a_reader_that_overstates_its_reads_is_an_error() {
    struct Liar(usize);
    impl std::io::Read for Liar {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.min(1 << 20);
            self.0 -= n;
            let _ = buf; // (whatever its length)
            Ok(n)
        }
    }
    let r = md5x::chains::etags_by_part_size(Liar(12 << 20), &[(5 << 20) + 1], 0, 1);
    assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::InvalidData);
}

/// One read of the input gives, for every part size, what `s3_etag` gives for it:
/// lengths on both sides of the part boundaries of several candidates at once (some
/// sharing boundaries, as 5 and 10 MiB do, some not), part sizes outside S3's limits,
/// thresholds below, at and above the length, 1 to 3 threads, reads of any size, and
/// every backend.
#[test]
fn etags_by_part_size_match_one_size_at_a_time() {
    use md5x::chains::{etags_by_part_size, etags_by_part_size_with};
    const MIB: u64 = 1 << 20;
    let data = common::bytes((21 * MIB + 77) as usize, 11);
    let sizes = [
        5 * MIB,
        10 * MIB,
        5 * MIB + 1,
        7 * MIB + 3,
        8 * MIB,
        21 * MIB + 77,
        64 * MIB,
        MIB,
        6 << 30,
    ];
    for len in [
        0,
        1,
        5 * MIB - 1,
        5 * MIB,
        5 * MIB + 1,
        10 * MIB,
        10 * MIB + 2,
        15 * MIB + 5,
        21 * MIB + 77,
    ] {
        let data = &data[..len as usize];
        for threshold in [0, 5 * MIB, 8 * MIB, 10 * MIB, u64::MAX] {
            let want: Vec<_> = sizes.iter().map(|&p| s3_etag(data, p, threshold)).collect();
            for threads in [1, 2, 3] {
                let got = etags_by_part_size(data, &sizes, threshold, threads).unwrap();
                assert_eq!(
                    got, want,
                    "len {len}, threshold {threshold}, {threads} threads"
                );
            }
            let reader = Choppy {
                data,
                pos: 0,
                seed: len + threshold % 1000 + 1,
                fail_at: None,
            };
            let got = etags_by_part_size(reader, &sizes, threshold, 2).unwrap();
            assert_eq!(got, want, "len {len}, threshold {threshold}, short reads");
        }
    }
    assert!(matches!(
        etags_by_part_size(&data[..], &sizes, 0, 1).unwrap()[7],
        Err(EtagError::PartSize(_))
    ));
    common::for_each_backend(|b| {
        for len in [9 * MIB + 1, 21 * MIB + 77] {
            let data = &data[..len as usize];
            let want: Vec<_> = sizes.iter().map(|&p| s3_etag(data, p, 5 * MIB)).collect();
            let got = etags_by_part_size_with(b, data, &sizes, 5 * MIB, 2).unwrap();
            assert_eq!(got, want, "{b}: len {len}");
        }
    });
    // One candidate, or a few, each size alone: the whole input's hasher is kept for
    // the single PUT below the threshold (the list above always held sizes that kept
    // it for other reasons).
    for (few, len) in [
        (&sizes[..1], 6 * MIB),
        (&sizes[1..2], 9 * MIB),
        (&sizes[..3], 0),
    ] {
        let data = &data[..len as usize];
        for threshold in [0, 8 * MIB, u64::MAX] {
            let want: Vec<_> = few.iter().map(|&p| s3_etag(data, p, threshold)).collect();
            let got = etags_by_part_size(data, few, threshold, 1).unwrap();
            assert_eq!(got, want, "{few:?}, len {len}, threshold {threshold}");
        }
    }
    // More candidates than one kernel's lanes, each with a part starting apart from
    // the others': the streams are split over the threads.
    let many: Vec<u64> = (0..60).map(|i| 5 * MIB + 4096 * i).collect();
    let data = &data[..(12 * MIB + 5) as usize];
    let want: Vec<_> = many.iter().map(|&p| s3_etag(data, p, 0)).collect();
    for threads in [1, 2, 3] {
        let got = etags_by_part_size(data, &many, 0, threads).unwrap();
        assert_eq!(got, want, "60 part sizes, {threads} threads");
    }
    // The reader's error is the error; no ETag comes out of part of the input.
    let reader = Choppy {
        data,
        pos: 0,
        seed: 5,
        fail_at: Some(3 << 20),
    };
    let err = etags_by_part_size(reader, &sizes, 0, 1).unwrap_err();
    assert_eq!(err.to_string(), "disk on fire");
    // No part sizes: nothing to compute, but the input is still read through.
    assert!(etags_by_part_size(data, &[], 0, 1).unwrap().is_empty());
}

/// Files that change while `etag_files` reads them (changed from its progress callback,
/// after the first read): one of two parts that shrinks is an error, never an ETag;
/// one of one part is read to its end, so its ETag is of what it holds then, a single
/// PUT's where it shrank below the threshold, more parts where it grew past the part
/// size, and one below the threshold that grew to it is in parts. Then `etag_file`
/// with a file of one part (exactly a part too) that grows.
#[test]
fn etag_files_reports_a_shrunk_file() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = common::scratch("shrink");
    std::fs::create_dir_all(&dir).unwrap();
    let (p, threshold) = (8usize << 20, 5u64 << 20);
    let data = common::bytes((17 << 20) + 3, 77);
    // (file's first length, its length after the first read)
    for (from, to) in [
        (2 * p + 5, 1000),
        (2 * p + 5, p + 7),
        (6 << 20, 100_000),
        (6 << 20, 7 << 20),
        (6 << 20, p + 1),
        (6 << 20, 17 << 20),
        // Below the threshold when opened, at or past it once read: the ETag of what
        // it holds, in parts.
        (4 << 20, 5 << 20),
        (4 << 20, (6 << 20) + 1),
    ] {
        let path = dir.join("f");
        std::fs::write(&path, &data[..from]).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let changed = AtomicBool::new(false);
        let change = |_| {
            if !changed.swap(true, Ordering::Relaxed) {
                if to < from {
                    let w = std::fs::OpenOptions::new().write(true).open(&path)?;
                    w.set_len(to as u64)?;
                } else {
                    let mut w = std::fs::OpenOptions::new().append(true).open(&path)?;
                    std::io::Write::write_all(&mut w, &data[from..to])?;
                }
            }
            Ok(())
        };
        let backend = md5x::Backend::active();
        let got = md5x::chains::etag_files_with(backend, &[&f], p as u64, threshold, &change)
            .pop()
            .unwrap();
        assert!(changed.load(Ordering::Relaxed));
        if from > p {
            let e = got.unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::UnexpectedEof,
                "{from} -> {to}"
            );
        } else {
            let want = s3_etag(&data[..to], p as u64, threshold).unwrap();
            assert_eq!(got.unwrap(), want, "{from} -> {to}");
        }
    }
    // etag_file, for a file of one part (exactly a part, or less) that grows once
    // read: the ETag of all it holds, in as many parts as that takes.
    let p = 5usize << 20;
    for (from, to) in [(p, p + 1), (p - 10, p + 20), (p, 2 * p + 1)] {
        let path = dir.join("g");
        std::fs::write(&path, &data[..from]).unwrap();
        let changed = AtomicBool::new(false);
        let grow = |_| {
            if !changed.swap(true, Ordering::Relaxed) {
                let mut w = std::fs::OpenOptions::new().append(true).open(&path)?;
                std::io::Write::write_all(&mut w, &data[from..to])?;
            }
            Ok(())
        };
        for threads in [1, 2] {
            changed.store(false, Ordering::Relaxed);
            std::fs::write(&path, &data[..from]).unwrap();
            let got = md5x::chains::etag_file_with(
                md5x::Backend::active(),
                &path,
                p as u64,
                p as u64,
                threads,
                &grow,
            );
            assert!(changed.load(Ordering::Relaxed));
            let want = s3_etag(&data[..to], p as u64, p as u64).unwrap();
            assert_eq!(got.unwrap(), want, "{from} -> {to}, {threads} threads");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// md-5's digests of messages of zeros: of 1000 bytes, and of 4 GiB plus a few bytes
/// for each kind of tail: a whole block (+64), one whose padding needs a second block
/// (+121: 57 bytes past a block), two whole blocks (+128). Computed once, in one pass
/// (seconds), for the two tests past 4 GiB.
#[cfg(not(miri))]
fn zeros_reference() -> &'static [(u64, [u8; 16]); 4] {
    use md5_ref::Digest as _;
    static REFS: std::sync::OnceLock<[(u64, [u8; 16]); 4]> = std::sync::OnceLock::new();
    REFS.get_or_init(|| {
        let zeros = vec![0u8; 1 << 20];
        let mut h = md5_ref::Md5::new();
        let mut at = 0u64;
        [1000, (4 << 30) + 64, (4 << 30) + 121, (4 << 30) + 128].map(|len| {
            while at < len {
                let n = (len - at).min(zeros.len() as u64) as usize;
                h.update(&zeros[..n]);
                at += n as u64;
            }
            (len, h.clone().finalize().into())
        })
    })
}

/// MD5-P4 of a message whose four chains each hold more than 4 GiB (16 GiB of zeros,
/// fed in pieces that split blocks): chain lengths are 64-bit everywhere.
#[cfg(not(miri))]
#[test]
fn md5_par_chains_past_4_gib() {
    // 4 * (2^26 + 1) + 1 whole blocks, then 57 bytes: chain 0 gets 2^26 + 2 blocks,
    // chain 1 2^26 + 1 and the 57 bytes, chains 2 and 3 2^26 + 1.
    let blocks = 4 * ((1u64 << 26) + 1) + 1;
    let total = blocks * 64 + 57;
    let [_, (_, d64), (_, d121), (_, d128)] = *zeros_reference();
    let mut outer = Vec::new();
    for d in [d128, d121, d64, d64] {
        outer.extend_from_slice(&d);
    }
    let want = common::reference(&outer);
    let zeros = vec![0u8; (1 << 20) + 3];
    let mut h = ParMd5::new(4).unwrap();
    let mut left = total;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        h.update(&zeros[..n]);
        left -= n as u64;
    }
    assert_eq!(
        <[u8; 16]>::from(h.finalize()),
        want,
        "MD5-P4 of {total} zeros"
    );
}

/// S3 ETags whose parts hold more than 4 GiB each (S3 takes parts up to 5 GiB): a
/// sparse file of two such parts and a short one, through `etag_file` (its parts on
/// every core) and `etag_files` (side by side in one core's lanes, beside a small
/// file).
#[cfg(not(miri))]
#[test]
fn etag_parts_past_4_gib() {
    let [(short, d_short), _, (part, d_part), _] = *zeros_reference();
    let size = 2 * part + short;
    let mut outer = Vec::new();
    for d in [d_part, d_part, d_short] {
        outer.extend_from_slice(&d);
    }
    let want = ETag::multipart(md5x::Digest::from(common::reference(&outer)), 3);
    let [by_path, side_by_side] = sparse_etags("parts-4g", size, part, part, true);
    assert_eq!(by_path.unwrap(), want, "etag_file");
    assert_eq!(side_by_side.unwrap(), want, "etag_files");
}
