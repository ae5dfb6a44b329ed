import { randomBytes } from 'node:crypto';

/**
 * 24-char lowercase hex ids, ordered by creation time to the millisecond:
 *
 *   8 hex  seconds since the epoch (as before, so older ids keep their place)
 *   3 hex  milliseconds within that second (000-3e7)
 *   5 hex  a counter, from 0 in each new millisecond (a million ids per ms per process)
 *   8 hex  random, fixed per process
 *
 * Within one process ids are strictly increasing, even when the clock steps back (the last
 * millisecond is reused) or a millisecond's counter runs out (the next millisecond is borrowed,
 * as UUIDv7 generators do). Across processes they sort by the millisecond they were made in, so
 * a reader that pages by id past a settled point in time cannot skip an id made before it.
 */
const COUNTER_MAX = 0xfffff;

/** Makes ids as `newId` does; `now` defaults to the clock. */
export type IdGenerator = (now?: number) => string;

/**
 * A generator with its own counter and random part: what one process has. `newId` is this
 * process's; tests make more to act as several processes writing at once.
 */
export function createIdGenerator(): IdGenerator {
  const processRandom = randomBytes(4).toString('hex');
  let lastMs = 0;
  let counter = 0;
  return (now = Date.now()) => {
    if (now > lastMs) {
      lastMs = now;
      counter = 0;
    } else if (++counter > COUNTER_MAX) {
      lastMs++;
      counter = 0;
    }
    const seconds = Math.floor(lastMs / 1000);
    const ms = lastMs - seconds * 1000;
    return (
      seconds.toString(16).padStart(8, '0') +
      ms.toString(16).padStart(3, '0') +
      counter.toString(16).padStart(5, '0') +
      processRandom
    );
  };
}

export const newId: IdGenerator = createIdGenerator();

export const ID_PATTERN = /^[0-9a-f]{24}$/;

export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** Creation time encoded in an id: to the millisecond for new ids, to the second for ids made before. */
export function idTime(id: string): Date {
  const seconds = parseInt(id.slice(0, 8), 16);
  const ms = parseInt(id.slice(8, 11), 16);
  return new Date(seconds * 1000 + (ms < 1000 ? ms : 0));
}

/** The time part of an id made in millisecond `ms` (11 hex characters). */
function timePrefix(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return (
    seconds.toString(16).padStart(8, '0') + (ms - seconds * 1000).toString(16).padStart(3, '0')
  );
}

/**
 * Id bounds for a point in time, for range reads by id: every id made at or before millisecond
 * `ms` is <= `idAtOrBefore(ms)`, and every id made at or after it is >= `idFrom(ms)`.
 */
export function idFrom(ms: number): string {
  return `${timePrefix(Math.max(0, Math.floor(ms)))}${'0'.repeat(13)}`;
}
export function idAtOrBefore(ms: number): string {
  return `${timePrefix(Math.max(0, Math.floor(ms)))}${'f'.repeat(13)}`;
}
