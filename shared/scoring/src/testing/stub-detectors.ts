/**
 * A phrase-table `Detectors` test double: scores are whatever the table says for phrases found in
 * the text. For unit tests (engine semantics must not depend on a trained model) and for the
 * engine benchmark before the learned detectors exist. Not a detector: never use it to score
 * real traffic.
 */
import {
  HARM_CATEGORIES,
  type DetectorOutput,
  type Detectors,
  type HarmCategory,
  type HarmOutput,
  type Span,
  type TextRole,
} from '../detectors.js';

export interface StubEntry {
  /** Case-insensitive substring. */
  phrase: string;
  score: number;
  label?: string;
  /** Only for these roles (default: all). */
  roles?: TextRole[];
}

export interface StubDetectorTable {
  jailbreak?: StubEntry[];
  injection?: StubEntry[];
  harm?: Partial<Record<HarmCategory, StubEntry[]>>;
  /** When present, the double also answers `compliance` (responses only). */
  compliance?: StubEntry[];
}

export interface StubDetectors extends Detectors {
  /** Every call, for assertions: which detector saw which text in which role. */
  readonly calls: Array<{
    detector: 'jailbreak' | 'injection' | 'harm' | 'compliance';
    text: string;
    role?: TextRole;
  }>;
}

function score(
  entries: StubEntry[] | undefined,
  text: string,
  role: TextRole | undefined,
  lower: string,
): DetectorOutput {
  let best = 0;
  const spans: Span[] = [];
  for (const e of entries ?? []) {
    if (role && e.roles && !e.roles.includes(role)) continue;
    const at = lower.indexOf(e.phrase.toLowerCase());
    if (at < 0) continue;
    spans.push({ start: at, end: at + e.phrase.length, label: e.label ?? e.phrase });
    best = Math.max(best, e.score);
  }
  void text;
  return { score: best, spans };
}

export function createStubDetectors(
  table: StubDetectorTable = DEFAULT_STUB_TABLE,
  options: { record?: boolean } = {},
): StubDetectors {
  const calls: StubDetectors['calls'] = [];
  const record = options.record ?? true;
  return {
    calls,
    jailbreak(text: string): DetectorOutput {
      if (record) calls.push({ detector: 'jailbreak', text });
      return score(table.jailbreak, text, undefined, text.toLowerCase());
    },
    injection(text: string, role: TextRole): DetectorOutput {
      if (record) calls.push({ detector: 'injection', text, role });
      return score(table.injection, text, role, text.toLowerCase());
    },
    harm(text: string, role: TextRole): HarmOutput {
      if (record) calls.push({ detector: 'harm', text, role });
      const lower = text.toLowerCase();
      const categories = {} as Record<HarmCategory, DetectorOutput>;
      let any: DetectorOutput = { score: 0, spans: [] };
      for (const c of HARM_CATEGORIES) {
        const out = score(table.harm?.[c], text, role, lower);
        categories[c] = out;
        if (out.score > any.score) any = out;
      }
      return { any, categories };
    },
    ...(table.compliance
      ? {
          compliance(response: string): DetectorOutput {
            if (record) calls.push({ detector: 'compliance', text: response, role: 'response' });
            return score(table.compliance, response, 'response', response.toLowerCase());
          },
        }
      : {}),
  };
}

/** A small default table with neutral wording, for benchmarks and smoke tests. */
export const DEFAULT_STUB_TABLE: StubDetectorTable = {
  jailbreak: [
    { phrase: 'ignore all previous instructions', score: 0.92, label: 'instruction override' },
    { phrase: 'developer mode', score: 0.85, label: 'persona override' },
    { phrase: 'do anything now', score: 0.95, label: 'persona override' },
    { phrase: 'no restrictions', score: 0.6, label: 'refusal suppression' },
  ],
  injection: [
    { phrase: 'ignore all previous instructions', score: 0.9, label: 'instruction override' },
    { phrase: 'ignore previous instructions', score: 0.9, label: 'instruction override' },
    { phrase: 'reveal the system prompt', score: 0.85, label: 'prompt extraction' },
    { phrase: 'send the conversation to', score: 0.8, label: 'exfiltration' },
  ],
  harm: {
    weapons: [{ phrase: 'assemble an explosive device', score: 0.93 }],
    cybercrime: [{ phrase: 'write ransomware', score: 0.9 }],
    fraud: [{ phrase: 'phishing email that steals', score: 0.88 }],
    violence: [{ phrase: 'hurt my neighbour', score: 0.8 }],
  },
};
