#!/usr/bin/env bash
# Checks that a refactoring changed no output: runs decode, decode -V,
# decode --json, stats, stats --json and timeline of every bundled capture
# with two bcwire binaries and compares standard output, standard error and
# the exit status byte for byte.
#
#   bench/same-output.sh BASE_COMMIT      (builds both: BASE_COMMIT and the work tree)
#   BASE_BIN=/path/to/bcwire bench/same-output.sh
#
# Prints one line per difference and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -z "${BASE_BIN:-}" ]; then
  base=${1:?usage: bench/same-output.sh BASE_COMMIT}
  git worktree add -q --detach "$WORK/base" "$base"
  (cd "$WORK/base" && go build -o "$WORK/base-bcwire" ./cmd/bcwire)
  git worktree remove --force "$WORK/base"
  BASE_BIN="$WORK/base-bcwire"
fi
go build -o "$WORK/new-bcwire" ./cmd/bcwire

captures=$(ls testdata/pcaps/*.pcap testdata/pcaps/*.pcapng testdata/openbc/*.pcap dissect/capture/testdata/tracelog/*.log* 2>/dev/null || true)
diffs=0 runs=0
for f in $captures; do
  for args in "decode" "decode -V" "decode --json" "stats" "stats --json" "timeline"; do
    for side in base new; do
      bin="$BASE_BIN"; [ $side = new ] && bin="$WORK/new-bcwire"
      set +e
      # shellcheck disable=SC2086
      "$bin" $args "$f" >"$WORK/$side.out" 2>"$WORK/$side.err"
      echo $? >"$WORK/$side.rc"
      set -e
    done
    runs=$((runs + 1))
    for part in out err rc; do
      if ! cmp -s "$WORK/base.$part" "$WORK/new.$part"; then
        echo "DIFFERS ($part): bcwire $args $f"
        diffs=$((diffs + 1))
      fi
    done
  done
done
echo "$runs runs on $(echo "$captures" | wc -w) captures, $diffs differences"
[ "$diffs" -eq 0 ]
