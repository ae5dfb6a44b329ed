import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
// Imported by path: the package index also loads the SQLite, Kafka and Temporal code.
import { MemoryPolicyStore } from '@guard/adapters/memory/memory-policy-store';
import type { PolicyStore, PolicyWriteResult } from '../ports.js';
import {
  DEFAULT_BLOCK_MESSAGE,
  DEFAULT_THRESHOLDS,
  type DiffEntry,
  type Policy,
  type PolicyContent,
  type PolicyVersion,
  type Principal,
  type RuleMode,
} from '../types.js';
import { createPolicy } from './create-policy.js';
import { deletePolicy } from './delete-policy.js';
import type { PolicyDeps } from './deps.js';
import { importPolicy } from './import-policies.js';
import type { PolicyInput, PolicyPatch } from './policy-content.js';
import { getPolicyAtVersion, listPolicyVersions } from './policy-versions.js';
import { updatePolicy } from './update-policy.js';

/**
 * Version history as a property, over the domain verbs and the in-memory store: random sequences
 * of creates, imports, updates (random subsets of fields; rules added, removed, renamed and
 * rewritten, under names JSON pointers and JavaScript objects treat specially) and deletes. A
 * model written here, not the domain's applyPatch, says what each step must leave; at the end
 * every version must read back exactly the state its policy had right after that step.
 *
 * test/e2e/policy-versions.property.e2e.test.ts runs the same idea over HTTP a few times; this
 * runs it hundreds of times in a second or two.
 */

const ORG = 'org-a';
const admin = (user: string): Principal => ({
  org_id: ORG,
  org_kind: 'standard',
  user_id: user,
  key_id: `key-${user}`,
  role: 'admin',
  staff: false,
});

// ------------------------------------------------------------------------------------- model

const FIELDS = [
  'name',
  'description',
  'mode',
  'pre_violation_threshold',
  'pre_jb_threshold',
  'post_violation_threshold',
  'post_violation_jb_threshold',
  'scanners_config',
  'block_message',
] as const;

function modelCreate(input: PolicyInput): PolicyContent | 'invalid' {
  const content: PolicyContent = {
    name: input.name,
    description: input.description ?? '',
    rules: { ...(input.categories ?? input.rules ?? {}) },
    rule_modes: { ...(input.rule_modes ?? {}) },
    mode: input.mode ?? 'content_moderation',
    pre_violation_threshold:
      input.pre_violation_threshold ?? DEFAULT_THRESHOLDS.pre_violation_threshold,
    pre_jb_threshold: input.pre_jb_threshold ?? DEFAULT_THRESHOLDS.pre_jb_threshold,
    post_violation_threshold:
      input.post_violation_threshold ?? DEFAULT_THRESHOLDS.post_violation_threshold,
    post_violation_jb_threshold:
      input.post_violation_jb_threshold ?? DEFAULT_THRESHOLDS.post_violation_jb_threshold,
    scanners_config: structuredClone(input.scanners_config ?? {}),
    block_message: input.block_message ?? DEFAULT_BLOCK_MESSAGE,
  };
  return modesValid(content) ? content : 'invalid';
}

/** Fields present in the patch replace the stored ones; removed rules take their modes along. */
function modelUpdate(current: PolicyContent, patch: PolicyPatch): PolicyContent | 'invalid' {
  const next: PolicyContent = structuredClone(current);
  for (const field of FIELDS) {
    const value = patch[field];
    if (value !== undefined) Object.assign(next, { [field]: structuredClone(value) });
  }
  const rules = patch.categories ?? patch.rules;
  if (rules !== undefined) {
    next.rules = { ...rules };
    const kept: Record<string, RuleMode> = {};
    for (const [name, mode] of Object.entries(current.rule_modes))
      if (Object.keys(rules).includes(name)) kept[name] = mode;
    next.rule_modes = kept;
  }
  if (patch.rule_modes !== undefined) next.rule_modes = { ...patch.rule_modes };
  return modesValid(next) ? next : 'invalid';
}

const modesValid = (c: PolicyContent) =>
  Object.keys(c.rule_modes).every((name) => Object.keys(c.rules).includes(name));

// -------------------------------------------------------------------------------- generators

