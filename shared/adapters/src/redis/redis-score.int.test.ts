import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { SCORE_CONTRACT_VERSION, type ScoreClient, type ScoreRequest } from '@guard/domain';
import { createLogger } from '@guard/platform';
import { createDefaultEngine, ScoreDeadlineError } from '@guard/scoring';
import { freePort, startRedisServer, stopRedisServer } from '@guard/testing/redis-server';
import { A_BENIGN, A_JAILBREAK, aScoreRequest } from '@guard/testing/score-request';
import { ENVELOPE_FIELD, ScoreReplyEnvelope } from '@guard/contracts/score-envelope';
import { RedisScoreClient, type RedisScoreClientOptions } from './redis-score-client.js';
import { RedisScoreWorker, type RedisScoreWorkerOptions } from './redis-score-worker.js';
import { ScorerUnavailableError } from './scorer-unavailable-error.js';

// Every key of this file lives under its own prefix, so parallel files and runs never collide.
const prefix = `int:score:${process.pid}:${Date.now().toString(36)}:`;
const logger = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', logContent: false });
const engine = createDefaultEngine();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The real engine, counting its calls and optionally slowed down (a long request). */
function countingEngine(delayMs = 0, fail?: string): ScoreClient & { calls: number } {
  const counted = {
    calls: 0,
    async score(request: ScoreRequest, signal?: AbortSignal) {
      counted.calls++;
      if (fail) throw new Error(fail);
      if (delayMs > 0) await sleep(delayMs);
      signal?.throwIfAborted();
      return engine.score(request);
    },
  };
  return counted;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('scoring over Redis Streams (real server)', () => {
  let redisUrl: string;
  let redis: Redis;
  const clients: RedisScoreClient[] = [];
  const workers: RedisScoreWorker[] = [];
  let stream: string;
  let n = 0;

  const client = async (over: Partial<RedisScoreClientOptions> = {}) => {
    const c = new RedisScoreClient({
      redisUrl,
      timeoutMs: 5_000,
      requestStream: stream,
      replyStreamPrefix: `${prefix}reply:`,
      logger,
      ...over,
    });
    clients.push(c);
    await c.start();
    return c;
  };
  const worker = async (over: Partial<RedisScoreWorkerOptions> = {}) => {
    const w = new RedisScoreWorker({
      redisUrl,
      engine,
      logger,
      requestStream: stream,
      group: 'scorers',
      concurrency: 4,
      blockMs: 200,
      ...over,
    });
    workers.push(w);
    await w.start();
    return w;
  };

  beforeAll(async () => {
    redisUrl = inject('engines').redisUrl;
    redis = new Redis(redisUrl, { lazyConnect: true, protocol: 2 });
    await redis.connect();
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  beforeEach(() => {
    stream = `${prefix}requests:${++n}`;
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('scores a request through the stream with the result the engine gives in-process', async () => {
    const w = await worker();
    const c = await client();
    for (const text of [A_JAILBREAK, A_BENIGN]) {
      const request = aScoreRequest(text);
      expect(await c.score(request)).toEqual(await engine.score(request));
    }
    const flagged = await c.score(aScoreRequest(A_JAILBREAK));
    expect(flagged).toMatchObject({ error: false, alarm: true });
    expect((await c.score(aScoreRequest(A_BENIGN))).alarm).toBe(false);
    // Answered entries are acknowledged and deleted: the stream's length is the backlog.
    expect(await redis.xlen(stream)).toBe(0);
    expect(((await redis.xpending(stream, 'scorers')) as unknown[])[0]).toBe(0);
    expect(w.stats.scored).toBe(4);
    expect(c.ready()).toBe(true);
  });

  it('routes every reply to the client that asked, with two clients at once', async () => {
    await worker({ concurrency: 8 });
    const a = await client({ podId: 'pod-a' });
    const b = await client({ podId: 'pod-b' });
    expect(a.replyStream).not.toBe(b.replyStream);
    // Each request differs, so a reply routed to the wrong pod or the wrong call shows.
    const requestsOf = (who: string, base: string) =>
      Array.from({ length: 25 }, (_, i) => aScoreRequest(`${base} (${who} ${i})`));
    const forA = requestsOf('a', A_JAILBREAK);
    const forB = requestsOf('b', A_BENIGN);
    const [gotA, gotB] = await Promise.all([
      Promise.all(forA.map((r) => a.score(r))),
      Promise.all(forB.map((r) => b.score(r))),
    ]);
    expect(gotA).toEqual(await Promise.all(forA.map((r) => engine.score(r))));
    expect(gotB).toEqual(await Promise.all(forB.map((r) => engine.score(r))));
    expect(gotA.every((r) => r.alarm)).toBe(true);
    expect(gotB.some((r) => r.alarm)).toBe(false);
    expect([a.stats, b.stats].map((s) => [s.answered, s.unmatched, s.invalid])).toEqual([
      [25, 0, 0],
      [25, 0, 0],
    ]);
  });

  it('rejects with ScoreDeadlineError at the deadline when no scorer runs, and a scorer started later drops the expired requests', async () => {
    const c = await client({ timeoutMs: 300 });
    const started = Date.now();
    const results = await Promise.allSettled(
      [1, 2, 3].map((i) => c.score(aScoreRequest(`${A_BENIGN} ${i}`))),
    );
    const elapsed = Date.now() - started;
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect(r.status === 'rejected' && r.reason).toBeInstanceOf(ScoreDeadlineError);
    }
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1_500);
    expect(c.inFlight).toBe(0);

    // The caller's own signal ends the wait too, with its reason.
    const ac = new AbortController();
    const aborted = c.score(aScoreRequest(A_BENIGN), ac.signal);
    ac.abort(new Error('client went away'));
    await expect(aborted).rejects.toThrow('client went away');
    await sleep(350);

    // The requests are still queued; a scorer answers them as expired, without scoring.
    await waitFor('four queued', async () => (await redis.xlen(stream)) === 4);
    const counting = countingEngine();
    const w = await worker({ engine: counting });
    await waitFor('the queue to drain', async () => (await redis.xlen(stream)) === 0);
    expect(counting.calls).toBe(0);
    expect(w.stats.expired).toBe(4);
    await waitFor('the late replies', () => c.stats.unmatched === 4);
  });

  it('refuses with ScorerUnavailableError (SCORER_UNAVAILABLE, 503) once the backlog reaches maxQueue', async () => {
    const a = await client({ maxQueue: 5, timeoutMs: 1_000 });
    const b = await client({ maxQueue: 5, timeoutMs: 1_000 });
    const queued = [1, 2, 3].map((i) => a.score(aScoreRequest(`${A_BENIGN} ${i}`)));
    queued.push(...[4, 5].map((i) => b.score(aScoreRequest(`${A_BENIGN} ${i}`))));
    await waitFor('five queued requests', async () => (await redis.xlen(stream)) === 5);
    // The bound is the stream's, shared by every pod: neither client may add a sixth.
    for (const c of [a, b]) {
      const refused = await c.score(aScoreRequest(A_BENIGN)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ScorerUnavailableError);
      expect(refused).toMatchObject({
        code: 'SCORER_UNAVAILABLE',
        status: 503,
        details: { queued: 5, max_queue: 5 },
      });
    }
    expect(a.stats.refused + b.stats.refused).toBe(2);
    expect(await redis.xlen(stream)).toBe(5);
    // The queued ones were accepted: they wait for a scorer, here until their deadline.
    for (const r of await Promise.allSettled(queued)) {
      expect(r.status === 'rejected' && r.reason).toBeInstanceOf(ScoreDeadlineError);
    }
    // Once a scorer drains the queue, calls are taken again.
    await worker();
    await waitFor('the queue to drain', async () => (await redis.xlen(stream)) === 0);
    expect((await a.score(aScoreRequest(A_BENIGN))).error).toBe(false);
  });

  it('refuses with ScorerUnavailableError while Redis cannot be reached, and recovers when it is back', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const c = new RedisScoreClient({ redisUrl: url, timeoutMs: 3_000, requestStream: stream });
    clients.push(c);
    await expect(c.start()).rejects.toThrow();
    const started = Date.now();
    await expect(c.score(aScoreRequest(A_BENIGN))).rejects.toBeInstanceOf(ScorerUnavailableError);
    expect(Date.now() - started).toBeLessThan(200);

    // Redis comes up (here a private one, which this test can stop): the same client and a
    // worker work without being made again.
    let server = startRedisServer(port);
    try {
      await waitFor('the client to reconnect', () => c.ready(), 15_000);
      const w = await worker({ redisUrl: url });
      expect((await c.score(aScoreRequest(A_JAILBREAK))).alarm).toBe(true);

      // Redis restarts, losing everything (no persistence): the stream, the group, the script.
      await stopRedisServer(server);
      await waitFor('the client to see Redis gone', () => !c.ready());
      await expect(c.score(aScoreRequest(A_BENIGN))).rejects.toBeInstanceOf(ScorerUnavailableError);
      await waitFor('the worker to report not ready', () => !w.ready());
      server = startRedisServer(port);
      await waitFor('the client to reconnect', () => c.ready(), 15_000);
      await waitFor('the worker to rejoin', async () => {
        if (!w.ready()) return false;
        return (await c.score(aScoreRequest(A_BENIGN)).then((r) => !r.error)) === true;
      });
      expect((await c.score(aScoreRequest(A_JAILBREAK))).alarm).toBe(true);
    } finally {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await stopRedisServer(server);
    }
  }, 45_000);

  it('answers an envelope of another version, or one it cannot read, with an error and goes on', async () => {
    const w = await worker();
    const replyTo = `${prefix}reply:manual`;
    const add = (body: unknown) =>
      redis.xadd(
        stream,
        '*',
        ENVELOPE_FIELD,
        typeof body === 'string' ? body : JSON.stringify(body),
      );
    await add({
      v: SCORE_CONTRACT_VERSION + 1,
      id: 'future-1',
      reply_to: replyTo,
      deadline_ms: Date.now() + 5_000,
      request: { whatever: 'a later release sends' },
    });
    await add('not json at all');
    await add({
      v: SCORE_CONTRACT_VERSION,
      id: 'bad-1',
      reply_to: replyTo,
      deadline_ms: Date.now() + 5_000,
      request: { messages: 'no' },
    });
    await waitFor('two replies', async () => (await redis.xlen(replyTo)) === 2);
    const replies = (await redis.xrange(replyTo, '-', '+')).map(([, fields]) =>
      ScoreReplyEnvelope.parse(JSON.parse(fields[1]!)),
    );
    expect(replies.map((r) => [r.id, !r.ok && r.error.code])).toEqual([
      ['future-1', 'unsupported_version'],
      ['bad-1', 'invalid_request'],
    ]);
    expect(await redis.pttl(replyTo)).toBeGreaterThan(0);
    expect(w.stats.unreadable).toBe(1);
    // Nothing left behind, and the worker still scores.
    expect(await redis.xlen(stream)).toBe(0);
    const c = await client();
    expect((await c.score(aScoreRequest(A_JAILBREAK))).alarm).toBe(true);
  });

  it('hands a scoring failure to the caller as an error result, not a clean pass', async () => {
    await worker({ engine: countingEngine(0, 'detector weights missing') });
    const c = await client();
    const result = await c.score(aScoreRequest(A_JAILBREAK));
    expect(result).toMatchObject({
      error: true,
      error_message: 'detector weights missing',
      violation: 0,
      phase: 'input',
    });
  });

  it('takes over what a silent consumer left pending: answers those within their deadline, drops expired ones', async () => {
    const c = await client({ timeoutMs: 8_000 });
    // Create the group, then let a consumer that never answers take two live requests and one
    // already past its deadline.
    await redis.xgroup('CREATE', stream, 'scorers', '0', 'MKSTREAM');
    const live = [A_JAILBREAK, A_BENIGN].map((t) => c.score(aScoreRequest(t)));
    await redis.xadd(
      stream,
      '*',
      ENVELOPE_FIELD,
      JSON.stringify({
        v: SCORE_CONTRACT_VERSION,
        id: 'expired-1',
        reply_to: `${prefix}reply:gone`,
        deadline_ms: Date.now() - 1,
        request: aScoreRequest(A_BENIGN),
      }),
    );
    await waitFor('three queued', async () => (await redis.xlen(stream)) === 3);
    const taken = await redis.xreadgroup(
      'GROUP',
      'scorers',
      'silent',
      'COUNT',
      10,
      'STREAMS',
      stream,
      '>',
    );
    expect(taken?.[0]?.[1]).toHaveLength(3);

    const w = await worker({ claimIdleMs: 300 });
    const [jailbreak, benign] = await Promise.all(live);
    expect(jailbreak).toMatchObject({ error: false, alarm: true });
    expect(benign).toMatchObject({ error: false, alarm: false });
    await waitFor('the queue to drain', async () => (await redis.xlen(stream)) === 0);
    expect(w.stats).toMatchObject({ reclaimed: 3, scored: 2, droppedExpired: 1 });
    expect(await redis.exists(`${prefix}reply:gone`)).toBe(0);
  });

  it('scores a request once even when it takes longer than claimIdleMs, with two scorers', async () => {
    const slow = countingEngine(1_200);
    const other = countingEngine();
    await worker({ engine: slow, claimIdleMs: 300, consumer: 'slow' });
    const c = await client();
    const pending = c.score(aScoreRequest(A_JAILBREAK));
    await waitFor('the slow scorer to start', () => slow.calls === 1);
    const w2 = await worker({ engine: other, claimIdleMs: 300, consumer: 'other' });
    expect((await pending).alarm).toBe(true);
    // The slow scorer kept its entry alive (XCLAIM heartbeat): the other never took it.
    expect(other.calls).toBe(0);
    expect(w2.stats.reclaimed).toBe(0);
    expect(c.stats.unmatched).toBe(0);
  });

  it('stops gracefully: answers and acknowledges what it holds, then takes nothing more', async () => {
    const slow = countingEngine(400);
    const w = await worker({ engine: slow });
    const c = await client({ timeoutMs: 1_500 });
    const pending = [1, 2, 3].map((i) => c.score(aScoreRequest(`${A_JAILBREAK} ${i}`)));
    await waitFor('three in progress', () => slow.calls === 3);
    expect(w.ready()).toBe(true);
    const stopping = w.stop();
    expect(w.ready()).toBe(false);
    for (const r of await Promise.all(pending)) expect(r).toMatchObject({ error: false });
    await stopping;
    expect(((await redis.xpending(stream, 'scorers')) as unknown[])[0]).toBe(0);
    // A request after the stop waits for another scorer.
    const late = await c.score(aScoreRequest(A_BENIGN)).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(ScoreDeadlineError);
    expect(slow.calls).toBe(3);
  }, 20_000);
});
