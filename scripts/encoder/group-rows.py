"""Fixed-seed evaluation rows for the fine-tuning experiment (README.md, "Fine-tuned MiniLM").

Held-out group: sources excluded from the training build (GUARD_TRAIN_EXCLUDE) or never in it
(VAL_SOURCES), and a benign pool made of benign sources that are also excluded. Writes one JSONL
of {text, role, source, label, pool}; the pool rows appear once per role the positives use.
Usage: python group-rows.py GROUP DATA_DIR OUT.jsonl   (GROUP: a, b, c or loso)
       python group-rows.py GROUP --exclude   (prints the GUARD_TRAIN_EXCLUDE list: group + pool)
       python group-rows.py loso:FOLD --exclude   (leave-one-source-out, loso.py: FOLD + pool;
                                                   FOLD _reference excludes the pool alone)
"""
import json
import random
import sys

# Held-out groups: source -> (label scored, cap on positive rows), in sampling order. Group a
# holds out the attack styles made by attack pipelines (persuasion, scenarios, nested fiction) and
# three harm sets; group b the human-written jailbreaks, BIPIA and red_instruct's harmful
# requests. Both also measure the sources every training build holds out (VAL_SOURCES of
# scripts/train/sources.ts), which need no exclusion.
ALWAYS = ['gptfuzz_prompts', 'deepset_prompt_injections', 'advbench', 'strongreject', 'harmbench']
GROUPS = {
    'a': {
        'sap': ('jailbreak', 2200),
        'trustllm_safety': ('jailbreak', 2200),
        'deepinception_smoothllm_gcg': ('jailbreak', 2200),
        'gptfuzz_prompts': ('jailbreak', 2200),
        'deepset_prompt_injections': ('injection', 2200),
        'advbench': ('harmful', 2200),
        'strongreject': ('harmful', 2200),
        'harmbench': ('harmful', 2200),
        'toxigen_prompts': ('harmful', 2200),
        'davidson_hate_offensive': ('harmful', 1500),
        'diasafety': ('harmful', 1500),
    },
    'b': {
        'jailbreak_llms': ('jailbreak', 2200),
        'gptfuzz_prompts': ('jailbreak', 2200),
        'bipia': ('injection', 2200),
        'deepset_prompt_injections': ('injection', 2200),
        'red_instruct': ('harmful', 2200),
        'advbench': ('harmful', 2200),
        'strongreject': ('harmful', 2200),
        'harmbench': ('harmful', 2200),
    },
}
# Group c: group b, with xsid (benign requests in 19 language varieties) also out of training and
# in the pool, so that non-English benign text sets the thresholds too (for the multilingual run).
GROUPS['c'] = GROUPS['b']
# Leave-one-source-out (loso.py): every attack source and the English harm sets, each measured by
# the fold that holds it out; the content sets are left to the static LOSO (npm run eval:loso).
GROUPS['loso'] = {
    'jailbreak_llms': ('jailbreak', 2200),
    'gptfuzz_prompts': ('jailbreak', 2200),
    'sap': ('jailbreak', 2200),
    'trustllm_safety': ('jailbreak', 2200),
    'deepinception_smoothllm_gcg': ('jailbreak', 2200),
    'deepset_prompt_injections': ('injection', 2200),
    'bipia': ('injection', 2200),
    'advbench': ('harmful', 2200),
    'strongreject': ('harmful', 2200),
    'harmbench': ('harmful', 2200),
    'red_instruct': ('harmful', 2200),
    'do_not_answer': ('harmful', 2200),
    'gptfuzz_responses': ('harmful', 2200),
    'diasafety': ('harmful', 2200),
}
POOL = {'nq_open': 2000, 'gsm8k': 2000, 'gpteacher_roleplay': 2000, 'coconot': 1904}

GROUP = sys.argv[1]
if GROUP.startswith('loso:'):
    fold = GROUP[5:]
    print(','.join([*([] if fold == '_reference' else [fold]), *POOL]))
    sys.exit(0)
HELD = GROUPS[GROUP]
if GROUP == 'c':
    POOL = {**POOL, 'xsid': 2000}
if sys.argv[2] == '--exclude':
    print(','.join([*(k for k in HELD if k not in ALWAYS), *POOL]))
    sys.exit(0)
DATA, OUT = sys.argv[2], sys.argv[3]


def rows(source):
    with open(f'{DATA}/{source}.jsonl') as f:
        return [json.loads(l) for l in f if l.strip()]


def lang_of(r):
    return next((c[5:] for c in r.get('categories') or [] if c.startswith('lang:')), None)


def role_of(r):
    for c in r.get('categories') or []:
        if c.startswith('role:') and c[5:] in ('response', 'document'):
            return c[5:]
    return 'prompt'


def entry(r, role, label, pool):
    return {'text': r['text'], 'role': role, 'source': r['source'], 'label': label, 'pool': pool,
            'lang': lang_of(r)}


rng = random.Random(20251125)
out = []
roles = set()
for src, (label, cap) in HELD.items():
    pos = [r for r in rows(src) if r['label'] == label]
    rng.shuffle(pos)
    for r in pos[:cap]:
        roles.add(role_of(r))
        out.append(entry(r, role_of(r), label, False))
for src, cap in POOL.items():
    ben = [r for r in rows(src) if r['label'] == 'benign']
    rng.shuffle(ben)
    for r in ben[:cap]:
        for role in sorted(roles):
            out.append(entry(r, role, 'benign', True))
with open(OUT, 'w') as f:
    for r in out:
        f.write(json.dumps(r) + '\n')
print(len(out), 'rows; roles', sorted(roles))
