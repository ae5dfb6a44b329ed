/**
 * What words in a rule's name and description point to which detector. These tables read
 * *rules*, never user text: "weapons" in a rule routes it to the weapons detector; the same word
 * in a prompt is judged by the detector, not by this table.
 *
 * Terms are matched on stemmed word sequences (see words.ts `stem`), so "weapons", "weapon" and
 * "Weapon" all hit `weapon`.
 */
import type { HarmCategory } from '../detectors.js';

export type RouteTarget =
  | { kind: 'harm'; category: HarmCategory }
  /** Harm in general ("no harmful or illegal requests"): the overall harm score (rule-router.ts). */
  | { kind: 'harm_general' }
  | { kind: 'jailbreak' }
  | { kind: 'injection' }
  | { kind: 'indirect_injection' }
  | { kind: 'leakage' }
  | { kind: 'pii' }
  | { kind: 'secrets' }
  | { kind: 'destructive' };

export interface LexiconEntry {
  target: RouteTarget;
  /** Space-separated phrases (1-3 words). */
  terms: string[];
}

const harm = (category: HarmCategory, terms: string): LexiconEntry => ({
  target: { kind: 'harm', category },
  terms: terms.split(',').map((t) => t.trim()),
});

export const RULE_LEXICON: LexiconEntry[] = [
  harm(
    'violence',
    'violence, violent, kill, killing, murder, assault, attack people, gore, gory, torture, threaten, threat, glorify, ' +
      'massacre, stab, shoot people, beat, physical harm, hurt people, harm others, animal cruelty, bloodshed, brutality',
  ),
  harm(
    'weapons',
    'weapon, firearm, gun, rifle, pistol, ammunition, ammo, explosive, bomb, grenade, detonator, ied, dangerous device, ' +
      'chemical weapon, biological weapon, bioweapon, nerve agent, ghost gun, 3d printed gun, silencer, munition, nuclear weapon',
  ),
  harm(
    'self_harm',
    'self harm, self-harm, selfharm, suicide, suicidal, self injury, cutting, overdose, kill myself, kill themselves, ' +
      'eating disorder, anorexia, bulimia, end my life, self destructive',
  ),
  harm(
    'sexual',
    'sexual, sexually, sex, explicit, porn, pornography, pornographic, nsfw, nude, nudity, erotic, erotica, adult content, obscene, lewd',
  ),
  harm(
    'sexual_minors',
    'minor, child, children, underage, csam, csem, kid, teen, teenager, child sexual abuse, grooming, child exploitation, pedophilia',
  ),
  harm(
    'hate',
    'hate, hateful, hate speech, racist, racism, slur, discrimination, discriminatory, bigotry, bigoted, xenophobia, ' +
      'xenophobic, antisemitism, antisemitic, islamophobia, homophobia, homophobic, transphobia, sexist, sexism, ' +
      'dehumanize, dehumanizing, supremacy, supremacist, race, ethnicity, religion, sexual orientation, gender identity, nationality, disability',
  ),
  harm(
    'harassment',
    'harassment, harass, bully, bullying, insult, insulting, intimidation, intimidate, doxx, doxxing, stalk, stalking, ' +
      'abusive, abuse, toxic, toxicity, profanity, profane, swear, swearing, offensive language, rude, demeaning, belittle, ' +
      'humiliate, mock, troll, cyberbullying',
  ),
  harm(
    'illegal_drugs',
    'drug, illegal drug, narcotic, cocaine, heroin, meth, methamphetamine, fentanyl, mdma, lsd, opioid, controlled substance, ' +
      'trafficking, drug trafficking, cannabis, marijuana',
  ),
  harm(
    'cybercrime',
    'malware, ransomware, hacking, hack, hacker, exploit, keylogger, virus, trojan, botnet, ddos, spyware, rootkit, ' +
      'intrusion, unauthorized access, credential stealer, cyberattack, attacking computer systems, zero day, sql injection, ' +
      'phishing kit, harm systems, backdoor, worm, crack passwords, privilege escalation',
  ),
  harm(
    'fraud',
    'fraud, fraudulent, scam, scams, phishing, identity theft, counterfeit, money laundering, launder, forgery, forge, ' +
      'impersonation, impersonate, fake review, ponzi, pyramid scheme, embezzlement, deceptive, deceive, con, tax evasion, ' +
      'carding, stolen card',
  ),
  harm(
    'extremism',
    'terrorism, terrorist, extremism, extremist, radicalization, radicalisation, radicalize, jihad, jihadist, militia, ' +
      'violent extremist, extremist group, propaganda, recruitment, neo nazi, insurgent',
  ),
  harm(
    'privacy',
    'privacy, doxxing, surveillance, track someone, locate a person, home address, spy on, stalkerware, personal life',
  ),
  {
    target: { kind: 'harm_general' },
    terms: [
      'harm',
      'harmful',
      'harmfully',
      'serious harm',
      'seriously harmful',
      'illegal',
      'illegally',
      'unlawful',
      'crime',
      'criminal',
      'criminal activity',
      'dangerous',
      'danger',
      'unsafe',
      'hazardous',
      'unethical',
      'wrongdoing',
      'malicious',
      'misuse',
    ],
  },
  {
    target: { kind: 'jailbreak' },
    terms: [
      'jailbreak',
      'jailbreaking',
      'do anything now',
      'dan',
      'developer mode',
      'bypass safety',
      'bypass the safety',
      'bypass its rules',
      'bypass guardrails',
      'bypass restrictions',
      'circumvent',
      'uncensored',
      'unrestricted mode',
      'persona',
      'roleplay attack',
      'role play attack',
      'god mode',
      'evil mode',
      'refusal suppression',
    ],
  },
  {
    target: { kind: 'injection' },
    terms: [
      'prompt injection',
      'injection',
      'inject',
      'override',
      'ignore instructions',
      'ignore previous',
      'ignore the system',
      'ignore its instructions',
      'system instructions',
      'instructions aimed at',
      'manipulate the model',
      'hijack',
      'new instructions',
    ],
  },
  {
    target: { kind: 'indirect_injection' },
    terms: [
      'indirect',
      'indirect prompt injection',
      'document',
      'web page',
      'webpage',
      'website',
      'tool result',
      'tool output',
      'tool response',
      'retrieved',
      'hidden instructions',
      'hidden in',
      'email',
      'file',
      'search result',
      'third party',
      'untrusted content',
    ],
  },
  {
    target: { kind: 'leakage' },
    terms: [
      'system prompt',
      'system message',
      'system instructions',
      'hidden prompt',
      'initial instructions',
      'internal instructions',
      'prompt leak',
      'prompt leakage',
      'leak',
      'leakage',
      'reveal its instructions',
      'reveal the instructions',
      'confidential instructions',
    ],
  },
  {
    target: { kind: 'pii' },
    terms: [
      'pii',
      'personal data',
      'personal information',
      'personally identifiable',
      'personal details',
      'contact details',
      'email address',
      'e mail address',
      'phone number',
      'telephone number',
      'mobile number',
      'credit card',
      'card number',
      'payment card',
      'debit card',
      'ssn',
      'social security',
      'national id',
      'national identification',
      'id number',
      'tax id',
      'iban',
      'bank account',
      'ip address',
      'gdpr',
    ],
  },
  {
    target: { kind: 'secrets' },
    terms: [
      'secret',
      'credential',
      'api key',
      'access key',
      'access token',
      'auth token',
      'api token',
      'bearer token',
      'password',
      'private key',
      'ssh key',
      'connection string',
      'client secret',
      'aws key',
    ],
  },
  {
    target: { kind: 'destructive' },
    terms: [
      'destructive',
      'destructive command',
      'dangerous command',
      'delete file',
      'wipe',
      'format disk',
      'rm rf',
      'drop table',
      'drop database',
      'force push',
      'data loss',
      'irreversible',
    ],
  },
];

