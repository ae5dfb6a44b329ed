/**
 * Writes docs/schemas/activity.v1.schema.json from the zod schema `ActivityRecord`; a unit test
 * (gen-activity-schema.test.ts) fails while the committed file differs from what this writes.
 *
 * Usage: npm run gen:activity-schema
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import {
  ACTIVITY_JSON_SCHEMA_FILE,
  activityJsonSchema,
} from '@guard/contracts/activity-json-schema';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const schemaFile = path.join(root, ACTIVITY_JSON_SCHEMA_FILE);

/** The file's content: formatted as `npm run format` would leave it. */
export async function renderActivitySchema(): Promise<string> {
  const options = (await resolveConfig(schemaFile)) ?? {};
  return format(JSON.stringify(activityJsonSchema()), { ...options, parser: 'json' });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(schemaFile, await renderActivitySchema());
  console.log(`wrote ${path.relative(process.cwd(), schemaFile)}`);
}
