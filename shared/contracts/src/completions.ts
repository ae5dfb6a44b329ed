import { z } from 'zod';
import { jsonSizeAtMost } from './policies.js';
import { MAX_METADATA_BYTES } from './monitor.js';

/**
 * Protected completions speak the providers' own wires; their bodies are parsed field by field by
 * the wire formats (services/api/src/completions/formats). What is ours is described here once:
 * the fields the guard reads from any completion body, and the outline of each wire's request and
 * answer for the OpenAPI document (loose: every other provider field is accepted and forwarded).
 */

/** Fields the guard reads from a completion body. The first three are never forwarded. */
export const GuardRequestFields = {
  policy_id: z.string().min(1).max(64).optional().meta({ description: 'Policy to apply' }),
  moderate_before: z.boolean().optional().meta({
    description:
      'true: call the provider only after the input passed; default false: call it at once and hold its answer until the input passed',
  }),
  monitor_details: z
    .boolean()
    .optional()
    .meta({ description: 'true: add a `guard` object with both checks to a non-streamed answer' }),
  metadata: z
    .record(z.string(), z.unknown())
    .superRefine(jsonSizeAtMost(MAX_METADATA_BYTES, 'metadata'))
    .optional()
    .meta({ description: 'Stored with the activity (at most 16 KiB as JSON)' }),
};

/** Guard fields removed from every body before it is forwarded (`metadata` depends on the wire). */
export const GUARD_ONLY_FIELDS = ['policy_id', 'moderate_before', 'monitor_details'] as const;

const outline = (id: string, description: string, shape: z.ZodRawShape) =>
  z.looseObject(shape).meta({ id, description });

export const ChatCompletionRequestOutline = outline(
  'ChatCompletionRequest',
  'OpenAI chat completions request; every other OpenAI field is forwarded unchanged',
  {
    model: z.string(),
    messages: z.array(z.looseObject({ role: z.string() })).min(1),
    stream: z.boolean().optional(),
    tools: z.array(z.looseObject({})).optional(),
    ...GuardRequestFields,
  },
);

export const ChatCompletion = outline(
  'ChatCompletion',
  'OpenAI chat completion (or, with `stream: true`, an event stream of chat.completion.chunk objects ended by `data: [DONE]`)',
  {
    id: z.string(),
    object: z.string(),
    created: z.number(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number(),
        finish_reason: z.string().nullable(),
        message: z.looseObject({ role: z.string(), content: z.string().nullable() }),
      }),
    ),
    usage: z.looseObject({}).optional(),
  },
);

export const ResponsesRequestOutline = outline(
  'ResponsesRequest',
  'OpenAI Responses request; every other field is forwarded unchanged',
  {
    model: z.string(),
    input: z.union([z.string(), z.array(z.looseObject({}))]),
    instructions: z.string().nullable().optional(),
    stream: z.boolean().optional(),
    tools: z.array(z.looseObject({})).optional(),
    ...GuardRequestFields,
  },
);

export const ResponsesResponse = outline(
  'ResponsesResponse',
  'OpenAI Responses `response` object (output items), with the `choices` and chat-style `usage` fields as well; or, with `stream: true`, typed events',
  {
    id: z.string(),
    object: z.string(),
    model: z.string(),
    output: z.array(z.looseObject({})),
    choices: z.array(z.looseObject({ index: z.number(), finish_reason: z.string() })),
    usage: z.looseObject({}).nullable(),
  },
);

export const AnthropicMessagesRequestOutline = outline(
  'AnthropicMessagesRequest',
  'Anthropic messages request; every other field is forwarded unchanged',
  {
    model: z.string(),
    max_tokens: z.number().int(),
    messages: z.array(z.looseObject({ role: z.string() })).min(1),
    system: z.union([z.string(), z.array(z.looseObject({}))]).optional(),
    stream: z.boolean().optional(),
    policy_id: GuardRequestFields.policy_id,
    moderate_before: GuardRequestFields.moderate_before,
    monitor_details: GuardRequestFields.monitor_details,
  },
);

export const AnthropicMessage = outline(
  'AnthropicMessage',
  'Anthropic message (or, with `stream: true`, its named event stream)',
  {
    id: z.string(),
    type: z.string(),
    role: z.string(),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.string().nullable(),
    usage: z.looseObject({}),
  },
);

export const GeminiGenerateRequestOutline = outline(
  'GeminiGenerateContentRequest',
  'Gemini generateContent request; every other field is forwarded unchanged',
  {
    contents: z.array(z.looseObject({})).min(1),
    systemInstruction: z.looseObject({}).optional(),
    tools: z.array(z.looseObject({})).optional(),
    ...GuardRequestFields,
  },
);

export const GeminiGenerateResponse = outline(
  'GeminiGenerateContentResponse',
  'Gemini GenerateContentResponse (camelCase, as the API sends it); `:streamGenerateContent` streams these, as SSE with `alt=sse`, else as one JSON array',
  {
    candidates: z.array(z.looseObject({ finishReason: z.string().optional() })),
    usageMetadata: z.looseObject({}).optional(),
  },
);
