/** Scanner findings over the checked text, computed on first use: rules and scanners share them. */
import { leakageIndex, scanLeakage, type LeakageResult } from '../scanners/leakage-scanner.js';
import { scanPii, type PiiFinding } from '../scanners/pii-scanner.js';
import type { PiiType, ScannersConfig } from '../scanners/scanners-config.js';
import { scanSecrets, type SecretFinding } from '../scanners/secrets-scanner.js';
import { DESTRUCTIVE_PATTERNS } from '../router/rule-lexicon.js';
import type { ConversationParts } from './conversation.js';
import type { ModeProfile } from './modes.js';
import type { Analysis } from './text-analysis.js';

export type ScannerFindings = ReturnType<typeof createScannerFindings>;

export function createScannerFindings(
  config: ScannersConfig,
  profile: ModeProfile,
  parts: ConversationParts,
  checkedAn: Analysis,
) {
  const input = parts.phase === 'input';
  // Scanners, lazily: only what a rule, the config or the mode asks for runs.
  const piiCfg =
    config.pii ??
    (profile.piiByDefault
      ? {
          enabled: true,
          pii_types: undefined,
          redact: profile.redactByDefault,
          redaction: 'type' as const,
          action: 'report' as const,
        }
      : undefined);
  const secretsCfg =
    config.secrets ??
    (profile.secretsByDefault
      ? {
          enabled: true,
          types: undefined,
          entropy: { enabled: true, min_length: 24, min_entropy: 4 },
          redact: false,
          action: 'report' as const,
        }
      : undefined);
  let piiAll: Array<PiiFinding & { message: number }> | null = null;
  const piiFindings = (): Array<PiiFinding & { message: number }> => {
    if (piiAll) return piiAll;
    const allowed = piiCfg?.pii_types ? new Set<PiiType>(piiCfg.pii_types) : undefined;
    piiAll = [];
    for (const m of parts.checked)
      for (const f of scanPii(m.text, allowed)) piiAll.push({ ...f, message: m.index });
    // Disguised PII (decoded payloads) counts too, without offsets into the original.
    for (const v of checkedAn.views.slice(1))
      for (const f of scanPii(v.text, allowed)) piiAll.push({ ...f, message: -1 });
    return piiAll;
  };
  let secretsAll: Array<SecretFinding & { message: number }> | null = null;
  const secretFindings = (): Array<SecretFinding & { message: number }> => {
    if (secretsAll) return secretsAll;
    const opts = {
      types: secretsCfg?.types ? new Set(secretsCfg.types) : undefined,
      entropy: secretsCfg?.entropy,
    };
    secretsAll = [];
    for (const m of parts.checked)
      for (const f of scanSecrets(m.text, opts)) secretsAll.push({ ...f, message: m.index });
    for (const v of checkedAn.views.slice(1))
      for (const f of scanSecrets(v.text, opts)) secretsAll.push({ ...f, message: -1 });
    return secretsAll;
  };
  const systemPromptText = config.system_prompt?.text ?? parts.systemPrompt;
  let leak: LeakageResult | null | undefined;
  const leakage = (): LeakageResult | null => {
    if (leak !== undefined) return leak;
    leak =
      systemPromptText.trim().length === 0 || input
        ? null
        : scanLeakage(
            checkedAn.norm.canonical,
            leakageIndex(systemPromptText, config.system_prompt?.ngram_size ?? 5),
          );
    return leak;
  };
  let destructiveLabels: string[] | null = null;
  const destructive = (): string[] => {
    if (destructiveLabels) return destructiveLabels;
    const labels = new Set<string>();
    for (const v of checkedAn.views)
      for (const p of DESTRUCTIVE_PATTERNS) if (p.re.test(v.text)) labels.add(p.label);
    destructiveLabels = [...labels];
    return destructiveLabels;
  };
  return { piiCfg, secretsCfg, piiFindings, secretFindings, leakage, destructive };
}
