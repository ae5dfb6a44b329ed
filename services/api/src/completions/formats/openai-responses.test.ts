import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { BlockedEnding, CanonicalResponse, StreamEvent } from '@guard/domain';
import {
  collect,
  iterate,
  sseMessagesOf,
  startScriptedHttpServer,
  type ScriptedHttpServer,
} from '../../testing/scripted-http-server.js';
import { encodeWith, validationIssues } from '../../testing/wire-kit.js';
import { openaiResponses } from './openai-responses.js';

function encodeStream(events: (StreamEvent | BlockedEnding)[]): string {
  return encodeWith(openaiResponses, events);
}

/** The `data` of each SSE message, parsed, with its `event:` name beside it. */
function framesOf(wire: string): { event: string | undefined; data: any }[] {
  return sseMessagesOf(wire).map((m) => ({ event: m.event, data: JSON.parse(m.data) }));
}

const meta = { id: 'resp_67ccd2bed1ec8190', model: 'gpt-4.1-mini', created: 1_741_476_542 };
const REFUSAL = "Sorry, I can't help with that.";

const answerWithTools: CanonicalResponse = {
  ...meta,
  text: 'Checking both.',
  tool_calls: [
    { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { id: 'call_b', name: 'get_time', arguments: '{"tz":"CET"}' },
  ],
  finish: 'tool_calls',
  usage: { input_tokens: 36, output_tokens: 87 },
};

const streamedAnswer: (StreamEvent | BlockedEnding)[] = [
  { type: 'start', ...meta },
  { type: 'text', text: 'Checking ' },
  { type: 'text', text: 'both' },
  { type: 'text', text: '.' },
  { type: 'tool_call_delta', index: 0, id: 'call_a', name: 'get_weather', arguments: '' },
  { type: 'tool_call_delta', index: 0, arguments: '{"city":' },
  { type: 'tool_call_delta', index: 0, arguments: '"Paris"}' },
  { type: 'tool_call_delta', index: 1, id: 'call_b', name: 'get_time', arguments: '{"tz":"CET"}' },
  { type: 'finish', finish: 'tool_calls', usage: { input_tokens: 36, output_tokens: 87 } },
];

const blockedStream: (StreamEvent | BlockedEnding)[] = [
  { type: 'start', ...meta },
  { type: 'text', text: 'Step one: ' },
  { type: 'blocked', message: REFUSAL, usage: null },
];

describe('openaiResponses.parseRequest', () => {
  const request = {
    model: 'gpt-4.1-mini',
    instructions: 'You are a travel agent.',
    input: [
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Also this photo:' },
          { type: 'input_image', image_url: 'https://example.com/eiffel.png', detail: 'auto' },
        ],
      },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_a',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      { type: 'function_call', call_id: 'call_b', name: 'get_time', arguments: '{"tz":"CET"}' },
      { type: 'function_call_output', call_id: 'call_a', output: '{"temp_c":21}' },
      { type: 'function_call_output', call_id: 'call_b', output: '14:05' },
    ],
    tools: [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Current weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: true,
      },
      { type: 'web_search_preview' },
    ],
    temperature: 0.3,
    store: false,
    metadata: { ticket: 'T-1' },
    policy_id: 'pol_9',
    moderate_before: false,
    monitor_details: true,
  };

  it('reads instructions, items and tools, keeps metadata upstream and drops guard fields', () => {
    const call = openaiResponses.parseRequest(request, {});
    expect(call.model).toBe('gpt-4.1-mini');
    expect(call.stream).toBe(false);
    expect(call.messages).toEqual([
      { role: 'system', content: 'You are a travel agent.' },
      { role: 'user', content: 'Weather and time in Paris?' },
      { role: 'user', content: request.input[1]!.content },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'get_time', arguments: '{"tz":"CET"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temp_c":21}' },
      { role: 'tool', tool_call_id: 'call_b', content: '14:05' },
    ]);
    expect(call.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ]);
    expect(call.guard).toEqual({
      policy_id: 'pol_9',
      moderate_before: false,
      monitor_details: true,
      metadata: { ticket: 'T-1' },
    });
    const { policy_id, moderate_before, monitor_details, ...forwarded } = request;
    void [policy_id, moderate_before, monitor_details];
    expect(call.upstreamBody).toEqual(forwarded);
  });

  it('takes a string input as one user turn', () => {
    const call = openaiResponses.parseRequest(
      { model: 'gpt-4.1-mini', input: 'Tell me a joke', stream: true },
      {},
    );
    expect(call.stream).toBe(true);
    expect(call.messages).toEqual([{ role: 'user', content: 'Tell me a joke' }]);
    expect(call.tools).toBeUndefined();
  });

  it('locates what the provider would refuse, down to the input item', () => {
    expect(validationIssues(() => openaiResponses.parseRequest({ input: 'hi' }, {}))).toEqual([
      { loc: ['body', 'model'], type: 'missing' },
    ]);
    expect(
      validationIssues(() =>
        openaiResponses.parseRequest(
          {
            model: 'm',
            input: [
              { role: 'user', content: 'ok' },
              { type: 'function_call', name: 'f', arguments: '{}' },
              { role: 'robot', content: 'x' },
              { type: 'function_call_output', call_id: 'c', output: 7 },
            ],
          },
          {},
        ),
      ),
    ).toEqual([
      { loc: ['body', 'input', 1, 'call_id'], type: 'missing' },
      { loc: ['body', 'input', 2, 'role'], type: 'enum' },
      { loc: ['body', 'input', 3, 'output'], type: 'value_error' },
    ]);
    expect(
      validationIssues(() =>
        openaiResponses.parseRequest(
          { model: 'm', input: 5, tools: [{ type: 'function' }], policy_id: 3 },
          {},
        ),
      ),
    ).toEqual([
      { loc: ['body', 'input'], type: 'value_error' },
      { loc: ['body', 'tools', 0, 'name'], type: 'value_error' },
      { loc: ['body', 'policy_id'], type: 'string_type' },
    ]);
  });
});

