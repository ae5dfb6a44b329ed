import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local-engine.js';
import { createStubDetectors } from '../testing/stub-detectors.js';
import type { ScoreRequest, ScoreRule } from '../engine-types.js';
import { createJudgeClient, extractJsonObject } from './judge-client.js';

/**
 * A local stand-in for an OpenAI-compatible chat-completions server: it speaks the real wire
 * format, records requests, and answers with whatever the current test scripted.
 */
interface Recorded {
  path: string;
  headers: IncomingMessage['headers'];
  body: {
    model: string;
    messages: Array<{ role: string; content: string }>;
    response_format?: unknown;
    temperature?: number;
  };
}
type Script = (body: Recorded['body']) => {
  status?: number;
  delayMs?: number;
  content?: string;
  raw?: string;
  usage?: boolean;
};

let server: Server;
let baseUrl: string;
let script: Script;
const recorded: Recorded[] = [];

function completion(content: string, usage: boolean): string {
  return JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1,
    model: 'judge-test-1',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
    ...(usage ? { usage: { prompt_tokens: 100, completion_tokens: 42, total_tokens: 142 } } : {}),
  });
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(data) as Recorded['body'];
      recorded.push({ path: req.url ?? '', headers: req.headers, body });
      const s = script(body);
      const send = (): void => {
        if (res.destroyed) return;
        res.writeHead(s.status ?? 200, { 'content-type': 'application/json' });
        res.end(s.raw ?? completion(s.content ?? '', s.usage ?? true));
      };
      if (s.delayMs) setTimeout(send, s.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  recorded.length = 0;
  script = () => ({ content: '{"verdicts":[]}' });
});

/** Rule ids the judge was asked about, read back from the prompt we sent. */
function askedIds(r: Recorded): string[] {
  const user = r.body.messages.find((m) => m.role === 'user')?.content ?? '';
  return [...user.matchAll(/- id "([^"]+)"/g)].map((m) => m[1] ?? '');
}

const detectors = createStubDetectors({
  harm: {
    weapons: [
      { phrase: 'wpn-alpha score six', score: 0.6 },
      { phrase: 'wpn-alpha score nine', score: 0.95 },
    ],
    fraud: [{ phrase: 'frd-beta score four', score: 0.4 }],
  },
  jailbreak: [{ phrase: 'borderline persona', score: 0.3 }],
});
const WEAPONS: ScoreRule = {
  name: 'weapons',
  description: 'No weapons or explosives.',
  mode: 'block',
};
const FRAUD: ScoreRule = { name: 'fraud', description: 'No fraud or scams.', mode: 'block' };
const CODENAME: ScoreRule = {
  name: 'codename',
  description: 'Never say "Blue Harbor".',
  mode: 'block',
};

function req(text: string, over: Partial<ScoreRequest> = {}): ScoreRequest {
  return {
    messages: [{ role: 'user', content: text }],
    rules: [WEAPONS, FRAUD],
    thresholds: {
      pre_violation_threshold: 0.5,
      pre_jb_threshold: 0.5,
      post_violation_threshold: 0.5,
      post_violation_jb_threshold: 0.5,
    },
    mode: 'content_moderation',
    scanners_config: {},
    reasoning_mode: 'thinking',
    ...over,
  };
}

const engineWith = (timeoutMs = 2000) =>
  createLocalEngine({
    detectors,
    judge: { baseUrl, model: 'judge-test-1', apiKey: 'test-key', timeoutMs },
  });

