/** The training sources' rows as leave-one-source-out reads them (loso.ts, loso-monitor.ts). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TextRole } from '@guard/scoring';

export interface Row {
  text: string;
  label: string;
  categories?: string[];
  source: string;
}

export function tag(row: Row, prefix: string): string | undefined {
  return row.categories?.find((c) => c.startsWith(prefix))?.slice(prefix.length);
}

/** Same mapping as build-dataset.ts: content rows are read as prompts. */
export function roleOf(row: Row): TextRole {
  const r = tag(row, 'role:');
  return r === 'response' || r === 'document' ? r : 'prompt';
}

/** One source's rows from the labelled training sets in `dataDir`, as build-dataset.ts keeps them. */
export function readRows(dataDir: string, source: string): Row[] {
  return readFileSync(path.join(dataDir, `${source}.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Row)
    .filter((r) => {
      // build-dataset.ts drops these two red_instruct topics (not harmful requests).
      if (r.source !== 'red_instruct') return true;
      const top = tag(r, 'topic:');
      return top !== 'Political Campaigning' && top !== 'Tailored Financial Advice';
    });
}
