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
import { firstAnswerOnly } from './first-answer.js';
import { geminiReasoning } from './reasoning-text.js';
import { newId, parseOrThrow, ValidationError } from '@guard/platform';
import { z } from 'zod';
import { GUARD_ONLY_FIELDS, GuardRequestFields } from '@guard/contracts';
import type { CallContext, ParsedCall, StreamEncoder, WireFormat } from '../wire-format.js';
import { checkWith } from './check-with.js';

/**
 * Google's Gemini API (`models/{model}:generateContent` and `:streamGenerateContent`), as the
 * official `@google/genai` client sends and reads it.
 *
 * Field names are the JSON (camelCase) ones: the API answers in camelCase and the SDK reads only
 * those. interface.md writes the proto names (`finish_reason`, `usage_metadata`…); the API accepts
 * both in requests, so requests are read in either spelling, but answers are camelCase.
 */

// ---- requests ---------------------------------------------------------------------------------

const Args = z.record(z.string(), z.unknown());
const FunctionCall = z.looseObject({ name: z.string(), args: Args.optional() });
const FunctionResponse = z.looseObject({ name: z.string(), response: Args.optional() });
const Blob = z.looseObject({ mimeType: z.string().optional(), mime_type: z.string().optional() });

const Part = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  inlineData: Blob.optional(),
  inline_data: Blob.optional(),
  fileData: Blob.optional(),
  file_data: Blob.optional(),
  functionCall: FunctionCall.optional(),
  function_call: FunctionCall.optional(),
  functionResponse: FunctionResponse.optional(),
  function_response: FunctionResponse.optional(),
});
type Part = z.output<typeof Part>;

/** The API takes a lone part where it expects a list (its REST samples send `parts: {text}`). */
const Parts = z
  .unknown()
  .transform((v, ctx): Part[] =>
    Array.isArray(v) ? checkWith(z.array(Part), v, ctx) : [checkWith(Part, v, ctx)],
  );

const Content = z.looseObject({
  // Absent on a single-turn request: the API reads it as the user's.
  role: z.enum(['user', 'model']).optional(),
  parts: Parts,
});

const SystemInstruction = z.looseObject({ parts: Parts });

const FunctionDeclaration = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  parameters: z.unknown().optional(),
  parametersJsonSchema: z.unknown().optional(),
});
const Tool = z.looseObject({
  functionDeclarations: z.array(FunctionDeclaration).optional(),
  function_declarations: z.array(FunctionDeclaration).optional(),
});

export const GeminiGenerateRequest = z.looseObject({
  contents: z.array(Content).min(1),
  systemInstruction: SystemInstruction.optional(),
  system_instruction: SystemInstruction.optional(),
  tools: z.array(Tool).optional(),
  generationConfig: z.looseObject({}).optional(),
  generation_config: z.looseObject({}).optional(),
  safetySettings: z.array(z.looseObject({})).optional(),
  safety_settings: z.array(z.looseObject({})).optional(),
  // The guard's: read here, never forwarded (Gemini has no `metadata` of its own).
  ...GuardRequestFields,
});
export type GeminiGenerateRequest = z.infer<typeof GeminiGenerateRequest>;

const GUARD_FIELDS = [...GUARD_ONLY_FIELDS, 'metadata'] as const;

/** What the scorer is told a non-text part was ("image part in message 2 was not scored"). */
function mediaType(blob: z.output<typeof Blob>): string {
  const top = (blob.mimeType ?? blob.mime_type ?? '').split('/')[0];
  return top === 'image' || top === 'audio' || top === 'video' ? top : 'file';
}

function opaquePart(part: Part): ContentPart {
  const blob = part.inlineData ?? part.inline_data ?? part.fileData ?? part.file_data;
  if (blob) return { type: mediaType(blob) };
  // executableCode, codeExecutionResult, and whatever the API adds next.
  const key = Object.keys(part).find((k) => k !== 'thought' && k !== 'thoughtSignature');
  return { type: key ?? 'unknown' };
}

/**
 * Contents as chat messages: `model` turns are the assistant's, functionCall parts its tool_calls,
 * each functionResponse a `tool` message in place. Gemini pairs a response with its call by name;
 * the scorer gets the id of the latest unanswered call of that name.
 */
