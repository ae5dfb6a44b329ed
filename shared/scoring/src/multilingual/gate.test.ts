import { describe, expect, it } from 'vitest';
import { englishGate } from './gate.js';

const sends = englishGate();

describe('multilingual gate', () => {
  it('keeps English, however short or odd', () => {
    for (const t of [
      'How do I reset my password?',
      'play jazz',
      'set an alarm for seven tomorrow',
      'Write a Python function that parses ISO dates',
      "What's the café's opening time?",
      '12345 !!!',
      '',
    ])
      expect(sends(t), t).toBe(false);
  });

  it('sends other scripts and Latin-script languages the English vocabulary does not read', () => {
    for (const t of [
      'Làm thế nào để nấu cơm ngon?',
      '今天天气怎么样',
      'كيف أطبخ الأرز',
      'আমি কীভাবে ভাত রান্না করব',
      'Kepiye carane masak sega sing enak',
      'Bagaimana cara memasak nasi yang enak',
      'Wie koche ich Reis richtig',
    ])
      expect(sends(t), t).toBe(true);
  });
});
