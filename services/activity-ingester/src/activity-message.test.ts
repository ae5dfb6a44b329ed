import { describe, expect, it } from 'vitest';
import { aRecordedActivity } from '@guard/testing/recorded-activity';
import { deadLetterHeaders, headerText, parseActivityMessage } from './activity-message.js';

const v1 = { 'schema-version': Buffer.from('1'), 'content-type': Buffer.from('application/json') };

describe('parseActivityMessage', () => {
  it('reads a v1 activity, from a Buffer as Kafka delivers it', () => {
    const activity = aRecordedActivity('org-a', 0);
    const parsed = parseActivityMessage({
      value: Buffer.from(JSON.stringify(activity)),
      headers: v1,
    });
    expect(parsed).toEqual({ ok: true, activity });
  });

  it('drops fields the v1 schema does not know (a newer producer adding fields stays readable)', () => {
    const activity = aRecordedActivity('org-a', 1);
    const parsed = parseActivityMessage({
      value: JSON.stringify({ ...activity, added_in_a_later_minor: 'x' }),
      headers: v1,
    });
    expect(parsed).toEqual({ ok: true, activity });
  });

  it('refuses a message without schema-version, or with a version it does not read', () => {
    const value = JSON.stringify(aRecordedActivity('org-a'));
    expect(parseActivityMessage({ value, headers: {} })).toMatchObject({
      ok: false,
      reason: 'unsupported-schema-version',
      detail: 'no schema-version header',
    });
    const v2 = parseActivityMessage({ value, headers: { 'schema-version': '2' } });
    expect(v2).toMatchObject({ ok: false, reason: 'unsupported-schema-version' });
    expect(!v2.ok && v2.detail).toContain('schema-version 2');
  });

  it('refuses bad JSON and empty values as invalid-json', () => {
    const bad = parseActivityMessage({ value: Buffer.from('{"id": '), headers: v1 });
    expect(bad).toMatchObject({ ok: false, reason: 'invalid-json' });
    expect(parseActivityMessage({ value: null, headers: v1 })).toEqual({
      ok: false,
      reason: 'invalid-json',
      detail: 'empty value',
    });
  });

  it('refuses JSON that is not a v1 activity, naming the fields at fault', () => {
    const { org_id: _dropped, ...noOrg } = aRecordedActivity('org-a');
    const parsed = parseActivityMessage({
      value: JSON.stringify({ ...noOrg, id: 'not-an-id' }),
      headers: v1,
    });
    expect(parsed).toMatchObject({ ok: false, reason: 'invalid-activity' });
    expect(!parsed.ok && parsed.detail).toMatch(/^id: .*; org_id: /);
    expect(parseActivityMessage({ value: '[1,2]', headers: v1 })).toMatchObject({
      reason: 'invalid-activity',
      detail: expect.stringContaining('(root)'),
    });
  });

  it('keeps the reason short for a huge broken value', () => {
    const parsed = parseActivityMessage({ value: `{"x": "${'a'.repeat(100_000)}`, headers: v1 });
    expect(!parsed.ok && parsed.detail.length).toBeLessThanOrEqual(501);
  });
});

describe('deadLetterHeaders', () => {
  it('keeps the original headers and says why and where from, replacing older dlq-* headers', () => {
    const headers = deadLetterHeaders(
      { ...v1, traceparent: 'tp', 'dlq-reason': 'invalid-json', gone: undefined },
      'invalid-activity',
      'id: Invalid string',
      { topic: 'guard.activity.v1', partition: 3, offset: '42', timestamp: '1767225600000' },
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(headers).toEqual({
      'schema-version': v1['schema-version'],
      'content-type': v1['content-type'],
      traceparent: 'tp',
      'dlq-reason': 'invalid-activity',
      'dlq-detail': 'id: Invalid string',
      'dlq-original-topic': 'guard.activity.v1',
      'dlq-original-partition': '3',
      'dlq-original-offset': '42',
      'dlq-original-timestamp': '1767225600000',
      'dlq-failed-at': '2026-01-01T00:00:00.000Z',
    });
  });

  it('headerText reads the first of repeated headers, as text', () => {
    expect(headerText({ a: [Buffer.from('1'), '2'] }, 'a')).toBe('1');
    expect(headerText({ a: 'x' }, 'b')).toBeUndefined();
    expect(headerText(undefined, 'a')).toBeUndefined();
  });
});
