/**
 * One entry point for every process of the service, as one container image runs them:
 * `MODE=embedded` (the default) runs the standalone server (what `npm start` runs);
 * `MODE=distributed` runs the role that `ROLE` names, each with its own settings
 * (docs/distributed.md):
 *
 *   MODE=distributed ROLE=api node services/standalone/dist/role.js
 */
const ROLES: Record<string, string> = {
  api: '@guard/api/distributed/main',
  scorer: '@guard/scorer/main',
  'activity-ingester': '@guard/activity-ingester/main',
  'jobs-worker': '@guard/jobs-worker/main',
};

const mode = process.env.MODE || 'embedded';
const role = process.env.ROLE || (mode === 'embedded' ? 'standalone' : '');

if (mode === 'embedded' && role === 'standalone') {
  await import('./main.js');
} else if (mode === 'distributed' && Object.hasOwn(ROLES, role)) {
  await import(ROLES[role]!);
} else {
  process.stderr.write(
    `guard: ${
      mode === 'embedded' || mode === 'distributed'
        ? `MODE=${mode} runs ${mode === 'embedded' ? 'ROLE=standalone (or no ROLE)' : `ROLE=${Object.keys(ROLES).join('|')}`}; got ROLE="${role}"`
        : `MODE must be embedded or distributed; got "${mode}"`
    }\n`,
  );
  process.exit(2);
}
