import type { Lifecycle, Logger } from '@guard/platform';
import { CassandraActivityStore } from '@guard/adapters/cassandra/cassandra-activity-store';
import { CassandraJobStore } from '@guard/adapters/cassandra/cassandra-job-store';
import { CassandraPolicyStore } from '@guard/adapters/cassandra/cassandra-policy-store';
import { connectCassandra } from '@guard/adapters/cassandra/connect';
import type { JobsWorkerConfig } from './config.js';
import type { JobWorkerStores } from './jobs-worker-process.js';

/**
 * The stores of the production worker, on Cassandra: jobs (records, progress, results), policies
 * (what a bulk import writes) and activity (what an export counts). Policies are written without
 * a change notice: API pods cache policies by id only, and the ids an import writes are new.
 */
export async function buildStores(
  config: JobsWorkerConfig,
  logger: Logger,
  lifecycle: Lifecycle,
): Promise<JobWorkerStores> {
  const cassandra = await connectCassandra(config.cassandra, logger, lifecycle);
  const keyspace = config.cassandra.keyspace;
  return {
    jobs: new CassandraJobStore(cassandra, { keyspace }),
    policies: new CassandraPolicyStore(cassandra, { keyspace }),
    activities: new CassandraActivityStore(cassandra, {
      keyspace,
      ttlSeconds: config.activityRetentionDays * 86_400,
    }),
  };
}
