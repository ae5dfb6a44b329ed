import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './guard-server.js';

/** E2E tests drive the compiled server, exactly what `npm start` runs: build it first (incremental). */
export default function setup(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
