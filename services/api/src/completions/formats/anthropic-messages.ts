import {
  UpstreamFailure,
  type AnswerMeta,
  type BlockedEnding,
  type CanonicalResponse,
  type CanonicalToolCall,
  type CanonicalUsage,
  type ContentPart,
  type FinishReason,
  type RawMessage,
  type SseMessage,
  type StreamEvent,
} from '@guard/domain';
import { anthropicReasoning } from './reasoning-text.js';
import { newId, parseOrThrow } from '@guard/platform';
import { z } from 'zod';
import { GUARD_ONLY_FIELDS, GuardRequestFields } from '@guard/contracts';
import type { ParsedCall, StreamEncoder, WireFormat } from '../wire-format.js';
import { stringOr, tagged } from './check-with.js';

/**
 * Anthropic's Messages API (`POST /v1/messages`), as the official `@anthropic-ai/sdk` sends and
 * reads it. Requests are checked only as far as Anthropic itself would refuse them; everything
 * else is forwarded untouched, so new Anthropic fields and block types keep working.
 */

// ---- requests ---------------------------------------------------------------------------------

const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageBlock = z.looseObject({ type: z.literal('image'), source: z.looseObject({}) });
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
const ToolResultContent = tagged({ text: TextBlock, image: ImageBlock });
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: stringOr(z.array(ToolResultContent)).optional(),
  is_error: z.boolean().optional(),
});
const RequestBlock = tagged({
  text: TextBlock,
  image: ImageBlock,
  tool_use: ToolUseBlock,
  tool_result: ToolResultBlock,
});
type RequestBlock = z.output<typeof RequestBlock>;

export const AnthropicMessagesRequest = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: stringOr(z.array(RequestBlock)),
      }),
    )
    .min(1),
  system: stringOr(z.array(TextBlock)).optional(),
  tools: z
    .array(
      z
        .looseObject({
          // Absent (or `custom`) for the caller's own tools; server tools name a versioned type.
          type: z.string().optional(),
          name: z.string(),
          description: z.string().optional(),
          input_schema: z.looseObject({}).optional(),
        })
        .superRefine((tool, ctx) => {
          const custom = tool.type === undefined || tool.type === 'custom';
          if (custom && tool.input_schema === undefined)
            ctx.addIssue({
              code: 'invalid_type',
              expected: 'object',
              path: ['input_schema'],
              input: undefined,
            });
        }),
    )
    .optional(),
  stream: z.boolean().optional(),
  // Anthropic's own: forwarded upstream and also stored with the activity.
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  // The guard's: read here, never forwarded.
  policy_id: GuardRequestFields.policy_id,
  moderate_before: GuardRequestFields.moderate_before,
  monitor_details: GuardRequestFields.monitor_details,
});
export type AnthropicMessagesRequest = z.infer<typeof AnthropicMessagesRequest>;

const GUARD_FIELDS = GUARD_ONLY_FIELDS;

/** A part the scorer lists as ignored; only its type travels (image data stays in the body). */
function opaquePart(type: string): ContentPart {
  return { type };
}

function toolResultContent(block: z.output<typeof ToolResultBlock>): string | ContentPart[] {
  if (block.content === undefined) return '';
  if (typeof block.content === 'string') return block.content;
  return block.content.map((b) =>
    b.type === 'text'
      ? { type: 'text', text: b.text }
      : opaquePart(b.type === 'other' ? b.kind : b.type),
  );
}

function partOf(block: RequestBlock): ContentPart {
  if (block.type === 'text') return { type: 'text', text: block.text };
  return opaquePart(block.type === 'other' ? block.kind : block.type);
}

/**
 * One Anthropic turn as chat messages: tool_use blocks become the assistant's tool_calls, each
 * tool_result its own `tool` message (in place, so the conversation order holds).
 */
function toRawMessages(role: 'user' | 'assistant', content: string | RequestBlock[]): RawMessage[] {
  if (typeof content === 'string') return [{ role, content }];
  const out: RawMessage[] = [];
  let parts: ContentPart[] = [];
  const toolCalls: NonNullable<RawMessage['tool_calls']> = [];
  const flush = () => {
    if (parts.length) out.push({ role, content: parts });
    parts = [];
  };
  for (const block of content) {
    if (block.type === 'tool_result') {
      flush();
      out.push({
        role: 'tool',
        tool_call_id: block.tool_use_id,
        content: toolResultContent(block),
      });
    } else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      });
    } else {
      parts.push(partOf(block));
    }
  }
  if (toolCalls.length) {
    out.push({ role, content: parts.length ? parts : null, tool_calls: toolCalls });
    parts = [];
  }
  flush();
  return out;
}

