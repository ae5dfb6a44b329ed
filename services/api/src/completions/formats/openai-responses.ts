import { z } from 'zod';
import { responsesReasoning } from './reasoning-text.js';
import { ContentPart } from '@guard/contracts';
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
  isFinishReason,
  isRecord,
  MalformedUpstreamError,
  readUsage,
  sseEvent,
  stringOr,
  unixNow,
  upstreamErrorText,
  withoutFields,
} from './openai-common.js';

/**
 * OpenAI's Responses API (`POST /v1/responses`), faithful enough that the official SDK's
 * `responses.create()` and `responses.stream()` read our answers unchanged. Our answers also
 * carry `choices` and chat-style usage names (spec/interface.md, "Responses-endpoint response").
 */

const WIRE = 'response';

const ItemContent = z.union([z.string(), z.array(ContentPart)]);

const MessageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: ItemContent,
});

const FunctionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
});

const FunctionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string(),
  output: ItemContent,
});

/** Items the guard does not read (reasoning, item references, built-in tool calls…) go as sent. */
const OtherItem = z.looseObject({ type: z.string() });

const ITEM_SCHEMAS = {
  message: MessageItem,
  function_call: FunctionCallItem,
  function_call_output: FunctionCallOutputItem,
};
type ItemKind = keyof typeof ITEM_SCHEMAS;

/** A message may leave out `type`; an item that is not an object is checked as a message. */
function itemKind(item: unknown): ItemKind | null {
  if (!isRecord(item) || item.type === undefined || item.type === 'message') return 'message';
  if (item.type === 'function_call' || item.type === 'function_call_output') return item.type;
  return null;
}

const ResponsesTool = z
  .looseObject({
    type: z.string(),
    name: z.string().optional(),
    description: z.string().nullish(),
    parameters: z.unknown().optional(),
  })
  .superRefine((tool, ctx) => {
    if ((tool.type === 'function' || tool.type === 'custom') && tool.name === undefined)
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'Field required' });
  });

export const ResponsesRequest = z
  .looseObject({
    model: z.string(),
    // Items are checked one by one below: a union would report a bad item as a bad `input`.
    input: z.union([z.string(), z.array(z.unknown())]).optional(),
    instructions: z.string().nullish(),
    stream: z.boolean().nullish(),
    tools: z.array(ResponsesTool).nullish(),
    ...GuardFields,
  })
  .superRefine((req, ctx) => {
    if (!Array.isArray(req.input)) return;
    req.input.forEach((item, i) => {
      const kind = itemKind(item);
      const result = (kind ? ITEM_SCHEMAS[kind] : OtherItem).safeParse(item, { reportInput: true });
      if (result.success) return;
      for (const issue of result.error.issues)
        ctx.addIssue({ ...issue, path: ['input', i, ...issue.path] });
    });
  });
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

