import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countActivities } from './support/activity-db.js';
import {
  client,
  makeOrg,
  startGuard,
  type Client,
  type GuardServer,
} from './support/guard-server.js';

let server: GuardServer;
let api: Client;
let other: Client;

beforeAll(async () => {
  server = await startGuard({
    env: { GUARD_MONITOR_MAX_MESSAGES: '5', GUARD_MONITOR_MAX_CHARS: '2000' },
  });
  api = client(server.url, server.adminKey);
  other = client(server.url, makeOrg(server, 'other').adminKey);
});
afterAll(async () => {
  await server?.stop();
});

describe('POST /guard/monitor input errors', () => {
  const bad: [string, unknown, (string | number)[]][] = [
    ['neither text nor messages', {}, ['body']],
    ['an empty messages array', { messages: [] }, ['body']],
    ['text of the wrong type', { text: 42 }, ['body', 'text']],
    [
      'a message with an unknown role',
      { messages: [{ role: 'robot', content: 'hi' }] },
      ['body', 'messages', 0, 'role'],
    ],
    [
      'content of the wrong type',
      { messages: [{ role: 'user', content: 7 }] },
      ['body', 'messages', 0, 'content'],
    ],
    [
      'an unknown reasoning mode',
      { text: 'hi', reasoning_mode: 'deep' },
      ['body', 'reasoning_mode'],
    ],
    ['policy_ids not an array', { text: 'hi', policy_ids: 'abc' }, ['body', 'policy_ids']],
    ['categories of the wrong shape', { text: 'hi', categories: 12 }, ['body', 'categories']],
  ];
  for (const [name, body, loc] of bad) {
    it(`answers 422 with the standard body for ${name}`, async () => {
      const before = countActivities(server.dataDir);
      const res = await api.post('/guard/monitor', body);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error: true, error_code: 'VALIDATION_ERROR' });
      expect(typeof res.body.message).toBe('string');
      expect(res.body.details[0].loc).toEqual(loc);
      expect(countActivities(server.dataDir)).toBe(before);
    });
  }

  it('answers 400 for malformed JSON', async () => {
    const res = await api.post('/guard/monitor', '{"text": "unterminated');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, error_code: 'BAD_REQUEST' });
  });

  it('enforces the message-count and text-size limits with a clear message', async () => {
    const many = Array.from({ length: 6 }, () => ({ role: 'user', content: 'hello' }));
    const res = await api.post('/guard/monitor', { messages: many });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/At most 5 messages/);
    const long = await api.post('/guard/monitor', { text: 'a'.repeat(2001) });
    expect(long.status).toBe(422);
    expect(long.body.details[0].loc).toEqual(['body', 'text']);
    expect(long.body.message).toMatch(/2000 characters/);
    const split = await api.post('/guard/monitor', {
      messages: [
        { role: 'user', content: 'a'.repeat(1500) },
        { role: 'user', content: [{ type: 'text', text: 'b'.repeat(600) }] },
      ],
    });
    expect(split.status).toBe(422);
  });

  it('answers 401 without a valid key', async () => {
    expect((await client(server.url, null).post('/guard/monitor', { text: 'hi' })).status).toBe(
      401,
    );
    expect(
      (await client(server.url, 'gk_nope').post('/guard/monitor', { text: 'hi' })).status,
    ).toBe(401);
  });

  it("answers 404 for an unknown policy id or another org's policy", async () => {
    const mine = (await api.post('/policies', { name: 'mine', categories: { a: 'No spam' } })).body;
    const unknown = await api.post('/guard/monitor', {
      text: 'hi',
      policy_id: 'ffffffffffffffffffffffff',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_code).toBe('NOT_FOUND');
    const theirs = await other.post('/guard/monitor', { text: 'hi', policy_id: mine.id });
    expect(theirs.status).toBe(404);
    const inList = await other.post('/guard/monitor', {
      text: 'hi',
      policy_ids: ['000000000000000000000001', mine.id],
    });
    expect(inList.status).toBe(404);
  });
});
