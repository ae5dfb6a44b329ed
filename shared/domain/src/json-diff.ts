import type { DiffEntry } from './types.js';

/**
 * Structural diff over plain JSON values. Objects are walked key by key (so a change to one rule
 * is one entry at `/rules/<name>`); arrays and scalars are replaced whole. Every entry keeps both
 * sides, so a diff can be applied forwards or backwards.
 */
export function diffJson(before: unknown, after: unknown, path = ''): DiffEntry[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const out: DiffEntry[] = [];
    for (const key of Object.keys(before)) {
      const p = `${path}/${escapePointer(key)}`;
      if (!Object.hasOwn(after, key)) out.push({ op: 'remove', path: p, old: clone(before[key]) });
      else out.push(...diffJson(before[key], after[key], p));
    }
    for (const key of Object.keys(after)) {
      if (!Object.hasOwn(before, key)) {
        out.push({ op: 'add', path: `${path}/${escapePointer(key)}`, new: clone(after[key]) });
      }
    }
    return out;
  }
  if (jsonEqual(before, after)) return [];
  return [{ op: 'replace', path, old: clone(before), new: clone(after) }];
}

/** Undo `diff` on `state` (returns a new value; `state` is not touched). */
export function revertDiff<T>(state: T, diff: DiffEntry[]): T {
  let doc: unknown = clone(state);
  for (let i = diff.length - 1; i >= 0; i--) {
    const entry = diff[i]!;
    switch (entry.op) {
      case 'add':
        doc = removeAt(doc, entry.path);
        break;
      case 'remove':
      case 'replace':
        doc = setAt(doc, entry.path, clone(entry.old));
        break;
    }
  }
  return doc as T;
}

/** Apply `diff` forwards. */
export function applyDiff<T>(state: T, diff: DiffEntry[]): T {
  let doc: unknown = clone(state);
  for (const entry of diff) {
    doc =
      entry.op === 'remove' ? removeAt(doc, entry.path) : setAt(doc, entry.path, clone(entry.new));
  }
  return doc as T;
}

export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function setAt(doc: unknown, path: string, value: unknown): unknown {
  const parts = parsePointer(path);
  if (parts.length === 0) return value;
  const root = isPlainObject(doc) ? doc : {};
  let node: Record<string, unknown> = root;
  for (let i = 0; i < parts.length - 1; i++) {
    const key = parts[i]!;
    const next = node[key];
    if (!isPlainObject(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
  return root;
}

function removeAt(doc: unknown, path: string): unknown {
  const parts = parsePointer(path);
  if (parts.length === 0) return undefined;
  let node: unknown = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    if (!isPlainObject(node)) return doc;
    node = node[parts[i]!];
  }
  if (isPlainObject(node)) delete node[parts[parts.length - 1]!];
  return doc;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function clone<T>(v: T): T {
  return v === undefined ? v : (structuredClone(v) as T);
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => k in bo && jsonEqual(ao[k], bo[k]));
}
