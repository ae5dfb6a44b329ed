import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, Policy, PolicyList } from '@guard/contracts';
import { expectShape } from './expect-shape.js';
import { ResponseContract } from './response-contract.js';

/** The checks the in-process harness runs on every answer fail when they should, readably. */

const policy = {
  id: 'p1',
  name: 'n',
  description: '',
  rules: { a: 'b' },
  rule_modes: {},
  mode: 'content_moderation',
  pre_violation_threshold: 0.5,
  pre_jb_threshold: 0.3,
  post_violation_threshold: 0.5,
  post_violation_jb_threshold: 0.3,
  scanners_config: { pii: { enabled: true } },
  block_message: 'no',
  is_preset: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};
const json = 'application/json; charset=utf-8';

describe('expectShape', () => {
  it('returns the parsed value of a body that matches', () => {
    expect(expectShape(Policy, policy)).toEqual(policy);
  });

  it('names the schema and the field that does not match', () => {
    const { name: _name, ...noName } = policy;
    expect(() => expectShape(Policy, noName)).toThrow(/body does not match Policy:[\s\S]*name/);
    expect(() => expectShape(Policy, { ...policy, is_preset: 'no' })).toThrow(/is_preset/);
  });

  it('refuses fields the schema does not declare, at any depth', () => {
    expect(() => expectShape(Policy, { ...policy, org_id: 'o1' })).toThrow(
      'body carries fields Policy does not declare: $.org_id',
    );
    const list = {
      policies: [policy, { ...policy, key_hash: 'x' }],
      total: 2,
      limit: null,
      offset: 0,
      has_more: false,
    };
    expect(() => expectShape(PolicyList, list)).toThrow('$.policies[1].key_hash');
    // Free-form records keep whatever they hold.
    expect(expectShape(Policy, { ...policy, scanners_config: { any: { thing: 1 } } })).toBeTruthy();
  });
});

describe('ResponseContract', () => {
  const contract = new ResponseContract(buildOpenApiDocument('test'));
  const ok = { status: 200, contentType: json };

  it('passes an answer the document describes', () => {
    contract.check({ ...ok, method: 'GET', path: '/policies/abc', body: policy });
    contract.check({ ...ok, method: 'GET', path: '/healthz', body: { status: 'ok' } });
  });

  it('checks the body against the schema named for that status', () => {
    expect(() =>
      contract.check({
        ...ok,
        method: 'GET',
        path: '/policies/abc?x=1',
        body: { ...policy, id: 1 },
      }),
    ).toThrow(/GET \/policies\/abc\?x=1 answered 200: body does not match Policy/);
    expect(() =>
      contract.check({
        status: 404,
        contentType: json,
        method: 'GET',
        path: '/policies/abc',
        body: { detail: [] },
      }),
    ).toThrow(/does not match ErrorBody/);
  });

  it('matches literal segments before parameters', () => {
    expect(() =>
      contract.check({ ...ok, method: 'GET', path: '/policies/export', body: policy }),
    ).toThrow(/PolicyExportAll/);
  });

  it('refuses a status the operation does not list', () => {
    expect(() =>
      contract.check({
        status: 409,
        contentType: json,
        method: 'GET',
        path: '/policies',
        body: {},
      }),
    ).toThrow(
      /GET \/policies answered 409, a status \/openapi.json does not list for GET \/policies/,
    );
  });

  it('refuses a documented JSON answer sent as something else', () => {
    expect(() =>
      contract.check({
        ...ok,
        contentType: 'text/html',
        method: 'GET',
        path: '/policies/a',
        body: policy,
      }),
    ).toThrow(/content type text\/html/);
  });

  it('holds errors from undocumented paths to the standard error body', () => {
    contract.check({
      status: 404,
      contentType: json,
      method: 'GET',
      path: '/nowhere',
      body: { error: true, message: 'm', detail: 'm', error_code: 'NOT_FOUND', details: null },
    });
    expect(() =>
      contract.check({
        status: 404,
        contentType: 'text/html',
        method: 'GET',
        path: '/nowhere',
        body: 'Cannot GET',
      }),
    ).toThrow(/ErrorBody/);
  });

  it('holds `details` of the standard error body to an object or null, never an array', () => {
    const issue = { loc: ['body'], msg: 'm', type: 'missing' };
    const body = { error: true, message: 'm', detail: 'm', error_code: 'VALIDATION_ERROR' };
    const monitor = { status: 422, contentType: json, method: 'POST', path: '/guard/monitor' };
    contract.check({ ...monitor, body: { ...body, details: { errors: [issue] } } });
    for (const details of [[issue], [], 'm', 1])
      expect(() => contract.check({ ...monitor, body: { ...body, details } })).toThrow(
        /POST \/guard\/monitor answered 422: body does not match ErrorBody/,
      );
    expect(() =>
      contract.check({
        status: 404,
        contentType: json,
        method: 'GET',
        path: '/nowhere',
        body: { ...body, error_code: 'NOT_FOUND', details: [issue] },
      }),
    ).toThrow(/ErrorBody/);
  });
});
