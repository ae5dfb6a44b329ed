#!/usr/bin/env bash
# Reproducible training of the learned detectors (`npm run train`).
#   1. Python venv in .venv-train/ from scripts/train/requirements.txt (pinned)
#   2. distil all-MiniLM-L6-v2 into a static token-embedding table (model2vec)
#   3. build splits, augmentation and features with the serving featuriser (TypeScript)
#   4. train the network, calibrate, export weights to shared/scoring/models/
#   5. score the validation split with the shipped TypeScript scorer
# Inputs: $GUARD_TRAIN_DATA (default ../shared/data/train). Fixed seeds throughout.
# Set SKIP_DISTILL=1 to reuse the committed embedding table (it is deterministic anyway).
set -euo pipefail
cd "$(dirname "$0")/../.."
# Inside node_modules/.cache: ignored by git, eslint and prettier alike.
VENV=node_modules/.cache/guard-train-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet -r scripts/train/requirements.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONHASHSEED=0
if [ "${SKIP_DISTILL:-0}" != "1" ]; then
  "$VENV/bin/python" scripts/train/distill_embeddings.py shared/scoring/models
fi
node --conditions=source --import tsx scripts/train/build-dataset.ts
"$VENV/bin/python" scripts/train/train_detectors.py --variant "${GUARD_VARIANT:-hybrid}" --epochs "${GUARD_EPOCHS:-3}" --export
node --conditions=source --import tsx scripts/eval/eval-detectors.ts .cache/guard-train/val.jsonl --json .cache/guard-train/val-eval.json
