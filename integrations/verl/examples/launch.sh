#!/usr/bin/env bash
# ParaAgent RL in verl on one 8-GPU node. UNTESTED HERE (no GPU, no verl). Run from the repository root.
set -euo pipefail
npm run export -- verl --out data/verl --count 2000 --split train
npm run export -- verl --out data/verl-val --count 200 --split validation --only rl
npm run serve -- --port 8765 &
trap 'kill $!' EXIT
PYTHONPATH="$PWD/integrations/verl" python3 -m verl.trainer.main_ppo \
  --config-path="$PWD/integrations/verl/examples" --config-name=paraagent_qwen3_4b "$@"