function toRawMessages(req: GeminiGenerateRequest): RawMessage[] {
  const out: RawMessage[] = [];
  const system = req.systemInstruction ?? req.system_instruction;
  const systemText = system?.parts
    .flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))
    .join('\n');
  if (systemText) out.push({ role: 'system', content: systemText });

  const unanswered = new Map<string, string[]>();
  let callCount = 0;
  for (const content of req.contents) {
    const role = content.role === 'model' ? 'assistant' : 'user';
    let parts: ContentPart[] = [];
    const toolCalls: NonNullable<RawMessage['tool_calls']> = [];
    const flush = () => {
      if (parts.length) out.push({ role, content: parts });
      parts = [];
    };
    for (const part of content.parts) {
      const call = part.functionCall ?? part.function_call;
      const response = part.functionResponse ?? part.function_response;
      if (call) {
        const id = `call_${callCount++}`;
        unanswered.set(call.name, [...(unanswered.get(call.name) ?? []), id]);
        toolCalls.push({
          id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
        });
      } else if (response) {
        flush();
        const id = unanswered.get(response.name)?.shift();
        out.push({
          role: 'tool',
          name: response.name,
          ...(id !== undefined ? { tool_call_id: id } : {}),
          content: JSON.stringify(response.response ?? {}),
        });
      } else if (typeof part.text === 'string') {
        parts.push({ type: 'text', text: part.text });
      } else {
        parts.push(opaquePart(part));
      }
    }
    if (toolCalls.length) {
      out.push({ role, content: parts.length ? parts : null, tool_calls: toolCalls });
      parts = [];
    }
    flush();
  }
  return out;
}

function parseRequest(body: unknown, ctx: CallContext): ParsedCall {
  const req = parseOrThrow(GeminiGenerateRequest, body, ['body']);
  if (!ctx.model) throw ValidationError.single(['path', 'model'], 'Field required', 'missing');
  // One candidate per call: an unchecked second candidate would be a way around the guard.
  for (const [field, config] of [
    ['generationConfig', req.generationConfig],
    ['generation_config', req.generation_config],
  ] as const) {
    // Only text can be checked: images or audio would reach the caller unchecked.
    for (const key of ['responseModalities', 'response_modalities']) {
      const modalities = (config as Record<string, unknown> | undefined)?.[key];
      if (Array.isArray(modalities) && modalities.some((m) => String(m).toUpperCase() !== 'TEXT'))
        throw ValidationError.single(
          ['body', field, key],
          'the guard checks text answers only: ask for TEXT alone',
          'value_error',
        );
    }
    for (const key of ['candidateCount', 'candidate_count']) {
      const n = (config as Record<string, unknown> | undefined)?.[key];
      if (n !== undefined && n !== null && n !== 1)
        throw ValidationError.single(
          ['body', field, key],
          'the guard checks one candidate per call: send 1 (or leave it out)',
          'value_error',
        );
    }
  }

  const upstreamBody: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of GUARD_FIELDS) delete upstreamBody[field];

  const declarations = (req.tools ?? []).flatMap(
    (t) => t.functionDeclarations ?? t.function_declarations ?? [],
  );
  return {
    model: ctx.model,
    stream: ctx.stream ?? false,
    messages: toRawMessages(req),
    tools: declarations.length
      ? declarations.map((d) => {
          const parameters = d.parameters ?? d.parametersJsonSchema;
          return {
            name: d.name,
            ...(d.description !== undefined ? { description: d.description } : {}),
            ...(parameters !== undefined ? { parameters } : {}),
          };
        })
      : undefined,
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

const AnswerPart = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  functionCall: z
    .looseObject({ id: z.string().optional(), name: z.string(), args: Args.nullable().optional() })
    .optional(),
});

const GenerateContentResponse = z.looseObject({
  candidates: z
    .array(
      z.looseObject({
        content: z.looseObject({ parts: z.array(AnswerPart).optional() }).optional(),
        finishReason: z.string().optional(),
      }),
    )
    .optional(),
  promptFeedback: z.looseObject({ blockReason: z.string().optional() }).optional(),
  usageMetadata: z
    .looseObject({
      promptTokenCount: z.number().optional(),
      candidatesTokenCount: z.number().optional(),
      thoughtsTokenCount: z.number().optional(),
    })
    .optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
  error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }).optional(),
});
type GenerateContentResponse = z.output<typeof GenerateContentResponse>;

