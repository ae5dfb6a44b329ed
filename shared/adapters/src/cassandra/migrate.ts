import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { types, type Client } from 'cassandra-driver';
import { CassandraKeyspace } from '@guard/platform';

/** The CQL migrations of the repository: infra/cassandra, from src/cassandra and dist/cassandra alike. */
export const CASSANDRA_MIGRATIONS_DIR = fileURLToPath(
  new URL('../../../../infra/cassandra/', import.meta.url),
);

export interface CassandraMigrateOptions {
  keyspace: string;
  /**
   * Replication of the keyspace when the migrator creates it, as CQL's map
   * (`{ class: 'NetworkTopologyStrategy', dc1: 3 }`). An existing keyspace keeps its own.
   * Default: SimpleStrategy with one replica, for a single development node.
   */
  replication?: Record<string, string | number> | undefined;
  migrationsDir?: string | undefined;
  /** How long to wait for another migrator to finish. Default three minutes. */
  lockTimeoutMs?: number | undefined;
}

export interface CassandraMigrateResult {
  keyspace: string;
  /** Files this call applied, in order. */
  applied: string[];
  /** Files found applied already (by an earlier run or by a migrator running at the same time). */
  alreadyApplied: string[];
}

interface Migration {
  version: number;
  name: string;
  statements: string[];
  checksum: string;
}

const FILE_NAME = /^(\d+)_[A-Za-z0-9_-]+\.cql$/;
const DEFAULT_REPLICATION = { class: 'SimpleStrategy', replication_factor: 1 };
// One partition holds the whole history, so the migrator reads it with its partition key.
const SCOPE = 'guard';
const LOCK = 'migrate';
// A migrator that dies holding the lock frees it when the row expires; a live one renews it
// after each file.
const LOCK_TTL_SECONDS = 120;
const quorum = { prepare: true, consistency: types.consistencies.quorum };

/** Unquoted CQL identifiers are case-insensitive; lowercase only, so a name means one keyspace. */
export function assertKeyspaceName(keyspace: string): void {
  if (!CassandraKeyspace.safeParse(keyspace).success) {
    throw new Error(
      `keyspace "${keyspace}" must be 1-48 characters: a lowercase letter, then lowercase letters, digits or _`,
    );
  }
}

/**
 * Creates the keyspace if missing and applies, in version order, every migration file not
 * applied yet, recording each in `schema_migrations`. Several migrators may run at once (two
 * pods starting): a lightweight-transaction lock lets one apply while the others wait, then
 * find nothing left to do. Each statement of a file is idempotent (IF NOT EXISTS), so a
 * migrator that died halfway through a file applies it again from the top.
 */
export async function migrateCassandra(
  client: Client,
  options: CassandraMigrateOptions,
): Promise<CassandraMigrateResult> {
  const { keyspace } = options;
  assertKeyspaceName(keyspace);
  const migrations = await readMigrations(options.migrationsDir ?? CASSANDRA_MIGRATIONS_DIR);

  await client.execute(
    `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = ${replicationLiteral(options.replication ?? DEFAULT_REPLICATION)}`,
  );
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${keyspace}.schema_migrations (
       scope text, version int, name text, checksum text, applied_at timestamp, applied_by text,
       PRIMARY KEY ((scope), version))`,
  );
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${keyspace}.schema_migrations_lock (
       name text PRIMARY KEY, owner text, acquired_at timestamp)`,
  );

  const pending = async () => {
    const applied = await appliedChecksums(client, keyspace);
    for (const m of migrations) {
      const checksum = applied.get(m.version);
      if (checksum !== undefined && checksum !== m.checksum) {
        throw new Error(
          `migration ${m.name} was applied with checksum ${checksum}, the file now has ${m.checksum}: ` +
            'add a new migration instead of editing an applied one',
        );
      }
    }
    return migrations.filter((m) => !applied.has(m.version));
  };

  if ((await pending()).length === 0) {
    return { keyspace, applied: [], alreadyApplied: migrations.map((m) => m.name) };
  }

  const owner = `${hostname()}:${process.pid}:${randomUUID()}`;
  await acquireLock(client, keyspace, owner, options.lockTimeoutMs ?? 180_000);
  let failed = false;
  try {
    // Read again under the lock: whoever held it before may have applied everything.
    const todo = await pending();
    for (const m of todo) {
      for (const statement of m.statements) {
        await client.execute(statement.replaceAll('{{keyspace}}', keyspace));
      }
      await client.execute(
        `INSERT INTO ${keyspace}.schema_migrations (scope, version, name, checksum, applied_at, applied_by)
         VALUES (?, ?, ?, ?, toTimestamp(now()), ?)`,
        [SCOPE, m.version, m.name, m.checksum, owner],
        quorum,
      );
      await client.execute(
        `UPDATE ${keyspace}.schema_migrations_lock USING TTL ${LOCK_TTL_SECONDS}
         SET owner = ?, acquired_at = toTimestamp(now()) WHERE name = ? IF owner = ?`,
        [owner, LOCK, owner],
        { prepare: true },
      );
    }
    const done = new Set(todo.map((m) => m.version));
    return {
      keyspace,
      applied: todo.map((m) => m.name),
      alreadyApplied: migrations.filter((m) => !done.has(m.version)).map((m) => m.name),
    };
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    const release = client.execute(
      `DELETE FROM ${keyspace}.schema_migrations_lock WHERE name = ? IF owner = ?`,
      [LOCK, owner],
      { prepare: true },
    );
    // Keep the error that stopped the migration; the lock expires on its own.
    await (failed ? release.catch(() => undefined) : release);
  }
}

