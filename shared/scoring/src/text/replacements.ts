/** Word-level passes record their edits as replacements, applied together once. */

export interface Replacement {
  start: number;
  end: number;
  text: string;
}

export function applyReplacements(s: string, replacements: Replacement[]): string {
  if (replacements.length === 0) return s;
  replacements.sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const r of replacements) {
    if (r.start < pos) continue;
    out += s.slice(pos, r.start) + r.text;
    pos = r.end;
  }
  return out + s.slice(pos);
}
