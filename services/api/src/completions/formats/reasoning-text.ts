/**
 * The model's visible reasoning in a non-streamed answer, which passes to the caller as the
 * provider sent it and so must be checked with the answer: Anthropic `thinking` blocks, Gemini
 * parts marked `thought`, Responses `reasoning` items (summary and content text), and the
 * `reasoning_content`/`reasoning` field OpenAI-compatible servers add to a chat message.
 * (Encrypted or redacted reasoning carries no readable text and is not read.) Read from the raw
 * body, defensively: anything unexpected contributes nothing.
 */

import { isRecord } from './openai-common.js';

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function texts(items: unknown, field: string): string[] {
  return list(items)
    .filter(isRecord)
    .map((x) => x[field])
    .filter((t): t is string => typeof t === 'string' && t.length > 0);
}

export function anthropicReasoning(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  return (
    list(body.content)
      .filter(isRecord)
      .filter((b) => b.type === 'thinking')
      .flatMap((b) => (typeof b.thinking === 'string' ? [b.thinking] : []))

      .join('\n') || undefined
  );
}

export function geminiReasoning(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const first = list(body.candidates)[0];
  if (!isRecord(first) || !isRecord(first.content)) return undefined;
  return (
    list(first.content.parts)
      .filter(isRecord)
      .filter((p) => p.thought === true)
      .flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))

      .join('\n') || undefined
  );
}

export function responsesReasoning(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  return (
    list(body.output)
      .filter(isRecord)
      .filter((item) => item.type === 'reasoning')
      .flatMap((item) => [...texts(item.summary, 'text'), ...texts(item.content, 'text')])

      .join('\n') || undefined
  );
}

export function chatReasoning(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const first = list(body.choices)[0];
  if (!isRecord(first) || !isRecord(first.message)) return undefined;
  const m = first.message;
  return (
    [m.reasoning_content, m.reasoning]
      .filter((t): t is string => typeof t === 'string')

      .join('\n') || undefined
  );
}
