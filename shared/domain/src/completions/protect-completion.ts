import { isAbortError } from './abort.js';
import {
  type ReasoningMode,
  type ScoreMessage,
  type ScoreRequest,
  type ScoreResult,
  type ScoreToolDef,
} from '../scoring/score-contract.js';
import type { Activity, Principal } from '../types.js';
import { toScoreMessages, type InlineRule, type RawMessage } from '../monitor/monitor-input.js';
import {
  policyScoreFields,
  resolvePolicies,
  scoringOf,
  type EffectivePolicy,
  type ThresholdOverrides,
} from '../monitor/resolve-policies.js';
import {
  analysisOf,
  scoreSafely,
  type MonitorAnalysis,
  type MonitorDeps,
} from '../monitor/monitor.js';
import { buildActivity, newActivityId } from '../monitor/activity-record.js';
import type {
  AnswerMeta,
  BlockedEnding,
  CanonicalResponse,
  CanonicalToolCall,
  StreamEvent,
} from './canonical.js';
import { UpstreamFailure } from './upstream.js';
import {
  moderateStream,
  type StreamMode,
  type StreamModeration,
  type StreamSummary,
} from './stream-moderator.js';

export interface CompletionDeps extends MonitorDeps {
  /** Server defaults for streamed answers; a policy's `stream_mode` and the request header override the mode. */
  stream: StreamModeration;
  /** Characters of the system prompt given as context to output checks. */
  outputContextChars: number;
}

/** What the model call answered, decoded from its wire. */
export type ModelReply =
  | { kind: 'json'; response: CanonicalResponse; raw: Record<string, unknown> }
  | { kind: 'stream'; events: AsyncIterable<StreamEvent> };

export interface CompletionInput {
  /** Recorded as the activity's `endpoint`. */
  endpoint: string;
  model: string;
  stream: boolean;
  messages: RawMessage[];
  tools?: ScoreToolDef[] | undefined;
  policy_id?: string | undefined;
  overrides?: ThresholdOverrides | undefined;
  /** Inline rules (`category-<name>` headers), added after the policy's. */
  inline?: InlineRule[] | undefined;
  /** Per request (header); else the policy's; else the server default. */
  stream_mode?: StreamMode | undefined;
  /** Wait for the input check before calling the model (default: call it concurrently). */
  moderate_before?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
  reasoning_mode?: ReasoningMode | undefined;
  /** Starts the model call. Resolves once it answered with success; aborting the signal cancels it. */
  callModel(signal: AbortSignal): Promise<ModelReply>;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
}

/** What the guard decided on one call; `monitor_details: true` shows it to the caller as `guard`. */
export interface GuardReport {
  activity_id: string;
  policy_id: string | null;
  policy_ids: string[];
  /** null only when the call failed before its input was checked. */
  pre: MonitorAnalysis | null;
  post: MonitorAnalysis | null;
  blocked: null | 'input' | 'output';
  stream_mode?: StreamMode | undefined;
}

export type CompletionOutcome =
  /** The input was refused: the model's answer (if it was already asked) is dropped unread. */
  | { kind: 'blocked_input'; meta: AnswerMeta; message: string; report: GuardReport }
  /** A complete answer; `blocked` means the output was refused and `response` must not be shown. */
  | {
      kind: 'json';
      response: CanonicalResponse;
      raw: Record<string, unknown>;
      blocked: boolean;
      message: string;
      report: GuardReport;
    }
  /** A stream already moderated; `report` settles (and the activity is recorded) when it is over. */
  | {
      kind: 'stream';
      events: AsyncGenerator<StreamEvent | BlockedEnding>;
      report: Promise<GuardReport>;
    };

const blocks = (r: ScoreResult): boolean => r.violation > 0;

