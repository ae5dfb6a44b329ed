import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@guard/contracts';
import {
  contractSchemasById,
  documentedOperations,
  type DocumentedOperation,
} from './testing/response-contract.js';
import { startInProcessApi, type ApiClient, type InProcessApi } from './testing/in-process.js';

/**
 * The OpenAPI document and the app describe the same API: every route the app registers is
 * documented, every documented operation is served, needs a key exactly when it says so, and
 * names response schemas the contracts package exports (which the harness checks answers
 * against).
 */

/**
 * Served but deliberately not in the document: the document itself and its viewer, and the
 * Prometheus scrape (for the monitoring system, not for API clients).
 */
const UNDOCUMENTED = new Set(['get /openapi.json', 'get /metrics']);

let api: InProcessApi;
let staff: ApiClient;
let anon: ApiClient;
let operations: DocumentedOperation[];

beforeAll(async () => {
  api = await startInProcessApi();
  staff = api.client(api.adminKey);
  anon = api.client(null);
  operations = documentedOperations(buildOpenApiDocument('test'));
});
afterAll(async () => {
  await api?.close();
});

interface Layer {
  rawPath: unknown;
  route?: { path: string; methods: Record<string, boolean> };
  handle: unknown;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null;
}

function asLayer(v: unknown): Layer {
  if (!isRecord(v) || !('rawPath' in v))
    throw new Error('express router layers no longer carry rawPath: update routesOf()');
  const route = v.route;
  if (route === undefined) return { rawPath: v.rawPath, handle: v.handle };
  if (!isRecord(route) || typeof route.path !== 'string' || !isRecord(route.methods))
    throw new Error('unexpected express route shape: update routesOf()');
  const methods = Object.fromEntries(
    Object.entries(route.methods).map(([method, on]) => [method, on === true]),
  );
  return { rawPath: v.rawPath, handle: v.handle, route: { path: route.path, methods } };
}

function stackOf(handle: unknown): unknown[] | null {
  return isRecord(handle) && Array.isArray(handle.stack) ? handle.stack : null;
}

const joinPath = (prefix: string, path: string) =>
  `${prefix}/${path}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');

/** `method path` of every route registered on a router and the routers mounted in it. */
function routesOf(stack: unknown[], prefix = ''): string[] {
  const out: string[] = [];
  for (const raw of stack) {
    const layer = asLayer(raw);
    if (layer.route) {
      // `:name` is a parameter; `\:` a literal colon (the Gemini routes' `{model}:generateContent`).
      const path = joinPath(prefix, layer.route.path)
        .split('\\:')
        .map((piece) => piece.replace(/:(\w+)/g, '{$1}'))
        .join(':');
      for (const [method, on] of Object.entries(layer.route.methods))
        if (on) out.push(`${method === '_all' ? 'all' : method} ${path}`);
      continue;
    }
    const inner = stackOf(layer.handle);
    if (!inner) continue; // middleware
    const mounts = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath];
    for (const mount of mounts) {
      if (typeof mount !== 'string') throw new Error(`router mounted at ${String(mount)}`);
      out.push(...routesOf(inner, joinPath(prefix, mount)));
    }
  }
  return out;
}

/** A concrete path for a documented one: ids that exist in no org. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'ffffffffffffffffffffffff');
/** An empty object where the method takes a body. */
const bodyFor = (method: string) => (['post', 'put', 'patch'].includes(method) ? {} : undefined);

describe('routes and /openapi.json', () => {
  it('finds routes in the app at all (the walk over express internals still works)', () => {
    const routes = routesOf(api.app.router.stack);
    expect(routes).toContain('post /guard/monitor');
    expect(routes).toContain('get /policies/{policy_id}/versions/{version_id}');
  });

  it('documents every route the app registers, and the app registers every documented one', () => {
    const served = new Set(routesOf(api.app.router.stack).filter((r) => !UNDOCUMENTED.has(r)));
    const documented = new Set(operations.map((op) => `${op.method} ${op.path}`));
    expect(
      [...served].filter((r) => !documented.has(r)),
      'served but not documented',
    ).toEqual([]);
    expect(
      [...documented].filter((r) => !served.has(r)),
      'documented but not served',
    ).toEqual([]);
  });

  it('serves every documented operation (none is the "No route for" 404)', async () => {
    for (const op of operations) {
      const res = await staff.call(op.method.toUpperCase(), concrete(op.path), bodyFor(op.method));
      const message = isRecord(res.body) ? res.body.message : undefined;
      expect(
        typeof message === 'string' && message.startsWith('No route for'),
        `${op.method} ${op.path}`,
      ).toBe(false);
    }
  });

  it('asks for a key on exactly the operations the document secures', async () => {
    for (const op of operations) {
      const res = await anon.call(op.method.toUpperCase(), concrete(op.path), bodyFor(op.method));
      expect(res.status === 401, `${op.method} ${op.path}`).toBe(op.secured);
    }
    expect(operations.filter((op) => !op.secured).map((op) => op.path)).toEqual([
      '/healthz',
      '/readyz',
    ]);
  });

  it('names only response schemas that @guard/contracts exports, so every answer can be checked', () => {
    const schemas = contractSchemasById();
    const missing: string[] = [];
    const inline: string[] = [];
    for (const op of operations) {
      for (const r of op.responses.values()) {
        const where = `${op.method} ${op.path} ${r.status}`;
        if (r.inline) inline.push(where);
        if (r.schemaId !== null && !schemas.has(r.schemaId))
          missing.push(`${where}: ${r.schemaId}`);
      }
    }
    expect(missing).toEqual([]);
    expect(inline).toEqual([]);
    // Every operation documents a success answer.
    for (const op of operations)
      expect(
        [...op.responses.keys()].some((s) => s.startsWith('2')),
        `${op.method} ${op.path}`,
      ).toBe(true);
  });
});

describe('ops endpoints', () => {
  it('serves health, the OpenAPI document and its docs page without a key', async () => {
    const health = await anon.get('/healthz');
    expect(health.body).toEqual({ status: 'ok', version: '0.0.0-test' });
    const doc = await anon.get('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body).toMatchObject({ openapi: '3.1.0', info: { version: '0.0.0-test' } });
    const page = await fetch(`${api.url}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger');
  });

  it('answers readiness from the stores: 200 ready, 503 when not or when the check throws', async () => {
    expect((await anon.get('/readyz')).body).toEqual({ status: 'ready' });
    for (const ready of [async () => false, () => Promise.reject(new Error('db gone'))]) {
      const down = await startInProcessApi({ ready });
      try {
        const res = await down.client(null).get('/readyz');
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ status: 'not_ready' });
      } finally {
        await down.close();
      }
    }
  });
});
