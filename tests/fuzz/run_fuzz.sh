#!/bin/sh
# run_fuzz.sh FUZZER SECONDS ARTIFACT_DIR REGRESSION_DIR SEED_DIR...
#
# Replays every committed crash reproducer of the target (each one must now
# pass), then fuzzes for SECONDS from the seed corpora. New corpus entries go
# to a temporary directory, never into the source tree; a crash is kept in
# ARTIFACT_DIR for minimising (see README.md).
set -eu
fuzzer=$1 seconds=$2 artifacts=$3 regressions=$4
shift 4

if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
	echo "replaying $(ls -A "$regressions" | wc -l) regression input(s) from $regressions"
	# libFuzzer runs each file given as an argument once.
	find "$regressions" -type f -print0 | xargs -0 "$fuzzer" -rss_limit_mb=1024 -timeout=10 -error_exitcode=1 -timeout_exitcode=1
fi

mkdir -p "$artifacts"
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
# -timeout: a single input taking 10 s is a hang; -max_len: whatever the
# biggest seed, inputs stay below 16 KiB: larger ones only slow the search.
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 -error_exitcode=1 -timeout_exitcode=1 -max_len=16384 \
	-print_final_stats=1 -artifact_prefix="$artifacts/" "$work" "$@"
