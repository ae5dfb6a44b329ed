import { describe, expect, it } from 'vitest';
import { scanSecrets } from './secrets-scanner.js';

// Test tokens are assembled at runtime so no realistic-looking key sits in the repository.
const rnd = (n: number, alphabet = 'aZ3kP9xQ7mW2vB8nL4tR6yC1'): string =>
  Array.from({ length: n }, (_, i) => alphabet[(i * 7 + 3) % alphabet.length]).join('');
const kinds = (t: string): string[] => scanSecrets(t).map((f) => f.subtype);

describe('scanSecrets: provider formats', () => {
  it.each([
    [
      'AWS access key id',
      `aws_access_key_id = ${'AKIA'}${'IOSFODNN7EXAMPLE'}`,
      'aws_access_key_id',
    ],
    [
      'AWS secret key',
      `aws_secret_access_key = "${rnd(40, 'abcdEFGH1234/+xyz')}"`,
      'aws_secret_access_key',
    ],
    ['GCP API key', `key=${'AIza'}${rnd(35)}`, 'gcp_api_key'],
    [
      'Azure storage key',
      `DefaultEndpointsProtocol=https;AccountName=x;AccountKey=${rnd(86)}==`,
      'azure_storage_key',
    ],
    ['GitHub token', `token ${'ghp'}_${rnd(36)}`, 'github_token'],
    ['GitLab token', `${'glpat'}-${rnd(20)}`, 'gitlab_token'],
    ['Slack token', `${'xoxb'}-123456789012-${rnd(24)}`, 'slack_token'],
    ['Stripe secret key', `${'sk'}_${'live'}_${rnd(24)}`, 'stripe_secret_key'],
    ['OpenAI key', `OPENAI_API_KEY=${'sk'}-proj-${rnd(48)}`, 'openai_api_key'],
    ['Anthropic key', `${'sk-ant'}-api03-${rnd(95)}`, 'anthropic_api_key'],
    ['JWT', `Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${rnd(43)}`, 'jwt'],
    [
      'private key block',
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----',
      'private_key_block',
    ],
    ['password assignment', `db.password = "Tr0ub4dor&3-${rnd(4)}"`, 'password_assignment'],
    [
      'random high-entropy token',
      `export THING=${rnd(32, 'q8Fz2LmX9vT4rK7pW3nB6yH1cJ5dG0sA')}`,
      'high_entropy_string',
    ],
  ])('finds %s', (_label, text, subtype) => {
    expect(kinds(text)).toContain(subtype);
  });

  it('raises confidence of a high-entropy token next to a secret-ish name', () => {
    const tok = rnd(32, 'q8Fz2LmX9vT4rK7pW3nB6yH1cJ5dG0sA');
    const plain = scanSecrets(`value ${tok}`)[0];
    const named =
      scanSecrets(`api_token: ${tok}`).find((f) => f.type !== 'password_assignment') ??
      scanSecrets(`api_token: ${tok}`)[0];
    expect(plain?.confidence).toBeLessThan(named?.confidence ?? 0);
  });
});

describe('scanSecrets: things that are not secrets', () => {
  it.each([
    ['sha256 digest', 'sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['git commit', 'fixed in 9fceb02d0ae598e95dc970b74767f19372d61af8'],
    ['md5', 'md5 d41d8cd98f00b204e9800998ecf8427e'],
    ['UUID', 'id 123e4567-e89b-12d3-a456-426614174000'],
    [
      'base64 image',
      'src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="',
    ],
    [
      'long identifiers',
      'class AbstractSingletonProxyFactoryBean extends BaseTransactionManagerAdapter',
    ],
    ['file paths', 'see /usr/local/lib/node_modules/typescript/lib/tsserver.js'],
    ['env placeholder', 'password = process.env.DB_PASSWORD'],
    ['template placeholder', 'api_key: ${API_KEY}'],
    ['obvious placeholder', 'password: changeme and secret = "xxxxxxxxxxxx"'],
    ['a word as password value', 'password = correcthorsebatterystaple'],
    ['library names starting with sk-', 'we use sk-learn-compatible-estimators here'],
    ['publishable Stripe key', `${'pk'}_${'live'}_${rnd(24)}`.replace(/\d/g, 'a') + ' is public'],
  ])('ignores %s', (_label, text) => {
    expect(kinds(text)).toEqual([]);
  });

  it('filters by type and can disable entropy', () => {
    const text = `${'ghp'}_${rnd(36)} and ${rnd(32, 'q8Fz2LmX9vT4rK7pW3nB6yH1cJ5dG0sA')}`;
    expect(scanSecrets(text, { types: new Set(['github']) }).map((f) => f.type)).toEqual([
      'github',
    ]);
    expect(
      scanSecrets(text, { entropy: { enabled: false, min_length: 24, min_entropy: 4 } }).map(
        (f) => f.type,
      ),
    ).toEqual(['github']);
  });
});
