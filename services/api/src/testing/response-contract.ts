import { z } from 'zod';
import * as contracts from '@guard/contracts';
import { expectShape } from './expect-shape.js';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

const MediaType = z.object({ schema: z.looseObject({ $ref: z.string().optional() }) });
const ResponseObject = z.object({ content: z.record(z.string(), MediaType).optional() });
const Operation = z.object({
  responses: z.record(z.string(), ResponseObject),
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
});
const Document = z.object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) });

/** One documented response: the component schema its JSON body refers to, if any. */
export interface DocumentedResponse {
  status: string;
  /** `null` when the response documents no JSON body. */
  schemaId: string | null;
  /** True when the JSON body is described inline rather than by a named component. */
  inline: boolean;
}

export interface DocumentedOperation {
  method: string;
  /** As the document writes it: `/policies/{policy_id}`. */
  path: string;
  params: number;
  matcher: RegExp;
  /** Whether the operation names a security requirement (needs an API key). */
  secured: boolean;
  responses: Map<string, DocumentedResponse>;
}

/** Every operation in an OpenAPI document, with a matcher for concrete request paths. */
export function documentedOperations(document: unknown): DocumentedOperation[] {
  const doc = Document.parse(document);
  const out: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!(HTTP_METHODS as readonly string[]).includes(method)) continue;
      const op = Operation.parse(raw);
      const responses = new Map<string, DocumentedResponse>();
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        const ref = schema?.$ref;
        responses.set(status, {
          status,
          schemaId: ref ? (ref.split('/').pop() ?? null) : null,
          inline: schema !== undefined && ref === undefined,
        });
      }
      const pattern = path
        .split('/')
        .map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      out.push({
        method,
        path,
        params: (path.match(/\{/g) ?? []).length,
        matcher: new RegExp(`^${pattern}/?$`),
        secured: (op.security ?? []).length > 0,
        responses,
      });
    }
  }
  // Literal segments win over parameters (`/policies/export` before `/policies/{policy_id}`), as
  // the routers register them.
  return out.sort((a, b) => a.params - b.params);
}

/** The contract schemas by the id they register with `.meta({ id })` (the OpenAPI component name). */
export function contractSchemasById(): Map<string, z.ZodType> {
  const byId = new Map<string, z.ZodType>();
  for (const value of Object.values(contracts)) {
    if (!(value instanceof z.ZodType)) continue;
    const id = value.meta()?.id;
    if (typeof id === 'string') byId.set(id, value);
  }
  return byId;
}

export interface ObservedResponse {
  method: string;
  /** The request path, query string allowed. */
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

/**
 * Checks answers against the OpenAPI document the app serves and the zod schemas it is generated
 * from: the status must be one the operation lists, and a JSON body must be exactly the schema the
 * document names for that status. An answer from a path the document does not describe (unknown
 * routes, the document itself) must still be the standard error body when it is an error.
 */
export class ResponseContract {
  private readonly operations: DocumentedOperation[];
  private readonly schemas = contractSchemasById();

  constructor(document: unknown) {
    this.operations = documentedOperations(document);
  }

  operation(method: string, path: string): DocumentedOperation | undefined {
    const m = method.toLowerCase();
    const bare = path.split('?')[0] ?? path;
    return this.operations.find((op) => op.method === m && op.matcher.test(bare));
  }

  check(r: ObservedResponse): void {
    const op = this.operation(r.method, r.path);
    const what = `${r.method.toUpperCase()} ${r.path} answered ${r.status}`;
    if (!op) {
      if (r.status >= 400) expectShape(contracts.ErrorBody, r.body);
      return;
    }
    const documented = op.responses.get(String(r.status));
    if (!documented) {
      const listed = [...op.responses.keys()].join(', ');
      throw new Error(
        `${what}, a status /openapi.json does not list for ${r.method.toUpperCase()} ${op.path} (it lists ${listed})\nbody: ${JSON.stringify(r.body)}`,
      );
    }
    if (documented.inline)
      throw new Error(
        `${what}: /openapi.json describes this body inline; give its schema a .meta({ id }) so it can be checked`,
      );
    if (documented.schemaId === null) return;
    if (!/^application\/json\b/.test(r.contentType ?? ''))
      throw new Error(`${what} with content type ${r.contentType}, not the documented JSON`);
    const schema = this.schemas.get(documented.schemaId);
    if (!schema)
      throw new Error(
        `${what}: /openapi.json names ${documented.schemaId}, which no @guard/contracts export registers`,
      );
    try {
      expectShape(schema, r.body);
    } catch (err) {
      throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
