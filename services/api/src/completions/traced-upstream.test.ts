import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  UpstreamFailure,
  type SseMessage,
  type UpstreamCall,
  type UpstreamPort,
  type UpstreamReply,
} from '@guard/domain';
import { createLogger } from '@guard/platform';
import { inSpan, startTracing, type Tracing } from '@guard/platform/tracing';
import { tracedUpstream } from './traced-upstream.js';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
beforeAll(async () => {
  const logger = createLogger({ level: 'silent', logContent: false, name: 'test' });
  tracing = await startTracing({ serviceName: 'guard-api', defaultOn: true, logger, exporter });
});
afterAll(() => tracing.shutdown());
beforeEach(() => exporter.reset());

function call(over: Partial<UpstreamCall> = {}): UpstreamCall {
  return {
    target: { provider: 'openai', baseUrl: 'http://models.internal:9000/v1', apiKey: 'sk-secret' },
    surface: 'chat',
    model: 'gpt-4o-mini',
    body: {
      model: 'gpt-4o-mini',
      max_tokens: 64,
      temperature: 0.2,
      messages: [{ role: 'user', content: 'a private prompt' }],
    },
    stream: false,
    headers: {},
    signal: new AbortController().signal,
    ...over,
  };
}

const answering = (reply: UpstreamReply): UpstreamPort => ({ send: async () => reply });

describe('tracedUpstream', () => {
  it('describes an OpenAI chat call with the gen_ai conventions, inside the caller span', async () => {
    const upstream = tracedUpstream(
      answering({
        kind: 'json',
        body: {
          id: 'chatcmpl-1',
          model: 'gpt-4o-mini-2024-07-18',
          choices: [{ finish_reason: 'stop', message: { content: 'a private answer' } }],
          usage: { prompt_tokens: 12, completion_tokens: 5 },
        },
      }),
    );
    await inSpan('POST /guard/chat/completions', {}, () => upstream.send(call()));
    const [client, server] = exporter.getFinishedSpans();
    expect(client!.name).toBe('chat gpt-4o-mini');
    expect(client!.kind).toBe(2); // CLIENT
    expect(client!.parentSpanContext?.spanId).toBe(server!.spanContext().spanId);
    expect(client!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 5,
      'server.address': 'models.internal',
      'server.port': 9000,
    });
    // Neither texts nor keys on the span.
    const all = JSON.stringify(client!.attributes);
    expect(all).not.toContain('private');
    expect(all).not.toContain('sk-secret');
  });

  it('reads Anthropic and Gemini answers', async () => {
    await tracedUpstream(
      answering({
        kind: 'json',
        body: {
          id: 'msg_1',
          model: 'claude-x',
          stop_reason: 'end_turn',
          usage: { input_tokens: 3, output_tokens: 4 },
        },
      }),
    ).send(
      call({
        target: { provider: 'anthropic', baseUrl: 'https://api.anthropic.com', apiKey: null },
        surface: 'messages',
        model: 'claude-x',
      }),
    );
    await tracedUpstream(
      answering({
        kind: 'json',
        body: {
          responseId: 'r1',
          modelVersion: 'gemini-2.5-flash',
          candidates: [{ finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 8 },
        },
      }),
    ).send(
      call({
        target: {
          provider: 'gemini',
          baseUrl: 'https://generativelanguage.googleapis.com',
          apiKey: null,
        },
        surface: 'gemini',
        model: 'gemini-2.5-flash',
        body: { generationConfig: { maxOutputTokens: 32, topP: 0.9 } },
      }),
    );
    const [anthropic, gemini] = exporter.getFinishedSpans();
    expect(anthropic!.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.usage.input_tokens': 3,
      'gen_ai.usage.output_tokens': 4,
      'server.port': 443,
    });
    expect(gemini!.name).toBe('generate_content gemini-2.5-flash');
    expect(gemini!.attributes).toMatchObject({
      'gen_ai.provider.name': 'gcp.gemini',
      'gen_ai.request.max_tokens': 32,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.response.id': 'r1',
      'gen_ai.response.finish_reasons': ['STOP'],
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.output_tokens': 8,
    });
  });

  it('ends a stream span when the stream ends, not when its headers arrive', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    async function* events(): AsyncIterable<SseMessage> {
      yield { data: '{"a":1}' } as SseMessage;
      await gate;
      yield { data: '[DONE]' } as SseMessage;
    }
    const reply = await tracedUpstream(answering({ kind: 'stream', events: events() })).send(
      call({ stream: true }),
    );
    expect(reply.kind).toBe('stream');
    const seen: SseMessage[] = [];
    const reading = (async () => {
      for await (const e of (reply as { events: AsyncIterable<SseMessage> }).events) seen.push(e);
    })();
    await new Promise((r) => setTimeout(r, 20));
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    release();
    await reading;
    expect(seen).toHaveLength(2);
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });

  it('marks a failed call as an error and passes the failure on', async () => {
    const failing: UpstreamPort = {
      send: async () => {
        throw new UpstreamFailure('openai', 429, 'rate limited');
      },
    };
    await expect(tracedUpstream(failing).send(call())).rejects.toThrow('rate limited');
    const [span] = exporter.getFinishedSpans();
    expect(span!.status).toEqual({ code: 2, message: 'rate limited' });
  });
});
