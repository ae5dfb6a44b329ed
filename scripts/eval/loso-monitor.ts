/**
 * Leave-one-source-out at the product level: what a policy's rules decide (`/guard/monitor`'s
 * verdicts, not one detector's ranking) on a harm source the static detectors never trained on,
 * and on the benign pool no fold trained on. For each fold of `npm run eval:loso` found on disk
 * (.cache/guard-loso/folds/<source>/model; a source held out of every build uses `_reference`),
 * it writes the source's harmful prompts and content (per language where the source has several)
 * and the pool's benign prompts to .cache/guard-loso/monitor/<source>.jsonl, then runs
 * `npm run eval:monitor` on it with the fold's weights, the encoder off (no fold has an encoder
 * here) and `--rules-only` (the policy's rules, without the built-in jailbreak signal, which is
 * not what a harm source measures).
 *
 *   npm run eval:loso-monitor -- [--sources a,b] [--policy NAME] [--without RULE]
 *
 * --without RULE (default serious_harm, the preset's rule about harm in general) adds the column
 * of monitor-eval.ts: the same verdicts with that rule left out. Run `npm run eval:loso` first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LOSO_POOL } from '../train/sources.js';
import { readRows, roleOf, tag } from './loso-rows.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATA = process.env.GUARD_TRAIN_DATA ?? path.resolve(ROOT, '../shared/data/train');
const FOLDS = path.join(ROOT, '.cache/guard-loso/folds');
const OUT = path.join(ROOT, '.cache/guard-loso/monitor');

const { values } = parseArgs({
  options: {
    sources: { type: 'string' },
    policy: { type: 'string', default: 'Basic Content Safety' },
    without: { type: 'string', default: 'serious_harm' },
  },
});

const modelOf = (fold: string) => path.join(FOLDS, fold, 'model');
const hasModel = (fold: string) => existsSync(path.join(modelOf(fold), 'detectors.bin'));

if (!existsSync(path.join(DATA, 'advbench.jsonl'))) {
  console.error(`no training data at ${DATA}: set GUARD_TRAIN_DATA`);
  process.exit(2);
}
if (!hasModel('_reference')) {
  console.error(`no fold models in ${FOLDS}: run npm run eval:loso first`);
  process.exit(2);
}
const folds = values.sources
  ? values.sources.split(',').map((s) => s.trim())
  : readdirSync(FOLDS).filter((f) => f !== '_reference' && hasModel(f));

const pool = LOSO_POOL.flatMap((source) =>
  readRows(DATA, source)
    .filter((r) => r.label === 'benign')
    .map((r) => ({ text: r.text, label: 'benign', role: 'prompt', source })),
);
mkdirSync(OUT, { recursive: true });
for (const fold of folds) {
  if (!existsSync(path.join(DATA, `${fold}.jsonl`))) {
    console.error(`${fold}: no such training source`);
    process.exit(2);
  }
  const harmful = readRows(DATA, fold).filter(
    (r) => r.label === 'harmful' && roleOf(r) === 'prompt',
  );
  if (harmful.length === 0) {
    console.log(`== ${fold}: no harmful prompts or content, skipped`);
    continue;
  }
  const langs = new Set(harmful.map((r) => tag(r, 'lang:')));
  const rows = harmful.map((r) => ({
    text: r.text,
    label: 'harmful',
    role: 'prompt',
    source: langs.size > 1 ? `${fold}:${tag(r, 'lang:') ?? '?'}` : fold,
  }));
  const file = path.join(OUT, `${fold}.jsonl`);
  writeFileSync(file, [...rows, ...pool].map((r) => JSON.stringify(r)).join('\n') + '\n');
  const model = hasModel(fold) ? fold : '_reference';
  console.log(`== ${fold} (held out of the weights of fold ${model})`);
  const run = spawnSync(
    'npm',
    [
      'run',
      '-s',
      'eval:monitor',
      '--',
      file,
      '--policy',
      values.policy,
      '--model-dir',
      modelOf(model),
      '--encoder',
      'off',
      '--rules-only',
      ...(values.without ? ['--without', values.without] : []),
    ],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (run.status !== 0) process.exit(run.status ?? 1);
  // The per-source lines: the held-out source (per language) and each pool source.
  for (const line of run.stdout.split('\n'))
    if (/^\s+(benign|harmful)\s+\S+\s+\d+ rows/.test(line)) console.log(line);
}