/**
 * What an output check sees besides the output: the system prompt, kept short (the system-prompt
 * leakage scanner compares the output with it). Not the user's turns: they were checked against
 * the pre thresholds already, and in an output check the engine would judge them again, against
 * the post thresholds, blocking an answer for what the question said.
 */
function outputContext(messages: ScoreMessage[], chars: number): ScoreMessage[] {
  if (chars <= 0) return [];
  const system = messages.find((m) => m.role === 'system' || m.role === 'developer');
  if (!system?.content) return [];
  const text = system.content.length > chars ? system.content.slice(0, chars) : system.content;
  return [{ role: system.role, content: text }];
}

/** Where several checks of one answer are summed up: the worst one, with all their tokens. */
export function mergeChecks(checks: ScoreResult[]): ScoreResult | null {
  if (checks.length === 0) return null;
  let worst = checks[0]!;
  for (const c of checks) if (c.violation > worst.violation || (c.error && !worst.error)) worst = c;
  return { ...worst, input_tokens: checks.reduce((n, c) => n + c.input_tokens, 0) };
}

function answerMeta(id: string, model: string, now: Date): AnswerMeta {
  return { id, model, created: Math.floor(now.getTime() / 1000) };
}

/**
 * A protected model call (decisions.md, "Protected completions"): the input is checked against the
 * pre thresholds before anything is returned (before the call when `moderate_before`, else beside
 * it, cancelling it on a block), the output against the post thresholds (streamed output window
 * by window), and one activity records both.
 */
