/**
 * Custom rules by meaning, measured: rules that keep an assistant off a subject
 * (scripts/encoder/topic-rules.json) against the requests of hwu64, a public intent dataset no
 * training run sees (and of clinc150's validation split, where the operating point was set:
 * fitted, not a claim). A request violates the rule of its own topic and no other. The full
 * engine scores every request with all the rules of its set, as `POST /guard/monitor` would:
 * with the encoder off (rules scored by their words alone, as before) and on (the default).
 *
 *   npm run eval:rules -- [--limit N] [--encoder-dir DIR] [--data DIR]
 */
import { parseArgs } from 'node:util';
import { createDefaultEngine, type RuleScore } from '@guard/scoring';
import { aScoreRequest } from '@guard/testing/score-request';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { rocAuc } from './roc.js';
import {
  defaultDataDir,
  topicCosines,
  topicRows,
  topicRules,
  type TopicSet,
} from '../encoder/topic-rules.js';

const { values } = parseArgs({
  options: {
    limit: { type: 'string' },
    'encoder-dir': { type: 'string' },
    data: { type: 'string' },
  },
});
const limit = values.limit ? Number(values.limit) : Infinity;
const dir = values['encoder-dir'];
const engines = {
  off: createDefaultEngine({ encoder: { mode: 'off' } }),
  cascade: createDefaultEngine({ encoder: { mode: 'cascade', ...(dir ? { dir } : {}) } }),
};
// The embeddings themselves: how well the cosine ranks a request's own topic rule above others.
const encoder = await createOnnxEncoder(dir);
const pct = (n: number, d: number): string => `${((100 * n) / Math.max(1, d)).toFixed(1)}%`;

for (const set of ['clinc150', 'hwu64'] as TopicSet[]) {
  const rules = topicRules(set);
  const ruleList = rules.map((r) => ({
    name: r.topic,
    description: r.description,
    mode: 'block' as const,
  }));
  const rows = topicRows(set, values.data ?? defaultDataDir(), limit);
  console.log(
    `\n${set}${set === 'clinc150' ? ' (where the point was set)' : ' (held out)'}: ${rows.length} requests x ${rules.length} rules`,
  );
  const cos = await topicCosines(encoder, rules, rows);
  console.log(
    `  embedding cosine, own topic's rule against the others: AUC ${rocAuc(cos.own, cos.other).toFixed(3)}`,
  );
  for (const [mode, engine] of Object.entries(engines)) {
    const own = new Map<string, { n: number; caught: number }>();
    let otherPairs = 0;
    let otherFlagged = 0;
    let requestsFlaggedWrongly = 0;
    let bySource = 0;
    for (const row of rows) {
      const res = await engine.score(aScoreRequest(row.text, { rules: ruleList }));
      const scores = (res.scanner_output as { rules?: RuleScore[] }).rules ?? [];
      let wrong = false;
      rules.forEach((r, k) => {
        const s = scores[k];
        if (r.topic === row.topic) {
          const o = own.get(r.topic) ?? { n: 0, caught: 0 };
          o.n++;
          if (s?.violated) o.caught++;
          if (s?.violated && s.source === 'meaning') bySource++;
          own.set(r.topic, o);
        } else {
          otherPairs++;
          if (s?.violated) {
            otherFlagged++;
            wrong = true;
          }
        }
      });
      if (wrong) requestsFlaggedWrongly++;
    }
    const n = [...own.values()].reduce((a, o) => a + o.n, 0);
    const caught = [...own.values()].reduce((a, o) => a + o.caught, 0);
    console.log(
      `  encoder ${mode}: own topic's rule violated ${pct(caught, n)}${mode === 'off' ? '' : ` (${pct(bySource, n)} by meaning)`}; another topic's rule ${pct(otherFlagged, otherPairs)} of pairs; requests with a wrong rule violated ${pct(requestsFlaggedWrongly, rows.length)}`,
    );
    console.log(
      `    per rule: ${[...own.entries()].map(([t, o]) => `${t} ${pct(o.caught, o.n)}`).join(', ')}`,
    );
  }
}
await Promise.all(Object.values(engines).map((e) => e.close()));
await encoder.close();