/** Names that JSON pointers escape, that objects inherit, that sort as numbers, and unicode. */
const TRICKY = [
  'violence',
  'pii',
  'a/b',
  '/',
  '~',
  '~0',
  '~1',
  'x~1y',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  '__defineGetter__',
  '0',
  '10',
  ' ',
  'a.b',
  'règle',
  '規則',
  '🚫 no spam',
];
// `__proto__` is refused at the HTTP boundary (it would silently vanish in a spread).
const name = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 6 })
      .filter((s) => s !== '__proto__'),
  },
);
const text = fc.string({ maxLength: 12 });
const rules = fc.dictionary(name, text, { maxKeys: 5, noNullPrototype: true });
const threshold = fc.integer({ min: 0, max: 100 }).map((n) => n / 100);
const ruleMode = fc.constantFrom<RuleMode>('block', 'observe', 'disabled');
/** Free-form, so nested keys (tricky ones too) and arrays go through the diff. */
const scannersConfig = fc.oneof(
  fc.constantFrom({}, { pii: true }, { pii: { enabled: true, pii_types: ['email'] } }),
  fc.dictionary(
    name,
    fc.oneof(
      fc.boolean(),
      fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
      fc.dictionary(name, fc.integer(), { maxKeys: 3, noNullPrototype: true }),
    ),
    { maxKeys: 3, noNullPrototype: true },
  ),
);
const fields = fc.record(
  {
    name: fc.string({ minLength: 1, maxLength: 12 }),
    description: text,
    mode: fc.constantFrom('content_moderation', 'prompt_injection', 'coding_agent'),
    pre_violation_threshold: threshold,
    pre_jb_threshold: threshold,
    post_violation_threshold: threshold,
    post_violation_jb_threshold: threshold,
    scanners_config: scannersConfig,
    block_message: text,
  },
  { requiredKeys: [] },
);

/** How a step treats rule modes: leave them out, set some for existing rules, or name a ghost. */
type Modes = { kind: 'absent' } | { kind: 'set'; picks: [number, RuleMode][] } | { kind: 'ghost' };
const modes: fc.Arbitrary<Modes> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'absent' as const }) },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.tuple(fc.nat(), ruleMode), { maxLength: 3 })
      .map((picks) => ({ kind: 'set' as const, picks })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'ghost' as const }) },
);

/** A change to the rule set, relative to the rules the target has when the step runs. */
type RuleEdit =
  | { kind: 'none' }
  | { kind: 'replace'; rules: Record<string, string> }
  | { kind: 'add'; name: string; text: string }
  | { kind: 'remove'; at: number }
  | { kind: 'rename'; at: number; to: string }
  | { kind: 'rewrite'; at: number; text: string };
const ruleEdit: fc.Arbitrary<RuleEdit> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 1, arbitrary: rules.map((r) => ({ kind: 'replace' as const, rules: r })) },
  {
    weight: 2,
    arbitrary: fc.tuple(name, text).map(([n, t]) => ({ kind: 'add' as const, name: n, text: t })),
  },
  { weight: 2, arbitrary: fc.nat().map((at) => ({ kind: 'remove' as const, at })) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.nat(), name).map(([at, to]) => ({ kind: 'rename' as const, at, to })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(), text)
      .map(([at, t]) => ({ kind: 'rewrite' as const, at, text: t })),
  },
);

type Step =
  | {
      kind: 'create';
      via: 'create' | 'import';
      user: string;
      name: string;
      fields: PolicyPatch;
      rules: Record<string, string> | null;
      spelling: 'categories' | 'rules';
      modes: Modes;
    }
  | {
      kind: 'update';
      target: number;
      user: string;
      fields: PolicyPatch;
      edit: RuleEdit;
      spelling: 'categories' | 'rules';
      modes: Modes;
    }
  | { kind: 'delete'; target: number; user: string };

const user = fc.constantFrom('alice', 'bob');
const spelling = fc.constantFrom('categories' as const, 'rules' as const);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .record({
        via: fc.constantFrom('create' as const, 'import' as const),
        user,
        name: fc.string({ minLength: 1, maxLength: 12 }),
        fields,
        rules: fc.option(rules, { nil: null }),
        spelling,
        modes,
      })
      .map((s) => ({ kind: 'create' as const, ...s })),
  },
  {
    weight: 8,
    arbitrary: fc
      .record({ target: fc.nat(), user, fields, edit: ruleEdit, spelling, modes })
      .map((s) => ({ kind: 'update' as const, ...s })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ target: fc.nat(), user })
      .map((s) => ({ kind: 'delete' as const, ...s })),
  },
);

