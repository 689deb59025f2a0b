"""Calls from many threads at once, on shared objects and on the module's functions.

Under a GIL, the module still releases it while it hashes large inputs, so the threads
here overlap in md5x's own code. Under a free-threaded CPython (3.14t; `scripts/test.sh`
builds one) they run in parallel throughout, and the module must keep the GIL off when
it is imported. Every check is against hashlib, or against the set of digests that some
order of whole updates could give: an update lost, counted twice or torn fails them.
"""

import hashlib
import os
import subprocess
import sys
import sysconfig
import threading

import pytest

import md5x

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
THREADS = 8


def run_together(target, n=THREADS):
    """Run target(i) on n threads that start together; re-raise the first error."""
    start = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            start.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below, on the test's thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a thread did not finish in 300 s"
    if errors:
        raise errors[0]


def piece_of(size, salt=0):
    return bytes((i * 7 + size + salt) % 251 for i in range(size))


def prefix_digests(piece, count):
    """hashlib's digest of piece repeated k times, for every k in 0..=count."""
    h = hashlib.md5()
    out = {h.hexdigest()}
    for _ in range(count):
        h.update(piece)
        out.add(h.hexdigest())
    return out


@pytest.mark.skipif(not FREE_THREADED, reason="needs a free-threaded CPython (3.14t)")
def test_import_leaves_the_gil_off():
    # A module that does not declare itself free-threading safe turns the GIL back on
    # when it is imported, with a RuntimeWarning; -W error makes that warning fatal.
    code = "import sys, md5x; assert not sys._is_gil_enabled(), 'GIL enabled'; print('off')"
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHON_GIL"},
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout == "off\n", out.stderr[-2000:]


# Below and above the size up to which updates are hashed without releasing the GIL
# (4 KiB), and above the chunk in which other buffers than bytes are copied out and
# hashed (256 KiB).
SIZES = [1, 63, 64, 100, 4096, 4097, 70_000, 300_000]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_shared_md5_counts_every_update_once(size, kind):
    piece = piece_of(size)
    data = kind(piece) if kind is not memoryview else memoryview(bytearray(piece))
    per = 40
    h = md5x.md5()
    run_together(lambda i: [h.update(data) for _ in range(per)])
    # Every piece is the same, so any order of whole updates gives this digest.
    assert h.hexdigest() == hashlib.md5(piece * (THREADS * per)).hexdigest()


@pytest.mark.parametrize("size", [5, 64, 4097])
def test_copies_and_digests_taken_while_others_update(size):
    piece = piece_of(size, 1)
    writers, per = THREADS // 2, 30
    h = md5x.md5()
    seen = [[] for _ in range(THREADS)]

    def body(i):
        for _ in range(per):
            if i < writers:
                h.update(piece)
            else:
                # A snapshot holds a whole number of pieces; its copy goes on alone.
                c = h.copy()
                seen[i].append(c.hexdigest())
                seen[i].append(h.digest().hex())
                c.update(piece)
                seen[i].append(c.hexdigest())

    run_together(body)
    possible = prefix_digests(piece, writers * per + 1)
    got = {d for s in seen for d in s}
    assert got <= possible, sorted(got - possible)[:3]
    assert h.hexdigest() == hashlib.md5(piece * (writers * per)).hexdigest()


def test_bytearray_grown_by_one_thread_while_others_hash_it():
    # The appender may be refused (BufferError: the array is exported while a large
    # one is hashed, as with hashlib); a hash always sees a whole number of pieces.
    piece = piece_of(1000, 2)
    grows = 120
    ba = bytearray()
    results = [[] for _ in range(THREADS)]

    def body(i):
        if i == 0:
            for _ in range(grows):
                while True:
                    try:
                        ba.extend(piece)
                        break
                    except BufferError:
                        pass
        else:
            for _ in range(40):
                results[i].append(md5x.md5(ba).hexdigest())
                results[i].append(md5x.hash_many([ba, piece])[0].hex())

    run_together(body)
    possible = prefix_digests(piece, grows)
    got = {d for r in results for d in r}
    assert got <= possible, sorted(got - possible)[:3]


@pytest.mark.parametrize(
    "size, fmt, per",
    [
        (8192, "I", 20_000),  # items of four bytes: taken through a flat cast
        (300_000, "B", 100),  # bytes, over the 256 KiB chunk: taken in slices
    ],
)
def test_one_memoryview_hashed_by_many_threads_stays_exported(size, fmt, per):
    # The module takes its own views of a memoryview it is given (a flat cast, the
    # chunks). Free-threaded CPython counts views taken from a shared memoryview without
    # atomics (its gh-155606), so views taken from the caller's one could release it
    # under the threads still using it: "operation forbidden on released memoryview
    # object", and its bytearray could then be resized while the view was held.
    ba = bytearray(piece_of(size, 7))
    mv = memoryview(ba).cast(fmt)
    want = hashlib.md5(ba).digest()

    def body(i):
        for j in range(per):
            if j % 2:
                assert md5x.md5(mv).digest() == want
            else:
                assert md5x.hash_many([mv]) == [want]

    run_together(body)
    with pytest.raises(BufferError):
        ba.append(0)
    mv.release()
    ba.append(0)


def test_module_functions_called_from_many_threads(tmp_path):
    files = []
    for n in (0, 1, 64, 1000, 70_000, 300_000):
        p = tmp_path / f"f{n}"
        p.write_bytes(piece_of(n, 3))
        files.append(str(p))
    want = [hashlib.md5(piece_of(n, 3)).hexdigest() for n in (0, 1, 64, 1000, 70_000, 300_000)]
    bufs = [piece_of(n, 4) for n in range(0, 3000, 37)]
    want_many = [hashlib.md5(b).digest() for b in bufs]
    big = piece_of(1 << 20, 5)
    par = md5x.md5_par(big, 4)

    def body(i):
        for _ in range(5):
            assert md5x.hash_many(bufs) == want_many
            assert md5x.hash_files(files) == want
            with open(files[4], "rb") as f:
                assert md5x.file_digest(f, "md5").hexdigest() == want[4]
            assert md5x.s3_etag(files[5], part_size=5 << 20, threshold=0) == (
                hashlib.md5(bytes.fromhex(want[5])).hexdigest() + "-1"
            )
            assert md5x.md5_par(big, 4) == par
            s = md5x.S3Etag(big, part_size=5 << 20, threshold=0)
            assert s.hexdigest() == hashlib.md5(hashlib.md5(big).digest()).hexdigest() + "-1"

    run_together(body)


def test_one_md5_par_result_whatever_the_threads():
    data = piece_of(3 << 20, 6)
    want = {k: md5x.md5_par(data, k) for k in (4, 8, 16)}
    got = [dict() for _ in range(THREADS)]

    def body(i):
        for k in (4, 8, 16):
            got[i][k] = md5x.md5_par(data, k)

    run_together(body)
    assert all(g == want for g in got)
