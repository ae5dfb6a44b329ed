import type { SseMessage, UpstreamCall, UpstreamPort, UpstreamReply } from '@guard/domain';
import {
  failSpan,
  otelContext,
  otelTrace,
  SpanKind,
  tracer,
  tracingActive,
  type Span,
} from '@guard/platform/tracing';
import { isRecord } from './formats/openai-common.js';

/**
 * The upstream port with a client span per model call, named and described by OpenTelemetry's
 * gen_ai semantic conventions (`chat gpt-4o`, `gen_ai.request.model`, `gen_ai.usage.*`, ...). A
 * JSON answer is read for the response attributes; a stream's span lasts until the stream ends
 * (its usage is not read). Prompts and answers are never put on spans.
 */
export function tracedUpstream(upstream: UpstreamPort): UpstreamPort {
  return {
    send: (call) => {
      if (!tracingActive()) return upstream.send(call);
      const operation = call.surface === 'gemini' ? 'generate_content' : 'chat';
      const span = tracer().startSpan(`${operation} ${call.model}`, {
        kind: SpanKind.CLIENT,
        attributes: { ...requestAttributes(call), 'gen_ai.operation.name': operation },
      });
      return otelContext
        .with(otelTrace.setSpan(otelContext.active(), span), () => upstream.send(call))
        .then(
          (reply) => {
            if (reply.kind === 'json') {
              span.setAttributes(responseAttributes(reply.body));
              span.end();
              return reply;
            }
            return { kind: 'stream', events: endingWith(reply.events, span) } as UpstreamReply;
          },
          (err: unknown) => {
            failSpan(span, err);
            span.end();
            throw err;
          },
        );
    },
  };
}

const PROVIDER_NAMES: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
};

function requestAttributes(call: UpstreamCall): Record<string, string | number | boolean> {
  const provider = PROVIDER_NAMES[call.target.provider] ?? call.target.provider;
  const out: Record<string, string | number | boolean> = {
    'gen_ai.provider.name': provider,
    // The attribute older backends group by.
    'gen_ai.system': provider,
    'gen_ai.request.model': call.model,
    'guard.upstream.surface': call.surface,
    'guard.upstream.stream': call.stream,
  };
  try {
    const url = new URL(call.target.baseUrl);
    out['server.address'] = url.hostname;
    out['server.port'] = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  } catch {
    // An unparsable base URL fails the call itself; the span just lacks the address.
  }
  const body = call.body;
  const config = isRecord(body.generationConfig) ? body.generationConfig : body;
  const numeric: [string, unknown][] = [
    [
      'gen_ai.request.max_tokens',
      config.max_tokens ??
        config.max_completion_tokens ??
        config.max_output_tokens ??
        config.maxOutputTokens,
    ],
    ['gen_ai.request.temperature', config.temperature],
    ['gen_ai.request.top_p', config.top_p ?? config.topP],
  ];
  for (const [name, value] of numeric) if (typeof value === 'number') out[name] = value;
  return out;
}

/** What the providers' JSON answers say about the response: id, model, usage, finish reasons. */
function responseAttributes(body: unknown): Record<string, string | number | string[]> {
  const out: Record<string, string | number | string[]> = {};
  if (!isRecord(body)) return out;
  const id = body.id ?? body.responseId;
  if (typeof id === 'string') out['gen_ai.response.id'] = id;
  const model = body.model ?? body.modelVersion;
  if (typeof model === 'string') out['gen_ai.response.model'] = model;
  const usage = isRecord(body.usage)
    ? body.usage
    : isRecord(body.usageMetadata)
      ? body.usageMetadata
      : null;
  if (usage) {
    const input = usage.input_tokens ?? usage.prompt_tokens ?? usage.promptTokenCount;
    const output = usage.output_tokens ?? usage.completion_tokens ?? usage.candidatesTokenCount;
    if (typeof input === 'number') out['gen_ai.usage.input_tokens'] = input;
    if (typeof output === 'number') out['gen_ai.usage.output_tokens'] = output;
  }
  const reasons: string[] = [];
  if (typeof body.stop_reason === 'string') reasons.push(body.stop_reason);
  if (typeof body.status === 'string' && body.object === 'response') reasons.push(body.status);
  for (const choice of Array.isArray(body.choices) ? body.choices : []) {
    if (isRecord(choice) && typeof choice.finish_reason === 'string')
      reasons.push(choice.finish_reason);
  }
  for (const candidate of Array.isArray(body.candidates) ? body.candidates : []) {
    if (isRecord(candidate) && typeof candidate.finishReason === 'string') {
      reasons.push(candidate.finishReason);
    }
  }
  if (reasons.length > 0) out['gen_ai.response.finish_reasons'] = reasons;
  return out;
}

/** The stream's events, ending the span when the stream ends, fails or is abandoned. */
async function* endingWith(
  events: AsyncIterable<SseMessage>,
  span: Span,
): AsyncIterable<SseMessage> {
  try {
    yield* events;
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}