/** Which PII types a rule names. No specific type but a generic PII word means all types. */
export const PII_TYPE_TERMS: Array<{
  type: 'email' | 'phone' | 'credit_card' | 'national_id' | 'iban' | 'ip_address';
  terms: string[];
}> = [
  { type: 'email', terms: ['email address', 'e mail address', 'email'] },
  {
    type: 'phone',
    terms: ['phone number', 'telephone number', 'mobile number', 'phone', 'telephone'],
  },
  { type: 'credit_card', terms: ['credit card', 'card number', 'payment card', 'debit card'] },
  {
    type: 'national_id',
    terms: [
      'ssn',
      'social security',
      'national id',
      'national identification',
      'id number',
      'tax id',
      'passport number',
    ],
  },
  { type: 'iban', terms: ['iban', 'bank account'] },
  { type: 'ip_address', terms: ['ip address'] },
];

export const GENERIC_PII_TERMS = [
  'pii',
  'personal data',
  'personal information',
  'personally identifiable',
  'personal details',
  'gdpr',
  'contact details',
];

/**
 * Built-in destructive-command patterns (coding agents). Our own patterns: no nested unbounded
 * quantifiers, and every repetition that a match attempt can re-scan is bounded: real flag
 * clusters are a few letters ("-rf", "-fdx") and a command has a handful of options, while
 * `[a-zA-Z]*r[a-zA-Z]*f` on a 100,000-letter "flag" or `(?:-\S+\s+)*` restarted at every
 * "-mkfs" of a long run took time quadratic in the input.
 */
