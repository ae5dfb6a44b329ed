import { describe, expect, it } from 'vitest';
import type { Activity, Principal } from '../types.js';
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

const principal: Principal = {
  org_id: 'o',
  org_kind: 'standard',
  user_id: 'u',
  key_id: 'k',
  role: 'admin',
  staff: false,
};

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

async function call(response: CanonicalResponse) {
  const recorded: Activity[] = [];
  const outcome = await protectCompletion(deps(recorded), principal, {
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
