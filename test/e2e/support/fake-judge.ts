import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeJudge {
  url: string;
  requests: { model: string; messages: { role: string; content: string }[] }[];
  /** Milliseconds to wait before answering (to provoke the caller's timeout). */
  delayMs: number;
  close: () => Promise<void>;
}

/**
 * A local stand-in for an OpenAI-compatible judge model: POST /v1/chat/completions answering in
 * the real chat-completions wire shape. It finds every rule "- [id]" or `"id"` the prompt names
 * and says rule "1" is violated, the rest are not.
 */
export async function startFakeJudge(): Promise<FakeJudge> {
  const state: FakeJudge = { url: '', requests: [], delayMs: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as FakeJudge['requests'][number];
      state.requests.push(body);
      const prompt = body.messages.map((m) => m.content).join('\n');
      const ids = new Set<string>(['1', 'jailbreak']);
      for (const m of prompt.matchAll(/"id"\s*:\s*"([^"]+)"/g)) ids.add(m[1]!);
      const verdicts = [...ids].map((id) =>
        id === '1'
          ? {
              id,
              violated: true,
              score: 0.93,
              reasoning: 'fake judge: rule 1 is violated by this text',
            }
          : { id, violated: false, score: 0.02, reasoning: 'fake judge: fine' },
      );
      const content = JSON.stringify({ verdicts });
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-fake',
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
            usage: { prompt_tokens: 100, completion_tokens: 42, total_tokens: 142 },
          }),
        );
      }, state.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}
