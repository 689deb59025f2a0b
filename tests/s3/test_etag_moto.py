"""S3 ETags from md5x against a real S3 API: moto's server on 127.0.0.1, files
uploaded with boto3 at several part sizes and thresholds; the ETag S3 returns must
equal md5x's byte for byte.

Run by scripts/test.sh (which installs moto[server], boto3 and pytest in .venv/).
md5x's side is the `etag` example of the md5x crate, run once over all files of a
case, and the Python module's `S3Etag` and `s3_etags` (the `md5x --etag` command is
not run here; crates/md5x-cli/tests/modes.rs checks it).
"""

import os
import subprocess
from pathlib import Path

import boto3
import pytest
from boto3.s3.transfer import TransferConfig
from moto.server import ThreadedMotoServer

MiB = 1 << 20
REPO = Path(__file__).resolve().parents[2]

# (part_size, threshold, sizes): empty, below the threshold, exactly one part, part
# boundaries +- 1, and many parts.
CASES = [
    (5 * MiB, 5 * MiB, [0, 1, 5 * MiB - 1, 5 * MiB, 5 * MiB + 1, 10 * MiB - 1, 10 * MiB,
                        10 * MiB + 1, 7 * 5 * MiB + 12345]),
    (5 * MiB, 8 * MiB, [8 * MiB - 1, 8 * MiB, 8 * MiB + 1]),
    (6 * MiB, 6 * MiB, [6 * MiB, 18 * MiB + 3]),
    (8 * MiB, 8 * MiB, [17825792, 8 * MiB - 1, 8 * MiB]),
]


def content(size: int, seed: int) -> bytes:
    block = bytes((i * 31 + seed) % 251 for i in range(MiB + 7))
    reps = size // len(block) + 1
    return (block * reps)[:size]


@pytest.fixture(scope="module")
def s3():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    client = boto3.client(
        "s3",
        endpoint_url=f"http://{host}:{port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    client.create_bucket(Bucket="md5x")
    yield client
    server.stop()


def md5x_etags(files, part_size, threshold):
    """ETags from md5x for files, in order."""
    cmd = ["cargo", "run", "--release", "-q", "-p", "md5x", "--example", "etag", "--",
           "--part-size", str(part_size), "--threshold", str(threshold)]
    out = subprocess.run(cmd + [str(f) for f in files], cwd=REPO, check=True,
                         capture_output=True).stdout.decode()
    tags = [line.split("  ", 1)[0] for line in out.splitlines()]
    assert len(tags) == len(files), out
    return tags


def upload(s3, tmp_path, part_size, threshold, sizes):
    """The case's files, written and uploaded, and the ETags S3 gave them."""
    files = []
    for i, size in enumerate(sizes):
        f = tmp_path / f"obj-{i}-{size}"
        f.write_bytes(content(size, i))
        files.append(f)
    config = TransferConfig(multipart_threshold=threshold, multipart_chunksize=part_size,
                            use_threads=False)
    expected = []
    for f in files:
        key = f"{part_size}/{threshold}/{f.name}"
        s3.upload_file(str(f), "md5x", key, Config=config)
        etag = s3.head_object(Bucket="md5x", Key=key)["ETag"]
        assert etag.startswith('"') and etag.endswith('"'), etag
        expected.append(etag.strip('"'))
    # Sanity: the cases do exercise both single PUT and multipart uploads.
    for size, tag in zip(sizes, expected):
        assert ("-" in tag) == (size >= threshold), (size, tag)
    return files, expected


@pytest.mark.parametrize("part_size,threshold,sizes", CASES)
def test_etags_match_s3(s3, tmp_path, part_size, threshold, sizes):
    files, expected = upload(s3, tmp_path, part_size, threshold, sizes)
    assert md5x_etags(files, part_size, threshold) == expected


@pytest.mark.parametrize("part_size,threshold,sizes", CASES)
def test_python_etags_match_s3(s3, tmp_path, part_size, threshold, sizes):
    # The Python module (scripts/test.sh installs it first): the streaming S3Etag,
    # fed as an upload is sent, and s3_etags over the files.
    md5x = pytest.importorskip("md5x")
    files, expected = upload(s3, tmp_path, part_size, threshold, sizes)
    streamed = []
    for f in files:
        e = md5x.S3Etag(part_size=part_size, threshold=threshold)
        with open(f, "rb") as fh:
            while chunk := fh.read(3 * MiB + 1):
                e.update(chunk)
        streamed.append(e.hexdigest())
    assert streamed == expected
    assert md5x.s3_etags(files, part_size, threshold) == expected


def test_too_many_parts_is_an_error_not_an_etag(tmp_path):
    # 5 MiB parts allow at most 10,000 parts; a sparse file of 10,000 parts + 1 byte.
    f = tmp_path / "huge"
    with open(f, "wb") as fh:
        fh.truncate(10_000 * 5 * MiB + 1)
    cmd = ["cargo", "run", "--release", "-q", "-p", "md5x", "--example", "etag", "--",
           "--part-size", str(5 * MiB), "--threshold", str(5 * MiB), str(f)]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True)
    assert r.returncode == 1
    assert r.stdout == b""
    assert b"at most 10000 parts" in r.stderr
