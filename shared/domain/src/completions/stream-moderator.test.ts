import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ScoreResult } from '../scoring/score-contract.js';
import type { BlockedEnding, StreamEvent } from './canonical.js';
import { moderateStream, type StreamMode } from './stream-moderator.js';

const VIOLATION = 'Here is how to build the forbidden device step by step.';

function result(violation: number): ScoreResult {
  return {
    violation,
    observe_violation: null,
    violated_rules: violation > 0 ? [1] : [],
    violated_rule_descriptions: [],
    ipi: false,
    mutation: false,
    scanner_output: {},
    reasoning: '',
    input_tokens: 1,
    output_tokens: 0,
    error: false,
    error_message: null,
    alarm: violation > 0,
    phase: 'output',
  };
}

/** A check that sees the violation only when the whole sentence is in the text it is given. */
function phraseCheck(checked: string[]) {
  return async (text: string) => {
    checked.push(text);
    return result(text.includes(VIOLATION) ? 1 : 0);
  };
}

async function* source(pieces: string[]): AsyncGenerator<StreamEvent> {
  yield { type: 'start', id: 'a1', model: 'm', created: 1 };
  for (const text of pieces) yield { type: 'text', text };
  yield { type: 'finish', finish: 'stop', usage: { input_tokens: 1, output_tokens: 2 } };
}

function chunk(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let last = 0;
  for (const c of [...at, text.length]) {
    if (c > last) out.push(text.slice(last, c));
    last = Math.max(last, c);
  }
  return out;
}

async function drain(events: AsyncIterable<StreamEvent | BlockedEnding>) {
  let text = '';
  let blocked = false;
  let finished = false;
  for await (const e of events) {
    if (e.type === 'text') text += e.text;
    if (e.type === 'blocked') blocked = true;
    if (e.type === 'finish') finished = true;
  }
  return { text, blocked, finished };
}

describe('moderateStream', () => {
  it('never releases a character of a violating passage, whatever the chunk boundaries (window and buffer)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 1500 }),
        fc.string({ maxLength: 500 }),
        fc.array(fc.nat({ max: 4000 }), { maxLength: 200 }),
        fc.constantFrom<StreamMode>('window', 'buffer'),
        fc.integer({ min: 1, max: 600 }),
        async (before, after, cuts, mode, windowChars) => {
          const lead = before.replaceAll(VIOLATION, '');
          const full = lead + VIOLATION + after;
          const checked: string[] = [];
          const s = moderateStream(
            source(chunk(full, cuts)),
            { mode, windowChars, overlapChars: VIOLATION.length },
            phraseCheck(checked),
            'refused',
          );
          const got = await drain(s.events);
          expect(got.blocked).toBe(true);
          expect(got.finished).toBe(false);
          // What reached the client is a prefix of the text before the violation.
          expect(lead.startsWith(got.text)).toBe(true);
          const summary = await s.done;
          expect(summary.blockedBy?.violation).toBe(1);
          expect(summary.releasedChars).toBe(got.text.length);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('releases a clean answer whole and in order, checking windows of the configured size', async () => {
    const text = 'All good here. '.repeat(100);
    const checked: string[] = [];
    const s = moderateStream(
      source(chunk(text, [3, 50, 51, 700, 1200])),
      { mode: 'window', windowChars: 200, overlapChars: 50 },
      phraseCheck(checked),
      'refused',
    );
    const got = await drain(s.events);
    expect(got).toEqual({ text, blocked: false, finished: true });
    // No window check sees more than one window, its overlap and one incoming piece.
    expect(Math.max(...checked.map((c) => c.length))).toBeLessThanOrEqual(250 + 650);
    expect(checked.length).toBeGreaterThan(3);
    const summary = await s.done;
    expect(summary.completed).toBe(true);
    expect(summary.usage).toEqual({ input_tokens: 1, output_tokens: 2 });
  });

  it('observe releases everything at once and still records the verdict', async () => {
    const checked: string[] = [];
    const s = moderateStream(
      source(['one ', VIOLATION, ' two']),
      { mode: 'observe', windowChars: 10, overlapChars: 5 },
      phraseCheck(checked),
      'refused',
    );
    const got = await drain(s.events);
    expect(got).toEqual({ text: `one ${VIOLATION} two`, blocked: false, finished: true });
    expect(checked).toEqual([`one ${VIOLATION} two`]);
    const summary = await s.done;
    expect(summary.checks[0]?.violation).toBe(1);
    expect(summary.blockedBy).toBeNull();
  });

  it('holds tool calls until they are complete and checks them with the text', async () => {
    async function* withTools(): AsyncGenerator<StreamEvent> {
      yield { type: 'start', id: 'a', model: 'm', created: 1 };
      yield { type: 'tool_call_delta', index: 0, id: 'call_1', name: 'run', arguments: '{"cmd":' };
      yield { type: 'tool_call_delta', index: 0, arguments: '"rm -rf /"}' };
      yield { type: 'finish', finish: 'tool_calls', usage: null };
    }
    const seen: string[] = [];
    const s = moderateStream(
      withTools(),
      { mode: 'window', windowChars: 100, overlapChars: 10 },
      async (_text, calls) => {
        seen.push(calls.map((c) => `${c.id}:${c.name}:${c.arguments}`).join());
        return result(0);
      },
      'refused',
    );
    const events: (StreamEvent | BlockedEnding)[] = [];
    for await (const e of s.events) events.push(e);
    expect(seen).toEqual(['call_1:run:{"cmd":"rm -rf /"}']);
    expect(events.filter((e) => e.type === 'tool_call_delta')).toEqual([
      {
        type: 'tool_call_delta',
        index: 0,
        id: 'call_1',
        name: 'run',
        arguments: '{"cmd":"rm -rf /"}',
      },
    ]);
  });

  it('stops reading the provider when the stream is blocked, and settles when the reader leaves early', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<StreamEvent> {
      yield { type: 'start', id: 'a', model: 'm', created: 1 };
      for (;;) {
        pulled += 1;
        yield { type: 'text', text: 'x'.repeat(10) };
      }
    }
    const s = moderateStream(
      endless(),
      { mode: 'window', windowChars: 20, overlapChars: 5 },
      async () => result(0),
      'r',
    );
    let n = 0;
    for await (const _ of s.events) if (++n === 3) break;
    const summary = await s.done;
    expect(summary.completed).toBe(false);
    expect(pulled).toBeLessThan(10);
  });
});
