# Sourced by train-product.sh, finetune.sh and loso.sh (from the repository root): the fine-tuning
# venv (torch and transformers pinned in requirements-finetune.txt) under
# node_modules/.cache/guard-encoder, made on first use; sets PY to its python and makes Python
# runs reproducible and offline.
PY=node_modules/.cache/guard-encoder/ft-venv/bin/python
[ -x "$PY" ] || python3 -m venv node_modules/.cache/guard-encoder/ft-venv
"$PY" -m pip install --quiet --disable-pip-version-check -r scripts/encoder/requirements-finetune.txt
export PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
