import type { ApiKeyRecord } from '../types.js';

/** An API key as it is shown: everything but its hash. */
export type OrgKeyView = Omit<ApiKeyRecord, 'key_hash'>;

export function orgKeyView(record: ApiKeyRecord): OrgKeyView {
  const { key_hash: _hash, ...shown } = record;
  return shown;
}
