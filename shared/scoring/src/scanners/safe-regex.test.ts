import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileSafeRegex, checkSafeRegex, SafeRegexError } from './safe-regex.js';

const spans = (p: string, t: string, f = ''): Array<[number, number]> =>
  compileSafeRegex(p, f)
    .findAll(t)
    .map((m) => [m.start, m.end]);

describe('compileSafeRegex: matching', () => {
  it('matches literals, classes, escapes and alternation', () => {
    expect(spans('cat', 'a cat and a cat')).toEqual([
      [2, 5],
      [12, 15],
    ]);
    expect(spans('[0-9]{3}-\\d{4}', 'call 555-1234 now')).toEqual([[5, 13]]);
    expect(spans('colou?r', 'color colour colouur')).toEqual([
      [0, 5],
      [6, 12],
    ]);
    expect(spans('dog|cat', 'hotdog catalog')).toEqual([
      [3, 6],
      [7, 10],
    ]);
    expect(spans('[^a-z ]+', 'abc DEF ghi 123')).toEqual([
      [4, 7],
      [12, 15],
    ]);
    expect(spans('\\bfoo\\b', 'foo food afoo foo')).toEqual([
      [0, 3],
      [14, 17],
    ]);
    expect(spans('a.c', 'abc a\nc')).toEqual([[0, 3]]);
    expect(spans('a.c', 'abc a\nc', 's')).toEqual([
      [0, 3],
      [4, 7],
    ]);
  });

  it('supports anchors with and without the m flag', () => {
    expect(spans('^x', 'x\nx')).toEqual([[0, 1]]);
    expect(spans('^x', 'x\nx', 'm')).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(spans('y$', 'y\ny', 'm')).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });

  it('is case-insensitive with i, including classes', () => {
    expect(spans('secret', 'SeCrEt', 'i')).toEqual([[0, 6]]);
    expect(spans('[a-c]+', 'ABCd', 'i')).toEqual([[0, 3]]);
    expect(spans('secret', 'SECRET')).toEqual([]);
  });

  it('reports leftmost-longest spans', () => {
    expect(spans('a+', 'baaab aa')).toEqual([
      [1, 4],
      [6, 8],
    ]);
    expect(spans('ab|abcd', 'xabcd')).toEqual([[1, 5]]);
  });

  it('agrees with RegExp on whether a match exists and where it starts', () => {
    const patterns = [
      'a+b',
      '(ab|a)*c',
      'a{2,3}',
      '^a.*b$',
      '[abc]+c',
      '\\ba\\w*',
      'a?b?c',
      '(a|b)+b',
      'x*',
    ];
    fc.assert(
      fc.property(
        fc.stringMatching(/^[abcx \n]{0,20}$/),
        fc.constantFrom(...patterns),
        (text, pattern) => {
          const native = new RegExp(pattern).exec(text);
          const ours = compileSafeRegex(pattern).findAll(text, 1)[0];
          expect(ours?.start ?? null).toBe(native ? native.index : null);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('compileSafeRegex: Unicode', () => {
  it('treats an astral-plane character as one character', () => {
    expect(spans('😀+', 'a😀😀b')).toEqual([[1, 5]]);
    expect(spans('^.$', '😀')).toEqual([[0, 2]]);
    expect(spans('a.b', 'a😀b', 'u')).toEqual([[0, 4]]);
    expect(spans('[😀😃]', 'x😃')).toEqual([[1, 3]]);
  });

  it('reads \\u{...}, \\uHHHH and surrogate pairs written as escapes', () => {
    expect(spans('\\u{1F600}', 'x😀', 'u')).toEqual([[1, 3]]);
    expect(spans('\\uD83D\\uDE00', 'x😀')).toEqual([[1, 3]]);
    expect(spans('\\u00e9', 'café')).toEqual([[3, 4]]);
  });

  it('supports Unicode classes with the u flag', () => {
    expect(spans('\\p{L}+', '12 héllo 𝒜x', 'u')).toEqual([
      [3, 8],
      [9, 12],
    ]);
    expect(spans('\\p{Greek}+', 'abc αβγ', 'u')).toEqual([[4, 7]]);
  });

  it('keeps JavaScript meanings of \\s and . without s', () => {
    expect(spans('a\\sb', 'a\u00a0b')).toEqual([[0, 3]]);
    expect(spans('a.b', 'a\rb a\u2028b')).toEqual([]);
    expect(spans('a.b', 'a\rb', 's')).toEqual([[0, 3]]);
  });

  it('steps over a whole astral character after an empty match', () => {
    expect(spans('x*', '😀')).toEqual([
      [0, 0],
      [2, 2],
    ]);
  });
});

describe('compileSafeRegex: hostile patterns cannot hang the process', () => {
  it.each([
    ['(a+)+$', 'a'.repeat(50_000) + '!'],
    ['(a|aa)*b', 'a'.repeat(50_000)],
    ['(.*a){12}', 'a'.repeat(20_000)],
    ['(\\w+\\s?)*$', 'word '.repeat(10_000) + '!'],
    ['^(([a-z])+.)+[A-Z]([a-z])+$', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.repeat(500)],
    ['\\d+\\d+\\d+\\d+x', '1'.repeat(30_000)],
  ])('%s stays fast', (pattern, text) => {
    const re = compileSafeRegex(pattern);
    const t0 = performance.now();
    re.findAll(text);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('bounds span-finding work by the shared budget and says so by spending it', () => {
    const text = 'ab'.repeat(100_000) + 'bq';
    const re = compileSafeRegex('b.{0,200}q');
    const budget = { steps: 1_000_000 };
    const t0 = performance.now();
    expect(re.findAll(text, 20, budget)).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(budget.steps).toBeLessThanOrEqual(0);
    // Unshared, a call may spend SAFE_REGEX_LIMITS.stepBudget: enough for 10 KB with this pattern.
    expect(re.findAll(text.slice(-10_002), 20)).toEqual([{ start: 9_801, end: 10_002 }]);
  });

  it('still finds the match catastrophic backtracking would eventually find', () => {
    expect(compileSafeRegex('(a+)+b').test('a'.repeat(40) + 'b')).toBe(true);
    expect(compileSafeRegex('(a+)+b').test('a'.repeat(40) + 'c')).toBe(false);
  });

  it.each([
    ['(a)\\1', 'RE2 does not support backreferences/lookaround'],
    ['(?<n>a)\\k<n>', 'RE2 does not support backreferences/lookaround'],
    ['(?=a)a', 'RE2 does not support backreferences/lookaround'],
    ['(?!a)b', 'RE2 does not support backreferences/lookaround'],
    ['(?<=a)b', 'RE2 does not support backreferences/lookaround'],
    ['(?<!a)b', 'RE2 does not support backreferences/lookaround'],
    ['(?i)a', 'inline modifiers'],
    ['a{1000}', 'repetition'],
    ['x'.repeat(1001), 'longer'],
    ['(a{100}){20}', 'repeat count'],
    ['(abc', 'missing closing )'],
    ['[abc', 'unterminated'],
    ['*a', 'missing argument to repetition operator'],
    ['\\p{NotAScript}', 'invalid character class range'],
  ])('rejects %s', (pattern, message) => {
    expect(() => compileSafeRegex(pattern)).toThrow(SafeRegexError);
    expect(checkSafeRegex(pattern)).toContain(message);
  });
});
