/**
 * `scanners_config`: the policy's scanner settings. The policies API validates stored configs
 * with `ScannersConfigSchema`; the engine parses them with the same schema (defaults filled,
 * shorthands expanded). Unknown top-level keys are kept and ignored so configs written for other
 * guardrail services are accepted.
 *
 * Every scanner has an `action`:
 * - `report`: findings appear in `scanner_output` and feed the rules the router maps to this
 *   scanner (e.g. a rule "no personal data" uses the PII scanner); no rule of its own.
 * - `block` / `observe`: in addition, a finding is a violation of a built-in rule named after the
 *   scanner (`pii`, `secrets`, `system_prompt_leak`, `keywords`, `regex`) with that mode.
 */
import { z } from 'zod';
import { checkSafeRegex } from './safe-regex.js';

export const PII_TYPES = [
  'email',
  'phone',
  'credit_card',
  'national_id',
  'iban',
  'ip_address',
] as const;
export type PiiType = (typeof PII_TYPES)[number];

export const SECRET_TYPES = [
  'aws',
  'gcp',
  'azure',
  'github',
  'gitlab',
  'slack',
  'stripe',
  'openai',
  'anthropic',
  'jwt',
  'private_key',
  'password_assignment',
  'high_entropy',
] as const;
export type SecretType = (typeof SECRET_TYPES)[number];

export const ScannerAction = z.enum(['report', 'block', 'observe']);
export type ScannerAction = z.infer<typeof ScannerAction>;

const PiiObject = z.object({
  /** Run the scanner (default true once the key is present). */
  enabled: z.boolean().default(true),
  /** Only these types are reported (default: all). */
  pii_types: z.array(z.enum(PII_TYPES)).min(1).optional(),
  /** Add `redacted_text` / `redacted_messages` to the output. */
  redact: z.boolean().default(false),
  /** `type`: "[EMAIL]"; `mask`: same-length "*" run. */
  redaction: z.enum(['type', 'mask']).default('type'),
  action: ScannerAction.default('report'),
});

const EntropyObject = z.object({
  enabled: z.boolean().default(true),
  /** Minimum token length considered (default 24). */
  min_length: z.number().int().min(12).max(256).default(24),
  /** Minimum Shannon entropy in bits per character (default 4.0). */
  min_entropy: z.number().min(2.5).max(6).default(4.0),
});

const SecretsObject = z.object({
  enabled: z.boolean().default(true),
  /** Only these kinds are reported (default: all). */
  types: z.array(z.enum(SECRET_TYPES)).min(1).optional(),
  /** High-entropy token detection; `false` turns it off. */
  entropy: z
    .union([z.boolean(), EntropyObject])
    .default(true)
    .transform((v) => (typeof v === 'boolean' ? EntropyObject.parse({ enabled: v }) : v)),
  redact: z.boolean().default(false),
  action: ScannerAction.default('report'),
});

const SystemPromptObject = z.object({
  enabled: z.boolean().default(true),
  /** The protected system prompt. When absent, the conversation's system/developer messages are used. */
  text: z.string().max(100_000).optional(),
  /** Word n-gram size for overlap (default 5). */
  ngram_size: z.number().int().min(3).max(12).default(5),
  action: ScannerAction.default('report'),
});

const KeywordsObject = z.object({
  enabled: z.boolean().default(true),
  /** Words or phrases. */
  keywords: z.array(z.string().min(1).max(200)).max(1000).default([]),
  /** Also match near-misses (edit distance 1 for 5-8 letters, 2 for longer). */
  fuzzy: z.boolean().default(false),
  case_sensitive: z.boolean().default(false),
  action: ScannerAction.default('block'),
});

const RegexPattern = z
  .union([
    z.string(),
    z.object({
      pattern: z.string(),
      flags: z.string().max(6).optional(),
      name: z.string().max(100).optional(),
    }),
  ])
  .transform((v) =>
    typeof v === 'string'
      ? { pattern: v, flags: 'i', name: undefined }
      : { pattern: v.pattern, flags: v.flags ?? 'i', name: v.name },
  )
  .superRefine((v, ctx) => {
    const problem = checkSafeRegex(v.pattern, v.flags);
    if (problem !== null)
      ctx.addIssue({ code: 'custom', message: `invalid or unsafe regex: ${problem}` });
  });

