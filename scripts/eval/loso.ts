/**
 * Leave-one-source-out (LOSO) evaluation of the learned detectors: for each attack/harm source,
 * build the training set without that source and without a fixed held-out benign pool
 * (`GUARD_TRAIN_EXCLUDE` of build-dataset.ts), train and export to a fold directory
 * (`train_detectors.py --out`, never shared/scoring/models), then score the held-out source's rows
 * and the benign pool with the fold's weights through the TypeScript scorer.
 *
 * Metric: recall of the source's positives on the head matching their label (jailbreak ->
 * jailbreak, injection -> injection, harmful -> harm) at the threshold that flags 1% of the benign
 * pool, the pool scored in the role of each positive row; plus "any detector fires" at each head's
 * 1% pool threshold, the pool's own FPR for "any", and the same numbers for the shipped model
 * (which did train on most of these sources). Nothing is tuned on the held-out rows.
 *
 * The pseudo-source `_reference` (run first by default) trains one model without the pool only: it
 * has seen every source, so its recall under the same protocol is the in-training comparison for
 * each fold ("reference" column); the shipped model's pool threshold is less comparable, since it
 * trained on part of the pool (gsm8k, 70% of gpteacher_roleplay).
 *
 * Output: .cache/guard-loso/folds/<source>/{model/,result.json,*.log}, .cache/guard-loso/loso.json
 * and loso.md (all folds found on disk, so runs of subsets accumulate). Logs carry counts only.
 *
 * Usage: npm run eval:loso -- [--sources a,b,c] [--epochs N] [--pool a,b] [--reuse-build]
 *        [--report-only]
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMlDetectors, type MlDetectors } from '@guard/scoring/ml/index';
import type { TextRole } from '@guard/scoring';
import { readRows, roleOf, tag, type Row } from './loso-rows.js';
import { rocAuc, thresholdAt } from './roc.js';
import { LOSO_POOL, VAL_SOURCES } from '../train/sources.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATA = process.env.GUARD_TRAIN_DATA ?? path.resolve(ROOT, '../shared/data/train');
const OUT = path.join(ROOT, '.cache/guard-loso');
const BUILD = path.join(OUT, 'build');
const FOLDS = path.join(OUT, 'folds');
const MODELS = path.join(ROOT, 'shared/scoring/models');
const VENV = path.join(ROOT, 'node_modules/.cache/guard-train-venv');
const PY = path.join(VENV, 'bin/python');
const FPR = 0.01;

const REFERENCE = '_reference';
/** Priority order: jailbreak, injection, harmful prompts, harmful responses, content sets. */
export const DEFAULT_SOURCES = [
  'jailbreak_llms',
  'gptfuzz_prompts',
  'sap',
  'trustllm_safety',
  'deepinception_smoothllm_gcg',
  'deepset_prompt_injections',
  'bipia',
  'advbench',
  'strongreject',
  'harmbench',
  'red_instruct',
  'do_not_answer',
  'gptfuzz_responses',
  'diasafety',
  'multilingual_hatecheck',
  'rtp_lx',
  'cold',
  'davidson_hate_offensive',
  'korean_hate_speech',
  'told_br',
  'toxigen_prompts',
  'convabuse',
];
/** The ordinary-traffic part of the pool, for a second threshold (see FoldResult.ordinary). */
const ORDINARY = ['nq_open', 'gsm8k'];

const LABELS = ['jailbreak', 'injection', 'harmful'] as const;
type Label = (typeof LABELS)[number];

interface Scores {
  jailbreak: number;
  injection: number;
  harmful: number;
}

export interface SideResult {
  /** Recall at the 1% pool-FPR threshold of the matching head. */
  recall: number;
  auc: number;
  /** Any of jailbreak (prompts only), injection, harm above its own 1% pool threshold. */
  anyRecall: number;
  /** Benign rows of the held-out source flagged by the matching head at the pool threshold. */
  ownBenignFlagged?: number;
  /** Recall at 1% FPR of the source's own benign rows (when it has >= 100). */
  recallAtOwnBenign1?: number;
  byLang?: Record<string, { n: number; recall: number }>;
}

