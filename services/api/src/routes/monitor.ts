import { Router } from 'express';
import { monitor, type MonitorDeps } from '@guard/domain';
import { MonitorRequest } from '@guard/contracts';
import { requirePrincipal } from '../http/context.js';
import { parseBody } from '../http/body.js';
import { checkTextLimits, messagesChars, type TextLimits } from '../http/text-limits.js';

export type MonitorLimits = TextLimits;

export function monitorRouter(deps: MonitorDeps, limits: MonitorLimits): Router {
  const r = Router();
  r.post('/monitor', async (req, res) => {
    const body = parseBody(MonitorRequest, req);
    const text = body.text;
    checkTextLimits(
      limits,
      {
        // A `text` is scored alone: the messages beside it are not looked at.
        messages: text === undefined ? (body.messages?.length ?? 0) : 0,
        chars: text === undefined ? messagesChars(body.messages ?? []) : text.length,
      },
      {
        verb: 'scored',
        messagesLoc: ['body', 'messages'],
        charsLoc: ['body', text !== undefined ? 'text' : 'messages'],
      },
    );
    const outcome = await monitor(deps, requirePrincipal(req), body);
    res.json(outcome.response);
  });
  return r;
}