function readAnswer(body: unknown, what: string): GenerateContentResponse {
  const result = GenerateContentResponse.safeParse(body);
  if (!result.success) {
    const where = result.error.issues[0]?.path.join('.') ?? '';
    throw new UpstreamFailure(
      'gemini',
      null,
      `gemini upstream sent an unexpected ${what} (at "${where}")`,
      body,
    );
  }
  if (result.data.error) {
    const message = result.data.error.message ?? 'unknown error';
    throw new UpstreamFailure(
      'gemini',
      result.data.error.code ?? null,
      `gemini upstream failed: ${message}`,
      body,
    );
  }
  return result.data;
}

const CONTENT_FILTER_REASONS = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
]);

function finishOf(
  reason: string | undefined,
  promptBlocked: boolean,
  calledTools: boolean,
): FinishReason {
  if (promptBlocked || (reason !== undefined && CONTENT_FILTER_REASONS.has(reason)))
    return 'content_filter';
  if (reason === 'MAX_TOKENS') return 'length';
  // Gemini ends a turn that calls functions with STOP.
  return calledTools ? 'tool_calls' : 'stop';
}

function usageOf(u: GenerateContentResponse['usageMetadata']): CanonicalUsage | null {
  if (!u) return null;
  // Thinking tokens are billed as output but counted apart from the candidates'.
  return {
    input_tokens: u.promptTokenCount ?? 0,
    output_tokens: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
  };
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Text (thoughts left out, as the SDK's `.text` does) and function calls of the first candidate. */
function partsOf(
  answer: GenerateContentResponse,
  firstCall: number,
): { text: string; calls: CanonicalToolCall[] } {
  let text = '';
  const calls: CanonicalToolCall[] = [];
  for (const part of answer.candidates?.[0]?.content?.parts ?? []) {
    if (part.functionCall) {
      calls.push({
        id: part.functionCall.id ?? `call_${firstCall + calls.length}`,
        name: part.functionCall.name,
        arguments: JSON.stringify(part.functionCall.args ?? {}),
      });
    } else if (typeof part.text === 'string' && !part.thought) text += part.text;
  }
  return { text, calls };
}

function decodeResponse(body: unknown): CanonicalResponse {
  const answer = readAnswer(body, 'answer');
  const { text, calls } = partsOf(answer, 0);
  return {
    id: answer.responseId ?? newId(),
    model: answer.modelVersion ?? '',
    created: nowSeconds(),
    text,
    tool_calls: calls,
    finish: finishOf(
      answer.candidates?.[0]?.finishReason,
      answer.promptFeedback?.blockReason !== undefined,
      calls.length > 0,
    ),
    usage: usageOf(answer.usageMetadata),
    reasoning: geminiReasoning(body),
  };
}

async function* decodeStream(events: AsyncIterable<SseMessage>): AsyncIterable<StreamEvent> {
  let started = false;
  let calls = 0;
  let reason: string | undefined;
  let promptBlocked = false;
  let usage: CanonicalUsage | null = null;
  for await (const sse of events) {
    if (sse.data.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(sse.data);
    } catch {
      throw new UpstreamFailure(
        'gemini',
        null,
        'gemini upstream sent a stream chunk that is not JSON',
        sse.data,
      );
    }
    const chunk = readAnswer(json, 'stream chunk');
    if (!started) {
      started = true;
      yield {
        type: 'start',
        id: chunk.responseId ?? newId(),
        model: chunk.modelVersion ?? '',
        created: nowSeconds(),
      };
    }
    const { text, calls: found } = partsOf(chunk, calls);
    if (text) yield { type: 'text', text };
    for (const c of found)
      yield {
        type: 'tool_call_delta',
        index: calls++,
        id: c.id,
        name: c.name,
        arguments: c.arguments,
      };
    reason = chunk.candidates?.[0]?.finishReason ?? reason;
    if (chunk.promptFeedback?.blockReason !== undefined) promptBlocked = true;
    usage = usageOf(chunk.usageMetadata) ?? usage;
  }
  if (!started)
    throw new UpstreamFailure('gemini', null, 'gemini upstream stream ended without a chunk');
  if (reason === undefined && !promptBlocked)
    throw new UpstreamFailure(
      'gemini',
      null,
      'gemini upstream stream ended without a finishReason',
    );
  yield { type: 'finish', finish: finishOf(reason, promptBlocked, calls > 0), usage };
}

const FINISH_REASONS: Record<FinishReason, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  content_filter: 'SAFETY',
};

/** The ratings a guard block reports: Gemini's own way of saying "blocked for safety". */
const BLOCKED_RATINGS = [
  { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
];

function functionCallPart(c: { name: string; arguments: string }): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(c.arguments || '{}');
  } catch {
    args = undefined;
  }
  // No `id`: the API refuses `functionCall.id` in requests, and clients send these parts back.
  return {
    functionCall: {
      name: c.name,
      args: typeof args === 'object' && args !== null && !Array.isArray(args) ? args : {},
    },
  };
}

