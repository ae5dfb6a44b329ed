import Anthropic from '@anthropic-ai/sdk';
import type { CanonicalResponse, StreamEvent } from '@guard/domain';
import { ValidationError } from '@guard/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collect,
  iterate,
  sseMessagesOf,
  startScriptedHttpServer,
  type ScriptedHttpServer,
} from '../../testing/scripted-http-server.js';
import { anthropicMessages } from './anthropic-messages.js';
import { encodeWith, validationIssues } from '../../testing/wire-kit.js';

const BLOCK_MESSAGE = "Sorry, I can't help with that.";

const answer: CanonicalResponse = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  model: 'claude-sonnet-4-5',
  created: 1_760_000_000,
  text: 'Let me check the weather in Paris.',
  tool_calls: [
    {
      id: 'toolu_01A09q90qw90lq917835lq9',
      name: 'get_weather',
      arguments: '{"city":"Paris","unit":"celsius"}',
    },
  ],
  finish: 'tool_calls',
  usage: { input_tokens: 412, output_tokens: 57 },
};

const streamed: StreamEvent[] = [
  { type: 'start', id: answer.id, model: answer.model, created: answer.created },
  { type: 'text', text: 'Let me check ' },
  { type: 'text', text: 'the weather ' },
  { type: 'text', text: 'in Paris.' },
  { type: 'tool_call_delta', index: 0, id: 'toolu_01A', name: 'get_weather', arguments: '' },
  { type: 'tool_call_delta', index: 0, arguments: '{"city":' },
  { type: 'tool_call_delta', index: 0, arguments: '"Paris"}' },
  {
    type: 'tool_call_delta',
    index: 1,
    id: 'toolu_01B',
    name: 'get_time',
    arguments: '{"tz":"Europe/Paris"}',
  },
  { type: 'finish', finish: 'tool_calls', usage: { input_tokens: 412, output_tokens: 57 } },
];

/** A stream folded into the answer it tells: what a client ends up with. */
function fold(events: StreamEvent[]) {
  let meta: { id: string; model: string } | null = null;
  let text = '';
  const calls: { id?: string | undefined; name?: string | undefined; arguments: string }[] = [];
  let finish: unknown = null;
  for (const e of events) {
    if (e.type === 'start') meta = { id: e.id, model: e.model };
    else if (e.type === 'text') text += e.text;
    else if (e.type === 'tool_call_delta') {
      const c = (calls[e.index] ??= { arguments: '' });
      c.id ??= e.id;
      c.name ??= e.name;
      c.arguments += e.arguments;
    } else finish = { finish: e.finish, usage: e.usage };
  }
  return { meta, text, calls, finish };
}

function encodeStream(events: StreamEvent[], blocked?: string): string {
  const ending =
    blocked === undefined ? [] : [{ type: 'blocked' as const, message: blocked, usage: null }];
  return encodeWith(anthropicMessages, [...events, ...ending]);
}

function validationLocs(body: unknown): (string | number)[][] {
  return validationIssues(() => anthropicMessages.parseRequest(body, {})).map((i) => i.loc);
}

