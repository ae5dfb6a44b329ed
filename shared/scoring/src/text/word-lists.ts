/**
 * Small static vocabularies. They are deliberately short: they decide whether a decoded or
 * de-obfuscated piece of text "reads as something" (English, or a word an attacker would want to
 * hide from a filter), never whether text is harmful. Kept free of slurs and explicit terms.
 */

/** Frequent English words: a decoded/rot13/reversed segment made of these is readable text. */
export const COMMON_WORDS: ReadonlySet<string> = new Set(
  (
    'the be to of and a in that have i it for not on with he as you do at this but his by from they we say her she or ' +
    'an will my one all would there their what so up out if about who get which go me when make can like time no just ' +
    'him know take people into year your good some could them see other than then now look only come its over think ' +
    'also back after use two how our work first well way even new want because any these give day most us is are was ' +
    'were been has had did does said tell told write show explain describe list give answer reply respond ' +
    'please must should never always every each instead without before following above below next here there ' +
    'make made need help new old true false yes okay sure thanks thank hello world secret password key code text ' +
    'message word words sentence letter letters step steps how what why where which whose whom very more much many ' +
    'rules rule instructions instruction previous prior earlier ignore forget disregard system prompt user assistant ' +
    'model act pretend role play mode now from on off your yours mine ours own output print repeat reveal hidden ' +
    'information data file files command commands run execute send email call open read'
  ).split(/\s+/),
);

/**
 * Words an attacker wants to get past a keyword filter: instruction-override vocabulary and
 * the core nouns/verbs of the harm categories. A disguise that reveals one of these is evidence
 * of intent; a disguise that reveals nothing from here (or from the rules' own vocabulary) is
 * treated as ordinary encoded data.
 */
export const TRIGGER_WORDS: ReadonlySet<string> = new Set(
  // instruction override, persona, exfiltration
  (
    'ignore ignoring disregard forget override bypass circumvent jailbreak jailbroken unrestricted uncensored ' +
    'unfiltered unlimited restrictions restriction guidelines guardrails filters filter safety policy policies ' +
    'instructions instruction previous prompt system developer admin administrator sudo root pretend roleplay ' +
    'persona reveal leak exfiltrate confidential secret secrets password passwords credentials token tokens apikey ' +
    'execute exec shell command payload inject injection obey comply unlock evil ' +
    // harm nouns and verbs (generic, non-explicit)
    'bomb bombs explosive explosives detonator grenade weapon weapons firearm firearms gun guns rifle pistol ' +
    'ammunition kill killing murder assassinate attack poison poisoning toxin nerve anthrax ricin sarin ' +
    'drug drugs meth methamphetamine cocaine heroin fentanyl narcotics synthesize synthesis ' +
    'hack hacking hacker malware ransomware virus trojan keylogger botnet exploit exploits phishing ' +
    'steal stealing stolen fraud scam launder laundering counterfeit forge forged ' +
    'suicide overdose terrorist terrorism extremist hostage kidnap torture'
  ).split(/\s+/),
);

/** Function words and rule boilerplate: ignored when a rule is compared with text lexically. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or nor but if then else of to in on at by for with without from into onto about above below over ' +
    "under as is are was were be been being am do does did doing have has had having it its it's this that these " +
    'those there here such any all each every some no not never none only own same so than too very can could should ' +
    'would will shall may might must i me my we our you your he she they them their his her him us what which who ' +
    'whom whose when where why how also just more most other others another both either neither via etc e.g i.e ' +
    "don't dont do not cannot can't won't shouldn't mustn't ever always please user users model assistant ai " +
    'content contents message messages response responses text output input answer answers reply replies request ' +
    'requests prompt prompts allow allowed disallow disallowed block blocked flag flagged avoid prevent permit ' +
    'rule rules policy policies include includes including related relating regarding concerning involving ' +
    'anything something everything thing things way ways kind kinds type types form forms one ones use using ' +
    'provide providing share sharing give giving generate generating produce producing create creating write writing ' +
    'talk talking discuss discussing discussion discussions mention mentioning refer referring say saying help helping' +
    ' make making get getting information info topic topics question questions like e g'
  ).split(/\s+/),
);
