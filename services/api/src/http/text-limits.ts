import { ValidationError } from '@guard/platform';
import type { RawMessage } from '@guard/domain';

/** How much one request may hand to the scorer (GUARD_MONITOR_MAX_MESSAGES, GUARD_MONITOR_MAX_CHARS). */
export interface TextLimits {
  maxMessages: number;
  maxTextChars: number;
}

/** Characters of text in a conversation, counted the way the scorer will see it. */
export function messagesChars(messages: readonly RawMessage[]): number {
  let n = 0;
  for (const m of messages) {
    if (typeof m.content === 'string') n += m.content.length;
    else if (Array.isArray(m.content))
      for (const p of m.content) n += typeof p.text === 'string' ? p.text.length : 0;
    for (const c of m.tool_calls ?? []) n += c.function.arguments?.length ?? 0;
  }
  return n;
}

/**
 * A 422 when a request carries more messages or characters than one check takes. `verb` says
 * what the endpoint does with them (`scored`, `checked`); `loc` names the field at fault.
 */
export function checkTextLimits(
  limits: TextLimits,
  request: { messages: number; chars: number },
  where: { verb: string; messagesLoc: (string | number)[]; charsLoc: (string | number)[] },
): void {
  if (request.messages > limits.maxMessages)
    throw ValidationError.single(
      where.messagesLoc,
      `At most ${limits.maxMessages} messages can be ${where.verb} in one request`,
      'too_long',
    );
  if (request.chars > limits.maxTextChars)
    throw ValidationError.single(
      where.charsLoc,
      `At most ${limits.maxTextChars} characters of text can be ${where.verb} in one request (got ${request.chars})`,
      'too_long',
    );
}
