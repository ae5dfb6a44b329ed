import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ErrorBody, ValidationErrorBody } from './common.js';
import { MonitorRequest, MonitorResponse } from './monitor.js';
import {
  ActivityExportQuery,
  ActivityExportResponse,
  ActivityRecord,
  ActivityStaffExportQuery,
} from './activity.js';
import {
  ActivityExportJob,
  ActivityExportJobRequest,
  IdempotencyKey,
  JobIdParams,
} from './jobs.js';
import {
  AnthropicMessage,
  AnthropicMessagesRequestOutline,
  ChatCompletion,
  ChatCompletionRequestOutline,
  GeminiGenerateRequestOutline,
  GeminiGenerateResponse,
  ResponsesRequestOutline,
  ResponsesResponse,
} from './completions.js';
import {
  ApiKeyCreated,
  ApiKeyCreateRequest,
  ApiKeyList,
  ApiKeyRevoked,
  Org,
  OrgCreateRequest,
  OrgDefaultPolicyRequest,
  OrgList,
} from './orgs.js';
import {
  BulkImportRequest,
  BulkImportResponse,
  DeleteResponse,
  Policy,
  PolicyAtVersion,
  PolicyCreateRequest,
  PolicyExportAll,
  PolicyExportItem,
  PolicyImportRequest,
  PolicyList,
  PolicyListQuery,
  PolicyUpdateRequest,
  PolicyVersionList,
} from './policies.js';

/**
 * Route descriptions for the OpenAPI document. Each transport registers what it serves through
 * `describeRoute`, so the document is generated from the same zod schemas the handlers parse with.
 */
const registry = new OpenAPIRegistry();
registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
registry.registerComponent('securitySchemes', 'apiKeyHeader', {
  type: 'apiKey',
  in: 'header',
  name: 'x-api-key',
});

const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
const errors = {
  401: json(ErrorBody, 'Missing or invalid API key (UNAUTHORIZED)'),
  413: json(ErrorBody, 'Body over the size limit (PAYLOAD_TOO_LARGE)'),
  500: json(ErrorBody, 'Internal error'),
};
const UNREADABLE =
  'A request that cannot be read: malformed JSON (json_invalid), JSON nested deeper than GUARD_MAX_JSON_DEPTH (json_too_deep), a body that does not decode as its headers say (body_unreadable), or a path that is not valid percent-encoding (path_invalid)';
const validation = { 422: json(ValidationErrorBody, 'Validation error') };
/** What any route with a JSON body can answer before validation: policy routes in the validation body. */
const policyBody = {
  400: json(ValidationErrorBody, UNREADABLE),
  415: json(ErrorBody, 'A body sent with a non-JSON content type (UNSUPPORTED_MEDIA_TYPE)'),
};
/** Routes with a path id: a path that is not valid percent-encoding is a 400 (type path_invalid). */
const notFound = {
  400: json(ValidationErrorBody, UNREADABLE),
  404: json(ErrorBody, "Not found in the caller's organization (NOT_FOUND)"),
};
/** Policy writes retry on a concurrent write; this is what is left when every retry lost. */
const conflict = {
  409: json(ErrorBody, 'Other requests kept changing the policy at the same time (CONFLICT)'),
};
const adminOnly = {
  403: json(ErrorBody, 'ADMIN_REQUIRED, or PRESET_POLICY_READ_ONLY for presets'),
};
const security: Record<string, string[]>[] = [{ bearer: [] }, { apiKeyHeader: [] }];
const policyId = z.object({ policy_id: z.string() });

export function describeRoute(route: RouteConfig): void {
  registry.registerPath(route);
}

