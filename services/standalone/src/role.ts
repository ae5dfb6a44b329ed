/**
 * One entry point for every process of the service, as one container image runs them. `ROLE`
 * picks the process: `api`, `scorer`, `activity-ingester` or `jobs-worker` runs that role of the
 * distributed mode, each with its own settings (docs/distributed.md); `standalone`, or no ROLE,
 * runs the standalone server (what `npm start` runs). `MODE` may be left out: it follows from
 * ROLE, and when set (`embedded` or `distributed`) it must agree with it.
 *
 *   ROLE=api node services/standalone/dist/role.js
 */
const ROLES: Record<string, string> = {
  api: '@guard/api/distributed/main',
  scorer: '@guard/scorer/main',
  'activity-ingester': '@guard/activity-ingester/main',
  'jobs-worker': '@guard/jobs-worker/main',
};

const role = process.env.ROLE || (process.env.MODE === 'distributed' ? '' : 'standalone');
const mode = process.env.MODE || (Object.hasOwn(ROLES, role) ? 'distributed' : 'embedded');

if (mode === 'embedded' && role === 'standalone') {
  await import('./main.js');
} else if (mode === 'distributed' && Object.hasOwn(ROLES, role)) {
  await import(ROLES[role]!);
} else {
  const roles = Object.keys(ROLES).join('|');
  process.stderr.write(
    `guard: ${
      !process.env.MODE
        ? `ROLE must be standalone|${roles}; got ROLE="${role}"`
        : mode === 'embedded' || mode === 'distributed'
          ? `MODE=${mode} runs ${mode === 'embedded' ? 'ROLE=standalone (or no ROLE)' : `ROLE=${roles}`}; got ROLE="${role}"`
          : `MODE must be embedded or distributed; got "${mode}"`
    }\n`,
  );
  process.exit(2);
}
