import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SseMessage } from '@guard/domain';

/** What the server answers every request with, until told otherwise. */
export interface ScriptedAnswer {
  status?: number;
  contentType: string;
  body: string;
}

export interface ScriptedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  body: unknown;
}

/**
 * A local HTTP server answering with exactly the bytes a test gives it: what an official SDK is
 * pointed at to show that it reads the wire a format encoder writes.
 */
export interface ScriptedHttpServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  requests: ScriptedRequest[];
  answer(a: ScriptedAnswer): void;
  close(): Promise<void>;
}

export async function startScriptedHttpServer(): Promise<ScriptedHttpServer> {
  let current: ScriptedAnswer = {
    status: 500,
    contentType: 'text/plain',
    body: 'no answer scripted',
  };
  const requests: ScriptedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // Kept as text.
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', body });
      res.writeHead(current.status ?? 200, { 'content-type': current.contentType });
      res.end(current.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer(a) {
      current = a;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Server-sent events as a reader of the upstream connection hands them over. */
export function sseMessagesOf(text: string): SseMessage[] {
  const out: SseMessage[] = [];
  for (const block of text.split(/\r\n\r\n|\n\n|\r\r/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length)
      out.push(event !== undefined ? { event, data: data.join('\n') } : { data: data.join('\n') });
  }
  return out;
}

export async function* iterate<T>(items: T[]): AsyncIterable<T> {
  for (const item of items) yield await Promise.resolve(item);
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
