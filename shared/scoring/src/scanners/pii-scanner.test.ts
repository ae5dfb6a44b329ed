import { describe, expect, it } from 'vitest';
import { redactText, scanPii } from './pii-scanner.js';
import type { PiiType } from './scanners-config.js';

const types = (text: string, only?: PiiType[]): string[] =>
  scanPii(text, only ? new Set(only) : undefined).map((f) => `${f.type}:${f.subtype}`);

describe('scanPii: true positives', () => {
  it.each([
    ['email', 'write to jane.doe+news@example.co.uk today', 'email:email'],
    ['visa with spaces', 'card 4111 1111 1111 1111 exp 12/29', 'credit_card:visa'],
    ['mastercard plain', 'pay with 5555555555554444', 'credit_card:mastercard'],
    ['amex', 'amex 3782-822463-10005', 'credit_card:amex'],
    ['US SSN', 'my ssn is 123-45-6789', 'national_id:us_ssn'],
    ['US SSN without dashes, with context', 'SSN: 123456789', 'national_id:us_ssn'],
    ['UK NINO', 'NI number AB 12 34 56 C', 'national_id:uk_nino'],
    ['Spanish DNI', 'DNI 12345678Z', 'national_id:es_dni'],
    ['Spanish NIE', 'NIE X1234567L', 'national_id:es_nie'],
    ['Italian codice fiscale', 'CF RSSMRA85T10A562S', 'national_id:it_fiscal_code'],
    ['French NIR', 'numero 2 55 08 14 168 025 38', 'national_id:fr_nir'],
    ['Dutch BSN with context', 'mijn BSN is 111222333', 'national_id:nl_bsn'],
    ['Polish PESEL with context', 'PESEL: 44051401359', 'national_id:pl_pesel'],
    ['German IBAN', 'IBAN DE89 3704 0044 0532 0130 00 please', 'iban:de'],
    ['UK IBAN compact', 'GB82WEST12345698765432', 'iban:gb'],
    ['international phone', 'reach me on +44 20 7946 0958', 'phone:international'],
    ['NANP phone', 'office (415) 555-2671', 'phone:national'],
    ['phone with context', 'call me at 020 7946 0958', 'phone:national'],
    ['public IPv4', 'the server is 8.8.8.8.', 'ip_address:ipv4'],
    ['IPv6', 'host 2001:db8:85a3::8a2e:370:7334 is down', 'ip_address:ipv6'],
  ])('finds %s', (_label, text, expected) => {
    expect(types(text)).toContain(expected);
  });
});

describe('scanPii: false positives', () => {
  it.each([
    ['Luhn-invalid card-length number', 'order 4111 1111 1111 1112 shipped'],
    ['card-length id with an unknown issuer', 'tracking 9400 1000 0000 0000 0000'],
    ['dates', 'born 1990-04-12, moved 12/04/2019, back 2024.01.15'],
    ['version strings', 'upgrade to v1.2.3.4 or version 10.0.19041.1, node 20.19.0'],
    ['decimals and prices', 'pi is 3.14159 and it costs 1,299.99 dollars'],
    ['an invalid SSN area', 'code 000-12-3456 and 666-12-3456'],
    ['nine digits without context', 'invoice 123456789 is paid'],
    ['eleven digits without context', 'reference 44051401359'],
    ['wrong DNI letter', 'ref 12345678A'],
    ['wrong IBAN checksum', 'IBAN DE89 3704 0044 0532 0130 01'],
    ['clock times and C++ scopes', 'at 12:30:45 call std::vector::push_back'],
    ['loopback addresses', 'listen on 127.0.0.1 and ::1'],
    ['a bare number without phone context', 'there were 4155552671 grains'],
    ['ISBN-like numbers', 'ISBN 978-3-16-148410-0'],
    ['not an e-mail', 'use @media screen and user@localhost'],
  ])('ignores %s', (_label, text) => {
    expect(types(text)).toEqual([]);
  });

  it('private IPv4 addresses are reported with lower confidence', () => {
    const f = scanPii('gateway 192.168.1.1');
    expect(f).toHaveLength(1);
    expect(f[0]?.confidence).toBeLessThan(0.6);
  });
});

describe('scanPii: filtering, overlaps and redaction', () => {
  const text = 'Mail a@b.io, card 4111111111111111, phone +1 415 555 2671';

  it('filters by pii_types', () => {
    expect(types(text, ['email'])).toEqual(['email:email']);
    expect(types(text, ['phone', 'credit_card']).sort()).toEqual([
      'credit_card:visa',
      'phone:international',
    ]);
  });

  it('reports a card once even though it also looks like a phone number', () => {
    expect(types('4111 1111 1111 1111')).toEqual(['credit_card:visa']);
  });

  it('never includes the value in a finding', () => {
    expect(JSON.stringify(scanPii(text))).not.toContain('4111');
  });

  it('redacts by type or mask', () => {
    const f = scanPii(text);
    expect(redactText(text, f)).toBe('Mail [EMAIL], card [CREDIT_CARD], phone [PHONE]');
    expect(redactText('x a@b.io', scanPii('x a@b.io'), 'mask')).toBe('x ******');
  });
});
