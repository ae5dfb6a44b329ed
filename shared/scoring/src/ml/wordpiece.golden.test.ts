import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTokenizerResources } from './ml-model.js';

/**
 * Parity with the reference WordPiece implementation (Hugging Face `tokenizers`), over the
 * vocabulary the detectors ship with. The golden ids are written by
 * scripts/train/wordpiece-golden.py; the texts cover accents, CJK, other scripts, control and
 * zero-width characters, punctuation, and words over the 100-character limit.
 */
const golden = JSON.parse(
  readFileSync(new URL('./wordpiece.golden.json', import.meta.url), 'utf8'),
) as {
  cases: { text: string; ids: number[] }[];
};

describe('WordPieceTokenizer parity with the reference tokenizer', () => {
  const { tokenizer } = loadTokenizerResources();
  it('has golden cases', () => {
    expect(golden.cases.length).toBeGreaterThan(20);
  });
  for (const [i, c] of golden.cases.entries()) {
    it(`case ${i}: ${JSON.stringify(c.text.slice(0, 40))}`, () => {
      expect(tokenizer.encode(c.text)).toEqual(c.ids);
    });
  }
});
