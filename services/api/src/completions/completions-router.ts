import { Router, type Request, type Response } from 'express';
import {
  protectCompletion,
  UpstreamFailure,
  type CompletionDeps,
  type GuardReport,
  type ModelReply,
  type UpstreamPort,
} from '@guard/domain';
import { requirePrincipal } from '../http/context.js';
import { objectBody } from '../http/body.js';
import { standardBody } from '../http/errors.js';
import { checkTextLimits, messagesChars, type TextLimits } from '../http/text-limits.js';
import type { StreamEncoder, WireFormat } from './wire-format.js';
import { forwardedHeaders, readOverrides } from './request-overrides.js';
import type { UpstreamResolver } from './upstream-routing.js';
import { openaiChat } from './formats/openai-chat.js';
import { openaiResponses } from './formats/openai-responses.js';
import { anthropicMessages } from './formats/anthropic-messages.js';
import { gemini } from './formats/gemini.js';
import { write } from '../http/drain.js';

export interface CompletionsRouteDeps {
  completion: CompletionDeps;
  upstream: UpstreamPort;
  resolveUpstream: UpstreamResolver;
  limits: TextLimits;
}

/** The activity `endpoint` of each family. */
const ENDPOINT = {
  chat: 'chat.completions',
  responses: 'responses',
  messages: 'messages',
  gemini: 'generate_content',
} as const;

function startStream(res: Response, enc: StreamEncoder, activityId: string | null): void {
  res.status(200);
  res.setHeader('content-type', enc.contentType);
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('x-accel-buffering', 'no');
  // A stream is recorded when it ends: only a refusal made before it started knows its activity.
  if (activityId) res.setHeader('guard-activity-id', activityId);
  res.flushHeaders();
}

/** Upstream trouble: the provider's own 4xx answers pass through; anything else is a 502. */
function answerUpstreamFailure(res: Response, err: UpstreamFailure): void {
  if (err.status !== null && err.status >= 400 && err.status < 500 && err.body !== null) {
    res.status(err.status);
    if (typeof err.body === 'object') res.json(err.body);
    else res.type('text/plain').send(String(err.body));
    return;
  }
  res.status(502).json(
    standardBody('UPSTREAM_ERROR', err.message, {
      provider: err.provider,
      status: err.status,
      body: typeof err.body === 'object' ? err.body : null,
    }),
  );
}

function withGuard(
  body: Record<string, unknown>,
  report: GuardReport,
  details: boolean | undefined,
): Record<string, unknown> {
  return details ? { ...body, guard: report } : body;
}

