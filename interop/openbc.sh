#!/usr/bin/env bash
# interop/openbc.sh OPENBC_DIR: build an OpenBC checkout
# (https://github.com/SandboxServers/OpenBC) and run bcwire's checks against
# its server: verify joins every session of the bundled captures (adaptive
# mode, asap timing, answering checksums from OpenBC's fixtures manifest),
# and diff compares OpenBC's traffic with the bundled battle capture. Prints
# a table. Loopback only; CI does not run this (it needs OpenBC).
#
# Environment:
#   OPENBC_PORT  UDP port for OpenBC's server (default 23200); the next port
#                is used for OpenBC's own networked-battle test.
#   KEEP         directory to keep the captures and reports in (default: a
#                temporary directory, removed at the end).
#
# Capturing OpenBC's traffic for diff uses 'bcwire live', which needs root
# (or CAP_NET_RAW); without it the diff rows are skipped.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/Makefile" ]; then
	echo "usage: $0 OPENBC_DIR   (a checkout of SandboxServers/OpenBC)" >&2
	exit 2
fi
OBC=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "$0")/.." && pwd)
PORT=${OPENBC_PORT:-23200}
NBPORT=$((PORT + 1))
WORK=${KEEP:-$(mktemp -d)}
mkdir -p "$WORK"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

echo "== building OpenBC $(git -C "$OBC" log -1 --format='%h %cs' 2>/dev/null || echo '(not a git checkout)')"
make -C "$OBC" -j2 >"$WORK/openbc-make.log" 2>&1 || { tail -20 "$WORK/openbc-make.log"; exit 1; }
echo "== building bcwire"
(cd "$REPO" && go build -o "$WORK/" ./cmd/bcwire ./cmd/bcwire/bcwire-full) # live runs in bcwire-full
BC="$WORK/bcwire"
MANIFEST="$OBC/tests/fixtures/manifest.json"

# start_server: a fresh OpenBC server for each capture, so that slots and
# scores left by the previous run do not carry over.
SRV=
start_server() {
	(cd "$OBC" && exec ./build/openbc-server --manifest tests/fixtures/manifest.json -p "$PORT" --no-master \
		--no-log-file -q) >>"$WORK/openbc-server.out" 2>&1 &
	SRV=$!
	PIDS+=("$SRV")
	sleep 1
}
stop_server() {
	kill "$SRV" 2>/dev/null || true
	wait "$SRV" 2>/dev/null || true
}

root=0
[ "$(id -u)" = 0 ] && root=1

# capture FILE PORT: record loopback traffic of PORT into FILE (background).
capture() {
	"$BC" live -i lo --port "$2" -w "$1" >/dev/null 2>"$1.log" &
	CAP=$!
	PIDS+=("$CAP")
	sleep 1
}
stop_capture() {
	sleep 1
	kill -INT "$CAP" 2>/dev/null || true
	wait "$CAP" 2>/dev/null || true
}

# OpenBC refuses a connect from an address within 2 s of that address's
# last disconnect: every run gets addresses of its own.
declare -A SOURCES=(
	[join.pcap]=127.0.0.2
	[duel.pcapng]=127.0.0.3,127.0.0.4
	[battle.pcap]=127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8
)
ROWS=()
for f in join.pcap duel.pcapng battle.pcap; do
	echo "== verify $f (OpenBC's server on 127.0.0.1:$PORT)"
	start_server
	[ "$f" = battle.pcap ] && [ $root = 1 ] && capture "$WORK/openbc-verify-battle.pcapng" "$PORT"
	"$BC" verify --target "127.0.0.1:$PORT" --mode adaptive --timing asap --manifest "$MANIFEST" \
		--source "${SOURCES[$f]}" "$REPO/testdata/pcaps/$f" >"$WORK/verify-$f.txt" 2>&1 || true
	[ "$f" = battle.pcap ] && [ $root = 1 ] && stop_capture
	stop_server
	total=$(grep -E '^[0-9]+ differences|^no differences' "$WORK/verify-$f.txt" || echo "(verify failed: $(tail -1 "$WORK/verify-$f.txt"))")
	joined="$(grep -cE '^session [0-9]+ .*  joined:' "$WORK/verify-$f.txt" || true) of $(grep -cE '^session [0-9]+ ' "$WORK/verify-$f.txt" || true)"
	lines=$(wc -l <"$WORK/verify-$f.txt")
	# The verdict's most severe difference (diff's ranking).
	first=$(grep -m1 -E '^(critical|major) ' "$WORK/verify-$f.txt" | sed 's/  */ /g' | cut -c1-130 || true)
	ROWS+=("verify $f|${joined:-?} sessions joined; $total; $lines lines|${first:-none}")
	echo "   ${joined:-?} joined; $total ($lines lines of text)"
	grep -E '^(critical|major) ' "$WORK/verify-$f.txt" | sed 's/  */ /g' | cut -c1-160 | head -12 | sed 's/^/   /' || true
done

if [ $root = 1 ]; then
	# OpenBC's own headless clients: its networked-battle test, built from
	# a copy with the port moved into ours (the checkout is not modified).
	echo "== OpenBC's networked-battle test on 127.0.0.1:$NBPORT"
	sed "s/^#define NB_PORT .*/#define NB_PORT $NBPORT/" "$OBC/tests/test_networked_battle.c" >"$WORK/nb.c"
	cmd=$(make -s -n -B -C "$OBC" build/tests/test_networked_battle | tail -1)
	cmd=${cmd//tests\/test_networked_battle.c/$WORK/nb.c}
	cmd=${cmd//-o build\/tests\/test_networked_battle/-Itests -o $WORK/nb}
	if (cd "$OBC" && eval "$cmd") >"$WORK/nb-build.log" 2>&1; then
		capture "$WORK/openbc-clients-battle.pcapng" "$NBPORT"
		(cd "$OBC" && timeout 300 "$WORK/nb") >"$WORK/nb.out" 2>&1 || echo "   (the test failed: see $WORK/nb.out)"
		stop_capture
	else
		echo "   (could not build it: see $WORK/nb-build.log)"
	fi
	for c in openbc-verify-battle openbc-clients-battle; do
		[ -s "$WORK/$c.pcapng" ] || continue
		echo "== diff $c.pcapng battle.pcap"
		"$BC" diff "$WORK/$c.pcapng" "$REPO/testdata/pcaps/battle.pcap" >"$WORK/diff-$c.txt" 2>&1 || true
		n=$(grep -m1 -E '^[0-9]+ differences' "$WORK/diff-$c.txt" || true)
		ROWS+=("diff $c|${n:-?}|$(grep -E '^(critical|major) ' "$WORK/diff-$c.txt" | head -1 | sed 's/  */ /g' | cut -c1-110)")
		grep -E '^(critical|major|minor) ' "$WORK/diff-$c.txt" | sed 's/  */ /g' | cut -c1-160 | head -12 | sed 's/^/   /'
	done
else
	ROWS+=("diff|skipped|capturing loopback traffic needs root (bcwire live)")
fi

echo
echo "| check | result | top finding |"
echo "|---|---|---|"
for r in "${ROWS[@]}"; do
	IFS='|' read -r a b c <<<"$r"
	echo "| $a | $b | ${c//|/\\|} |"
done
echo
echo "OpenBC $(git -C "$OBC" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d); reports in $WORK"

if [ -x "$REPO/interop/openbc-tests.sh" ] || [ -f "$REPO/interop/openbc-tests.sh" ]; then
	echo
	echo "== interop/openbc-tests.sh"
	bash "$REPO/interop/openbc-tests.sh" "$OBC"
fi