function parseRequest(body: unknown): ParsedCall {
  const req = parseOrThrow(AnthropicMessagesRequest, body, ['body']);
  const messages: RawMessage[] = [];
  if (typeof req.system === 'string') {
    if (req.system) messages.push({ role: 'system', content: req.system });
  } else if (req.system?.length) {
    messages.push({ role: 'system', content: req.system.map((b) => b.text).join('\n') });
  }
  for (const m of req.messages) messages.push(...toRawMessages(m.role, m.content));

  const upstreamBody: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of GUARD_FIELDS) delete upstreamBody[field];

  return {
    model: req.model,
    stream: req.stream ?? false,
    messages,
    tools: req.tools?.map((t) => ({
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      ...(t.input_schema !== undefined ? { parameters: t.input_schema } : {}),
    })),
    guard: {
      policy_id: req.policy_id,
      moderate_before: req.moderate_before,
      monitor_details: req.monitor_details,
      metadata: req.metadata,
    },
    upstreamBody,
  };
}

// ---- answers ----------------------------------------------------------------------------------

const Usage = z.looseObject({
  input_tokens: z.number().nullable().optional(),
  output_tokens: z.number().nullable().optional(),
  cache_creation_input_tokens: z.number().nullable().optional(),
  cache_read_input_tokens: z.number().nullable().optional(),
});
type Usage = z.output<typeof Usage>;

const ResponseBlock = tagged({
  text: TextBlock,
  tool_use: z.looseObject({
    type: z.literal('tool_use'),
    id: z.string(),
    name: z.string(),
    input: z.unknown(),
  }),
});

const AnthropicMessage = z.looseObject({
  id: z.string(),
  model: z.string(),
  content: z.array(ResponseBlock),
  stop_reason: z.string().nullable().optional(),
  usage: Usage.optional(),
});

/** Prompt tokens in all: Anthropic counts cached prompt tokens apart from `input_tokens`. */
function inputTokens(u: Usage): number {
  return (
    (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0)
  );
}

function finishOf(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
    case 'content_filter':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

/** Our refusal keeps the guard's `content_filter` (spec/decisions.md), not Anthropic's `refusal`. */
const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'content_filter',
};

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function upstreamShape<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const where = result.error.issues[0]?.path.join('.') ?? '';
    throw new UpstreamFailure(
      'anthropic',
      null,
      `anthropic upstream sent an unexpected ${what} (at "${where}")`,
      body,
    );
  }
  return result.data;
}

function decodeResponse(body: unknown): CanonicalResponse {
  const msg = upstreamShape(AnthropicMessage, body, 'message');
  const texts: string[] = [];
  const toolCalls: CanonicalToolCall[] = [];
  for (const block of msg.content) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use')
      toolCalls.push({
        id: block.id,
        name: block.name,
        arguments: JSON.stringify(block.input ?? {}),
      });
  }
  return {
    id: msg.id,
    model: msg.model,
    created: nowSeconds(),
    text: texts.join(''),
    tool_calls: toolCalls,
    finish: finishOf(msg.stop_reason),
    usage: msg.usage
      ? { input_tokens: inputTokens(msg.usage), output_tokens: msg.usage.output_tokens ?? 0 }
      : null,
    reasoning: anthropicReasoning(body),
  };
}