describe('openaiResponses.decodeResponse', () => {
  const upstream = {
    id: 'resp_abc',
    object: 'response',
    created_at: 1_741_476_777,
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: 'gpt-4.1-mini-2025-04-14',
    output: [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      {
        type: 'message',
        id: 'msg_1',
        status: 'completed',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Checking ', annotations: [] },
          { type: 'output_text', text: 'now.', annotations: [] },
        ],
      },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_a',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ],
    parallel_tool_calls: true,
    usage: {
      input_tokens: 328,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 52,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 380,
    },
  };

  it('reads an OpenAI response object', () => {
    expect(openaiResponses.decodeResponse(upstream)).toEqual({
      id: 'resp_abc',
      model: 'gpt-4.1-mini-2025-04-14',
      created: 1_741_476_777,
      text: 'Checking now.',
      tool_calls: [{ id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      finish: 'tool_calls',
      usage: { input_tokens: 328, output_tokens: 52 },
    });
    const cut = {
      ...upstream,
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [upstream.output[1]],
    };
    expect(openaiResponses.decodeResponse(cut).finish).toBe('length');
  });

  it('refuses a body it cannot read, saying what is wrong', () => {
    expect(() => openaiResponses.decodeResponse(null)).toThrow(/not a JSON object/);
    expect(() => openaiResponses.decodeResponse({ id: 'resp_1', status: 'completed' })).toThrow(
      /no output/,
    );
    expect(() =>
      openaiResponses.decodeResponse({ ...upstream, output: [{ type: 'function_call' }] }),
    ).toThrow(/output\[0\] is a function call without a name/);
    expect(() =>
      openaiResponses.decodeResponse({
        ...upstream,
        status: 'failed',
        error: { code: 'server_error', message: 'The server had an error' },
      }),
    ).toThrow(/The server had an error/);
  });

  it('gives back what encodeResponse and blockedResponse wrote', () => {
    const cut: CanonicalResponse = {
      ...meta,
      text: 'Once upon',
      tool_calls: [],
      finish: 'length',
      usage: null,
    };
    for (const r of [answerWithTools, cut])
      expect(openaiResponses.decodeResponse(openaiResponses.encodeResponse(r))).toEqual(r);
    expect(
      openaiResponses.decodeResponse(
        openaiResponses.blockedResponse(meta, REFUSAL, { input_tokens: 5, output_tokens: 0 }),
      ),
    ).toEqual({
      ...meta,
      text: REFUSAL,
      tool_calls: [],
      finish: 'content_filter',
      usage: { input_tokens: 5, output_tokens: 0 },
    });
  });

  it('answers with choices and chat usage names beside the Responses fields', () => {
    const body = openaiResponses.encodeResponse(answerWithTools);
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: { role: 'assistant', content: 'Checking both.' },
        },
      ],
      usage: {
        input_tokens: 36,
        output_tokens: 87,
        total_tokens: 123,
        prompt_tokens: 36,
        completion_tokens: 87,
      },
    });
    expect(openaiResponses.blockedResponse(meta, REFUSAL, null)).toMatchObject({
      status: 'completed',
      choices: [{ finish_reason: 'content_filter', message: { content: REFUSAL } }],
      output: [{ type: 'message', content: [{ type: 'output_text', text: REFUSAL }] }],
    });
  });
});

