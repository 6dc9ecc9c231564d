#!/usr/bin/env bash
# `orcho mcp` against a third-party client: the official Python MCP SDK.
#
# Builds the `orcho` binary, keeps a virtual environment with the SDK under
# the target directory (reused when present), creates a temporary git
# repository and runs client.py against it. Exits non-zero on any failed
# check.
set -euo pipefail
cd "$(dirname "$0")/../../.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# The SDK line this client is written for; 1.x supports Python 3.10+.
MCP_REQUIREMENT="mcp>=1.30,<2"

cargo build -p orcho-cli --bin orcho
orcho="$CARGO_TARGET_DIR/debug/orcho"

venv="$CARGO_TARGET_DIR/mcp-venv"
if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$MCP_REQUIREMENT"
fi

repo="$(mktemp -d)"
# The receipt key lives outside the checkout, in a data directory of its own.
XDG_DATA_HOME="$(mktemp -d)"
export XDG_DATA_HOME
trap 'rm -rf "$repo" "$XDG_DATA_HOME"' EXIT
git -C "$repo" init -q
git -C "$repo" config user.name "Orcho Test"
git -C "$repo" config user.email "test@orcho.invalid"
git -C "$repo" config commit.gpgsign false
printf '.orcho/\n' >"$repo/.gitignore"
cat >"$repo/orcho.yaml" <<'YAML'
schema: 1
name: mcp-test
description: A review that pauses on rejection.
phases:
  - name: review
    role: review
    max_attempts: 1
    handoff:
      pause: on_rejected
      on_exhausted: pause
YAML
cat >"$repo/correcting.yaml" <<'YAML'
schema: 1
name: mcp-correcting
description: Implement, then a final acceptance that rejects until `fixed` exists.
phases:
  - name: implement
    role: implement
  - name: final_acceptance
    role: final_acceptance
    handoff:
      pause: on_rejected
      on_exhausted: pause
      actions: [continue_with_waiver, retry_feedback, halt]
supervision:
  plan_approval: false
YAML
git -C "$repo" add .gitignore orcho.yaml correcting.yaml
git -C "$repo" commit -q -m initial

"$venv/bin/python" orcho-cli/tests/mcp/client.py "$orcho" "$repo"
