#!/usr/bin/env bash
# openbc-tests.sh OPENBC_DIR: run OpenBC's networked test binaries
# (test_gamespy, test_join_flow, test_opcode_coverage) against
# `bcwire serve --accept-legacy-framing` instead of OpenBC's own server, and
# print a pass/fail table per test.
#
# OPENBC_DIR is a clone of OpenBC's public repository (never a checkout you
# care about: the script builds it). The script:
#   1. builds the checkout (make) and bcwire (go build);
#   2. moves build/openbc-server aside (build/openbc-server.real) and
#      installs a wrapper in its place that maps OpenBC's server flags onto
#      `bcwire serve`: -p PORT becomes --listen 127.0.0.1:PORT, --master
#      HOST:PORT is passed through, and the flags bcwire has no use for
#      (--manifest, --log-file, --no-master, -v/-vv, --log-level, ...) are
#      dropped. The real server is put back when the script exits;
#   3. builds the three test binaries, with their hard-coded UDP ports moved
#      to OPENBC_PORT_BASE and up when that is set (copies of the test
#      sources in a temporary directory; the assertions are untouched), and
#      runs each from OPENBC_DIR, as OpenBC's Makefile does.
#
# Environment: BCWIRE (a bcwire binary, bcwire-full beside it; default: built from this
# repository), OPENBC_PORT_BASE (default: the tests' own ports),
# KEEP_LOGS=1 (keep the temporary directory with the server and test logs).
# Exit status: 0 when every test binary passed, 1 when one failed, 2 on a
# usage or build error.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/Makefile" ]; then
  echo "usage: $0 OPENBC_DIR   (a clone of OpenBC with its Makefile)" >&2
  exit 2
fi
openbc=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
tests=(test_gamespy test_join_flow test_opcode_coverage)

restore() {
  if [ -f "$openbc/build/openbc-server.real" ]; then
    mv -f "$openbc/build/openbc-server.real" "$openbc/build/openbc-server"
  fi
  if [ "${KEEP_LOGS:-}" = 1 ]; then
    echo "logs kept in $work" >&2
  else
    rm -rf "$work"
  fi
}
trap restore EXIT

echo "== building OpenBC ($openbc)" >&2
make -C "$openbc" -j2 >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 2; }
commit=$(git -C "$openbc" log -1 --format=%h 2>/dev/null || echo unknown)

bcwire=${BCWIRE:-}
if [ -z "$bcwire" ]; then
  echo "== building bcwire" >&2
  bcwire="$work/bcwire"
  (cd "$repo" && go build -o "$work/" ./cmd/bcwire ./cmd/bcwire/bcwire-full) || exit 2 # serve runs in bcwire-full
fi

echo "== building the test binaries" >&2
mkdir -p "$work/src" "$work/bin"
i=0
for t in "${tests[@]}"; do
  src="$work/src/$t.c"
  cp "$openbc/tests/$t.c" "$src"
  if [ -n "${OPENBC_PORT_BASE:-}" ]; then
    # Every "#define NAME_PORT NNNNN" gets the next port from the base.
    first=$(( OPENBC_PORT_BASE + 10 * i )) perl -i -pe \
      'BEGIN { $p = $ENV{first} } s/^(#define\s+\w*PORT\s+)\d{4,5}\b/$1 . $p++/e' "$src"
  fi
  i=$(( i + 1 ))
  # The compile command OpenBC's Makefile uses for this test, with the
  # source and output swapped for ours.
  rm -f "$openbc/build/tests/$t"
  cmd=$(make -C "$openbc" -n "build/tests/$t" | grep -E "^(cc|gcc|clang).* -o build/tests/$t ")
  cmd=${cmd/" -o build/tests/$t "/" -o $work/bin/$t "}
  cmd=${cmd/" tests/$t.c "/" $src "}
  (cd "$openbc" && eval "$cmd -Itests") >"$work/cc-$t.log" 2>&1 || { cat "$work/cc-$t.log" >&2; exit 2; }
done

echo "== installing the bcwire wrapper as build/openbc-server" >&2
mv -f "$openbc/build/openbc-server" "$openbc/build/openbc-server.real"
cat >"$openbc/build/openbc-server" <<EOF
#!/bin/sh
# bcwire interop wrapper (interop/openbc-tests.sh): OpenBC's server flags
# mapped onto bcwire serve. The real server is build/openbc-server.real.
port=22101
masters=""
while [ \$# -gt 0 ]; do
  case "\$1" in
    -p) port=\$2; shift 2 ;;
    --master) masters="\$masters --master \$2"; shift 2 ;;
    --manifest|--log-file|--log-level|--config|--data|-n|-m|--system|--max|--time-limit|--frag-limit)
      shift 2 ;;   # bcwire serve accepts every client and logs to stderr
    *) shift ;;    # -v, -vv, -q, --no-master, --no-log-file, --collision, ...
  esac
done
exec "$bcwire" serve --accept-legacy-framing --listen "127.0.0.1:\$port" \$masters \\
  --log-level debug 2>>"$work/bcwire-\$port.log"
EOF
chmod +x "$openbc/build/openbc-server"

# Tests whose assertion is OpenBC behaviour the stock server does not have
# (README, "Interop with OpenBC"): a failure there is expected.
declare -A stock_differs=(
  [join_sends_delete_player_ui_to_self]="stock's join-time 0x17 targets the player-list object 0x64F+slot, not the ship id (stock bytes 17 66 08 00 00 F1 00 80 00 00 00 00 00 4F 06 00 00 02)"
  [join_sends_delete_player_ui_to_others]="stock sends the join-time 0x17 to the joiner only (stock 2-player trace: DeletePlayerUI 3 = MISSION_INIT 3)"
  [graceful_disconnect_removes_peer]="stock sends no DestroyObject when a player leaves (stock 2-player trace: DeletePlayerAnim 1, DestroyObject 0 server to client)"
)

echo "== running" >&2
unexpected=0
rows=()
for t in "${tests[@]}"; do
  log="$work/$t.log"
  (cd "$openbc" && timeout 300 "$work/bin/$t") >"$log" 2>&1 || true
  # Each test prints "  [N] name... ok" or "  [N] name... FAIL" and then
  # "    file:line: assertion" lines.
  while IFS=$'\t' read -r name result why; do
    if [ "$result" = FAIL ]; then
      if [ -n "${stock_differs[$name]:-}" ]; then
        result="FAIL (expected)"
        why="${stock_differs[$name]}; assertion $why"
      else
        unexpected=1
      fi
    fi
    rows+=("$t"$'\t'"$name"$'\t'"$result"$'\t'"$why")
  done < <(awk '
    function out() { if (name != "") printf "%s\t%s\t%s\n", name, res, why }
    /^  \[[0-9]+\] .*\.\.\. / {
      out(); name = $2; sub(/\.\.\..*/, "", name); res = ($NF == "ok") ? "PASS" : "FAIL"; why = ""; next }
    /^    .*:[0-9]+: / && name != "" && why == "" { w = $0; sub(/^ +[^ ]*\//, "", w); why = w }
    END { out() }' "$log")
done

echo
echo "OpenBC $commit, $(date -u +%Y-%m-%d), bcwire serve --accept-legacy-framing"
printf '%-22s %-40s %s\n' binary test result
for r in "${rows[@]}"; do
  IFS=$'\t' read -r bin name result why <<<"$r"
  printf '%-22s %-40s %s\n' "$bin" "$name" "$result"
  if [ -n "$why" ]; then printf '%-22s %-40s   %s\n' "" "" "$why"; fi
done
exit $unexpected
