import type { ScoreResult } from '../scoring/score-contract.js';
import type {
  AnswerMeta,
  BlockedEnding,
  CanonicalToolCall,
  CanonicalUsage,
  FinishReason,
  StreamEvent,
} from './canonical.js';

/**
 * How a streamed answer is moderated (a policy's `stream_mode`, or the `x-guard-stream-mode`
 * request header):
 * - `window`: text is released only after the window that holds it passed the output check. The
 *   last `overlapChars` of every checked window are held back and checked again with the next
 *   one, so that a violating passage of up to `overlapChars` characters is always seen whole
 *   before any character of it is released.
 * - `buffer`: everything is held until the answer is complete and checked.
 * - `observe`: everything is released at once; the check runs at the end and is only recorded.
 */
export const STREAM_MODES = ['window', 'buffer', 'observe'] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

export interface StreamModeration {
  mode: StreamMode;
  /** New characters per window check. */
  windowChars: number;
  /** Characters of each window carried into the next check (and held back until then). */
  overlapChars: number;
}

/** Checks a piece of output: the text (and complete tool calls) as the assistant's turn. */
export type OutputCheck = (text: string, toolCalls: CanonicalToolCall[]) => Promise<ScoreResult>;

export interface StreamSummary {
  meta: AnswerMeta | null;
  /** Everything the model said (text), released or not. */
  text: string;
  toolCalls: CanonicalToolCall[];
  /** The checks, in order: one per window, or one for the whole answer. */
  checks: ScoreResult[];
  /** The check that blocked the stream, if one did. */
  blockedBy: ScoreResult | null;
  finish: FinishReason | null;
  usage: CanonicalUsage | null;
  /** Characters of text that reached the client. */
  releasedChars: number;
  /** False when the reader stopped early (client gone) or the provider's stream failed. */
  completed: boolean;
  error: string | null;
}

export interface ModeratedStream {
  events: AsyncGenerator<StreamEvent | BlockedEnding>;
  /** Settles once the stream is over: finished, blocked, abandoned by the reader, or failed. */
  done: Promise<StreamSummary>;
}

/** A stream of the same answer in which nothing unchecked is released (see StreamMode). */
export function moderateStream(
  source: AsyncIterable<StreamEvent>,
  settings: StreamModeration,
  check: OutputCheck,
  blockMessage: string,
): ModeratedStream {
  const window = Math.max(1, settings.windowChars);
  const overlap = Math.max(0, settings.overlapChars);
  const summary: StreamSummary = {
    meta: null,
    text: '',
    toolCalls: [],
    checks: [],
    blockedBy: null,
    finish: null,
    usage: null,
    releasedChars: 0,
    completed: false,
    error: null,
  };
  let settle!: (s: StreamSummary) => void;
  const done = new Promise<StreamSummary>((resolve) => (settle = resolve));
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  const observe = settings.mode === 'observe';

  const toolCalls = (): CanonicalToolCall[] =>
    [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => ({ ...c }));

  async function run(text: string, withCalls: boolean): Promise<boolean> {
    const result = await check(text, withCalls ? toolCalls() : []);
    summary.checks.push(result);
    // In observe mode the verdict is only recorded: nothing is blocked.
    if (result.violation > 0 && !observe) {
      summary.blockedBy = result;
      return false;
    }
    return true;
  }

  function release(text: string): StreamEvent {
    summary.releasedChars += text.length;
    return { type: 'text', text };
  }

  async function* moderated(): AsyncGenerator<StreamEvent | BlockedEnding> {
    let pending = '';
    const blocked = (): BlockedEnding => ({ type: 'blocked', message: blockMessage, usage: null });
    try {
      let finish: Extract<StreamEvent, { type: 'finish' }> | null = null;
      for await (const e of source) {
        if (e.type === 'start') {
          summary.meta = { id: e.id, model: e.model, created: e.created };
          yield e;
        } else if (e.type === 'text') {
          if (!e.text) continue;
          summary.text += e.text;
          if (observe) {
            yield release(e.text);
            continue;
          }
          pending += e.text;
          if (settings.mode === 'window' && pending.length >= window + overlap) {
            if (!(await run(pending, false))) {
              yield blocked();
              return;
            }
            let cut = pending.length - overlap;
            // Never split a surrogate pair between what is released and what is held.
            if (cut > 0 && isHighSurrogate(pending.charCodeAt(cut - 1))) cut -= 1;
            if (cut > 0) {
              yield release(pending.slice(0, cut));
              pending = pending.slice(cut);
            }
          }
        } else if (e.type === 'tool_call_delta') {
          const c = calls.get(e.index) ?? { id: '', name: '', arguments: '' };
          if (e.id) c.id = e.id;
          if (e.name) c.name = e.name;
          c.arguments += e.arguments;
          calls.set(e.index, c);
          if (observe) yield e;
        } else {
          finish = e;
          break;
        }
      }
      // The provider's stream ended; a stream cut short without a finish counts as a plain stop.
      const end = finish ?? { type: 'finish' as const, finish: 'stop' as const, usage: null };
      summary.toolCalls = toolCalls();
      summary.usage = end.usage;
      if (!observe) {
        const toCheck = settings.mode === 'buffer' ? summary.text : pending;
        if ((toCheck || calls.size) && !(await run(toCheck, true))) {
          yield blocked();
          return;
        }
        if (pending) yield release(pending);
        for (const [index, c] of [...calls.entries()].sort(([a], [b]) => a - b))
          yield { type: 'tool_call_delta', index, id: c.id, name: c.name, arguments: c.arguments };
      }
      summary.finish = end.finish;
      summary.completed = true;
      yield end;
      if (observe && (summary.text || calls.size)) await run(summary.text, true);
    } catch (err) {
      summary.error = err instanceof Error ? err.message : String(err);
      throw err;
    } finally {
      settle(summary);
    }
  }

  return { events: moderated(), done };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
