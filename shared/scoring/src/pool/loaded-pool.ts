import { Piscina } from 'piscina';

/**
 * A fixed-size piscina pool of threads that hold something loaded (detectors, a model) for the
 * life of the process. The worker module exports `loaded()`, answered once the module has loaded:
 * `close` waits for every thread's answer first, since a thread terminated while it is still
 * loading its module aborts the whole process on Node 20 (require of an ES module, interrupted).
 */
export function createLoadedPool<T, R>(options: {
  filename: string | URL;
  threads: number;
  workerData: unknown;
}): { pool: Piscina<T, R>; close: () => Promise<void> } {
  const pool = new Piscina<T, R>({
    filename: String(options.filename),
    minThreads: options.threads,
    maxThreads: options.threads,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    workerData: options.workerData,
  });
  const probe = pool as unknown as Piscina<null, true>; // `loaded` takes nothing
  const allLoaded = Promise.allSettled(
    Array.from({ length: options.threads }, () => probe.run(null, { name: 'loaded' })),
  );
  return {
    pool,
    close: async () => {
      await allLoaded;
      await pool.close();
    },
  };
}