const policyRoutes: RouteConfig[] = [
  {
    method: 'get',
    path: '/policies',
    tags: ['policies'],
    summary: 'List policies (most recently updated first; presets last)',
    security,
    request: { query: PolicyListQuery },
    responses: { 200: json(PolicyList, 'Policies'), ...validation, ...errors },
  },
  {
    method: 'get',
    path: '/policies/export',
    tags: ['policies'],
    summary: 'Export every policy the organization can see',
    security,
    responses: { 200: json(PolicyExportAll, 'Export'), ...errors },
  },
  {
    method: 'get',
    path: '/policies/{policy_id}',
    tags: ['policies'],
    summary: 'Get a policy',
    security,
    request: { params: policyId },
    responses: { 200: json(Policy, 'Policy'), ...notFound, ...errors },
  },
  {
    method: 'get',
    path: '/policies/{policy_id}/export',
    tags: ['policies'],
    summary: 'Export one policy',
    security,
    request: { params: policyId },
    responses: { 200: json(PolicyExportItem, 'Export item'), ...notFound, ...errors },
  },
  {
    method: 'get',
    path: '/policies/{policy_id}/versions',
    tags: ['policies'],
    summary: 'Version history, newest first',
    security,
    request: { params: policyId },
    responses: { 200: json(PolicyVersionList, 'Versions'), ...notFound, ...errors },
  },
  {
    method: 'get',
    path: '/policies/{policy_id}/versions/{version_id}',
    tags: ['policies'],
    summary: 'The policy as it was at a version',
    security,
    request: { params: z.object({ policy_id: z.string(), version_id: z.string() }) },
    responses: { 200: json(PolicyAtVersion, 'Policy state'), ...notFound, ...errors },
  },
  {
    method: 'post',
    path: '/policies',
    tags: ['policies'],
    summary: 'Create a policy (admin)',
    security,
    request: { body: { content: { 'application/json': { schema: PolicyCreateRequest } } } },
    responses: {
      201: json(Policy, 'Created'),
      ...adminOnly,
      ...policyBody,
      ...validation,
      ...errors,
    },
  },
  {
    method: 'post',
    path: '/policies/import',
    tags: ['policies'],
    summary: 'Import one policy in export form (admin)',
    security,
    request: { body: { content: { 'application/json': { schema: PolicyImportRequest } } } },
    responses: {
      200: json(Policy, 'Imported'),
      ...adminOnly,
      ...policyBody,
      ...validation,
      ...errors,
    },
  },
  {
    method: 'post',
    path: '/policies/bulk-import',
    tags: ['policies'],
    summary: 'Import 1 to 100 policies; one bad item never fails the others (admin)',
    security,
    request: {
      headers: z.object({ 'idempotency-key': IdempotencyKey }),
      body: { content: { 'application/json': { schema: BulkImportRequest } } },
    },
    responses: {
      200: json(BulkImportResponse, 'Per-item results'),
      ...adminOnly,
      ...policyBody,
      ...validation,
      ...errors,
    },
  },
  {
    method: 'put',
    path: '/policies/{policy_id}',
    tags: ['policies'],
    summary: 'Update a policy; only provided fields change (admin)',
    security,
    request: {
      params: policyId,
      body: { content: { 'application/json': { schema: PolicyUpdateRequest } } },
    },
    responses: {
      200: json(Policy, 'Updated'),
      ...adminOnly,
      ...notFound,
      ...conflict,
      ...policyBody,
      ...validation,
      ...errors,
    },
  },
  {
    method: 'delete',
    path: '/policies/{policy_id}',
    tags: ['policies'],
    summary: 'Delete a policy; its versions stay readable (admin)',
    security,
    request: { params: policyId },
    responses: {
      200: json(DeleteResponse, 'Deleted'),
      ...adminOnly,
      ...notFound,
      ...conflict,
      ...errors,
    },
  },
];
policyRoutes.forEach(describeRoute);

const staffOnly = { 403: json(ErrorBody, 'The key is not a staff key (STAFF_REQUIRED)') };
const orgAdmin = {
  403: json(ErrorBody, 'A member key of the organization (ADMIN_REQUIRED)'),
  404: json(ErrorBody, "No such organization, or not the caller's (NOT_FOUND)"),
};
const orgId = z.object({ org_id: z.string() });
const jsonRequest = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

