/**
 * Topic rules and the requests that break them, from two public intent datasets: what
 * calibrate-rules.ts sets the rules-by-meaning point on (clinc150's validation split) and what
 * scripts/eval/rule-meaning-eval.ts reports on (hwu64, held out of every training run). The
 * rules (topic-rules.json) were written for this, one per clinc150 domain and hwu64 scenario.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cosine, type Encoder } from '../../shared/scoring/src/encoder/encoder.js';

export type TopicSet = 'clinc150' | 'hwu64';

export interface TopicRow {
  text: string;
  topic: string;
}

const RULES = JSON.parse(
  fs.readFileSync(new URL('./topic-rules.json', import.meta.url), 'utf8'),
) as Record<TopicSet, Record<string, string>>;

/** The rules of a set, in a fixed order: one per topic. */
export function topicRules(set: TopicSet): Array<{ topic: string; description: string }> {
  return Object.entries(RULES[set]).map(([topic, description]) => ({ topic, description }));
}

/**
 * The requests of a set with their topic (clinc150: its validation split, out-of-scope requests
 * included with topic "oos", which no rule covers); every k-th row when `limit` is lower.
 */
export function topicRows(set: TopicSet, dataDir: string, limit = Infinity): TopicRow[] {
  const key = set === 'clinc150' ? 'domain:' : 'scenario:';
  const rows: TopicRow[] = [];
  for (const line of fs.readFileSync(path.join(dataDir, `${set}.jsonl`), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { text: string; categories: string[] };
    if (set === 'clinc150' && !r.categories.includes('split:val')) continue;
    const topic = r.categories.find((c) => c.startsWith(key))?.slice(key.length);
    if (topic) rows.push({ text: r.text, topic });
  }
  const k = Math.max(1, Math.ceil(rows.length / limit));
  return rows.filter((_, i) => i % k === 0);
}

/** The training data directory (as build-dataset.ts finds it). */
export const defaultDataDir = (): string =>
  process.env.GUARD_TRAIN_DATA ??
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/data/train');

/** Cosines of every request with every rule of its set, split by whether the rule is its own. */
export interface TopicCosines {
  /** Pairs of a request and its own topic's rule. */
  own: number[];
  /** Pairs of a request and another topic's rule. */
  other: number[];
  /** Per request: its highest cosine to a rule of another topic (all rules, for "oos" ones). */
  worstOther: number[];
}

/** The encoder's embeddings of `rules` and `rows` (read as prompts), compared pair by pair. */
export async function topicCosines(
  encoder: Encoder,
  rules: ReadonlyArray<{ topic: string; description: string }>,
  rows: readonly TopicRow[],
): Promise<TopicCosines> {
  const embed = async (texts: string[]): Promise<Float32Array[]> =>
    (await encoder.encode(texts.map((text) => ({ role: 'prompt' as const, text })))).map(
      (o) => o.embedding,
    );
  const ruleEmb = await embed(rules.map((r) => r.description));
  const out: TopicCosines = { own: [], other: [], worstOther: [] };
  for (const [i, e] of (await embed(rows.map((r) => r.text))).entries()) {
    let worst = -1;
    rules.forEach((r, k) => {
      const c = cosine(e, ruleEmb[k] as Float32Array);
      if (rows[i]?.topic === r.topic) out.own.push(c);
      else {
        out.other.push(c);
        worst = Math.max(worst, c);
      }
    });
    out.worstOther.push(worst);
  }
  return out;
}
