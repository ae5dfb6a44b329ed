/**
 * The multilingual reader's sentence embeddings of build texts, kept in .cache/guard-multilingual/
 * between runs (one file of texts and one of vectors, keyed by the weights and the prompt
 * convention): what train-head.ts fits on and eval-reader.ts scores. One run at a time: the texts
 * and the vectors are two files, so a cache whose counts disagree (a run killed between them, or
 * two at once) is dropped and read again. Counts and progress go to stderr.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  createOnnxMultilingualReader,
  type MultilingualManifest,
} from '@guard/scoring/multilingual/reader';

const CACHE = '.cache/guard-multilingual';
const DIMS = 384;

export interface CachedEmbedder {
  /** Embeddings of `rows`, from the cache where it has them, the rest read and added to it. */
  embed(rows: readonly { text: string }[], label: string): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** The reader of `dir` (its `manifest`) behind the cache; loaded only if a text is missing. */
export function cachedEmbedder(dir: string, manifest: MultilingualManifest): CachedEmbedder {
  const layout = JSON.parse(fs.readFileSync(path.join(dir, manifest.layout), 'utf8')) as {
    weights: { sha256: string };
  };
  const key = createHash('sha256')
    .update(layout.weights.sha256)
    .update(manifest.prefix)
    .update(String(manifest.max_tokens))
    .digest('hex')
    .slice(0, 16);
  const textsFile = path.join(CACHE, `${key}.texts.jsonl`);
  const vecFile = path.join(CACHE, `${key}.f32`);
  const known = new Map<string, Float32Array>();
  if (fs.existsSync(textsFile) && fs.existsSync(vecFile)) {
    const all = new Float32Array(fs.readFileSync(vecFile).buffer.slice(0));
    const lines = fs.readFileSync(textsFile, 'utf8').split('\n').filter(Boolean);
    if (all.length === lines.length * DIMS)
      lines.forEach((l, i) =>
        known.set(JSON.parse(l) as string, all.subarray(i * DIMS, (i + 1) * DIMS)),
      );
    else console.error(`${textsFile}: texts and vectors disagree; the cache is read again`);
  }
  if (known.size === 0) for (const f of [textsFile, vecFile]) fs.rmSync(f, { force: true });
  let reader: Awaited<ReturnType<typeof createOnnxMultilingualReader>> | undefined;
  const t0 = performance.now();
  return {
    async embed(rows, label) {
      const todo = [...new Set(rows.map((r) => r.text).filter((t) => !known.has(t)))];
      console.error(
        `${label}: ${rows.length - todo.length} of ${rows.length} embeddings from the cache`,
      );
      for (let i = 0; i < todo.length; i += 256) {
        reader ??= await createOnnxMultilingualReader(dir);
        const part = todo.slice(i, i + 256);
        const out = await reader.read(part);
        fs.mkdirSync(CACHE, { recursive: true });
        fs.appendFileSync(textsFile, part.map((t) => `${JSON.stringify(t)}\n`).join(''));
        const flat = new Float32Array(out.length * DIMS);
        out.forEach((e, j) => {
          flat.set(e, j * DIMS);
          known.set(part[j] as string, e);
        });
        fs.appendFileSync(vecFile, Buffer.from(flat.buffer));
        process.stderr.write(
          `\r${label}: ${Math.min(i + 256, todo.length)}/${todo.length} read, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        );
      }
      if (todo.length > 0) process.stderr.write('\n');
      return rows.map((r) => known.get(r.text) as Float32Array);
    },
    async close() {
      await reader?.close();
      reader = undefined;
    },
  };
}
