import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, targetServer, type Client, type TargetServer } from './support/guard-server.js';

/**
 * A random sequence of creates and updates over several policies; afterwards every recorded
 * version must read back exactly the state its policy had right after that step.
 */
let server: TargetServer;
let api: Client;

beforeAll(async () => {
  server = await targetServer({ env: { GUARD_ACCESS_LOG: 'false' } });
  api = client(server.url, server.adminKey);
});
afterAll(async () => {
  await server?.stop();
});

const ruleName = fc.constantFrom('violence', 'pii', 'tone', 'a/b', 'x~y', 'secrets');
const rules = fc.dictionary(ruleName, fc.string({ maxLength: 20 }), { maxKeys: 4 });
const threshold = fc.integer({ min: 0, max: 100 }).map((n) => n / 100);

const rulesWithModes = rules.map((cats) => ({
  categories: cats,
  rule_modes: Object.fromEntries(
    Object.keys(cats)
      .slice(0, 2)
      .map((k, i) => [k, i % 2 ? 'observe' : 'disabled']),
  ),
}));
// Rules and their modes travel together: modes naming rules the policy lacks are (rightly) a 422.
const patch = fc
  .tuple(
    fc.record(
      {
        name: fc.string({ minLength: 1, maxLength: 30 }),
        description: fc.string({ maxLength: 40 }),
        mode: fc.constantFrom('content_moderation', 'prompt_injection', 'coding_agent'),
        pre_violation_threshold: threshold,
        post_violation_jb_threshold: threshold,
        scanners_config: fc.constantFrom(
          {},
          { pii: { enabled: true } },
          { pii: { enabled: false, pii_types: ['email'] }, secrets: { enabled: true } },
        ),
        block_message: fc.string({ maxLength: 30 }),
      },
      { requiredKeys: [] },
    ),
    fc.option(rulesWithModes, { nil: undefined }),
  )
  .map(([fields, r]) => ({ ...fields, ...(r ?? {}) }));

type Step =
  | { kind: 'create'; body: Record<string, unknown> }
  | { kind: 'update'; target: number; body: Record<string, unknown> };
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 1,
    arbitrary: patch.map((b) => ({ kind: 'create' as const, body: { name: 'created', ...b } })),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.nat(), patch)
      .map(([target, body]) => ({ kind: 'update' as const, target, body })),
  },
);

describe('policy versions', () => {
  it('read back the exact state after every step of 200+ random creates and updates', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 200, maxLength: 240 }), async (steps) => {
        const ids: string[] = [];
        const expected = new Map<string, unknown>();
        for (const s of steps) {
          if (s.kind === 'create' || ids.length === 0) {
            const res = await api.post('/policies', { name: 'created', ...s.body });
            expect(res.status).toBe(201);
            ids.push(res.body.id);
            const v = (await api.get(`/policies/${res.body.id}/versions`)).body.versions[0];
            expected.set(v.id, res.body);
          } else {
            const id = ids[s.target % ids.length]!;
            const res = await api.put(`/policies/${id}`, s.body);
            expect(res.status).toBe(200);
            const v = (await api.get(`/policies/${id}/versions`)).body.versions[0];
            expected.set(v.id, res.body);
          }
        }
        expect(ids.length).toBeGreaterThan(1);
        let checked = 0;
        for (const id of ids) {
          const versions = (await api.get(`/policies/${id}/versions`)).body.versions;
          for (const v of versions) {
            const at = await api.get(`/policies/${id}/versions/${v.id}`);
            expect(at.body.policy_state).toEqual(expected.get(v.id));
            checked++;
          }
        }
        expect(checked).toBe(steps.length);
      }),
      { numRuns: 3, seed: 20261121, endOnFailure: true },
    );
  }, 120_000);
});