const RegexObject = z.object({
  enabled: z.boolean().default(true),
  patterns: z.array(RegexPattern).max(100).default([]),
  action: ScannerAction.default('block'),
});

const toggle = <T extends z.ZodType>(obj: T) =>
  z
    .union([z.boolean(), obj])
    .transform((v) => (typeof v === 'boolean' ? obj.parse({ enabled: v }) : v) as z.output<T>);

export const ScannersConfigSchema = z.looseObject({
  /**
   * The jailbreak encoder stage for this policy: `off` (static detector only), `cascade` (the
   * encoder reads the inputs the static detector is unsure of) or `all`. Absent: the server's
   * GUARD_ENCODER.
   */
  encoder: z.enum(['off', 'cascade', 'all']).optional(),
  /** PII: `true`, `false`, or {enabled, pii_types, redact, redaction, action}. */
  pii: toggle(PiiObject).optional(),
  /** Secrets: `true`, `false`, or {enabled, types, entropy, redact, action}. */
  secrets: toggle(SecretsObject).optional(),
  /** System-prompt leakage: the prompt text, `true` (use the conversation's system messages), or an object. */
  system_prompt: z
    .union([z.boolean(), z.string().max(100_000), SystemPromptObject])
    .transform((v) =>
      typeof v === 'boolean'
        ? SystemPromptObject.parse({ enabled: v })
        : typeof v === 'string'
          ? SystemPromptObject.parse({ text: v })
          : v,
    )
    .optional(),
  /** Keywords: a list of words/phrases, or {keywords, fuzzy, case_sensitive, action}. */
  keywords: z
    .union([z.array(z.string().min(1).max(200)).max(1000), KeywordsObject])
    .transform((v) => (Array.isArray(v) ? KeywordsObject.parse({ keywords: v }) : v))
    .optional(),
  /** Regexes (JavaScript syntax run on RE2, see safe-regex.ts): a pattern, a list, or {patterns, action}. */
  regex: z
    .union([z.string(), z.array(z.unknown()), RegexObject])
    .transform((v, ctx) => {
      const raw =
        typeof v === 'string' ? { patterns: [v] } : Array.isArray(v) ? { patterns: v } : v;
      const parsed = RegexObject.safeParse(raw);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
        return z.NEVER;
      }
      return parsed.data;
    })
    .optional(),
});

export type ScannersConfig = z.output<typeof ScannersConfigSchema>;
export type ScannersConfigInput = z.input<typeof ScannersConfigSchema>;
export type PiiConfig = z.output<typeof PiiObject>;
export type SecretsConfig = z.output<typeof SecretsObject>;
export type SystemPromptConfig = z.output<typeof SystemPromptObject>;
export type KeywordsConfig = z.output<typeof KeywordsObject>;
export type RegexConfig = z.output<typeof RegexObject>;

export interface ParsedScannersConfig {
  config: ScannersConfig;
  /** Problems found; the offending keys are dropped, the rest is used. */
  problems: string[];
}

/**
 * Parse leniently for scoring: a broken key is dropped (and reported), never fatal. The engine
 * parses once per compiled policy (engine/compiled-policy.ts), not per request.
 */
export function parseScannersConfig(
  raw: Record<string, unknown> | undefined | null,
): ParsedScannersConfig {
  if (!raw || Object.keys(raw).length === 0) return { config: {}, problems: [] };
  let result: ParsedScannersConfig;
  const parsed = ScannersConfigSchema.safeParse(raw);
  if (parsed.success) {
    result = { config: parsed.data, problems: [] };
  } else {
    const bad = new Set(parsed.error.issues.map((i) => String(i.path[0] ?? '')));
    const problems = parsed.error.issues.map(
      (i) => `scanners_config.${i.path.join('.')}: ${i.message}`,
    );
    const kept: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw)) if (!bad.has(k)) kept[k] = v;
    const retry = ScannersConfigSchema.safeParse(kept);
    result = { config: retry.success ? retry.data : {}, problems };
  }
  return result;
}
