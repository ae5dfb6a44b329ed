import { ACTIVITY_SCHEMA_VERSION, ActivityRecord } from '@guard/contracts';
import type { Activity } from '@guard/domain';

/** Header values as Kafka clients hand them over. */
export type HeaderValue = Buffer | string | (Buffer | string)[] | undefined;
export type MessageHeaders = Record<string, HeaderValue>;

/** What a consumed message carries that the ingester reads. */
export interface ActivityMessage {
  value: Buffer | string | null;
  headers?: MessageHeaders | undefined;
}

/**
 * Why a message went to the dead-letter topic, in `dlq-reason`:
 * - `unsupported-schema-version`: no `schema-version` header, or one this ingester does not read;
 * - `invalid-json`: an empty value, or one that is not JSON (UTF-8);
 * - `invalid-activity`: JSON that `ActivityRecord` (the v1 schema) rejects.
 */
export type PoisonReason = 'unsupported-schema-version' | 'invalid-json' | 'invalid-activity';

export type ParsedActivityMessage =
  { ok: true; activity: Activity } | { ok: false; reason: PoisonReason; detail: string };

const SCHEMA_VERSION = String(ACTIVITY_SCHEMA_VERSION);
const MAX_DETAIL_CHARS = 500;

/** The first value of a header as text; Kafka allows a header to repeat. */
export function headerText(headers: MessageHeaders | undefined, name: string): string | undefined {
  const raw = headers?.[name];
  const first = Array.isArray(raw) ? raw[0] : raw;
  return first === undefined ? undefined : first.toString();
}

/** Reads one message of `guard.activity.v1`: a valid activity, or why it is poison. */
export function parseActivityMessage(message: ActivityMessage): ParsedActivityMessage {
  const version = headerText(message.headers, 'schema-version');
  if (version !== SCHEMA_VERSION) {
    return {
      ok: false,
      reason: 'unsupported-schema-version',
      detail:
        version === undefined
          ? 'no schema-version header'
          : `schema-version ${clip(version, 40)}; this ingester reads ${SCHEMA_VERSION}`,
    };
  }
  const text = message.value?.toString() ?? '';
  if (text === '') return { ok: false, reason: 'invalid-json', detail: 'empty value' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: 'invalid-json', detail: clip((err as Error).message) };
  }
  const parsed = ActivityRecord.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`,
    );
    return { ok: false, reason: 'invalid-activity', detail: clip(issues.join('; ')) };
  }
  return { ok: true, activity: parsed.data };
}

/** Where a poison message came from, written next to the reason on its dead letter. */
export interface PoisonOrigin {
  topic: string;
  partition: number;
  offset: string;
  /** The original message's timestamp (epoch ms, as Kafka gives it). */
  timestamp: string;
}

/**
 * Headers of a dead letter: the original message's headers, then `dlq-reason`, `dlq-detail`,
 * `dlq-original-topic`, `dlq-original-partition`, `dlq-original-offset`,
 * `dlq-original-timestamp` and `dlq-failed-at` (ISO time). A `dlq-*` header the original
 * carried is replaced, so a dead letter replayed and refused again says why this time.
 */
export function deadLetterHeaders(
  original: MessageHeaders | undefined,
  reason: PoisonReason,
  detail: string,
  origin: PoisonOrigin,
  failedAt: Date,
): Record<string, Buffer | string | (Buffer | string)[]> {
  const headers: Record<string, Buffer | string | (Buffer | string)[]> = {};
  for (const [k, v] of Object.entries(original ?? {})) {
    if (v !== undefined && !k.startsWith('dlq-')) headers[k] = v;
  }
  headers['dlq-reason'] = reason;
  headers['dlq-detail'] = detail;
  headers['dlq-original-topic'] = origin.topic;
  headers['dlq-original-partition'] = String(origin.partition);
  headers['dlq-original-offset'] = origin.offset;
  headers['dlq-original-timestamp'] = origin.timestamp;
  headers['dlq-failed-at'] = failedAt.toISOString();
  return headers;
}

function clip(text: string, max = MAX_DETAIL_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