function toRawMessages(req: ResponsesRequest): RawMessage[] {
  const out: RawMessage[] = [];
  if (req.instructions) out.push({ role: 'system', content: req.instructions });
  if (typeof req.input === 'string') out.push({ role: 'user', content: req.input });
  for (const item of Array.isArray(req.input) ? req.input : []) {
    const kind = itemKind(item);
    if (kind === 'message') {
      const m = MessageItem.parse(item);
      out.push({ role: m.role, content: m.content });
    } else if (kind === 'function_call') {
      const c = FunctionCallItem.parse(item);
      const call = {
        id: c.call_id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      };
      // Parallel calls arrive as one item each; in chat terms they are one assistant turn.
      const last = out.at(-1);
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (kind === 'function_call_output') {
      const o = FunctionCallOutputItem.parse(item);
      out.push({ role: 'tool', tool_call_id: o.call_id, content: o.output });
    }
  }
  return out;
}

function toToolDefs(req: ResponsesRequest): ScoreToolDef[] | undefined {
  const defs: ScoreToolDef[] = [];
  for (const t of req.tools ?? []) {
    if (t.name === undefined || (t.type !== 'function' && t.type !== 'custom')) continue;
    defs.push({
      name: t.name,
      ...(typeof t.description === 'string' ? { description: t.description } : {}),
      ...(t.parameters !== undefined ? { parameters: t.parameters } : {}),
    });
  }
  return defs.length ? defs : undefined;
}

function parseRequest(body: unknown): ParsedCall {
  const req = parseOrThrow(ResponsesRequest, body, ['body']);
  const sent = isRecord(body) ? body : {};
  return {
    model: req.model,
    stream: req.stream ?? false,
    messages: toRawMessages(req),
    tools: toToolDefs(req),
    guard: guardOptions(req),
    // `metadata` is the Responses API's own field: the guard reads it and the provider stores it.
    upstreamBody: withoutFields(sent, GUARD_ONLY_FIELDS),
  };
}

/**
 * Why a response ended. The Responses API has no finish reason: it says `incomplete` (with a
 * reason) or lists function calls. Our own answers name it in `choices`, which wins.
 */
function finishOf(response: Record<string, unknown>, hasCalls: boolean): FinishReason {
  const choice: unknown = Array.isArray(response.choices) ? response.choices[0] : undefined;
  if (isRecord(choice) && isFinishReason(choice.finish_reason)) return choice.finish_reason;
  if (response.status === 'incomplete') {
    const details = response.incomplete_details;
    return isRecord(details) && details.reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return hasCalls ? 'tool_calls' : 'stop';
}

function functionCall(item: Record<string, unknown>, where: string): CanonicalToolCall {
  if (typeof item.name !== 'string')
    throw new MalformedUpstreamError(WIRE, `${where} is a function call without a name`);
  return {
    id: stringOr(item.call_id, ''),
    name: item.name,
    arguments: stringOr(item.arguments, ''),
  };
}

/** Text of a message item: its output text, and a refusal's text (the model's answer all the same). */
function itemText(item: Record<string, unknown>): string {
  if (!Array.isArray(item.content)) return '';
  let text = '';
  for (const part of item.content as unknown[]) {
    if (!isRecord(part)) continue;
    if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    else if (part.type === 'refusal' && typeof part.refusal === 'string') text += part.refusal;
  }
  return text;
}

function decodeResponse(body: unknown): CanonicalResponse {
  if (!isRecord(body)) throw new MalformedUpstreamError(WIRE, 'the body is not a JSON object');
  if (body.status === 'failed' || (body.error !== undefined && body.error !== null))
    throw new MalformedUpstreamError(WIRE, `it failed: ${upstreamErrorText(body.error)}`);
  if (typeof body.id !== 'string') throw new MalformedUpstreamError(WIRE, 'it has no id');
  if (!Array.isArray(body.output)) throw new MalformedUpstreamError(WIRE, 'it has no output');
  let text = '';
  const calls: CanonicalToolCall[] = [];
  (body.output as unknown[]).forEach((item, i) => {
    if (!isRecord(item)) throw new MalformedUpstreamError(WIRE, `output[${i}] is not an object`);
    if (item.type === 'message') text += itemText(item);
    else if (item.type === 'function_call') calls.push(functionCall(item, `output[${i}]`));
  });
  return {
    id: body.id,
    model: stringOr(body.model, ''),
    created: typeof body.created_at === 'number' ? body.created_at : unixNow(),
    text,
    tool_calls: calls,
    finish: finishOf(body, calls.length > 0),
    usage: readUsage(body.usage, 'input_tokens', 'output_tokens'),
    reasoning: responsesReasoning(body),
  };
}

function parseEvent(message: SseMessage): Record<string, unknown> {
  let event: unknown;
  try {
    event = JSON.parse(message.data);
  } catch {
    throw new MalformedUpstreamError(`${WIRE} stream`, 'an event is not JSON');
  }
  if (!isRecord(event))
    throw new MalformedUpstreamError(`${WIRE} stream`, 'an event is not an object');
  if (event.type === undefined && message.event) event.type = message.event;
  return event;
}

/** What the rest of a text or arguments is, when a `.done` event brings more than the deltas did. */
function remainder(sofar: string, whole: unknown): string {
  return typeof whole === 'string' && whole.startsWith(sofar) ? whole.slice(sofar.length) : '';
}

async function* decodeStream(events: AsyncIterable<SseMessage>): AsyncGenerator<StreamEvent> {
  let started = false;
  /** Function calls by output index: their position among calls and the arguments so far. */
  const calls = new Map<number, { index: number; arguments: string }>();
  const texts = new Map<string, string>();

  const call = (e: Record<string, unknown>, item: unknown): StreamEvent[] => {
    const at = typeof e.output_index === 'number' ? e.output_index : -1;
    const known = calls.get(at);
    if (known) return [];
    const fc = isRecord(item) ? item : {};
    const state = { index: calls.size, arguments: stringOr(fc.arguments, '') };
    calls.set(at, state);
    return [
      {
        type: 'tool_call_delta',
        index: state.index,
        id: stringOr(fc.call_id, undefined),
        name: stringOr(fc.name, undefined),
        arguments: state.arguments,
      },
    ];
  };
  const moreArguments = (e: Record<string, unknown>, piece: string): StreamEvent[] => {
    const state = calls.get(typeof e.output_index === 'number' ? e.output_index : -1);
    if (!state || !piece) return [];
    state.arguments += piece;
    return [{ type: 'tool_call_delta', index: state.index, arguments: piece }];
  };
  const moreText = (e: Record<string, unknown>, piece: string): StreamEvent[] => {
    const key = `${String(e.output_index)}:${String(e.content_index)}`;
    texts.set(key, (texts.get(key) ?? '') + piece);
    return piece ? [{ type: 'text', text: piece }] : [];
  };
  const textSoFar = (e: Record<string, unknown>): string =>
    texts.get(`${String(e.output_index)}:${String(e.content_index)}`) ?? '';

  for await (const message of events) {
    const data = message.data.trim();
    if (!data || data === '[DONE]') continue;
    const e = parseEvent(message);
    if (e.type === 'error' || e.type === 'response.failed') {
      const response = isRecord(e.response) ? e.response : {};
      const err = e.error ?? response.error ?? e.message;
      throw new MalformedUpstreamError(`${WIRE} stream`, `it failed: ${upstreamErrorText(err)}`);
    }
    if (!started) {
      if (!isRecord(e.response))
        throw new MalformedUpstreamError(`${WIRE} stream`, `it opened with ${String(e.type)}`);
      started = true;
      yield {
        type: 'start',
        id: stringOr(e.response.id, ''),
        model: stringOr(e.response.model, ''),
        created: typeof e.response.created_at === 'number' ? e.response.created_at : unixNow(),
      };
    }
    const item = isRecord(e.item) ? e.item : null;
    switch (e.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        yield* moreText(e, stringOr(e.delta, ''));
        break;
      case 'response.output_text.done':
        yield* moreText(e, remainder(textSoFar(e), e.text));
        break;
      case 'response.refusal.done':
        yield* moreText(e, remainder(textSoFar(e), e.refusal));
        break;
      case 'response.output_item.added':
        if (item?.type === 'function_call') yield* call(e, item);
        break;
      case 'response.function_call_arguments.delta':
        yield* moreArguments(e, stringOr(e.delta, ''));
        break;
      case 'response.function_call_arguments.done':
      case 'response.output_item.done': {
        if (e.type === 'response.output_item.done' && item?.type !== 'function_call') break;
        // A provider may send a call whole, in its `.done` events only.
        yield* call(e, item);
        const state = calls.get(typeof e.output_index === 'number' ? e.output_index : -1);
        const whole = e.type === 'response.output_item.done' ? item?.arguments : e.arguments;
        if (state) yield* moreArguments(e, remainder(state.arguments, whole));
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = isRecord(e.response) ? e.response : {};
        yield {
          type: 'finish',
          finish: finishOf(response, calls.size > 0),
          usage: readUsage(response.usage, 'input_tokens', 'output_tokens'),
        };
        return;
      }
    }
  }
  if (!started) throw new MalformedUpstreamError(`${WIRE} stream`, 'it ended before any event');
  yield { type: 'finish', finish: calls.size ? 'tool_calls' : 'stop', usage: null };
}

// ---- encoding ---------------------------------------------------------------------------------

function wireUsage(usage: CanonicalUsage | null): Record<string, unknown> | null {
  if (!usage) return null;
  const total = usage.input_tokens + usage.output_tokens;
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: total,
    // Chat names too, as spec/interface.md lists them for this endpoint.
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
  };
}

/** Item ids follow the response id, so that the same answer always gets the same ids. */
function idBase(meta: AnswerMeta): string {
  return meta.id.replace(/^resp_/, '');
}

type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

function outputText(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function messageItem(id: string, text: string | null, status: ItemStatus): Record<string, unknown> {
  return {
    type: 'message',
    id,
    status,
    role: 'assistant',
    content: text === null ? [] : [outputText(text)],
  };
}

interface FunctionCallState {
  id: string;
  call_id: string;
  name: string;
  arguments: string;
}

function functionCallItem(c: FunctionCallState, status: ItemStatus): Record<string, unknown> {
  return {
    type: 'function_call',
    id: c.id,
    call_id: c.call_id,
    name: c.name,
    arguments: c.arguments,
    status,
  };
}

/** The response object's fields that do not depend on the answer; the SDK's types expect them. */
function responseObject(
  meta: AnswerMeta,
  status: 'in_progress' | 'completed' | 'incomplete',
  output: Record<string, unknown>[],
  usage: CanonicalUsage | null,
): Record<string, unknown> {
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.created,
    status,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: null,
    max_output_tokens: null,
    model: meta.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    truncation: 'disabled',
    metadata: {},
    usage: wireUsage(usage),
  };
}

/**
 * A finished response. A blocked one says `status: 'completed'` with `finish_reason:
 * 'content_filter'` in `choices`: the refusal is the whole answer, and SDK users who treat
 * `incomplete` as a truncation to retry or continue would loop on it.
 */
function finalResponse(
  meta: AnswerMeta,
  output: Record<string, unknown>[],
  finish: FinishReason,
  usage: CanonicalUsage | null,
  text: string,
): Record<string, unknown> {
  return {
    ...responseObject(meta, finish === 'length' ? 'incomplete' : 'completed', output, usage),
    choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: text } }],
  };
}

