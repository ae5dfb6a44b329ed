import { Client } from 'cassandra-driver';
import type { CassandraSettings, Lifecycle, Logger } from '@guard/platform';
import { migrateCassandra } from './migrate.js';

/**
 * A role's Cassandra session: connected, the keyspace migrated to the latest schema (every role
 * that needs the tables applies the migrations; the migrator holds a lock, so roles starting
 * together apply each one once), and shut down when `lifecycle` closes.
 */
export async function connectCassandra(
  settings: CassandraSettings,
  logger: Logger,
  lifecycle: Lifecycle,
): Promise<Client> {
  const client = new Client({
    contactPoints: settings.contactPoints,
    localDataCenter: settings.localDataCenter,
  });
  lifecycle.onClose('cassandra', () => client.shutdown());
  await client.connect();
  const migrated = await migrateCassandra(client, { keyspace: settings.keyspace });
  logger.info({ ...migrated }, 'cassandra schema up to date');
  return client;
}
