import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jaccard } from '../eval/jaccard.js';
import { KINDS, questionsZh } from './questions-zh.js';
import { readRows } from './rows.js';

const PROBES = 'scripts/eval/probes';
const probes = fs
  .readdirSync(PROBES)
  .filter((f) => f.startsWith('questions-'))
  .flatMap((f) => readRows(path.join(PROBES, f)).map((r) => r.text));

/** Character pairs of a text, punctuation and spaces left out. */
function bigrams(t: string): Set<string> {
  const c = [...t.replace(/[\s\p{P}]/gu, '')];
  return new Set(c.slice(1).map((x, i) => `${c[i]}${x}`));
}

describe('ordinary Chinese questions (the reader head training rows)', () => {
  const train = questionsZh('train');
  const val = questionsZh('val');

  it('builds distinct questions, and the val part shares none with train', () => {
    expect(train.length).toBeGreaterThan(500);
    expect(val.length).toBeGreaterThan(50);
    expect(new Set(train).size).toBe(train.length);
    const seen = new Set(train);
    expect(val.filter((q) => seen.has(q))).toEqual([]);
    for (const q of [...train, ...val]) {
      expect(q).not.toContain('{}');
      expect(q).toMatch(/[\u4e00-\u9fff]/u);
    }
  });

  it('holds out whole templates and slots: none of the val part is in the train part', () => {
    for (const [name, kind] of Object.entries(KINDS)) {
      const trainTemplates = new Set(kind.templates.train);
      const trainSlots = new Set(kind.slots.train);
      expect(
        kind.templates.val.filter((t) => trainTemplates.has(t)),
        name,
      ).toEqual([]);
      expect(
        kind.slots.val.filter((t) => trainSlots.has(t)),
        name,
      ).toEqual([]);
    }
  });

  it('stays apart from the hand-written probe sets that measure the head', () => {
    const slots = Object.values(KINDS).flatMap((k) => [...k.slots.train, ...k.slots.val]);
    expect(slots.filter((slot) => probes.some((p) => p.includes(slot)))).toEqual([]);
    expect(probes.length).toBeGreaterThan(100);
    const probeGrams = probes.map(bigrams);
    const close = [...train, ...val].filter((q) => {
      const g = bigrams(q);
      return probeGrams.some((p) => jaccard(g, p) >= 0.6);
    });
    expect(close).toEqual([]);
  });
});
