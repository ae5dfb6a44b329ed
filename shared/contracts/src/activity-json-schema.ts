import { z } from 'zod';
import { ACTIVITY_SCHEMA_VERSION, ActivityRecord } from './activity.js';

/** Where the published schema lives in the repository (`npm run gen:activity-schema` writes it). */
export const ACTIVITY_JSON_SCHEMA_FILE = `docs/schemas/activity.v${ACTIVITY_SCHEMA_VERSION}.schema.json`;

/**
 * The JSON Schema (2020-12) of one message value on `guard.activity.v1`, and of one exported
 * activity, for data teams. Generated from `ActivityRecord` as a reader sees it (`io: 'input'`):
 * unknown properties are allowed, because fields may be added within a version.
 */
export function activityJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(ActivityRecord, { io: 'input' });
  return {
    $schema,
    $id: `activity.v${ACTIVITY_SCHEMA_VERSION}.schema.json`,
    title: `Guardrail activity record, schema version ${ACTIVITY_SCHEMA_VERSION}`,
    description:
      `One recorded guard decision: the value of a message on the Kafka topic ` +
      `guard.activity.v${ACTIVITY_SCHEMA_VERSION} (header schema-version: ${ACTIVITY_SCHEMA_VERSION}) ` +
      `and one item of the activity export. Within version ${ACTIVITY_SCHEMA_VERSION} changes are ` +
      `additive only: new optional properties may appear, none is removed, renamed or retyped. ` +
      `Generated from ActivityRecord (shared/contracts/src/activity.ts); do not edit by hand.`,
    ...rest,
  };
}