export interface FoldResult {
  source: string;
  label: Label;
  rows: number;
  roles: Record<string, number>;
  ownBenign: number;
  epochs: number;
  pool: string[];
  poolRows: number;
  loso: SideResult;
  production: SideResult;
  /** The `_reference` model (trained on this source too), filled in by the report. */
  reference?: SideResult;
  /**
   * Recall at 1% FPR of the ordinary-traffic part of the pool only (nq_open + gsm8k: no role-play,
   * no look-unsafe prompts), fold model and reference model; filled in by the report.
   */
  ordinary?: { loso: number; reference: number };
  buildSeconds: number;
  trainSeconds: number;
  finishedAt: string;
}

function score(det: MlDetectors, text: string, role: TextRole): Scores {
  return {
    jailbreak: det.jailbreak(text).score,
    injection: det.injection(text, role).score,
    harmful: det.harm(text, role).any.score,
  };
}

function share(xs: boolean[]): number {
  return xs.length === 0 ? NaN : xs.filter(Boolean).length / xs.length;
}

/** Scores the held-out rows and the pool with one model and computes the fold's metrics. */
function evaluate(
  det: MlDetectors,
  rows: Row[],
  label: Label,
  pool: string[],
): { side: SideResult; poolAny: Record<string, number> } {
  const pos = rows.filter((r) => r.label === label);
  const own = rows.filter((r) => r.label === 'benign');
  const roles = [...new Set([...pos, ...own].map(roleOf))];
  // Pool scored in each role the held-out rows use.
  const poolScores = new Map<TextRole, Scores[]>();
  for (const role of roles)
    poolScores.set(
      role,
      pool.map((t) => score(det, t, role)),
    );
  const thr = new Map<TextRole, Scores>();
  for (const [role, s] of poolScores)
    thr.set(role, {
      jailbreak: thresholdAt(
        s.map((x) => x.jailbreak),
        FPR,
      ),
      injection: thresholdAt(
        s.map((x) => x.injection),
        FPR,
      ),
      harmful: thresholdAt(
        s.map((x) => x.harmful),
        FPR,
      ),
    });
  const fires = (s: Scores, role: TextRole): boolean => {
    const t = thr.get(role) as Scores;
    return (
      (role === 'prompt' && s.jailbreak > t.jailbreak) ||
      s.injection > t.injection ||
      s.harmful > t.harmful
    );
  };
  const poolAny: Record<string, number> = {};
  for (const [role, s] of poolScores) poolAny[role] = share(s.map((x) => fires(x, role)));
  const posScored = pos.map((r) => ({ r, role: roleOf(r), s: score(det, r.text, roleOf(r)) }));
  const ownScored = own.map((r) => ({ r, role: roleOf(r), s: score(det, r.text, roleOf(r)) }));
  const hit = (x: { role: TextRole; s: Scores }): boolean =>
    x.s[label] > (thr.get(x.role) as Scores)[label];
  const mainRole = [...roles].sort(
    (a, b) =>
      posScored.filter((x) => x.role === b).length - posScored.filter((x) => x.role === a).length,
  )[0] as TextRole;
  const side: SideResult = {
    recall: share(posScored.map(hit)),
    auc: rocAuc(
      posScored.map((x) => x.s[label]),
      (poolScores.get(mainRole) ?? []).map((x) => x[label]),
    ),
    anyRecall: share(posScored.map((x) => fires(x.s, x.role))),
  };
  if (own.length > 0) side.ownBenignFlagged = share(ownScored.map(hit));
  if (own.length >= 100) {
    const t = thresholdAt(
      ownScored.map((x) => x.s[label]),
      FPR,
    );
    side.recallAtOwnBenign1 = share(posScored.map((x) => x.s[label] > t));
  }
  const langs = new Set(posScored.map((x) => tag(x.r, 'lang:')).filter(Boolean));
  if (langs.size > 1) {
    side.byLang = {};
    for (const lang of [...langs].sort()) {
      const g = posScored.filter((x) => tag(x.r, 'lang:') === lang);
      side.byLang[lang as string] = { n: g.length, recall: share(g.map(hit)) };
    }
  }
  return { side, poolAny };
}

