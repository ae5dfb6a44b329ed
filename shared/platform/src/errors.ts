/**
 * The closed set of error codes the service answers with (spec/decisions.md, "Errors").
 * Every transport maps an AppError to its own wire shape in exactly one place.
 */
export const ErrorCodes = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  ADMIN_REQUIRED: 403,
  STAFF_REQUIRED: 403,
  PRESET_POLICY_READ_ONLY: 403,
  ORG_NOT_EXPORTABLE: 403,
  NOT_FOUND: 404,
  /** A policy write overtaken by other writes to the same policy on every retry. */
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SCORER_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

/** One problem with the input, in the `{loc, msg, type}` form of the validation error body. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/**
 * What an error carries besides its message: always an object (or null), never an array or a bare
 * value, as the published error schema requires. Validation problems go under `errors`.
 */
export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | null;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails | null) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ErrorCodes[code];
    this.details = details ?? null;
  }
}

export class ValidationError extends AppError {
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[], message = 'Request validation failed') {
    super('VALIDATION_ERROR', message, { errors: issues });
    this.name = 'ValidationError';
    this.issues = issues;
  }

  static single(loc: (string | number)[], msg: string, type = 'value_error'): ValidationError {
    return new ValidationError([{ loc, msg, type }], msg);
  }
}

/**
 * A request that could not be read at all: a body that is not JSON, is nested deeper than allowed
 * or does not decode; a path that is not valid percent-encoding. A 400 on every endpoint,
 * carrying the problem in the `{loc, msg, type}` form so that endpoints with the validation body
 * style can answer in it.
 */
export class MalformedRequestError extends AppError {
  readonly issues: ValidationIssue[];

  constructor(
    msg: string,
    type: 'json_invalid' | 'json_too_deep' | 'body_unreadable' | 'path_invalid',
    loc: (string | number)[] = ['body'],
  ) {
    const issues = [{ loc, msg, type }];
    super('BAD_REQUEST', msg, { errors: issues });
    this.name = 'MalformedRequestError';
    this.issues = issues;
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
