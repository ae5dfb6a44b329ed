import type { Logger } from '@guard/platform';
import { openEmbeddedStores } from './deps.js';
import type { StandaloneConfig } from './config.js';

const HOUR = 3_600_000;

/**
 * Deletes activity older than GUARD_ACTIVITY_RETENTION_DAYS from the embedded store: once shortly
 * after start, then every hour. One sweeper per server (the single process, or the primary of the
 * workers), on its own connection. Returns a stop function.
 */
export function startRetention(
  config: Pick<StandaloneConfig, 'dbFile' | 'activityRetentionDays' | 'activityPipeline'>,
  logger: Logger,
  now: () => number = Date.now,
): () => void {
  // Cassandra keeps activity with a TTL; the sweeper is for the embedded store only.
  if (config.activityRetentionDays <= 0 || config.activityPipeline.kind !== 'sqlite')
    return () => undefined;
  const { db, activities } = openEmbeddedStores(config.dbFile);
  const keepMs = config.activityRetentionDays * 24 * HOUR;
  const sweep = () => {
    try {
      const started = performance.now();
      const deleted = activities.deleteRecordedBefore(now() - keepMs);
      if (deleted > 0)
        logger.info(
          {
            deleted,
            retention_days: config.activityRetentionDays,
            ms: Math.round(performance.now() - started),
          },
          'activity retention: deleted old activity',
        );
    } catch (err) {
      logger.error({ err }, 'activity retention sweep failed; will try again in an hour');
    }
  };
  const first = setTimeout(sweep, 10_000);
  const every = setInterval(sweep, HOUR);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
    db.close();
  };
}
