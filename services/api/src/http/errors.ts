import type { NextFunction, Request, Response } from 'express';
import {
  AppError,
  isAppError,
  MalformedRequestError,
  ValidationError,
  type ErrorCode,
} from '@guard/platform';

/** The one place where errors become HTTP answers. */

export interface StandardErrorBody {
  error: true;
  message: string;
  detail: string;
  error_code: ErrorCode;
  /** An object or null, never an array: validation problems are `{errors: [{loc, msg, type}]}`. */
  details: Record<string, unknown> | null;
}

export function standardBody(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> | null = null,
): StandardErrorBody {
  return {
    error: true,
    message,
    detail: message,
    error_code: code,
    details: asDetails(details),
  };
}

/**
 * `details` as the published schema allows it, whatever a caller passed (types do not hold at run
 * time): an array is wrapped as `{errors: [...]}`, any other value that would not serialize as a
 * plain JSON object (a string, a number, a Date, an object with its own `toJSON`) as `{value}`.
 */
export function asDetails(details: unknown): Record<string, unknown> | null {
  if (details === null || details === undefined) return null;
  if (Array.isArray(details)) return { errors: details };
  if (isPlainObject(details)) return details;
  return { value: details };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

interface BodyParserError {
  type: string;
  status?: number;
  message: string;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { type?: unknown }).type === 'string' &&
    'status' in err
  );
}

/** The client-error codes that libraries under us (body reading, routing) report by status. */
const BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

function clientStatus(err: unknown): number | null {
  if (typeof err !== 'object' || err === null) return null;
  const s =
    (err as { status?: unknown; statusCode?: unknown }).status ??
    (err as { statusCode?: unknown }).statusCode;
  return typeof s === 'number' && s >= 400 && s < 500 ? s : null;
}

export function toAppError(err: unknown): AppError | null {
  if (isAppError(err)) return err;
  if (isBodyParserError(err)) {
    if (err.type === 'entity.too.large')
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body exceeds the configured size limit');
    if (err.type === 'entity.parse.failed') {
      // JSON.parse says where and what ("Unexpected token } in JSON at position 12"): pass it on.
      return new MalformedRequestError(
        `Request body is not valid JSON: ${err.message}`,
        'json_invalid',
      );
    }
    if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
      return new AppError('UNSUPPORTED_MEDIA_TYPE', err.message);
    }
    if (err.type === 'request.aborted')
      return new AppError('BAD_REQUEST', 'Request aborted by the client');
  }
  // Any other problem the client caused and a library noticed: a body whose length or encoding
  // does not match its headers, a path that does not decode (`/policies/%ZZ`).
  const status = clientStatus(err);
  if (status === 400 && err instanceof URIError) {
    return new MalformedRequestError(
      'The request path is not valid percent-encoding',
      'path_invalid',
      ['path'],
    );
  }
  if (status === 400) {
    // Reading the body failed below the JSON layer: a Content-Encoding the body does not have
    // (zlib's "incorrect header check"), a length that does not match.
    const why = err instanceof Error ? err.message : 'unreadable';
    return new MalformedRequestError(
      `The request body could not be read as its headers describe it (${why})`,
      'body_unreadable',
    );
  }
  if (status !== null)
    return new AppError(
      BY_STATUS[status] ?? 'BAD_REQUEST',
      err instanceof Error ? err.message : 'Bad request',
    );
  return null;
}

export function errorHandler() {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const appError = toAppError(err);
    if (res.headersSent) {
      req.ctx?.logger.warn({ err }, 'error after response started');
      res.end();
      return;
    }
    if (!appError) {
      req.ctx?.logger.error({ err }, 'unhandled error');
      res.status(500).json(standardBody('INTERNAL_ERROR', 'Internal server error'));
      return;
    }
    const style = req.ctx?.validationStyle ?? 'standard';
    // Endpoints with the validation body style answer every input problem in it: 422 for a
    // value the schema refuses, 400 for a body that is not JSON at all (same status as elsewhere).
    if (appError instanceof ValidationError || appError instanceof MalformedRequestError) {
      if (style === 'detail') res.status(appError.status).json({ detail: appError.issues });
      else if (appError instanceof ValidationError)
        res
          .status(422)
          .json(standardBody('VALIDATION_ERROR', summarize(appError), { errors: appError.issues }));
      else
        res
          .status(400)
          .json(standardBody('BAD_REQUEST', appError.message, { errors: appError.issues }));
      return;
    }
    // A full scoring queue is backpressure the client is told to retry, not a fault to act on.
    if (appError.code === 'SCORER_UNAVAILABLE')
      req.ctx?.logger.warn({ code: appError.code }, appError.message);
    else if (appError.status >= 500) req.ctx?.logger.error({ err: appError }, appError.message);
    res
      .status(appError.status)
      .json(standardBody(appError.code, appError.message, appError.details));
  };
}

function summarize(e: ValidationError): string {
  const first = e.issues[0];
  if (!first) return e.message;
  const more = e.issues.length > 1 ? ` (and ${e.issues.length - 1} more)` : '';
  return `${first.loc.join('.')}: ${first.msg}${more}`;
}

export function notFoundHandler() {
  return (req: Request, res: Response): void => {
    res.status(404).json(standardBody('NOT_FOUND', `No route for ${req.method} ${req.path}`));
  };
}
