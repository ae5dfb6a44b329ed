import type { ArrayOrObject, Client, QueryOptions } from 'cassandra-driver';

/**
 * `client` with a step in front of each query: `before` sees the CQL (a batch's statements joined
 * by ';') and may wait, or throw to stand for a process that died at that point. Everything else
 * passes through, so the store under test talks to the real cluster.
 */
export function interposed(client: Client, before: (cql: string) => Promise<void> | void): Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'execute') {
        return async (query: string, params?: ArrayOrObject, options?: QueryOptions) => {
          await before(query);
          return target.execute(query, params, options);
        };
      }
      if (prop === 'batch') {
        return async (
          queries: { query: string; params?: ArrayOrObject }[],
          options?: QueryOptions,
        ) => {
          await before(queries.map((q) => q.query).join(';'));
          return target.batch(queries, options);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

/** A process that dies right before its first query matching `pattern`. */
export function diesBefore(client: Client, pattern: RegExp): Client {
  return interposed(client, (cql) => {
    if (pattern.test(cql)) throw new Error(`died before: ${cql.slice(0, 60)}`);
  });
}

/**
 * A process held right before each query matching `pattern`: `reached` resolves when the first
 * one arrives, and they go on only once `release()` is called.
 */
export function heldBefore(
  client: Client,
  pattern: RegExp,
): { client: Client; reached: Promise<void>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let arrive!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  return {
    client: interposed(client, async (cql) => {
      if (pattern.test(cql)) {
        arrive();
        await released;
      }
    }),
    reached,
    release,
  };
}
