import { parseArgs } from 'node:util';
import fs from 'node:fs';
import {
  createApiKey,
  createOrg,
  revokeApiKey,
  setDefaultPolicy,
  type AuthDeps,
  type OrgKind,
  type Role,
} from '@guard/domain';
import { embeddedIds, openEmbeddedStores } from './deps.js';
import { loadConfig } from './config.js';

const USAGE = `guard: manage organizations and API keys of the embedded store, the file guard.db in
$GUARD_DATA_DIR (default ./data, the same directory the server uses).

  guard org create --name NAME [--kind standard|red_team]
  guard org list
  guard org set-default-policy --org ORG_ID (--policy POLICY_ID | --clear)
  guard key create --org ORG_ID [--user USER_ID] [--role admin|member] [--staff] [--name LABEL]
  guard key list --org ORG_ID
  guard key revoke --id KEY_ID

Add --json to any command for machine-readable output. A new key is printed once; only its
hash is stored.`;

class UsageError extends Error {}

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export async function runCli(argv: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      kind: { type: 'string' },
      org: { type: 'string' },
      policy: { type: 'string' },
      clear: { type: 'boolean' },
      user: { type: 'string' },
      role: { type: 'string' },
      staff: { type: 'boolean' },
      id: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [noun, verb] = positionals;
  if (values.help || !noun) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  const config = loadConfig();
  // Opening a missing file would quietly create an empty store that the server never reads.
  if (!fs.existsSync(config.dbFile)) {
    out(
      `error: no database at ${config.dbFile}.\n` +
        'The CLI works on the data directory of a server: start the server once (npm start) or set GUARD_DATA_DIR to the directory the server uses.',
    );
    return 2;
  }
  const stores = openEmbeddedStores(config.dbFile);
  const db = stores.db;
  const deps: AuthDeps = { orgs: stores.orgs, keys: stores.keys, ...embeddedIds };
  const print = (human: string, data: unknown) => out(values.json ? JSON.stringify(data) : human);
  try {
    switch (`${noun} ${verb ?? ''}`.trim()) {
      case 'org create': {
        const kind = (values.kind ?? 'standard') as OrgKind;
        if (!['standard', 'red_team'].includes(kind))
          throw new UsageError('--kind must be standard or red_team');
        const org = await createOrg(deps, need(values, 'name'), kind);
        print(`created org ${org.id} (${org.name}, ${org.kind})`, org);
        return 0;
      }
      case 'org list': {
        const orgs = await deps.orgs.list();
        print(
          orgs.map((o) => `${o.id}  ${o.kind.padEnd(9)} ${o.name}`).join('\n') || '(no orgs)',
          orgs,
        );
        return 0;
      }
      case 'org set-default-policy': {
        const orgId = need(values, 'org');
        const policyId = values.clear ? null : need(values, 'policy');
        await setDefaultPolicy({ orgs: deps.orgs, policies: stores.policies }, orgId, policyId);
        print(`default policy of ${orgId}: ${policyId ?? '(none)'}`, {
          org_id: orgId,
          default_policy_id: policyId,
        });
        return 0;
      }
      case 'key create': {
        const role = (values.role ?? 'admin') as Role;
        if (!['admin', 'member'].includes(role))
          throw new UsageError('--role must be admin or member');
        const { key, record } = await createApiKey(deps, {
          orgId: need(values, 'org'),
          userId: values.user ?? 'admin',
          role,
          staff: values.staff ?? false,
          name: values.name ?? '',
        });
        const { key_hash: _hash, ...shown } = record;
        print(
          `created key ${record.id} (${record.role}${record.staff ? ', staff' : ''}) for org ${record.org_id}\n\n  ${key}\n\nStore it now: it is not shown again.`,
          { ...shown, key },
        );
        return 0;
      }
      case 'key list': {
        const keys = await deps.keys.listByOrg(need(values, 'org'));
        const rows = keys.map(({ key_hash: _h, ...k }) => k);
        print(
          rows
            .map(
              (k) =>
                `${k.id}  ${k.prefix}…  ${k.role.padEnd(6)} ${k.staff ? 'staff ' : ''}${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}  ${k.name}`,
            )
            .join('\n') || '(no keys)',
          rows,
        );
        return 0;
      }
      case 'key revoke': {
        const id = need(values, 'id');
        await revokeApiKey(deps, id);
        print(`revoked key ${id}`, { id, revoked: true });
        return 0;
      }
      default:
        throw new UsageError(`unknown command: ${positionals.join(' ')}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      out(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof Error && err.name === 'AppError') {
      out(`error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    db.close();
  }
}

// Run when executed directly (bin/guard.js imports this module).
runCli(process.argv.slice(2), (s) => process.stdout.write(s + '\n')).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`guard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