describe('anthropic messages: requests', () => {
  const request = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    temperature: 0.2,
    thinking: { type: 'enabled', budget_tokens: 2000 },
    system: [
      { type: 'text', text: 'You are a travel agent.', cache_control: { type: 'ephemeral' } },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        input_schema: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
      },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ],
    messages: [
      {
        role: 'user',
        content: [
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
          },
          { type: 'text', text: 'What is the weather where this photo was taken?' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: [{ type: 'text', text: '18°C, clear' }],
          },
          {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'itinerary' },
          },
          { type: 'text', text: 'Thanks! And tomorrow?' },
        ],
      },
    ],
    metadata: { user_id: 'user-42' },
    policy_id: 'a'.repeat(24),
    moderate_before: true,
    monitor_details: true,
    stream: true,
  };

  it('maps the conversation as the scorer reads it', () => {
    const call = anthropicMessages.parseRequest(request, {});
    expect(call.model).toBe('claude-sonnet-4-5');
    expect(call.stream).toBe(true);
    expect(call.messages).toEqual([
      { role: 'system', content: 'You are a travel agent.' },
      {
        role: 'user',
        content: [
          { type: 'image' },
          { type: 'text', text: 'What is the weather where this photo was taken?' },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Let me check.' }],
        tool_calls: [
          {
            id: 'toolu_01',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01', content: [{ type: 'text', text: '18°C, clear' }] },
      {
        role: 'user',
        content: [{ type: 'document' }, { type: 'text', text: 'Thanks! And tomorrow?' }],
      },
    ]);
    expect(call.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
      },
      { name: 'web_search' },
    ]);
  });

  it('reads the guard fields and forwards everything else unchanged', () => {
    const call = anthropicMessages.parseRequest(request, {});
    expect(call.guard).toEqual({
      policy_id: 'a'.repeat(24),
      moderate_before: true,
      monitor_details: true,
      metadata: { user_id: 'user-42' },
    });
    const { policy_id: _p, moderate_before: _m, monitor_details: _d, ...forwarded } = request;
    expect(call.upstreamBody).toEqual(forwarded);
    expect(call.upstreamBody).toHaveProperty('metadata', { user_id: 'user-42' });
  });

  it('takes a plain string system prompt and string contents', () => {
    const call = anthropicMessages.parseRequest(
      {
        model: 'claude-haiku-4-5',
        max_tokens: 5,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Hi' }],
      },
      {},
    );
    expect(call.stream).toBe(false);
    expect(call.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('refuses what Anthropic refuses, naming the field', () => {
    const base = {
      model: 'claude-sonnet-4-5',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Hi' }],
    };
    expect(validationLocs({ model: 'claude-sonnet-4-5', messages: base.messages })).toEqual([
      ['body', 'max_tokens'],
    ]);
    expect(validationLocs({ ...base, max_tokens: 0 })).toEqual([['body', 'max_tokens']]);
    expect(validationLocs({ ...base, max_tokens: 1.5 })).toEqual([['body', 'max_tokens']]);
    expect(validationLocs({ ...base, messages: [] })).toEqual([['body', 'messages']]);
    expect(validationLocs({ ...base, messages: [{ role: 'system', content: 'Hi' }] })).toEqual([
      ['body', 'messages', 0, 'role'],
    ]);
    expect(
      validationLocs({
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'ok' },
              { type: 'text', text: 7 },
            ],
          },
        ],
      }),
    ).toEqual([['body', 'messages', 0, 'content', 1, 'text']]);
    expect(
      validationLocs({
        ...base,
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', input: {} }] },
        ],
      }),
    ).toEqual([['body', 'messages', 0, 'content', 0, 'name']]);
    expect(validationLocs({ ...base, tools: [{ name: 'get_weather' }] })).toEqual([
      ['body', 'tools', 0, 'input_schema'],
    ]);
  });

  it('says what was wrong in words a user can act on', () => {
    try {
      anthropicMessages.parseRequest(
        { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] },
        {},
      );
      expect.unreachable();
    } catch (err) {
      expect((err as ValidationError).issues).toEqual([
        { loc: ['body', 'max_tokens'], msg: 'Field required', type: 'missing' },
      ]);
    }
  });
});

