// Bundles the job workflows ahead of time (webpack, as the jobs worker would at start) into
// services/jobs-worker/dist/job-workflows.bundle.js, where the worker takes them from instead of
// bundling at start. Run after `tsc -b` (it bundles the compiled dist); the container image
// build runs it. A bundle left in dist outlives later edits of the workflow code: rerun this, or
// delete the file, after changing it.
//
//   npm run build:workflow-bundle [-- <out-file>]
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleJobWorkflows } from '@guard/adapters/temporal/job-workflow-bundle';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(
  process.argv[2] ?? path.join(root, 'services/jobs-worker/dist/job-workflows.bundle.js'),
);
const started = Date.now();
const { code } = await bundleJobWorkflows();
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, code);
process.stdout.write(
  `job workflows bundled into ${out} (${code.length} bytes, ${Date.now() - started} ms)\n`,
);
