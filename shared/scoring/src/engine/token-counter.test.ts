import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { countTokens } from './token-counter.js';

// The reference: js-tiktoken's own encoder over the same ranks (quadratic on long pieces, so the
// texts here stay short).
const reference = new Tiktoken(cl100k);
const expected = (text: string): number => reference.encode(text, [], []).length;

describe('countTokens', () => {
  it.each([
    ['English', 'Could you help me write a short email to the team about moving the meeting?'],
    ['code', 'for (let i = 0; i < n; i++) {\n\tsum += xs[i] ?? 0; // accumulate\n}'],
    [
      'JSON',
      '{"name":"weapons","description":"No instructions for making weapons.","mode":"block"}',
    ],
    ['numbers and punctuation', 'Order #12345678 costs $1,299.99 -- due 2026-11-21!!! (really?)'],
    ['other scripts', 'Grüße aus München, привет мир, 東京は晴れ, مرحبا بالعالم, שלום'],
    ['emoji and combining marks', 'nice 👍🏽🎉 café vs cafe\u0301, z\u0301\u0316\u0300algo'],
    ['whitespace runs', 'a    b\t\t\tc\n\n\n\n   d  \r\n  '],
    ['special-token text counted as text', 'before <|endoftext|> after <|fim_prefix|>'],
    ['a long run of one letter', 'x'.repeat(600)],
    ['a long run of punctuation', '-='.repeat(300)],
    ['a long word of varied letters', 'pneumonoultramicroscopicsilicovolcanoconiosis'.repeat(12)],
  ])('counts %s exactly as tiktoken', (_label, text) => {
    expect(countTokens(text)).toBe(expected(text));
  });

  it('agrees with tiktoken on random mixed text', () => {
    const pieces = [
      'a',
      'b',
      'th',
      'e',
      ' ',
      '  ',
      '\n',
      '.',
      ',',
      '!',
      '-',
      '1',
      '23',
      'é',
      'Ж',
      '中',
      'ع',
      '😀',
      '\u0301',
      "'s",
      'ing',
      ' the',
      '_',
      'X',
      '<|',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (parts) => {
        const text = parts.join('');
        expect(countTokens(text)).toBe(expected(text));
      }),
      { numRuns: 500 },
    );
  });

  it('counts a 200,000-letter word in linear time', () => {
    // js-tiktoken's merge took minutes here; ours is O(n log n) in the piece.
    let seed = 1;
    const letter = (): string =>
      String.fromCharCode(97 + (((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) % 26));
    const word = Array.from({ length: 200_000 }, letter).join('');
    const t0 = performance.now();
    const n = countTokens(word);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(n).toBeGreaterThan(10_000);
  });
});