describe('anthropic messages: answers from the provider', () => {
  it('decodes a message with text and tool use', () => {
    const decoded = anthropicMessages.decodeResponse({
      id: 'msg_01Aq9w938a90dw8q',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [
        { type: 'thinking', thinking: 'The user wants weather.', signature: 'sig' },
        { type: 'text', text: 'I will look it up. ' },
        { type: 'text', text: 'One moment.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 0,
        output_tokens: 30,
      },
    });
    expect(decoded).toEqual({
      id: 'msg_01Aq9w938a90dw8q',
      model: 'claude-sonnet-4-5-20250929',
      created: expect.any(Number),
      text: 'I will look it up. One moment.',
      // Thinking is not the answer, but the caller sees it: it is checked with it.
      reasoning: 'The user wants weather.',
      tool_calls: [{ id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      finish: 'tool_calls',
      usage: { input_tokens: 120, output_tokens: 30 },
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ])('reads stop_reason %s as %s', (stopReason, finish) => {
    const decoded = anthropicMessages.decodeResponse({
      id: 'msg_1',
      model: 'claude-haiku-4-5',
      content: [{ type: 'text', text: 'x' }],
      stop_reason: stopReason,
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    expect(decoded.finish).toBe(finish);
  });

  it('decodes a real event stream: text, then a tool call in input_json pieces', async () => {
    const wire = [
      'event: message_start',
      'data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}}',
      '',
      'event: content_block_start',
      'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
      '',
      'event: ping',
      'data: {"type": "ping"}',
      '',
      'event: content_block_delta',
      'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, let\'s check"}}',
      '',
      'event: content_block_delta',
      'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the weather."}}',
      '',
      'event: content_block_stop',
      'data: {"type":"content_block_stop","index":0}',
      '',
      'event: content_block_start',
      'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}',
      '',
      'event: content_block_delta',
      'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}',
      '',
      'event: content_block_delta',
      'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"location\\":"}}',
      '',
      'event: content_block_delta',
      'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \\"San Francisco, CA\\"}"}}',
      '',
      'event: content_block_stop',
      'data: {"type":"content_block_stop","index":1}',
      '',
      'event: message_delta',
      'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}',
      '',
      'event: message_stop',
      'data: {"type":"message_stop"}',
      '',
      '',
    ].join('\n');
    const events = await collect(anthropicMessages.decodeStream(iterate(sseMessagesOf(wire))));
    expect(events).toEqual([
      {
        type: 'start',
        id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
        model: 'claude-sonnet-4-5',
        created: expect.any(Number),
      },
      { type: 'text', text: "Okay, let's check" },
      { type: 'text', text: ' the weather.' },
      {
        type: 'tool_call_delta',
        index: 0,
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        arguments: '',
      },
      { type: 'tool_call_delta', index: 0, arguments: '{"location":' },
      { type: 'tool_call_delta', index: 0, arguments: ' "San Francisco, CA"}' },
      { type: 'finish', finish: 'tool_calls', usage: { input_tokens: 472, output_tokens: 89 } },
    ]);
  });

  it('fails the stream with the provider message on an error event', async () => {
    const wire =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}\n\n' +
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    await expect(
      collect(anthropicMessages.decodeStream(iterate(sseMessagesOf(wire)))),
    ).rejects.toThrow(/Overloaded/);
  });

  it('fails a stream cut before message_stop instead of reporting it complete', async () => {
    const wire =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}\n\n' +
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n';
    await expect(
      collect(anthropicMessages.decodeStream(iterate(sseMessagesOf(wire)))),
    ).rejects.toThrow(/message_stop/);
  });
});

describe('anthropic messages: what the guard answers', () => {
  it('encodes an answer that decodes back to itself', () => {
    const body = anthropicMessages.encodeResponse(answer);
    expect(body).toEqual({
      id: answer.id,
      type: 'message',
      role: 'assistant',
      model: answer.model,
      content: [
        { type: 'text', text: answer.text },
        {
          type: 'tool_use',
          id: 'toolu_01A09q90qw90lq917835lq9',
          name: 'get_weather',
          input: { city: 'Paris', unit: 'celsius' },
        },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 412, output_tokens: 57 },
    });
    expect(anthropicMessages.decodeResponse(body)).toEqual({
      ...answer,
      created: expect.any(Number),
    });
  });

  it('sends unparsable tool arguments as an empty input object', () => {
    const body = anthropicMessages.encodeResponse({
      ...answer,
      tool_calls: [{ id: 'toolu_x', name: 'f', arguments: '{"city": "Par' }],
    });
    expect((body.content as any[])[1].input).toEqual({});
  });

  it('refuses with stop_reason content_filter and the block message as the only text', () => {
    const body = anthropicMessages.blockedResponse(
      { id: 'msg_blocked', model: 'claude-sonnet-4-5', created: 1 },
      BLOCK_MESSAGE,
      null,
    );
    expect(body).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: BLOCK_MESSAGE }],
      stop_reason: 'content_filter',
      usage: { input_tokens: 0, output_tokens: 0 },
    });
  });

  it('streams in the order Anthropic does, and decodes back to the same answer', async () => {
    const wire = encodeStream(streamed);
    expect(sseMessagesOf(wire).map((m) => m.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    // Each frame's `event:` name is its payload's type, as in Anthropic's streams.
    for (const m of sseMessagesOf(wire)) expect(JSON.parse(m.data).type).toBe(m.event);
    const decoded = await collect(anthropicMessages.decodeStream(iterate(sseMessagesOf(wire))));
    expect(fold(decoded)).toEqual(fold(streamed));
  });

  it('ends a blocked stream with the block message and content_filter', async () => {
    const wire = encodeStream(streamed.slice(0, 2), BLOCK_MESSAGE);
    const decoded = await collect(anthropicMessages.decodeStream(iterate(sseMessagesOf(wire))));
    expect(fold(decoded)).toMatchObject({
      text: `Let me check ${BLOCK_MESSAGE}`,
      finish: { finish: 'content_filter' },
    });
  });
});

describe('anthropic messages: the official SDK reads what the guard writes', () => {
  let server: ScriptedHttpServer;
  let client: Anthropic;
  const params = {
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
  };

  beforeAll(async () => {
    server = await startScriptedHttpServer();
    client = new Anthropic({ apiKey: 'x', baseURL: server.url, maxRetries: 0 });
  });
  afterAll(() => server.close());

  const answerJson = (body: Record<string, unknown>) =>
    server.answer({ contentType: 'application/json', body: JSON.stringify(body) });
  const answerStream = (events: StreamEvent[], blocked?: string) =>
    server.answer({ contentType: 'text/event-stream', body: encodeStream(events, blocked) });

  it('messages.create reads the answer: text, tool_use input, stop reason, usage', async () => {
    answerJson(anthropicMessages.encodeResponse(answer));
    const msg = await client.messages.create(params);
    expect(server.requests.at(-1)?.url).toBe('/v1/messages');
    expect(msg.id).toBe(answer.id);
    expect(msg.content).toEqual([
      { type: 'text', text: answer.text },
      {
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
        input: { city: 'Paris', unit: 'celsius' },
      },
    ]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ input_tokens: 412, output_tokens: 57 });
  });

  it('messages.create reads a refusal: content_filter and the block message', async () => {
    answerJson(
      anthropicMessages.blockedResponse(
        { id: 'msg_b', model: 'claude-sonnet-4-5', created: 1 },
        BLOCK_MESSAGE,
        null,
      ),
    );
    const msg = await client.messages.create(params);
    expect(msg.stop_reason as string).toBe('content_filter');
    expect(msg.content).toEqual([{ type: 'text', text: BLOCK_MESSAGE }]);
  });

  it('messages.create with stream: true yields every event in order', async () => {
    answerStream(streamed);
    const stream = await client.messages.create({ ...params, stream: true });
    const types: string[] = [];
    let text = '';
    let json = '';
    let stopReason: string | null = null;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
        text += event.delta.text;
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
        json += event.delta.partial_json;
      if (event.type === 'message_delta') stopReason = event.delta.stop_reason;
    }
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(text).toBe('Let me check the weather in Paris.');
    expect(json).toBe('{"city":"Paris"}{"tz":"Europe/Paris"}');
    expect(stopReason).toBe('tool_use');
  });

  it('messages.stream().finalMessage() assembles the answer with its tool calls', async () => {
    answerStream(streamed);
    const msg = await client.messages.stream(params).finalMessage();
    expect(msg.id).toBe(answer.id);
    expect(msg.content).toEqual([
      { type: 'text', text: 'Let me check the weather in Paris.' },
      { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: { tz: 'Europe/Paris' } },
    ]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage).toMatchObject({ input_tokens: 412, output_tokens: 57 });
  });

  it('messages.stream().finalMessage() reads a stream cut by a block', async () => {
    answerStream(streamed.slice(0, 3), BLOCK_MESSAGE);
    const stream = client.messages.stream(params);
    const msg = await stream.finalMessage();
    expect(msg.stop_reason as string).toBe('content_filter');
    expect(msg.content).toEqual([
      { type: 'text', text: `Let me check the weather ${BLOCK_MESSAGE}` },
    ]);
  });

  it('messages.stream().finalMessage() reads a stream blocked in the middle of a tool call', async () => {
    answerStream(streamed.slice(0, 6), BLOCK_MESSAGE);
    const msg = await client.messages.stream(params).finalMessage();
    expect(msg.stop_reason as string).toBe('content_filter');
    expect(msg.content.at(-1)).toEqual({ type: 'text', text: BLOCK_MESSAGE });
  });

  it('messages.stream().finalMessage() reads a stream blocked before any output', async () => {
    answerStream([], BLOCK_MESSAGE);
    const msg = await client.messages.stream(params).finalMessage();
    expect(msg.stop_reason as string).toBe('content_filter');
    expect(msg.content).toEqual([{ type: 'text', text: BLOCK_MESSAGE }]);
  });
});