function handler(
  format: WireFormat,
  deps: CompletionsRouteDeps,
  how: (req: Request) => { model?: string; stream?: boolean; sse: boolean },
) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal = requirePrincipal(req);
    const where = how(req);
    const call = format.parseRequest(objectBody(req), where);
    checkTextLimits(
      deps.limits,
      { messages: call.messages.length, chars: messagesChars(call.messages) },
      { verb: 'checked', messagesLoc: ['body'], charsLoc: ['body'] },
    );
    const overrides = readOverrides(req);
    const target = deps.resolveUpstream(format.surface, call.model, overrides.upstreamKey);
    const headers = forwardedHeaders(req);

    const clientGone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) clientGone.abort(new Error('the client went away'));
    });

    const callModel = async (signal: AbortSignal): Promise<ModelReply> => {
      const reply = await deps.upstream.send({
        target,
        surface: format.surface,
        model: call.model,
        body: call.upstreamBody,
        stream: call.stream,
        headers,
        signal,
      });
      if (reply.kind === 'stream')
        return { kind: 'stream', events: format.decodeStream(reply.events) };
      try {
        return {
          kind: 'json',
          response: format.decodeResponse(reply.body),
          raw: reply.body as Record<string, unknown>,
        };
      } catch (err) {
        throw new UpstreamFailure(
          target.provider,
          200,
          `${target.provider} upstream answered a body that could not be read: ${err instanceof Error ? err.message : String(err)}`,
          reply.body,
        );
      }
    };

    let outcome;
    try {
      outcome = await protectCompletion(deps.completion, principal, {
        endpoint: ENDPOINT[format.surface],
        model: call.model,
        stream: call.stream,
        messages: call.messages,
        tools: call.tools,
        policy_id: overrides.policy_id ?? call.guard.policy_id,
        overrides: overrides.thresholds,
        inline: overrides.inline,
        stream_mode: overrides.stream_mode,
        moderate_before: call.guard.moderate_before,
        metadata: call.guard.metadata,
        callModel,
        signal: clientGone.signal,
      });
    } catch (err) {
      // A client that went away cancelled the call: there is no one left to answer.
      if (clientGone.signal.aborted) return void res.end();
      if (err instanceof UpstreamFailure) return answerUpstreamFailure(res, err);
      throw err;
    }

    if (outcome.kind === 'blocked_input') {
      res.setHeader('guard-activity-id', outcome.report.activity_id);
      if (!call.stream) {
        res.json(
          withGuard(
            format.blockedResponse(outcome.meta, outcome.message, null),
            outcome.report,
            call.guard.monitor_details,
          ),
        );
        return;
      }
      const enc = format.streamEncoder({ sse: where.sse });
      startStream(res, enc, outcome.report.activity_id);
      res.end(
        enc.event({ type: 'start', ...outcome.meta }) +
          enc.blocked({ type: 'blocked', message: outcome.message, usage: null }) +
          enc.end(),
      );
      return;
    }

    if (outcome.kind === 'json') {
      res.setHeader('guard-activity-id', outcome.report.activity_id);
      const body = outcome.blocked
        ? format.blockedResponse(outcome.response, outcome.message, outcome.response.usage)
        : format.shownAnswer(outcome.raw, outcome.response);
      res.json(withGuard(body, outcome.report, call.guard.monitor_details));
      return;
    }

    const enc = format.streamEncoder({ sse: where.sse });
    startStream(res, enc, null);
    try {
      for await (const e of outcome.events) {
        if (res.destroyed) break;
        if (e.type === 'blocked') {
          await write(res, enc.blocked(e) + enc.end());
          res.end();
        } else if (e.type === 'finish') {
          await write(res, enc.event(e) + enc.end());
          // The answer is complete for the client; what follows (the observe-mode check) is bookkeeping.
          res.end();
        } else await write(res, enc.event(e));
      }
    } catch (err) {
      req.ctx.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'stream from the provider failed; the answer was cut',
      );
    } finally {
      if (!res.writableEnded) res.end();
    }
    await outcome.report.catch((err: unknown) =>
      req.ctx.logger.error({ err }, 'recording the activity of a stream failed'),
    );
  };
}

/** The protected completion endpoints, mounted under /guard (and /chat/completions at the root). */
export function completionsRouter(deps: CompletionsRouteDeps): Router {
  const r = Router();
  const plain = () => ({ sse: true });
  const chat = handler(openaiChat, deps, plain);
  r.post('/chat/completions', chat);
  r.post('/v1/chat/completions', chat);
  const responses = handler(openaiResponses, deps, plain);
  r.post('/responses', responses);
  r.post('/v1/responses', responses);
  r.post('/v1/messages', handler(anthropicMessages, deps, plain));
  for (const version of ['v1beta', 'v1'])
    for (const action of ['generateContent', 'streamGenerateContent'])
      r.post(
        // A literal colon, escaped for the path syntax: `/v1beta/models/gemini-2.5-flash:generateContent`.
        `/${version}/models/:model\\:${action}`,
        handler(gemini, deps, (req) => ({
          model: String(req.params.model),
          stream: action === 'streamGenerateContent',
          sse: req.query.alt === 'sse',
        })),
      );
  return r;
}

/** The unversioned `/chat/completions` (no `guard` segment): the same behaviour. */
export function rootChatRouter(deps: CompletionsRouteDeps): Router {
  const r = Router();
  r.post(
    '/',
    handler(openaiChat, deps, () => ({ sse: true })),
  );
  return r;
}
