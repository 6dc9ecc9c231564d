#!/usr/bin/env bash
# Checkout fingerprints beside git, as whole processes, on trees built here
# (nothing is fetched): the generated repository (28,000 files, 110 MB) and
# a copy of this repository with a populated `target/`. Any further trees
# given as arguments are measured too; they are modified (new files, the
# index written again, `target/` filled), so give copies.
#
#   bash benches/fingerprint-trees.sh [TREE…]
#
# ORCHO_BENCH_TREES names a directory to keep the built trees in between
# runs (default: a new temporary directory); ROUNDS the pairs per case
# (default 15).
set -euo pipefail
cd "$(dirname "$0")/.."

work="${ORCHO_BENCH_TREES:-$(mktemp -d)}"
mkdir -p "$work"
cargo build --quiet --release -p orcho-benches --bin fingerprint-trees
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/fingerprint-trees"

if [ ! -d "$work/generated/.git" ]; then
  rm -rf "$work/generated"
  mkdir -p "$work/generated"
  "$bin" generate "$work/generated"
fi

if [ ! -d "$work/orcho/.git" ]; then
  rm -rf "$work/orcho"
  git clone --quiet --no-hardlinks . "$work/orcho"
  # A build's output: this checkout's own `target/`, linked rather than
  # copied, or a fresh build of the copy when there is none.
  if [ -d "${CARGO_TARGET_DIR:-target}" ]; then
    cp -al "${CARGO_TARGET_DIR:-target}" "$work/orcho/target"
  else
    (cd "$work/orcho" && cargo build --quiet --workspace)
  fi
fi

# Settle the writes of the steps above before anything is timed.
sync
"$bin" compare --rounds "${ROUNDS:-15}" "$work/generated" "$work/orcho" "$@"
