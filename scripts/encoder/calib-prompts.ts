/**
 * The calibration split's prompts (and answers) from build-dataset.ts's train-texts.jsonl
 * (GUARD_TRAIN_TEXTS=1): what calibrate.ts, calibrate-harm-topics.ts and calibrate-answers.ts set
 * their points on.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createPolicyCompiler } from '../../shared/scoring/src/engine/compiled-policy.js';
import {
  analyseRequest,
  type RequestAnalysis,
} from '../../shared/scoring/src/engine/evaluate-local.js';
import { createMlDetectors } from '../../shared/scoring/src/ml/index.js';
// The default thresholds (the ipi threshold is 0.5 whatever they are).
import { TEST_THRESHOLDS } from '../../shared/scoring/src/testing/requests.js';
import { toolResultMessages } from '../../shared/testing/src/score-request.js';
import { pick } from '../train/synthetic.js';

export interface CalibRow {
  text: string;
  source: string;
  label: string;
  role: string;
  split: string;
  /** Per head of the build (build-dataset.ts `HEADS`): 1, 0, or -1 for no target. */
  targets: number[];
}

/**
 * Sources kept out of every over-blocking budget (abusive-language contrast sets, template
 * refusals): the same list as train_detectors.py's calibration, scripts/train/not-budgeted.json.
 */
export const NOT_BUDGETED: ReadonlySet<string> = new Set<string>(
  (
    JSON.parse(fs.readFileSync(new URL('../train/not-budgeted.json', import.meta.url), 'utf8')) as {
      sources: string[];
    }
  ).sources,
);

/** Indices of the build's targets (build-dataset.ts `HEADS`: 12 harm categories before comply). */
export const TARGET_INDEX = { jailbreak: 0, harm: 2, comply: 15 } as const;

/** The calibration split's prompts that have a target for `target` (an index of `TARGET_INDEX`). */
export function calibPrompts(file: string, target: number): Promise<CalibRow[]> {
  return calibRows(file, 'prompt', target);
}

/** The calibration split's rows of `role` that have a target for `target`. */
export async function calibRows(file: string, role: string, target: number): Promise<CalibRow[]> {
  const rows: CalibRow[] = [];
  for await (const line of readline.createInterface({ input: fs.createReadStream(file) })) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as CalibRow;
    if (r.split === 'calib' && r.role === role && (r.targets[target] ?? -1) >= 0) rows.push(r);
  }
  return rows;
}

/** Lengths of the long prompts the points of long inputs are held on, in characters. */
export const LONG_MIN = 500;
export const LONG_MAX = 4000;

/**
 * Long prompts joined from `ordinary` ones, drawn with `next`: `joined(chars, middle)` is at least
 * `chars` characters of them, each separated from the next by a space, a newline or an empty line,
 * with `middle` among them halfway when given. What the points of long inputs are held on
 * (calibrate.ts, calibrate-harm-parts.ts).
 */
export function promptJoiner(
  ordinary: readonly string[],
  next: () => number,
): (chars: number, middle?: string) => string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  return (chars, middle) => {
    const parts: string[] = [];
    for (let n = 0; n < chars;) {
      const t = pick(ordinary);
      parts.push(t);
      n += t.length + 1;
    }
    if (middle) parts.splice(Math.floor(parts.length / 2), 0, middle);
    return parts.reduce((text, t) => text + pick([' ', '\n', '\n\n']) + t);
  };
}

/**
 * The arguments of every calibration step, `TRAIN_TEXTS.jsonl MODEL_DIR [STATIC_DIR]` (exits with
 * `script`'s usage line when one is missing); `manifestPath`: MODEL_DIR's encoder.json.
 */
export function calibrationArgs(script: string): {
  textsFile: string;
  dir: string;
  staticDir: string | undefined;
  manifestPath: string;
} {
  const [textsFile, dir, staticDir] = process.argv.slice(2);
  if (!textsFile || !dir) {
    console.error(`usage: ${script} TRAIN_TEXTS.jsonl MODEL_DIR [STATIC_DIR]`);
    process.exit(2);
  }
  return { textsFile, dir, staticDir, manifestPath: path.join(dir, 'encoder.json') };
}

/**
 * What the engine analyses a request with in a calibration step: the static detectors of
 * STATIC_DIR (a leave-one-source-out fold's) when given, else the committed ones.
 */
export function analysisDeps(staticDir: string | undefined) {
  return {
    detectors: createMlDetectors(staticDir ? { modelDir: staticDir } : {}),
    compile: createPolicyCompiler(),
  };
}

/**
 * The engine's analysis of `text` sent as a tool result after "Summarise this document." (no
 * rules, default thresholds): what the document steps read and score.
 */
export function toolResultAnalysis(
  text: string,
  deps: ReturnType<typeof analysisDeps>,
): RequestAnalysis {
  return analyseRequest(
    {
      messages: toolResultMessages(text),
      rules: [],
      thresholds: TEST_THRESHOLDS,
      mode: 'content_moderation',
      scanners_config: {},
      reasoning_mode: 'off',
    },
    deps,
  );
}

/** How many of the calibration split's documents each long calibration text joins. */
export const JOINED_DOCUMENTS = [2, 3, 4, 6, 8, 12, 20, 30] as const;

/**
 * Long calibration texts: for each k of JOINED_DOCUMENTS, `clean` texts of k of the `benign`
 * documents and `planted` of k benign ones with one of the `injected` in the middle, an empty line
 * between two, drawn with `next`. What the point of long documents read whole is set on
 * (calibrate-documents.ts) and what document-points.ts compared its ways on.
 */
export function joinedDocuments(
  benign: readonly string[],
  injected: readonly string[],
  next: () => number,
  { clean = 150, planted = 60 } = {},
): Array<{ text: string; injected: boolean }> {
  const out: Array<{ text: string; injected: boolean }> = [];
  for (const k of JOINED_DOCUMENTS) {
    for (let i = 0; i < clean; i++)
      out.push({
        text: Array.from({ length: k }, () => pick(next, benign)).join('\n\n'),
        injected: false,
      });
    for (let i = 0; i < planted; i++) {
      const parts = Array.from({ length: k }, () => pick(next, benign));
      parts.splice(Math.floor(k / 2), 0, pick(next, injected));
      out.push({ text: parts.join('\n\n'), injected: true });
    }
  }
  return out;
}
