import { randomBytes } from 'node:crypto';

/**
 * 24-char lowercase hex ids, time-ordered like a database ObjectId: 4 bytes of seconds since the
 * epoch, 5 random bytes fixed per process, 3 bytes of a per-process counter. Sorting ids sorts by
 * creation second, and within one process by creation order.
 */
const processRandom = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);
let lastSecond = 0;

export function newId(now: number = Date.now()): string {
  const seconds = Math.floor(now / 1000);
  if (seconds !== lastSecond) {
    lastSecond = seconds;
    // Restart low so the counter cannot wrap within one second and break ordering.
    counter = randomBytes(2).readUInt16BE(0);
  } else {
    counter = (counter + 1) & 0xffffff;
  }
  return (
    seconds.toString(16).padStart(8, '0') + processRandom + counter.toString(16).padStart(6, '0')
  );
}

export const ID_PATTERN = /^[0-9a-f]{24}$/;

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** Creation time (second precision) encoded in an id. */
export function idTime(id: string): Date {
  return new Date(parseInt(id.slice(0, 8), 16) * 1000);
}
