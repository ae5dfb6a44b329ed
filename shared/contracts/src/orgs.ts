import { z } from 'zod';
import { IsoTimestamp } from './common.js';

export const OrgKind = z.enum(['standard', 'red_team']).meta({ id: 'OrgKind' });
export const KeyRole = z.enum(['admin', 'member']).meta({ id: 'KeyRole' });

/** Unknown fields are refused by name (422), as on the policy endpoints. */
export const OrgCreateRequest = z
  .strictObject({
    name: z.string().min(1).max(255),
    kind: OrgKind.optional().meta({ description: 'Default `standard`.' }),
  })
  .meta({ id: 'OrgCreateRequest' });
export type OrgCreateRequest = z.infer<typeof OrgCreateRequest>;

export const OrgDefaultPolicyRequest = z
  .strictObject({
    policy_id: z.string().min(1).max(255).nullable().meta({
      description: 'A policy of the organization or a preset; `null` clears the default.',
    }),
  })
  .meta({ id: 'OrgDefaultPolicyRequest' });
export type OrgDefaultPolicyRequest = z.infer<typeof OrgDefaultPolicyRequest>;

export const ApiKeyCreateRequest = z
  .strictObject({
    user_id: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .meta({ description: "Who the key is for. Default: the caller's user id." }),
    role: KeyRole.optional().meta({ description: 'Default `member`.' }),
    name: z.string().max(255).optional().meta({ description: 'A label. Default `""`.' }),
    staff: z
      .boolean()
      .optional()
      .meta({ description: 'Only a staff key may create a staff key. Default false.' }),
  })
  .meta({ id: 'ApiKeyCreateRequest' });
export type ApiKeyCreateRequest = z.infer<typeof ApiKeyCreateRequest>;

export const Org = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: OrgKind,
    default_policy_id: z.string().nullable(),
    created_at: IsoTimestamp,
  })
  .meta({ id: 'Org' });

export const OrgList = z.object({ orgs: z.array(Org) }).meta({ id: 'OrgList' });

const keyFields = {
  id: z.string(),
  prefix: z.string().meta({ description: 'First characters of the key, to recognise it.' }),
  org_id: z.string(),
  user_id: z.string(),
  role: KeyRole,
  staff: z.boolean(),
  name: z.string(),
  created_at: IsoTimestamp,
  revoked_at: IsoTimestamp.nullable(),
};

export const ApiKey = z
  .object(keyFields)
  .meta({ id: 'ApiKey', description: 'A key as listed: never the key itself nor its hash.' });

export const ApiKeyCreated = z
  .object({
    ...keyFields,
    key: z
      .string()
      .meta({ description: 'The key. Shown in this answer only; only its hash is stored.' }),
  })
  .meta({ id: 'ApiKeyCreated' });

export const ApiKeyList = z.object({ keys: z.array(ApiKey) }).meta({ id: 'ApiKeyList' });

export const ApiKeyRevoked = z
  .object({ id: z.string(), revoked: z.literal(true) })
  .meta({ id: 'ApiKeyRevoked' });
