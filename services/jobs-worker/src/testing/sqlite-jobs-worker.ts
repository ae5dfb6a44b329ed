import { createLogger, runRole } from '@guard/platform';
import type { PolicyStore } from '@guard/domain';
import { decorate } from '@guard/domain/caching/decorate';
import { openSqlite } from '@guard/adapters/sqlite/sqlite-database';
import { SqliteActivityStore } from '@guard/adapters/sqlite/sqlite-activity-store';
import { SqliteJobStore } from '@guard/adapters/sqlite/sqlite-job-store';
import { SqlitePolicyStore } from '@guard/adapters/sqlite/sqlite-policy-store';
import { loadWorkerSettings } from '../config.js';
import { installTemporalRuntime, startJobsWorker } from '../jobs-worker-process.js';

/**
 * For tests: the jobs-worker role as a process of its own (the same worker, workflows and
 * activities as main.ts) over a SQLite file that the test reads too, instead of Cassandra.
 * `node sqlite-jobs-worker.ts <file> [ms]`: each policy insert waits `ms` first, so that a test
 * can kill the process in the middle of a bulk import.
 */
const [file, slowMs] = process.argv.slice(2);
if (!file) throw new Error('usage: sqlite-jobs-worker.ts <sqlite file> [ms per policy insert]');
const delay = Number(slowMs ?? 0);
const settings = loadWorkerSettings(process.env);
const logger = createLogger({ level: settings.logLevel, logContent: false, name: 'jobs-worker' });
installTemporalRuntime(logger);

await runRole(logger, 'jobs worker', async (lifecycle) => {
  const db = openSqlite(file);
  lifecycle.onClose('sqlite', () => void db.close());
  const policies = new SqlitePolicyStore(db);
  const slowed: PolicyStore = decorate<PolicyStore>(policies, {
    async insert(policy, version) {
      await new Promise((r) => setTimeout(r, delay));
      return policies.insert(policy, version);
    },
  });
  const { done } = await startJobsWorker(
    settings,
    { jobs: new SqliteJobStore(db), policies: slowed, activities: new SqliteActivityStore(db) },
    logger,
    lifecycle,
  );
  return { failed: done };
});
