// md5x's wasm32 build against its peer, in one Node process (the same V8):
//     node bench-hash-wasm.mjs [MANY_REPORT.wasm]
// First, given the path of md5x's many_report example built for wasm32-wasip1 (with
// simd128), that report under Node's WASI; then hash-wasm's MD5 (npm; C compiled to
// wasm) in MB/s. Both over COUNT messages (default 32) of each of SIZES bytes (default
// 64,1024,8192) laid end to end (byte i = i mod 251), one digest each; hash-wasm's
// figure is the best of many ~5 ms slices over 1.5 s a size. md5x's MB/s is its
// bytes/cycle times the clock it read (under wasm the add chain is not one add a
// cycle, so its cycles are relative only). Not part of the test command; hash-wasm
// must be installed beside this file (`npm install hash-wasm@4`): docs/performance.md
// ("WebAssembly") has the steps.
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { WASI } from 'node:wasi';

const sizes = (process.env.SIZES || '64,1024,8192').split(',').map(Number);
const count = Number(process.env.COUNT || 32);

if (process.argv[2] === '--wasi') {
  // The report itself, in a process of its own: Node 20's WASI can crash (SIGSEGV) as
  // a program with a large memory exits, after all its output.
  const wasi = new WASI({
    version: 'preview1',
    args: [process.argv[3]],
    env: { MD5X_SIZES: sizes.join(','), MD5X_COUNTS: String(count) },
    returnOnExit: true,
  });
  const module = await WebAssembly.compile(await readFile(process.argv[3]));
  process.exit(wasi.start(await WebAssembly.instantiate(module, wasi.getImportObject())));
}
if (process.argv[2]) {
  const me = fileURLToPath(import.meta.url);
  const run = spawnSync(process.execPath, ['--no-warnings', me, '--wasi', process.argv[2]], {
    stdio: 'inherit',
  });
  if (run.signal === 'SIGSEGV') {
    console.log('(Node crashed as the report exited, after its output: see above)');
  } else if (run.status !== 0) {
    throw new Error(`${process.argv[2]}: ${run.signal || `exit ${run.status}`}`);
  }
}

const { createMD5 } = await import('hash-wasm');
const h = await createMD5();
for (const size of sizes) {
  const buf = new Uint8Array(size * count);
  for (let i = 0; i < buf.length; i++) buf[i] = i % 251;
  const msgs = Array.from({ length: count }, (_, k) => buf.subarray(k * size, (k + 1) * size));
  let best = Infinity;
  const end = performance.now() + 1500;
  while (performance.now() < end) {
    const t0 = performance.now();
    let reps = 0;
    do {
      for (const m of msgs) {
        h.init();
        h.update(m);
        h.digest('binary');
      }
      reps++;
    } while (performance.now() - t0 < 5);
    best = Math.min(best, (performance.now() - t0) / reps);
  }
  console.log(`hash-wasm md5 ${size} B x ${count}: ${((size * count) / best / 1e3).toFixed(0)} MB/s`);
}
