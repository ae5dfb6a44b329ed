import { expect } from 'vitest';
import { ValidationError } from '@guard/platform';
import type { BlockedEnding, StreamEvent } from '@guard/domain';
import type { WireFormat } from '../completions/wire-format.js';

/** Everything a wire's stream encoder writes for a sequence of events, then its ending. */
export function encodeWith(
  format: WireFormat,
  events: (StreamEvent | BlockedEnding)[],
  opts: { sse: boolean } = { sse: true },
): string {
  const enc = format.streamEncoder(opts);
  let out = '';
  for (const e of events) out += e.type === 'blocked' ? enc.blocked(e) : enc.event(e);
  return out + enc.end();
}

/** The validation issues `fn` throws (it must throw a ValidationError). */
export function validationIssues(fn: () => unknown): { loc: (string | number)[]; type: string }[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).issues.map(({ loc, type }) => ({ loc, type }));
  }
  throw new Error('expected a validation error');
}
