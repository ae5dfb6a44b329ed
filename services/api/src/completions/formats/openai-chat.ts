import { z } from 'zod';
import { firstAnswerOnly } from './first-answer.js';
import { chatReasoning } from './reasoning-text.js';
import { ContentPart, MessageRole } from '@guard/contracts';
import { parseOrThrow } from '@guard/platform';
import type {
  AnswerMeta,
  BlockedEnding,
  CanonicalResponse,
  CanonicalToolCall,
  CanonicalUsage,
  FinishReason,
  RawMessage,
  ScoreToolDef,
  SseMessage,
  StreamEvent,
} from '@guard/domain';
import type { ParsedCall, StreamEncoder, WireFormat } from '../wire-format.js';
import {
  GUARD_ONLY_FIELDS,
  GuardFields,
  guardOptions,
  isRecord,
  MalformedUpstreamError,
  readUsage,
  sseData,
  stringOr,
  unixNow,
  upstreamErrorText,
  withoutFields,
} from './openai-common.js';

/**
 * OpenAI chat completions (`POST /v1/chat/completions`), as the official SDKs send and read it.
 * Only what the guard reads is validated; every other field goes upstream as sent.
 */

const WIRE = 'chat completion';

const ChatFunctionCall = z.looseObject({ name: z.string(), arguments: z.string().optional() });

const ChatToolCall = z.looseObject({
  id: z.string().optional(),
  type: z.string().optional(),
  function: ChatFunctionCall.optional(),
  custom: z.looseObject({ name: z.string(), input: z.string().optional() }).optional(),
});

export const ChatCompletionMessage = z.looseObject({
  role: MessageRole,
  content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
  name: z.string().optional(),
  tool_calls: z.array(ChatToolCall).nullish(),
  tool_call_id: z.string().optional(),
  /** The deprecated single call of `functions`. */
  function_call: ChatFunctionCall.nullish(),
});
export type ChatCompletionMessage = z.infer<typeof ChatCompletionMessage>;

const FunctionDefinition = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  parameters: z.unknown().optional(),
});

const ChatTool = z
  .looseObject({
    type: z.string().optional(),
    function: FunctionDefinition.optional(),
    custom: z.looseObject({ name: z.string(), description: z.string().optional() }).optional(),
  })
  .superRefine((tool, ctx) => {
    if ((tool.type ?? 'function') === 'function' && tool.function === undefined)
      ctx.addIssue({ code: 'custom', path: ['function'], message: 'Field required' });
  });

export const ChatCompletionRequest = z.looseObject({
  model: z.string(),
  messages: z.array(ChatCompletionMessage).min(1),
  stream: z.boolean().nullish(),
  tools: z.array(ChatTool).nullish(),
  /** The deprecated form of `tools`. */
  functions: z.array(FunctionDefinition).nullish(),
  // One answer per call: every choice would need its own check, and an unchecked second choice
  // would be a way around the guard.
  n: z
    .number()
    .int()
    .max(1, { error: 'the guard checks one answer per call: send n 1 (or leave it out)' })
    .nullish(),
  // Only text can be checked: audio output would reach the caller unchecked.
  modalities: z
    .array(
      z.literal('text', {
        error: 'the guard checks text answers only: leave audio out of modalities',
      }),
    )
    .nullish(),
  ...GuardFields,
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

function toRawMessage(m: ChatCompletionMessage): RawMessage {
  const out: RawMessage = { role: m.role };
  if (m.content !== undefined) out.content = m.content;
  if (m.name !== undefined) out.name = m.name;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  const calls: NonNullable<RawMessage['tool_calls']> = [];
  for (const c of m.tool_calls ?? []) {
    if (c.function) {
      calls.push({
        ...(c.id !== undefined ? { id: c.id } : {}),
        type: c.type ?? 'function',
        function: { name: c.function.name, arguments: c.function.arguments ?? '' },
      });
    } else if (c.custom) {
      calls.push({
        ...(c.id !== undefined ? { id: c.id } : {}),
        type: 'custom',
        function: { name: c.custom.name, arguments: c.custom.input ?? '' },
      });
    }
  }
  if (m.function_call)
    calls.push({
      function: { name: m.function_call.name, arguments: m.function_call.arguments ?? '' },
    });
  if (calls.length) out.tool_calls = calls;
  return out;
}

function toToolDefs(req: ChatCompletionRequest): ScoreToolDef[] | undefined {
  const defs: ScoreToolDef[] = [];
  const add = (name: string, description?: string, parameters?: unknown): void => {
    defs.push({
      name,
      ...(description !== undefined ? { description } : {}),
      ...(parameters !== undefined ? { parameters } : {}),
    });
  };
  for (const t of req.tools ?? []) {
    if (t.function) add(t.function.name, t.function.description, t.function.parameters);
    else if (t.custom) add(t.custom.name, t.custom.description);
  }
  for (const f of req.functions ?? []) add(f.name, f.description, f.parameters);
  return defs.length ? defs : undefined;
}

function parseRequest(body: unknown): ParsedCall {
  const req = parseOrThrow(ChatCompletionRequest, body, ['body']);
  // parseOrThrow accepted an object; forward the body as the client sent it, not as zod read it.
  const sent = isRecord(body) ? body : {};
  return {
    model: req.model,
    stream: req.stream ?? false,
    messages: req.messages.map(toRawMessage),
    tools: toToolDefs(req),
    guard: guardOptions(req),
    // OpenAI refuses `metadata` unless `store` is true, so it stays with the guard.
    upstreamBody: withoutFields(sent, [...GUARD_ONLY_FIELDS, 'metadata']),
  };
}

/** OpenAI's finish reasons onto ours; `function_call` is the deprecated `tool_calls`. */
function finishOf(v: unknown): FinishReason | null {
  switch (v) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return v;
    case 'function_call':
      return 'tool_calls';
    case null:
    case undefined:
      return null;
    default:
      return 'stop';
  }
}

/** A message's text: its content (string or text parts), else its refusal. */
function messageText(message: Record<string, unknown>): string {
  const { content, refusal } = message;
  let text = '';
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content))
    text = content.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
  if (!text && typeof refusal === 'string') text = refusal;
  return text;
}

