#!/usr/bin/env node
// What batching would buy the encoder: the shipped int8 model on one onnxruntime thread (as the
// server runs it, through its createSession), sequences of L tokens read 1, 2, 4, ... at a time;
// prints ms per sequence. Needs the compiled packages (`npm run build`).
//
//   node scripts/bench/encoder-batch.mjs [--tokens 4,12,25,50] [--batches 1,2,4,8,16,32]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// The server's own session factory (one intra-op thread): the compiled package, `npm run build`.
import { createSession } from '@guard/scoring/encoder/onnx-session';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '4,12,25,50' },
    batches: { type: 'string', default: '1,2,4,8,16,32' },
  },
});
const { ort, session } = await createSession(
  path.join(ROOT, 'shared/scoring/models/encoder/model.int8.onnx'),
);
for (const L of values.tokens.split(',').map(Number)) {
  for (const B of values.batches.split(',').map(Number)) {
    // Ordinary vocabulary ids (the model reads any id the same way: the cost is the shape).
    const ids = BigInt64Array.from({ length: B * L }, (_, i) =>
      BigInt(1000 + ((i * 7919) % 20000)),
    );
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, [B, L]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(B * L).fill(1n), [B, L]),
    };
    for (let i = 0; i < 5; i++) await session.run(feeds);
    const n = Math.max(10, Math.round(400 / B));
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await session.run(feeds);
    const ms = (performance.now() - t0) / n;
    console.log(
      `${L} tokens, batch ${B}: ${ms.toFixed(2)} ms a batch, ${(ms / B).toFixed(3)} ms a sequence`,
    );
  }
}
await session.release();
