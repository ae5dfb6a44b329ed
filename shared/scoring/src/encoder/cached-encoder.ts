/**
 * Encoder outputs remembered by what was read. Traffic sends the same texts again and again: an
 * agent's loop sends every earlier tool result with each step, a chat sends its history with
 * each turn (a long history is read in windows, and all but the last stay the same), and
 * protected completions read the request again to judge the answer. The encoder answers a given
 * (role, text) the same every time (one text per run, the same weights), so a remembered output
 * is exactly the one a new read would give: the verdicts do not change, only the cost.
 *
 * Outputs live in a SharedOutputTable keyed by a SHA-256 digest of the request's scope (its
 * organization), the role and the text, so the cache holds no request text and one organization
 * never finds another's; given the table's buffer, every engine of a process (the request
 * thread's and each scoring thread's) shares it. The outputs must be float32 numbers, as the ONNX
 * encoder's are: the table keeps them at that precision.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Encoder, EncoderItem, EncoderOutput } from './encoder.js';
import { createOutputBuffer, SharedOutputTable } from './shared-output-table.js';

export interface EncoderCacheStats {
  /** Texts this engine found in the cache. */
  hits: number;
  /** Texts this engine had the encoder read. */
  reads: number;
  /** Slots of the (possibly shared) table holding an output. */
  entries: number;
}

export interface CachedEncoder extends Encoder {
  stats(): EncoderCacheStats;
}

/**
 * The scope of the request being scored (its `cache_scope`, the caller's organization), set by
 * the engine around each request: outputs remembered in one scope are never found from another,
 * so that how long a call takes tells nothing of what another organization sent.
 */
export const encoderCacheScope = new AsyncLocalStorage<string>();

/**
 * The table's key of a text read by the model `kind` (the encoder's role, or another model's
 * name): the first 16 bytes of SHA-256(scope, NUL, kind, NUL, text).
 */
export function cacheKey(kind: string, text: string): Int32Array {
  const digest = createHash('sha256')
    .update(encoderCacheScope.getStore() ?? '')
    .update('\0')
    .update(kind)
    .update('\0')
    .update(text)
    .digest();
  const key = new Int32Array(4);
  new Uint8Array(key.buffer).set(digest.subarray(0, 16));
  return key;
}

/**
 * The outputs for `keys`, in their order: those `table` holds, and the rest read by `read` (given
 * the positions to read, each distinct key once, in one call) and stored. `reads`: how many were
 * read. Nothing is stored when `read` fails.
 */
export async function readThroughTable(
  table: SharedOutputTable,
  keys: readonly Int32Array[],
  read: (positions: number[]) => Promise<EncoderOutput[]>,
): Promise<{ outs: EncoderOutput[]; reads: number }> {
  const found = keys.map((k) => table.get(k));
  const id = (k: Int32Array) => k.join(',');
  const missing = new Map<string, number>();
  keys.forEach((key, i) => {
    if (!found[i] && !missing.has(id(key))) missing.set(id(key), i);
  });
  const fresh = new Map<string, EncoderOutput>();
  if (missing.size > 0) {
    const positions = [...missing.values()];
    const out = await read(positions);
    if (out.length !== positions.length)
      throw new Error('the model answered for fewer texts than asked');
    positions.forEach((p, i) => {
      const key = keys[p] as Int32Array;
      fresh.set(id(key), out[i] as EncoderOutput);
      table.set(key, out[i] as EncoderOutput);
    });
  }
  table.count(keys.length - missing.size, missing.size);
  return {
    outs: keys.map((k, i) => found[i] ?? (fresh.get(id(k)) as EncoderOutput)),
    reads: missing.size,
  };
}

/**
 * `inner` with its outputs remembered in `buffer` (createOutputBuffer; shared by the engines
 * given the same one), or in a table of its own of `buffer` entries. A call reads only the texts
 * it does not find (each once, even when asked twice in one call), in one call to `inner`, and
 * answers in the order asked. Failed or aborted reads are not remembered.
 */
export function cachedEncoder(inner: Encoder, buffer: SharedArrayBuffer | number): CachedEncoder {
  const table = new SharedOutputTable(
    typeof buffer === 'number' ? createOutputBuffer(buffer, inner.manifest) : buffer,
    inner.manifest,
  );
  let hits = 0;
  let reads = 0;
  return {
    manifest: inner.manifest,
    async encode(items, signal) {
      const keys = items.map((item) => cacheKey(item.role, item.text));
      const { outs, reads: read } = await readThroughTable(table, keys, (positions) =>
        inner.encode(
          positions.map((p) => items[p] as EncoderItem),
          signal,
        ),
      );
      hits += items.length - read;
      reads += read;
      return outs;
    },
    stats: () => ({ hits, reads, entries: table.used() }),
    close: () => inner.close(),
  };
}
