import { describe, expect, it } from 'vitest';
import type { ScoreRequest } from '../engine-types.js';
import { createStubDetectors } from '../testing/stub-detectors.js';
import { createPolicyCompiler } from './compiled-policy.js';
import { createLocalEngine } from './local-engine.js';

const THRESHOLDS = {
  pre_violation_threshold: 0.5,
  pre_jb_threshold: 0.5,
  post_violation_threshold: 0.5,
  post_violation_jb_threshold: 0.5,
};

function request(over: Partial<ScoreRequest> = {}): ScoreRequest {
  return {
    messages: [{ role: 'user', content: 'Tell me about project falcon and ticket ABC-123.' }],
    rules: [
      { name: 'weapons', description: 'No weapons.', mode: 'block' },
      { name: 'off', description: 'Nothing about cats.', mode: 'disabled' },
      { name: 'fraud', description: 'No help with fraud.', mode: 'observe' },
    ],
    thresholds: THRESHOLDS,
    mode: 'content_moderation',
    scanners_config: {
      keywords: ['project falcon', 'northwind merger'],
      regex: ['ABC-\\d+'],
    },
    reasoning_mode: 'off',
    ...over,
  };
}

describe('compiled policies', () => {
  it('compile each active rule, the scanners and the vocabulary once', () => {
    const compiled = createPolicyCompiler()(request());
    expect(compiled.active.map((a) => [a.rule.name, a.index])).toEqual([
      ['weapons', 1],
      ['fraud', 3],
    ]);
    expect(compiled.keywords).not.toBeNull();
    expect(compiled.regexes?.map((r) => r.label)).toEqual(['ABC-\\d+']);
    expect(compiled.vocabulary.has('falcon')).toBe(true);
    expect(compiled.vocabulary.has('northwind')).toBe(true);
    expect(compiled.problems).toEqual([]);
  });

  it('are found again by policy revision, or by content without one', () => {
    const compile = createPolicyCompiler();
    const byRevision = compile(request({ policy_revision: 'p1@2026-11-25T00:00:00.000Z' }));
    expect(compile(request({ policy_revision: 'p1@2026-11-25T00:00:00.000Z' }))).toBe(byRevision);
    // A new revision is compiled anew, so what a policy update changed applies at once.
    const next = compile(
      request({
        policy_revision: 'p1@2026-11-25T00:00:00.001Z',
        scanners_config: { keywords: ['bluebird'] },
      }),
    );
    expect(next).not.toBe(byRevision);
    expect(next.regexes).toBeNull();

    const byContent = compile(request());
    expect(compile(request())).toBe(byContent);
    expect(compile(request({ scanners_config: { keywords: ['other'] } }))).not.toBe(byContent);
    // Rules sent with the request are the caller's text: another scope (organization) never gets
    // what was compiled, and read by the encoder, for them.
    const orgA = compile(request({ cache_scope: 'org-a' }));
    expect(compile(request({ cache_scope: 'org-a' }))).toBe(orgA);
    expect(compile(request({ cache_scope: 'org-b' }))).not.toBe(orgA);
    expect(orgA).not.toBe(byContent);
    // A stored policy's revision names it alone: the same compiled policy for any scope.
    expect(
      compile(request({ policy_revision: 'p1@2026-11-25T00:00:00.000Z', cache_scope: 'org-a' })),
    ).toBe(byRevision);
  });

  it('drop the least recently used beyond their bound', () => {
    const compile = createPolicyCompiler(2);
    const first = compile(request({ policy_revision: 'a' }));
    compile(request({ policy_revision: 'b' }));
    compile(request({ policy_revision: 'c' }));
    expect(compile(request({ policy_revision: 'a' }))).not.toBe(first);
  });

  it('serve what the revision holds: an updated policy is scored with its new settings', async () => {
    const engine = createLocalEngine({ detectors: createStubDetectors({}), warmup: false });
    const v1 = await engine.score(request({ policy_revision: 'p@1' }));
    expect(v1.violated_rule_descriptions.map((d) => d.name).sort()).toEqual(['keywords', 'regex']);
    const v2 = await engine.score(
      request({ policy_revision: 'p@2', scanners_config: { keywords: ['nothing here'] } }),
    );
    expect(v2.violated_rule_descriptions).toEqual([]);
  });
});
