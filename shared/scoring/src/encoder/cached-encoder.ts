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
import { SharedOutputTable, type OutputShape } from './shared-output-table.js';

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
 * A model's outputs read through a SharedOutputTable, counting what this user of the table found
 * and read (the table's own counters add up every user).
 */
export class OutputCache {
  readonly table: SharedOutputTable;
  private hits = 0;
  private reads = 0;

  /** `source`: a table's buffer, shared with the others given it, or the entries of its own. */
  constructor(source: SharedArrayBuffer | number, shape: OutputShape) {
    this.table =
      typeof source === 'number'
        ? SharedOutputTable.create(source, shape)
        : new SharedOutputTable(source, shape);
  }

  /**
   * The outputs for `keys`, in their order: those the table holds, and the rest read by `read`
   * (given the positions to read, each distinct key once, in one call) and stored. Nothing is
   * stored when `read` fails.
   */
  async outputs(
    keys: readonly Int32Array[],
    read: (positions: number[]) => Promise<EncoderOutput[]>,
  ): Promise<EncoderOutput[]> {
    const found = keys.map((k) => this.table.get(k));
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
        this.table.set(key, out[i] as EncoderOutput);
      });
    }
    this.hits += keys.length - missing.size;
    this.reads += missing.size;
    this.table.count(keys.length - missing.size, missing.size);
    return keys.map((k, i) => found[i] ?? (fresh.get(id(k)) as EncoderOutput));
  }

  /** Texts this user found in the table and had read. */
  counts(): { hits: number; reads: number } {
    return { hits: this.hits, reads: this.reads };
  }
}

/**
 * `inner` with its outputs remembered in `source` (a buffer of createOutputBuffer, shared by the
 * engines given the same one), or in a table of its own of `source` entries. A call reads only the
 * texts it does not find (each once, even when asked twice in one call), in one call to `inner`,
 * and answers in the order asked. Failed or aborted reads are not remembered.
 */
export function cachedEncoder(inner: Encoder, source: SharedArrayBuffer | number): CachedEncoder {
  const cache = new OutputCache(source, inner.manifest);
  return {
    manifest: inner.manifest,
    encode: (items, signal) =>
      cache.outputs(
        items.map((item) => cacheKey(item.role, item.text)),
        (positions) =>
          inner.encode(
            positions.map((p) => items[p] as EncoderItem),
            signal,
          ),
      ),
    stats: () => ({ ...cache.counts(), entries: cache.table.used() }),
    close: () => inner.close(),
  };
}
