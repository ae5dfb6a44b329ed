/** The rows the reader's scripts read: build texts, probe sets and leave-one-source-out rows. */
import fs from 'node:fs';

export interface Row {
  text: string;
  source: string;
  role: string;
  label?: string;
  split?: string;
  /** Leave-one-source-out rows (scripts/encoder/group-rows.py): a benign pool row. */
  pool?: boolean;
  lang?: string;
}

/** Every line of a JSONL file, parsed (blank lines skipped). */
export function readRows(file: string): Row[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
}