const orgRoutes: RouteConfig[] = [
  {
    method: 'post',
    path: '/orgs',
    tags: ['organizations'],
    summary: 'Create an organization (staff)',
    security,
    request: { body: jsonRequest(OrgCreateRequest) },
    responses: {
      201: json(Org, 'Created'),
      ...staffOnly,
      ...policyBody,
      ...validation,
      ...errors,
    },
  },
  {
    method: 'get',
    path: '/orgs',
    tags: ['organizations'],
    summary: 'List every organization, oldest first (staff)',
    security,
    responses: { 200: json(OrgList, 'Organizations'), ...staffOnly, ...errors },
  },
  {
    method: 'get',
    path: '/orgs/{org_id}',
    tags: ['organizations'],
    summary: 'Get an organization (any key of it, or staff)',
    security,
    request: { params: orgId },
    responses: {
      200: json(Org, 'Organization'),
      404: json(ErrorBody, "No such organization, or not the caller's (NOT_FOUND)"),
      ...errors,
    },
  },
  {
    method: 'put',
    path: '/orgs/{org_id}/default-policy',
    tags: ['organizations'],
    summary:
      'Set or clear (null) the policy monitor applies when a call names none (admin of the org, or staff)',
    security,
    request: { params: orgId, body: jsonRequest(OrgDefaultPolicyRequest) },
    responses: {
      200: json(Org, 'The organization'),
      ...orgAdmin,
      404: json(
        ErrorBody,
        "No such organization, not the caller's, or a policy the organization cannot read (NOT_FOUND)",
      ),
      ...policyBody,
      ...validation,
      ...errors,
    },
  },
  {
    method: 'post',
    path: '/orgs/{org_id}/keys',
    tags: ['organizations'],
    summary: 'Create an API key, shown once in the answer (admin of the org, or staff)',
    security,
    request: { params: orgId, body: jsonRequest(ApiKeyCreateRequest) },
    responses: {
      201: json(ApiKeyCreated, 'Created: the key is in this answer only'),
      ...orgAdmin,
      403: json(
        ErrorBody,
        'A member key of the organization (ADMIN_REQUIRED); a staff key asked for by a non-staff key (STAFF_REQUIRED)',
      ),
      ...policyBody,
      ...validation,
      ...errors,
    },
  },
  {
    method: 'get',
    path: '/orgs/{org_id}/keys',
    tags: ['organizations'],
    summary: "List the organization's keys, revoked ones included (admin of the org, or staff)",
    security,
    request: { params: orgId },
    responses: {
      200: json(ApiKeyList, 'Keys, without the keys or hashes'),
      ...orgAdmin,
      ...errors,
    },
  },
  {
    method: 'delete',
    path: '/orgs/{org_id}/keys/{key_id}',
    tags: ['organizations'],
    summary:
      'Revoke a key; it stops working within GUARD_AUTH_CACHE_TTL_MS (admin of the org, or staff)',
    security,
    request: { params: z.object({ org_id: z.string(), key_id: z.string() }) },
    responses: {
      200: json(ApiKeyRevoked, 'Revoked'),
      ...orgAdmin,
      404: json(ErrorBody, "No such organization or key, or not the caller's (NOT_FOUND)"),
      ...errors,
    },
  },
];
orgRoutes.forEach(describeRoute);

describeRoute({
  method: 'post',
  path: '/guard/monitor',
  tags: ['monitoring'],
  summary:
    'Score text or a conversation against a policy, inline rules and the built-in signals; records one activity',
  security,
  request: { body: { content: { 'application/json': { schema: MonitorRequest } } } },
  responses: {
    200: json(MonitorResponse, 'Scores'),
    400: json(
      ErrorBody,
      'Malformed JSON, or nested deeper than GUARD_MAX_JSON_DEPTH (BAD_REQUEST)',
    ),
    415: json(ErrorBody, 'A body sent with a non-JSON content type (UNSUPPORTED_MEDIA_TYPE)'),
    404: json(ErrorBody, "A policy id that is not one of the caller's (NOT_FOUND)"),
    422: json(ErrorBody, 'Invalid request (VALIDATION_ERROR), details.errors lists loc/msg/type'),
    ...errors,
  },
});

describeRoute({
  method: 'get',
  path: '/activity/export',
  tags: ['activity'],
  summary:
    "The organization's recorded activity, oldest first, by cursor (admin). Reads only activity older than GUARD_ACTIVITY_SETTLE_MS, so that paging never skips a late arrival",
  security,
  request: { query: ActivityExportQuery },
  responses: {
    200: json(ActivityExportResponse, 'One page'),
    403: json(ErrorBody, 'ADMIN_REQUIRED'),
    ...validation,
    ...errors,
  },
});
describeRoute({
  method: 'get',
  path: '/activity/staff-export',
  tags: ['activity'],
  summary: "A red-team organization's activity (staff keys only)",
  security,
  request: { query: ActivityStaffExportQuery },
  responses: {
    200: json(ActivityExportResponse, 'One page'),
    403: json(
      ErrorBody,
      'STAFF_REQUIRED, or ORG_NOT_EXPORTABLE for an organization not of kind red_team',
    ),
    404: json(ErrorBody, 'No such organization (NOT_FOUND)'),
    ...validation,
    ...errors,
  },
});

