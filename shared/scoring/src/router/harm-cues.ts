/**
 * Vocabulary that, in the *text being scored*, points a harmful text at a category. The learned
 * overall harm head is much stronger than its per-category heads (most training sets label harm
 * without a category), so a category rule takes the overall score when the text itself speaks of
 * that category. A cue never raises a score above the overall harm probability: "kill a Python
 * process" carries a violence cue, but its harm score stays near zero.
 *
 * Single words, stemmed with the router's stemmer; distinctive rather than exhaustive.
 */
import type { HarmCategory } from '../detectors.js';
import { stem } from '../text/words.js';

const CUES: Record<HarmCategory, string> = {
  violence:
    'kill killing murder murdering assault stab stabbing shoot shooting torture hurt injure poison poisoning strangle kidnap ' +
    'kidnapping massacre behead maim choke violent violence bloodshed dismember hostage',
  weapons:
    'bomb bombs explosive explosives grenade detonator gun guns firearm firearms rifle pistol ammunition ammo silencer suppressor ' +
    'napalm thermite ied molotov sarin ricin anthrax bioweapon nerve weapon weapons missile landmine tnt semtex gunpowder ' +
    'nitroglycerin shrapnel pipe-bomb',
  self_harm:
    'suicide suicidal self-harm selfharm overdose anorexia bulimia cutting hang starve razor',
  sexual:
    'sex sexual sexually porn pornographic pornography nude nudes naked erotic orgasm nsfw genitals fetish masturbate explicit',
  // Words for minors alone are everyday vocabulary ("a trip with my kids"): they count for this
  // category only next to sexual vocabulary (see harmCues), except the unambiguous ones.
  sexual_minors: 'loli pedophile pedophilia csam',
  // Words for who is spoken of (groups, identities) are not cues: plain statements of identity
  // score high overall harm, and a group's name alone would lend it to this rule.
  hate: 'hate hateful racist racism inferior subhuman vermin genocide supremacy supremacist slur bigot nazi ethnic',
  harassment:
    'insult harass harassment bully bullying humiliate threaten threat stalk doxx idiot stupid loser worthless ugly pathetic',
  illegal_drugs:
    'meth methamphetamine cocaine heroin fentanyl lsd mdma ecstasy opium narcotic narcotics drug drugs cannabis marijuana weed ' +
    'crack dealer smuggle synthesize',
  cybercrime:
    'malware ransomware virus trojan keylogger exploit hack hacking hacker botnet ddos rootkit backdoor spyware shellcode payload ' +
    'brute-force xss phishing',
  fraud:
    'scam scams scammer fraud fraudulent phishing counterfeit launder laundering forged forge fake identity ponzi embezzle ' +
    'impersonate bribe steal stolen evasion',
  extremism:
    'terrorist terrorism terror isis jihad jihadist qaeda extremist extremism radicalize recruit manifesto militia',
  privacy: 'locate spy surveil surveillance doxx whereabouts stalk ssn',
};

const CUE_STEMS = new Map<string, HarmCategory[]>();
for (const [category, words] of Object.entries(CUES) as [HarmCategory, string][]) {
  for (const w of words.split(/\s+/)) {
    for (const part of w.split('-')) {
      const s = stem(part);
      const list = CUE_STEMS.get(s) ?? [];
      if (!list.includes(category)) list.push(category);
      CUE_STEMS.set(s, list);
    }
  }
}

const MINOR_STEMS = new Set(
  'underage minor minors child children kid kids teen teens preteen schoolgirl schoolboy'
    .split(' ')
    .map(stem),
);

/** Categories whose vocabulary occurs among the given content stems. */
export function harmCues(stems: readonly string[]): Set<HarmCategory> {
  const out = new Set<HarmCategory>();
  let minors = false;
  for (const s of stems) {
    for (const c of CUE_STEMS.get(s) ?? []) out.add(c);
    if (MINOR_STEMS.has(s)) minors = true;
  }
  if (minors && out.has('sexual')) out.add('sexual_minors');
  return out;
}
