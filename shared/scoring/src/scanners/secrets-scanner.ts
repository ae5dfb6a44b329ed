/**
 * Secrets scanner: provider key formats (AWS, GCP, Azure, GitHub, GitLab, Slack, Stripe,
 * OpenAI, Anthropic), JWTs, private key blocks, `password = ...` assignments and high-entropy
 * tokens. Ordinary hashes (hex digests, UUIDs), placeholders and words are not secrets.
 * Findings carry offsets and kinds, never the value.
 */
import { keepDisjoint } from './disjoint-spans.js';
import type { SecretType } from './scanners-config.js';

export interface SecretFinding {
  type: SecretType;
  /** e.g. "aws_access_key_id", "github_pat", "rsa private key". */
  subtype: string;
  start: number;
  end: number;
  confidence: number;
}

export interface SecretsScanOptions {
  types?: ReadonlySet<SecretType>;
  entropy?: { enabled: boolean; min_length: number; min_entropy: number };
}

interface Pattern {
  type: SecretType;
  subtype: string;
  re: RegExp;
  confidence: number;
  /** Cheap substring that must occur for the regex to be worth running. */
  hint: string | RegExp;
  /** Which capture group is the secret (default: whole match). */
  group?: number;
}

const PATTERNS: Pattern[] = [
  {
    type: 'aws',
    subtype: 'aws_access_key_id',
    re: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g,
    confidence: 0.95,
    hint: /A[KSBCGIRN][A-Z]A/,
  },
  {
    type: 'aws',
    subtype: 'aws_secret_access_key',
    re: /\baws.{0,20}?(?:secret|sk).{0,20}?['"=:\s]{1,4}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    confidence: 0.95,
    hint: /aws/i,
    group: 1,
  },
  {
    type: 'gcp',
    subtype: 'gcp_api_key',
    re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
    confidence: 0.95,
    hint: 'AIza',
  },
  {
    type: 'gcp',
    subtype: 'gcp_oauth_client_secret',
    re: /\bGOCSPX-[0-9A-Za-z_-]{28}(?![0-9A-Za-z_-])/g,
    confidence: 0.95,
    hint: 'GOCSPX-',
  },
  {
    type: 'gcp',
    subtype: 'gcp_service_account_key',
    re: /"private_key_id"\s*:\s*"[0-9a-f]{40}"/g,
    confidence: 0.95,
    hint: 'private_key_id',
  },
  {
    type: 'azure',
    subtype: 'azure_storage_key',
    re: /AccountKey=([A-Za-z0-9+/]{86}==)/g,
    confidence: 0.95,
    hint: 'AccountKey=',
    group: 1,
  },
  {
    type: 'azure',
    subtype: 'azure_sas_signature',
    re: /[?&]sig=([A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})/g,
    confidence: 0.8,
    hint: 'sig=',
    group: 1,
  },
  {
    type: 'azure',
    subtype: 'azure_client_secret',
    re: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
    confidence: 0.9,
    hint: 'Q~',
  },
  {
    type: 'github',
    subtype: 'github_token',
    re: /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g,
    confidence: 0.95,
    hint: /gh[pousr]_/,
  },
  {
    type: 'github',
    subtype: 'github_fine_grained_pat',
    re: /\bgithub_pat_[A-Za-z0-9_]{60,255}\b/g,
    confidence: 0.95,
    hint: 'github_pat_',
  },
  {
    type: 'gitlab',
    subtype: 'gitlab_token',
    re: /\bgl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}\b/g,
    confidence: 0.95,
    hint: /gl(?:pat|dt|rt|ptt|cbt|oas)-/,
  },
  {
    type: 'slack',
    subtype: 'slack_token',
    re: /\bxox[abposr]-[A-Za-z0-9-]{10,250}/g,
    confidence: 0.95,
    hint: 'xox',
  },
  {
    type: 'slack',
    subtype: 'slack_webhook',
    re: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{20,}/g,
    confidence: 0.95,
    hint: 'hooks.slack.com',
  },
  {
    type: 'stripe',
    subtype: 'stripe_secret_key',
    re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}\b/g,
    confidence: 0.95,
    hint: /[sr]k_(?:live|test)_/,
  },
  {
    type: 'stripe',
    subtype: 'stripe_webhook_secret',
    re: /\bwhsec_[A-Za-z0-9]{24,}\b/g,
    confidence: 0.9,
    hint: 'whsec_',
  },
  {
    type: 'anthropic',
    subtype: 'anthropic_api_key',
    re: /\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,120}/g,
    confidence: 0.95,
    hint: 'sk-ant-',
  },
  {
    type: 'openai',
    subtype: 'openai_api_key',
    re: /\bsk-(?:(?:proj|svcacct|admin)-)?(?!ant-)[A-Za-z0-9_-]{20,200}(?![A-Za-z0-9_-])/g,
    confidence: 0.9,
    hint: 'sk-',
  },
  {
    type: 'jwt',
    subtype: 'jwt',
    // Anchored at the start of a token run: with `\b` every "-eyJ" inside one long run was a new
    // start that scanned to the end of the run (quadratic). A JWT glued to a word by "-" is missed.
    re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g,
    confidence: 0.9,
    hint: 'eyJ',
  },
  {
    type: 'private_key',
    subtype: 'private_key_block',
    re: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----/g,
    confidence: 0.99,
    hint: 'PRIVATE KEY',
  },
  {
    type: 'password_assignment',
    subtype: 'password_assignment',
    re: /\b(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b["']?\s{0,3}[:=]\s{0,3}["']?([^\s"'`,;]{8,128})/gi,
    confidence: 0.8,
    hint: /pass|pwd|secret|key|token/i,
    group: 1,
  },
];

const PLACEHOLDER_RE =
  /^(?:x{3,}|\*{3,}|\.{3,}|<[^>]*>|\{[^}]*\}|\$\{?[A-Za-z_]|%[A-Za-z_]|process\.env|os\.environ|env\(|getenv|changeme|change_me|password\d*|secret|example|your[_-]|my[_-]|dummy|placeholder|redacted|none|null|undefined|true|false|test)/i;

function isPlaceholder(value: string): boolean {
  if (PLACEHOLDER_RE.test(value)) return true;
  if (/^(.)\1+$/.test(value)) return true;
  if (/(?:x{4,}|X{4,}|\*{4,}|0{8,})/.test(value)) return true;
  return false;
}

export function shannonEntropy(s: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const TOKEN_RE = /(?<![A-Za-z0-9+/_=.~-])[A-Za-z0-9+/_=.~-]{20,}/g;
const HEX_ONLY_RE = /^[0-9a-fA-F]+$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SECRET_CONTEXT_RE = /(?:key|secret|token|passw|pwd|credential|auth|bearer|api)/i;

export function scanSecrets(text: string, options: SecretsScanOptions = {}): SecretFinding[] {
  const want = (t: SecretType): boolean => options.types === undefined || options.types.has(t);
  const found: SecretFinding[] = [];
  for (const p of PATTERNS) {
    if (!want(p.type)) continue;
    if (typeof p.hint === 'string' ? !text.includes(p.hint) : !p.hint.test(text)) continue;
    p.re.lastIndex = 0;
    for (let m = p.re.exec(text); m !== null; m = p.re.exec(text)) {
      let start = m.index;
      let value = m[0];
      if (p.group !== undefined) {
        const g = m[p.group];
        if (g === undefined) continue;
        start = m.index + m[0].lastIndexOf(g);
        value = g;
      }
      if (p.type === 'password_assignment' && (isPlaceholder(value) || !looksLikeCredential(value)))
        continue;
      if (p.type === 'openai' && !/\d/.test(value)) continue; // "sk-learn-style-names" are words
      found.push({
        type: p.type,
        subtype: p.subtype,
        start,
        end: start + value.length,
        confidence: p.confidence,
      });
    }
  }
  const entropy = options.entropy ?? { enabled: true, min_length: 24, min_entropy: 4.0 };
  if (want('high_entropy') && entropy.enabled)
    scanHighEntropy(text, entropy.min_length, entropy.min_entropy, found);
  return dedupe(found);
}

/** A password value: not a plain word or a number, has some variety. */
function looksLikeCredential(v: string): boolean {
  const classes =
    Number(/[a-z]/.test(v)) +
    Number(/[A-Z]/.test(v)) +
    Number(/\d/.test(v)) +
    Number(/[^A-Za-z0-9]/.test(v));
  return (
    classes >= 2 && !/^\d+$/.test(v) && !/^[a-z]+(?:[._-][a-z]+)*$/i.test(v) && !v.includes('(')
  );
}

function scanHighEntropy(
  text: string,
  minLength: number,
  minEntropy: number,
  found: SecretFinding[],
): void {
  // Provider findings sorted by start; tokens arrive in text order, so one forward cursor (with the
  // furthest end seen so far) answers "overlaps a finding?" for all of them in linear total time.
  const known = [...found].sort((a, b) => a.start - b.start);
  let cursor = 0;
  let knownEnd = -1;
  TOKEN_RE.lastIndex = 0;
  for (let m = TOKEN_RE.exec(text); m !== null; m = TOKEN_RE.exec(text)) {
    const [from, to] = trimTokenEdges(m[0]);
    const start = m.index + from;
    if (to - from < minLength || to - from > 200) continue;
    let tok = m[0].slice(from, to);
    while (cursor < known.length && (known[cursor]?.start ?? 0) < start + tok.length) {
      knownEnd = Math.max(knownEnd, known[cursor]?.end ?? 0);
      cursor++;
    }
    if (knownEnd > start) continue;
    // Hex digests, UUIDs, paths, dotted names and base64 of readable text are not secrets.
    if (HEX_ONLY_RE.test(tok) || UUID_RE.test(tok)) continue;
    if (tok.includes('/') && /[A-Za-z]{3,}\/[A-Za-z]{3,}/.test(tok)) continue;
    if (/^[A-Za-z]+(?:[._-][A-Za-z]+)+$/.test(tok)) continue;
    const before = text.slice(Math.max(0, m.index - 12), m.index);
    if (/base64,\s*$/.test(before)) continue;
    if (!/[a-z]/.test(tok) || !/[A-Z]/.test(tok) || !/\d/.test(tok)) continue;
    const h = shannonEntropy(tok);
    // A string of n characters cannot exceed log2(n) bits per character: scale the bar.
    const bar = Math.min(minEntropy, Math.log2(tok.length) - 0.35);
    if (h < bar) continue;
    tok = tok.slice(0, 200);
    const context = SECRET_CONTEXT_RE.test(text.slice(Math.max(0, m.index - 40), m.index));
    found.push({
      type: 'high_entropy',
      subtype: 'high_entropy_string',
      start,
      end: start + tok.length,
      confidence: context ? 0.85 : 0.6,
    });
  }
}

/**
 * Bounds of a token without leading `.~=-` and trailing `.~-`. A loop, not
 * `replace(/^[.~=-]+|[.~-]+$/g)`: that regex retries its `$` branch at every position of a long
 * run of dots, quadratic in the run.
 */
function trimTokenEdges(tok: string): [number, number] {
  let from = 0;
  while (from < tok.length && '.~=-'.includes(tok[from] ?? '')) from++;
  let to = tok.length;
  while (to > from && '.~-'.includes(tok[to - 1] ?? '')) to--;
  return [from, to];
}

function dedupe(found: SecretFinding[]): SecretFinding[] {
  if (found.length < 2) return found;
  return keepDisjoint(
    [...found].sort((a, b) => b.confidence - a.confidence || b.end - b.start - (a.end - a.start)),
  );
}