const exportJobAdmin = { 403: json(ErrorBody, 'ADMIN_REQUIRED') };
describeRoute({
  method: 'post',
  path: '/activity/export-jobs',
  tags: ['activity'],
  summary:
    "Start an export of the organization's activity as a job (admin): the filters of /activity/export; the range is frozen now (activity older than GUARD_ACTIVITY_SETTLE_MS, before `until`)",
  security,
  request: { body: jsonRequest(ActivityExportJobRequest) },
  responses: {
    202: json(ActivityExportJob, 'Started; poll GET /activity/export-jobs/{id}'),
    ...exportJobAdmin,
    ...policyBody,
    ...validation,
    ...errors,
  },
});
describeRoute({
  method: 'get',
  path: '/activity/export-jobs/{id}',
  tags: ['activity'],
  summary: 'Status and progress of an export job of the organization (admin)',
  security,
  request: { params: JobIdParams },
  responses: {
    200: json(ActivityExportJob, 'The job'),
    ...exportJobAdmin,
    ...notFound,
    ...errors,
  },
});
describeRoute({
  method: 'get',
  path: '/activity/export-jobs/{id}/download',
  tags: ['activity'],
  summary:
    'The rows of a succeeded export job as NDJSON: one ActivityRecord per line, oldest first, streamed (admin)',
  security,
  request: { params: JobIdParams },
  responses: {
    200: {
      description: 'One activity per line',
      content: { 'application/x-ndjson': { schema: ActivityRecord } },
    },
    ...exportJobAdmin,
    ...notFound,
    409: json(ErrorBody, 'The job has not succeeded (yet): queued, running or failed (CONFLICT)'),
    ...errors,
  },
});

/** Our key as each SDK sends it: OpenAI's bearer, Anthropic's x-api-key, Google's x-goog-api-key. */
registry.registerComponent('securitySchemes', 'googApiKey', {
  type: 'apiKey',
  in: 'header',
  name: 'x-goog-api-key',
});
const completionSecurity: Record<string, string[]>[] = [...security, { googApiKey: [] }];
const completionErrors = {
  400: json(ErrorBody, 'Malformed JSON (BAD_REQUEST)'),
  404: json(ErrorBody, "A policy id that is not one of the caller's (NOT_FOUND)"),
  415: json(ErrorBody, 'A body sent with a non-JSON content type (UNSUPPORTED_MEDIA_TYPE)'),
  422: json(
    ErrorBody,
    'Invalid request or override header (VALIDATION_ERROR), details.errors lists loc/msg/type',
  ),
  502: json(
    ErrorBody,
    'The provider failed, timed out or answered something unreadable (UPSTREAM_ERROR). Its own client errors (400, 401, 429, ...) pass through in its error shape',
  ),
  ...errors,
};
const completion = (
  path: string,
  summary: string,
  request: z.ZodType,
  answer: z.ZodType,
  params?: z.ZodObject,
): RouteConfig => ({
  method: 'post',
  path,
  tags: ['completions'],
  summary,
  security: completionSecurity,
  request: {
    ...(params ? { params } : {}),
    body: { content: { 'application/json': { schema: request } } },
  },
  responses: {
    200: json(answer, 'The model answer, or the refusal in this shape when the call was blocked'),
    ...completionErrors,
  },
});
const CHAT = 'OpenAI-compatible chat completions, input and output checked';
const geminiModel = z.object({ model: z.string() });
[
  completion('/guard/chat/completions', CHAT, ChatCompletionRequestOutline, ChatCompletion),
  completion('/guard/v1/chat/completions', CHAT, ChatCompletionRequestOutline, ChatCompletion),
  completion(
    '/chat/completions',
    `${CHAT} (unversioned)`,
    ChatCompletionRequestOutline,
    ChatCompletion,
  ),
  completion(
    '/guard/responses',
    'OpenAI Responses API, checked',
    ResponsesRequestOutline,
    ResponsesResponse,
  ),
  completion(
    '/guard/v1/responses',
    'OpenAI Responses API, checked',
    ResponsesRequestOutline,
    ResponsesResponse,
  ),
  completion(
    '/guard/v1/messages',
    'Anthropic messages, checked',
    AnthropicMessagesRequestOutline,
    AnthropicMessage,
  ),
  ...['v1beta', 'v1'].flatMap((v) => [
    completion(
      `/guard/${v}/models/{model}:generateContent`,
      'Gemini generateContent, checked',
      GeminiGenerateRequestOutline,
      GeminiGenerateResponse,
      geminiModel,
    ),
    completion(
      `/guard/${v}/models/{model}:streamGenerateContent`,
      'Gemini streamGenerateContent (SSE with alt=sse, else a JSON array), checked window by window',
      GeminiGenerateRequestOutline,
      GeminiGenerateResponse,
      geminiModel,
    ),
  ]),
].forEach(describeRoute);

registry.registerPath({
  method: 'get',
  path: '/healthz',
  tags: ['ops'],
  summary: 'Liveness',
  responses: { 200: { description: 'Process is up' } },
});
registry.registerPath({
  method: 'get',
  path: '/readyz',
  tags: ['ops'],
  summary: 'Readiness (stores reachable)',
  responses: { 200: { description: 'Ready' }, 503: { description: 'Not ready' } },
});

export function buildOpenApiDocument(version: string): object {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Guardrail service API',
      version,
      description:
        'Content guardrails for LLM traffic: monitoring, protected completions, versioned policies, activity export.',
    },
    servers: [{ url: '/' }],
  });
}
