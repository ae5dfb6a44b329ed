import type { Logger } from '@guard/platform';
import type { ApiKeyStore, OrgStore, PolicyStore } from '@guard/domain';

export interface ApiConfig {
  /** Largest accepted request body, in bytes (413 beyond). */
  bodyLimitBytes: number;
  /** Served in /openapi.json and /healthz. */
  version: string;
  /** Write one log line per request at info level. */
  accessLog: boolean;
}

/** Everything the HTTP layer needs, handed in by a composition root; createApp does no I/O. */
export interface ApiDeps {
  config: ApiConfig;
  logger: Logger;
  orgs: OrgStore;
  keys: ApiKeyStore;
  policies: PolicyStore;
  newId: () => string;
  now: () => Date;
  /** Readiness of the stores and engines behind the API. */
  ready: () => Promise<boolean>;
}
