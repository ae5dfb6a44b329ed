import { describe, expect, it } from 'vitest';
import { parseScannersConfig, ScannersConfigSchema } from './scanners-config.js';

describe('ScannersConfigSchema', () => {
  it('accepts the preset shapes and fills defaults', () => {
    const c = ScannersConfigSchema.parse({
      pii: { enabled: true, pii_types: ['email', 'phone'] },
      secrets: { enabled: true },
    });
    expect(c.pii).toEqual({
      enabled: true,
      pii_types: ['email', 'phone'],
      redact: false,
      redaction: 'type',
      action: 'report',
    });
    expect(c.secrets?.entropy).toEqual({ enabled: true, min_length: 24, min_entropy: 4 });
  });

  it('expands shorthands', () => {
    const c = ScannersConfigSchema.parse({
      pii: true,
      secrets: false,
      keywords: ['acme'],
      regex: 'order-\\d+',
      system_prompt: 'be nice',
    });
    expect(c.pii?.enabled).toBe(true);
    expect(c.secrets?.enabled).toBe(false);
    expect(c.keywords).toMatchObject({ keywords: ['acme'], fuzzy: false, action: 'block' });
    expect(c.regex?.patterns).toEqual([{ pattern: 'order-\\d+', flags: 'i', name: undefined }]);
    expect(c.system_prompt).toMatchObject({ enabled: true, text: 'be nice', ngram_size: 5 });
  });

  it('keeps unknown keys (configs written for other services stay valid)', () => {
    expect(ScannersConfigSchema.parse({ toxicity: { threshold: 0.2 } })).toEqual({
      toxicity: { threshold: 0.2 },
    });
  });

  it('rejects unsafe or broken regexes with a readable message', () => {
    const r = ScannersConfigSchema.safeParse({ regex: { patterns: ['(a)\\1'] } });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toContain('backreferences');
    expect(ScannersConfigSchema.safeParse({ regex: ['(?=x)'] }).success).toBe(false);
  });

  it('rejects unknown pii types and bad actions', () => {
    expect(ScannersConfigSchema.safeParse({ pii: { pii_types: ['dna'] } }).success).toBe(false);
    expect(
      ScannersConfigSchema.safeParse({ keywords: { keywords: ['x'], action: 'explode' } }).success,
    ).toBe(false);
  });

  it('parses leniently for scoring: drops only the broken key', () => {
    const p = parseScannersConfig({ pii: true, regex: ['(a)\\1'] });
    expect(p.config.pii?.enabled).toBe(true);
    expect(p.config.regex).toBeUndefined();
    expect(p.problems[0]).toContain('scanners_config.regex');
  });
});
