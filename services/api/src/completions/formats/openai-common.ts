import type { CanonicalUsage, FinishReason } from '@guard/domain';
import type { GuardOptions } from '../wire-format.js';

/**
 * Pieces both OpenAI wires (chat completions and Responses) share: the guard's own request
 * fields, SSE framing, and defensive reading of what an upstream sent.
 */

/** The guard's fields in a request body (described once, in @guard/contracts). */
export { GuardRequestFields as GuardFields, GUARD_ONLY_FIELDS } from '@guard/contracts';

export function guardOptions(parsed: {
  policy_id?: string | undefined;
  moderate_before?: boolean | undefined;
  monitor_details?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
}): GuardOptions {
  const guard: GuardOptions = {};
  if (parsed.policy_id !== undefined) guard.policy_id = parsed.policy_id;
  if (parsed.moderate_before !== undefined) guard.moderate_before = parsed.moderate_before;
  if (parsed.monitor_details !== undefined) guard.monitor_details = parsed.monitor_details;
  if (parsed.metadata !== undefined) guard.metadata = parsed.metadata;
  return guard;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A shallow copy of `body` without `keys`. */
export function withoutFields(
  body: Record<string, unknown>,
  keys: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** One SSE message carrying only data (the chat wire). */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** One SSE message naming its event (the Responses wire). */
export function sseEvent(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/** Thrown when an upstream answer cannot be read; the caller answers 502. */
export class MalformedUpstreamError extends Error {
  constructor(wire: string, problem: string) {
    super(`Malformed upstream ${wire}: ${problem}`);
    this.name = 'MalformedUpstreamError';
  }
}

export function stringOr<T>(v: unknown, fallback: T): string | T {
  return typeof v === 'string' ? v : fallback;
}

function tokens(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

/** Usage from a provider's usage object, whichever names it uses; null when it has no counts. */
export function readUsage(
  v: unknown,
  inputKey: 'prompt_tokens' | 'input_tokens',
  outputKey: 'completion_tokens' | 'output_tokens',
): CanonicalUsage | null {
  if (!isRecord(v)) return null;
  const input = tokens(v[inputKey]);
  const output = tokens(v[outputKey]);
  if (input === null && output === null) return null;
  return { input_tokens: input ?? 0, output_tokens: output ?? 0 };
}

/** An upstream's own error object (`{message, type, code}`) as one line. */
export function upstreamErrorText(err: unknown): string {
  if (isRecord(err) && typeof err.message === 'string') return err.message;
  if (typeof err === 'string') return err;
  return JSON.stringify(err) ?? 'unknown error';
}

const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>([
  'stop',
  'length',
  'tool_calls',
  'content_filter',
]);

export function isFinishReason(v: unknown): v is FinishReason {
  return typeof v === 'string' && FINISH_REASONS.has(v);
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
