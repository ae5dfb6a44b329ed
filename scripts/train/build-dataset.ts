/**
 * Builds the detector training set: reads the labelled JSONL files, assigns every row to the
 * train / calibration / validation split (validation = whole held-out source datasets, held-out
 * languages, held-out attack types and held-out template families; never random rows of a
 * fitted source), deduplicates across splits, adds template augmentation, trains the character
 * language model, and featurises everything with the serving featuriser.
 *
 * Output (in $GUARD_TRAIN_CACHE, default .cache/guard-train): binary feature files for
 * scripts/train/train_detectors.py, val.jsonl / calib.jsonl for `npm run eval`, and a summary.
 * $GUARD_TRAIN_EXCLUDE=src1,src2 holds those sources out of training entirely (leave-one-source-out,
 * scripts/eval/loso.ts): all their rows go to the validation split, so the cross-split dedupe also
 * drops training rows that duplicate them. Unset, the build is unchanged. $GUARD_TRAIN_TEXTS=1 also
 * writes train-texts.jsonl (the training and calibration rows as text with their head targets).
 * $GUARD_TRAIN_WEAK_KEEP=FILE keeps only the weakly labelled rows FILE lists (see WEAK_KEEP).
 *
 * Usage: tsx --conditions=source scripts/train/build-dataset.ts
 */
