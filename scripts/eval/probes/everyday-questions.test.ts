import { describe, expect, it } from 'vitest';
import { nearCopies } from '../jaccard.js';
import { readRows } from '../../multilingual/rows.js';
import {
  BENIGN_ROLEPLAY,
  BENIGN_TOPICS,
  HARM_LOOKALIKES,
  HUMAN_INSTRUCTIONS,
  SAFE_LOOKING,
  type Family,
} from '../../train/synthetic.js';

const everyday = readRows('scripts/eval/probes/everyday-questions.jsonl');
const languages = readRows('scripts/eval/probes/harmful-requests-other-languages.jsonl');
const LANGS = ['en', 'ar', 'bn', 'jv', 'vi', 'th', 'sw'];

describe('everyday questions probe', () => {
  it('holds two sets of 60 benign prompts, all distinct', () => {
    expect(everyday).toHaveLength(120);
    expect(new Set(everyday.map((r) => r.text)).size).toBe(120);
    for (const r of everyday) {
      expect(r.label).toBe('benign');
      expect(r.role).toBe('prompt');
    }
    expect(everyday.filter((r) => r.source === 'everyday_a')).toHaveLength(60);
    expect(everyday.filter((r) => r.source === 'everyday_b')).toHaveLength(60);
  });

  // Against the train part of the families (no model trains on their val part, which holds one of
  // these questions word for word: "How can I keep my kids safe online?"), at a word Jaccard of 0.6:
  // at 0.5 three questions match a template by their frame alone ("What should I do if ...").
  it("stays apart from the train part of the build's hand-written benign families (word Jaccard under 0.6)", () => {
    const written = [
      HARM_LOOKALIKES,
      SAFE_LOOKING,
      BENIGN_TOPICS,
      BENIGN_ROLEPLAY,
      HUMAN_INSTRUCTIONS,
    ].flatMap((f: Family) => f.train);
    expect(
      nearCopies(
        everyday.map((r) => r.text),
        written,
        0.6,
      ),
    ).toEqual([]);
  });
});

describe('harmful requests in other languages probe', () => {
  it('holds the same 20 harmful and 10 benign requests in each language, all distinct', () => {
    expect(languages).toHaveLength(30 * LANGS.length);
    expect(new Set(languages.map((r) => r.text)).size).toBe(languages.length);
    for (const lang of LANGS) {
      const harmful = languages.filter((r) => r.source === `harm_request_${lang}`);
      const benign = languages.filter((r) => r.source === `benign_pair_${lang}`);
      expect(harmful).toHaveLength(20);
      expect(benign).toHaveLength(10);
      expect(harmful.every((r) => r.label === 'harmful' && r.role === 'prompt')).toBe(true);
      expect(benign.every((r) => r.label === 'benign' && r.role === 'prompt')).toBe(true);
    }
  });
});
