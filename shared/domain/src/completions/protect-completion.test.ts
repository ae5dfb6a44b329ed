import { describe, expect, it } from 'vitest';
import { aPrincipal } from '@guard/testing/builders';
import { createIdGenerator, idTime } from '@guard/platform';
import type { Activity } from '../types.js';
import type { ActivitySink, OrgStore, PolicyStore } from '../ports.js';
import type { ScoreClient, ScoreRequest, ScoreResult } from '../scoring/score-contract.js';
import { errorScoreResult } from '../scoring/score-contract.js';
import type { CanonicalResponse } from './canonical.js';
import { protectCompletion, type CompletionDeps } from './protect-completion.js';

/** A scorer that flags any checked text containing FORBIDDEN. */
const scorer: ScoreClient = {
  score: async (request: ScoreRequest): Promise<ScoreResult> => {
    const checked = request.messages.at(-1)?.content ?? '';
    const hit = checked.includes('FORBIDDEN');
    return {
      ...errorScoreResult(request, 'n/a'),
      error: false,
      error_message: null,
      reasoning: '',
      violation: hit ? 0.9 : 0,
      alarm: hit,
    };
  },
};

function deps(recorded: Activity[]): CompletionDeps {
  return {
    policies: { get: async () => null } as unknown as PolicyStore,
    orgs: { get: async () => null } as unknown as OrgStore,
    engine: scorer,
    activity: {
      publish: async (a: Activity) => void recorded.push(a),
      flush: async () => undefined,
    } as ActivitySink,
    newId: () => 'a'.repeat(24),
    now: () => new Date('2026-11-23T00:00:00Z'),
    failMode: 'closed',
    excerptChars: 50,
    stream: { mode: 'window', windowChars: 100, overlapChars: 20 },
    outputContextChars: 100,
  };
}

const principal = aPrincipal();

function answer(over: Partial<CanonicalResponse>): CanonicalResponse {
  return {
    id: 'r',
    model: 'm',
    created: 1,
    text: 'A clean answer.',
    tool_calls: [],
    finish: 'stop',
    usage: null,
    ...over,
  };
}

async function call(response: CanonicalResponse, over: Partial<CompletionDeps> = {}) {
  const recorded: Activity[] = [];
  const outcome = await protectCompletion({ ...deps(recorded), ...over }, principal, {
    endpoint: 'messages',
    model: 'm',
    stream: false,
    messages: [{ role: 'user', content: 'hello' }],
    callModel: async () => ({ kind: 'json', response, raw: {} }),
    signal: new AbortController().signal,
  });
  return { outcome, recorded };
}

describe('protectCompletion: non-streamed answers', () => {
  it("records the activity with created_at the time in its id (export's bounds are id bounds)", async () => {
    // A clock far from the real one: an id taken from the real clock would differ by days.
    const at = new Date('2025-03-04T05:06:07.089Z');
    const { recorded } = await call(answer({}), { newId: createIdGenerator(), now: () => at });
    const [a] = recorded as [Activity];
    expect(a.created_at).toBe(at.toISOString());
    expect(idTime(a.id).toISOString()).toBe(a.created_at);
  });

  it('passes a clean answer and records one activity', async () => {
    const { outcome, recorded } = await call(answer({}));
    expect(outcome.kind === 'json' && outcome.blocked).toBe(false);
    expect(recorded).toHaveLength(1);
  });

  it('checks reasoning shown beside the answer: violating thinking blocks a clean answer', async () => {
    const { outcome, recorded } = await call(answer({ reasoning: 'FORBIDDEN plans' }));
    expect(outcome.kind === 'json' && outcome.blocked).toBe(true);
    expect(recorded[0]?.metadata.blocked_at).toBe('output');
  });
});
