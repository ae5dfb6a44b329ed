import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import type { z } from 'zod';
import { ENV_SCHEMA as API_ENV_SCHEMA } from '@guard/api/distributed/config';
import { ENV_SCHEMA as SCORER_ENV_SCHEMA } from '@guard/scorer/config';
import { ENV_SCHEMA as INGESTER_ENV_SCHEMA } from '@guard/activity-ingester/config';
import { ENV_SCHEMA as JOBS_WORKER_ENV_SCHEMA } from '@guard/jobs-worker/config';
import { ENV_SCHEMA as STANDALONE_ENV_SCHEMA } from '@guard/standalone/config';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TOOLS = path.join(REPO, '.cache', 'tools');
export const KUSTOMIZE = path.join(TOOLS, 'kustomize');
export const KUBECONFORM = path.join(TOOLS, 'kubeconform');
export const SCHEMA_DIR = path.join(REPO, 'k8s', 'schemas', 'v1.32.4-standalone-strict');
export const SCHEMA_LOCATION = `${SCHEMA_DIR}/{{.ResourceKind}}{{.KindSuffix}}.json`;

export const VERSION: string = JSON.parse(
  readFileSync(path.join(REPO, 'package.json'), 'utf8'),
).version;
export const IMAGE = `guardrail/guard:${VERSION}`;

type EnvSchema = z.ZodObject<z.ZodRawShape>;

/** What each process reads, from its config module (the only place that reads the environment). */
export const ROLE_ENV: Record<string, EnvSchema> = {
  api: API_ENV_SCHEMA as unknown as EnvSchema,
  scorer: SCORER_ENV_SCHEMA as unknown as EnvSchema,
  'activity-ingester': INGESTER_ENV_SCHEMA as unknown as EnvSchema,
  'jobs-worker': JOBS_WORKER_ENV_SCHEMA as unknown as EnvSchema,
};
export const STANDALONE_ENV = STANDALONE_ENV_SCHEMA as unknown as EnvSchema;

/** Set for every role though no config module reads them: the entry point's and the runtime's. */
export function isAllowedExtra(name: string): boolean {
  return name.startsWith('OTEL_') || ['NODE_OPTIONS', 'MODE', 'ROLE'].includes(name);
}

/** Variables holding secrets: never a literal value in the deployment files. */
export const SECRET_VARS = [
  'GUARD_BOOTSTRAP_ADMIN_KEY',
  'GUARD_OPENAI_API_KEY',
  'GUARD_ANTHROPIC_API_KEY',
  'GUARD_GEMINI_API_KEY',
  'GUARD_JUDGE_API_KEY',
];

/** A key whose schema rejects "unset" must be given. */
export function requiredKeys(schema: EnvSchema): string[] {
  return Object.entries(schema.shape)
    .filter(([, s]) => !(s as z.ZodType).safeParse(undefined).success)
    .map(([k]) => k);
}

/** The value a key takes when unset (its default), undefined for a required key. */
export function defaultOf(schema: EnvSchema, key: string): unknown {
  const r = (schema.shape[key] as z.ZodType | undefined)?.safeParse(undefined);
  return r?.success ? r.data : undefined;
}

/** The roles of the one entry point (services/standalone/src/role.ts's ROLES map). */
export function entryPointRoles(): string[] {
  const src = readFileSync(path.join(REPO, 'services/standalone/src/role.ts'), 'utf8');
  const body = /const ROLES[^=]*=\s*\{([\s\S]*?)\};/.exec(src)?.[1];
  if (!body) throw new Error('no ROLES map in services/standalone/src/role.ts');
  return [...body.matchAll(/^\s*'?([a-z-]+)'?\s*:/gm)].map((m) => m[1]!);
}

export function ensureTools(): void {
  if (existsSync(KUSTOMIZE) && existsSync(KUBECONFORM)) return;
  execFileSync('bash', [path.join(REPO, 'scripts/deploy/tools.sh')], {
    stdio: 'inherit',
    timeout: 300_000,
  });
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: any;
}

export function renderK8s(): { text: string; objects: K8sObject[] } {
  const text = execFileSync(KUSTOMIZE, ['build', path.join(REPO, 'k8s')], { encoding: 'utf8' });
  const objects = parseAllDocuments(text).map((d) => d.toJS() as K8sObject);
  return { text, objects };
}

export function kubeconform(file: string): { status: number | null; output: string } {
  const r = spawnSync(
    KUBECONFORM,
    ['-strict', '-summary', '-schema-location', SCHEMA_LOCATION, file],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

export function loadCompose(file: string): any {
  return parse(readFileSync(path.join(REPO, file), 'utf8'), { merge: true });
}

/**
 * A compose `environment` as the container sees it with nothing set on the host: `${X:-d}` and
 * `${X-d}` give d, `${X}` gives "". Numbers and booleans become strings.
 */
export function composeEnv(environment: unknown): Record<string, string> {
  const entries: [string, unknown][] = Array.isArray(environment)
    ? environment.map((line: string) => {
        const i = line.indexOf('=');
        return [line.slice(0, i), line.slice(i + 1)];
      })
    : Object.entries((environment ?? {}) as Record<string, unknown>);
  return Object.fromEntries(
    entries.map(([k, v]) => [
      k,
      String(v ?? '').replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g, (_m, d) => d ?? ''),
    ]),
  );
}

/** The (unresolved) entries of a compose environment, for checks on how values are given. */
export function composeRawEnv(environment: unknown): Record<string, string> {
  return Object.fromEntries(
    Object.entries((environment ?? {}) as Record<string, unknown>).map(([k, v]) => [
      k,
      String(v ?? ''),
    ]),
  );
}