export async function protectCompletion(
  deps: CompletionDeps,
  principal: Principal,
  input: CompletionInput,
): Promise<CompletionOutcome> {
  const started = performance.now();
  const { messages } = toScoreMessages(input.messages);
  const policy = await resolvePolicies(deps, principal, {
    policy_id: input.policy_id,
    inline: input.inline ?? [],
    overrides: input.overrides,
  });
  const streamMode = input.stream_mode ?? policy.stream_mode ?? deps.stream.mode;
  const scoring = scoringOf(policy, deps.failMode);
  const baseRequest = {
    ...policyScoreFields(policy),
    reasoning_mode: input.reasoning_mode ?? 'off',
    cache_scope: principal.org_id,
  } satisfies Omit<ScoreRequest, 'messages' | 'phase' | 'tools'>;
  const context = outputContext(messages, deps.outputContextChars);
  const checkOutput = (text: string, toolCalls: CanonicalToolCall[]): Promise<ScoreResult> =>
    scoreSafely(
      deps.engine,
      {
        ...baseRequest,
        messages: [
          ...context,
          {
            role: 'assistant',
            content: text,
            ...(toolCalls.length
              ? {
                  tool_calls: toolCalls.map((c) => ({
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                  })),
                }
              : {}),
          },
        ],
        phase: 'output',
      },
      scoring,
    );

  const lastUser = messages.findLast((m) => m.role === 'user')?.content;
  const record = async (r: {
    pre: ScoreResult | null;
    post: ScoreResult | null;
    blocked: null | 'input' | 'output';
    output?: string | undefined;
    extra?: Record<string, unknown> | undefined;
  }): Promise<GuardReport> => {
    // The id and time are taken when the call is recorded (at its end), not when it arrived: a
    // stream can last minutes, and export only pages up to a watermark of settled time.
    const activityId = newActivityId(deps);
    const activity: Activity = buildActivity({
      id: activityId,
      principal,
      endpoint: input.endpoint,
      policy_id: policy.policy_id,
      policy_ids: policy.policy_ids,
      model: input.model,
      alarm: Boolean(r.pre?.alarm || r.post?.alarm),
      blocked: r.blocked !== null,
      pre: r.pre ? analysisOf(r.pre) : null,
      post: r.post ? analysisOf(r.post) : null,
      startedAt: started,
      input: lastUser,
      output: r.output,
      excerptChars: deps.excerptChars,
      metadata: {
        ...(input.metadata ?? {}),
        ...(r.blocked ? { blocked_at: r.blocked } : {}),
        ...(input.stream ? { stream: true, stream_mode: streamMode } : {}),
        ...(r.extra ?? {}),
      },
    });
    await deps.activity.publish(activity);
    return report(
      policy,
      activityId,
      r.pre,
      r.post,
      r.blocked,
      input.stream ? streamMode : undefined,
    );
  };

  // The input check. Without `moderate_before` the model is asked at the same time; nothing it
  // says is looked at, let alone returned, before the input passed.
  // The model call ends when the client goes away or the guard refuses the input.
  const cancel = new AbortController();
  const callSignal = AbortSignal.any([input.signal, cancel.signal]);
  const preRequest: ScoreRequest = {
    ...baseRequest,
    messages,
    phase: 'input',
    // Tool definitions are third-party text: checked once, with the input.
    ...(input.tools ? { tools: input.tools } : {}),
  };
  let modelCall: Promise<ModelReply> | null = null;
  if (!input.moderate_before) {
    modelCall = input.callModel(callSignal);
    modelCall.catch(() => undefined); // observed below, or dropped with the call
  }
  const pre = await scoreSafely(deps.engine, preRequest, scoring);
  if (blocks(pre)) {
    cancel.abort(new Error('input blocked by the guard'));
    const rep = await record({ pre, post: null, blocked: 'input' });
    return {
      kind: 'blocked_input',
      meta: answerMeta(`guard-${rep.activity_id}`, input.model, deps.now()),
      message: policy.block_message,
      report: rep,
    };
  }

  let reply: ModelReply;
  try {
    reply = await (modelCall ?? input.callModel(callSignal));
  } catch (err) {
    const upstream =
      err instanceof UpstreamFailure
        ? { status: err.status, message: err.message }
        : {
            status: null,
            message:
              input.signal.aborted || isAbortError(err)
                ? 'cancelled: the client went away'
                : String(err),
          };
    await record({ pre, post: null, blocked: null, extra: { upstream_error: upstream } });
    throw err;
  }

  if (reply.kind === 'json') {
    const answer = reply.response;
    // Reasoning the provider shows beside the answer reaches the caller too: checked with it.
    const shown = answer.reasoning ? `${answer.reasoning}\n\n${answer.text}` : answer.text;
    const post =
      shown || answer.tool_calls.length ? await checkOutput(shown, answer.tool_calls) : null;
    const blocked = post !== null && blocks(post);
    const rep = await record({
      pre,
      post,
      blocked: blocked ? 'output' : null,
      output: answer.text,
    });
    return {
      kind: 'json',
      response: answer,
      raw: reply.raw,
      blocked,
      message: policy.block_message,
      report: rep,
    };
  }

  const moderated = moderateStream(
    reply.events,
    { ...deps.stream, mode: streamMode },
    checkOutput,
    policy.block_message,
  );
  const settled = moderated.done.then(async (s: StreamSummary) => {
    const post = s.blockedBy ?? mergeChecks(s.checks);
    return record({
      pre,
      post,
      blocked: s.blockedBy ? 'output' : null,
      output: s.text,
      extra: {
        released_chars: s.releasedChars,
        ...(s.completed || s.blockedBy ? {} : { incomplete: s.error ?? 'the client went away' }),
      },
    });
  });
  return { kind: 'stream', events: moderated.events, report: settled };
}

function report(
  policy: EffectivePolicy,
  activityId: string,
  pre: ScoreResult | null,
  post: ScoreResult | null,
  blocked: GuardReport['blocked'],
  streamMode: StreamMode | undefined,
): GuardReport {
  return {
    activity_id: activityId,
    policy_id: policy.policy_id,
    policy_ids: policy.policy_ids,
    pre: pre ? analysisOf(pre) : null,
    post: post ? analysisOf(post) : null,
    blocked,
    ...(streamMode ? { stream_mode: streamMode } : {}),
  };
}
