/**
 * Encoder outputs in shared memory: one table for every engine of a process (the request thread's
 * and each scoring thread's), so that a text one thread read is not read again by another. A
 * SharedArrayBuffer travels to worker threads in `workerData` without being copied.
 *
 * The table is direct-mapped: a text's key (the first 16 bytes of a SHA-256 digest of its scope,
 * role and text: cached-encoder.ts) picks its slot, and a new text overwrites whatever held that slot. Each slot is guarded by
 * a version word (a seqlock): a writer makes it odd (taking the slot with compareExchange, so two
 * writers never mix), writes, and makes it even again; a reader copies the slot and keeps the copy
 * only if the version was even and unchanged around the copy. Every word is read and written with
 * Atomics, which orders it against the version word on any CPU. A torn or contended slot reads as
 * absent, never as another text's output. Probabilities and embeddings are stored as float32 (their
 * bits), the precision the model gives them in, so a stored output is exactly the one read.
 */
import type { EncoderManifest, EncoderOutput } from './encoder.js';

/** Words of a key: 16 bytes. */
const KEY_WORDS = 4;

/** What the table's shape depends on: the manifest's head count and embedding size. */
export type OutputShape = Pick<EncoderManifest, 'heads' | 'dims'>;

const slotWords = (shape: OutputShape) => 1 + KEY_WORDS + shape.heads.length + shape.dims;

/** Bytes before the slots: two 64-bit counters (texts found, texts read) for every thread. */
const HEADER_BYTES = 16;

/** What a table has answered, over every engine that shares it. */
export interface TableStats {
  /** Texts found in the table. */
  hits: number;
  /** Texts the model had to read. */
  reads: number;
  /** Slots holding an output. */
  entries: number;
}

/** A buffer for `entries` outputs of this shape (about 1.6 KB each for the shipped encoder). */
export function createOutputBuffer(entries: number, shape: OutputShape): SharedArrayBuffer {
  const n = Math.max(1, Math.floor(entries));
  return new SharedArrayBuffer(HEADER_BYTES + n * slotWords(shape) * 4);
}

export class SharedOutputTable {
  private readonly words: Int32Array;
  private readonly counters: BigInt64Array;
  private readonly slot: number;
  private readonly heads: number;
  private readonly dims: number;
  readonly entries: number;

  constructor(
    readonly buffer: SharedArrayBuffer,
    shape: OutputShape,
  ) {
    this.heads = shape.heads.length;
    this.dims = shape.dims;
    this.slot = slotWords(shape);
    const slots = buffer.byteLength - HEADER_BYTES;
    if (slots <= 0 || slots % (this.slot * 4) !== 0)
      throw new Error(
        `encoder cache buffer of ${buffer.byteLength} bytes does not hold a header and whole slots of ${this.slot * 4} bytes (${this.heads} heads, ${this.dims} dimensions)`,
      );
    this.counters = new BigInt64Array(buffer, 0, 2);
    this.words = new Int32Array(buffer, HEADER_BYTES);
    this.entries = slots / (this.slot * 4);
  }

  /** A table of its own of `entries` outputs of this shape. */
  static create(entries: number, shape: OutputShape): SharedOutputTable {
    return new SharedOutputTable(createOutputBuffer(entries, shape), shape);
  }

  private base(key: Int32Array): number {
    return (((key[0] as number) >>> 0) % this.entries) * this.slot;
  }

  /** Adds to the counters every engine sharing the table sees (`stats`). */
  count(hits: number, reads: number): void {
    if (hits > 0) Atomics.add(this.counters, 0, BigInt(hits));
    if (reads > 0) Atomics.add(this.counters, 1, BigInt(reads));
  }

  /** Texts found and read so far through this table, by any engine, and slots in use. */
  stats(): TableStats {
    return {
      hits: Number(Atomics.load(this.counters, 0)),
      reads: Number(Atomics.load(this.counters, 1)),
      entries: this.used(),
    };
  }

  get(key: Int32Array): EncoderOutput | undefined {
    const at = this.base(key);
    const before = Atomics.load(this.words, at);
    if (before === 0 || before % 2 !== 0) return undefined;
    for (let i = 0; i < KEY_WORDS; i++)
      if (Atomics.load(this.words, at + 1 + i) !== key[i]) return undefined;
    // Word by word with Atomics.load: plain reads racing a writer are not ordered against the
    // version word on every CPU (they are on x86, not on ARM), atomic ones are.
    const start = at + 1 + KEY_WORDS;
    const n = this.heads + this.dims;
    const copy = new Int32Array(n);
    for (let i = 0; i < n; i++) copy[i] = Atomics.load(this.words, start + i);
    if (Atomics.load(this.words, at) !== before) return undefined;
    const floats = new Float32Array(copy.buffer);
    return {
      probs: Array.from(floats.subarray(0, this.heads)),
      embedding: floats.slice(this.heads),
    };
  }

  /**
   * Stores `out` under `key`; skipped (the table is a cache) while another thread writes the slot.
   * A thread stopped in the middle of a write (a scoring thread past its deadline is terminated)
   * leaves its slot marked as being written: that slot stays empty for the life of the process.
   */
  set(key: Int32Array, out: EncoderOutput): void {
    if (out.probs.length !== this.heads || out.embedding.length !== this.dims) return;
    const at = this.base(key);
    const v = Atomics.load(this.words, at);
    if (v % 2 !== 0 || Atomics.compareExchange(this.words, at, v, v + 1) !== v) return;
    const floats = new Float32Array(this.heads + this.dims);
    floats.set(out.probs);
    floats.set(out.embedding, this.heads);
    const bits = new Int32Array(floats.buffer);
    for (let i = 0; i < KEY_WORDS; i++) Atomics.store(this.words, at + 1 + i, key[i] as number);
    const start = at + 1 + KEY_WORDS;
    for (let i = 0; i < bits.length; i++) Atomics.store(this.words, start + i, bits[i] as number);
    // Even again (int32 wrap keeps the parity), and never 0: 0 marks a slot never written.
    Atomics.store(this.words, at, (v + 2) | 0 || 2);
  }

  /** Slots holding an output (not those never written, being written or left mid-write). */
  used(): number {
    let n = 0;
    for (let at = 0; at < this.words.length; at += this.slot) {
      const v = Atomics.load(this.words, at);
      if (v !== 0 && v % 2 === 0) n++;
    }
    return n;
  }
}
