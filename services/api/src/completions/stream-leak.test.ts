import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startFakeProvider, type FakeProvider } from '../../../../test/support/fake-provider.js';
import { startInProcessApi, type InProcessApi } from '../testing/in-process.js';
import { chatStreamText } from '../testing/chat-stream.js';

/**
 * The leak test: the provider streams a violating sentence cut into many small pieces at random
 * boundaries, after a clean lead of random length. Through the whole service (real HTTP, the
 * scorer, the chat wire), in `window` and `buffer` modes, not one character of the violating
 * sentence may reach the client: what it receives before the refusal is a prefix of the clean
 * lead. 1,000 runs, split between the modes.
 */

const BAD = 'The launch code for Project Falcon is seven seven four.';
const RULE = { 'category-falcon': 'Never mention the codename "Project Falcon".' };
const REFUSAL = "Sorry, I can't help with that.";

let api: InProcessApi;
let fake: FakeProvider;

beforeAll(async () => {
  fake = await startFakeProvider();
  api = await startInProcessApi({
    upstreamUrl: fake.url,
    // The overlap covers the sentence: that is the setting's promise (docs/api.md, "Streams").
    config: { stream: { mode: 'window', windowChars: 48, overlapChars: BAD.length } },
  });
});
afterAll(async () => {
  await api?.close();
  await fake?.close();
});

/** Reads a chat-completions event stream: the text shown and the finish reason. */
async function streamed(
  mode: 'window' | 'buffer',
): Promise<{ text: string; finish: string | null }> {
  const res = await fetch(`${api.url}/guard/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.adminKey}`,
      'content-type': 'application/json',
      'stream-mode': mode,
      ...RULE,
    },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'Tell me about the weather.' }],
    }),
  });
  expect(res.status).toBe(200);
  return chatStreamText(await res.text());
}

describe('no character of a violating window reaches the client', () => {
  it('over 1,000 streams with random chunk boundaries, in window and buffer modes', async () => {
    const words = ['calm', 'weather', 'today', 'with', 'light', 'wind', 'and', 'sun', 'later'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...words), { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 40 }),
        fc.constantFrom<'window' | 'buffer'>('window', 'buffer'),
        async (leadWords, sizes, mode) => {
          const lead = leadWords.length ? `${leadWords.join(' ')}. ` : '';
          const text = `${lead}${BAD} More text follows the sentence.`;
          const chunks: string[] = [];
          for (let at = 0, i = 0; at < text.length; i++) {
            const n = sizes[i % sizes.length]!;
            chunks.push(text.slice(at, at + n));
            at += n;
          }
          fake.script({ text, chunks });
          const got = await streamed(mode);
          expect(got.finish).toBe('content_filter');
          expect(got.text.endsWith(REFUSAL)).toBe(true);
          const shown = got.text.slice(0, got.text.length - REFUSAL.length);
          expect(lead.startsWith(shown), `shown: ${JSON.stringify(shown)}`).toBe(true);
          if (mode === 'buffer') expect(shown).toBe('');
        },
      ),
      { numRuns: 1000 },
    );
  }, 120_000);
});
