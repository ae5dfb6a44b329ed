import { POLICY_MODES } from '@guard/domain';

/**
 * What the policy `mode` changes. Deliberately modest: modes tune defaults, they never change
 * the threshold semantics of decisions.md.
 *
 * | mode               | effect |
 * |--------------------|--------|
 * | content_moderation | baseline |
 * | prompt_injection   | `ipi` is also a built-in block rule `indirect_injection` (unless a policy rule already maps indirect injection) |
 * | pii_protection     | PII scanner runs (report) without scanners_config; redaction output on unless configured off |
 * | coding_agent       | secrets scanner and destructive-command patterns run by default; tool-call arguments of the checked assistant turn are checked as output |
 *
 * The `ipi` threshold is 0.5 in every mode: ordinary READMEs and e-mails score 0.4-0.5 with the
 * learned detector, so a lower bar would flag routine agent traffic.
 *
 * Unknown modes (the API rejects them with 422; the engine may still see one from old data) behave
 * as content_moderation and say so in `reasoning`.
 */
/** The policy modes, as the domain defines them. */
export const ENGINE_MODES = POLICY_MODES;
export type EngineMode = (typeof ENGINE_MODES)[number];

export interface ModeProfile {
  mode: EngineMode;
  known: boolean;
  ipiThreshold: number;
  /** `ipi` counts as a violation of a built-in block rule `indirect_injection`. */
  ipiIsViolation: boolean;
  piiByDefault: boolean;
  redactByDefault: boolean;
  secretsByDefault: boolean;
  destructiveByDefault: boolean;
  toolCallsAreOutput: boolean;
}

const BASE: Omit<ModeProfile, 'mode' | 'known'> = {
  ipiThreshold: 0.5,
  ipiIsViolation: false,
  piiByDefault: false,
  redactByDefault: false,
  secretsByDefault: false,
  destructiveByDefault: false,
  toolCallsAreOutput: false,
};

const PROFILES: Record<EngineMode, ModeProfile> = {
  content_moderation: { ...BASE, mode: 'content_moderation', known: true },
  prompt_injection: { ...BASE, mode: 'prompt_injection', known: true, ipiIsViolation: true },
  pii_protection: {
    ...BASE,
    mode: 'pii_protection',
    known: true,
    piiByDefault: true,
    redactByDefault: true,
  },
  coding_agent: {
    ...BASE,
    mode: 'coding_agent',
    known: true,
    secretsByDefault: true,
    destructiveByDefault: true,
    toolCallsAreOutput: true,
  },
};

export function isEngineMode(mode: string): mode is EngineMode {
  return (ENGINE_MODES as readonly string[]).includes(mode);
}

export function modeProfile(mode: string): ModeProfile {
  if (isEngineMode(mode)) return PROFILES[mode];
  return { ...PROFILES.content_moderation, known: false };
}
