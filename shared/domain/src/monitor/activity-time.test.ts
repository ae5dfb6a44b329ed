import { describe, expect, it } from 'vitest';
import { aPrincipal } from '@guard/testing/builders';
import { createIdGenerator, idTime } from '@guard/platform';
// Imported by path: the package index also loads the SQLite, Kafka and Temporal code.
import { MemoryOrgStore } from '@guard/adapters/memory/memory-org-store';
import { MemoryPolicyStore } from '@guard/adapters/memory/memory-policy-store';
import type { Activity } from '../types.js';
import type { ActivitySink } from '../ports.js';
import type { ScoreClient } from '../scoring/score-contract.js';
import { errorScoreResult } from '../scoring/score-contract.js';
import { monitor, type MonitorDeps } from './monitor.js';

/**
 * Export's `since` and `until` are id bounds (ids sort by the millisecond they were made in), so
 * an activity's `created_at` must be the time in its id. The clock here is fixed far from the
 * real one: an id taken from the real clock instead would differ by days, not by the odd
 * millisecond that made the HTTP export test fail now and then.
 */
const principal = aPrincipal();

const clean: ScoreClient = {
  score: async (request) => ({
    ...errorScoreResult(request, 'n/a'),
    error: false,
    error_message: null,
    violation: 0,
    alarm: false,
  }),
};

function deps(recorded: Activity[], at: Date): MonitorDeps {
  return {
    policies: new MemoryPolicyStore(),
    orgs: new MemoryOrgStore(),
    engine: clean,
    activity: {
      publish: async (a: Activity) => void recorded.push(a),
      flush: async () => undefined,
    } as ActivitySink,
    newId: createIdGenerator(),
    now: () => at,
    failMode: 'closed',
    excerptChars: 0,
  };
}

const at = new Date('2025-03-04T05:06:07.089Z');

describe("an activity's created_at is the time in its id", () => {
  // Protected completions: protect-completion.test.ts.
  it('for /guard/monitor', async () => {
    const recorded: Activity[] = [];
    const out = await monitor(deps(recorded, at), principal, { text: 'hello' });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.created_at).toBe(at.toISOString());
    expect(idTime(out.response.activity_id).toISOString()).toBe(at.toISOString());
  });
});