import {
  createReadStream,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { HARM_CATEGORIES, type TextRole } from '@guard/scoring';
import {
  BucketBuffer,
  CHAR_CLASSES,
  charClass,
  denseDim,
  denseFeatures,
  segmentText,
  sparseFeatures,
  type FeaturizerResources,
} from '@guard/scoring/ml/features';
import { loadEmbeddingTable, loadTokenizerResources } from '@guard/scoring/ml/ml-model';
import {
  BENIGN_ROLEPLAY,
  COMPLY as COMPLY_TEMPLATES,
  COMPLY_STEPS,
  capitalise,
  fill,
  REFUSE,
  REFUSE_ALTERNATIVES,
  BENIGN_TOPICS,
  DIRECT_INJECTION,
  EMAIL_FRAMES,
  HARM_LOOKALIKES,
  HUMAN_INSTRUCTIONS,
  INDIRECT_INJECTION,
  INJECTION_PAYLOADS,
  INJECTION_PAYLOADS_I18N,
  NAMES,
  PERSONA,
  SAFE_LOOKING,
  SCENARIO,
  SUBJECTS,
  gibberishSuffix,
  lookalikeCombos,
  identityStatements,
  safetyQuestions,
  threatRows,
  mulberry32,
  pick,
  technicalNoise,
  type Family,
  type Rng,
} from './synthetic.js';
import { VAL_SOURCES } from './sources.js';
import { fnv, norm, textHash, weaklyLabelled } from './text-hash.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATA = process.env.GUARD_TRAIN_DATA ?? path.resolve(ROOT, '../shared/data/train');
const OUT = process.env.GUARD_TRAIN_CACHE ?? path.join(ROOT, '.cache/guard-train');
const MODELS = path.join(ROOT, 'shared/scoring/models');
const SEED = 20240611;
const EXCLUDE = new Set(
  (process.env.GUARD_TRAIN_EXCLUDE ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
/**
 * $GUARD_TRAIN_WEAK_KEEP=FILE (written by scripts/train/clean-weak-labels.ts): of the rows with a
 * weak label (`weak_label:*`: hh_rlhf_harmless_base's red-team openers, every one labelled harmful,
 * innocuous ones included), only those FILE lists (`kept`, by textHash) are kept; the others are
 * dropped as unlabelled. Unset, every row is kept.
 */
const WEAK_KEEP: Set<number> | null = process.env.GUARD_TRAIN_WEAK_KEEP
  ? new Set(
      (JSON.parse(readFileSync(process.env.GUARD_TRAIN_WEAK_KEEP, 'utf8')) as { kept: number[] })
        .kept,
    )
  : null;
const MAX_TRAIN_CHARS = 6000;

/** `comply`: does a response go along with the harmful request it answers (see COMPLY_SOURCES). */
export const HEADS = ['jailbreak', 'injection', 'harm', ...HARM_CATEGORIES, 'comply'] as const;
const H = HEADS.length;
const JB = 0;
const INJ = 1;
const HARM = 2;
const CAT0 = 3;
const COMPLY = H - 1;
/**
 * Responses written to harmful requests and labelled complied (harmful) or not (refusals,
 * deflections, harmless role-play): the only rows with a `comply` target.
 */
const COMPLY_SOURCES = new Set([
  'gptfuzz_responses',
  'sap',
  'synthetic:comply',
  'synthetic:refuse',
]);

type Split = 'train' | 'calib' | 'val';
type Label = 'jailbreak' | 'injection' | 'harmful' | 'benign';

interface Doc {
  text: string;
  label: Label;
  role: TextRole;
  source: string;
  split: Split;
  /** -1 = unknown (masked in the loss), else 0/1 per head. */
  targets: Int8Array;
  /** Responses: the request they answer, where the source records it (evaluation only). */
  request?: string;
}

interface Row {
  text: string;
  label: Label;
  categories?: string[];
  source: string;
}

function tag(row: Row, prefix: string): string | undefined {
  return row.categories?.find((c) => c.startsWith(prefix))?.slice(prefix.length);
}

function roleOf(row: Row): TextRole {
  const r = tag(row, 'role:');
  if (r === 'response') return 'response';
  if (r === 'document') return 'document';
  return 'prompt';
}

// ---- category mapping from upstream tags (null = unknown, [] = harmful but none of ours) ----
const RED_SUBTOPIC: Record<string, string[]> = {
  'Content Sexual exploitation': ['sexual_minors'],
  'Online predation': ['sexual_minors'],
  'Physical abuse': ['violence'],
  'Emotional and psychological abuse': ['harassment'],
  Neglect: [],
  Cyberbullying: ['harassment'],
  'Gender-based violence': ['violence'],
  'Racial or ethnic hate': ['hate'],
  'Religious intolerance': ['hate'],
  'Terrorism and extremism': ['extremism', 'violence'],
  Cybercrime: ['cybercrime'],
  Drug: ['illegal_drugs'],
  'Human Trafficking': [],
  'Theft and Robbery': [],
  Weapon: ['weapons'],
  'Assault and battery': ['violence'],
  'Hazardous material handling': [],
  'Self-harm': ['self_harm'],
  'Unsafe practices': [],
  'Weapon making': ['weapons'],
};
const RED_TOPIC: Record<string, string[]> = {
  'Adult Content': ['sexual'],
  'Economic Harm': ['fraud'],
  'Fraud/Deception': ['fraud'],
  'Malware Viruses': ['cybercrime'],
  'Privacy Violation Activity': ['privacy'],
};
const FORBIDDEN_Q: Record<string, string[]> = {
  'Hate Speech': ['hate'],
  Malware: ['cybercrime'],
  'Physical Harm': ['violence'],
  Fraud: ['fraud'],
  'Economic Harm': ['fraud'],
  Pornography: ['sexual'],
  'Privacy Violence': ['privacy'],
};
const STRONGREJECT: Record<string, string[]> = {
  Violence: ['violence'],
  'Hate, harassment and discrimination': ['hate', 'harassment'],
  'Sexual content': ['sexual'],
};
const HARMBENCH: Record<string, string[]> = {
  cybercrime_intrusion: ['cybercrime'],
  chemical_biological: ['weapons'],
  harassment_bullying: ['harassment'],
};

function harmCategories(row: Row): string[] | null {
  const cats = row.categories ?? [];
  switch (row.source) {
    case 'red_instruct': {
      const sub = tag(row, 'subtopic:');
      if (sub !== undefined && RED_SUBTOPIC[sub]) return RED_SUBTOPIC[sub];
      const top = tag(row, 'topic:');
      if (top !== undefined && RED_TOPIC[top] && cats.some((c) => c.startsWith('set:catqa')))
        return RED_TOPIC[top];
      return null;
    }
    case 'jailbreak_llms':
    case 'gptfuzz_prompts':
      for (const c of cats) if (FORBIDDEN_Q[c]) return FORBIDDEN_Q[c];
      return null;
    case 'strongreject':
      for (const c of cats) if (STRONGREJECT[c]) return STRONGREJECT[c];
      return null;
    case 'harmbench':
      for (const c of cats) if (HARMBENCH[c]) return HARMBENCH[c];
      return null;
    case 'multilingual_hatecheck':
      return cats.some((c) => c.startsWith('functionality:threat'))
        ? ['hate', 'violence']
        : ['hate'];
    case 'davidson_hate_offensive':
      return cats.includes('hate_speech') ? ['hate'] : ['harassment'];
    case 'convabuse': {
      const out = new Set<string>();
      for (const c of cats) {
        if (c === 'type:sex_harassment') out.add('sexual').add('harassment');
        else if (['type:sexist', 'type:racist', 'type:homophobic', 'type:ableist'].includes(c))
          out.add('hate');
        else if (c === 'type:intellectual') out.add('harassment');
      }
      return [...out];
    }
    case 'diasafety':
      return cats.includes('category:Offending User') ? ['harassment'] : null;
    default:
      return null;
  }
}

// ---- split assignment ----
const VAL_BIPIA_ATTACKS = new Set([
  'Clickbait',
  'Language Translation',
  'Alphanumeric Substitution',
  'Social Interaction',
  'Cookie Theft',
  'Memory Scanning',
  'Dumpster Diving',
  'Environment Variable Analysis',
  'Device and Driver Enumeration',
]);
const VAL_MHC_LANGS = new Set(['hi', 'pt', 'pl']);
const VAL_XSID_LANGS = new Set(['ja', 'kk', 'lt', 'tr', 'id', 'sr', 'nap', 'da']);

function splitOf(row: Row): Split | 'drop' {
  const cats = row.categories ?? [];
  const h = textHash(row.text);
  let split: Split = 'train';
  if (VAL_SOURCES.has(row.source)) split = 'val';
  else if (row.source === 'jailbreak_llms')
    split = cats.includes('platform:website') ? 'val' : 'train';
  else if (row.source === 'bipia') {
    const attack = tag(row, 'attack:');
    if (attack !== undefined) split = VAL_BIPIA_ATTACKS.has(attack) ? 'val' : 'train';
    else split = h % 4 === 0 ? 'val' : 'train';
  } else if (row.source === 'red_instruct') {
    const top = tag(row, 'topic:');
    if (top === 'Political Campaigning' || top === 'Tailored Financial Advice') return 'drop';
    if (cats.includes('set:catqa_vietnamese') || cats.includes('set:dangerousqa')) split = 'val';
  } else if (row.source === 'multilingual_hatecheck')
    split = VAL_MHC_LANGS.has(tag(row, 'lang:') ?? '') ? 'val' : 'train';
  else if (row.source === 'xsid')
    split = VAL_XSID_LANGS.has(tag(row, 'lang:') ?? '') ? 'val' : 'train';
  else if (row.source === 'gptfuzz_responses')
    split = cats.includes('split:evaluate') ? 'val' : 'train';
  else if (row.source === 'diasafety') split = cats.includes('split:test') ? 'val' : 'train';
  else if (row.source === 'gpteacher_roleplay') split = h % 10 < 3 ? 'val' : 'train';
  else if (row.source === 'gpteacher_codegen') split = h % 10 < 2 ? 'val' : 'train';
  if (EXCLUDE.has(row.source)) return 'val';
  if (WEAK_KEEP !== null && weaklyLabelled(cats) && !WEAK_KEEP.has(h)) return 'drop';
  if (split === 'train' && (h >>> 8) % 10 === 0) split = 'calib';
  return split;
}

function emptyTargets(): Int8Array {
  return new Int8Array(H).fill(-1);
}

function targetsFor(label: Label, role: TextRole, cats: string[] | null): Int8Array {
  const t = emptyTargets();
  if (label === 'benign') t.fill(0);
  else if (label === 'jailbreak') t[JB] = 1;
  else if (label === 'injection') t[INJ] = 1;
  else {
    t[HARM] = 1;
    t[JB] = 0;
    t[INJ] = 0;
    if (cats !== null) HARM_CATEGORIES.forEach((c, i) => (t[CAT0 + i] = cats.includes(c) ? 1 : 0));
  }
  void role;
  return t;
}

async function readRows(file: string): Promise<Row[]> {
  const rows: Row[] = [];
  const rl = readline.createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Infinity,
  });
  for await (const line of rl) {
    if (line.trim()) rows.push(JSON.parse(line) as Row);
  }
  return rows;
}

// ---- augmentation ----
interface Payload {
  text: string;
  harmful: boolean;
  cats: string[] | null;
}

function lowerFirst(s: string): string {
  const t = s.trim().replace(/[.?!]+$/, '');
  return t.charAt(0).toLowerCase() + t.slice(1);
}

function synthDoc(
  text: string,
  label: Label,
  role: TextRole,
  family: string,
  split: Split,
  t: Int8Array,
): Doc {
  return { text, label, role, source: `synthetic:${family}`, split, targets: t };
}

function augment(
  rng: Rng,
  split: 'train' | 'val',
  payloads: Payload[],
  benignPrompts: string[],
  carriers: string[],
  vocab: readonly string[],
): Doc[] {
  const docs: Doc[] = [];
  const fam = (f: Family): readonly string[] => (split === 'train' ? f.train : f.val);
  const n = split === 'train' ? 1 : 0.35;
  const count = (k: number): number => Math.max(1, Math.round(k * n));
  const harmful = payloads.filter((p) => p.harmful);
  const catsTargets = (t: Int8Array, p: Payload): void => {
    t[HARM] = p.harmful ? 1 : 0;
    if (!p.harmful) for (let i = 0; i < HARM_CATEGORIES.length; i++) t[CAT0 + i] = 0;
    else if (p.cats) HARM_CATEGORIES.forEach((c, i) => (t[CAT0 + i] = p.cats?.includes(c) ? 1 : 0));
  };
  const benignPayload = (): Payload => ({
    text: pick(rng, benignPrompts),
    harmful: false,
    cats: [],
  });

  // Persona / rule-removal wrappers: jailbreak whatever the payload.
  for (let i = 0; i < count(900); i++) {
    const p = rng() < 0.6 ? pick(rng, harmful) : benignPayload();
    const t = emptyTargets();
    t[JB] = 1;
    catsTargets(t, p);
    docs.push(
      synthDoc(
        fill(pick(rng, fam(PERSONA)), { q: p.text }),
        'jailbreak',
        'prompt',
        'persona',
        split,
        t,
      ),
    );
  }
  // Scenario wrappers: jailbreak with a harmful payload, benign with a benign topic.
  for (let i = 0; i < count(700); i++) {
    const p = pick(rng, harmful);
    const t = emptyTargets();
    t[JB] = 1;
    t[INJ] = 0;
    catsTargets(t, p);
    docs.push(
      synthDoc(
        fill(pick(rng, fam(SCENARIO)), { q: lowerFirst(p.text) }),
        'jailbreak',
        'prompt',
        'scenario',
        split,
        t,
      ),
    );
  }
  for (let i = 0; i < count(500); i++) {
    const t = emptyTargets().fill(0);
    docs.push(
      synthDoc(
        fill(pick(rng, fam(SCENARIO)), { q: pick(rng, fam(BENIGN_TOPICS)) }),
        'benign',
        'prompt',
        'scenario-benign',
        split,
        t,
      ),
    );
  }
  // Adversarial suffixes on harmful and benign requests; technical-noise look-alikes.
  for (let i = 0; i < count(1200); i++) {
    const p = rng() < 0.7 ? pick(rng, harmful) : benignPayload();
    const t = emptyTargets();
    t[JB] = 1;
    t[INJ] = 0;
    catsTargets(t, p);
    docs.push(
      synthDoc(
        `${p.text.trim()} ${gibberishSuffix(rng, vocab, split)}`,
        'jailbreak',
        'prompt',
        'adversarial-suffix',
        split,
        t,
      ),
    );
  }
  for (let i = 0; i < count(1200); i++) {
    const t = emptyTargets().fill(0);
    const b = pick(rng, benignPrompts).trim();
    const text = rng() < 0.5 ? `${b} ${technicalNoise(rng)}` : `${technicalNoise(rng)}\n${b}`;
    docs.push(synthDoc(text, 'benign', 'prompt', 'technical-noise', split, t));
  }
  // Direct prompt injection.
  const payloadFor = (lang: string): string => {
    const f = lang === 'en' ? INJECTION_PAYLOADS : INJECTION_PAYLOADS_I18N[lang];
    return f ? pick(rng, fam(f).length > 0 ? fam(f) : f.train) : pick(rng, fam(INJECTION_PAYLOADS));
  };
  for (let i = 0; i < count(1200); i++) {
    const tpl = pick(rng, fam(DIRECT_INJECTION));
    const lang = /\{p_(\w+)\}/.exec(tpl)?.[1] ?? 'en';
    const text = fill(tpl, {
      p: payloadFor('en'),
      [`p_${lang}`]: payloadFor(lang),
      b: pick(rng, benignPrompts).trim(),
    });
    const t = emptyTargets();
    t[INJ] = 1;
    t[HARM] = 0;
    docs.push(synthDoc(text, 'injection', 'prompt', 'direct-injection', split, t));
  }
  // Indirect injection planted in documents, and benign documents with human-directed instructions.
  const frame = (body: string): string =>
    fill(pick(rng, fam(EMAIL_FRAMES)), {
      name: pick(rng, NAMES),
      name2: pick(rng, NAMES),
      subject: pick(rng, SUBJECTS),
      body,
    });
  const carrier = (): string => {
    if (rng() < 0.5 && carriers.length > 0) return pick(rng, carriers);
    const k = 1 + Math.floor(rng() * 4);
    return frame(Array.from({ length: k }, () => pick(rng, benignPrompts).trim()).join(' '));
  };
  const insert = (doc: string, sentence: string): string => {
    const lines = doc.split('\n');
    const at = Math.floor(rng() * (lines.length + 1));
    lines.splice(at, 0, sentence);
    return lines.join('\n');
  };
  for (let i = 0; i < count(1500); i++) {
    const sentence = fill(pick(rng, fam(INDIRECT_INJECTION)), { p: payloadFor('en') });
    const t = emptyTargets();
    t[INJ] = 1;
    t[HARM] = 0;
    docs.push(
      synthDoc(
        insert(carrier(), sentence),
        'injection',
        'document',
        'indirect-injection',
        split,
        t,
      ),
    );
  }
  for (let i = 0; i < count(1500); i++) {
    const t = emptyTargets().fill(0);
    docs.push(
      synthDoc(
        insert(carrier(), pick(rng, fam(HUMAN_INSTRUCTIONS))),
        'benign',
        'document',
        'human-instructions',
        split,
        t,
      ),
    );
  }
  // Benign windows of clean third-party documents (tables, emails, code): the injection head must
  // learn that ordinary document lines are not instructions, or max-pooling flags every table.
  if (split === 'train') {
    for (const doc of carriers) {
      const lines = doc.split('\n');
      for (let k = 0; k < 3; k++) {
        const len = Math.min(lines.length, 2 + Math.floor(rng() * 12));
        const at = Math.floor(rng() * Math.max(1, lines.length - len + 1));
        const t = emptyTargets().fill(0);
        docs.push(
          synthDoc(
            lines.slice(at, at + len).join('\n'),
            'benign',
            'document',
            'document-slices',
            split,
            t,
          ),
        );
      }
    }
  }
  // Harm look-alikes and benign role-play.
  for (const text of [
    ...fam(HARM_LOOKALIKES),
    ...fam(SAFE_LOOKING),
    ...(split === 'train' ? lookalikeCombos() : []),
  ]) {
    const t = emptyTargets().fill(0);
    docs.push(synthDoc(text, 'benign', 'prompt', 'harm-lookalike', split, t));
  }
  // Questions seeking safety or understanding on dangerous subjects: only with
  // GUARD_TRAIN_SAFETY_QUESTIONS=1 (measured, not shipped: synthetic.ts SAFETY_QUESTIONS).
  if (process.env.GUARD_TRAIN_SAFETY_QUESTIONS === '1')
    for (const text of safetyQuestions(split)) {
      const t = emptyTargets().fill(0);
      docs.push(synthDoc(text, 'benign', 'prompt', 'safety-questions', split, t));
    }
  // Threats of violence and their contrast cases (requests for help with a threat, violent
  // idioms): only with GUARD_TRAIN_THREATS=1 (synthetic.ts THREATS).
  if (process.env.GUARD_TRAIN_THREATS === '1')
    for (const { text, harmful: isThreat } of threatRows(split)) {
      const t = emptyTargets().fill(0);
      if (isThreat) {
        t[HARM] = 1;
        for (const c of ['violence', 'harassment'] as const)
          t[CAT0 + HARM_CATEGORIES.indexOf(c)] = 1;
      }
      const family = isThreat ? 'threats' : 'threat-contrast';
      docs.push(synthDoc(text, isThreat ? 'harmful' : 'benign', 'prompt', family, split, t));
    }
  // Plain statements of who someone is (harm and category hard negatives).
  for (const { text, newGroup } of identityStatements(split)) {
    const t = emptyTargets().fill(0);
    const family = newGroup ? 'identity-new-group' : 'identity';
    docs.push(synthDoc(text, 'benign', 'prompt', family, split, t));
  }
  // Answers to harmful requests: going along (comply 1; harm unknown, the text alone holds no
  // harmful detail) or declining (comply 0; harm unknown too, see below). The request travels
  // with the row so that `npm run eval:monitor` sends it before the answer.
  for (let i = 0; i < count(1500); i++) {
    const p = pick(rng, harmful);
    const steps = [0, 1, 2].map(() => capitalise(pick(rng, COMPLY_STEPS)));
    const text = fill(pick(rng, fam(COMPLY_TEMPLATES)), {
      Q: p.text.trim(),
      s1: steps[0] ?? '',
      s2: steps[1] ?? '',
      s3: steps[2] ?? '',
    });
    docs.push({
      ...synthDoc(text, 'harmful', 'response', 'comply', split, emptyTargets()),
      request: p.text,
    });
  }
  for (let i = 0; i < count(1500); i++) {
    const p = pick(rng, harmful);
    const text = fill(pick(rng, fam(REFUSE)), {
      Q: p.text.trim(),
      alt: pick(rng, REFUSE_ALTERNATIVES),
    }).trim();
    // Harm and its categories stay unknown: some refusals quote the harmful request, and a
    // harm target of 0 on them taught the shared layers that such a request is harmless
    // (leave-one-source-out harm recall on advbench fell from 36% to 27% with it).
    const t = emptyTargets();
    t[JB] = 0;
    t[INJ] = 0;
    docs.push({ ...synthDoc(text, 'benign', 'response', 'refuse', split, t), request: p.text });
  }
  for (let i = 0; i < count(600); i++) {
    const t = emptyTargets().fill(0);
    docs.push(
      synthDoc(
        fill(pick(rng, fam(BENIGN_ROLEPLAY)), { t: pick(rng, fam(BENIGN_TOPICS)) }),
        'benign',
        'prompt',
        'roleplay-benign',
        split,
        t,
      ),
    );
  }
  return docs;
}

// ---- dedupe ----
/** Attack templates get a near-duplicate check too (BIPIA is excluded: its carriers are shared by design). */
function nearDupChecked(d: Doc): boolean {
  return (
    (d.label === 'jailbreak' || d.label === 'injection') &&
    !d.source.startsWith('synthetic') &&
    d.source !== 'bipia'
  );
}

function shingles(text: string): Set<string> {
  const w = norm(text).split(' ');
  const out = new Set<string>();
  for (let i = 0; i + 5 <= w.length; i++) out.add(w.slice(i, i + 5).join(' '));
  return out;
}

function dedupe(docs: Doc[]): { kept: Doc[]; dropped: number; nearDropped: number } {
  const valKeys = new Set<string>();
  const seen = new Set<string>();
  const kept: Doc[] = [];
  let dropped = 0;
  for (const d of docs) if (d.split === 'val') valKeys.add(norm(d.text));
  // Near-duplicate index of validation attack templates (jailbreak, injection).
  const index = new Map<string, number[]>();
  const valSh: Set<string>[] = [];
  for (const d of docs) {
    if (d.split !== 'val' || !nearDupChecked(d)) continue;
    const sh = shingles(d.text);
    const id = valSh.push(sh) - 1;
    for (const s of sh) {
      const l = index.get(s);
      if (l) l.push(id);
      else index.set(s, [id]);
    }
  }
  let nearDropped = 0;
  for (const d of docs) {
    const key = `${d.split === 'val' ? 'v' : 't'}|${d.role}|${norm(d.text)}`;
    if (seen.has(key)) {
      dropped++;
      continue;
    }
    seen.add(key);
    if (d.split !== 'val') {
      if (valKeys.has(norm(d.text))) {
        dropped++;
        continue;
      }
      if (nearDupChecked(d)) {
        const sh = shingles(d.text);
        const hits = new Map<number, number>();
        for (const s of sh)
          for (const id of index.get(s) ?? []) hits.set(id, (hits.get(id) ?? 0) + 1);
        let near = false;
        for (const [id, c] of hits) {
          const other = valSh[id]?.size ?? 0;
          if (c / Math.max(1, sh.size + other - c) >= 0.5) near = true;
        }
        if (near) {
          nearDropped++;
          continue;
        }
      }
    }
    kept.push(d);
  }
  return { kept, dropped, nearDropped };
}

// ---- character language model ----
function trainCharLm(texts: string[]): Float32Array {
  const C = CHAR_CLASSES;
  const counts = new Float64Array(C * C);
  for (const t of texts) {
    const s = t.toLowerCase();
    let prev = 63;
    for (let i = 0; i < s.length; i++) {
      const c = charClass(s.charCodeAt(i));
      counts[prev * C + c] = (counts[prev * C + c] ?? 0) + 1;
      prev = c;
    }
  }
  const lm = new Float32Array(C * C);
  for (let a = 0; a < C; a++) {
    let row = 0;
    for (let b = 0; b < C; b++) row += counts[a * C + b] ?? 0;
    for (let b = 0; b < C; b++)
      lm[a * C + b] = Math.log(((counts[a * C + b] ?? 0) + 0.5) / (row + 0.5 * C));
  }
  return lm;
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const rng = mulberry32(SEED);
  const files = readdirSync(DATA)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  const docs: Doc[] = [];
  const payloads: Record<'train' | 'val', Payload[]> = { train: [], val: [] };
  const benign: Record<'train' | 'val', string[]> = { train: [], val: [] };
  const carriers: Record<'train' | 'val', string[]> = { train: [], val: [] };
  // GPTFuzz responses answer its harmful questions (`question_id:N` on both): the evaluation
  // sends each response after its question, as a conversation would.
  const questions = new Map<string, string>();
  const answersTo = new Map<Doc, string>();
  for (const f of files) {
    for (const row of await readRows(path.join(DATA, f))) {
      const qid = row.categories?.find((c) => c.startsWith('question_id:'));
      if (qid && row.source === 'gptfuzz_prompts') questions.set(qid, row.text);
      const split = splitOf(row);
      if (split === 'drop') continue;
      const role = roleOf(row);
      const cats = row.label === 'harmful' ? harmCategories(row) : null;
      const text = split === 'val' ? row.text : row.text.slice(0, MAX_TRAIN_CHARS);
      const doc: Doc = {
        text,
        label: row.label,
        role,
        source: row.source,
        split,
        targets: targetsFor(row.label, role, cats),
      };
      docs.push(doc);
      if (qid && role === 'response') answersTo.set(doc, qid);
      const s = split === 'val' ? 'val' : 'train';
      if (
        role === 'prompt' &&
        row.label === 'harmful' &&
        row.text.length < 300 &&
        !['hh_rlhf_harmless_base', 'convabuse'].includes(row.source)
      )
        payloads[s].push({ text: row.text, harmful: true, cats });
      if (
        role === 'prompt' &&
        row.label === 'benign' &&
        row.text.length < 200 &&
        !['deepset_prompt_injections', 'convabuse'].includes(row.source)
      )
        benign[s].push(row.text);
      if (row.source === 'bipia' && row.label === 'benign') carriers[s].push(text);
    }
  }
  for (const [doc, qid] of answersTo) doc.request = questions.get(qid);
  const res0 = { ...loadTokenizerResources(MODELS), embeddings: loadEmbeddingTable(MODELS) };
  const vocab = readFileSync(path.join(MODELS, 'vocab.txt'), 'utf8')
    .split('\n')
    .filter((t) => /^(##)?[a-z]{2,}$/.test(t));
  docs.push(...augment(rng, 'train', payloads.train, benign.train, carriers.train, vocab));
  docs.push(...augment(rng, 'val', payloads.val, benign.val, carriers.val, vocab));
  // Part of the synthetic training rows goes to calibration like any other training row.
  for (const d of docs)
    if (d.split === 'train' && d.source.startsWith('synthetic') && fnv(d.text) % 10 === 0)
      d.split = 'calib';

  for (const d of docs)
    d.targets[COMPLY] =
      d.role === 'response' && COMPLY_SOURCES.has(d.source) ? (d.label === 'harmful' ? 1 : 0) : -1;
  const { kept, dropped, nearDropped } = dedupe(docs);
  console.log(
    `rows ${docs.length}, exact duplicates dropped ${dropped}, near-duplicate templates dropped ${nearDropped}, kept ${kept.length}`,
  );

  const lmTexts = kept
    .filter(
      (d) =>
        d.split === 'train' &&
        d.label === 'benign' &&
        d.role === 'prompt' &&
        !d.source.startsWith('synthetic'),
    )
    .map((d) => d.text);
  const charLm = trainCharLm(lmTexts);
  writeFileSync(path.join(OUT, 'char-lm.f32'), Buffer.from(charLm.buffer));
  const res: FeaturizerResources = { ...res0, charLm };
  const D = denseDim(res);

  // ---- featurise ----
  const fSegDoc = openSync(path.join(OUT, 'seg_doc.u32'), 'w');
  const fSegNnz = openSync(path.join(OUT, 'seg_nnz.u32'), 'w');
  const fBuckets = openSync(path.join(OUT, 'buckets.u32'), 'w');
  const fDense = openSync(path.join(OUT, 'dense.f32'), 'w');
  const targets = new Int8Array(kept.length * H);
  const splitCode = new Uint8Array(kept.length);
  const meta: string[] = [];
  const buf = new BucketBuffer();
  const dense = new Float32Array(D);
  let nSeg = 0;
  const segDocChunk: number[] = [];
  const segNnzChunk: number[] = [];
  const flush = (): void => {
    writeSync(fSegDoc, new Uint8Array(new Uint32Array(segDocChunk).buffer));
    writeSync(fSegNnz, new Uint8Array(new Uint32Array(segNnzChunk).buffer));
    segDocChunk.length = 0;
    segNnzChunk.length = 0;
  };
  kept.forEach((d, di) => {
    targets.set(d.targets, di * H);
    splitCode[di] = d.split === 'train' ? 0 : d.split === 'calib' ? 1 : 2;
    meta.push(JSON.stringify({ source: d.source, label: d.label, role: d.role, split: d.split }));
    for (const seg of segmentText(d.text)) {
      const s = d.text.slice(seg.start, seg.end);
      buf.length = 0;
      sparseFeatures(s, buf);
      denseFeatures(s, d.role, res, dense);
      writeSync(fBuckets, new Uint8Array(buf.data.buffer, 0, buf.length * 4));
      writeSync(fDense, new Uint8Array(dense.buffer));
      segDocChunk.push(di);
      segNnzChunk.push(buf.length);
      nSeg++;
    }
    if (segDocChunk.length > 10000) flush();
  });
  flush();
  [fSegDoc, fSegNnz, fBuckets, fDense].forEach((fd) => closeSync(fd));
  writeFileSync(path.join(OUT, 'targets.i8'), Buffer.from(targets.buffer));
  writeFileSync(path.join(OUT, 'split.u8'), Buffer.from(splitCode.buffer));
  writeFileSync(path.join(OUT, 'docs.jsonl'), meta.join('\n') + '\n');
  const evalRows = (split: Split): string =>
    kept
      .filter((d) => d.split === split)
      .map((d) =>
        JSON.stringify({
          text: d.text,
          label: d.label,
          role: d.role,
          source: d.source,
          ...(d.request !== undefined ? { request: d.request } : {}),
        }),
      )
      .join('\n') + '\n';
  writeFileSync(path.join(OUT, 'val.jsonl'), evalRows('val'));
  // Opt-in: the training rows as text with their head targets (-1 = no target), for models that
  // read text rather than these features (scripts/encoder/finetune.py).
  if (process.env.GUARD_TRAIN_TEXTS === '1')
    writeFileSync(
      path.join(OUT, 'train-texts.jsonl'),
      kept
        .filter((d) => d.split !== 'val')
        .map((d) =>
          JSON.stringify({
            text: d.text,
            source: d.source,
            label: d.label,
            role: d.role,
            split: d.split,
            targets: [...d.targets],
          }),
        )
        .join('\n') + '\n',
    );
  writeFileSync(path.join(OUT, 'calib.jsonl'), evalRows('calib'));

  const summary: Record<string, Record<string, number>> = {};
  for (const d of kept) {
    const k = `${d.split}`;
    summary[k] ??= {};
    const key = `${d.source}/${d.label}`;
    summary[k][key] = (summary[k][key] ?? 0) + 1;
  }
  writeFileSync(
    path.join(OUT, 'meta.json'),
    JSON.stringify(
      { heads: HEADS, denseDim: D, docs: kept.length, segments: nSeg, seed: SEED, summary },
      null,
      1,
    ),
  );
  console.log(
    `featurised ${kept.length} texts into ${nSeg} segments, dense dim ${D}; wrote ${OUT}`,
  );
}

await main();