const StreamPayload = tagged({
  message_start: z.looseObject({
    type: z.literal('message_start'),
    message: z.looseObject({ id: z.string(), model: z.string(), usage: Usage.optional() }),
  }),
  content_block_start: z.looseObject({
    type: z.literal('content_block_start'),
    index: z.number().int(),
    content_block: z.looseObject({
      type: z.string(),
      text: z.string().optional(),
      id: z.string().optional(),
      name: z.string().optional(),
      input: z.unknown().optional(),
    }),
  }),
  content_block_delta: z.looseObject({
    type: z.literal('content_block_delta'),
    index: z.number().int(),
    delta: z.looseObject({
      type: z.string(),
      text: z.string().optional(),
      partial_json: z.string().optional(),
    }),
  }),
  message_delta: z.looseObject({
    type: z.literal('message_delta'),
    delta: z.looseObject({ stop_reason: z.string().nullable().optional() }),
    usage: Usage.optional(),
  }),
  message_stop: z.looseObject({ type: z.literal('message_stop') }),
  error: z.looseObject({
    type: z.literal('error'),
    error: z
      .looseObject({ type: z.string().optional(), message: z.string().optional() })
      .optional(),
  }),
});

async function* decodeStream(events: AsyncIterable<SseMessage>): AsyncIterable<StreamEvent> {
  let started = false;
  let stopReason: string | null | undefined;
  let usage: { input: number; output: number } | null = null;
  /** Anthropic block index -> position among the answer's tool_use blocks. */
  const toolIndex = new Map<number, number>();
  for await (const sse of events) {
    if (sse.event === 'ping' || sse.data === '' || sse.data === '[DONE]') continue;
    let json: unknown;
    try {
      json = JSON.parse(sse.data);
    } catch {
      throw new UpstreamFailure(
        'anthropic',
        null,
        'anthropic upstream sent a stream event that is not JSON',
        sse.data,
      );
    }
    const ev = upstreamShape(StreamPayload, json, 'stream event');
    if (ev.type === 'error') {
      const message = ev.error?.message ?? 'unknown error';
      throw new UpstreamFailure(
        'anthropic',
        null,
        `anthropic upstream stream failed: ${message}`,
        json,
      );
    }
    if (ev.type === 'message_start') {
      started = true;
      const u = ev.message.usage;
      usage = { input: u ? inputTokens(u) : 0, output: u?.output_tokens ?? 0 };
      yield { type: 'start', id: ev.message.id, model: ev.message.model, created: nowSeconds() };
      continue;
    }
    if (!started) {
      if (ev.type === 'other') continue;
      throw new UpstreamFailure(
        'anthropic',
        null,
        `anthropic upstream sent ${ev.type} before message_start`,
        json,
      );
    }
    switch (ev.type) {
      case 'content_block_start': {
        const block = ev.content_block;
        if (block.type === 'text' && block.text) yield { type: 'text', text: block.text };
        else if (block.type === 'tool_use') {
          const index = toolIndex.size;
          toolIndex.set(ev.index, index);
          // The input arrives in input_json_delta pieces; a start that already carries it is whole.
          const input = block.input;
          const whole =
            typeof input === 'object' && input !== null && Object.keys(input).length > 0
              ? JSON.stringify(input)
              : '';
          yield {
            type: 'tool_call_delta',
            index,
            id: block.id,
            name: block.name,
            arguments: whole,
          };
        }
        break;
      }
      case 'content_block_delta': {
        const d = ev.delta;
        if (d.type === 'text_delta' && d.text) yield { type: 'text', text: d.text };
        else if (d.type === 'input_json_delta' && d.partial_json) {
          const index = toolIndex.get(ev.index);
          if (index !== undefined)
            yield { type: 'tool_call_delta', index, arguments: d.partial_json };
        }
        break;
      }
      case 'message_delta':
        stopReason = ev.delta.stop_reason ?? stopReason;
        if (ev.usage && usage) {
          if (ev.usage.output_tokens != null) usage.output = ev.usage.output_tokens;
          // Newer API versions repeat the (final) prompt counts here.
          if (ev.usage.input_tokens != null) usage.input = inputTokens(ev.usage);
        }
        break;
      case 'message_stop':
        yield {
          type: 'finish',
          finish: finishOf(stopReason),
          usage: usage ? { input_tokens: usage.input, output_tokens: usage.output } : null,
        };
        return;
    }
  }
  throw new UpstreamFailure(
    'anthropic',
    null,
    'anthropic upstream stream ended before message_stop',
  );
}

function parseInput(args: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(args);
    if (typeof v === 'object' && v !== null && !Array.isArray(v))
      return v as Record<string, unknown>;
  } catch {
    // A model's malformed arguments: the block must still carry an object.
  }
  return {};
}

