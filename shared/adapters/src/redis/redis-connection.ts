import { Redis } from 'ioredis';
import type { Logger } from '@guard/platform';
import { ENVELOPE_FIELD } from '@guard/contracts/score-envelope';

/**
 * One connection of the scoring transport. `blocking` connections carry a single XREAD or
 * XREADGROUP at a time and wait through reconnects (ioredis sends the command again once Redis
 * is back); command connections fail at once while Redis is away, so that a caller is told the
 * scorer is unavailable instead of waiting in a queue it cannot see.
 */
export function openScoreConnection(
  url: string,
  name: string,
  kind: 'commands' | 'blocking',
  logger: Logger | undefined,
): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectionName: name,
    // RESP2: stream replies (XREAD, XAUTOCLAIM) come as the nested arrays the code reads.
    protocol: 2,
    enableOfflineQueue: kind === 'blocking',
    maxRetriesPerRequest: kind === 'blocking' ? null : 1,
    connectTimeout: 5_000,
    // A restarted Redis is usually back within a second or two: keep trying at least that often.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1_000),
  });
  // One line per outage, not one per reconnect attempt (ioredis prints each one when unheard).
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger?.warn({ err, connection: name }, 'Redis connection lost; reconnecting');
  });
  redis.on('ready', () => {
    if (down) logger?.info({ connection: name }, 'Redis connection back');
    down = false;
  });
  return redis;
}

/** The envelope field of a stream entry (`[field, value, ...]`), if it has one. */
export function envelopeOf(fields: string[] | null | undefined): string | undefined {
  if (!fields) return undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === ENVELOPE_FIELD) return fields[i + 1];
  }
  return undefined;
}

/** JSON text to a value; `undefined` when it is not JSON. */
export function parseJson(raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** Ends a connection: QUIT when it is up (answers on their way arrive first), else at once. */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}

/**
 * A wait that `open()` ends. A blocking read queued while the connection is down is not always
 * rejected by `disconnect()` (ioredis between two reconnect attempts): loops race their read
 * with this instead of trusting the read to end.
 */
export function latch(): { promise: Promise<null>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<null>((resolve) => (open = () => resolve(null)));
  return { promise, open };
}

/** `read` unless `until` comes first; a read left behind may reject later, unheard. */
export function readUntil<T>(read: Promise<T>, until: Promise<null>): Promise<T | null> {
  read.catch(() => undefined);
  return Promise.race([read, until]);
}
