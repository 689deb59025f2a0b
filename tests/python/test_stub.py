"""The type stub (crates/md5x-py/md5x.pyi) against the module it describes.

mypy's stubtest imports the installed md5x and compares every name, signature and
default with the stub, so a function added, renamed or given a new argument without
the stub following fails here. The one name left out is md5x.md5x, the compiled
extension that md5x/__init__.py re-exports: an implementation detail with no stub.
"""

import subprocess
import sys

import pytest

pytest.importorskip("mypy.stubtest", reason="mypy is not installed (scripts/test.sh installs it)")


def test_stub_matches_the_runtime(tmp_path):
    allow = tmp_path / "allowlist.txt"
    allow.write_text("md5x.md5x\n")
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "md5x", "--allowlist", str(allow)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_stub_lists_what_the_module_exports():
    # stubtest holds the stub to the module's __all__; this holds __all__ to the module,
    # so that a public name missing from both is caught too.
    import md5x

    public = {n for n in dir(md5x) if not n.startswith("_") and n != "md5x"}
    assert set(md5x.__all__) == public | {"__version__"}
