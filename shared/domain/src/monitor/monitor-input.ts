import type { MessageRole, ScoreMessage, ScoreToolDef } from '../scoring/score-contract.js';

/** A non-text part that the text scorer does not look at; reported back as `ignored_inputs`. */
export interface IgnoredInput {
  type: 'media';
  reason: 'text_moderation_only';
  description: string;
}

export interface InlineRule {
  name: string;
  description: string;
}

/** Content parts as the OpenAI chat and Responses APIs send them. */
export type ContentPart = { type: string; text?: string | undefined; [k: string]: unknown };

export interface RawMessage {
  role: MessageRole;
  content?: string | ContentPart[] | null | undefined;
  name?: string | undefined;
  tool_calls?:
    | {
        id?: string | undefined;
        type?: string | undefined;
        function: { name: string; arguments?: string | undefined };
      }[]
    | undefined;
  tool_call_id?: string | undefined;
}

const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);

/** Flatten part arrays to text; list what is not text. */
export function toScoreMessages(messages: RawMessage[]): {
  messages: ScoreMessage[];
  ignored: IgnoredInput[];
} {
  const ignored: IgnoredInput[] = [];
  const out = messages.map((m, index): ScoreMessage => {
    let content = '';
    if (typeof m.content === 'string') content = m.content;
    else if (Array.isArray(m.content)) {
      const texts: string[] = [];
      for (const part of m.content) {
        if (TEXT_PARTS.has(part.type) && typeof part.text === 'string') texts.push(part.text);
        else
          ignored.push({
            type: 'media',
            reason: 'text_moderation_only',
            description: `${part.type} part in message ${index} (${m.role}) was not scored`,
          });
      }
      content = texts.join('\n');
    }
    const msg: ScoreMessage = { role: m.role, content };
    if (m.name !== undefined) msg.name = m.name;
    if (m.tool_call_id !== undefined) msg.tool_call_id = m.tool_call_id;
    if (m.tool_calls?.length) {
      msg.tool_calls = m.tool_calls.map((c) => ({
        ...(c.id ? { id: c.id } : {}),
        name: c.function.name,
        arguments: c.function.arguments ?? '',
      }));
    }
    return msg;
  });
  return { messages: out, ignored };
}

/**
 * Inline rules come as an object name->description, an array of strings (named rule_1, rule_2…
 * by position) or an array of one-key objects.
 */
export type InlineRulesInput = Record<string, string> | (string | Record<string, string>)[];

export function toInlineRules(input: InlineRulesInput | undefined): InlineRule[] {
  if (!input) return [];
  if (!Array.isArray(input))
    return Object.entries(input).map(([name, description]) => ({ name, description }));
  const out: InlineRule[] = [];
  input.forEach((item, i) => {
    if (typeof item === 'string') out.push({ name: `rule_${i + 1}`, description: item });
    else for (const [name, description] of Object.entries(item)) out.push({ name, description });
  });
  return out;
}

export function toToolDefs(
  tools:
    | {
        type?: string;
        function: { name: string; description?: string | undefined; parameters?: unknown };
      }[]
    | undefined,
): ScoreToolDef[] | undefined {
  return tools?.map((t) => ({
    name: t.function.name,
    ...(t.function.description ? { description: t.function.description } : {}),
    ...(t.function.parameters !== undefined ? { parameters: t.function.parameters } : {}),
  }));
}
