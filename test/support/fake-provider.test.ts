import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';

// The official SDKs are pointed straight at the fake: if its wire format drifts from the real
// providers', their parsers (strict about event order, ids and item identity) fail here first.

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../..');

let fake: FakeProvider;
let openai: OpenAI;
let anthropic: Anthropic;
let gemini: GoogleGenAI;

beforeAll(async () => {
  fake = await startFakeProvider();
  openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${fake.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.url, maxRetries: 0 });
  gemini = new GoogleGenAI({ apiKey: 'gem-test', httpOptions: { baseUrl: fake.url } });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

async function waitFor(cond: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const weatherArgs = '{"city":"Paris","unit":"celsius"}';
const chatTools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
];

describe('OpenAI chat completions', () => {
  it('answers a non-streamed completion the SDK reads, and records the request', async () => {
    fake.script({ text: 'Bonjour.', usage: { input: 12, output: 3 } });
    const c = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(c.id).toMatch(/^chatcmpl-/);
    expect(c.object).toBe('chat.completion');
    expect(c.model).toBe('gpt-4o-mini');
    expect(c.choices[0]!.message).toMatchObject({
      role: 'assistant',
      content: 'Bonjour.',
      refusal: null,
    });
    expect(c.choices[0]!.finish_reason).toBe('stop');
    expect(c.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(fake.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(fake.requests[0]!.aborted).toBe(false);
  });

  it('returns tool calls with null content and finish_reason tool_calls', async () => {
    fake.script({ toolCalls: [{ id: 'call_abc', name: 'get_weather', arguments: weatherArgs }] });
    const c = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: chatTools,
    });
    const choice = c.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: 'call_abc',
        type: 'function',
        function: { name: 'get_weather', arguments: weatherArgs },
      },
    ]);
  });

  it('streams the exact scripted pieces, then usage, then [DONE]', async () => {
    fake.script({ chunks: ['Hel', 'lo, ', 'wor', 'ld!'], usage: { input: 5, output: 4 } });
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const pieces = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? ''));
    expect(pieces.filter((p) => p !== '')).toEqual(['Hel', 'lo, ', 'wor', 'ld!']);
    const finishes = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason));
    expect(finishes.filter((f) => f !== null)).toEqual(['stop']);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('streams text and two tool calls that the stream helper accumulates', async () => {
    fake.script({
      text: 'Let me check.',
      toolCalls: [
        { name: 'get_weather', arguments: weatherArgs },
        { name: 'get_time', arguments: '{"zone":"CET"}' },
      ],
    });
    const stream = openai.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'weather and time?' }],
      tools: chatTools,
    });
    const deltas: string[] = [];
    stream.on('content.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalChatCompletion();
    expect(deltas.join('')).toBe('Let me check.');
    expect(deltas.length).toBeGreaterThan(1);
    const msg = final.choices[0]!.message;
    expect(msg.content).toBe('Let me check.');
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    const calls = (msg.tool_calls ?? []).map((t) =>
      t.type === 'function' ? [t.id.slice(0, 5), t.function.name, t.function.arguments] : [],
    );
    expect(calls).toEqual([
      ['call_', 'get_weather', weatherArgs],
      ['call_', 'get_time', '{"zone":"CET"}'],
    ]);
  });

  it('surfaces an error status as the SDK APIError subclass with the message', async () => {
    fake.script({ status: 429, errorMessage: 'slow down' });
    const err = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'requests' });
    expect((err as Error).message).toContain('slow down');
  });

  it('rejects a request without an API key like the real API', async () => {
    const res = await fetch(`${fake.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});

describe('OpenAI responses', () => {
  it('answers a non-streamed response with output_text, from string input and instructions', async () => {
    fake.script({ text: 'Four.', usage: { input: 20, output: 2 } });
    const r = await openai.responses.create({
      model: 'gpt-4.1',
      instructions: 'Be brief.',
      input: 'What is 2+2?',
    });
    expect(r.id).toMatch(/^resp_/);
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.output_text).toBe('Four.');
    expect(r.instructions).toBe('Be brief.');
    expect(r.output[0]).toMatchObject({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Four.', annotations: [] }],
    });
    expect(r.usage).toMatchObject({ input_tokens: 20, output_tokens: 2, total_tokens: 22 });
    expect(fake.requests[0]!.body).toMatchObject({
      input: 'What is 2+2?',
      instructions: 'Be brief.',
    });
  });

  it('returns function_call items for item-array input', async () => {
    fake.script({ toolCalls: [{ id: 'call_xyz', name: 'get_weather', arguments: weatherArgs }] });
    const r = await openai.responses.create({
      model: 'gpt-4.1',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'weather?' }] }],
      tools: [{ type: 'function', name: 'get_weather', parameters: null, strict: false }],
    });
    expect(r.output).toHaveLength(1);
    expect(r.output[0]).toMatchObject({
      type: 'function_call',
      call_id: 'call_xyz',
      name: 'get_weather',
      arguments: weatherArgs,
      status: 'completed',
    });
    expect((r.output[0] as { id: string }).id).toMatch(/^fc_/);
    expect(r.output_text).toBe('');
  });

  it('streams typed events in the real order, with sequence numbers', async () => {
    fake.script({
      chunks: ['a', 'b', 'c'],
      toolCalls: [{ name: 'get_weather', arguments: weatherArgs }],
    });
    const stream = await openai.responses.create({
      model: 'gpt-4.1',
      input: 'hi',
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const argPieces = events.filter(
      (e) => e.type === 'response.function_call_arguments.delta',
    ).length;
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      ...Array<string>(argPieces).fill('response.function_call_arguments.delta'),
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(argPieces).toBeGreaterThan(1);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('streams deltas the ResponseStream helper accumulates into the final response', async () => {
    fake.script({
      chunks: ['The ', 'answer ', 'is 4.'],
      toolCalls: [{ name: 'get_weather', arguments: weatherArgs }],
    });
    const stream = openai.responses.stream({ model: 'gpt-4.1', input: 'hi' });
    const deltas: string[] = [];
    const argDeltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['The ', 'answer ', 'is 4.']);
    expect(argDeltas.join('')).toBe(weatherArgs);
    expect(final.output_text).toBe('The answer is 4.');
    expect(final.status).toBe('completed');
    expect(final.output.map((o) => o.type)).toEqual(['message', 'function_call']);
  });

  it('marks a length-limited answer incomplete, streamed or not', async () => {
    fake.script({ text: 'Cut sho', finish: 'length' });
    const r = await openai.responses.create({ model: 'gpt-4.1', input: 'hi' });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    const final = await openai.responses.stream({ model: 'gpt-4.1', input: 'hi' }).finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.output_text).toBe('Cut sho');
  });

  it('surfaces an error status as APIError', async () => {
    fake.script({ status: 400, errorMessage: "Invalid value for 'input'." });
    const err = await openai.responses
      .create({ model: 'gpt-4.1', input: 'hi' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect((err as Error).message).toContain("Invalid value for 'input'.");
  });
});

describe('Anthropic messages', () => {
  const base = {
    model: 'claude-sonnet-5',
    max_tokens: 256,
    messages: [{ role: 'user' as const, content: 'hi' }],
  };

  it('answers a message the SDK reads, and records the key and version headers', async () => {
    fake.script({ text: 'Hi there.', usage: { input: 9, output: 4 } });
    const m = await anthropic.messages.create(base);
    expect(m.id).toMatch(/^msg_/);
    expect(m).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-5',
      content: [{ type: 'text', text: 'Hi there.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 4 },
    });
    const rec = fake.requests[0]!;
    expect(rec.path).toBe('/v1/messages');
    // SDK 1.x sends the API key as `Authorization: Bearer`; older clients send `x-api-key`.
    expect(rec.headers.authorization).toBe('Bearer sk-ant-test');
    expect(rec.headers['anthropic-version']).toBeTruthy();
  });

  it('returns tool_use blocks with parsed input', async () => {
    fake.script({
      text: 'Checking.',
      toolCalls: [{ name: 'get_weather', arguments: weatherArgs }],
    });
    const m = await anthropic.messages.create(base);
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content[0]).toEqual({ type: 'text', text: 'Checking.' });
    expect(m.content[1]).toMatchObject({
      type: 'tool_use',
      name: 'get_weather',
      input: { city: 'Paris', unit: 'celsius' },
    });
    expect((m.content[1] as { id: string }).id).toMatch(/^toolu_/);
  });

  it('streams events the MessageStream helper accumulates, tool input included', async () => {
    fake.script({
      chunks: ['One, ', 'two, ', 'three.'],
      toolCalls: [{ id: 'toolu_fixed', name: 'get_weather', arguments: weatherArgs }],
      usage: { input: 7, output: 11 },
    });
    const stream = anthropic.messages.stream(base);
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const m = await stream.finalMessage();
    expect(texts).toEqual(['One, ', 'two, ', 'three.']);
    expect(m.content).toEqual([
      { type: 'text', text: 'One, two, three.' },
      { type: 'tool_use', id: 'toolu_fixed', name: 'get_weather', input: JSON.parse(weatherArgs) },
    ]);
    expect(m.stop_reason).toBe('tool_use');
    expect(m.usage.output_tokens).toBe(11);
    expect(m.usage.input_tokens).toBe(7);
  });

  it('streams raw events in the real order (ping after the first block start)', async () => {
    fake.script({ chunks: ['x', 'y'], finish: 'length' });
    const stream = await anthropic.messages.create({ ...base, stream: true });
    const types: string[] = [];
    let stop: string | null = null;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'message_delta') stop = e.delta.stop_reason;
    }
    // The SDK drops `ping` itself; it is checked on the wire below.
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(stop).toBe('max_tokens');
    const raw = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...base, stream: true }),
    });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const names = [...(await raw.text()).matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
  });

  it('surfaces error statuses as the SDK APIError with the Anthropic error type', async () => {
    fake.script({ status: 529, errorMessage: 'Overloaded' });
    const err = await anthropic.messages.create(base).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err).toMatchObject({
      status: 529,
      error: { type: 'error', error: { type: 'overloaded_error' } },
    });
    fake.script({ status: 400, errorMessage: 'messages: at least one message is required' });
    const bad = await anthropic.messages
      .stream(base)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as Error).message).toContain('at least one message is required');
  });

  it('requires a key and the anthropic-version header like the real API', async () => {
    const noKey = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(base),
    });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { type: 'authentication_error' } });
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k' },
      body: JSON.stringify(base),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
  });
});

describe('Gemini generateContent', () => {
  const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];

  it('answers generateContent, reading the key from x-goog-api-key', async () => {
    fake.script({ text: 'Hallo.', usage: { input: 3, output: 2 } });
    const v1beta = new GoogleGenAI({
      apiKey: 'gem-test',
      httpOptions: { baseUrl: fake.url, apiVersion: 'v1beta' },
    });
    const r = await v1beta.models.generateContent({ model: 'gemini-2.5-flash', contents });
    expect(r.text).toBe('Hallo.');
    expect(r.candidates?.[0]?.finishReason).toBe('STOP');
    expect(r.usageMetadata).toMatchObject({
      promptTokenCount: 3,
      candidatesTokenCount: 2,
      totalTokenCount: 5,
    });
    expect(r.modelVersion).toBe('gemini-2.5-flash');
    expect(r.responseId).toBeTruthy();
    const rec = fake.requests[0]!;
    expect(rec.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(rec.headers['x-goog-api-key']).toBe('gem-test');
  });

  it('returns function calls with parsed args', async () => {
    fake.script({ toolCalls: [{ name: 'get_weather', arguments: weatherArgs }] });
    const r = await gemini.models.generateContent({
      model: 'gemini-2.5-flash',
      contents,
      config: { tools: [{ functionDeclarations: [{ name: 'get_weather' }] }] },
    });
    expect(r.functionCalls).toEqual([
      { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } },
    ]);
  });

  it('streams over SSE: the pieces, then finishReason and usage on the last chunk', async () => {
    fake.script({
      chunks: ['Eins ', 'zwei ', 'drei'],
      finish: 'length',
      usage: { input: 4, output: 3 },
    });
    const chunks = [];
    for await (const c of await gemini.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents,
    })) {
      chunks.push(c);
    }
    expect(chunks.map((c) => c.text)).toEqual(['Eins ', 'zwei ', 'drei']);
    expect(chunks.map((c) => c.candidates?.[0]?.finishReason)).toEqual([
      undefined,
      undefined,
      'MAX_TOKENS',
    ]);
    expect(chunks.at(-1)!.usageMetadata?.candidatesTokenCount).toBe(3);
    // @google/genai 3.x defaults to the v1 API; both versions are served.
    expect(fake.requests.map((r) => r.path)).toEqual([
      '/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    ]);
  });

  it('streams a function call whole in the last chunk', async () => {
    fake.script({ text: 'ok', toolCalls: [{ name: 'get_weather', arguments: weatherArgs }] });
    const calls = [];
    let text = '';
    for await (const c of await gemini.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents,
    })) {
      calls.push(...(c.functionCalls ?? []));
      for (const p of c.candidates?.[0]?.content?.parts ?? []) text += p.text ?? '';
    }
    expect(text).toBe('ok');
    expect(calls).toEqual([{ name: 'get_weather', args: JSON.parse(weatherArgs) }]);
  });

  it('surfaces an error status as ApiError with the status', async () => {
    fake.script({ status: 400, errorMessage: 'API key not valid.' });
    const err = await gemini.models
      .generateContent({ model: 'gemini-2.5-flash', contents })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toContain('INVALID_ARGUMENT');
    fake.script({ status: 429 });
    const limited = await gemini.models
      .generateContentStream({ model: 'gemini-2.5-flash', contents })
      .catch((e: unknown) => e);
    expect((limited as ApiError).status).toBe(429);
    expect((limited as ApiError).message).toContain('RESOURCE_EXHAUSTED');
  });

  it('streams a JSON array without alt=sse, with the key from ?key=', async () => {
    fake.script({ chunks: ['a', 'b'] });
    const res = await fetch(
      `${fake.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=k`,
      { method: 'POST', body: JSON.stringify({ contents }) },
    );
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const raw = await res.text();
    expect(raw).toMatch(/^\[\{.*\}\r\n,\{.*\}\]$/s);
    const arr = JSON.parse(raw) as any[];
    expect(arr.map((x) => x.candidates[0].content.parts[0].text)).toEqual(['a', 'b']);
  });
});

describe('recording', () => {
  it('records a client abort before the answer (the blocked-input case)', async () => {
    fake.script({ delayMs: 5_000 });
    const ac = new AbortController();
    const pending = openai.chat.completions
      .create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        { signal: ac.signal },
      )
      .catch((e: unknown) => e);
    await waitFor(() => fake.requests.length === 1 && fake.requests[0]!.body !== undefined);
    ac.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
    await waitFor(() => fake.requests[0]!.aborted);
  });

  it('records a client that stops reading mid-stream', async () => {
    fake.script({ chunkDelayMs: 30 });
    const stream = await anthropic.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    for await (const e of stream) {
      if (e.type === 'content_block_delta') break;
    }
    await waitFor(() => fake.requests[0]!.aborted);
  });

  it('answers per request from a script function', async () => {
    fake.script(({ body }) =>
      body.messages?.[0]?.content === 'fail' ? { status: 500 } : { text: `echo ${body.model}` },
    );
    const ok = await openai.chat.completions.create({
      model: 'm1',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(ok.choices[0]!.message.content).toBe('echo m1');
    const err = await openai.chat.completions
      .create({ model: 'm1', messages: [{ role: 'user', content: 'fail' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(fake.requests).toHaveLength(2);
  });

  it('refuses chunks that do not join to the text', () => {
    expect(() => fake.script({ text: 'abc', chunks: ['a', 'b'] })).toThrow(/join/);
  });
});

describe('standalone process', () => {
  it('prints its port and serves the env-configured default script', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/support/fake-provider.ts', '--port', '0'],
      {
        cwd: ROOT,
        env: { ...process.env, FAKE_PROVIDER_TEXT: 'benchmark reply', FAKE_PROVIDER_CHUNKS: '3' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const lines = readline.createInterface({ input: child.stdout! });
      const first = await new Promise<string>((resolve) => lines.once('line', resolve));
      const ready = JSON.parse(first) as { fake_provider: string; port: number };
      expect(ready.fake_provider).toBe('listening');
      expect((await fetch(`http://127.0.0.1:${ready.port}/healthz`)).status).toBe(200);
      const client = new OpenAI({
        apiKey: 'k',
        baseURL: `http://127.0.0.1:${ready.port}/v1`,
        maxRetries: 0,
      });
      const stream = await client.chat.completions.create({
        model: 'bench',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      const pieces: string[] = [];
      for await (const c of stream) {
        const p = c.choices[0]?.delta.content;
        if (p) pieces.push(p);
      }
      expect(pieces).toHaveLength(3);
      expect(pieces.join('')).toBe('benchmark reply');
    } finally {
      child.kill('SIGTERM');
    }
  }, 20_000);
});
