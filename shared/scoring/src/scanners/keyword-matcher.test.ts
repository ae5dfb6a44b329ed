import { describe, expect, it } from 'vitest';
import { compileKeywords, TextView } from './keyword-matcher.js';

const find = (keywords: string[], text: string, opts = {}) =>
  compileKeywords(keywords, opts).find(new TextView(text));

describe('compileKeywords', () => {
  it('matches whole words and phrases case-insensitively', () => {
    const hits = find(
      ['globex', 'project falcon'],
      'Tell me about Project  Falcon and GLOBEX, not globexes.',
    );
    expect(hits.map((h) => h.keyword).sort()).toEqual([0, 1]);
  });

  it('does not match inside other words', () => {
    expect(find(['cat'], 'concatenate the category')).toEqual([]);
  });

  it('matches near misses only when fuzzy', () => {
    expect(find(['competitor'], 'our competiter is cheaper')).toEqual([]);
    const hits = find(['competitor'], 'our competiter is cheaper', { fuzzy: true });
    expect(hits).toEqual([{ keyword: 0, start: 4, end: 14, fuzzy: true }]);
    // Short words never match fuzzily: "cat" must not match "car".
    expect(find(['cat'], 'a car', { fuzzy: true })).toEqual([]);
  });

  it('matches punctuated phrases literally', () => {
    const hits = find(
      ['rm -rf /', 'dd if=/dev/zero'],
      'then run `sudo rm -rf / --no-preserve-root` or dd if=/dev/zero of=/dev/sda',
    );
    expect(hits.map((h) => h.keyword).sort()).toEqual([0, 1]);
    expect(find(['rm -rf /'], 'rm -rf ./build')).toEqual([]);
  });

  it('respects case sensitivity when asked', () => {
    expect(find(['Apple'], 'an apple a day', { caseSensitive: true })).toEqual([]);
    expect(find(['Apple'], 'Apple shares', { caseSensitive: true })).toHaveLength(1);
  });
});
