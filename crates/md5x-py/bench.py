"""md5x against hashlib, measured in the same run (best of N; the ratio is what counts).

    python crates/md5x-py/bench.py [--repeat N]
        [--only single,bytearray,updates,many,manymutable,parts,files,largefiles,etags]
"""

import argparse
import hashlib
import os
import tempfile
import time

import md5x


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def report(name, t_md5x, t_hashlib, size):
    mb = size / 1e6
    print(
        f"{name:<40} md5x {mb / t_md5x:8.0f} MB/s  hashlib {mb / t_hashlib:8.0f} MB/s"
        f"  ratio {t_hashlib / t_md5x:5.2f}x"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument(
        "--only",
        default="single,bytearray,updates,many,manymutable,parts,files,largefiles,etags",
    )
    args = ap.parse_args()
    only = set(args.only.split(","))
    r = args.repeat
    print(f"md5x backend: {md5x.backend()}; cores: {os.cpu_count()}")

    if "single" in only:
        data = os.urandom(64 << 20)
        assert md5x.md5(data).digest() == hashlib.md5(data).digest()
        report(
            "md5(64 MiB bytes).digest()",
            best(lambda: md5x.md5(data).digest(), r),
            best(lambda: hashlib.md5(data).digest(), r),
            len(data),
        )
    if "bytearray" in only:
        data = bytearray(os.urandom(64 << 20))
        assert md5x.md5(data).digest() == hashlib.md5(data).digest()
        report(
            "md5(64 MiB bytearray).digest()",
            best(lambda: md5x.md5(data).digest(), r),
            best(lambda: hashlib.md5(data).digest(), r),
            len(data),
        )
    if "updates" in only:
        # Many small updates of one object (records, a protocol's frames): the cost of
        # each call, more than of the hashing.
        for size in (16, 1024):
            for kind in (bytes, bytearray, memoryview):
                pieces = [kind(os.urandom(size)) for _ in range(1000)]

                def feed(new):
                    h = new()
                    for _ in range(20):
                        for p in pieces:
                            h.update(p)
                    return h.digest()

                assert feed(md5x.md5) == feed(hashlib.md5)
                report(
                    f"20,000 updates of {size} B {kind.__name__}",
                    best(lambda: feed(md5x.md5), r),
                    best(lambda: feed(hashlib.md5), r),
                    20 * size * len(pieces),
                )
    if "many" in only:
        bufs = [os.urandom(4096) for _ in range(10_000)]
        assert md5x.hash_many(bufs) == [hashlib.md5(b).digest() for b in bufs]
        report(
            "hash_many(10,000 x 4 KiB)",
            best(lambda: md5x.hash_many(bufs), r),
            best(lambda: [hashlib.md5(b).digest() for b in bufs], r),
            4096 * len(bufs),
        )
    if "manymutable" in only:
        # Small mutable buffers (records of a bytearray or mmap), which md5x copies out.
        bufs = [bytearray(os.urandom(4096)) for _ in range(10_000)]
        assert md5x.hash_many(bufs) == [hashlib.md5(b).digest() for b in bufs]
        report(
            "hash_many(10,000 x 4 KiB bytearray)",
            best(lambda: md5x.hash_many(bufs), r),
            best(lambda: [hashlib.md5(b).digest() for b in bufs], r),
            4096 * len(bufs),
        )
    if "parts" in only:
        # One 256 MiB mutable buffer sliced into 8 MiB parts (the Content-MD5 of each
        # part of an S3 upload): memoryviews, which md5x must copy out.
        whole = bytearray(os.urandom(256 << 20))
        view = memoryview(whole)
        parts = [view[i : i + (8 << 20)] for i in range(0, len(whole), 8 << 20)]
        assert md5x.hash_many(parts) == [hashlib.md5(p).digest() for p in parts]
        report(
            "hash_many(32 x 8 MiB memoryview parts)",
            best(lambda: md5x.hash_many(parts), r),
            best(lambda: [hashlib.md5(p).digest() for p in parts], r),
            len(whole),
        )
    files = (md5x.hash_files, hex_with_hashlib)
    etags = (md5x.s3_etags, etag_with_hashlib)
    if "files" in only:
        bench_files("hash_files(10,000 x 64 KiB, cached)", 10_000, 64 << 10, r, *files)
    if "largefiles" in only:
        bench_files("hash_files(100 x 4 MiB, cached)", 100, 4 << 20, r, *files)
    if "etags" in only:
        bench_files("s3_etags(40 x 20 MiB, 8 MiB parts)", 40, 20 << 20, r, *etags)
        bench_files("s3_etags(200 x 4 MiB)", 200, 4 << 20, r, *etags)


def hex_with_hashlib(path):
    """A file's MD5 as a hashlib loop computes it."""
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def etag_with_hashlib(path, part=8 << 20, threshold=8 << 20):
    """An S3 ETag as upload tools compute it with hashlib: each part's MD5, then the MD5
    of those digests (or the file's MD5 below the threshold)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if size < threshold:
            return hashlib.md5(f.read()).hexdigest()
        digests = []
        while chunk := f.read(part):
            digests.append(hashlib.md5(chunk).digest())
    return f"{hashlib.md5(b''.join(digests)).hexdigest()}-{len(digests)}"


def bench_files(name, count, size, r, ours, theirs):
    """`ours(paths)` against `theirs` on each path, one after another, over `count`
    files of `size` bytes, cached."""
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i in range(count):
            p = os.path.join(d, f"{i:05}")
            with open(p, "wb") as f:
                f.write(os.urandom(size))
            paths.append(p)
        assert ours(paths) == [theirs(p) for p in paths]
        report(
            name,
            best(lambda: ours(paths), r),
            best(lambda: [theirs(p) for p in paths], r),
            size * count,
        )


if __name__ == "__main__":
    main()
