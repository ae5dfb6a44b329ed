import type {
  AnswerMeta,
  BlockedEnding,
  CanonicalResponse,
  CanonicalUsage,
  RawMessage,
  ScoreToolDef,
  SseMessage,
  StreamEvent,
  Surface,
} from '@guard/domain';

/**
 * What the guard itself reads from a completion request, beside what goes to the model. These
 * fields are removed from the body before it is forwarded upstream.
 */
export interface GuardOptions {
  policy_id?: string | undefined;
  moderate_before?: boolean | undefined;
  monitor_details?: boolean | undefined;
  /** Stored with the activity (OpenAI's `metadata`; Anthropic's `metadata` is forwarded too). */
  metadata?: Record<string, unknown> | undefined;
}

/** A client request, understood. */
export interface ParsedCall {
  model: string;
  stream: boolean;
  /**
   * The conversation as the scorer sees it: system prompt / instructions first (role `system`),
   * then the turns, tool results as role `tool`. Non-text parts stay as parts: the scorer lists
   * them as ignored.
   */
  messages: RawMessage[];
  tools?: ScoreToolDef[] | undefined;
  guard: GuardOptions;
  /** The body to forward to a provider of the same wire, guard fields removed. */
  upstreamBody: Record<string, unknown>;
}

/** Where the call came from, beside its body. */
export interface CallContext {
  /** Gemini: the `{model}` path segment. */
  model?: string | undefined;
  /** Gemini: true on `:streamGenerateContent` (the body has no `stream` flag there). */
  stream?: boolean | undefined;
}

/**
 * Writes one stream in the client's wire. Each call returns the bytes to write (already framed:
 * SSE `data:` lines, or JSON-array pieces for Gemini without `alt=sse`); `''` when the event has
 * nothing to show in this wire.
 */
export interface StreamEncoder {
  /** SSE frames are sent with `text/event-stream`; the Gemini JSON array with `application/json`. */
  readonly contentType: string;
  event(e: StreamEvent): string;
  /** Ends the stream early, in the wire's own blocked ending. No `event` call follows. */
  blocked(b: BlockedEnding): string;
  /**
   * Closes the stream after `finish` or `blocked` (`data: [DONE]` for OpenAI chat, `]` for the
   * Gemini array; `''` for wires whose last event already said it all).
   */
  end(): string;
}

/** One client-facing API family: how its requests, answers, streams and refusals look. */
export interface WireFormat {
  readonly surface: Surface;
  /** Throws a ValidationError (`loc` under `body`) for what the provider itself would refuse. */
  parseRequest(body: unknown, ctx: CallContext): ParsedCall;
  /** A provider's non-streamed JSON answer in this wire, to canonical. */
  decodeResponse(body: unknown): CanonicalResponse;
  /** A provider's stream in this wire (its SSE messages), to canonical events. */
  decodeStream(events: AsyncIterable<SseMessage>): AsyncIterable<StreamEvent>;
  /**
   * What of a provider's non-streamed answer is shown to the caller once it passed the checks:
   * the provider's own body, kept as sent, cut down to what was checked (the first choice or
   * candidate) and completed with any field this wire's contract adds.
   */
  shownAnswer(raw: Record<string, unknown>, checked: CanonicalResponse): Record<string, unknown>;
  /** Canonical to this wire's non-streamed JSON answer (a blocked answer has finish `content_filter`). */
  encodeResponse(r: CanonicalResponse): Record<string, unknown>;
  /** The wire's refusal: what a blocked call answers, with HTTP 200. */
  blockedResponse(
    meta: AnswerMeta,
    message: string,
    usage: CanonicalUsage | null,
  ): Record<string, unknown>;
  /** `sse`: false only for Gemini's `:streamGenerateContent` without `alt=sse` (a JSON array). */
  streamEncoder(opts: { sse: boolean }): StreamEncoder;
}