function decodeToolCalls(message: Record<string, unknown>): CanonicalToolCall[] {
  const out: CanonicalToolCall[] = [];
  const { tool_calls: calls, function_call: legacy } = message;
  if (calls !== undefined && calls !== null && !Array.isArray(calls))
    throw new MalformedUpstreamError(WIRE, 'choices[0].message.tool_calls is not an array');
  (Array.isArray(calls) ? calls : []).forEach((c, i) => {
    const fn = isRecord(c) ? c.function : undefined;
    if (!isRecord(c) || !isRecord(fn) || typeof fn.name !== 'string')
      throw new MalformedUpstreamError(
        WIRE,
        `choices[0].message.tool_calls[${i}] has no function name`,
      );
    out.push({ id: stringOr(c.id, ''), name: fn.name, arguments: stringOr(fn.arguments, '') });
  });
  if (isRecord(legacy) && typeof legacy.name === 'string')
    out.push({ id: '', name: legacy.name, arguments: stringOr(legacy.arguments, '') });
  return out;
}

function decodeResponse(body: unknown): CanonicalResponse {
  if (!isRecord(body)) throw new MalformedUpstreamError(WIRE, 'the body is not a JSON object');
  if (body.error !== undefined && body.error !== null)
    throw new MalformedUpstreamError(WIRE, `it carries an error: ${upstreamErrorText(body.error)}`);
  if (typeof body.id !== 'string') throw new MalformedUpstreamError(WIRE, 'it has no id');
  const { choices } = body;
  if (!Array.isArray(choices) || choices.length === 0)
    throw new MalformedUpstreamError(WIRE, 'it has no choices');
  const choice: unknown = choices[0];
  if (!isRecord(choice) || !isRecord(choice.message))
    throw new MalformedUpstreamError(WIRE, 'choices[0] has no message');
  const toolCalls = decodeToolCalls(choice.message);
  return {
    id: body.id,
    model: stringOr(body.model, ''),
    created: typeof body.created === 'number' ? body.created : unixNow(),
    text: messageText(choice.message),
    tool_calls: toolCalls,
    finish: finishOf(choice.finish_reason) ?? (toolCalls.length ? 'tool_calls' : 'stop'),
    usage: readUsage(body.usage, 'prompt_tokens', 'completion_tokens'),
    reasoning: chatReasoning(body),
  };
}

function parseChunk(data: string): Record<string, unknown> {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new MalformedUpstreamError(`${WIRE} stream`, 'a chunk is not JSON');
  }
  if (!isRecord(chunk))
    throw new MalformedUpstreamError(`${WIRE} stream`, 'a chunk is not an object');
  if (chunk.error !== undefined && chunk.error !== null)
    throw new MalformedUpstreamError(
      `${WIRE} stream`,
      `it carries an error: ${upstreamErrorText(chunk.error)}`,
    );
  return chunk;
}

function deltaEvents(delta: Record<string, unknown>): StreamEvent[] {
  const out: StreamEvent[] = [];
  // A refusal streams in its own field; it is the answer's text all the same.
  for (const text of [delta.content, delta.refusal])
    if (typeof text === 'string' && text) out.push({ type: 'text', text });
  if (Array.isArray(delta.tool_calls)) {
    for (const [position, c] of delta.tool_calls.entries()) {
      if (!isRecord(c)) continue;
      const fn = isRecord(c.function) ? c.function : {};
      out.push({
        type: 'tool_call_delta',
        index: typeof c.index === 'number' ? c.index : position,
        id: typeof c.id === 'string' ? c.id : undefined,
        name: typeof fn.name === 'string' ? fn.name : undefined,
        arguments: stringOr(fn.arguments, ''),
      });
    }
  }
  if (isRecord(delta.function_call)) {
    const fn = delta.function_call;
    out.push({
      type: 'tool_call_delta',
      index: 0,
      name: typeof fn.name === 'string' ? fn.name : undefined,
      arguments: stringOr(fn.arguments, ''),
    });
  }
  return out;
}

