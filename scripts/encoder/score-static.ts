/**
 * Scores rows ({text, role} JSONL) with the static detectors of a model directory, for the
 * fine-tuning comparison (README.md): writes {jailbreak, injection, harmful} per line.
 * Usage: node --conditions=source --import tsx scripts/encoder/score-static.ts ROWS MODEL_DIR OUT
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createMlDetectors } from '@guard/scoring/ml/index';
import type { TextRole } from '@guard/scoring';

const [rowsPath, modelDir, outPath] = process.argv.slice(2);
if (!rowsPath || !modelDir || !outPath) {
  console.error('usage: score-static.ts ROWS MODEL_DIR OUT');
  process.exit(2);
}
const det = createMlDetectors({ modelDir });
const out: string[] = [];
for (const line of readFileSync(rowsPath, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const r = JSON.parse(line) as { text: string; role: TextRole };
  out.push(
    JSON.stringify({
      jailbreak: det.jailbreak(r.text).score,
      injection: det.injection(r.text, r.role).score,
      harmful: det.harm(r.text, r.role).any.score,
    }),
  );
}
writeFileSync(outPath, out.join('\n') + '\n');
console.log(`${out.length} rows scored with ${modelDir}`);