describe('openaiResponses.decodeStream', () => {
  const ev = (type: string, fields: Record<string, unknown>, n: number) => ({
    event: type,
    data: JSON.stringify({ type, sequence_number: n, ...fields }),
  });
  const created = {
    id: 'resp_s1',
    object: 'response',
    created_at: 1_741_290_958,
    status: 'in_progress',
    model: 'gpt-4.1-2025-04-14',
    output: [],
    usage: null,
  };

  it('reads text, function calls and the final usage of an OpenAI stream', async () => {
    const msg = { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant' };
    const fc = {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_x',
      name: 'lookup',
      arguments: '',
      status: 'in_progress',
    };
    const upstream = [
      ev('response.created', { response: created }, 0),
      ev('response.in_progress', { response: created }, 1),
      ev('response.output_item.added', { output_index: 0, item: { ...msg, content: [] } }, 2),
      ev(
        'response.content_part.added',
        {
          item_id: 'msg_1',
          output_index: 0,
          content_index: 0,
          part: { type: 'output_text', text: '' },
        },
        3,
      ),
      ev(
        'response.output_text.delta',
        { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi' },
        4,
      ),
      ev(
        'response.output_text.delta',
        { item_id: 'msg_1', output_index: 0, content_index: 0, delta: ' there' },
        5,
      ),
      ev(
        'response.output_text.done',
        { item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hi there' },
        6,
      ),
      ev('response.output_item.done', { output_index: 0, item: msg }, 7),
      ev('response.output_item.added', { output_index: 1, item: fc }, 8),
      ev(
        'response.function_call_arguments.delta',
        { item_id: 'fc_1', output_index: 1, delta: '{"q":' },
        9,
      ),
      ev(
        'response.function_call_arguments.delta',
        { item_id: 'fc_1', output_index: 1, delta: '1}' },
        10,
      ),
      ev(
        'response.function_call_arguments.done',
        { item_id: 'fc_1', output_index: 1, arguments: '{"q":1}' },
        11,
      ),
      ev(
        'response.completed',
        {
          response: {
            ...created,
            status: 'completed',
            usage: { input_tokens: 20, output_tokens: 8, total_tokens: 28 },
          },
        },
        12,
      ),
    ];
    expect(await collect(openaiResponses.decodeStream(iterate(upstream)))).toEqual([
      { type: 'start', id: 'resp_s1', model: 'gpt-4.1-2025-04-14', created: 1_741_290_958 },
      { type: 'text', text: 'Hi' },
      { type: 'text', text: ' there' },
      { type: 'tool_call_delta', index: 0, id: 'call_x', name: 'lookup', arguments: '' },
      { type: 'tool_call_delta', index: 0, arguments: '{"q":' },
      { type: 'tool_call_delta', index: 0, arguments: '1}' },
      { type: 'finish', finish: 'tool_calls', usage: { input_tokens: 20, output_tokens: 8 } },
    ]);
  });

  it('reads an incomplete ending as length, and fails on a failed response', async () => {
    const cut = [
      ev('response.created', { response: created }, 0),
      ev(
        'response.incomplete',
        {
          response: {
            ...created,
            status: 'incomplete',
            incomplete_details: { reason: 'max_output_tokens' },
          },
        },
        1,
      ),
    ];
    expect((await collect(openaiResponses.decodeStream(iterate(cut)))).at(-1)).toEqual({
      type: 'finish',
      finish: 'length',
      usage: null,
    });
    const failed = [
      ev('response.created', { response: created }, 0),
      ev(
        'response.failed',
        { response: { ...created, status: 'failed', error: { message: 'rate limited' } } },
        1,
      ),
    ];
    await expect(collect(openaiResponses.decodeStream(iterate(failed)))).rejects.toThrow(
      /rate limited/,
    );
  });

  it('gives back what the stream encoder wrote', async () => {
    const decoded = await collect(
      openaiResponses.decodeStream(iterate(sseMessagesOf(encodeStream(streamedAnswer)))),
    );
    expect(decoded[0]).toEqual({ type: 'start', ...meta });
    expect(decoded.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('')).toBe(
      'Checking both.',
    );
    const calls = decoded.filter((e) => e.type === 'tool_call_delta');
    expect(calls.filter((c) => c.id).map((c) => [c.index, c.id, c.name])).toEqual([
      [0, 'call_a', 'get_weather'],
      [1, 'call_b', 'get_time'],
    ]);
    const args = (i: number) =>
      calls
        .filter((c) => c.index === i)
        .map((c) => c.arguments)
        .join('');
    expect([args(0), args(1)]).toEqual(['{"city":"Paris"}', '{"tz":"CET"}']);
    expect(decoded.at(-1)).toEqual(streamedAnswer.at(-1));

    const blocked = await collect(
      openaiResponses.decodeStream(iterate(sseMessagesOf(encodeStream(blockedStream)))),
    );
    expect(blocked.at(-1)).toEqual({ type: 'finish', finish: 'content_filter', usage: null });
  });
});

describe('openaiResponses.streamEncoder', () => {
  it('writes the typed events in OpenAI order with increasing sequence numbers', () => {
    const frames = framesOf(encodeStream(streamedAnswer));
    expect(frames.map((f) => f.event)).toEqual([
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
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    frames.forEach((f, i) => {
      expect(f.data.type).toBe(f.event);
      expect(f.data.sequence_number).toBe(i);
    });
    expect(frames.at(-1)?.data.response).toMatchObject({
      id: meta.id,
      status: 'completed',
      choices: [{ finish_reason: 'tool_calls', message: { content: 'Checking both.' } }],
      usage: { total_tokens: 123, prompt_tokens: 36, completion_tokens: 87 },
    });
  });

  it('ends a truncated answer with response.incomplete', () => {
    const frames = framesOf(
      encodeStream([
        { type: 'start', ...meta },
        { type: 'text', text: 'Once upon' },
        { type: 'finish', finish: 'length', usage: null },
      ]),
    );
    expect(frames.at(-1)?.data).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
  });
});

describe('the official openai client reads what the encoders write', () => {
  let server: ScriptedHttpServer;
  let client: OpenAI;
  const params = { model: 'gpt-4.1-mini', input: 'Weather and time in Paris?' };

  beforeAll(async () => {
    server = await startScriptedHttpServer();
    client = new OpenAI({ apiKey: 'x', baseURL: `${server.url}/v1`, maxRetries: 0 });
  });
  afterAll(() => server.close());

  const answerJson = (body: unknown) =>
    server.answer({ contentType: 'application/json', body: JSON.stringify(body) });
  const answerStream = (events: (StreamEvent | BlockedEnding)[]) =>
    server.answer({
      contentType: openaiResponses.streamEncoder({ sse: true }).contentType,
      body: encodeStream(events),
    });

  it('responses.create: text and function calls', async () => {
    answerJson(openaiResponses.encodeResponse(answerWithTools));
    const response = await client.responses.create(params);
    expect(server.requests.at(-1)?.url).toBe('/v1/responses');
    expect(response.output_text).toBe('Checking both.');
    expect(response.status).toBe('completed');
    expect(
      response.output.flatMap((o) =>
        o.type === 'function_call' ? [[o.call_id, o.name, o.arguments]] : [],
      ),
    ).toEqual([
      ['call_a', 'get_weather', '{"city":"Paris"}'],
      ['call_b', 'get_time', '{"tz":"CET"}'],
    ]);
    expect(response.usage?.total_tokens).toBe(123);
  });

  it('responses.create: a blocked answer reads as the refusal', async () => {
    answerJson(openaiResponses.blockedResponse(meta, REFUSAL, null));
    const response = await client.responses.create(params);
    expect(response.output_text).toBe(REFUSAL);
    expect(response).toMatchObject({ choices: [{ finish_reason: 'content_filter' }] });
  });

  it('responses.create with stream: deltas, then response.completed with the whole answer', async () => {
    answerStream(streamedAnswer);
    const stream = await client.responses.create({ ...params, stream: true });
    let text = '';
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe('Checking both.');
    expect(completed?.status).toBe('completed');
    expect(completed?.output.map((o) => o.type)).toEqual([
      'message',
      'function_call',
      'function_call',
    ]);
  });

  it('responses.stream assembles the same answer, event by event', async () => {
    answerStream(streamedAnswer);
    const stream = client.responses.stream(params);
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['Checking ', 'both', '.']);
    expect(final.output_text).toBe('Checking both.');
    expect(
      final.output.flatMap((o) => (o.type === 'function_call' ? [[o.call_id, o.arguments]] : [])),
    ).toEqual([
      ['call_a', '{"city":"Paris"}'],
      ['call_b', '{"tz":"CET"}'],
    ]);
  });

  it('a blocked stream: the refusal as the last delta and in response.completed', async () => {
    answerStream(blockedStream);
    const stream = await client.responses.create({ ...params, stream: true });
    const deltas: string[] = [];
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') deltas.push(event.delta);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(deltas).toEqual(['Step one: ', REFUSAL]);
    expect(completed).toMatchObject({
      status: 'completed',
      choices: [{ finish_reason: 'content_filter' }],
    });

    answerStream(blockedStream);
    const final = await client.responses.stream(params).finalResponse();
    expect(final.output_text).toBe(`Step one: ${REFUSAL}`);
  });

  it('a call that comes without an id still streams, and a truncated answer ends cleanly', async () => {
    answerStream([
      { type: 'start', ...meta },
      { type: 'tool_call_delta', index: 0, name: 'lookup', arguments: '{}' },
      { type: 'text', text: 'and more' },
      { type: 'finish', finish: 'length', usage: null },
    ]);
    const final = await client.responses.stream(params).finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.output_text).toBe('and more');
    expect(final.output[0]).toMatchObject({ type: 'function_call', name: 'lookup' });
  });
});
