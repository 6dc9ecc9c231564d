#!/usr/bin/env bash
# The advisor against a real OpenAI-compatible server from a package
# registry: LiteLLM's proxy (from PyPI, in a venv under the target directory,
# reused when present), configured with a fixed response, on 127.0.0.1.
# `orcho run --autopilot` asks it for advice at a rejected attempt, retries
# with its feedback, and the run completes. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../../.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# The proxy line this step is written for.
LITELLM_REQUIREMENT="litellm[proxy]==1.106.2"

cargo build -p orcho-cli --bin orcho
orcho="$CARGO_TARGET_DIR/debug/orcho"

venv="$CARGO_TARGET_DIR/litellm-venv"
if ! "$venv/bin/litellm" --version >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$LITELLM_REQUIREMENT"
fi

work="$(mktemp -d)"
XDG_DATA_HOME="$work/data"
export XDG_DATA_HOME
proxy_pid=""
cleanup() {
  if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$work/litellm.yaml" <<'YAML'
model_list:
  - model_name: fake-advisor
    litellm_params:
      model: openai/fake-advisor
      api_key: not-used
      mock_response: '{"recommended_action": "retry_feedback", "confidence": 0.9, "rationale": "the failure names the input", "risks": [], "retry_feedback": "handle empty input", "expected_files": ["parse.txt"]}'
YAML
export ORCHO_LITELLM_KEY="sk-ci-litellm-master-key-0123456789"
LITELLM_MASTER_KEY="$ORCHO_LITELLM_KEY" "$venv/bin/litellm" --config "$work/litellm.yaml" \
  --host 127.0.0.1 --port "$port" >"$work/litellm.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 120); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/health/liveliness', timeout=2)" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$proxy_pid" 2>/dev/null; then
    cat "$work/litellm.log"
    echo "FAILED: the LiteLLM proxy exited" >&2
    exit 1
  fi
  sleep 1
done

repo="$work/repo"
mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" config user.name "Orcho Test"
git -C "$repo" config user.email "test@orcho.invalid"
git -C "$repo" config commit.gpgsign false
printf '.orcho/\n' >"$repo/.gitignore"
cat >"$repo/orcho.yaml" <<YAML
schema: 1
name: litellm
advisor:
  base_url: http://127.0.0.1:$port/v1
  model: fake-advisor
  api_key_env: ORCHO_LITELLM_KEY
phases:
  - name: implement
    role: implement
    handoff: { pause: on_rejected, on_exhausted: pause }
supervision:
  plan_approval: false
YAML
cat >"$repo/phase.sh" <<'SH'
#!/bin/sh
case "$ORCHO_INPUT_TEXT" in *"handle empty input"*) touch fixed; exit 0 ;; esac
echo "parse() fails on empty input"
exit 1
SH
chmod +x "$repo/phase.sh"
git -C "$repo" add -A
git -C "$repo" commit -q -m initial

if ! out="$(cd "$repo" && "$orcho" run --in-place --no-interactive --autopilot --phase implement=./phase.sh 2>&1)"; then
  printf '%s\n' "$out"
  cat "$work/litellm.log"
  echo "FAILED: the run did not complete" >&2
  exit 1
fi
printf '%s\n' "$out"
case "$out" in
  *"recommends a retry"*) ;;
  *) echo "FAILED: the autopilot did not retry on the advisor's advice" >&2; exit 1 ;;
esac
[ -f "$repo/fixed" ] || { echo "FAILED: the retry did not get the advisor's feedback" >&2; exit 1; }
echo "the advisor and the autopilot work against LiteLLM's proxy"
