import { activityStoreContract, apiKeyStoreContract, orgStoreContract, policyStoreContract } from '@guard/testing';
import { openSqlite } from './sqlite-database.js';
import { SqliteApiKeyStore } from './sqlite-api-key-store.js';
import { SqliteOrgStore } from './sqlite-org-store.js';
import { SqlitePolicyStore } from './sqlite-policy-store.js';
import { SqliteActivityStore } from './sqlite-activity-store.js';

orgStoreContract('sqlite', () => new SqliteOrgStore(openSqlite(':memory:')));
apiKeyStoreContract('sqlite', () => {
  const db = openSqlite(':memory:');
  return { keys: new SqliteApiKeyStore(db), orgs: new SqliteOrgStore(db) };
});
policyStoreContract('sqlite', () => new SqlitePolicyStore(openSqlite(':memory:')));
activityStoreContract('sqlite', () => new SqliteActivityStore(openSqlite(':memory:')));