function usageOf(u: CanonicalUsage | null): { input_tokens: number; output_tokens: number } {
  return { input_tokens: u?.input_tokens ?? 0, output_tokens: u?.output_tokens ?? 0 };
}

function encodeResponse(r: CanonicalResponse): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (r.text) content.push({ type: 'text', text: r.text });
  for (const c of r.tool_calls)
    content.push({ type: 'tool_use', id: c.id, name: c.name, input: parseInput(c.arguments) });
  return {
    id: r.id,
    type: 'message',
    role: 'assistant',
    model: r.model,
    content,
    stop_reason: STOP_REASONS[r.finish],
    stop_sequence: null,
    usage: usageOf(r.usage),
  };
}

function blockedResponse(
  meta: AnswerMeta,
  message: string,
  usage: CanonicalUsage | null,
): Record<string, unknown> {
  return encodeResponse({
    ...meta,
    text: message,
    tool_calls: [],
    finish: 'content_filter',
    usage,
  });
}

function frame(name: string, data: Record<string, unknown>): string {
  return `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
}

/**
 * Anthropic's event order: message_start, then per content block content_block_start, its
 * deltas and content_block_stop (blocks numbered from 0 in order; the SDK appends on each start
 * and addresses deltas by that number), then message_delta (stop reason, usage) and message_stop.
 */
function streamEncoder(): StreamEncoder {
  let started = false;
  let blocks = 0;
  let open:
    { kind: 'text'; block: number } | { kind: 'tool'; block: number; index: number } | null = null;
  /** Tool call index -> its block, for a late delta of a call whose block was closed. */
  const toolBlocks = new Map<number, number>();

  const start = (meta: AnswerMeta): string => {
    started = true;
    return frame('message_start', {
      message: {
        id: meta.id,
        type: 'message',
        role: 'assistant',
        model: meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // The prompt count is not known yet: message_delta carries the final counts.
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
  };
  const close = (): string => {
    if (!open) return '';
    const out = frame('content_block_stop', { index: open.block });
    open = null;
    return out;
  };
  const text = (t: string): string => {
    let out = '';
    if (open?.kind !== 'text') {
      out += close();
      open = { kind: 'text', block: blocks++ };
      out += frame('content_block_start', {
        index: open.block,
        content_block: { type: 'text', text: '' },
      });
    }
    return (
      out +
      frame('content_block_delta', { index: open.block, delta: { type: 'text_delta', text: t } })
    );
  };
  const ending = (stopReason: string, usage: CanonicalUsage | null): string =>
    close() +
    frame('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: usage
        ? { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens }
        : { output_tokens: 0 },
    }) +
    frame('message_stop', {});

  return {
    contentType: 'text/event-stream',
    event(e: StreamEvent): string {
      switch (e.type) {
        case 'start':
          return start(e);
        case 'text':
          return e.text ? text(e.text) : '';
        case 'tool_call_delta': {
          let out = '';
          let block =
            open?.kind === 'tool' && open.index === e.index ? open.block : toolBlocks.get(e.index);
          if (block === undefined) {
            out += close();
            block = blocks++;
            open = { kind: 'tool', block, index: e.index };
            toolBlocks.set(e.index, block);
            out += frame('content_block_start', {
              index: block,
              content_block: {
                type: 'tool_use',
                id: e.id ?? `toolu_${newId()}`,
                name: e.name ?? '',
                input: {},
              },
            });
          }
          if (e.arguments)
            out += frame('content_block_delta', {
              index: block,
              delta: { type: 'input_json_delta', partial_json: e.arguments },
            });
          return out;
        }
        case 'finish':
          return ending(STOP_REASONS[e.finish], e.usage);
      }
    },
    blocked(b: BlockedEnding): string {
      // A stream blocked before its first event still needs the message it ends.
      const head = started ? '' : start({ id: `msg_${newId()}`, model: '', created: nowSeconds() });
      return head + text(b.message) + ending(STOP_REASONS.content_filter, b.usage);
    },
    end: () => '',
  };
}

export const anthropicMessages: WireFormat = {
  surface: 'messages',
  parseRequest,
  decodeResponse,
  decodeStream,
  encodeResponse,
  blockedResponse,
  streamEncoder,
  // One message, one content list: shown as the provider sent it.
  shownAnswer: (raw) => raw,
};
