/**
 * Scores a JSONL file of {text, label[, role][, source][, categories]} rows with the shipped
 * detectors and prints, per label (jailbreak / injection / harmful, each against the benign
 * rows): ROC AUC, recall at 1% and 5% FPR, precision/recall/F1 at the shipped threshold; then the
 * over-blocking of benign rows, a per-source table and the latency per KB.
 *
 * Usage: npm run eval -- <file.jsonl> [--json out.json] [--no-sources] [--model-dir DIR] [--encoder]
 *
 * --encoder scores the jailbreak head with the shipped encoder (models/encoder, its calibrated
 * score, as the engine's `all` mode uses it) instead of the static detector, and the harm of
 * prompts with both (`calibratedHarm`, the text read whole).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createMlDetectors } from '@guard/scoring/ml/index';
import { calibratedHarm, calibratedJailbreak } from '@guard/scoring/encoder/encoder';
import { createOnnxEncoder } from '@guard/scoring/encoder/onnx-encoder';
import type { TextRole } from '@guard/scoring';
import { rocAuc, thresholdAt } from './roc.js';

interface Row {
  text: string;
  label: string;
  role?: string;
  source?: string;
  categories?: string[];
  /** Responses: the request they answer. */
  request?: string;
}

interface Scored {
  label: string;
  source: string;
  role: TextRole;
  jailbreak: number;
  injection: number;
  harmful: number;
  /** At the shipped threshold for the row's role. */
  flagged: Record<Head, boolean>;
}

const LABELS = ['jailbreak', 'injection', 'harmful'] as const;
type Head = (typeof LABELS)[number];

export { rocAuc };

export function recallAtFpr(pos: number[], neg: number[], fpr: number): number {
  if (pos.length === 0 || neg.length === 0) return NaN;
  const thr = thresholdAt(neg, fpr);
  return pos.filter((s) => s > thr).length / pos.length;
}

function roleOf(row: Row): TextRole {
  const r = row.role ?? row.categories?.find((c) => c.startsWith('role:'))?.slice(5);
  return r === 'response' || r === 'document' ? r : 'prompt';
}