function usageMetadata(u: CanonicalUsage): Record<string, number> {
  return {
    promptTokenCount: u.input_tokens,
    candidatesTokenCount: u.output_tokens,
    totalTokenCount: u.input_tokens + u.output_tokens,
  };
}

/** One GenerateContentResponse (a whole answer, or one stream chunk). */
function answer(
  meta: { id: string; model: string },
  parts: Record<string, unknown>[],
  finish: FinishReason | null,
  usage: CanonicalUsage | null,
): Record<string, unknown> {
  const blocked = finish === 'content_filter';
  const candidate: Record<string, unknown> = { content: { parts, role: 'model' } };
  if (finish) candidate.finishReason = FINISH_REASONS[finish];
  candidate.index = 0;
  if (finish) candidate.safetyRatings = blocked ? BLOCKED_RATINGS : [];
  return {
    candidates: [candidate],
    ...(blocked ? { promptFeedback: { safetyRatings: BLOCKED_RATINGS } } : {}),
    ...(usage ? { usageMetadata: usageMetadata(usage) } : {}),
    modelVersion: meta.model,
    responseId: meta.id,
  };
}

function encodeResponse(r: CanonicalResponse): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  if (r.text || r.tool_calls.length === 0) parts.push({ text: r.text });
  for (const c of r.tool_calls) parts.push(functionCallPart(c));
  return answer(r, parts, r.finish, r.usage);
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

/**
 * Gemini streams function calls whole, one part each: the deltas of a call are kept until the
 * next call starts or the answer ends. With `alt=sse` each chunk is a `data:` event; without it
 * the chunks are the items of one JSON array, written as they come.
 */
function streamEncoder(opts: { sse: boolean }): StreamEncoder {
  let meta = { id: '', model: '' };
  let written = 0;
  let pending: { index: number; name: string; arguments: string } | null = null;

  const emit = (chunk: Record<string, unknown>): string => {
    const json = JSON.stringify(chunk);
    if (opts.sse) return `data: ${json}\r\n\r\n`;
    return (written++ === 0 ? '[' : ',\r\n') + json;
  };
  const takePending = (): Record<string, unknown>[] => {
    if (!pending) return [];
    const part = functionCallPart(pending);
    pending = null;
    return [part];
  };

  return {
    contentType: opts.sse ? 'text/event-stream' : 'application/json',
    event(e: StreamEvent): string {
      switch (e.type) {
        case 'start':
          meta = { id: e.id, model: e.model };
          return '';
        case 'text':
          // A call being written stays pending: its remaining deltas may still follow.
          return e.text ? emit(answer(meta, [{ text: e.text }], null, null)) : '';
        case 'tool_call_delta': {
          if (pending?.index === e.index) {
            pending.arguments += e.arguments;
            return '';
          }
          const done = takePending();
          pending = { index: e.index, name: e.name ?? '', arguments: e.arguments };
          return done.length ? emit(answer(meta, done, null, null)) : '';
        }
        case 'finish': {
          const calls = takePending();
          return emit(answer(meta, calls.length ? calls : [{ text: '' }], e.finish, e.usage));
        }
      }
    },
    blocked(b: BlockedEnding): string {
      // A call still being written is part of what was blocked: it is never sent.
      pending = null;
      return emit(answer(meta, [{ text: b.message }], 'content_filter', b.usage));
    },
    end(): string {
      if (opts.sse) return '';
      return written === 0 ? '[]' : ']';
    },
  };
}

export const gemini: WireFormat = {
  surface: 'gemini',
  parseRequest,
  decodeResponse,
  decodeStream,
  encodeResponse,
  blockedResponse,
  streamEncoder,
  shownAnswer: (raw) => firstAnswerOnly(raw, 'candidates'),
};
