/**
 * Regexes we do not control (policy `scanners_config.regex`, regexes written in rule descriptions)
 * run on RE2 (the `re2js` port): no backtracking, so time is linear in the text for a given
 * pattern and a hostile pattern such as `(a+)+$` cannot hang the process. Patterns are written in
 * JavaScript syntax (re2-syntax.ts translates); matching is by code point, as with the `u` flag.
 */
import { RE2JS, RE2JSException } from 're2js';
import { toRe2Syntax } from './re2-syntax.js';
import { SafeRegexError } from './safe-regex-error.js';

export { SafeRegexError } from './safe-regex-error.js';

export interface RegexMatch {
  start: number;
  end: number;
}

/**
 * Work left for a group of scans (e.g. every regex of one request), spent by each call. A unit is
 * one character through RE2's DFA, or one character times the program size through its NFA.
 */
export interface RegexBudget {
  steps: number;
}

export interface SafeRegex {
  readonly source: string;
  readonly flags: string;
  /** Non-overlapping leftmost-longest matches (UTF-16 offsets), at most `limit`; `budget` caps the work and is charged for it. */
  findAll(text: string, limit?: number, budget?: RegexBudget): RegexMatch[];
  test(text: string, budget?: RegexBudget): boolean;
}

export const SAFE_REGEX_LIMITS = {
  maxPatternLength: 1000,
  /** RE2 program instructions: the NFA's cost per character. */
  maxProgramSize: 4000,
  /** Work units per findAll call: ~0.2 s of NFA work. Beyond it the scan stops (matches so far are kept). */
  stepBudget: 8_000_000,
  /**
   * Work units for all the regexes of one request (the engine passes one RegexBudget to every
   * call). RE2 is linear, but 100 patterns over a 200 KB text and its decoded variants through
   * the NFA are still ~15 s; shared, all regex matching stays within ~1 s.
   */
  requestStepBudget: 25_000_000,
} as const;

class Re2Regex implements SafeRegex {
  constructor(
    readonly source: string,
    readonly flags: string,
    private readonly re: RE2JS,
  ) {}

  test(text: string, budget?: RegexBudget): boolean {
    if (budget && budget.steps <= 0) return false;
    // The DFA answers yes/no in one pass over the text, without a per-instruction cost.
    if (budget) budget.steps -= text.length;
    return this.re.test(text);
  }

  findAll(text: string, limit = 50, shared?: RegexBudget): RegexMatch[] {
    const out: RegexMatch[] = [];
    if (!this.test(text, shared)) return out;
    // Spans need the NFA, whose cost is characters x program size and which cannot be stopped
    // midway: past the budget it only gets the part of the text the budget pays for.
    const allowed = Math.min(SAFE_REGEX_LIMITS.stepBudget, shared?.steps ?? Infinity);
    const size = this.re.programSize();
    let left = allowed;
    let from = 0;
    while (out.length < limit && from <= text.length && left > 0) {
      const reach = Math.min(text.length, from + Math.floor(left / size));
      const cut = reach < text.length;
      const m = this.re.matcher(cut ? text.slice(0, reach) : text);
      const found = m.find(from);
      left -= Math.max(1, (found ? m.end() : reach) - from) * size;
      // A match that touches a cut-off end may be an artefact of the cut ($, \b, a longer span).
      if (!found || (cut && m.end() >= reach)) {
        if (cut) left = Math.min(left, 0);
        break;
      }
      out.push({ start: m.start(), end: m.end() });
      // After an empty match, step over one character: both halves of a surrogate pair.
      from =
        m.end() > m.start()
          ? m.end()
          : m.end() + ((text.codePointAt(m.end()) ?? 0) > 0xffff ? 2 : 1);
    }
    if (shared) shared.steps -= allowed - left;
    return out;
  }
}

/** Flags as in JavaScript: i, m, s; u is implied (code points always) and g, y change nothing. */
export function compileSafeRegex(pattern: string, flags = ''): SafeRegex {
  if (pattern.length > SAFE_REGEX_LIMITS.maxPatternLength) {
    throw new SafeRegexError(
      `pattern longer than ${SAFE_REGEX_LIMITS.maxPatternLength} characters`,
    );
  }
  if (/[^gimsuy]/.test(flags)) throw new SafeRegexError(`unsupported flags "${flags}"`);
  const dotAll = flags.includes('s');
  const re2Flags =
    RE2JS.LONGEST_MATCH |
    (flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) |
    (flags.includes('m') ? RE2JS.MULTILINE : 0) |
    (dotAll ? RE2JS.DOTALL : 0);
  let re: RE2JS;
  try {
    re = RE2JS.compile(toRe2Syntax(pattern, dotAll), re2Flags);
  } catch (e) {
    if (e instanceof RE2JSException)
      throw new SafeRegexError(e.message.replace(/^error parsing regexp: /, ''));
    throw e;
  }
  if (re.programSize() > SAFE_REGEX_LIMITS.maxProgramSize)
    throw new SafeRegexError('pattern too complex');
  return new Re2Regex(pattern, flags, re);
}

/** Compile or explain why not, for validation messages. */
export function checkSafeRegex(pattern: string, flags = ''): string | null {
  try {
    compileSafeRegex(pattern, flags);
    return null;
  } catch (e) {
    return e instanceof SafeRegexError ? e.message : String(e);
  }
}
