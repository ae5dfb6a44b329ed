import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ActivityRecord } from '@guard/contracts';
import { renderActivitySchema, schemaFile } from './gen-activity-schema.js';

describe('docs/schemas/activity.v1.schema.json', () => {
  it('is what `npm run gen:activity-schema` writes from ActivityRecord (regenerate and commit it)', async () => {
    const committed = await readFile(schemaFile, 'utf8').catch(() => '(missing)');
    expect(committed).toBe(await renderActivitySchema());
  });

  it('requires every field of the record and lets later fields through', async () => {
    const schema = JSON.parse(await readFile(schemaFile, 'utf8'));
    const record = schema.$defs.ActivityRecord;
    expect(record.required.sort()).toEqual(Object.keys(ActivityRecord.shape).sort());
    expect(record.additionalProperties).toBeUndefined();
  });
});
