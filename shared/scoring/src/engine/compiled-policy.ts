/**
 * What the policies in force compile to in the scoring core: the scanner settings parsed, each
 * active rule planned by the rule router, the normaliser's extra vocabulary, the keyword matcher
 * and the regexes. Built once and kept in one LRU per engine: a request that names its policy
 * revision (`policy_revision`, the ids and `updated_at` of the stored policies its rules and
 * scanners came from) is looked up by that name, without reading its rules or settings; one
 * without (inline rules, per-request scanner settings) is looked up by its content.
 */
import { LRUCache } from 'lru-cache';
import type { ScoreRequest, ScoreRule } from '../engine-types.js';
import { compileRule, type RulePlan } from '../router/rule-router.js';
import { scoredByMeaning } from '../router/score-rule.js';
import { compileKeywords, type KeywordMatcher } from '../scanners/keyword-matcher.js';
import { compileSafeRegex, type SafeRegex } from '../scanners/safe-regex.js';
import { parseScannersConfig, type ScannersConfig } from '../scanners/scanners-config.js';

export interface ActiveRule {
  rule: ScoreRule;
  /** 1-based position in the request's rules (what `violated_rules` holds). */
  index: number;
  plan: RulePlan;
}

export interface CompiledPolicy {
  config: ScannersConfig;
  /** Scanner settings that could not be parsed (dropped, reported in the reasoning). */
  problems: readonly string[];
  /** The rules not `disabled`, in request order. */
  active: readonly ActiveRule[];
  /** The plans of the active rules scored by meaning when the encoder reads (`scoredByMeaning`). */
  byMeaning: readonly RulePlan[];
  /** Some active rule reads the harm detector (what the encoder's harm reading is for). */
  readsHarm: boolean;
  /** Rule and keyword words the normaliser must keep whole. */
  vocabulary: ReadonlySet<string>;
  /** Present when the keywords scanner is on with at least one keyword. */
  keywords: KeywordMatcher | null;
  /** Present when the regex scanner is on with at least one pattern. */
  regexes: ReadonlyArray<{ label: string; re: SafeRegex }> | null;
}

export type PolicyCompiler = (request: ScoreRequest) => CompiledPolicy;

/** Compiled policies of one engine, least recently used dropped first. */
export function createPolicyCompiler(max = 1024): PolicyCompiler {
  const cache = new LRUCache<string, CompiledPolicy>({ max });
  return (request) => {
    // Rules given with the request are the caller's own text: compiled (and their embeddings,
    // kept with the compiled rules, apply-encoder.ts) per scope, so that another organization
    // sending the same rules finds nothing read for it. A stored policy's revision names it alone.
    const key =
      request.policy_revision !== undefined
        ? `revision\u0000${request.policy_revision}`
        : `content\u0000${request.cache_scope ?? ''}\u0000${JSON.stringify([request.rules, request.scanners_config])}`;
    let compiled = cache.get(key);
    if (!compiled) {
      compiled = compilePolicy(request);
      cache.set(key, compiled);
    }
    return compiled;
  };
}

export function compilePolicy(request: Pick<ScoreRequest, 'rules' | 'scanners_config'>) {
  const { config, problems } = parseScannersConfig(request.scanners_config);
  const active: ActiveRule[] = [];
  request.rules.forEach((rule, i) => {
    if (rule.mode !== 'disabled')
      active.push({ rule, index: i + 1, plan: compileRule(rule.name, rule.description) });
  });
  const kc =
    config.keywords?.enabled && config.keywords.keywords.length > 0 ? config.keywords : null;
  const rc = config.regex?.enabled && config.regex.patterns.length > 0 ? config.regex : null;

  const vocabulary = new Set<string>();
  for (const { plan } of active) for (const w of plan.vocabulary) vocabulary.add(w);
  for (const k of kc?.keywords ?? [])
    for (const w of k.toLowerCase().split(/\s+/)) if (w.length >= 4) vocabulary.add(w);

  return {
    config,
    problems,
    active,
    byMeaning: active.map((r) => r.plan).filter(scoredByMeaning),
    readsHarm: active.some((r) => r.plan.harm.length > 0 || r.plan.harmGeneral),
    vocabulary,
    keywords: kc
      ? compileKeywords(kc.keywords, { fuzzy: kc.fuzzy, caseSensitive: kc.case_sensitive })
      : null,
    regexes: rc
      ? rc.patterns.map((p) => ({
          label: p.name ?? p.pattern,
          re: compileSafeRegex(p.pattern, p.flags),
        }))
      : null,
  } satisfies CompiledPolicy;
}
