import { GoogleGenAI } from '@google/genai';
import type { CanonicalResponse, StreamEvent } from '@guard/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collect,
  iterate,
  sseMessagesOf,
  startScriptedHttpServer,
  type ScriptedHttpServer,
} from '../../testing/scripted-http-server.js';
import { gemini } from './gemini.js';
import { encodeWith, validationIssues } from '../../testing/wire-kit.js';

const BLOCK_MESSAGE = "Sorry, I can't help with that.";
const BLOCKED_RATING = {
  category: 'HARM_CATEGORY_DANGEROUS_CONTENT',
  probability: 'HIGH',
  blocked: true,
};

const answer: CanonicalResponse = {
  id: 'lEXqaK3XD8rZz7IPvJnR-Ag',
  model: 'gemini-2.5-flash',
  created: 1_760_000_000,
  text: 'Let me check the weather in Paris.',
  // Gemini's calls carry no id on the wire: read back, they are numbered.
  tool_calls: [
    { id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
  ],
  finish: 'tool_calls',
  usage: { input_tokens: 412, output_tokens: 57 },
};

const streamed: StreamEvent[] = [
  { type: 'start', id: answer.id, model: answer.model, created: answer.created },
  { type: 'text', text: 'Let me check ' },
  { type: 'text', text: 'the weather ' },
  { type: 'text', text: 'in Paris.' },
  { type: 'tool_call_delta', index: 0, id: 'call_abc', name: 'get_weather', arguments: '' },
  { type: 'tool_call_delta', index: 0, arguments: '{"city":' },
  { type: 'tool_call_delta', index: 0, arguments: '"Paris"}' },
  {
    type: 'tool_call_delta',
    index: 1,
    id: 'call_def',
    name: 'get_time',
    arguments: '{"tz":"Europe/Paris"}',
  },
  { type: 'finish', finish: 'tool_calls', usage: { input_tokens: 412, output_tokens: 57 } },
];

function encodeStream(events: StreamEvent[], opts: { sse: boolean; blocked?: string }): string {
  const ending =
    opts.blocked === undefined
      ? []
      : [{ type: 'blocked' as const, message: opts.blocked, usage: null }];
  return encodeWith(gemini, [...events, ...ending], { sse: opts.sse });
}

function validationLocs(body: unknown, ctx = { model: 'gemini-2.5-flash' }): (string | number)[][] {
  return validationIssues(() => gemini.parseRequest(body, ctx)).map((i) => i.loc);
}

describe('gemini: requests', () => {
  const request = {
    systemInstruction: { parts: [{ text: 'You are a travel agent.' }] },
    contents: [
      {
        role: 'user',
        parts: [
          { text: 'What is the weather where this photo was taken?' },
          { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } },
        ],
      },
      {
        role: 'model',
        parts: [
          { text: 'Let me check.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: { name: 'get_weather', response: { temperature: 18, sky: 'clear' } },
          },
          {
            fileData: {
              mimeType: 'application/pdf',
              fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc',
            },
          },
          { text: 'Thanks! And tomorrow?' },
        ],
      },
    ],
    tools: [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: {
              type: 'OBJECT',
              properties: { city: { type: 'STRING' } },
              required: ['city'],
            },
          },
        ],
      },
      { googleSearch: {} },
    ],
    generationConfig: {
      temperature: 0.2,
      maxOutputTokens: 512,
      thinkingConfig: { thinkingBudget: 0 },
    },
    safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
    policy_id: 'a'.repeat(24),
    moderate_before: true,
    monitor_details: true,
    metadata: { session: 's-1' },
  };

  it('maps the conversation as the scorer reads it', () => {
    const call = gemini.parseRequest(request, { model: 'gemini-2.5-flash', stream: true });
    expect(call.model).toBe('gemini-2.5-flash');
    expect(call.stream).toBe(true);
    expect(call.messages).toEqual([
      { role: 'system', content: 'You are a travel agent.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is the weather where this photo was taken?' },
          { type: 'image' },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Let me check.' }],
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      {
        role: 'tool',
        name: 'get_weather',
        tool_call_id: 'call_0',
        content: '{"temperature":18,"sky":"clear"}',
      },
      {
        role: 'user',
        content: [{ type: 'file' }, { type: 'text', text: 'Thanks! And tomorrow?' }],
      },
    ]);
    expect(call.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: {
          type: 'OBJECT',
          properties: { city: { type: 'STRING' } },
          required: ['city'],
        },
      },
    ]);
  });

  it('reads the guard fields, metadata included, and forwards everything else unchanged', () => {
    const call = gemini.parseRequest(request, { model: 'gemini-2.5-flash' });
    expect(call.stream).toBe(false);
    expect(call.guard).toEqual({
      policy_id: 'a'.repeat(24),
      moderate_before: true,
      monitor_details: true,
      metadata: { session: 's-1' },
    });
    const {
      policy_id: _p,
      moderate_before: _m,
      monitor_details: _d,
      metadata: _md,
      ...forwarded
    } = request;
    expect(call.upstreamBody).toEqual(forwarded);
  });

  it('reads the snake_case spelling of the REST samples, lone parts included', () => {
    const call = gemini.parseRequest(
      {
        system_instruction: { parts: { text: 'You are a cat. Your name is Neko.' } },
        contents: [
          {
            parts: [
              { text: 'Hello there' },
              { inline_data: { mime_type: 'audio/mp3', data: 'SUQz' } },
            ],
          },
        ],
      },
      { model: 'gemini-2.5-flash' },
    );
    expect(call.messages).toEqual([
      { role: 'system', content: 'You are a cat. Your name is Neko.' },
      { role: 'user', content: [{ type: 'text', text: 'Hello there' }, { type: 'audio' }] },
    ]);
  });

  it('refuses what Gemini refuses, naming the field', () => {
    const contents = [{ role: 'user', parts: [{ text: 'Hi' }] }];
    expect(validationLocs({})).toEqual([['body', 'contents']]);
    expect(validationLocs({ contents: [] })).toEqual([['body', 'contents']]);
    expect(validationLocs({ contents: [{ role: 'assistant', parts: [{ text: 'Hi' }] }] })).toEqual([
      ['body', 'contents', 0, 'role'],
    ]);
    expect(validationLocs({ contents: [{ role: 'user' }] })).toEqual([
      ['body', 'contents', 0, 'parts'],
    ]);
    expect(
      validationLocs({ contents: [{ role: 'user', parts: [{ text: 'ok' }, { text: 3 }] }] }),
    ).toEqual([['body', 'contents', 0, 'parts', 1, 'text']]);
    expect(
      validationLocs({
        contents: [{ role: 'model', parts: [{ functionCall: { args: { city: 'Paris' } } }] }],
      }),
    ).toEqual([['body', 'contents', 0, 'parts', 0, 'functionCall', 'name']]);
    expect(
      validationLocs({ contents, tools: [{ functionDeclarations: [{ description: 'x' }] }] }),
    ).toEqual([['body', 'tools', 0, 'functionDeclarations', 0, 'name']]);
    expect(validationLocs({ contents }, { model: '' })).toEqual([['path', 'model']]);
  });
});

