import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

/**
 * A local stand-in for the LLM providers the guard sits in front of: OpenAI Chat Completions,
 * OpenAI Responses, Anthropic Messages and Gemini generateContent, each answering in the
 * provider's real wire format (JSON bodies, SSE event names and order, id shapes, error bodies),
 * so the official SDKs parse it unchanged. Tests script the answers; benchmarks run it as its own
 * process (see the bottom of this file) as the zero-cost upstream reference.
 */

/** How the next matching request is answered. */
export interface FakeScript {
  /** Assistant reply text (default "Hello from the fake provider.", or "" when only tools are called). */
  text?: string;
  /** When streaming: exact text pieces, in order (default: text split into ~8 pieces); joined they must equal text. */
  chunks?: string[];
  /** The model calls these tools (arguments = JSON text); streamed as argument pieces. */
  toolCalls?: { id?: string; name: string; arguments: string }[];
  finish?: 'stop' | 'length' | 'tool_calls';
  /** Answer with this HTTP error status in the provider's own error shape (e.g. 400, 429, 500). */
  status?: number;
  errorMessage?: string;
  /** Before headers. */
  delayMs?: number;
  /** Between streamed events. */
  chunkDelayMs?: number;
  usage?: { input: number; output: number };
}

export interface RecordedRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** The client closed before the answer ended. */
  aborted: boolean;
}

export interface FakeProvider {
  /** e.g. http://127.0.0.1:PORT (no trailing slash) */
  url: string;
  requests: RecordedRequest[];
  /**
   * Script for the next requests (it stays until replaced or reset): a function gets the parsed
   * body and path and returns the script (so tests can answer per request).
   */
  script(s: FakeScript | ((req: { path: string; body: any }) => FakeScript)): void;
  /** Forget the recorded requests and go back to the default script. */
  reset(): void;
  close(): Promise<void>;
}

type ScriptSource = FakeScript | ((req: { path: string; body: any }) => FakeScript);

const DEFAULT_TEXT = 'Hello from the fake provider.';
const DEFAULT_PIECES = 8;
const ARGUMENT_PIECES = 4;

export async function startFakeProvider(opts?: {
  port?: number;
  host?: string;
}): Promise<FakeProvider> {
  return createFakeProvider({ ...opts, record: true });
}

interface Plan {
  text: string;
  pieces: string[];
  tools: { id: string | undefined; name: string; arguments: string; pieces: string[] }[];
  finish: 'stop' | 'length' | 'tool_calls';
  status: number | undefined;
  errorMessage: string | undefined;
  delayMs: number;
  chunkDelayMs: number;
  usage: { input: number; output: number } | undefined;
}

interface CreateOptions {
  port?: number;
  host?: string;
  /** Off in the standalone benchmark process, where an ever-growing log would skew the numbers. */
  record: boolean;
  defaults?: { text?: string; pieces?: number; chunkDelayMs?: number; delayMs?: number };
}

