import { MessageRole, ReasoningMode } from '@guard/domain';
import { z } from 'zod';
import { jsonSizeAtMost, ScannersConfig } from './policies.js';

/** Largest `metadata` object accepted on monitor, as JSON text: it is stored with every activity. */
export const MAX_METADATA_BYTES = 16 * 1024;

export { MessageRole, ReasoningMode };

export const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

export const ToolCall = z.object({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.object({ name: z.string(), arguments: z.string().optional() }),
});

export const ChatMessage = z
  .object({
    role: MessageRole,
    content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
    name: z.string().optional(),
    tool_calls: z.array(ToolCall).optional(),
    tool_call_id: z.string().optional(),
  })
  .meta({ id: 'ChatMessage' });

export const ToolDefinition = z.object({
  type: z.literal('function').optional(),
  function: z.object({
    name: z.string(),
    description: z.string().optional(),
    parameters: z.unknown().optional(),
  }),
});

/** Inline rules: {name: description}, ["description", ...] (named rule_1…), or [{name: description}, ...]. */
export const InlineRules = z
  .union([
    z.record(z.string().min(1).max(255), z.string().max(10_000)),
    z
      .array(
        z.union([
          z.string().max(10_000),
          z.record(z.string().min(1).max(255), z.string().max(10_000)),
        ]),
      )
      .max(500),
  ])
  .meta({ id: 'InlineRules' });

export const MonitorRequest = z
  .object({
    text: z.string().optional(),
    messages: z.array(ChatMessage).optional(),
    categories: InlineRules.optional(),
    rules: InlineRules.optional(),
    reasoning_mode: ReasoningMode.optional(),
    policy_id: z.string().max(64).optional(),
    policy_ids: z.array(z.string().max(64)).max(20).optional(),
    tools: z.array(ToolDefinition).max(200).optional(),
    metadata: z
      .record(z.string(), z.unknown())
      .superRefine(jsonSizeAtMost(MAX_METADATA_BYTES, 'metadata'))
      .optional(),
    scanner_configs: ScannersConfig.optional(),
    scanners_config: ScannersConfig.optional().meta({
      description: 'Alias of `scanner_configs` (the spelling policies use); send one of the two.',
    }),
  })
  .superRefine((v, ctx) => {
    if (v.scanner_configs !== undefined && v.scanners_config !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['scanners_config'],
        message: 'send `scanner_configs` or its alias `scanners_config`, not both',
      });
    }
    if (v.text === undefined && (!v.messages || v.messages.length === 0)) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'Send `text` or a non-empty `messages` array to score',
      });
    }
  })
  .meta({ id: 'MonitorRequest' });
export type MonitorRequest = z.infer<typeof MonitorRequest>;

export const MonitorResponse = z
  .object({
    violation: z.number(),
    observe_violation: z.number().nullable(),
    violated_rules: z.array(z.number().int()),
    violated_rule_descriptions: z.array(
      z.object({ rule: z.number().int(), name: z.string(), description: z.string() }),
    ),
    ipi: z.boolean(),
    mutation: z.boolean(),
    scanner_output: z.record(z.string(), z.unknown()),
    reasoning: z.string(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    activity_id: z.string(),
    policy_id: z.string().nullable().meta({
      description:
        'The policy whose thresholds, mode and scanners applied: the first one given, else the org default, else the preset Basic Content Safety; null when only inline rules were given.',
    }),
    policy_ids: z
      .array(z.string())
      .meta({ description: 'Every policy whose rules were merged, in order.' }),
    error: z.boolean(),
    error_message: z.string().nullable(),
    block_message: z.string(),
    ignored_inputs: z.array(
      z.object({ type: z.literal('media'), reason: z.string(), description: z.string() }),
    ),
  })
  .meta({ id: 'MonitorResponse' });
