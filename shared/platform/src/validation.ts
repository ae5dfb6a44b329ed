import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from './errors.js';

type Issue = z.core.$ZodIssue;
type Loc = (string | number)[];

/** How a value looks, in a few words, for messages such as "expected string, got number". */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number' && Number.isNaN(v)) return 'not a number';
  if (typeof v === 'string') return v.length > 40 ? `a string of ${v.length} characters` : `"${v}"`;
  if (typeof v === 'object') return 'an object';
  return typeof v;
}

function plural(n: number | bigint, one: string): string {
  return `${n} ${one}${n === 1 || n === 1n ? '' : 's'}`;
}

function bound(issue: Extract<Issue, { code: 'too_small' | 'too_big' }>): string {
  const small = issue.code === 'too_small';
  const n = small
    ? (issue as { minimum: number | bigint }).minimum
    : (issue as { maximum: number | bigint }).maximum;
  const word = small ? 'at least' : 'at most';
  switch (issue.origin) {
    case 'string':
      return `must be ${word} ${plural(n, 'character')} long`;
    case 'array':
    case 'set':
      return `must have ${word} ${plural(n, 'item')}`;
    case 'object':
    case 'record':
      return `must have ${word} ${plural(n, 'entry')}`.replace('entrys', 'entries');
    default:
      return issue.inclusive === false
        ? `must be ${small ? 'greater' : 'less'} than ${String(n)}`
        : `must be ${word} ${String(n)}`;
  }
}

/** One message a user can act on: what was expected, and what was sent where that helps. */
function message(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'Field required';
      return `expected ${issue.expected === 'int' ? 'a whole number' : issue.expected}, got ${describeValue(issue.input)}`;
    case 'too_small':
    case 'too_big':
      return bound(issue);
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(issue.input)}`;
    case 'invalid_key': {
      const key = typeof issue.input === 'string' ? issue.input : String(issue.input);
      const shown = key.length > 40 ? `${key.slice(0, 40)}… (${key.length} characters)` : key;
      const why = issue.issues.map((i) => message(i as Issue)).join('; ');
      return `invalid name "${shown}": names ${why}`;
    }
    case 'invalid_format':
      return issue.message.startsWith('Invalid')
        ? `expected ${issue.format}, got ${describeValue(issue.input)}`
        : issue.message;
    case 'invalid_union':
      return issue.message === 'Invalid input'
        ? `value of this form is not accepted (got ${describeValue(issue.input)})`
        : issue.message;
    default:
      return issue.message;
  }
}

function issueType(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'missing' : `${issue.expected}_type`;
    case 'too_small':
      return issue.origin === 'string'
        ? 'string_too_short'
        : issue.origin === 'array'
          ? 'too_short'
          : 'greater_than_equal';
    case 'too_big':
      return issue.origin === 'string'
        ? 'string_too_long'
        : issue.origin === 'array'
          ? 'too_long'
          : 'less_than_equal';
    case 'invalid_value':
      return 'enum';
    case 'unrecognized_keys':
      return 'extra_forbidden';
    case 'invalid_format':
      return 'string_pattern_mismatch';
    case 'invalid_key':
      return 'invalid_key';
    default:
      return 'value_error';
  }
}

/** Turn a zod error into validation issues located under `prefix` (e.g. ["body"]). */
export function zodIssues(error: z.ZodError, prefix: Loc = []): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of error.issues) {
    const loc: Loc = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      // One issue per field, each named in its location, so that a client sees exactly what to drop.
      for (const key of issue.keys)
        out.push({ loc: [...loc, key], msg: `unknown field "${key}"`, type: 'extra_forbidden' });
      continue;
    }
    out.push({ loc, msg: message(issue), type: issueType(issue) });
  }
  return out;
}

/**
 * Validate with a zod schema or throw a ValidationError listing every problem. `reportInput`
 * lets messages say what was sent ("got null") and tell a wrong type from a missing field; the
 * input itself never goes into the answer beyond a short description.
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  prefix: Loc,
): z.infer<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw new ValidationError(zodIssues(result.error, prefix));
  return result.data;
}