export const DESTRUCTIVE_PATTERNS: Array<{ label: string; re: RegExp }> = [
  {
    label: 'recursive delete of a root/home path',
    re: /\brm\s+(?:-[a-zA-Z]{0,16}\s+){0,8}-(?:[a-zA-Z]{0,8}r[a-zA-Z]{0,8}f|[a-zA-Z]{0,8}f[a-zA-Z]{0,8}r)[a-zA-Z]{0,8}\s+(?:--no-preserve-root\s+)?(?:\/|~|\*|\$HOME)(?=\s|$|;|&|\||`|"|')/,
  },
  { label: 'filesystem format', re: /\bmkfs(?:\.\w+)?\s+(?:-\S+\s+){0,16}\/dev\// },
  {
    label: 'raw disk overwrite',
    re: /\bdd\s+[^\n]{0,80}\bof=\/dev\/(?:sd|nvme|hd|disk|xvd|vd|mmcblk)/,
  },
  { label: 'fork bomb', re: /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
  { label: 'world-writable root', re: /\bchmod\s+-R\s+0?777\s+\/(?=\s|$)/ },
  {
    label: 'force push',
    re: /\bgit\s+push\s+(?:[^\n;|&]{0,80}\s)?(?:--force(?!-with-lease)|-f)(?=\s|$)/,
  },
  {
    label: 'hard reset / clean',
    re: /\bgit\s+(?:reset\s+--hard|clean\s+-[a-zA-Z]{0,8}f[a-zA-Z]{0,8}d|clean\s+-[a-zA-Z]{0,8}d[a-zA-Z]{0,8}f)/,
  },
  { label: 'drop table/database', re: /\bdrop\s+(?:table|database|schema)\b/i },
  { label: 'truncate table', re: /\btruncate\s+table\b/i },
  { label: 'unfiltered delete', re: /\bdelete\s+from\s+[\w."`]+\s*;/i },
  { label: 'disk overwrite by redirect', re: />\s*\/dev\/(?:sd[a-z]|nvme\d)/ },
  { label: 'format drive', re: /\bformat\s+[a-zA-Z]:(?=\s|$)/ },
  { label: 'recursive delete of a drive', re: /\b(?:rd|rmdir)\s+\/s\s+\/q\s+[a-zA-Z]:\\/i },
  {
    label: 'delete all cluster resources',
    re: /\bkubectl\s+delete\s+(?:ns\b|namespace\b|all\b|[^\n]{0,40}--all\b)/,
  },
  { label: 'infrastructure destroy', re: /\bterraform\s+destroy\b/ },
];

/**
 * Words a rule about harm in general may have besides the `harm_general` terms and common words
 * ("No help with crimes or other seriously harmful acts."): with any other content word the rule
 * is about a topic ("no harmful medical advice") and the overall harm score does not answer it.
 */
export const GENERAL_HARM_FILLER: ReadonlySet<string> = new Set(
  (
    'content contents request requests activity activities act acts action actions thing things ' +
    'anything something stuff material materials kind kinds type types form forms sort ' +
    'serious seriously severe severely otherwise else generally general ' +
    'assist assistance assisting support supporting guidance advice instruct instructions ' +
    'facilitate facilitating enable enabling encourage encouraging promote promoting provide providing ' +
    'produce producing generate generating create creating allow allowing block blocking refuse ' +
    'refusing prevent avoid disallow forbid forbidden prohibited prohibit behavior behaviour ' +
    'conduct purpose purposes task tasks question questions response responses answer answers ' +
    'output outputs topic topics subject subjects user users anyone someone people person others ' +
    'cause causing could can might may lead result safe safety discuss discussing mention mentioning talk talking'
  )
    .split(/\s+/)
    .filter(Boolean),
);
