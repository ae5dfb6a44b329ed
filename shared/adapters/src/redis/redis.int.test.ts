import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// Every key of this file lives under its own prefix, so parallel files and runs never collide.
const prefix = `int:redis:${process.pid}:${Date.now().toString(36)}:`;

describe('Redis (real server)', () => {
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(inject('engines').redisUrl, {
      keyPrefix: prefix,
      lazyConnect: true,
      maxRetriesPerRequest: 2,
    });
    await redis.connect();
  });

  afterAll(async () => {
    // keyPrefix is not applied to SCAN patterns or to the keys it returns.
    const raw = new Redis(inject('engines').redisUrl, { lazyConnect: true });
    await raw.connect();
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length > 0) await raw.del(...keys);
    await raw.quit();
    await redis.quit();
  });

  it('round-trips a value with an expiry', async () => {
    expect(await redis.set('policy:p1', JSON.stringify({ version: 3 }), 'PX', 60_000)).toBe('OK');
    expect(JSON.parse((await redis.get('policy:p1')) ?? 'null')).toEqual({ version: 3 });
    const ttl = await redis.pttl('policy:p1');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await redis.get('policy:missing')).toBeNull();
  });

  it('delivers a stream entry to a consumer group exactly once until acknowledged', async () => {
    const stream = 'score:requests';
    await redis.xgroup('CREATE', stream, 'scorers', '$', 'MKSTREAM');
    const id = await redis.xadd(stream, '*', 'body', '{"text":"hello"}');

    const read = await redis.xreadgroup(
      'GROUP',
      'scorers',
      'scorer-1',
      'COUNT',
      10,
      'STREAMS',
      stream,
      '>',
    );
    expect(read).toEqual([[`${prefix}${stream}`, [[id, ['body', '{"text":"hello"}']]]]]);

    // Nothing new for a second consumer: the entry is pending on scorer-1.
    expect(
      await redis.xreadgroup('GROUP', 'scorers', 'scorer-2', 'COUNT', 10, 'STREAMS', stream, '>'),
    ).toBeNull();
    expect(await redis.xack(stream, 'scorers', id ?? '')).toBe(1);
    const pending = (await redis.xpending(stream, 'scorers')) as [number, ...unknown[]];
    expect(pending[0]).toBe(0);
  });
});
