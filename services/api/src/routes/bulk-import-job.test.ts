import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkImportResponse, PolicyList, ValidationErrorBody } from '@guard/contracts';
import { expectShape } from '../testing/expect-shape.js';
import { startInProcessApi, type InProcessApi, type TestOrg } from '../testing/in-process.js';

/**
 * POST /policies/bulk-import runs as a job (same bodies as before): a retry with the client's
 * Idempotency-Key joins the import already made; plain requests are separate imports.
 */

let api: InProcessApi;
let org: TestOrg;

beforeAll(async () => {
  api = await startInProcessApi();
  org = await api.makeOrg('bulk');
});
afterAll(async () => {
  await api?.close();
});

const body = (tag: string) => ({
  policies: [
    { name: `${tag} one`, rules: { no_violence: 'no violence' } },
    { rules: { missing: 'a name' } },
    { name: `${tag} two`, rules: { no_pii: 'no personal data' } },
  ],
});

async function names(): Promise<string[]> {
  const res = await api.client(org.adminKey).get('/policies?limit=100');
  return expectShape(PolicyList, res.body).policies.map((p) => p.name);
}

describe('POST /policies/bulk-import as a job', () => {
  it('a retry with the same Idempotency-Key and body answers the same result and imports nothing more', async () => {
    const headers = { 'idempotency-key': 'retry-me-1' };
    const first = await api
      .client(org.adminKey)
      .post('/policies/bulk-import', body('keyed'), { headers });
    expect(first.status).toBe(200);
    const result = expectShape(BulkImportResponse, first.body);
    expect(result).toMatchObject({ total: 3, successful: 2, failed: 1 });
    const again = await api
      .client(org.adminKey)
      .post('/policies/bulk-import', body('keyed'), { headers });
    expect(again.body).toEqual(first.body);
    expect((await names()).filter((n) => n.startsWith('keyed'))).toHaveLength(2);
  });

  it('without a key, or with another body under the key, each request is its own import', async () => {
    for (let i = 0; i < 2; i++)
      expect(
        (await api.client(org.adminKey).post('/policies/bulk-import', body('plain'))).status,
      ).toBe(200);
    expect((await names()).filter((n) => n.startsWith('plain'))).toHaveLength(4);
    const headers = { 'idempotency-key': 'retry-me-2' };
    await api.client(org.adminKey).post('/policies/bulk-import', body('a'), { headers });
    const other = await api
      .client(org.adminKey)
      .post('/policies/bulk-import', body('b'), { headers });
    expect(expectShape(BulkImportResponse, other.body).results[0]?.name).toBe('b one');
  });

  it('an Idempotency-Key that is too long is a 422 naming the header', async () => {
    const res = await api.client(org.adminKey).post('/policies/bulk-import', body('long'), {
      headers: { 'idempotency-key': 'k'.repeat(201) },
    });
    expect(res.status).toBe(422);
    expect(expectShape(ValidationErrorBody, res.body).detail[0]?.loc).toEqual([
      'header',
      'idempotency-key',
    ]);
  });

  it("the same key in another org is another org's import", async () => {
    const other = await api.makeOrg('bulk-other');
    const headers = { 'idempotency-key': 'shared-key' };
    const a = await api
      .client(org.adminKey)
      .post('/policies/bulk-import', body('shared'), { headers });
    const b = await api
      .client(other.adminKey)
      .post('/policies/bulk-import', body('shared'), { headers });
    const ids = (r: typeof a) => expectShape(BulkImportResponse, r.body).results.map((x) => x.id);
    expect(ids(b).filter(Boolean)).toHaveLength(2);
    expect(ids(b).filter((id) => id !== null && ids(a).includes(id))).toEqual([]);
    const read = await api.client(other.adminKey).get(`/policies/${ids(b)[0]}`);
    expect(read.status).toBe(200);
  });
});
