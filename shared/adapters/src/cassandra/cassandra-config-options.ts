import { types, type Client, type QueryOptions } from 'cassandra-driver';
import { assertKeyspaceName } from './migrate.js';

/** Where and how the org, API-key, policy and job stores read and write (infra/cassandra/002_config.cql, 003_jobs.cql). */
export interface CassandraConfigStoreOptions {
  /** Where `migrateCassandra` created the tables. */
  keyspace: string;
  /**
   * Reads, plain writes and the commit of compare-and-set writes. Default LOCAL_QUORUM: a read
   * after a write in the same data centre sees it, whichever replicas answer, so a policy
   * written by one pod is what the next pod reads to compute its compare-and-set.
   */
  consistency?: types.consistencies | undefined;
  /**
   * The Paxos phase of compare-and-set writes (`IF NOT EXISTS`, `IF revision = ?`). Default
   * SERIAL, linearizable across data centres; LOCAL_SERIAL is cheaper and is safe only while every
   * write of this configuration goes to one data centre.
   */
  serialConsistency?: types.consistencies | undefined;
}

export interface ConfigQueryOptions {
  readonly keyspace: string;
  /** Reads and plain writes. */
  readonly plain: QueryOptions;
  /** Lightweight transactions. */
  readonly cas: QueryOptions;
}

export function configQueryOptions(options: CassandraConfigStoreOptions): ConfigQueryOptions {
  assertKeyspaceName(options.keyspace);
  const plain = {
    prepare: true,
    consistency: options.consistency ?? types.consistencies.localQuorum,
  };
  const cas = {
    ...plain,
    serialConsistency: options.serialConsistency ?? types.consistencies.serial,
  };
  return { keyspace: options.keyspace, plain, cas };
}

/**
 * The rows of a query page by page (the driver's paging state), so a long partition is never
 * held in memory or fetched in one response.
 */
export async function* readPages(
  client: Client,
  query: string,
  params: unknown[],
  options: QueryOptions,
  pageSize: number,
): AsyncGenerator<types.Row[]> {
  let pageState: string | undefined;
  for (;;) {
    const rs = await client.execute(query, params, { ...options, fetchSize: pageSize, pageState });
    yield rs.rows;
    if (!rs.pageState) return;
    pageState = rs.pageState;
  }
}