function editRules(
  current: Record<string, string>,
  edit: RuleEdit,
): Record<string, string> | undefined {
  const names = Object.keys(current);
  const pick = (at: number) => names[at % names.length];
  switch (edit.kind) {
    case 'none':
      return undefined;
    case 'replace':
      return { ...edit.rules };
    case 'add':
      return { ...current, [edit.name]: edit.text };
    case 'remove': {
      const gone = pick(edit.at);
      return Object.fromEntries(Object.entries(current).filter(([n]) => n !== gone));
    }
    case 'rename': {
      const from = pick(edit.at);
      if (from === undefined) return { [edit.to]: 'renamed into an empty set' };
      return Object.fromEntries(
        Object.entries(current).map(([n, t]) => (n === from ? [edit.to, t] : [n, t])),
      );
    }
    case 'rewrite': {
      const which = pick(edit.at);
      return which === undefined ? { ...current } : { ...current, [which]: edit.text };
    }
  }
}

function modesFor(m: Modes, ruleNames: string[]): Record<string, RuleMode> | undefined {
  if (m.kind === 'absent') return undefined;
  if (m.kind === 'ghost') return { 'no such rule \u0000': 'observe' };
  const out: Record<string, RuleMode> = {};
  for (const [at, mode] of m.picks) {
    const n = ruleNames[at % Math.max(1, ruleNames.length)];
    if (n !== undefined) out[n] = mode;
  }
  return out;
}

function withRules(
  patch: PolicyPatch,
  rulesToSend: Record<string, string> | undefined,
  how: 'categories' | 'rules',
): PolicyPatch {
  return rulesToSend === undefined ? patch : { ...patch, [how]: rulesToSend };
}

// ------------------------------------------------------------------------------------ runner

interface Tracked {
  id: string;
  deleted: boolean;
  /** The policy as the last successful step left it. */
  state: Policy;
  /** Successful steps on it, oldest first: the version id and the full state it must read back. */
  history: { versionId: string; operation: string; user: string; state: Policy }[];
}

const contentOf = (p: Policy): PolicyContent => ({
  name: p.name,
  description: p.description,
  rules: p.rules,
  rule_modes: p.rule_modes,
  mode: p.mode,
  pre_violation_threshold: p.pre_violation_threshold,
  pre_jb_threshold: p.pre_jb_threshold,
  post_violation_threshold: p.post_violation_threshold,
  post_violation_jb_threshold: p.post_violation_jb_threshold,
  scanners_config: p.scanners_config,
  block_message: p.block_message,
});

async function rejects(p: Promise<unknown>, code: string): Promise<void> {
  await expect(p).rejects.toMatchObject({ code });
}

