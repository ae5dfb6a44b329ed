// One-off generator used to lay out workspace packages consistently.
import fs from 'node:fs';
import path from 'node:path';
const pkgs = {
  'shared/platform': { deps: { zod: '4.6.7', pino: '^10.1.0' }, refs: [] },
  'shared/contracts': { deps: { zod: '4.6.7', '@asteasolutions/zod-to-openapi': '^8.1.0' }, refs: ['shared/platform'] },
  'shared/domain': { deps: {}, refs: ['shared/platform'] },
  'shared/scoring': { deps: { 'js-tiktoken': '^1.0.21' }, refs: [] },
  'shared/adapters': { deps: { 'better-sqlite3': '^12.4.0' }, devDeps: { '@types/better-sqlite3': '^7.6.13' }, refs: ['shared/platform', 'shared/domain', 'shared/scoring'] },
  'shared/testing': { deps: { vitest: '~4.1.12', 'fast-check': '^4.3.0' }, refs: ['shared/platform', 'shared/domain'] },
  'services/api': { deps: { express: '^5.1.0', 'swagger-ui-express': '^5.0.1' }, devDeps: { '@types/express': '^5.0.3', '@types/swagger-ui-express': '^4.1.8' }, refs: ['shared/platform', 'shared/contracts', 'shared/domain'] },
  'services/scorer': { deps: {}, refs: ['shared/platform', 'shared/domain', 'shared/scoring'] },
  'services/activity-ingester': { deps: {}, refs: ['shared/platform', 'shared/domain'] },
  'services/jobs-worker': { deps: {}, refs: ['shared/platform', 'shared/domain'] },
  'services/standalone': { deps: {}, refs: ['shared/platform', 'shared/contracts', 'shared/domain', 'shared/scoring', 'shared/adapters', 'services/api'], bin: { guard: './bin/guard.js' } },
};
const name = (p) => '@guard/' + path.basename(p);
for (const [dir, spec] of Object.entries(pkgs)) {
  const deps = { ...spec.deps };
  for (const r of spec.refs) deps[name(r)] = '0.1.0';
  const pj = {
    name: name(dir),
    version: '0.1.0',
    private: true,
    type: 'module',
    exports: {
      '.': { source: './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
      './*': { source: './src/*.ts', types: './dist/*.d.ts', default: './dist/*.js' },
    },
    ...(spec.bin ? { bin: spec.bin } : {}),
    dependencies: Object.fromEntries(Object.entries(deps).sort()),
    ...(spec.devDeps ? { devDependencies: spec.devDeps } : {}),
  };
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pj, null, 2) + '\n');
  const rel = (r) => path.relative(dir, r);
  const tc = {
    extends: rel('tsconfig.base.json'),
    compilerOptions: { rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/.tsbuildinfo' },
    include: ['src'],
    exclude: ['src/**/*.test.ts'],
    references: spec.refs.map((r) => ({ path: rel(r) })),
  };
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tc, null, 2) + '\n');
  if (!fs.existsSync(path.join(dir, 'src/index.ts'))) fs.writeFileSync(path.join(dir, 'src/index.ts'), 'export {};\n');
}
