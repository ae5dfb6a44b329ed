import { Router } from 'express';
import { ValidationError } from '@guard/platform';
import { monitor, type MonitorDeps } from '@guard/domain';
import { MonitorRequest } from '@guard/contracts';
import { requirePrincipal } from '../http/context.js';
import { parseBody } from '../http/body.js';

export interface MonitorLimits {
  maxMessages: number;
  maxTextChars: number;
}

/** Text volume of a request, counted the way the scorer will see it. */
function textChars(body: MonitorRequest): number {
  if (body.text !== undefined) return body.text.length;
  let n = 0;
  for (const m of body.messages ?? []) {
    if (typeof m.content === 'string') n += m.content.length;
    else if (Array.isArray(m.content))
      for (const p of m.content) n += typeof p.text === 'string' ? p.text.length : 0;
    for (const c of m.tool_calls ?? []) n += c.function.arguments?.length ?? 0;
  }
  return n;
}

export function monitorRouter(deps: MonitorDeps, limits: MonitorLimits): Router {
  const r = Router();
  r.post('/monitor', async (req, res) => {
    const body = parseBody(MonitorRequest, req);
    if (body.text === undefined && (body.messages?.length ?? 0) > limits.maxMessages) {
      throw ValidationError.single(
        ['body', 'messages'],
        `At most ${limits.maxMessages} messages can be scored in one request`,
        'too_long',
      );
    }
    const chars = textChars(body);
    if (chars > limits.maxTextChars) {
      throw ValidationError.single(
        ['body', body.text !== undefined ? 'text' : 'messages'],
        `At most ${limits.maxTextChars} characters of text can be scored in one request (got ${chars})`,
        'too_long',
      );
    }
    const outcome = await monitor(deps, requirePrincipal(req), body);
    res.json(outcome.response);
  });
  return r;
}
