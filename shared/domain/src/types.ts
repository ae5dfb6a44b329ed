/** Domain entities. Plain data; no infrastructure types cross these definitions. */

export type OrgKind = 'standard' | 'red_team';
export type Role = 'admin' | 'member';
import type { RuleMode } from './scoring/score-contract.js';
import type { StreamMode } from './completions/stream-moderator.js';

export {
  RULE_MODES,
  POLICY_MODES,
  type RuleMode,
  type PolicyMode,
} from './scoring/score-contract.js';

export const DEFAULT_BLOCK_MESSAGE = "Sorry, I can't help with that.";
export const DEFAULT_THRESHOLDS = {
  pre_violation_threshold: 0.5,
  pre_jb_threshold: 0.3,
  post_violation_threshold: 0.5,
  post_violation_jb_threshold: 0.3,
} as const;

export interface Org {
  id: string;
  name: string;
  kind: OrgKind;
  default_policy_id: string | null;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  org_id: string;
  user_id: string;
  role: Role;
  staff: boolean;
  name: string;
  /** sha256 of the key, hex. The key itself is never stored. */
  key_hash: string;
  /** First characters of the key, to recognise it in listings. */
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

/** Who is calling: resolved from the API key on every request. */
export interface Principal {
  org_id: string;
  org_kind: OrgKind;
  user_id: string;
  key_id: string;
  role: Role;
  staff: boolean;
}

/** The editable content of a policy: what versions diff and what export carries. */
export interface PolicyContent {
  name: string;
  description: string;
  rules: Record<string, string>;
  rule_modes: Record<string, RuleMode>;
  mode: string;
  pre_violation_threshold: number;
  pre_jb_threshold: number;
  post_violation_threshold: number;
  post_violation_jb_threshold: number;
  scanners_config: Record<string, unknown>;
  block_message: string;
  /** How streamed answers are moderated (absent: the server's default). */
  stream_mode?: StreamMode | undefined;
  /** What a failed or timed-out scoring counts as (absent: the server's default). */
  fail_mode?: PolicyFailMode | undefined;
  /** How long scoring may take before the fail mode answers (absent: the server's default). */
  scoring_timeout_ms?: number | undefined;
}

export const POLICY_FAIL_MODES = ['fail_closed', 'fail_open'] as const;
export type PolicyFailMode = (typeof POLICY_FAIL_MODES)[number];

export interface Policy extends PolicyContent {
  id: string;
  /** null for presets, which every org can read. */
  org_id: string | null;
  is_preset: boolean;
  created_at: string;
  updated_at: string;
}

export type VersionOperation = 'create' | 'update' | 'import' | 'bulk_import' | 'delete';

export interface DiffEntry {
  op: 'add' | 'remove' | 'replace';
  path: string;
  old?: unknown;
  new?: unknown;
}

export interface PolicyVersion {
  id: string;
  policy_id: string;
  org_id: string;
  operation: VersionOperation;
  timestamp: string;
  user_id: string;
  diff: DiffEntry[];
}

/** One recorded decision (spec/decisions.md, "Activity"). */
export interface Activity {
  id: string;
  org_id: string;
  created_at: string;
  endpoint: string;
  policy_id: string | null;
  policy_ids: string[];
  model: string | null;
  api_key_id: string;
  user_id: string;
  alarm: boolean;
  blocked: boolean;
  pre_analysis: Record<string, unknown> | null;
  post_generation_analysis: Record<string, unknown> | null;
  latency_ms: number;
  input_excerpt: string | null;
  output_excerpt: string | null;
  metadata: Record<string, unknown>;
}
