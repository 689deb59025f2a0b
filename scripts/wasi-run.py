"""Run a WASI program (wasm32-wasip1) under Wasmtime: cargo's runner for that target.

    python wasi-run.py PROGRAM.wasm [ARGS...]

The program gets ARGS, this process's environment, its standard streams, and the
host's whole file system as its `/` (the tests write under `$TMPDIR`, or `/tmp`).
Exit status: the program's own; 134 when it traps (Rust's panic aborts on wasm32,
as `abort()` does elsewhere), after the trap's message on standard error.
Needs the `wasmtime` package from PyPI (scripts/test.sh installs it).
"""

import os
import sys

import wasmtime


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: wasi-run.py PROGRAM.wasm [ARGS...]", file=sys.stderr)
        return 2
    path, *args = sys.argv[1:]
    config = wasmtime.WasiConfig()
    config.argv = [path, *args]
    config.env = list(os.environ.items())
    config.inherit_stdin()
    config.inherit_stdout()
    config.inherit_stderr()
    config.preopen_dir("/", "/")
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    store.set_wasi(config)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    instance = linker.instantiate(store, wasmtime.Module.from_file(engine, path))
    try:
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as e:
        return e.code
    except wasmtime.Trap as e:
        print(f"wasi-run.py: {path} trapped: {e}", file=sys.stderr)
        return 134
    return 0


if __name__ == "__main__":
    sys.exit(main())
