/**
 * Who said what: splits a conversation into the parts the engine scores differently.
 * - user-side input: `user` messages (a bare `text` arrives as one user message)
 * - the system prompt: `system` and `developer` messages (trusted; the reference for leakage)
 * - output: the trailing `assistant` messages when the conversation ends with one
 * - third-party content: `tool`/`function` results, tool-call arguments, tool definitions (-> ipi)
 */
import type { ScoreMessage, ScoreRequest } from '../engine-types.js';

export interface CheckedMessage {
  /** Index in request.messages; -1 for text that is not a message (tool-call arguments). */
  index: number;
  text: string;
}

export interface ThirdPartyText {
  origin: string;
  text: string;
  /** Tool definitions instruct the model by design; only strong injection evidence counts there. */
  kind: 'content' | 'tool_definition';
}

export interface ConversationParts {
  phase: 'input' | 'output';
  user: CheckedMessage[];
  /** The side whose rules are checked: user messages (input) or the trailing assistant turn (output). */
  checked: CheckedMessage[];
  thirdParty: ThirdPartyText[];
  systemPrompt: string;
  /** Everything scored, for token counting. */
  scoredTexts: string[];
}

const MAX_TOOL_DEF_CHARS = 4000;

export function splitConversation(
  request: ScoreRequest,
  options: { toolCallsAreOutput: boolean },
): ConversationParts {
  const messages = request.messages;
  const last = messages[messages.length - 1];
  const phase = request.phase ?? (last?.role === 'assistant' ? 'output' : 'input');

  let trailingFrom = messages.length;
  while (trailingFrom > 0 && messages[trailingFrom - 1]?.role === 'assistant') trailingFrom--;
  if (phase === 'output' && trailingFrom === messages.length && messages.length > 0)
    trailingFrom = messages.length - 1;

  const user: CheckedMessage[] = [];
  const output: CheckedMessage[] = [];
  const thirdParty: ThirdPartyText[] = [];
  const system: string[] = [];
  const scoredTexts: string[] = [];

  messages.forEach((m: ScoreMessage, index) => {
    const inOutput = phase === 'output' && index >= trailingFrom;
    switch (m.role) {
      case 'system':
      case 'developer':
        if (m.content) system.push(m.content);
        break;
      case 'user':
        if (m.content) user.push({ index, text: m.content });
        break;
      case 'tool':
      case 'function':
        if (m.content)
          thirdParty.push({
            origin: `${m.role} result${m.name ? ` (${m.name})` : ''}`,
            text: m.content,
            kind: 'content',
          });
        break;
      case 'assistant':
        if (inOutput && m.content) output.push({ index, text: m.content });
        break;
    }
    if (m.content) scoredTexts.push(m.content);
    for (const call of m.tool_calls ?? []) {
      if (!call.arguments) continue;
      scoredTexts.push(call.arguments);
      thirdParty.push({
        origin: `tool call arguments (${call.name})`,
        text: call.arguments,
        kind: 'content',
      });
      // Agents act through tool calls: in coding_agent mode the arguments of the checked turn are output too.
      if (inOutput && options.toolCallsAreOutput) output.push({ index: -1, text: call.arguments });
    }
  });

  for (const tool of request.tools ?? []) {
    let params = '';
    try {
      params = tool.parameters === undefined ? '' : JSON.stringify(tool.parameters);
    } catch {
      params = '';
    }
    const text = `${tool.name}: ${tool.description ?? ''} ${params}`.slice(0, MAX_TOOL_DEF_CHARS);
    thirdParty.push({ origin: `tool definition (${tool.name})`, text, kind: 'tool_definition' });
    scoredTexts.push(text);
  }

  return {
    phase,
    user,
    checked: phase === 'input' ? user : output,
    thirdParty,
    systemPrompt: system.join('\n\n'),
    scoredTexts,
  };
}
