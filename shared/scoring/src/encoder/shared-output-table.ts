/**
 * Encoder outputs in shared memory: one table for every engine of a process (the request thread's
 * and each scoring thread's), so that a text one thread read is not read again by another. A
 * SharedArrayBuffer travels to worker threads in `workerData` without being copied.
 *
 * The table is direct-mapped: a text's key (the first 16 bytes of a SHA-256 digest of its role and
 * text) picks its slot, and a new text overwrites whatever held that slot. Each slot is guarded by
 * a version word (a seqlock): a writer makes it odd (taking the slot with compareExchange, so two
 * writers never mix), writes, and makes it even again; a reader copies the slot and keeps the copy
 * only if the version was even and unchanged around the copy. A torn or contended slot reads as
 * absent, never as another text's output. Probabilities and embeddings are stored as float32, the
 * precision the model gives them in, so a stored output is exactly the one read.
 */
import type { EncoderManifest, EncoderOutput } from './encoder.js';

/** Words of a key: 16 bytes. */
const KEY_WORDS = 4;

/** What the table's shape depends on: the manifest's head count and embedding size. */
export type OutputShape = Pick<EncoderManifest, 'heads' | 'dims'>;

const slotWords = (shape: OutputShape) => 1 + KEY_WORDS + shape.heads.length + shape.dims;

/** A buffer for `entries` outputs of this shape (about 1.6 KB each for the shipped encoder). */
export function createOutputBuffer(entries: number, shape: OutputShape): SharedArrayBuffer {
  const n = Math.max(1, Math.floor(entries));
  return new SharedArrayBuffer(n * slotWords(shape) * 4);
}

export class SharedOutputTable {
  private readonly words: Int32Array;
  private readonly floats: Float32Array;
  private readonly slot: number;
  private readonly heads: number;
  private readonly dims: number;
  readonly entries: number;

  constructor(buffer: SharedArrayBuffer, shape: OutputShape) {
    this.heads = shape.heads.length;
    this.dims = shape.dims;
    this.slot = slotWords(shape);
    if (buffer.byteLength % (this.slot * 4) !== 0 || buffer.byteLength === 0)
      throw new Error(
        `encoder cache buffer of ${buffer.byteLength} bytes does not hold whole slots of ${this.slot * 4} bytes (${this.heads} heads, ${this.dims} dimensions)`,
      );
    this.words = new Int32Array(buffer);
    this.floats = new Float32Array(buffer);
    this.entries = buffer.byteLength / (this.slot * 4);
  }

  private base(key: Int32Array): number {
    return (((key[0] as number) >>> 0) % this.entries) * this.slot;
  }

  get(key: Int32Array): EncoderOutput | undefined {
    const at = this.base(key);
    const before = Atomics.load(this.words, at);
    if (before === 0 || before % 2 !== 0) return undefined;
    for (let i = 0; i < KEY_WORDS; i++) if (this.words[at + 1 + i] !== key[i]) return undefined;
    const start = at + 1 + KEY_WORDS;
    const probs = Array.from(this.floats.subarray(start, start + this.heads));
    const embedding = this.floats.slice(start + this.heads, start + this.heads + this.dims);
    // The copy counts only if no writer touched the slot meanwhile (Atomics.load orders it).
    if (Atomics.load(this.words, at) !== before) return undefined;
    for (let i = 0; i < KEY_WORDS; i++) if (this.words[at + 1 + i] !== key[i]) return undefined;
    return { probs, embedding };
  }

  /** Stores `out` under `key`; skipped (the table is a cache) while another thread writes the slot. */
  set(key: Int32Array, out: EncoderOutput): void {
    if (out.probs.length !== this.heads || out.embedding.length !== this.dims) return;
    const at = this.base(key);
    const v = Atomics.load(this.words, at);
    if (v % 2 !== 0 || Atomics.compareExchange(this.words, at, v, v + 1) !== v) return;
    for (let i = 0; i < KEY_WORDS; i++) this.words[at + 1 + i] = key[i] as number;
    const start = at + 1 + KEY_WORDS;
    this.floats.set(out.probs, start);
    this.floats.set(out.embedding, start + this.heads);
    // Even again (int32 wrap keeps the parity), and never 0: 0 marks a slot never written.
    Atomics.store(this.words, at, (v + 2) | 0 || 2);
  }

  /** Slots holding an output. */
  used(): number {
    let n = 0;
    for (let at = 0; at < this.words.length; at += this.slot) if (this.words[at] !== 0) n++;
    return n;
  }
}