function run(cmd: string, args: string[], env: Record<string, string>, log: string): number {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  writeFileSync(log, `${r.stdout ?? ''}\n--- stderr ---\n${r.stderr ?? ''}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}); see ${log}`);
  return (Date.now() - t0) / 1000;
}

function ensureVenv(): void {
  if (existsSync(PY)) return;
  console.log(`creating the training venv in ${VENV} (as npm run train does)`);
  spawnSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
  const r = spawnSync(
    PY,
    ['-m', 'pip', 'install', '--quiet', '-r', 'scripts/train/requirements.txt'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error('pip install failed');
}

function pct(x: number | undefined): string {
  return x === undefined || Number.isNaN(x) ? '-' : `${(100 * x).toFixed(1)}%`;
}

function poolFprAtShipped(det: MlDetectors, pool: string[]): Record<string, number> {
  const model = det.model;
  const t = (h: string): number => model.threshold(model.headIndex(h), 'prompt');
  const s = pool.map((x) => score(det, x, 'prompt'));
  const jb = s.map((x) => x.jailbreak >= t('jailbreak'));
  const inj = s.map((x) => x.injection >= t('injection'));
  const harm = s.map((x) => x.harmful >= t('harm'));
  return {
    jailbreak: share(jb),
    injection: share(inj),
    harmful: share(harm),
    any: share(s.map((_, i) => Boolean(jb[i] || inj[i] || harm[i]))),
  };
}

function report(pool: string[], poolRows: Record<string, string[]>): void {
  const results: FoldResult[] = [];
  if (existsSync(FOLDS))
    for (const d of readdirSync(FOLDS).sort()) {
      const f = path.join(FOLDS, d, 'result.json');
      if (existsSync(f)) results.push(...(JSON.parse(readFileSync(f, 'utf8')) as FoldResult[]));
    }
  const order = (s: string): number => {
    const i = DEFAULT_SOURCES.indexOf(s);
    return i < 0 ? DEFAULT_SOURCES.length : i;
  };
  results.sort((a, b) => order(a.source) - order(b.source) || a.label.localeCompare(b.label));
  const prod = createMlDetectors();
  const allPool = pool.flatMap((p) => poolRows[p] ?? []);
  const ordinaryPool = ORDINARY.filter((p) => pool.includes(p)).flatMap((p) => poolRows[p] ?? []);
  const refDir = path.join(FOLDS, REFERENCE, 'model');
  if (existsSync(path.join(refDir, 'detectors.bin'))) {
    const ref = createMlDetectors({ modelDir: refDir });
    for (const r of results) {
      const rows = readRows(DATA, r.source);
      r.reference = evaluate(ref, rows, r.label, allPool).side;
      if (ordinaryPool.length > 0) {
        const fold = createMlDetectors({ modelDir: path.join(FOLDS, r.source, 'model') });
        r.ordinary = {
          loso: evaluate(fold, rows, r.label, ordinaryPool).side.recall,
          reference: evaluate(ref, rows, r.label, ordinaryPool).side.recall,
        };
      }
    }
  }
  const shipped = poolFprAtShipped(prod, allPool);
  const perPoolSource = Object.fromEntries(
    pool.map((p) => [p, poolFprAtShipped(prod, poolRows[p] ?? [])]),
  );
  const notRun = DEFAULT_SOURCES.filter((s) => !results.some((r) => r.source === s));
  writeFileSync(
    path.join(OUT, 'loso.json'),
    JSON.stringify(
      {
        pool,
        poolRows: allPool.length,
        poolFprAtShippedThresholds: { all: shipped, ...perPoolSource },
        folds: results,
        notRun,
      },
      null,
      1,
    ),
  );
  const lines = [
    `# Leave-one-source-out (${new Date().toISOString()})`,
    '',
    `Benign pool (held out of every fold): ${pool.join(', ')} (${allPool.length} benign rows).`,
    '',
    '| source | label | rows | epochs | LOSO recall @1% pool FPR | AUC vs pool | any detector | benign rows of the source flagged | recall @1% FPR of own benign | reference (trained on it) | shipped model | LOSO / reference @1% FPR of nq_open+gsm8k |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of results)
    lines.push(
      `| ${r.source} | ${r.label} | ${r.rows} | ${r.epochs} | ${pct(r.loso.recall)} | ${r.loso.auc.toFixed(3)} | ${pct(r.loso.anyRecall)} | ${r.ownBenign > 0 ? `${pct(r.loso.ownBenignFlagged)} of ${r.ownBenign}` : '-'} | ${pct(r.loso.recallAtOwnBenign1)} | ${pct(r.reference?.recall)} | ${pct(r.production.recall)} | ${r.ordinary ? `${pct(r.ordinary.loso)} / ${pct(r.ordinary.reference)}` : '-'} |`,
    );
  const langs = results.filter((r) => r.loso.byLang);
  if (langs.length > 0) {
    lines.push(
      '',
      'Per language (LOSO recall at the pool threshold; reference model in brackets):',
      '',
    );
    for (const r of langs)
      lines.push(
        `- ${r.source} (${r.label}): ` +
          Object.entries(r.loso.byLang ?? {})
            .map(
              ([l, v]) =>
                `${l} ${pct(v.recall)} [${pct(r.reference?.byLang?.[l]?.recall)}] (n=${v.n})`,
            )
            .join(', '),
      );
  }
  lines.push(
    '',
    `Pool flagged by the shipped model at its shipped thresholds (prompt role): jailbreak ${pct(shipped.jailbreak)}, injection ${pct(shipped.injection)}, harm ${pct(shipped.harmful)}, any ${pct(shipped.any)}.`,
    '',
    ...pool.map(
      (p) =>
        `- ${p} (${poolRows[p]?.length ?? 0}): jailbreak ${pct(perPoolSource[p]?.jailbreak)}, injection ${pct(perPoolSource[p]?.injection)}, harm ${pct(perPoolSource[p]?.harmful)}, any ${pct(perPoolSource[p]?.any)}`,
    ),
    '',
    `Not run: ${notRun.length > 0 ? notRun.join(', ') : 'none'}.`,
    '',
  );
  writeFileSync(path.join(OUT, 'loso.md'), lines.join('\n'));
  console.log(lines.join('\n'));
}

function main(): void {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const sources = (opt('--sources') ?? [REFERENCE, ...DEFAULT_SOURCES].join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const epochs = Number(opt('--epochs') ?? '3');
  const pool = (opt('--pool') ?? LOSO_POOL.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  mkdirSync(FOLDS, { recursive: true });
  const poolRows: Record<string, string[]> = Object.fromEntries(
    pool.map((p) => [
      p,
      readRows(DATA, p)
        .filter((r) => r.label === 'benign')
        .map((r) => r.text),
    ]),
  );
  const poolTexts = pool.flatMap((p) => poolRows[p] ?? []);
  if (args.includes('--report-only')) return report(pool, poolRows);
  ensureVenv();
  const prod = createMlDetectors();
  for (const source of sources) {
    if (pool.includes(source)) throw new Error(`${source} is in the benign pool`);
    const rows = source === REFERENCE ? [] : readRows(DATA, source);
    const labels = LABELS.filter((l) => rows.some((r) => r.label === l));
    const dir = path.join(FOLDS, source);
    const modelDir = path.join(dir, 'model');
    mkdirSync(modelDir, { recursive: true });
    const exclude = (source === REFERENCE ? pool : [source, ...pool]).join(',');
    const marker = path.join(BUILD, 'loso-exclude.txt');
    let buildSeconds = 0;
    let trainSeconds = 0;
    const refModel = path.join(FOLDS, REFERENCE, 'model');
    // A source build-dataset.ts holds out of training entirely (VAL_SOURCES): excluding it changes
    // no training row, so its fold is the `_reference` model (byte-identical weights, checked for
    // gptfuzz_prompts and deepset_prompt_injections) and is not retrained.
    const reuse = VAL_SOURCES.has(source) && existsSync(path.join(refModel, 'detectors.bin'));
    if (reuse) {
      console.log(`[${source}] already held out of every training build: fold = ${REFERENCE}`);
      for (const f of ['detectors.json', 'detectors.bin'])
        copyFileSync(path.join(refModel, f), path.join(modelDir, f));
    } else {
      console.log(
        `[${source}] ${rows.length} rows (${labels.join(', ')}); building without ${exclude}`,
      );
      const reusable =
        args.includes('--reuse-build') &&
        existsSync(marker) &&
        readFileSync(marker, 'utf8') === exclude;
      if (!reusable) {
        mkdirSync(BUILD, { recursive: true });
        writeFileSync(marker, '');
        buildSeconds = run(
          'node',
          ['--conditions=source', '--import', 'tsx', 'scripts/train/build-dataset.ts'],
          { GUARD_TRAIN_EXCLUDE: exclude, GUARD_TRAIN_CACHE: BUILD },
          path.join(dir, 'build.log'),
        );
        writeFileSync(marker, exclude);
      }
      console.log(`[${source}] built in ${buildSeconds.toFixed(0)} s; training ${epochs} epochs`);
      trainSeconds = run(
        PY,
        [
          'scripts/train/train_detectors.py',
          '--variant',
          'hybrid',
          '--epochs',
          String(epochs),
          '--export',
          '--out',
          modelDir,
        ],
        {
          GUARD_TRAIN_CACHE: BUILD,
          PYTHONHASHSEED: '0',
          HF_HUB_OFFLINE: '1',
          TRANSFORMERS_OFFLINE: '1',
        },
        path.join(dir, 'train.log'),
      );
    }
    copyFileSync(path.join(MODELS, 'vocab.txt'), path.join(modelDir, 'vocab.txt'));
    const det = createMlDetectors({ modelDir });
    const results: FoldResult[] = [];
    for (const label of labels) {
      const pos = rows.filter((r) => r.label === label);
      const roles: Record<string, number> = {};
      for (const r of pos) roles[roleOf(r)] = (roles[roleOf(r)] ?? 0) + 1;
      const fold = evaluate(det, rows, label, poolTexts);
      const production = evaluate(prod, rows, label, poolTexts);
      results.push({
        source,
        label,
        rows: pos.length,
        roles,
        ownBenign: rows.filter((r) => r.label === 'benign').length,
        epochs,
        pool,
        poolRows: poolTexts.length,
        loso: fold.side,
        production: production.side,
        buildSeconds,
        trainSeconds,
        finishedAt: new Date().toISOString(),
      });
      console.log(
        `[${source}] ${label}: n=${pos.length} LOSO recall@1% pool FPR ${pct(fold.side.recall)} (AUC ${fold.side.auc.toFixed(3)}, any ${pct(fold.side.anyRecall)}; pool any-FPR ${Object.entries(
          fold.poolAny,
        )
          .map(([k, v]) => `${k} ${pct(v)}`)
          .join(' ')}); shipped model ${pct(production.side.recall)}`,
      );
    }
    writeFileSync(path.join(dir, 'result.json'), JSON.stringify(results, null, 1));
    console.log(
      `[${source}] done: build ${buildSeconds.toFixed(0)} s, train ${trainSeconds.toFixed(0)} s`,
    );
  }
  report(pool, poolRows);
}

main();
