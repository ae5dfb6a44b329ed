import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { z } from 'zod';
import {
  AppError,
  describeValue,
  MalformedRequestError,
  parseOrThrow,
  ValidationError,
} from '@guard/platform';

const JSON_TYPES = ['application/json', 'application/*+json'];
const OPEN = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Deepest nesting of objects and arrays in a JSON text, found by one pass over the raw bytes
 * (brackets inside strings do not count). Runs before JSON.parse, so that a body nested thousands
 * of levels deep is refused before anything recurses over it (serialising the activity record,
 * schema checks, diffs).
 */
export function exceedsDepth(buf: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

/**
 * Where a parsed body has an own `__proto__` key, if anywhere. JSON.parse keeps it as a plain key,
 * but schema parsing and object spreads treat it as the prototype: the entry would vanish without
 * a word (a rule named `__proto__` would silently not apply). Depth is already bounded. Runs on
 * every body, so the walk allocates nothing; the path is built only on the way back from a hit.
 */
export function protoKeyPath(value: unknown): (string | number)[] | null {
  const path = findProtoKey(value);
  return path ? ['body', ...path.reverse()] : null;
}

/** The path to an own `__proto__` key, innermost first, or null. */
function findProtoKey(value: unknown): (string | number)[] | null {
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findProtoKey(value[i]);
      if (found) {
        found.push(i);
        return found;
      }
    }
    return null;
  }
  if (Object.hasOwn(value, '__proto__')) return ['__proto__'];
  for (const k in value) {
    const found = findProtoKey((value as Record<string, unknown>)[k]);
    if (found) {
      found.push(k);
      return found;
    }
  }
  return null;
}

function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const len = Number(req.headers['content-length']);
  return Number.isFinite(len) && len > 0;
}

export interface JsonBodyOptions {
  limitBytes: number;
  maxDepth: number;
}

/**
 * JSON bodies for every route: size-bounded (413), depth-bounded (400), syntax-checked (400),
 * and a body sent with another content type is a 415 rather than being silently ignored.
 * Non-object bodies (`null`, `"text"`, arrays) parse here and are refused by `objectBody`.
 */
export function jsonBody(opts: JsonBodyOptions): RequestHandler[] {
  const parse = express.json({
    limit: opts.limitBytes,
    type: JSON_TYPES,
    strict: false,
    verify: (_req, _res, buf) => {
      if (exceedsDepth(buf, opts.maxDepth)) {
        throw new MalformedRequestError(
          `JSON is nested deeper than ${opts.maxDepth} levels`,
          'json_too_deep',
        );
      }
    },
  });
  const mediaType = (req: Request, _res: Response, next: NextFunction) => {
    if (hasBody(req) && !req.is(JSON_TYPES)) {
      const sent = req.headers['content-type'] ?? 'none';
      next(
        new AppError(
          'UNSUPPORTED_MEDIA_TYPE',
          `Request bodies must be JSON: send Content-Type: application/json (got ${sent})`,
        ),
      );
      return;
    }
    next();
  };
  const checked = (req: Request, _res: Response, next: NextFunction) => {
    // body-parser reads an empty body as `{}`: keep "no body" distinguishable from an empty object.
    if (!hasBody(req)) req.body = undefined;
    const proto = protoKeyPath(req.body);
    if (proto) {
      next(
        ValidationError.single(proto, '"__proto__" cannot be used as a name or key', 'value_error'),
      );
      return;
    }
    next();
  };
  return [mediaType, parse, checked];
}

/**
 * The body of a route that takes a JSON object: a missing body or any other JSON value is a 422
 * that says what was expected.
 */
export function objectBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined) {
    throw ValidationError.single(
      ['body'],
      'A JSON object body is required (send it with Content-Type: application/json)',
      'missing',
    );
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ValidationError.single(
      ['body'],
      `The body must be a JSON object, got ${describeValue(body)}`,
      'model_attributes_type',
    );
  }
  return body as Record<string, unknown>;
}

/** Validate a route's JSON object body against its schema (422 listing every problem). */
export function parseBody<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  return parseOrThrow(schema, objectBody(req), ['body']);
}

/**
 * Runs a verb whose validation problems name fields relative to what it was given
 * (`rule_modes.x`), and places them in the request (`body.policy.rule_modes.x`).
 */
export async function underLoc<T>(prefix: (string | number)[], verb: () => Promise<T>): Promise<T> {
  try {
    return await verb();
  } catch (err) {
    if (err instanceof ValidationError) {
      throw new ValidationError(
        err.issues.map((i) => ({ ...i, loc: [...prefix, ...i.loc] })),
        err.message,
      );
    }
    throw err;
  }
}
