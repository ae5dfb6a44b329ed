import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NextFunction, Request, Response } from 'express';
import {
  BulkImportResponse,
  buildOpenApiDocument,
  ErrorBody,
  MonitorResponse,
  Policy,
  PolicyList,
  PolicyVersionList,
  ValidationErrorBody,
} from '@guard/contracts';
import { AppError, type ErrorDetails } from '@guard/platform';
import { expectShape } from '../testing/expect-shape.js';
import {
  apiClient,
  startInProcessApi,
  type ApiClient,
  type ApiResponse,
  type InProcessApi,
} from '../testing/in-process.js';
import { documentedOperations } from '../testing/response-contract.js';
import { errorHandler, standardBody } from './errors.js';

/**
 * One status per kind of mistake, on every family of endpoints, each in its own error body: the
 * policy and org endpoints answer input problems as `{detail: [...]}`, the guard endpoints in the
 * standard body. In process over the memory stores; the harness also checks every answer against
 * /openapi.json.
 */

let api: InProcessApi;
let admin: ApiClient;

beforeAll(async () => {
  api = await startInProcessApi();
  admin = api.client(api.adminKey);
});
afterAll(async () => {
  await api?.close();
});

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const detail = (body: unknown) => expectShape(ValidationErrorBody, body).detail;
const standard = (body: unknown) => expectShape(ErrorBody, body);
/** `details.errors` of a standard body, when it lists validation issues. */
const issues = (body: unknown) =>
  expectShape(ValidationErrorBody.shape.detail, standard(body).details?.errors);

describe('malformed JSON', () => {
  it("is a 400 on every endpoint, in each endpoint's body", async () => {
    const m = await admin.post('/guard/monitor', undefined, { raw: '{"text": ' });
    expect(m.status).toBe(400);
    expect(standard(m.body)).toMatchObject({ error: true, error_code: 'BAD_REQUEST' });
    expect(issues(m.body)).toMatchObject([{ loc: ['body'], type: 'json_invalid' }]);

    for (const path of ['/policies', '/orgs']) {
      const p = await admin.post(path, undefined, { raw: '{"name": ' });
      expect(p.status, path).toBe(400);
      const [issue] = detail(p.body);
      expect(issue).toMatchObject({ loc: ['body'], type: 'json_invalid' });
      expect(issue?.msg).toMatch(/^Request body is not valid JSON: /);
    }
    const put = await admin.put('/policies/ffffffffffffffffffffffff', undefined, { raw: '{,}' });
    expect(put.status).toBe(400);
    expect(detail(put.body)[0]?.type).toBe('json_invalid');
  });
});

describe('a body that is not an object', () => {
  for (const [what, raw, got] of [
    ['null', 'null', 'null'],
    ['a string', '"hello"', '"hello"'],
    ['an array', '[1, 2]', 'an array'],
    ['a number', '42', 'number'],
  ] as const) {
    it(`(${what}) is a 422 that says an object was expected`, async () => {
      const m = await admin.post('/guard/monitor', undefined, { raw });
      expect(m.status).toBe(422);
      expect(standard(m.body).error_code).toBe('VALIDATION_ERROR');
      expect(issues(m.body)[0]).toMatchObject({
        loc: ['body'],
        msg: `The body must be a JSON object, got ${got}`,
      });
      for (const path of ['/policies', '/orgs']) {
        const p = await admin.post(path, undefined, { raw });
        expect(p.status, path).toBe(422);
        expect(detail(p.body)[0]).toMatchObject({
          loc: ['body'],
          msg: `The body must be a JSON object, got ${got}`,
        });
      }
    });
  }
});

