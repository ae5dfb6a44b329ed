import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ScoreResult } from '@guard/domain';
import { RedisScoreClient } from '@guard/adapters/redis/redis-score-client';
import { A_BENIGN, A_JAILBREAK, aScoreRequest } from '@guard/testing/score-request';
import { freePort } from '@guard/testing/redis-server';
import { exitOf, spawnRole, waitUntilReady, type RoleProcess } from '@guard/testing/role-process';

// Every key of this file lives under its own prefix, so parallel files and runs never collide.
const prefix = `int:scorer:${process.pid}:${Date.now().toString(36)}:`;
const stream = `${prefix}requests`;
const mainTs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.ts');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Scorer = RoleProcess & { port: number };

/** The scorer role as a process of its own (from source, as the ingester's test does). */
async function startScorer(redisUrl: string): Promise<Scorer> {
  const port = await freePort();
  const role = spawnRole('scorer', mainTs, {
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL: redisUrl,
    GUARD_SCORE_REQUEST_STREAM: stream,
    GUARD_SCORER_CONCURRENCY: '4',
    // From source there is no compiled thread module: score on the main thread.
    GUARD_SCORE_THREADS: '0',
    GUARD_SCORER_CLAIM_IDLE_MS: '1000',
  });
  return { ...role, port };
}

const waitReady = (s: Scorer) => waitUntilReady(s, `http://127.0.0.1:${s.port}/readyz`);

/** Pending entries per consumer of the group (XPENDING summary form). */
async function pendingByConsumer(redis: Redis): Promise<Map<string, number>> {
  const summary = (await redis.xpending(stream, 'scorers')) as [
    number,
    string | null,
    string | null,
    [string, string][] | null,
  ];
  return new Map((summary[3] ?? []).map(([name, count]) => [name, Number(count)]));
}

describe('scorer role (processes on real Redis)', () => {
  let redisUrl: string;
  let redis: Redis;
  const scorers: Scorer[] = [];
  const clients: RedisScoreClient[] = [];

  beforeAll(async () => {
    redisUrl = inject('engines').redisUrl;
    redis = new Redis(redisUrl, { lazyConnect: true, protocol: 2 });
    await redis.connect();
  });

  afterAll(async () => {
    for (const s of scorers) if (s.child.exitCode === null && !s.child.signalCode) s.child.kill();
    await Promise.all(scorers.map((s) => exitOf(s.child)));
    await Promise.all(clients.map((c) => c.close()));
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('answers every request of a steady load while one of two scorers is SIGKILLed; what it held is taken over', async () => {
    const [a, b] = await Promise.all([startScorer(redisUrl), startScorer(redisUrl)]);
    scorers.push(a!, b!);
    await Promise.all([waitReady(a!), waitReady(b!)]);
    expect((await fetch(`http://127.0.0.1:${a!.port}/healthz`)).status).toBe(200);
    const victim = a!;
    const survivor = b!;

    for (const pod of ['pod-1', 'pod-2']) {
      const c = new RedisScoreClient({
        redisUrl,
        timeoutMs: 20_000,
        requestStream: stream,
        replyStreamPrefix: `${prefix}reply:`,
        podId: pod,
      });
      clients.push(c);
      await c.start();
    }

    // 300 requests over about 3 s from two clients, alternating one the engine flags and one it
    // passes (each a little different), long enough that a scorer always holds a few.
    const total = 300;
    const garden =
      ' The garden behind the house had apple trees, a small pond and a bench under the old oak.';
    const calls: { flagged: boolean; result: Promise<ScoreResult> }[] = [];
    let held: string[] = [];
    let killing: Promise<void> | null = null;
    const victimName = `-${victim.child.pid}-`;
    const started = Date.now();
    for (let i = 0; i < total;) {
      const due = Math.min(total, Math.ceil(((Date.now() - started) / 3_000) * total));
      for (; i < due; i++) {
        const flagged = i % 2 === 0;
        const text = flagged
          ? `${A_JAILBREAK} (${i}) `.repeat(25)
          : `${A_BENIGN} (${i})${garden.repeat(30)}`;
        calls.push({ flagged, result: clients[i % 2]!.score(aScoreRequest(text)) });
      }
      if (!killing && i >= 100) {
        // Frozen first, then killed: what it holds at its death is then not a millisecond race
        // (it reads in batches of a few and scores in about a millisecond). Redis still serves
        // the read it left waiting, so it dies holding entries, as a scorer that hangs and is
        // killed does; from Redis's side a SIGKILL mid-scoring looks the same.
        victim.child.kill('SIGSTOP');
        killing = sleep(150).then(async () => {
          victim.child.kill('SIGKILL');
          expect((await exitOf(victim.child)).signal).toBe('SIGKILL');
          const name = [...(await pendingByConsumer(redis)).keys()].find((n) =>
            n.includes(victimName),
          );
          if (!name) return;
          const detail = (await redis.xpending(stream, 'scorers', '-', '+', 1_000, name)) as [
            string,
            string,
            number,
            number,
          ][];
          held = detail.map(([entryId]) => entryId);
        });
      }
      await sleep(10);
    }
    await killing;
    expect(held.length, 'entries the victim held when it died').toBeGreaterThan(0);
    const settled = await Promise.allSettled(calls.map((c) => c.result));
    const failures = settled.filter((s) => s.status === 'rejected');
    expect(failures.map((f) => String(f.reason))).toEqual([]);
    const results = settled.map((s) => (s.status === 'fulfilled' ? s.value : null));
    expect(results.filter((r) => r?.error)).toEqual([]);
    // Each answer is for its own request: the flagged ones alarm, the others do not.
    expect(results.map((r) => r?.alarm)).toEqual(calls.map((c) => c.flagged));

    // The survivor took over at least what the victim held, and said so.
    const reclaimed = survivor.logs
      .filter((l) => l.msg === 'took over score requests left pending by another scorer')
      .reduce((n, l) => n + Number(l.reclaimed), 0);
    expect(reclaimed).toBeGreaterThanOrEqual(held.length);
    // Those entries were answered (the stream holds only unanswered ones) and nothing is left.
    expect(await redis.xlen(stream)).toBe(0);
    expect([...(await pendingByConsumer(redis)).values()].reduce((n, c) => n + c, 0)).toBe(0);
    expect(clients.reduce((n, c) => n + c.stats.answered, 0)).toBe(total);

    // A graceful stop: the survivor finishes, acknowledges, exits 0.
    survivor.child.kill('SIGTERM');
    expect(await exitOf(survivor.child)).toEqual({ code: 0, signal: null });
    expect(survivor.logs.some((l) => l.msg === 'scorer stopped')).toBe(true);
  }, 60_000);
});