describe('gemini: answers from the provider', () => {
  it('decodes an answer with text and a function call', () => {
    const decoded = gemini.decodeResponse({
      candidates: [
        {
          content: {
            parts: [
              { text: 'Weighing the request…', thought: true },
              { text: 'I will look it up. ' },
              { text: 'One moment.' },
              {
                functionCall: { name: 'get_weather', args: { city: 'Paris' } },
                thoughtSignature: 'CiIBVKhc7l5m',
              },
            ],
            role: 'model',
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 20,
        candidatesTokenCount: 30,
        thoughtsTokenCount: 12,
        totalTokenCount: 62,
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'mAitaLmkHPPlz7IP1ZnR8Ac',
    });
    expect(decoded).toEqual({
      id: 'mAitaLmkHPPlz7IP1ZnR8Ac',
      model: 'gemini-2.5-flash',
      created: expect.any(Number),
      text: 'I will look it up. One moment.',
      // Thoughts are not the answer, but the caller sees them: they are checked with it.
      reasoning: 'Weighing the request…',
      tool_calls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      finish: 'tool_calls',
      usage: { input_tokens: 20, output_tokens: 42 },
    });
  });

  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['OTHER', 'stop'],
  ])('reads finishReason %s as %s', (finishReason, finish) => {
    const decoded = gemini.decodeResponse({
      candidates: [{ content: { parts: [{ text: 'x' }], role: 'model' }, finishReason }],
    });
    expect(decoded.finish).toBe(finish);
  });

  it('reads a blocked prompt (no candidate at all) as content_filter', () => {
    const decoded = gemini.decodeResponse({
      promptFeedback: { blockReason: 'SAFETY', safetyRatings: [BLOCKED_RATING] },
      usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
      modelVersion: 'gemini-2.5-flash',
    });
    expect(decoded).toMatchObject({
      text: '',
      finish: 'content_filter',
      usage: { input_tokens: 9, output_tokens: 0 },
    });
    expect(decoded.id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('decodes a real event stream: text pieces, then a whole function call', async () => {
    const chunks = [
      {
        candidates: [{ content: { parts: [{ text: 'The weather' }], role: 'model' }, index: 0 }],
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
        modelVersion: 'gemini-2.0-flash',
        responseId: 'r-1',
      },
      {
        candidates: [{ content: { parts: [{ text: ' is mild.' }], role: 'model' }, index: 0 }],
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
        modelVersion: 'gemini-2.0-flash',
        responseId: 'r-1',
      },
      {
        candidates: [
          {
            content: {
              parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
              role: 'model',
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 14, totalTokenCount: 23 },
        modelVersion: 'gemini-2.0-flash',
        responseId: 'r-1',
      },
    ];
    const wire = chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
    const events = await collect(gemini.decodeStream(iterate(sseMessagesOf(wire))));
    expect(events).toEqual([
      { type: 'start', id: 'r-1', model: 'gemini-2.0-flash', created: expect.any(Number) },
      { type: 'text', text: 'The weather' },
      { type: 'text', text: ' is mild.' },
      {
        type: 'tool_call_delta',
        index: 0,
        id: 'call_0',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      { type: 'finish', finish: 'tool_calls', usage: { input_tokens: 9, output_tokens: 14 } },
    ]);
  });

  it('fails the stream with the provider message on an error chunk', async () => {
    const wire =
      'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}],"responseId":"r"}\r\n\r\n' +
      'data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}\r\n\r\n';
    await expect(collect(gemini.decodeStream(iterate(sseMessagesOf(wire))))).rejects.toThrow(
      /overloaded/,
    );
  });

  it('fails a stream cut before its finishReason instead of reporting it complete', async () => {
    const wire =
      'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}],"responseId":"r"}\r\n\r\n';
    await expect(collect(gemini.decodeStream(iterate(sseMessagesOf(wire))))).rejects.toThrow(
      /finishReason/,
    );
  });
});

describe('gemini: what the guard answers', () => {
  it('encodes an answer in camelCase that decodes back to itself', () => {
    const body = gemini.encodeResponse(answer);
    expect(body).toEqual({
      candidates: [
        {
          content: {
            parts: [
              { text: answer.text },
              { functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } } },
            ],
            role: 'model',
          },
          finishReason: 'STOP',
          index: 0,
          safetyRatings: [],
        },
      ],
      usageMetadata: { promptTokenCount: 412, candidatesTokenCount: 57, totalTokenCount: 469 },
      modelVersion: answer.model,
      responseId: answer.id,
    });
    expect(gemini.decodeResponse(body)).toEqual({ ...answer, created: expect.any(Number) });
  });

  it('refuses with SAFETY, blocked ratings and the block message as the only part', () => {
    const body = gemini.blockedResponse(
      { id: 'r-b', model: 'gemini-2.5-flash', created: 1 },
      BLOCK_MESSAGE,
      null,
    );
    expect(body).toEqual({
      candidates: [
        {
          content: { parts: [{ text: BLOCK_MESSAGE }], role: 'model' },
          finishReason: 'SAFETY',
          index: 0,
          safetyRatings: [BLOCKED_RATING],
        },
      ],
      promptFeedback: { safetyRatings: [BLOCKED_RATING] },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r-b',
    });
    expect(gemini.decodeResponse(body)).toMatchObject({
      text: BLOCK_MESSAGE,
      finish: 'content_filter',
    });
  });

  it('streams function calls whole, and decodes back to the same answer', async () => {
    const wire = encodeStream(streamed, { sse: true });
    const chunks = sseMessagesOf(wire).map((m) => JSON.parse(m.data));
    expect(chunks.map((c) => c.candidates[0].content.parts)).toEqual([
      [{ text: 'Let me check ' }],
      [{ text: 'the weather ' }],
      [{ text: 'in Paris.' }],
      [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
      [{ functionCall: { name: 'get_time', args: { tz: 'Europe/Paris' } } }],
    ]);
    expect(chunks.at(-1)).toMatchObject({
      candidates: [{ finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 412, candidatesTokenCount: 57, totalTokenCount: 469 },
    });
    const decoded = await collect(gemini.decodeStream(iterate(sseMessagesOf(wire))));
    expect(decoded).toEqual([
      { ...streamed[0], created: expect.any(Number) },
      ...streamed.slice(1, 4),
      {
        type: 'tool_call_delta',
        index: 0,
        id: 'call_0',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      {
        type: 'tool_call_delta',
        index: 1,
        id: 'call_1',
        name: 'get_time',
        arguments: '{"tz":"Europe/Paris"}',
      },
      streamed.at(-1),
    ]);
  });

  it('without alt=sse, streams one JSON array written piece by piece', () => {
    const enc = gemini.streamEncoder({ sse: false });
    expect(enc.contentType).toBe('application/json');
    const pieces = [...streamed.map((e) => enc.event(e)), enc.end()];
    expect(pieces[0]).toBe('');
    expect(pieces[1]!.startsWith('[{')).toBe(true);
    expect(pieces[2]!.startsWith(',\r\n{')).toBe(true);
    expect(pieces.at(-1)).toBe(']');
    const array = JSON.parse(pieces.join(''));
    expect(array).toHaveLength(5);
    expect(array.map((c: any) => c.candidates[0].finishReason ?? null)).toEqual([
      null,
      null,
      null,
      null,
      'STOP',
    ]);
  });

  it('without alt=sse, a stream blocked before any output is still a JSON array', () => {
    const wire = encodeStream([streamed[0]!], { sse: false, blocked: BLOCK_MESSAGE });
    expect(JSON.parse(wire)).toEqual([
      expect.objectContaining({
        candidates: [expect.objectContaining({ finishReason: 'SAFETY' })],
      }),
    ]);
  });

  it('drops a function call that a block cut short', () => {
    const wire = encodeStream(streamed.slice(0, 6), { sse: true, blocked: BLOCK_MESSAGE });
    const chunks = sseMessagesOf(wire).map((m) => JSON.parse(m.data));
    expect(chunks.at(-1)).toMatchObject({
      candidates: [
        {
          content: { parts: [{ text: BLOCK_MESSAGE }] },
          finishReason: 'SAFETY',
          safetyRatings: [BLOCKED_RATING],
        },
      ],
    });
    expect(JSON.stringify(chunks)).not.toContain('functionCall');
  });
});

describe('gemini: the official SDK reads what the guard writes', () => {
  let server: ScriptedHttpServer;
  let ai: GoogleGenAI;

  beforeAll(async () => {
    server = await startScriptedHttpServer();
    ai = new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: server.url } });
  });
  afterAll(() => server.close());

  const answerJson = (body: Record<string, unknown>) =>
    server.answer({ contentType: 'application/json', body: JSON.stringify(body) });
  const answerStream = (events: StreamEvent[], blocked?: string) =>
    server.answer({
      contentType: 'text/event-stream',
      body: encodeStream(events, { sse: true, blocked }),
    });

  it('models.generateContent reads the text and the function calls', async () => {
    answerJson(gemini.encodeResponse({ ...answer, tool_calls: [], finish: 'stop' }));
    const res = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Weather in Paris?',
    });
    // @google/genai 3 asks /v1 unless told `apiVersion: 'v1beta'`; the wire is the same.
    expect(server.requests.at(-1)?.url).toMatch(
      /^\/v1(beta)?\/models\/gemini-2\.5-flash:generateContent$/,
    );
    expect(res.text).toBe(answer.text);
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 412, candidatesTokenCount: 57 });
    expect(res.responseId).toBe(answer.id);

    answerJson(gemini.encodeResponse({ ...answer, text: '' }));
    const withCall = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Weather in Paris?',
    });
    expect(withCall.functionCalls).toEqual([
      { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } },
    ]);
  });

  it('models.generateContent reads a refusal: SAFETY and the block message', async () => {
    answerJson(
      gemini.blockedResponse(
        { id: 'r-b', model: 'gemini-2.5-flash', created: 1 },
        BLOCK_MESSAGE,
        null,
      ),
    );
    const res = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Something bad',
    });
    expect(res.text).toBe(BLOCK_MESSAGE);
    expect(res.candidates?.[0]?.finishReason).toBe('SAFETY');
    expect(res.candidates?.[0]?.safetyRatings?.[0]?.blocked).toBe(true);
  });

  it('models.generateContentStream reads every chunk: text, then whole function calls', async () => {
    answerStream(streamed);
    const stream = await ai.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'Weather in Paris?',
    });
    let text = '';
    const calls: unknown[] = [];
    let finishReason: string | undefined;
    for await (const chunk of stream) {
      // `.text` warns on a chunk holding a function call, as it does against Google.
      if (chunk.functionCalls) calls.push(...chunk.functionCalls);
      else text += chunk.text ?? '';
      finishReason = chunk.candidates?.[0]?.finishReason ?? finishReason;
    }
    expect(server.requests.at(-1)?.url).toMatch(
      /^\/v1(beta)?\/models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse$/,
    );
    expect(text).toBe('Let me check the weather in Paris.');
    expect(calls).toEqual([
      { name: 'get_weather', args: { city: 'Paris' } },
      { name: 'get_time', args: { tz: 'Europe/Paris' } },
    ]);
    expect(finishReason).toBe('STOP');
  });

  it('models.generateContentStream reads a stream cut by a block', async () => {
    answerStream(streamed.slice(0, 3), BLOCK_MESSAGE);
    const stream = await ai.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'Something bad',
    });
    const texts: string[] = [];
    let last: any;
    for await (const chunk of stream) {
      texts.push(chunk.text ?? '');
      last = chunk;
    }
    expect(texts).toEqual(['Let me check ', 'the weather ', BLOCK_MESSAGE]);
    expect(last.candidates[0].finishReason).toBe('SAFETY');
    expect(last.candidates[0].safetyRatings[0].blocked).toBe(true);
  });
});
