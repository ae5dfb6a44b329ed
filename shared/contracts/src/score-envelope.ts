import { z } from 'zod';
import { SCORE_CONTRACT_VERSION, ScoreRequest, ScoreResult } from '@guard/domain';

/**
 * The scoring transport of distributed mode (docs/scorer.md): API pods add a request envelope to
 * one Redis stream, a scorer pod of the consumer group scores it and adds a reply envelope to the
 * stream named in `reply_to`. Both envelopes carry SCORE_CONTRACT_VERSION, so that a scorer and
 * an API pod of different releases refuse each other's envelopes by answer, never by crash.
 */

/** Where API pods add requests, unless configured otherwise. */
export const DEFAULT_SCORE_REQUEST_STREAM = 'guard:score:requests';
/** The consumer group of the scorer pods. */
export const DEFAULT_SCORER_GROUP = 'scorers';
/** Each API pod reads its replies from `<prefix><pod id>`. */
export const DEFAULT_SCORE_REPLY_PREFIX = 'guard:score:reply:';
/** The one field of a stream entry, request or reply: the envelope as JSON. */
export const ENVELOPE_FIELD = 'e';

/**
 * What a scorer reads first, whatever the version: enough to route an answer (`id`, `reply_to`)
 * and to decide whether the rest can be read at all (`v`) or is still worth scoring (`deadline_ms`).
 */
export const ScoreEnvelopeHeader = z.object({
  v: z.number().int(),
  /** Made once by the API pod; the reply carries it back, and a duplicate reply is dropped by it. */
  id: z.string().min(1).max(128),
  /** The stream key the reply goes to: the requesting pod's reply stream. */
  reply_to: z.string().min(1).max(512),
  /** Absolute deadline, epoch milliseconds: past it nobody waits for the answer. */
  deadline_ms: z.number().int().nonnegative(),
});
export type ScoreEnvelopeHeader = z.infer<typeof ScoreEnvelopeHeader>;

/** A score request on `guard:score:requests`. */
export const ScoreRequestEnvelope = ScoreEnvelopeHeader.extend({
  v: z.literal(SCORE_CONTRACT_VERSION),
  /** W3C trace context of the requesting call (`traceparent`, `tracestate`), when traced. */
  trace: z.record(z.string(), z.string()).optional(),
  request: ScoreRequest,
});
export type ScoreRequestEnvelope = z.infer<typeof ScoreRequestEnvelope>;

/**
 * Why a scorer answered without a result. `deadline_exceeded`: the deadline passed before or
 * while scoring (the client rejects as its own deadline would). The others become an `error: true`
 * result on the API side: `unsupported_version` (the envelope's `v` is not one this scorer
 * reads), `invalid_request` (the envelope does not match the contract), `scoring_failed` (the
 * scoring core threw).
 */
export const SCORE_REPLY_ERROR_CODES = [
  'deadline_exceeded',
  'unsupported_version',
  'invalid_request',
  'scoring_failed',
] as const;
export const ScoreReplyErrorCode = z.enum(SCORE_REPLY_ERROR_CODES);
export type ScoreReplyErrorCode = z.infer<typeof ScoreReplyErrorCode>;

/** The answer on the requesting pod's reply stream: a result, or why there is none. */
export const ScoreReplyEnvelope = z.discriminatedUnion('ok', [
  z.object({
    v: z.number().int(),
    id: z.string().min(1),
    ok: z.literal(true),
    result: ScoreResult,
  }),
  z.object({
    v: z.number().int(),
    id: z.string().min(1),
    ok: z.literal(false),
    error: z.object({ code: ScoreReplyErrorCode, message: z.string() }),
  }),
]);
export type ScoreReplyEnvelope = z.infer<typeof ScoreReplyEnvelope>;

/**
 * Reads a request entry's envelope in two steps, so that every envelope that names a reply
 * address gets an answer: `unreadable` (not JSON, or no usable header: nobody to answer),
 * `unsupported` (a `v` this release does not read), `invalid` (header fine, body not), or `ok`.
 */
export type ParsedScoreEnvelope =
  | { kind: 'ok'; envelope: ScoreRequestEnvelope }
  | { kind: 'unsupported' | 'invalid'; header: ScoreEnvelopeHeader; message: string }
  | { kind: 'unreadable'; message: string };

export function parseScoreEnvelope(raw: string | undefined): ParsedScoreEnvelope {
  let json: unknown;
  try {
    json = JSON.parse(raw ?? '');
  } catch {
    return { kind: 'unreadable', message: 'the entry is not JSON' };
  }
  const header = ScoreEnvelopeHeader.safeParse(json);
  if (!header.success) return { kind: 'unreadable', message: issuesOf(header.error) };
  if (header.data.v !== SCORE_CONTRACT_VERSION) {
    return {
      kind: 'unsupported',
      header: header.data,
      message: `score contract version ${header.data.v} is not supported by this scorer (it reads ${SCORE_CONTRACT_VERSION})`,
    };
  }
  const full = ScoreRequestEnvelope.safeParse(json);
  if (!full.success) {
    return {
      kind: 'invalid',
      header: header.data,
      message: `invalid score request: ${issuesOf(full.error)}`,
    };
  }
  return { kind: 'ok', envelope: full.data };
}

function issuesOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(envelope)'}: ${i.message}`)
    .join('; ');
}
