import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { createParser } from 'eventsource-parser';
import {
  UpstreamFailure,
  type ProviderKind,
  type SseMessage,
  type UpstreamCall,
  type UpstreamPort,
  type UpstreamReply,
} from '@guard/domain';

export interface HttpUpstreamOptions {
  /** How long to wait for the provider's response headers (ms). */
  headersTimeoutMs: number;
  /** Longest silence allowed between two pieces of a response body (ms). */
  bodyTimeoutMs: number;
  /** Kept-alive connections per provider origin. */
  connections?: number | undefined;
}

/** Anthropic's API refuses calls without a version; the SDKs send this one unless told otherwise. */
const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

function trimSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

/** The provider's URL for a call, following each SDK's idea of a base URL. */
export function upstreamUrl(call: UpstreamCall): string {
  const base = trimSlash(call.target.baseUrl);
  switch (call.surface) {
    case 'chat':
      return `${base}/chat/completions`;
    case 'responses':
      return `${base}/responses`;
    case 'messages':
      return `${base}/v1/messages`;
    case 'gemini': {
      const model = encodeURIComponent(call.model).replace(/%2F/gi, '/');
      const path =
        model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`;
      return call.stream
        ? `${base}/v1beta/${path}:streamGenerateContent?alt=sse`
        : `${base}/v1beta/${path}:generateContent`;
    }
  }
}

function authHeaders(provider: ProviderKind, key: string | null): Record<string, string> {
  if (key === null) return {};
  switch (provider) {
    case 'openai':
      return { authorization: `Bearer ${key}` };
    case 'anthropic':
      return { 'x-api-key': key };
    case 'gemini':
      return { 'x-goog-api-key': key };
  }
}

/** The message a provider put in its error body, whichever of the three shapes it used. */
export function providerErrorMessage(body: unknown): string | null {
  if (typeof body !== 'object' || body === null)
    return typeof body === 'string' && body ? body.slice(0, 500) : null;
  const err = (body as { error?: unknown }).error;
  if (typeof err === 'object' && err !== null) {
    const m = (err as { message?: unknown }).message;
    if (typeof m === 'string') return m;
  }
  const m = (body as { message?: unknown }).message;
  return typeof m === 'string' ? m : null;
}

async function readBody(
  body: Dispatcher.ResponseData['body'],
  contentType: string,
): Promise<unknown> {
  const text = await body.text();
  if (contentType.includes('json') || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/** Server-sent events off a response body, parsed by eventsource-parser; stops the body when the reader stops. */
async function* sseMessages(body: Dispatcher.ResponseData['body']): AsyncGenerator<SseMessage> {
  const queue: SseMessage[] = [];
  const parser = createParser({
    onEvent: (e) => queue.push(e.event ? { event: e.event, data: e.data } : { data: e.data }),
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (queue.length) yield queue.shift()!;
    }
    parser.feed(decoder.decode());
    parser.reset({ consume: true });
    while (queue.length) yield queue.shift()!;
  } finally {
    // A reader that stops early (a blocked stream, a client gone) closes the connection to the provider.
    if (!body.destroyed) body.destroy();
  }
}

/** The upstream port over HTTP (undici, kept-alive connections per origin). */
export function createHttpUpstream(
  opts: HttpUpstreamOptions,
): UpstreamPort & { close(): Promise<void> } {
  const agent = new Agent({
    connections: opts.connections ?? 128,
    headersTimeout: opts.headersTimeoutMs,
    bodyTimeout: opts.bodyTimeoutMs,
    keepAliveTimeout: 30_000,
  });
  return {
    async send(call: UpstreamCall): Promise<UpstreamReply> {
      const provider = call.target.provider;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        ...call.headers,
        ...authHeaders(provider, call.target.apiKey),
      };
      if (provider === 'anthropic' && !headers['anthropic-version'])
        headers['anthropic-version'] = DEFAULT_ANTHROPIC_VERSION;
      const url = upstreamUrl(call);
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method: 'POST',
          headers,
          body: JSON.stringify(call.body),
          signal: call.signal,
          dispatcher: agent,
        });
      } catch (err) {
        if (call.signal.aborted) throw err;
        const why =
          err instanceof undiciErrors.HeadersTimeoutError
            ? `no answer within ${opts.headersTimeoutMs} ms`
            : err instanceof Error
              ? err.message
              : String(err);
        throw new UpstreamFailure(
          provider,
          null,
          `${provider} upstream could not be reached: ${why}`,
        );
      }
      const contentType = String(res.headers['content-type'] ?? '');
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const body = await readBody(res.body, contentType).catch(() => null);
        const detail = providerErrorMessage(body) ?? `HTTP ${res.statusCode}`;
        throw new UpstreamFailure(
          provider,
          res.statusCode,
          `${provider} upstream answered ${res.statusCode}: ${detail}`,
          body,
        );
      }
      if (call.stream) {
        if (!contentType.includes('text/event-stream')) {
          const body = await readBody(res.body, contentType).catch(() => null);
          throw new UpstreamFailure(
            provider,
            res.statusCode,
            `${provider} upstream answered a streamed call with ${contentType || 'no content type'}, not an event stream`,
            body,
          );
        }
        return { kind: 'stream', events: sseMessages(res.body) };
      }
      const body = await readBody(res.body, contentType).catch((err: unknown) => {
        throw new UpstreamFailure(
          provider,
          res.statusCode,
          `${provider} upstream body could not be read: ${String(err)}`,
        );
      });
      if (typeof body !== 'object' || body === null)
        throw new UpstreamFailure(
          provider,
          res.statusCode,
          `${provider} upstream answered something that is not JSON`,
          body,
        );
      return { kind: 'json', body };
    },
    close: () => agent.close(),
  };
}
