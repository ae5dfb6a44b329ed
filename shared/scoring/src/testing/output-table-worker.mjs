// A thread for shared-output-table.test.ts: writes and reads the shared table as fast as it can,
// each key's output derived from the key, and counts reads that returned another key's output or
// a torn one (there must be none). Plain JS that loads the TypeScript module through tsx, since
// worker threads do not get the test runner's transform.
import { parentPort, workerData } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

const { SharedOutputTable } = await tsImport('../encoder/shared-output-table.ts', import.meta.url);
const { buffer, shape, seed, rounds, keys } = workerData;
const table = new SharedOutputTable(buffer, shape);

/** Key k, and the output every thread writes for it: every number is k. */
const key = (k) => Int32Array.from([k, k * 7 + 1, k * 13 + 2, k * 31 + 3]);
const output = (k) => ({
  probs: Array.from({ length: shape.heads.length }, () => k),
  embedding: new Float32Array(shape.dims).fill(k),
});

let x = seed;
let hits = 0;
let wrong = 0;
for (let i = 0; i < rounds; i++) {
  x = (x * 1103515245 + 12345) & 0x7fffffff;
  const k = x % keys;
  if (i % 2 === 0) table.set(key(k), output(k));
  else {
    const got = table.get(key(k));
    if (!got) continue;
    hits++;
    if (got.probs.some((v) => v !== k) || got.embedding.some((v) => v !== k)) wrong++;
  }
}
parentPort.postMessage({ hits, wrong });