async function* decodeStream(events: AsyncIterable<SseMessage>): AsyncGenerator<StreamEvent> {
  let started = false;
  let finish: FinishReason | null = null;
  let usage: CanonicalUsage | null = null;
  for await (const message of events) {
    if (message.data.trim() === '[DONE]') break;
    if (!message.data.trim()) continue;
    const chunk = parseChunk(message.data);
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    // Azure opens with a chunk that has no id and no choices (its prompt filter results).
    if (!started && (chunk.id || choices.length)) {
      started = true;
      yield {
        type: 'start',
        id: stringOr(chunk.id, ''),
        model: stringOr(chunk.model, ''),
        created: typeof chunk.created === 'number' ? chunk.created : unixNow(),
      };
    }
    usage = readUsage(chunk.usage, 'prompt_tokens', 'completion_tokens') ?? usage;
    const choice = choices.find((c) => isRecord(c) && (c.index ?? 0) === 0);
    if (!isRecord(choice)) continue;
    if (isRecord(choice.delta)) yield* deltaEvents(choice.delta);
    finish = finishOf(choice.finish_reason) ?? finish;
  }
  if (!started) throw new MalformedUpstreamError(`${WIRE} stream`, 'it ended before any chunk');
  yield { type: 'finish', finish: finish ?? 'stop', usage };
}

function wireUsage(usage: CanonicalUsage): Record<string, number> {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

function completion(
  meta: AnswerMeta,
  message: Record<string, unknown>,
  finish: FinishReason,
  usage: CanonicalUsage | null,
): Record<string, unknown> {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    ...(usage ? { usage: wireUsage(usage) } : {}),
    system_fingerprint: null,
  };
}

function encodeResponse(r: CanonicalResponse): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: r.text === '' && r.tool_calls.length ? null : r.text,
    refusal: null,
  };
  if (r.tool_calls.length)
    message.tool_calls = r.tool_calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  return completion(r, message, r.finish, r.usage);
}

function blockedResponse(
  meta: AnswerMeta,
  message: string,
  usage: CanonicalUsage | null,
): Record<string, unknown> {
  return completion(
    meta,
    { role: 'assistant', content: message, refusal: message },
    'content_filter',
    usage,
  );
}

function streamEncoder(): StreamEncoder {
  let meta: AnswerMeta = { id: '', model: '', created: 0 };
  const namedCalls = new Set<number>();

  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    sseData({
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      system_fingerprint: null,
      choices,
      ...extra,
    });
  const choice = (delta: Record<string, unknown>, finish: FinishReason | null = null): string =>
    chunk([{ index: 0, delta, logprobs: null, finish_reason: finish }]);
  const ending = (finish: FinishReason, usage: CanonicalUsage | null): string =>
    choice({}, finish) + (usage ? chunk([], { usage: wireUsage(usage) }) : '');

  return {
    contentType: 'text/event-stream',
    event(e) {
      switch (e.type) {
        case 'start':
          meta = { id: e.id, model: e.model, created: e.created };
          return choice({ role: 'assistant', content: '', refusal: null });
        case 'text':
          return e.text ? choice({ content: e.text }) : '';
        case 'tool_call_delta': {
          const call: Record<string, unknown> = { index: e.index };
          // SDKs that accumulate calls need an id and type on a call's first delta; a provider
          // that names no ids (Gemini) gets one made up.
          const first = !namedCalls.has(e.index);
          namedCalls.add(e.index);
          const id = e.id || (first ? `call_${meta.id}_${e.index}` : undefined);
          if (id) {
            call.id = id;
            call.type = 'function';
          }
          call.function = {
            ...(e.name !== undefined ? { name: e.name } : {}),
            arguments: e.arguments,
          };
          return choice({ tool_calls: [call] });
        }
        case 'finish':
          return ending(e.finish, e.usage);
      }
    },
    blocked(b: BlockedEnding) {
      return choice({ content: b.message, refusal: b.message }) + ending('content_filter', b.usage);
    },
    end() {
      return 'data: [DONE]\n\n';
    },
  };
}

export const openaiChat: WireFormat = {
  surface: 'chat',
  parseRequest,
  decodeResponse,
  decodeStream,
  encodeResponse,
  blockedResponse,
  streamEncoder,
  shownAnswer: (raw) => firstAnswerOnly(raw, 'choices'),
};
