import type { ProviderKind, SseMessage, Surface } from './canonical.js';

/**
 * The upstream-provider port: one model call, in the provider's own wire. The HTTP adapter
 * (shared/adapters/src/upstream) knows each provider's URLs, auth headers and stream framing;
 * the caller knows the wire's body and how to read the answer.
 */

/** Where a call goes. */
export interface UpstreamTarget {
  provider: ProviderKind;
  /** As the provider's own SDK takes it (OpenAI's includes `/v1`; Anthropic's and Gemini's do not). */
  baseUrl: string;
  /** null: send no key (a local OpenAI-compatible server, or a key the client did not give). */
  apiKey: string | null;
}

export interface UpstreamCall {
  target: UpstreamTarget;
  /** Which of the provider's APIs: `chat` and `responses` (OpenAI), `messages`, `gemini`. */
  surface: Surface;
  model: string;
  body: Record<string, unknown>;
  stream: boolean;
  /** Client headers the provider understands (`anthropic-version`, `anthropic-beta`, …), passed on. */
  headers: Record<string, string>;
  /** Aborting it cancels the call, also mid-stream. */
  signal: AbortSignal;
}

export type UpstreamReply =
  { kind: 'json'; body: unknown } | { kind: 'stream'; events: AsyncIterable<SseMessage> };

/**
 * The provider did not answer with success. `status` is its HTTP status, or null when there was
 * no answer at all (connection refused, timeout); `body` is its error body as sent (JSON when it
 * was JSON), which the caller passes on for client errors such as 400 and 429.
 */
export class UpstreamFailure extends Error {
  readonly status: number | null;
  readonly body: unknown;
  readonly provider: ProviderKind;

  constructor(
    provider: ProviderKind,
    status: number | null,
    message: string,
    body: unknown = null,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
    this.provider = provider;
    this.status = status;
    this.body = body;
  }
}

export interface UpstreamPort {
  /** Resolves once the provider answered with success (for a stream: once its headers arrived). */
  send(call: UpstreamCall): Promise<UpstreamReply>;
}