async function createFakeProvider(opts: CreateOptions): Promise<FakeProvider> {
  const d = opts.defaults ?? {};
  const defaultScript: FakeScript = {
    text: d.text ?? DEFAULT_TEXT,
    chunkDelayMs: d.chunkDelayMs ?? 0,
    delayMs: d.delayMs ?? 0,
  };
  const defaultPlan = toPlan(defaultScript, d.pieces ?? DEFAULT_PIECES);
  // A static script is split once, not per request: the standalone process is a latency baseline.
  let source: ScriptSource | undefined;
  let staticPlan: Plan = defaultPlan;
  const requests: RecordedRequest[] = [];

  const server = http.createServer({ noDelay: true }, (req, res) => {
    const rec: RecordedRequest = {
      path: req.url ?? '/',
      headers: req.headers,
      body: undefined,
      aborted: false,
    };
    if (opts.record) requests.push(rec);
    res.on('close', () => {
      if (!res.writableFinished) rec.aborted = true;
    });
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString();
      let body: unknown = undefined;
      let badJson = false;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
          badJson = true;
        }
      }
      rec.body = body;
      let plan: Plan;
      try {
        plan =
          typeof source === 'function'
            ? toPlan(source({ path: rec.path, body }), DEFAULT_PIECES, defaultScript)
            : staticPlan;
      } catch (err) {
        plan = {
          ...defaultPlan,
          status: 500,
          errorMessage: `fake provider script: ${String(err)}`,
        };
      }
      route(req, res, rec.path, body, raw.length, badJson, plan);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    requests,
    script(s) {
      source = s;
      staticPlan = typeof s === 'function' ? defaultPlan : toPlan(s, DEFAULT_PIECES, defaultScript);
    },
    reset() {
      requests.length = 0;
      source = undefined;
      staticPlan = defaultPlan;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function toPlan(s: FakeScript, pieces: number, base: FakeScript = {}): Plan {
  const tools = (s.toolCalls ?? []).map((t) => ({
    id: t.id,
    name: t.name,
    arguments: t.arguments,
    pieces: splitText(t.arguments, ARGUMENT_PIECES),
  }));
  let text: string;
  let chunks: string[];
  if (s.chunks) {
    text = s.text ?? s.chunks.join('');
    if (s.chunks.join('') !== text) throw new Error('chunks do not join to text');
    chunks = s.chunks.filter((c) => c.length > 0);
  } else {
    text = s.text ?? (tools.length > 0 ? '' : (base.text ?? DEFAULT_TEXT));
    chunks = splitText(text, pieces);
  }
  return {
    text,
    pieces: chunks,
    tools,
    finish: s.finish ?? (tools.length > 0 ? 'tool_calls' : 'stop'),
    status: s.status !== undefined && s.status >= 400 ? s.status : undefined,
    errorMessage: s.errorMessage,
    delayMs: s.delayMs ?? base.delayMs ?? 0,
    chunkDelayMs: s.chunkDelayMs ?? base.chunkDelayMs ?? 0,
    usage: s.usage,
  };
}

/** n pieces of near-equal length, never splitting a surrogate pair. */
function splitText(text: string, n: number): string[] {
  if (text.length === 0) return [];
  const cps = Array.from(text);
  const count = Math.max(1, Math.min(n, cps.length));
  const size = Math.floor(cps.length / count);
  const extra = cps.length % count;
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const len = size + (i < extra ? 1 : 0);
    out.push(cps.slice(at, at + len).join(''));
    at += len;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Routing

type Provider = 'openai' | 'anthropic' | 'gemini';

const GEMINI_PATH =
  /^\/(v1beta|v1|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

function route(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: string,
  body: unknown,
  rawLength: number,
  badJson: boolean,
  plan: Plan,
): void {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  if (req.method === 'GET' && (path === '/healthz' || path === '/health')) {
    sendJson(res, 200, { status: 'ok' });
    return;
  }
  if (req.method !== 'POST') {
    sendError(res, 'openai', 404, `Invalid URL (${req.method ?? 'GET'} ${path})`);
    return;
  }
  const b = (body !== null && typeof body === 'object' ? body : {}) as Body;
  if (path === '/v1/chat/completions' || path === '/chat/completions') {
    if (!checkOpenAI(req, res, badJson, b, 'messages')) return;
    answer(res, plan, 'openai', () =>
      b.stream === true ? chatStream(plan, b, rawLength) : chatJson(plan, b, rawLength),
    );
  } else if (path === '/v1/responses' || path === '/responses') {
    if (!checkOpenAI(req, res, badJson, b, 'input')) return;
    answer(res, plan, 'openai', () =>
      b.stream === true ? responsesStream(plan, b, rawLength) : responsesJson(plan, b, rawLength),
    );
  } else if (path === '/v1/messages') {
    if (!checkAnthropic(req, res, badJson, b)) return;
    answer(res, plan, 'anthropic', () =>
      b.stream === true ? anthropicStream(plan, b, rawLength) : anthropicJson(plan, b, rawLength),
    );
  } else {
    const m = GEMINI_PATH.exec(path);
    if (!m) {
      sendError(res, 'openai', 404, `Invalid URL (POST ${path})`);
      return;
    }
    const params = new URLSearchParams(query);
    if (!checkGemini(req, res, badJson, b, params)) return;
    const model = m[2]!;
    const streaming = m[3] === 'streamGenerateContent';
    const sse = params.get('alt') === 'sse';
    answer(res, plan, 'gemini', () =>
      streaming ? geminiStream(plan, model, rawLength, sse) : geminiJson(plan, model, rawLength),
    );
  }
}

type Body = Record<string, unknown> & { model?: unknown; stream?: unknown };

function checkOpenAI(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  badJson: boolean,
  b: Body,
  required: string,
): boolean {
  if (!req.headers.authorization) {
    sendError(
      res,
      'openai',
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    );
    return false;
  }
  if (badJson) {
    sendError(
      res,
      'openai',
      400,
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
    );
    return false;
  }
  for (const param of ['model', required]) {
    if (b[param] === undefined) {
      sendError(res, 'openai', 400, `Missing required parameter: '${param}'.`, param);
      return false;
    }
  }
  return true;
}

function checkAnthropic(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  badJson: boolean,
  b: Body,
): boolean {
  if (!req.headers['x-api-key'] && !req.headers.authorization) {
    sendError(res, 'anthropic', 401, 'x-api-key header is required');
    return false;
  }
  if (!req.headers['anthropic-version']) {
    sendError(res, 'anthropic', 400, 'anthropic-version: header is required');
    return false;
  }
  if (badJson) {
    sendError(res, 'anthropic', 400, 'The request body is not valid JSON.');
    return false;
  }
  for (const field of ['model', 'max_tokens', 'messages']) {
    if (b[field] === undefined) {
      sendError(res, 'anthropic', 400, `${field}: Field required`);
      return false;
    }
  }
  return true;
}

function checkGemini(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  badJson: boolean,
  b: Body,
  params: URLSearchParams,
): boolean {
  if (!req.headers['x-goog-api-key'] && !params.get('key') && !req.headers.authorization) {
    sendError(
      res,
      'gemini',
      403,
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    );
    return false;
  }
  if (badJson) {
    sendError(res, 'gemini', 400, 'Invalid JSON payload received.');
    return false;
  }
  if (!Array.isArray(b.contents)) {
    sendError(res, 'gemini', 400, '* GenerateContentRequest.contents: contents is not specified\n');
    return false;
  }
  return true;
}

/** A JSON answer, or SSE frames written one per chunkDelayMs. */
type Answer =
  | { kind: 'json'; body: unknown; headers?: http.OutgoingHttpHeaders }
  | { kind: 'stream'; contentType: string; frames: string[]; headers?: http.OutgoingHttpHeaders };

function answer(res: http.ServerResponse, plan: Plan, provider: Provider, build: () => Answer) {
  const go = () => {
    if (res.destroyed) return;
    if (plan.status !== undefined) {
      sendError(res, provider, plan.status, plan.errorMessage);
      return;
    }
    const a = build();
    const headers = { ...providerHeaders(provider), ...a.headers };
    if (a.kind === 'json') {
      sendJson(res, 200, a.body, headers);
      return;
    }
    res.writeHead(200, {
      'content-type': a.contentType,
      'cache-control': 'no-cache',
      ...headers,
    });
    if (plan.chunkDelayMs <= 0) {
      res.end(a.frames.join(''));
      return;
    }
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const next = () => {
      if (res.destroyed) return;
      res.write(a.frames[i++]!);
      if (i < a.frames.length) timer = setTimeout(next, plan.chunkDelayMs);
      else res.end();
    };
    res.once('close', () => clearTimeout(timer));
    next();
  };
  if (plan.delayMs > 0) {
    const timer = setTimeout(go, plan.delayMs);
    res.once('close', () => clearTimeout(timer));
  } else {
    go();
  }
}

function providerHeaders(provider: Provider): http.OutgoingHttpHeaders {
  if (provider === 'openai') return { 'x-request-id': `req_${hex(16)}` };
  if (provider === 'anthropic') return { 'request-id': `req_011C${base62(20)}` };
  return {};
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
  contentType = 'application/json',
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function sendError(
  res: http.ServerResponse,
  provider: Provider,
  status: number,
  message?: string,
  param: string | null = null,
): void {
  if (provider === 'openai') {
    const [type, code] = openAIErrorType(status);
    sendJson(
      res,
      status,
      { error: { message: message ?? defaultErrorMessage(status), type, param, code } },
      providerHeaders(provider),
    );
  } else if (provider === 'anthropic') {
    const headers = providerHeaders(provider);
    sendJson(
      res,
      status,
      {
        type: 'error',
        error: {
          type: anthropicErrorType(status),
          message: message ?? defaultErrorMessage(status),
        },
        request_id: headers['request-id'],
      },
      headers,
    );
  } else {
    sendJson(
      res,
      status,
      {
        error: {
          code: status,
          message: message ?? defaultErrorMessage(status),
          status: geminiErrorStatus(status),
        },
      },
      {},
      'application/json; charset=UTF-8',
    );
  }
}

function defaultErrorMessage(status: number): string {
  if (status === 429) return 'Rate limit reached. Please try again later.';
  if (status === 401) return 'Invalid API key.';
  if (status >= 500) return 'The server had an error while processing your request.';
  return 'Invalid request.';
}

function openAIErrorType(status: number): [string, string | null] {
  if (status === 401) return ['invalid_request_error', 'invalid_api_key'];
  if (status === 429) return ['requests', 'rate_limit_exceeded'];
  if (status >= 500) return ['server_error', null];
  return ['invalid_request_error', null];
}

function anthropicErrorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

function geminiErrorStatus(status: number): string {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    409: 'ABORTED',
    429: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    500: 'INTERNAL',
    501: 'NOT_IMPLEMENTED',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  };
  return names[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

// ---------------------------------------------------------------------------------------------
// Ids and usage

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';

// Ids draw from a pool refilled 64 KiB at a time: a randomBytes call per id showed in profiles.
let pool = randomBytes(65_536);
let poolAt = 0;

function randomFrom(alphabet: string, n: number): string {
  if (poolAt + n > pool.length) {
    pool = randomBytes(65_536);
    poolAt = 0;
  }
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[pool[poolAt++]! % alphabet.length];
  return s;
}

const base62 = (n: number) => randomFrom(BASE62, n);
const hex = (bytes: number) => randomFrom(HEX, bytes * 2);

const now = () => Math.floor(Date.now() / 1000);
const modelOf = (b: Body, fallback: string) => (typeof b.model === 'string' ? b.model : fallback);

function usageOf(plan: Plan, rawLength: number): { input: number; output: number } {
  if (plan.usage) return plan.usage;
  const out =
    plan.text.length + plan.tools.reduce((n, t) => n + t.name.length + t.arguments.length, 0);
  return { input: Math.max(1, Math.ceil(rawLength / 4)), output: Math.max(1, Math.ceil(out / 4)) };
}

function sse(data: unknown, event?: string): string {
  return event === undefined
    ? `data: ${JSON.stringify(data)}\n\n`
    : `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

const SSE_TYPE = 'text/event-stream; charset=utf-8';

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

const FINGERPRINT = 'fp_f4e3b1c2a9';

function chatUsage(u: { input: number; output: number }) {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function chatToolIds(plan: Plan): string[] {
  return plan.tools.map((t) => t.id ?? `call_${base62(24)}`);
}

function chatJson(plan: Plan, b: Body, rawLength: number): Answer {
  const ids = chatToolIds(plan);
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: plan.text.length > 0 || plan.tools.length === 0 ? plan.text : null,
  };
  if (plan.tools.length > 0) {
    message.tool_calls = plan.tools.map((t, i) => ({
      id: ids[i],
      type: 'function',
      function: { name: t.name, arguments: t.arguments },
    }));
  }
  message.refusal = null;
  message.annotations = [];
  return {
    kind: 'json',
    body: {
      id: `chatcmpl-${base62(29)}`,
      object: 'chat.completion',
      created: now(),
      model: modelOf(b, 'gpt-4o-mini'),
      choices: [{ index: 0, message, logprobs: null, finish_reason: plan.finish }],
      usage: chatUsage(usageOf(plan, rawLength)),
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
    },
  };
}

function chatStream(plan: Plan, b: Body, rawLength: number): Answer {
  const ids = chatToolIds(plan);
  const options = b.stream_options as { include_usage?: unknown } | undefined;
  const includeUsage = options?.include_usage === true;
  const head = {
    id: `chatcmpl-${base62(29)}`,
    object: 'chat.completion.chunk',
    created: now(),
    model: modelOf(b, 'gpt-4o-mini'),
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
  const frame = (delta: unknown, finish: string | null = null) =>
    sse({
      ...head,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const toolStart = (i: number) => ({
    index: i,
    id: ids[i],
    type: 'function',
    function: { name: plan.tools[i]!.name, arguments: '' },
  });
  const frames: string[] = [];
  const hasText = plan.text.length > 0 || plan.tools.length === 0;
  // The real API opens with the role; with no text the first tool call rides along with it.
  frames.push(
    frame(
      hasText
        ? { role: 'assistant', content: '', refusal: null }
        : { role: 'assistant', content: null, tool_calls: [toolStart(0)], refusal: null },
    ),
  );
  if (hasText) for (const piece of plan.pieces) frames.push(frame({ content: piece }));
  plan.tools.forEach((t, i) => {
    if (hasText || i > 0) frames.push(frame({ tool_calls: [toolStart(i)] }));
    for (const piece of t.pieces) {
      frames.push(frame({ tool_calls: [{ index: i, function: { arguments: piece } }] }));
    }
  });
  frames.push(frame({}, plan.finish));
  if (includeUsage) {
    frames.push(sse({ ...head, choices: [], usage: chatUsage(usageOf(plan, rawLength)) }));
  }
  frames.push('data: [DONE]\n\n');
  return { kind: 'stream', contentType: SSE_TYPE, frames };
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

interface ResponsesIds {
  response: string;
  message: string;
  tools: { item: string; call: string }[];
}

function responsesIds(plan: Plan): ResponsesIds {
  return {
    response: `resp_${hex(24)}`,
    message: `msg_${hex(24)}`,
    tools: plan.tools.map((t) => ({ item: `fc_${hex(24)}`, call: t.id ?? `call_${base62(24)}` })),
  };
}

function responseObject(
  plan: Plan,
  b: Body,
  ids: ResponsesIds,
  createdAt: number,
  state: 'in_progress' | 'done',
  output: unknown[],
  rawLength: number,
) {
  const incomplete = plan.finish === 'length';
  const u = usageOf(plan, rawLength);
  return {
    id: ids.response,
    object: 'response',
    created_at: createdAt,
    status: state === 'in_progress' ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: state === 'done' && incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    model: modelOf(b, 'gpt-4o-mini'),
    output,
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: b.store ?? true,
    temperature: b.temperature ?? 1,
    text: b.text ?? { format: { type: 'text' } },
    tool_choice: b.tool_choice ?? 'auto',
    tools: b.tools ?? [],
    top_p: b.top_p ?? 1,
    truncation: 'disabled',
    usage:
      state === 'in_progress'
        ? null
        : {
            input_tokens: u.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: u.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: u.input + u.output,
          },
    user: null,
    metadata: b.metadata ?? {},
  };
}

const outputText = (text: string) => ({ type: 'output_text', annotations: [], logprobs: [], text });

function responsesOutput(plan: Plan, ids: ResponsesIds): unknown[] {
  const itemStatus = plan.finish === 'length' ? 'incomplete' : 'completed';
  const output: unknown[] = [];
  if (plan.text.length > 0 || plan.tools.length === 0) {
    output.push({
      id: ids.message,
      type: 'message',
      status: itemStatus,
      content: [outputText(plan.text)],
      role: 'assistant',
    });
  }
  plan.tools.forEach((t, i) => {
    output.push({
      id: ids.tools[i]!.item,
      type: 'function_call',
      status: 'completed',
      arguments: t.arguments,
      call_id: ids.tools[i]!.call,
      name: t.name,
    });
  });
  return output;
}

function responsesJson(plan: Plan, b: Body, rawLength: number): Answer {
  const ids = responsesIds(plan);
  const output = responsesOutput(plan, ids);
  return {
    kind: 'json',
    body: responseObject(plan, b, ids, now(), 'done', output, rawLength),
  };
}

function responsesStream(plan: Plan, b: Body, rawLength: number): Answer {
  const ids = responsesIds(plan);
  const createdAt = now();
  const frames: string[] = [];
  let seq = 0;
  const emit = (type: string, fields: Record<string, unknown>) =>
    frames.push(sse({ type, sequence_number: seq++, ...fields }, type));
  const started = responseObject(plan, b, ids, createdAt, 'in_progress', [], rawLength);
  emit('response.created', { response: started });
  emit('response.in_progress', { response: started });
  const final = responsesOutput(plan, ids);
  let outputIndex = 0;
  if (plan.text.length > 0 || plan.tools.length === 0) {
    const at = { item_id: ids.message, output_index: outputIndex };
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: {
        id: ids.message,
        type: 'message',
        status: 'in_progress',
        content: [],
        role: 'assistant',
      },
    });
    emit('response.content_part.added', { ...at, content_index: 0, part: outputText('') });
    for (const piece of plan.pieces) {
      emit('response.output_text.delta', { ...at, content_index: 0, delta: piece, logprobs: [] });
    }
    emit('response.output_text.done', {
      ...at,
      content_index: 0,
      text: plan.text,
      logprobs: [],
    });
    emit('response.content_part.done', { ...at, content_index: 0, part: outputText(plan.text) });
    emit('response.output_item.done', { output_index: outputIndex, item: final[outputIndex] });
    outputIndex++;
  }
  plan.tools.forEach((t, i) => {
    const { item, call } = ids.tools[i]!;
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: {
        id: item,
        type: 'function_call',
        status: 'in_progress',
        arguments: '',
        call_id: call,
        name: t.name,
      },
    });
    for (const piece of t.pieces) {
      emit('response.function_call_arguments.delta', {
        item_id: item,
        output_index: outputIndex,
        delta: piece,
      });
    }
    emit('response.function_call_arguments.done', {
      item_id: item,
      output_index: outputIndex,
      name: t.name,
      arguments: t.arguments,
    });
    emit('response.output_item.done', { output_index: outputIndex, item: final[outputIndex] });
    outputIndex++;
  });
  const done = responseObject(plan, b, ids, createdAt, 'done', final, rawLength);
  emit(plan.finish === 'length' ? 'response.incomplete' : 'response.completed', { response: done });
  return { kind: 'stream', contentType: SSE_TYPE, frames };
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const ANTHROPIC_STOP = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;

function anthropicToolIds(plan: Plan): string[] {
  return plan.tools.map((t) => t.id ?? `toolu_01${base62(22)}`);
}

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

function anthropicUsage(input: number, output: number) {
  return {
    input_tokens: input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
    service_tier: 'standard',
  };
}

function anthropicJson(plan: Plan, b: Body, rawLength: number): Answer {
  const ids = anthropicToolIds(plan);
  const content: unknown[] = [];
  if (plan.text.length > 0 || plan.tools.length === 0) {
    content.push({ type: 'text', text: plan.text });
  }
  plan.tools.forEach((t, i) => {
    content.push({ type: 'tool_use', id: ids[i], name: t.name, input: parseArgs(t.arguments) });
  });
  const u = usageOf(plan, rawLength);
  return {
    kind: 'json',
    body: {
      id: `msg_01${base62(22)}`,
      type: 'message',
      role: 'assistant',
      model: modelOf(b, 'claude-sonnet-5'),
      content,
      stop_reason: ANTHROPIC_STOP[plan.finish],
      stop_sequence: null,
      usage: anthropicUsage(u.input, u.output),
    },
  };
}

function anthropicStream(plan: Plan, b: Body, rawLength: number): Answer {
  const ids = anthropicToolIds(plan);
  const u = usageOf(plan, rawLength);
  const frames: string[] = [];
  const emit = (type: string, fields: Record<string, unknown> = {}) =>
    frames.push(sse({ type, ...fields }, type));
  emit('message_start', {
    message: {
      id: `msg_01${base62(22)}`,
      type: 'message',
      role: 'assistant',
      model: modelOf(b, 'claude-sonnet-5'),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage(u.input, 1),
    },
  });
  let index = 0;
  const pingOnce = () => {
    if (index === 0) emit('ping');
  };
  if (plan.text.length > 0 || plan.tools.length === 0) {
    emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
    pingOnce();
    for (const piece of plan.pieces) {
      emit('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    }
    emit('content_block_stop', { index });
    index++;
  }
  plan.tools.forEach((t, i) => {
    emit('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: ids[i], name: t.name, input: {} },
    });
    pingOnce();
    for (const piece of t.pieces) {
      emit('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: piece },
      });
    }
    emit('content_block_stop', { index });
    index++;
  });
  emit('message_delta', {
    delta: { stop_reason: ANTHROPIC_STOP[plan.finish], stop_sequence: null },
    usage: { output_tokens: u.output },
  });
  emit('message_stop');
  return { kind: 'stream', contentType: SSE_TYPE, frames };
}

// ---------------------------------------------------------------------------------------------
// Gemini generateContent

function geminiResponse(
  parts: unknown[],
  finish: string | undefined,
  usage: object,
  model: string,
  responseId: string,
) {
  const candidate: Record<string, unknown> = { content: { parts, role: 'model' } };
  if (finish !== undefined) candidate.finishReason = finish;
  candidate.index = 0;
  return { candidates: [candidate], usageMetadata: usage, modelVersion: model, responseId };
}

function geminiUsage(input: number, output: number | undefined) {
  const details = [{ modality: 'TEXT', tokenCount: input }];
  return output === undefined
    ? { promptTokenCount: input, totalTokenCount: input, promptTokensDetails: details }
    : {
        promptTokenCount: input,
        candidatesTokenCount: output,
        totalTokenCount: input + output,
        promptTokensDetails: details,
      };
}

const geminiFinish = (plan: Plan) => (plan.finish === 'length' ? 'MAX_TOKENS' : 'STOP');
const geminiCall = (t: Plan['tools'][number]) => ({
  functionCall: { name: t.name, args: parseArgs(t.arguments) },
});

function geminiJson(plan: Plan, model: string, rawLength: number): Answer {
  const u = usageOf(plan, rawLength);
  const parts: unknown[] = [];
  if (plan.text.length > 0 || plan.tools.length === 0) parts.push({ text: plan.text });
  for (const t of plan.tools) parts.push(geminiCall(t));
  return {
    kind: 'json',
    body: geminiResponse(
      parts,
      geminiFinish(plan),
      geminiUsage(u.input, u.output),
      model,
      base62(22),
    ),
    headers: { 'content-type': 'application/json; charset=UTF-8' },
  };
}

function geminiStream(plan: Plan, model: string, rawLength: number, sseMode: boolean): Answer {
  const u = usageOf(plan, rawLength);
  const responseId = base62(22);
  // Function calls arrive whole, in the last chunk; text pieces before it. The last chunk carries
  // finishReason and the full usage: the SDK treats a stream without a finishReason as cut off.
  const chunks: unknown[][] = plan.pieces.map((p) => [{ text: p }]);
  if (plan.tools.length > 0) chunks.push(plan.tools.map(geminiCall));
  if (chunks.length === 0) chunks.push([{ text: '' }]);
  const bodies = chunks.map((parts, i) => {
    const last = i === chunks.length - 1;
    return geminiResponse(
      parts,
      last ? geminiFinish(plan) : undefined,
      geminiUsage(u.input, last ? u.output : undefined),
      model,
      responseId,
    );
  });
  if (sseMode) {
    return {
      kind: 'stream',
      contentType: 'text/event-stream',
      frames: bodies.map((x) => `data: ${JSON.stringify(x)}\r\n\r\n`),
    };
  }
  // Without alt=sse the answer is one JSON array, streamed element by element.
  const frames = bodies.map((x, i) => (i === 0 ? '[' : '\r\n,') + JSON.stringify(x));
  frames.push(']');
  return { kind: 'stream', contentType: 'application/json; charset=UTF-8', frames };
}

// ---------------------------------------------------------------------------------------------
// Standalone: `node --import tsx test/support/fake-provider.ts --port 18080`

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i !== -1) return args[i + 1];
  const prefix = `${name}=`;
  return args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

function intFrom(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  // A test helper run as a benchmark process: its few settings come straight from the command
  // line and environment, there is no service config.ts to own them.
  const env = process.env;
  const provider = await createFakeProvider({
    port: intFrom(argValue(args, '--port'), '--port') ?? 0,
    host: argValue(args, '--host') ?? '127.0.0.1',
    record: false,
    defaults: {
      text: env.FAKE_PROVIDER_TEXT || undefined,
      pieces: intFrom(env.FAKE_PROVIDER_CHUNKS, 'FAKE_PROVIDER_CHUNKS') || undefined,
      chunkDelayMs: intFrom(env.FAKE_PROVIDER_CHUNK_DELAY_MS, 'FAKE_PROVIDER_CHUNK_DELAY_MS'),
      delayMs: intFrom(env.FAKE_PROVIDER_DELAY_MS, 'FAKE_PROVIDER_DELAY_MS'),
    },
  });
  const port = Number(new URL(provider.url).port);
  process.stdout.write(`${JSON.stringify({ fake_provider: 'listening', port })}\n`);
  const stop = () => {
    void provider.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`${JSON.stringify({ fake_provider: 'failed', error: String(err) })}\n`);
    process.exit(1);
  });
}
