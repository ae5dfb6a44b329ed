import { CachingOrgStore } from '@guard/domain';
import { activityStoreContract, apiKeyStoreContract, orgStoreContract, policyStoreContract } from '@guard/testing';
import { MemoryApiKeyStore } from './memory-api-key-store.js';
import { MemoryOrgStore } from './memory-org-store.js';
import { MemoryPolicyStore } from './memory-policy-store.js';
import { MemoryActivityStore } from './memory-activity-store.js';

orgStoreContract('memory', () => new MemoryOrgStore());
apiKeyStoreContract('memory', () => ({ keys: new MemoryApiKeyStore(), orgs: new MemoryOrgStore() }));
policyStoreContract('memory', () => new MemoryPolicyStore());
activityStoreContract('memory', () => new MemoryActivityStore());
orgStoreContract('caching decorator over memory', () => new CachingOrgStore(new MemoryOrgStore(), 60_000));
