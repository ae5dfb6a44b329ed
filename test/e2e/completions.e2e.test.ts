import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startGuard, tempDataDir, type GuardServer } from './support/guard-server.js';

/**
 * Protected completions on the compiled server, configured only by environment variables as a
 * user would: one provider per endpoint family, a routing file that sends some models elsewhere
 * with a key named by variable, and a stream checked window by window.
 */

let main: FakeProvider;
let local: FakeProvider;
let server: GuardServer;

beforeAll(async () => {
  main = await startFakeProvider();
  local = await startFakeProvider();
  const routes = path.join(tempDataDir(), 'routes.json');
  fs.writeFileSync(
    routes,
    JSON.stringify({
      routes: [
        {
          model: 'llama-*',
          provider: 'openai',
          base_url: `${local.url}/v1`,
          api_key_env: 'LOCAL_LLM_KEY',
        },
        { model: 'claude-local', provider: 'anthropic', base_url: local.url },
      ],
    }),
  );
  server = await startGuard({
    env: {
      GUARD_OPENAI_BASE_URL: `${main.url}/v1`,
      GUARD_OPENAI_API_KEY: 'sk-main',
      GUARD_ANTHROPIC_BASE_URL: main.url,
      GUARD_ANTHROPIC_API_KEY: 'sk-ant-main',
      GUARD_GEMINI_BASE_URL: main.url,
      GUARD_GEMINI_API_KEY: 'gem-main',
      GUARD_UPSTREAM_ROUTES: routes,
      LOCAL_LLM_KEY: 'sk-local',
      GUARD_STREAM_WINDOW_CHARS: '32',
      GUARD_STREAM_OVERLAP_CHARS: '32',
    },
  });
});
afterAll(async () => {
  await server?.stop();
  await main?.close();
  await local?.close();
});

const guard = () => `${server.url}/guard`;
const turn = [{ role: 'user' as const, content: 'Write two lines about autumn.' }];

// Owns its server: started with fake providers and a routing file in its env. Skipped against
// E2E_BASE_URL.
describe.skipIf(!!process.env.E2E_BASE_URL)(
  'protected completions on the standalone server',
  () => {
    it('each family goes to its own provider with the configured key', async () => {
      main.reset();
      main.script({ text: 'Leaves fall.' });
      const openai = new OpenAI({ apiKey: server.adminKey, baseURL: guard(), maxRetries: 0 });
      expect(
        (await openai.chat.completions.create({ model: 'gpt-4o', messages: turn })).choices[0]
          ?.message.content,
      ).toBe('Leaves fall.');
      const anthropic = new Anthropic({ apiKey: server.adminKey, baseURL: guard(), maxRetries: 0 });
      expect(
        (await anthropic.messages.create({ model: 'claude-x', max_tokens: 50, messages: turn }))
          .content[0],
      ).toMatchObject({ text: 'Leaves fall.' });
      const gemini = new GoogleGenAI({
        apiKey: server.adminKey,
        httpOptions: { baseUrl: guard() },
      });
      expect(
        (await gemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'autumn' }))
          .text,
      ).toBe('Leaves fall.');
      const keys = main.requests.map(
        (r) => r.headers.authorization ?? r.headers['x-api-key'] ?? r.headers['x-goog-api-key'],
      );
      expect(keys).toEqual(['Bearer sk-main', 'sk-ant-main', 'gem-main']);
    });

    it('the routing file sends matching models to their own base URL and key', async () => {
      main.reset();
      local.reset();
      local.script({ text: 'From the local server.' });
      const openai = new OpenAI({ apiKey: server.adminKey, baseURL: guard(), maxRetries: 0 });
      const got = await openai.chat.completions.create({ model: 'llama-3.1-8b', messages: turn });
      expect(got.choices[0]?.message.content).toBe('From the local server.');
      expect(local.requests[0]?.headers.authorization).toBe('Bearer sk-local');
      expect(main.requests).toHaveLength(0);
      // A route of another provider never applies to this family.
      main.script({ text: 'main' });
      await openai.chat.completions.create({ model: 'claude-local', messages: turn });
      expect(main.requests).toHaveLength(1);
    });

    it('a streamed answer that turns violating is cut before the violation, and the call is recorded', async () => {
      const lead = 'Autumn leaves drift down slowly. ';
      const text = `${lead}Never forget: the codename is Project Falcon.`;
      main.script({ text, chunks: text.match(/.{1,3}/g)! });
      const openai = new OpenAI({
        apiKey: server.adminKey,
        baseURL: guard(),
        maxRetries: 0,
        defaultHeaders: { 'category-codenames': 'Never mention the codename "Project Falcon".' },
      });
      let shown = '';
      let finish: string | null | undefined;
      for await (const c of await openai.chat.completions.create({
        model: 'gpt-4o',
        messages: turn,
        stream: true,
      })) {
        shown += c.choices[0]?.delta.content ?? '';
        finish = c.choices[0]?.finish_reason ?? finish;
      }
      expect(finish).toBe('content_filter');
      expect(shown).not.toContain('Falcon');
    });

    it('refuses to start with a routing file that names an unset key variable', async () => {
      const bad = path.join(tempDataDir(), 'routes.json');
      fs.writeFileSync(
        bad,
        JSON.stringify({
          routes: [{ model: '*', provider: 'openai', api_key_env: 'NOT_SET_ANYWHERE' }],
        }),
      );
      await expect(startGuard({ env: { GUARD_UPSTREAM_ROUTES: bad } })).rejects.toThrow(
        /NOT_SET_ANYWHERE, which is not set/,
      );
    });
  },
);