function itemStatus(finish: FinishReason): ItemStatus {
  return finish === 'length' ? 'incomplete' : 'completed';
}

function encodeResponse(r: CanonicalResponse): Record<string, unknown> {
  const base = idBase(r);
  const status = itemStatus(r.finish);
  const output: Record<string, unknown>[] = [];
  if (r.text || !r.tool_calls.length) output.push(messageItem(`msg_${base}`, r.text, status));
  r.tool_calls.forEach((c, i) =>
    output.push(functionCallItem({ ...c, id: `fc_${base}_${i}`, call_id: c.id }, status)),
  );
  return finalResponse(r, output, r.finish, r.usage, r.text);
}

function blockedResponse(
  meta: AnswerMeta,
  message: string,
  usage: CanonicalUsage | null,
): Record<string, unknown> {
  const output = [messageItem(`msg_${idBase(meta)}`, message, 'completed')];
  return finalResponse(meta, output, 'content_filter', usage, message);
}

type StreamItem =
  | { type: 'message'; id: string; output_index: number; text: string }
  | ({ type: 'function_call'; output_index: number } & FunctionCallState);

/**
 * Output items open in the order the answer brings them and each closes when the next one
 * opens, as OpenAI streams them. A delta for a call already closed (providers do not send
 * them, but canonical order allows it) cannot be streamed any more: it is kept for the final
 * `response.completed`, whose object is what SDKs hand to their users.
 */