async function appliedChecksums(client: Client, keyspace: string): Promise<Map<number, string>> {
  const rs = await client.execute(
    `SELECT version, checksum FROM ${keyspace}.schema_migrations WHERE scope = ?`,
    [SCOPE],
    quorum,
  );
  return new Map(rs.rows.map((r) => [r.get('version') as number, r.get('checksum') as string]));
}

async function acquireLock(
  client: Client,
  keyspace: string,
  owner: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rs = await client.execute(
      `INSERT INTO ${keyspace}.schema_migrations_lock (name, owner, acquired_at)
       VALUES (?, ?, toTimestamp(now())) IF NOT EXISTS USING TTL ${LOCK_TTL_SECONDS}`,
      [LOCK, owner],
      { prepare: true },
    );
    if (rs.wasApplied()) return;
    if (Date.now() > deadline) {
      const holder = rs.first()?.get('owner') as string | undefined;
      throw new Error(
        `another migrator (${holder ?? 'unknown'}) has held ${keyspace}.schema_migrations_lock for over ${timeoutMs} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 300));
  }
}

async function readMigrations(dir: string): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const name of (await readdir(dir)).sort()) {
    if (!name.endsWith('.cql')) continue;
    const match = FILE_NAME.exec(name);
    if (!match) throw new Error(`${dir}/${name}: migration files are named NNN_name.cql`);
    const statements = splitCqlStatements(await readFile(`${dir}/${name}`, 'utf8'));
    const checksum = createHash('sha256').update(statements.join(';\n')).digest('hex');
    migrations.push({ version: Number(match[1]), name, statements, checksum });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) {
      throw new Error(
        `${dir}: ${migrations[i - 1]!.name} and ${migrations[i]!.name} have the same version`,
      );
    }
  }
  return migrations;
}

/**
 * The statements of a CQL file, without comments (`--`, `//`, `/* *\/`), split at `;` outside
 * string literals and quoted names. The checksum is taken over these, so editing a comment of
 * an applied file is allowed.
 */
export function splitCqlStatements(text: string): string[] {
  const statements: string[] = [];
  let current = '';
  let i = 0;
  const push = () => {
    const s = current.trim();
    if (s) statements.push(s);
    current = '';
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if ((c === '-' && next === '-') || (c === '/' && next === '/')) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) throw new Error('unterminated /* comment in CQL');
      i = end + 2;
      current += ' ';
    } else if (c === "'" || c === '"') {
      // A quote inside is doubled ('it''s'), which this reads as two literals back to back.
      const end = text.indexOf(c, i + 1);
      if (end === -1) throw new Error(`unterminated ${c} in CQL`);
      current += text.slice(i, end + 1);
      i = end + 1;
    } else if (c === ';') {
      push();
      i++;
    } else {
      // Runs of whitespace count as one space, so re-indenting a file keeps its checksum.
      if (!/\s/.test(c)) current += c;
      else if (!current.endsWith(' ')) current += ' ';
      i++;
    }
  }
  push();
  return statements;
}

function replicationLiteral(replication: Record<string, string | number>): string {
  if (typeof replication.class !== 'string') {
    throw new Error('replication needs a "class" (SimpleStrategy or NetworkTopologyStrategy)');
  }
  const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
  const entries = Object.entries(replication).map(([k, v]) => `${quote(k)}: ${quote(String(v))}`);
  return `{${entries.join(', ')}}`;
}
