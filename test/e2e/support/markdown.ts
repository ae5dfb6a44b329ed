/** Just enough Markdown reading for tests that hold the docs to what they say. */

export interface FencedBlock {
  /** First word of the info string: `sh`, `text`, `json`... ('' when none). */
  lang: string;
  /** The other words of the info string, e.g. `norun` in ```sh norun. */
  attrs: string[];
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/;

/** Fenced code blocks in document order (indented ones inside list items included). */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j] ?? '';
      const trimmed = l.trim();
      if (trimmed.startsWith(fence[0]!.repeat(fence.length)) && /^(`+|~+)$/.test(trimmed)) break;
      body.push(l.startsWith(indent) ? l.slice(indent.length) : l.trimStart());
    }
    const [lang = '', ...attrs] = info.trim().split(/\s+/).filter(Boolean);
    blocks.push({ lang, attrs, code: body.join('\n'), line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The lines outside fenced blocks. */
function outsideFences(markdown: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const l of markdown.split('\n')) {
    const m = FENCE.exec(l);
    if (fence === null && m) fence = m[2]!;
    else if (fence !== null && l.trim().startsWith(fence) && /^(`+|~+)$/.test(l.trim()))
      fence = null;
    else if (fence === null) out.push(l);
  }
  return out;
}

/** The document without its fenced blocks and inline code: what is left can hold links. */
export function prose(markdown: string): string {
  return outsideFences(markdown)
    .map((l) => l.replace(/`[^`]*`/g, ''))
    .join('\n');
}

/** Targets of inline links and images, and of reference definitions. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1]!,
  );
  const refs = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  return [...inline, ...refs];
}

/** Anchors GitHub gives the document's headings (github-slugger rules, duplicates numbered). */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of outsideFences(markdown)) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}
