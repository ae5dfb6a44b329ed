import fs from 'node:fs';
import { createDefaultEngine } from './shared/scoring/src/default-engine.js';
import { presetScoreFields } from './shared/testing/src/score-request.js';
const engine = createDefaultEngine();
const base = await presetScoreFields('Basic Content Safety');
for (const line of fs.readFileSync(process.argv[2]!, 'utf8').trim().split('\n')) {
  const row = JSON.parse(line);
  const r = await engine.score({ ...base, reasoning_mode: 'off', messages: [{ role: 'user', content: row.text }] } as any);
  const h = (r.scanner_output as any).harm;
  const rules = (r.scanner_output.rules as any[]).filter((x) => x.violated).map((x) => x.name);
  const top = Object.entries(h.categories as Record<string, number>).sort((a, b) => b[1] - a[1])[0];
  console.log(row.source.padEnd(20), String(h.score).padEnd(6), String(h.static_score ?? '-').padEnd(6), (top ? `${top[0]}:${top[1]}` : '').padEnd(22), (h.topic ? `${h.topic.category}@${h.topic.cosine}` : '').padEnd(22), rules.join(','), '|', row.text.slice(0, 70));
}
process.exit(0);
