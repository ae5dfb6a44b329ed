import { defineConfig } from 'vitest/config';

// Workspace packages export their TypeScript sources under the "source" condition, so tests run
// against src/ without a build. E2E tests start the compiled server (see test/e2e/support).
const resolve = { conditions: ['source', 'module', 'node', 'import', 'default'] };

export default defineConfig({
  resolve,
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    projects: [
      {
        resolve,
        ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
        test: {
          name: 'unit',
          include: [
            '{services,shared,scripts}/**/src/**/*.test.ts',
            'scripts/**/*.test.ts',
            'test/support/**/*.test.ts',
            'test/deploy/**/*.test.ts',
          ],
          exclude: ['**/node_modules/**', '**/dist/**', '**/*.int.test.ts'],
        },
      },
      {
        resolve,
        ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
        test: {
          // Real Redis, Kafka, Cassandra and Temporal: the global setup starts them (or takes
          // REDIS_URL, KAFKA_BROKERS, CASSANDRA_CONTACT_POINTS, TEMPORAL_ADDRESS) and passes the
          // endpoints through inject('engines'). See docs/engines.md.
          name: 'integration',
          include: ['**/*.int.test.ts'],
          exclude: ['**/node_modules/**', '**/dist/**', '.engines/**'],
          globalSetup: ['infra/local/vitest-engines.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        resolve,
        ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.e2e.test.ts'],
          globalSetup: ['test/e2e/support/global-setup.ts'],
          // Against a running server (E2E_BASE_URL, see test/e2e/support/guard-server.ts) every
          // file shares its default org: one file at a time, as each has its own server otherwise.
          fileParallelism: !process.env.E2E_BASE_URL,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
