#!/usr/bin/env bash
# The independent implementation the interop test checks Orcho against:
# securesystemslib (DSSE, with `cryptography` for Ed25519) and the in-toto
# attestation package (the Statement and test-result definitions), pinned,
# in a virtual environment under the target directory (reused when there).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$CARGO_TARGET_DIR/attest-venv"
if ! "$venv/bin/python" -c 'import securesystemslib, in_toto_attestation, cryptography' >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    'securesystemslib[crypto]==1.6.0' 'in-toto-attestation==0.9.3'
fi
echo "$venv/bin/python"