describe('judge over the OpenAI chat-completions wire format', () => {
  it('thinking: asks about every rule and the jailbreak signal, and uses the verdicts', async () => {
    script = () => ({
      content: JSON.stringify({
        verdicts: [
          {
            id: '1',
            violated: false,
            score: 0.1,
            reasoning: 'Asks about museum history, not how to make anything.',
          },
          { id: '2', violated: true, score: 0.8, reasoning: 'Plans a scam.' },
          {
            id: 'jailbreak',
            violated: false,
            score: 0.05,
            reasoning: 'No attempt to change the rules.',
          },
        ],
      }),
    });
    const r = await engineWith().score(req('wpn-alpha score six; frd-beta score four'));
    expect(recorded).toHaveLength(1);
    const call = recorded[0];
    expect(call?.path).toBe('/v1/chat/completions');
    expect(call?.headers.authorization).toBe('Bearer test-key');
    expect(call?.body.model).toBe('judge-test-1');
    expect(call?.body.response_format).toEqual({ type: 'json_object' });
    expect(call && askedIds(call)).toEqual(['1', '2', 'jailbreak']);
    // Local said weapons 0.6 (violated) and fraud 0.4 (not): the judge reverses both.
    expect(r.violated_rules).toEqual([2]);
    expect(r.violation).toBe(0.8);
    expect(r.output_tokens).toBe(42);
    expect(r.reasoning).toContain('Plans a scam.');
    expect(r.reasoning).toContain("Judge on rule 1 'weapons': not violated");
    expect(r.scanner_output.judge).toMatchObject({
      consulted: true,
      ok: true,
      model: 'judge-test-1',
    });
  });

  it('hybrid: only uncertain rules go to the judge', async () => {
    script = () => ({
      content: '{"verdicts":[{"id":"2","violated":true,"score":0.7,"reasoning":"scam"}]}',
    });
    const r = await engineWith().score(
      req('wpn-alpha score nine; frd-beta score four', { reasoning_mode: 'hybrid' }),
    );
    expect(recorded.map(askedIds)).toEqual([['2']]);
    expect(r.violated_rules).toEqual([1, 2]);
    expect(r.violation).toBe(0.95);
  });

  it('hybrid: confident local scores never call the judge', async () => {
    const r = await engineWith().score(
      req('wpn-alpha score nine', { reasoning_mode: 'hybrid', rules: [WEAPONS] }),
    );
    expect(recorded).toHaveLength(0);
    expect(r.output_tokens).toBe(0);
    expect(r.reasoning).toContain('judge was not consulted');
  });

  it('hybrid: an uncertain jailbreak score is escalated too', async () => {
    script = () => ({
      content:
        '{"verdicts":[{"id":"jailbreak","violated":true,"score":0.9,"reasoning":"persona"}]}',
    });
    const r = await engineWith().score(
      req('borderline persona', { reasoning_mode: 'hybrid', rules: [] }),
    );
    expect(recorded.map(askedIds)).toEqual([['jailbreak']]);
    expect(r.violation).toBe(0.9);
    expect(r.violated_rule_descriptions.map((d) => d.name)).toEqual(['jailbreak']);
  });

  it('a judge cannot talk down an exact phrase match', async () => {
    script = () => ({
      content: '{"verdicts":[{"id":"1","violated":false,"score":0.0,"reasoning":"fine"}]}',
    });
    const r = await engineWith().score(req('we meet at blue harbor', { rules: [CODENAME] }));
    expect(r.violated_rules).toEqual([1]);
    expect(r.violation).toBe(0.95);
  });

  it('accepts fenced JSON and counts tokens when usage is missing', async () => {
    script = () => ({
      content: '```json\n{"verdicts":[{"id":"1","violated":true,"score":0.9}]}\n```',
      usage: false,
    });
    const r = await engineWith().score(req('wpn-alpha score six', { rules: [WEAPONS] }));
    expect(r.violated_rules).toEqual([1]);
    expect(r.output_tokens).toBeGreaterThan(5);
  });

  it('falls back to local scores on a timeout and says so', async () => {
    script = () => ({ delayMs: 1500, content: '{"verdicts":[]}' });
    const t0 = performance.now();
    const r = await engineWith(200).score(req('wpn-alpha score six; frd-beta score four'));
    expect(performance.now() - t0).toBeLessThan(1200);
    expect(r.error).toBe(false);
    expect(r.violated_rules).toEqual([1]);
    expect(r.violation).toBe(0.6);
    expect(r.reasoning).toContain('judge timed out after 200 ms');
    expect(r.scanner_output.judge).toMatchObject({ consulted: true, ok: false });
  });

  it.each([
    ['prose instead of JSON', { content: 'I think rule 1 is fine.' }, 'answer is not valid JSON'],
    [
      'JSON of the wrong shape',
      { content: '{"verdicts":[{"rule":1,"ok":"yes"}]}' },
      'do not match the expected schema',
    ],
    [
      'a score out of range',
      { content: '{"verdicts":[{"id":"1","violated":true,"score":7}]}' },
      'do not match the expected schema',
    ],
    ['a non-completion body', { raw: '{"hello":"world"}' }, 'not a chat completion'],
    ['an HTTP error', { status: 500, raw: '{"error":{"message":"boom"}}' }, 'HTTP 500'],
  ])('falls back to local scores on %s', async (_label, answer, message) => {
    script = () => answer;
    const r = await engineWith().score(req('wpn-alpha score six; frd-beta score four'));
    expect(r.error).toBe(false);
    expect(r.violated_rules).toEqual([1]);
    expect(r.reasoning).toContain(message);
    expect(r.reasoning).toContain('local scores were used');
  });

  it('keeps local scores for rules the judge skipped', async () => {
    script = () => ({ content: '{"verdicts":[{"id":"2","violated":true,"score":0.75}]}' });
    const r = await engineWith().score(req('wpn-alpha score six; frd-beta score four'));
    expect(r.violated_rules).toEqual([1, 2]);
    expect(r.reasoning).toContain('no verdict for 1');
  });

  it("propagates the caller's abort", async () => {
    script = () => ({ delayMs: 1000, content: '{"verdicts":[]}' });
    const ac = new AbortController();
    const p = engineWith(5000).score(req('wpn-alpha score six'), ac.signal);
    setTimeout(() => ac.abort(new Error('client went away')), 50);
    await expect(p).rejects.toThrow('client went away');
  });

  it('an unreachable judge is a fallback, not an error', async () => {
    const engine = createLocalEngine({
      detectors,
      judge: { baseUrl: 'http://127.0.0.1:9/v1', model: 'x', timeoutMs: 1000 },
    });
    const r = await engine.score(req('wpn-alpha score six'));
    expect(r.error).toBe(false);
    expect(r.reasoning).toMatch(/judge (unreachable|timed out)/);
  });

  it('the client can be used on its own and sends the checked side and decoded content', async () => {
    script = () => ({ content: '{"verdicts":[{"id":"a","violated":false}]}' });
    const judge = createJudgeClient({ baseUrl: `${baseUrl}/`, model: 'm', jsonMode: false });
    const out = await judge.evaluate({
      phase: 'output',
      transcript: '[user] hi',
      decoded: ['[base64] hidden words'],
      rules: [{ id: 'a', name: 'n', description: 'd' }],
      withReasoning: false,
    });
    expect(out.ok).toBe(true);
    if (out.ok)
      expect(out.verdicts.get('a')).toEqual({
        id: 'a',
        violated: false,
        score: 0.1,
        reasoning: '',
      });
    const prompt = recorded[0]?.body.messages[1]?.content ?? '';
    expect(prompt).toContain('final assistant turn');
    expect(prompt).toContain('hidden words');
    expect(recorded[0]?.body.response_format).toBeUndefined();
  });
});

describe('extractJsonObject', () => {
  it('reads bare, fenced and prose-wrapped objects', () => {
    expect(extractJsonObject('{"a":1}')).toEqual({ a: 1 });
    expect(extractJsonObject('```json\n{"a":1}\n```')).toEqual({ a: 1 });
    expect(extractJsonObject('Here you go: {"a":1} done')).toEqual({ a: 1 });
    expect(() => extractJsonObject('nothing here')).toThrow();
  });
});
