import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Policy, VersionOperation } from '@guard/domain';
import {
  activityStoreContract,
  aKey,
  anActivity,
  anOrg,
  aPolicy,
  apiKeyStoreContract,
  aVersion,
  orgStoreContract,
  policyStoreContract,
} from '@guard/testing';
import { openSqlite, sqliteConfigChanges, SQLITE_MIGRATIONS } from './sqlite-database.js';
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

describe('SQLite schema migration', () => {
  it('gives policies of a database from before compare-and-set the revision their history is at', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-migrate-'));
    const file = path.join(dir, 'guard.db');
    try {
      // The database as the release before revisions left it: two migrations, rows without one.
      const old = new Database(file);
      for (const m of SQLITE_MIGRATIONS.slice(0, 2)) old.exec(m);
      old.pragma('user_version = 2');
      const edited = aPolicy('org-a', { name: 'edited twice' });
      const deleted = aPolicy('org-a', { name: 'deleted' });
      const fresh = aPolicy('org-a', { name: 'fresh' });
      const history: [Policy, VersionOperation[], number][] = [
        [edited, ['create', 'update', 'update'], 0],
        [deleted, ['create', 'delete'], 1],
        [fresh, ['create'], 0],
      ];
      for (const [p, ops, isDeleted] of history) {
        old
          .prepare(
            'INSERT INTO policies (id, org_id, doc, updated_at, deleted) VALUES (?, ?, ?, ?, ?)',
          )
          .run(p.id, p.org_id, JSON.stringify(p), p.updated_at, isDeleted);
        for (const operation of ops) {
          const v = aVersion(p, { operation });
          old
            .prepare('INSERT INTO policy_versions (id, policy_id, org_id, doc) VALUES (?, ?, ?, ?)')
            .run(v.id, v.policy_id, v.org_id, JSON.stringify(v));
        }
      }
      old.close();

      const db = openSqlite(file);
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
      const store = new SqlitePolicyStore(db);
      expect((await store.getLastState('org-a', edited.id))?.revision).toBe(2);
      expect(await store.getLastState('org-a', deleted.id)).toMatchObject({
        deleted: true,
        revision: 1,
      });
      expect((await store.getLastState('org-a', fresh.id))?.revision).toBe(0);
      const next = { ...edited, name: 'edited three times' };
      const v = aVersion(next, { operation: 'update' });
      expect(await store.replace(next, v, 1)).toEqual({ ok: false, reason: 'conflict' });
      expect(await store.replace(next, v, 2)).toEqual({ ok: true, revision: 3 });
      expect(await store.count('org-a')).toBe(2);
      expect((await store.listVersions('org-a', edited.id)).map((x) => x.operation)).toEqual([
        'update',
        'update',
        'update',
        'create',
      ]);
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqliteConfigChanges', () => {
  it('moves when another connection changes orgs, keys or policies, and not for activity writes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guard-changes-'));
    try {
      const file = path.join(dir, 'guard.db');
      const server = openSqlite(file);
      const cli = openSqlite(file);
      const changes = sqliteConfigChanges(server);
      const seen = [changes.version()];
      // Checked once per turn of the event loop: each step asks in a later turn.
      const step = async () => {
        await new Promise((r) => setImmediate(r));
        seen.push(changes.version());
        return seen.at(-1) !== seen.at(-2);
      };
      expect(await step()).toBe(false);

      const o = anOrg();
      await new SqliteOrgStore(cli).create(o);
      expect(await step()).toBe(true);
      await new SqliteActivityStore(cli).record([anActivity(o.id)]);
      expect(await step()).toBe(false);
      const k = aKey(o.id);
      await new SqliteApiKeyStore(cli).create(k);
      expect(await step()).toBe(true);
      await new SqliteApiKeyStore(cli).revoke(k.id, new Date().toISOString());
      expect(await step()).toBe(true);
      const p = aPolicy(o.id);
      await new SqlitePolicyStore(cli).insert(p, aVersion(p));
      expect(await step()).toBe(true);
      await new SqliteOrgStore(cli).setDefaultPolicy(o.id, p.id);
      expect(await step()).toBe(true);
      expect(await step()).toBe(false);
      // Within one turn the first answer stands.
      await new SqliteOrgStore(cli).create(anOrg());
      const now = changes.version();
      await new SqliteOrgStore(cli).create(anOrg());
      expect(changes.version()).toBe(now);
      expect(await step()).toBe(true);
      server.close();
      cli.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
