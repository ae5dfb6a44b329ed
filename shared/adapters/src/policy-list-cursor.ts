import { decodeOpaque, encodeOpaque } from '@guard/platform';

/**
 * The position in a policy list (most recently updated first, ties by higher id) after a given
 * policy: its `updated_at` and id. Opaque to callers; shared by the adapters that order by these
 * two values.
 */
export type PolicyListKey = readonly [updatedAt: string, id: string];

export function encodePolicyCursor(key: PolicyListKey): string {
  return encodeOpaque(key);
}

export function decodePolicyCursor(cursor: string): PolicyListKey {
  const key = decodeOpaque(cursor);
  if (!Array.isArray(key) || key.length !== 2 || !key.every((k) => typeof k === 'string')) {
    throw new Error('not a policy list cursor');
  }
  return [String(key[0]), String(key[1])];
}
