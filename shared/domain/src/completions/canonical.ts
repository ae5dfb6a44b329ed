/**
 * One model answer, whichever provider's wire it came over. Wire formats (the OpenAI chat and
 * Responses APIs, Anthropic messages, Gemini generateContent) decode into these and encode from
 * them, so that moderation, activity and cross-format routes are written once.
 */

/** The client-facing API families the service imitates. */
export const SURFACES = ['chat', 'responses', 'messages', 'gemini'] as const;
export type Surface = (typeof SURFACES)[number];

/** Kinds of upstream provider: each speaks its own wire. */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'gemini'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/**
 * Why an answer ended, in OpenAI chat terms (the other wires map onto these):
 * `content_filter` is what a block by the guard (or the provider's own filter) reports.
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface CanonicalToolCall {
  id: string;
  name: string;
  /** The arguments as JSON text, as the model produced them. */
  arguments: string;
}

export interface CanonicalUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Identity of one answer; the first thing a stream carries. */
export interface AnswerMeta {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
}

/** A complete (non-streamed) answer. Only the first choice/candidate is carried. */
export interface CanonicalResponse extends AnswerMeta {
  text: string;
  /**
   * Reasoning the provider shows the caller beside the answer (thinking blocks, thought parts,
   * reasoning summaries): not part of the answer, but checked with it, since it reaches the
   * caller too.
   */
  reasoning?: string | undefined;
  tool_calls: CanonicalToolCall[];
  finish: FinishReason;
  usage: CanonicalUsage | null;
}

/**
 * A streamed answer is `start`, then any number of `text` and `tool_call_delta`, then one
 * `finish`. Decoders accept whatever order the provider sends; encoders may rely on this one.
 */
export type StreamEvent =
  | ({ type: 'start' } & AnswerMeta)
  | { type: 'text'; text: string }
  | {
      type: 'tool_call_delta';
      /** Position of the call in the answer (0-based); deltas of one call share it. */
      index: number;
      /** Set on the first delta of a call. */
      id?: string | undefined;
      name?: string | undefined;
      /** The next piece of the arguments' JSON text (may be empty, or the whole of it). */
      arguments: string;
    }
  | { type: 'finish'; finish: FinishReason; usage: CanonicalUsage | null };

/** What the guard emits instead of the rest of a stream when it blocks it. */
export interface BlockedEnding {
  type: 'blocked';
  /** The policy's block message, sent as the answer's text. */
  message: string;
  usage: CanonicalUsage | null;
}

/** One server-sent event as read off an upstream connection. */
export interface SseMessage {
  /** The `event:` field, when the provider names its events (Anthropic, Responses). */
  event?: string | undefined;
  data: string;
}