describe('content type', () => {
  it('a body sent without a JSON content type is a 415 that names the expected type', async () => {
    const form = await admin.post('/guard/monitor', undefined, {
      raw: 'text=hello',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    expect(standard(form.body)).toMatchObject({ error_code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(standard(form.body).message).toContain('application/json');
    const none = await admin.post('/policies', undefined, {
      raw: '{"name": "x"}',
      contentType: null,
    });
    expect(none.status).toBe(415);
    const text = await admin.post('/orgs', undefined, {
      raw: '{"name": "x"}',
      contentType: 'text/plain',
    });
    expect(text.status).toBe(415);
    expect(standard(text.body).error_code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts JSON under a +json type and with a charset', async () => {
    const vendor = await admin.post('/policies', undefined, {
      raw: '{"name": "vendor json"}',
      contentType: 'application/vnd.acme+json',
    });
    expect(vendor.status).toBe(201);
    const charset = await admin.post('/guard/monitor', undefined, {
      raw: '{"text": "hello"}',
      contentType: 'application/json; charset=utf-8',
    });
    expect(charset.status).toBe(200);
    expectShape(MonitorResponse, charset.body);
  });

  it('no body at all is a 422 saying one is required, in both bodies', async () => {
    const empty = await admin.post('/guard/monitor');
    expect(empty.status).toBe(422);
    expect(issues(empty.body)[0]).toMatchObject({ loc: ['body'], type: 'missing' });
    expect(standard(empty.body).message).toContain('JSON object body is required');
    const p = await admin.post('/policies');
    expect(p.status).toBe(422);
    expect(detail(p.body)[0]).toMatchObject({ loc: ['body'], type: 'missing' });
  });

  it('an empty body sent as JSON is a missing body, not an empty update', async () => {
    const p = expectShape(Policy, (await admin.post('/policies', { name: 'empty put' })).body);
    const res = await admin.put(`/policies/${p.id}`, undefined, { raw: '' });
    expect(res.status).toBe(422);
    expect(detail(res.body)[0]).toMatchObject({ loc: ['body'], type: 'missing' });
    const versions = await admin.get(`/policies/${p.id}/versions`);
    expect(expectShape(PolicyVersionList, versions.body).total).toBe(1);
  });
});

describe('nesting depth (GUARD_MAX_JSON_DEPTH, 64 here)', () => {
  // {"text", "metadata": {"a": <n levels>}} is n + 2 levels deep.
  it('accepts 64 levels and refuses 65 with 400 json_too_deep on monitor', async () => {
    const ok = await admin.post('/guard/monitor', undefined, {
      raw: `{"text": "hi", "metadata": {"a": ${nested(62)}}}`,
    });
    expect(ok.status).toBe(200);
    const activityId = expectShape(MonitorResponse, ok.body).activity_id;
    const stored = await api.stores.activities.get(api.defaultOrgId, activityId);
    expect(stored?.metadata).toHaveProperty('a');

    const deep = await admin.post('/guard/monitor', undefined, {
      raw: `{"text": "hi", "metadata": {"a": ${nested(63)}}}`,
    });
    expect(deep.status).toBe(400);
    expect(standard(deep.body)).toMatchObject({ error_code: 'BAD_REQUEST' });
    expect(standard(deep.body).message).toContain('nested deeper than 64 levels');
    expect(issues(deep.body)).toMatchObject([{ loc: ['body'], type: 'json_too_deep' }]);
  });

  it('does not count brackets inside strings', async () => {
    const res = await admin.post('/guard/monitor', {
      text: nested(500),
      metadata: { s: '[[[{{{' },
    });
    expect(res.status).toBe(200);
  });

  it('refuses thousands of levels on POST /policies with 400 in the validation body', async () => {
    const res = await admin.post('/policies', undefined, {
      raw: `{"name": "deep", "scanners_config": {"keywords": ${nested(6_000)}}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      detail: [
        { loc: ['body'], msg: 'JSON is nested deeper than 64 levels', type: 'json_too_deep' },
      ],
    });
  });

  it('refuses a too-deep bulk import as a whole, before creating anything', async () => {
    const res = await admin.post('/policies/bulk-import', undefined, {
      raw: `{"policies": [{"name": "bulk-first-good"}, {"name": "bulk-deep", "scanners_config": {"keywords": ${nested(6_000)}}}]}`,
    });
    expect(res.status).toBe(400);
    const all = expectShape(PolicyList, (await admin.get('/policies?limit=1000')).body);
    expect(all.policies.map((p) => p.name)).not.toContain('bulk-first-good');
  });
});

describe('size limits', () => {
  it('refuses bodies over GUARD_BODY_LIMIT with 413 PAYLOAD_TOO_LARGE', async () => {
    const big = { name: 'big', description: 'x'.repeat(1024 * 1024 + 10) };
    for (const path of ['/policies', '/guard/monitor']) {
      const res = await admin.post(path, big);
      expect(res.status, path).toBe(413);
      expect(standard(res.body).error_code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('refuses monitor metadata over 16 KB with 422 naming the field', async () => {
    const res = await admin.post('/guard/monitor', {
      text: 'hi',
      metadata: { blob: 'x'.repeat(20_000) },
    });
    expect(res.status).toBe(422);
    expect(issues(res.body)[0]?.loc).toEqual(['body', 'metadata']);
    expect(standard(res.body).message).toContain('at most 16384 bytes');
  });

  it('bulk import reports an oversized item on that item only', async () => {
    const res = await admin.post('/policies/bulk-import', {
      policies: [
        { name: 'small' },
        {
          name: 'huge',
          scanners_config: { keywords: Array.from({ length: 9_000 }, (_, i) => `w${i}`) },
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(expectShape(BulkImportResponse, res.body)).toMatchObject({ successful: 1, failed: 1 });
  });
});

describe('names JavaScript objects treat specially', () => {
  it('refuses `__proto__` as a name, so no rule silently disappears', async () => {
    const m = await admin.post('/guard/monitor', undefined, {
      raw: '{"text": "Where is Project Falcon hosted?", "categories": {"__proto__": "Never mention Project Falcon"}}',
    });
    expect(m.status).toBe(422);
    expect(issues(m.body)[0]?.loc).toEqual(['body', 'categories', '__proto__']);
    const p = await admin.post('/policies', undefined, {
      raw: '{"name": "x", "rules": {"\\u005f_proto__": "No spam"}}',
    });
    expect(p.status).toBe(422);
    expect(detail(p.body)[0]?.loc).toEqual(['body', 'rules', '__proto__']);
  });
});

describe('paths', () => {
  it('answers unknown routes with 404 NOT_FOUND naming the route, with a request id', async () => {
    const res = await admin.get('/no/such/route');
    expect(res.status).toBe(404);
    expect(standard(res.body)).toMatchObject({
      error_code: 'NOT_FOUND',
      message: 'No route for GET /no/such/route',
    });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const wrongMethod = await admin.call('PATCH', '/policies');
    expect(wrongMethod.status).toBe(404);
  });

  it('echoes a well-formed x-request-id and replaces a malformed one', async () => {
    const mine = await admin.get('/healthz', { headers: { 'x-request-id': 'trace-123.a:b' } });
    expect(mine.headers.get('x-request-id')).toBe('trace-123.a:b');
    const bad = await admin.get('/healthz', { headers: { 'x-request-id': 'has spaces' } });
    expect(bad.headers.get('x-request-id')).not.toBe('has spaces');
  });

  it('answers a path id that is not valid percent-encoding with 400 path_invalid', async () => {
    const res = await admin.get('/policies/%ZZ');
    expect(res.status).toBe(400);
    expect(detail(res.body)[0]).toMatchObject({ loc: ['path'], type: 'path_invalid' });
  });
});

describe('`details` of the standard body is an object or null, never an array', () => {
  const isPlainObject = (v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
  /** Fails on a standard error body whose `details` is anything but null or a plain object. */
  const expectObjectDetails = (body: unknown, what: string) => {
    const details = (body as { details?: unknown }).details;
    expect(
      details === null || isPlainObject(details),
      `${what}: details ${JSON.stringify(details)}`,
    ).toBe(true);
  };

  it('standardBody wraps whatever it is handed: an array under errors, a bare value under value', () => {
    const issue = { loc: ['body'], msg: 'm', type: 't' };
    // Callers that step around the types (JavaScript, `as` casts, an `unknown` passed along).
    const loose = (v: unknown) => standardBody('BAD_REQUEST', 'm', v as ErrorDetails).details;
    expect(loose([issue])).toEqual({ errors: [issue] });
    expect(loose([])).toEqual({ errors: [] });
    expect(loose('text')).toEqual({ value: 'text' });
    expect(loose(7)).toEqual({ value: 7 });
    expect(loose(false)).toEqual({ value: false });
    expect(loose(undefined)).toBeNull();
    expect(loose(null)).toBeNull();
    expect(loose({ errors: [issue] })).toEqual({ errors: [issue] });
    // An object that serializes as something other than an object is a value too.
    const date = new Date(0);
    expect(loose(date)).toEqual({ value: date });
    const listLike = { toJSON: () => [1, 2] };
    expect(JSON.parse(JSON.stringify(standardBody('BAD_REQUEST', 'm', listLike)))).toMatchObject({
      details: { value: [1, 2] },
    });
    expect(standardBody('NOT_FOUND', 'm').details).toBeNull();
  });

  it('the error handler keeps an array an AppError was built with out of details', () => {
    const sent: { status?: number; body?: unknown } = {};
    const res = {
      headersSent: false,
      status(code: number) {
        sent.status = code;
        return this;
      },
      json(body: unknown) {
        sent.body = body;
        return this;
      },
    };
    const err = new AppError('CONFLICT', 'm', ['a', 'b'] as unknown as ErrorDetails);
    errorHandler()(err, {} as Request, res as unknown as Response, (() => {}) as NextFunction);
    expect(sent.status).toBe(409);
    expect(sent.body).toMatchObject({ error_code: 'CONFLICT', details: { errors: ['a', 'b'] } });
    expectShape(ErrorBody, sent.body);
  });

  it('holds for every error answer of every documented operation', async () => {
    // Clients that do not check answers against the contract: this test looks at `details` itself.
    const anon = apiClient(api.url, null);
    const badKey = apiClient(api.url, 'gk_nope');
    const staff = apiClient(api.url, api.adminKey);
    const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'ffffffffffffffffffffffff');
    const answers: [string, ApiResponse][] = [];
    const add = async (what: string, res: Promise<ApiResponse>) => answers.push([what, await res]);
    for (const op of documentedOperations(buildOpenApiDocument('test'))) {
      const method = op.method.toUpperCase();
      const path = concrete(op.path);
      const at = `${method} ${op.path}`;
      await add(`${at} without a key`, anon.call(method, path));
      await add(`${at} with a bad key`, badKey.call(method, path));
      await add(`${at} no body`, staff.call(method, path));
      await add(`${at} path %ZZ`, staff.call(method, `${path}/%ZZ`));
      if (!['post', 'put', 'patch'].includes(op.method)) continue;
      for (const raw of ['{"text": ', '[1, 2]', '"text"', 'null', '{"text": 42, "name": 42}'])
        await add(`${at} ${raw}`, staff.call(method, path, undefined, { raw }));
      await add(
        `${at} as text/plain`,
        staff.call(method, path, undefined, { raw: '{}', contentType: 'text/plain' }),
      );
    }
    await add('unknown route', staff.get('/no/such/route'));
    await add('monitor too large', staff.post('/guard/monitor', { text: 'x'.repeat(1_100_000) }));
    await add(
      'monitor too deep',
      staff.post('/guard/monitor', undefined, {
        raw: `{"text": "hi", "metadata": {"a": ${nested(80)}}}`,
      }),
    );

    const standardErrors = answers.filter(
      ([, r]) => r.status >= 400 && (r.body as { error?: unknown } | null)?.error === true,
    );
    for (const [what, r] of standardErrors) {
      expectObjectDetails(r.body, `${what} (${r.status})`);
      expectShape(ErrorBody, r.body);
    }
    // The sweep reaches the answers that list validation problems, in both statuses.
    const withIssues = standardErrors.filter(([, r]) =>
      Array.isArray(standard(r.body).details?.errors),
    );
    expect(new Set(withIssues.map(([, r]) => r.status))).toEqual(new Set([400, 422]));
    expect(new Set(standardErrors.map(([, r]) => r.status))).toEqual(
      new Set([400, 401, 404, 413, 415, 422]),
    );
  });
});
