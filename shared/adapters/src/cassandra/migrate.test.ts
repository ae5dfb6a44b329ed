import { describe, expect, it } from 'vitest';
import { assertKeyspaceName, splitCqlStatements } from './migrate.js';

describe('splitCqlStatements', () => {
  it('splits at semicolons outside literals and drops comments', () => {
    const cql = `
      -- a comment; not a statement
      CREATE TABLE {{keyspace}}.a (k text PRIMARY KEY)
        WITH comment = 'it''s; one';  // trailing; comment
      /* block;
         comment */ INSERT INTO "Quoted;Name" (k) VALUES ('--not a comment');
      INSERT INTO b (k) VALUES ('x')`;
    expect(splitCqlStatements(cql)).toEqual([
      "CREATE TABLE {{keyspace}}.a (k text PRIMARY KEY) WITH comment = 'it''s; one'",
      `INSERT INTO "Quoted;Name" (k) VALUES ('--not a comment')`,
      "INSERT INTO b (k) VALUES ('x')",
    ]);
  });

  it('keeps whitespace inside literals and reads re-indented statements as the same', () => {
    const one = splitCqlStatements("CREATE TABLE t (k text)\n  WITH comment = 'a  b';");
    const two = splitCqlStatements("CREATE TABLE t (k text) WITH comment = 'a  b'");
    expect(one).toEqual(two);
    expect(one[0]).toContain("'a  b'");
  });

  it('refuses an unterminated literal or comment', () => {
    expect(() => splitCqlStatements("INSERT INTO t (k) VALUES ('x)")).toThrow(/unterminated/);
    expect(() => splitCqlStatements('/* open')).toThrow(/unterminated/);
  });
});

describe('assertKeyspaceName', () => {
  it('takes lowercase CQL names of up to 48 characters only', () => {
    expect(() => assertKeyspaceName('guard_prod')).not.toThrow();
    for (const bad of ['Guard', 'guard-prod', '1guard', 'g; DROP KEYSPACE x', 'g'.repeat(49)]) {
      expect(() => assertKeyspaceName(bad)).toThrow(/keyspace/);
    }
  });
});