function pct(x: number): string {
  return Number.isNaN(x) ? '   -  ' : `${(100 * x).toFixed(1).padStart(5)}%`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const file = args.find(
    (a, i) => !a.startsWith('--') && !a.endsWith('.json') && args[i - 1] !== '--model-dir',
  );
  const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
  const showSources = !args.includes('--no-sources');
  const modelDir = args.includes('--model-dir') ? args[args.indexOf('--model-dir') + 1] : undefined;
  if (!file) {
    console.error(
      'usage: npm run eval -- <file.jsonl> [--json out.json] [--no-sources] [--model-dir DIR] [--encoder]',
    );
    process.exit(2);
  }
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Row);
  const det = createMlDetectors(modelDir ? { modelDir } : {});
  const encoder = args.includes('--encoder') ? await createOnnxEncoder() : null;
  /** Jailbreak, and the harm of a prompt, as the encoder stage reads a text it reads whole. */
  const encoderScores = async (
    text: string,
    role: TextRole,
  ): Promise<{ jailbreak: number; harm: number }> => {
    const harm = det.harm(text, role).any.score;
    if (!encoder) return { jailbreak: det.jailbreak(text).score, harm };
    const [out] = await encoder.encode([{ role: 'prompt', text }]);
    return {
      jailbreak: calibratedJailbreak(encoder.manifest, out!),
      harm: role === 'prompt' ? (calibratedHarm(encoder.manifest, harm, [out!]) ?? harm) : harm,
    };
  };
  const model = det.model;
  const headOf: Record<Head, number> = {
    jailbreak: model.headIndex('jailbreak'),
    injection: model.headIndex('injection'),
    harmful: model.headIndex('harm'),
  };
  const roles: TextRole[] = ['prompt', 'response', 'document'];
  const thresholds = Object.fromEntries(
    roles.map((r) => [
      r,
      Object.fromEntries(LABELS.map((l) => [l, model.threshold(headOf[l], r)])),
    ]),
  ) as Record<TextRole, Record<Head, number>>;
  // Warm-up so JIT compilation is not billed to the first rows.
  for (let i = 0; i < 200; i++) det.harm(`warm up ${i} ` + 'lorem ipsum '.repeat(i % 50), 'prompt');

  const scored: Scored[] = [];
  let chars = 0;
  let ms = 0;
  for (const row of rows) {
    const role = roleOf(row);
    const t0 = performance.now();
    const { jailbreak: jb, harm } = await encoderScores(row.text, role);
    const inj = det.injection(row.text, role).score;
    ms += performance.now() - t0;
    chars += Buffer.byteLength(row.text, 'utf8');
    scored.push({
      label: row.label,
      source: row.source ?? '(none)',
      role,
      jailbreak: jb,
      injection: inj,
      harmful: harm,
      // jailbreak() always reads its text as a user prompt
      flagged: {
        jailbreak: jb >= thresholds.prompt.jailbreak,
        injection: inj >= thresholds[role].injection,
        harmful: harm >= thresholds[role].harmful,
      },
    });
  }

  const benign = scored.filter((s) => s.label === 'benign');
  // The jailbreak detector reads user prompts only: its negatives are benign prompts.
  const negativesFor = (label: Head): Scored[] =>
    label === 'jailbreak' ? benign.filter((s) => s.role === 'prompt') : benign;
  const flags = (s: Scored): boolean =>
    (s.role === 'prompt' && s.flagged.jailbreak) || s.flagged.injection || s.flagged.harmful;
  const result: Record<string, unknown> = { file, rows: rows.length, thresholds };
  console.log(
    `${rows.length} rows from ${file}; ${benign.length} benign; jailbreak by the ${encoder ? 'encoder' : 'static detector'}`,
  );
  console.log(
    'label       n_pos  AUC     R@1%FPR R@5%FPR  thr (prompt/doc)  P@thr   R@thr   F1@thr',
  );
  for (const label of LABELS) {
    const pos = scored.filter((s) => s.label === label).map((s) => s[label]);
    const negRows = negativesFor(label);
    const neg = negRows.map((s) => s[label]);
    if (pos.length === 0) continue;
    const tp = scored.filter((s) => s.label === label && s.flagged[label]).length;
    const fp = negRows.filter((s) => s.flagged[label]).length;
    const thr = `${thresholds.prompt[label].toFixed(2)}/${thresholds.document[label].toFixed(2)}`;
    const precision = tp + fp > 0 ? tp / (tp + fp) : NaN;
    const recall = tp / pos.length;
    const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
    const r = {
      n: pos.length,
      auc: rocAuc(pos, neg),
      r1: recallAtFpr(pos, neg, 0.01),
      r5: recallAtFpr(pos, neg, 0.05),
      precision,
      recall,
      f1,
    };
    result[label] = r;
    console.log(
      `${label.padEnd(10)} ${String(pos.length).padStart(6)}  ${r.auc.toFixed(4)}  ${pct(r.r1)}  ${pct(r.r5)}  ${thr}  ${pct(precision)}  ${pct(recall)}  ${f1.toFixed(3)}`,
    );
  }
  if (benign.length > 0) {
    const rate = (f: (s: Scored) => boolean): number => benign.filter(f).length / benign.length;
    const ob = {
      jailbreak:
        benign.filter((s) => s.role === 'prompt' && s.flagged.jailbreak).length /
        Math.max(1, benign.filter((s) => s.role === 'prompt').length),
      injection: rate((s) => s.flagged.injection),
      harmful: rate((s) => s.flagged.harmful),
      any: rate(flags),
    };
    result.overBlocking = ob;
    console.log(
      `over-blocking of benign rows at shipped thresholds: jailbreak ${pct(ob.jailbreak)}, injection ${pct(ob.injection)}, harm ${pct(ob.harmful)}, any ${pct(ob.any)}`,
    );
  }
  // The comply head on answers to harmful requests (rows that carry their request): complied
  // (harmful) against declined or harmless (benign), per source.
  const answers = rows.filter((r) => r.request !== undefined && roleOf(r) === 'response');
  if (answers.length > 0 && model.heads.includes('comply')) {
    const thr = model.threshold(model.headIndex('comply'), 'response');
    console.log(
      `\ncomply head on answers to harmful requests (threshold ${thr}): AUC complied vs not, recall at 2% / 5% of the declined answers, flagged at the threshold`,
    );
    const comply: Record<string, unknown> = {};
    for (const source of [...new Set(answers.map((r) => r.source ?? '(none)'))].sort()) {
      const of = (label: string): number[] =>
        answers
          .filter((r) => (r.source ?? '(none)') === source && r.label === label)
          .map((r) => det.compliance(r.text).score);
      const pos = of('harmful');
      const neg = of('benign');
      const at = (xs: number[]): number => xs.filter((x) => x >= thr).length / xs.length;
      const c = {
        complied: pos.length,
        declined: neg.length,
        auc: rocAuc(pos, neg),
        r2: recallAtFpr(pos, neg, 0.02),
        r5: recallAtFpr(pos, neg, 0.05),
        flaggedComplied: at(pos),
        flaggedDeclined: at(neg),
      };
      comply[source] = c;
      console.log(
        `  ${source.padEnd(28)} complied ${String(pos.length).padStart(5)} declined ${String(neg.length).padStart(5)}  AUC ${c.auc.toFixed(3)}  R@2% ${pct(c.r2)}  R@5% ${pct(c.r5)}  flagged ${pct(c.flaggedComplied)} / ${pct(c.flaggedDeclined)}`,
      );
    }
    result.comply = comply;
  }
  if (showSources) {
    const sources = [...new Set(scored.map((s) => `${s.source}\t${s.label}`))].sort();
    const perSource: Record<string, unknown>[] = [];
    console.log(
      '\nper source (share flagged at the shipped threshold; benign rows: by any detector, jailbreak only on prompts)',
    );
    for (const key of sources) {
      const [source, label] = key.split('\t') as [string, string];
      const group = scored.filter((s) => s.source === source && s.label === label);
      let flagged: number;
      let auc = NaN;
      let detail = '';
      if (label === 'benign') {
        flagged = group.filter(flags).length;
        const r = (f: (s: Scored) => boolean): string =>
          pct(group.filter(f).length / group.length).trim();
        detail = `  (jailbreak ${r((s) => s.role === 'prompt' && s.flagged.jailbreak)}, injection ${r((s) => s.flagged.injection)}, harm ${r((s) => s.flagged.harmful)})`;
      } else {
        const head = label as Head;
        flagged = group.filter((s) => s.flagged[head]).length;
        auc = rocAuc(
          group.map((s) => s[head]),
          negativesFor(head).map((s) => s[head]),
        );
      }
      perSource.push({
        source,
        label,
        n: group.length,
        flagged: flagged / group.length,
        aucVsAllBenign: auc,
      });
      console.log(
        `  ${source.padEnd(40)} ${label.padEnd(10)} n=${String(group.length).padStart(6)}  flagged ${pct(flagged / group.length)}${Number.isNaN(auc) ? '' : `  AUC vs all benign ${auc.toFixed(3)}`}${detail}`,
      );
    }
    result.perSource = perSource;
  }
  const perKbMs = ms / (chars / 1024);
  result.latency = { totalMs: ms, kb: chars / 1024, msPerKb: perKbMs };
  console.log(
    `\nlatency: ${(1000 * perKbMs).toFixed(0)} µs per KB for jailbreak${encoder ? ' (encoder)' : ''}+injection+harm (${(chars / 1024).toFixed(0)} KB in ${ms.toFixed(0)} ms, one core)`,
  );
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(result, null, 1));
  await encoder?.close();
}

await main();