function streamEncoder(): StreamEncoder {
  let meta: AnswerMeta = { id: '', model: '', created: 0 };
  let sequence = 0;
  let over = false;
  const items: StreamItem[] = [];
  const calls = new Map<number, Extract<StreamItem, { type: 'function_call' }>>();
  let open: StreamItem | null = null;

  const emit = (type: string, fields: Record<string, unknown>): string =>
    sseEvent(type, { type, sequence_number: sequence++, ...fields });
  const where = (item: StreamItem) => ({ item_id: item.id, output_index: item.output_index });
  const render = (item: StreamItem, status: ItemStatus): Record<string, unknown> =>
    item.type === 'message'
      ? messageItem(item.id, item.text, status)
      : functionCallItem(item, status);

  const close = (status: ItemStatus = 'completed'): string => {
    const item = open;
    if (!item) return '';
    open = null;
    let out = '';
    if (item.type === 'message') {
      const part = { ...where(item), content_index: 0 };
      out += emit('response.output_text.done', { ...part, text: item.text, logprobs: [] });
      out += emit('response.content_part.done', { ...part, part: outputText(item.text) });
    } else {
      out += emit('response.function_call_arguments.done', {
        ...where(item),
        name: item.name,
        arguments: item.arguments,
      });
    }
    return (
      out +
      emit('response.output_item.done', {
        output_index: item.output_index,
        item: render(item, status),
      })
    );
  };

  const openMessage = (): string => {
    let out = close();
    const count = items.filter((i) => i.type === 'message').length;
    const id = `msg_${idBase(meta)}${count ? `_${count}` : ''}`;
    const item: StreamItem = { type: 'message', id, output_index: items.length, text: '' };
    items.push(item);
    open = item;
    out += emit('response.output_item.added', {
      output_index: item.output_index,
      item: messageItem(id, null, 'in_progress'),
    });
    out += emit('response.content_part.added', {
      ...where(item),
      content_index: 0,
      part: outputText(''),
    });
    return out;
  };

  const text = (piece: string): string => {
    let out = open?.type === 'message' ? '' : openMessage();
    const item = open;
    if (item?.type !== 'message') return out;
    item.text += piece;
    out += emit('response.output_text.delta', {
      ...where(item),
      content_index: 0,
      delta: piece,
      logprobs: [],
    });
    return out;
  };

  const toolCall = (e: Extract<StreamEvent, { type: 'tool_call_delta' }>): string => {
    let out = '';
    let item = calls.get(e.index);
    if (!item) {
      out += close();
      const base = idBase(meta);
      item = {
        type: 'function_call',
        id: `fc_${base}_${items.length}`,
        output_index: items.length,
        call_id: e.id || `call_${base}_${e.index}`,
        name: e.name ?? '',
        arguments: '',
      };
      items.push(item);
      calls.set(e.index, item);
      open = item;
      out += emit('response.output_item.added', {
        output_index: item.output_index,
        item: functionCallItem(item, 'in_progress'),
      });
    } else if (e.name && !item.name) {
      item.name = e.name;
    }
    if (!e.arguments) return out;
    item.arguments += e.arguments;
    if (open === item)
      out += emit('response.function_call_arguments.delta', { ...where(item), delta: e.arguments });
    return out;
  };

  const finish = (finishReason: FinishReason, usage: CanonicalUsage | null): string => {
    const status = itemStatus(finishReason);
    const out = close(status);
    const joined = items.map((i) => (i.type === 'message' ? i.text : '')).join('');
    // Only the item the answer stopped in is cut short; those before it were done.
    const last = items.at(-1);
    const response = finalResponse(
      meta,
      items.map((i) => render(i, i === last ? status : 'completed')),
      finishReason,
      usage,
      joined,
    );
    over = true;
    const type = finishReason === 'length' ? 'response.incomplete' : 'response.completed';
    return out + emit(type, { response });
  };

  return {
    contentType: 'text/event-stream',
    event(e) {
      if (over) return '';
      switch (e.type) {
        case 'start': {
          meta = { id: e.id, model: e.model, created: e.created };
          const response = responseObject(meta, 'in_progress', [], null);
          return (
            emit('response.created', { response }) + emit('response.in_progress', { response })
          );
        }
        case 'text':
          return e.text ? text(e.text) : '';
        case 'tool_call_delta':
          return toolCall(e);
        case 'finish':
          return finish(e.finish, e.usage);
      }
    },
    blocked(b: BlockedEnding) {
      if (over) return '';
      // The refusal ends the text the client has been shown, in a message item of its own when
      // the answer was in a function call.
      return text(b.message) + finish('content_filter', b.usage);
    },
    end() {
      return '';
    },
  };
}

/** The provider's response, with the interface's `choices` and chat-style `usage` fields added. */
function shownAnswer(
  raw: Record<string, unknown>,
  checked: CanonicalResponse,
): Record<string, unknown> {
  const encoded = encodeResponse(checked);
  const usage = {
    ...((raw.usage as Record<string, unknown> | undefined) ?? {}),
    ...((encoded.usage as Record<string, unknown> | undefined) ?? {}),
  };
  return { ...raw, choices: encoded.choices, usage };
}

export const openaiResponses: WireFormat = {
  surface: 'responses',
  parseRequest,
  decodeResponse,
  decodeStream,
  encodeResponse,
  blockedResponse,
  streamEncoder,
  shownAnswer,
};
