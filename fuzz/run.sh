#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 30) each on the nightly
# toolchain, from its seed corpus; a crash, a timeout or an out-of-memory
# input fails the run and is kept under fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-30}"
targets=(profile phase_output hook receipt journal permissions shell_words git_output mcp_arguments store_documents attestations base_judgement)
cargo +nightly fuzz build --release
for target in "${targets[@]}"; do
  # A working copy of the seeds: what the run adds is not committed.
  work="target/corpus/$target"
  mkdir -p "$work"
  cp -n corpus/"$target"/* "$work"/ 2>/dev/null || true
  echo "==> fuzz $target for ${seconds}s"
  cargo +nightly fuzz run --release "$target" "$work" -- \
    -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 2>&1 \
    | grep -E "^stat::number_of_executed_units|^==|Done|ERROR|SUMMARY|Test unit written|panicked" || true
  if [ -n "$(find "artifacts/$target" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) 2>/dev/null)" ]; then
    echo "fuzz target $target found an input it fails on: fuzz/artifacts/$target/" >&2
    exit 1
  fi
done