/** Runs the steps against a store, checking every answer and then every version. */
async function runSteps(store: PolicyStore, steps: Step[]): Promise<void> {
  let clock = Date.parse('2026-01-01T00:00:00.000Z');
  let ids = 0;
  const deps: PolicyDeps = {
    policies: store,
    // Deterministic, and clear of the preset ids (000...001 to 000...004).
    newId: () => `e${(++ids).toString(16).padStart(23, '0')}`,
    now: () => new Date((clock += 1000)),
  };
  const tracked: Tracked[] = [];
  const latestVersion = async (id: string) =>
    (await listPolicyVersions(deps, admin('reader'), id)).versions[0]!;

  for (const s of steps) {
    if (s.kind === 'create' || tracked.length === 0) {
      const c =
        s.kind === 'create'
          ? s
          : {
              via: 'create' as const,
              user: s.user,
              name: 'first',
              fields: {},
              rules: null,
              spelling: 'categories' as const,
              modes: { kind: 'absent' as const },
            };
      const ruleSet = c.rules ?? undefined;
      const input: PolicyInput = {
        ...withRules(c.fields, ruleSet, c.spelling),
        name: c.name,
      };
      const m = modesFor(c.modes, Object.keys(ruleSet ?? {}));
      if (m !== undefined) input.rule_modes = m;
      const expected = modelCreate(input);
      const verb =
        c.via === 'import'
          ? importPolicy(deps, admin(c.user), input)
          : createPolicy(deps, admin(c.user), input);
      if (expected === 'invalid') {
        await rejects(verb, 'VALIDATION_ERROR');
        continue;
      }
      const created = await verb;
      const at = new Date(clock).toISOString();
      const state: Policy = {
        ...expected,
        id: created.id,
        org_id: ORG,
        is_preset: false,
        created_at: at,
        updated_at: at,
      };
      expect(created).toEqual(state);
      const v = await latestVersion(created.id);
      tracked.push({
        id: created.id,
        deleted: false,
        state,
        history: [{ versionId: v.id, operation: c.via, user: c.user, state }],
      });
      continue;
    }

    const t = tracked[s.target % tracked.length]!;
    if (s.kind === 'delete') {
      if (t.deleted) {
        await rejects(deletePolicy(deps, admin(s.user), t.id), 'NOT_FOUND');
        continue;
      }
      expect(await deletePolicy(deps, admin(s.user), t.id)).toEqual({ id: t.id, deleted: true });
      t.deleted = true;
      const v = await latestVersion(t.id);
      // Read back at the delete, the policy is as it was, stamped with the delete's time.
      const state = { ...t.state, updated_at: new Date(clock).toISOString() };
      t.history.push({ versionId: v.id, operation: 'delete', user: s.user, state });
      continue;
    }

    const newRules = editRules(t.state.rules, s.edit);
    const patch = withRules(s.fields, newRules, s.spelling);
    const m = modesFor(s.modes, Object.keys(newRules ?? t.state.rules));
    if (m !== undefined) patch.rule_modes = m;
    const verb = updatePolicy(deps, admin(s.user), t.id, patch);
    if (t.deleted) {
      await rejects(verb, 'NOT_FOUND');
      continue;
    }
    const expected = modelUpdate(contentOf(t.state), patch);
    if (expected === 'invalid') {
      await rejects(verb, 'VALIDATION_ERROR');
      continue;
    }
    const updated = await verb;
    const state: Policy = { ...t.state, ...expected, updated_at: new Date(clock).toISOString() };
    expect(updated).toEqual(state);
    t.state = state;
    const v = await latestVersion(t.id);
    t.history.push({ versionId: v.id, operation: 'update', user: s.user, state });
  }

  // Every version of every policy reads back as the state right after its step.
  for (const t of tracked) {
    const list = await listPolicyVersions(deps, admin('reader'), t.id);
    expect(list.total).toBe(t.history.length);
    const oldestFirst = [...list.versions].reverse();
    expect(oldestFirst.map((v) => [v.id, v.operation, v.user_id])).toEqual(
      t.history.map((h) => [h.versionId, h.operation, h.user]),
    );
    for (const h of t.history) {
      const at = await getPolicyAtVersion(deps, admin('reader'), t.id, h.versionId);
      expect(at.policy_state, `policy ${t.id} at version ${h.versionId} (${h.operation})`).toEqual(
        h.state,
      );
    }
  }
}

const steps = fc.array(step, { minLength: 1, maxLength: 30 });

describe('policy version history', () => {
  it('reads back the exact state after every step of random creates, updates and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(steps, (s) => runSteps(new MemoryPolicyStore(), s)),
      { numRuns: 500 },
    );
    // About 3 s on a quiet machine; room for a busy one.
  }, 30_000);
});

// ---------------------------------------------------------------------- the property can fail

/** A store that stores each update's diff through `corrupt`: a bug in diffing or in storage. */
class CorruptingStore extends MemoryPolicyStore {
  constructor(private readonly corrupt: (diff: DiffEntry[]) => DiffEntry[]) {
    super();
  }

  override async replace(
    policy: Policy,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult> {
    return super.replace(
      policy,
      { ...version, diff: this.corrupt(version.diff) },
      expectedRevision,
    );
  }
}

const unescape = (p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~');
const MUTANTS: [string, (diff: DiffEntry[]) => DiffEntry[]][] = [
  ['paths not escaped', (d) => d.map((e) => ({ ...e, path: unescape(e.path) }))],
  ['removals dropped', (d) => d.filter((e) => e.op !== 'remove')],
  ['additions dropped', (d) => d.filter((e) => e.op !== 'add')],
  ['old values lost', (d) => d.map(({ old: _old, ...e }) => e)],
  ['entries of nested objects dropped', (d) => d.filter((e) => e.path.split('/').length <= 3)],
];

describe('the property', () => {
  for (const [what, corrupt] of MUTANTS) {
    it(`finds a history whose diffs have ${what}`, async () => {
      // A fixed seed: with random ones, 500 histories sometimes hold no change deep enough for a
      // mutant (the nested-objects one escaped for 3 of 40 seeds, and failed a CI run); the
      // property above stays random.
      const details = await fc.check(
        fc.asyncProperty(steps, (s) => runSteps(new CorruptingStore(corrupt), s)),
        { numRuns: 500, endOnFailure: true, seed: 20261126 },
      );
      expect(details.failed).toBe(true);
      // Failed because a version read back wrong, not because the run broke some other way.
      expect(String(details.errorInstance)).toMatch(/at version|expected \[/);
    }, 30_000);
  }
});
