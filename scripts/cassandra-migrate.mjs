// `npm run cassandra:migrate`: creates the keyspace if missing and applies the CQL migrations of
// infra/cassandra not applied yet (see docs/cassandra.md). Safe to run again, and from several
// places at once. Reads:
//   CASSANDRA_CONTACT_POINTS  host[:port][,host[:port]...]  (required)
//   CASSANDRA_LOCAL_DC        data centre the driver routes to (default datacenter1)
//   CASSANDRA_KEYSPACE        default guard
//   CASSANDRA_REPLICATION     JSON, used only when the keyspace is created, e.g.
//                             {"class":"NetworkTopologyStrategy","dc1":3}
//                             (default SimpleStrategy with one replica: a development node)
import cassandra from 'cassandra-driver';
import { migrateCassandra } from '@guard/adapters/cassandra/migrate';

function fail(message) {
  console.error(`cassandra:migrate: ${message}`);
  process.exit(1);
}

function settings(env) {
  const contactPoints = (env.CASSANDRA_CONTACT_POINTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (contactPoints.length === 0) {
    fail('set CASSANDRA_CONTACT_POINTS (host:port, comma-separated)');
  }
  let replication;
  if (env.CASSANDRA_REPLICATION) {
    try {
      replication = JSON.parse(env.CASSANDRA_REPLICATION);
    } catch (err) {
      fail(`CASSANDRA_REPLICATION is not JSON: ${err.message}`);
    }
    const valid =
      replication !== null &&
      typeof replication === 'object' &&
      !Array.isArray(replication) &&
      typeof replication.class === 'string' &&
      Object.values(replication).every((v) => typeof v === 'string' || typeof v === 'number');
    if (!valid) {
      fail('CASSANDRA_REPLICATION must be an object with a "class" and string or number values');
    }
  }
  return {
    contactPoints,
    localDataCenter: env.CASSANDRA_LOCAL_DC || 'datacenter1',
    keyspace: env.CASSANDRA_KEYSPACE || 'guard',
    replication,
  };
}

const { contactPoints, localDataCenter, keyspace, replication } = settings(process.env);
const client = new cassandra.Client({ contactPoints, localDataCenter });
try {
  await client.connect();
  const result = await migrateCassandra(client, { keyspace, replication });
  for (const name of result.applied) console.log(`applied ${name} to keyspace ${keyspace}`);
  if (result.applied.length === 0) {
    const n = result.alreadyApplied.length;
    console.log(`keyspace ${keyspace} is up to date (${n} migration${n === 1 ? '' : 's'})`);
  }
} catch (err) {
  process.exitCode = 1;
  console.error(`cassandra:migrate: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  await client.shutdown();
}
