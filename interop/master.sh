#!/usr/bin/env bash
# interop/master.sh [MASTER_SRC]: bcwire serve against a real GameSpy
# master server, 333networks' Masterserver-Qt5 (it lists bcommander with
# the game's key). Not run in CI: it clones and builds a third-party
# repository.
#
# MASTER_SRC is a checkout of https://github.com/333networks/Masterserver-Qt5
# (cloned into a temporary folder when not given). Building it needs Qt 5:
#   apt-get install build-essential qtbase5-dev qt5-qmake libqt5sql5-sqlite
# Everything runs on loopback: the master with uplink and sync turned off,
# its UDP heartbeat port 27900 (checks from 27901) and TCP list port 28900,
# and bcwire serve on 127.0.0.1. Checks, each a row of the table printed
# at the end:
#   1. a server on another port (22150) is listed at that port, and after a
#      player joins (state-change heartbeats) no phantom entry appears at
#      the default port 22101;
#   2. the master's \status\ checks (from its port + 1) are all answered,
#      none dropped as rate-limited; the master stores the server's name;
#   3. a server on the default port 22101 is listed there;
#   4. the master's list, asked for as the game's browser does
#      (go run ./interop/masterlist), shows each.
# KEEP=DIR keeps the master's log and bcwire's logs there.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'pkill -f "$work/run/bin/MasterServer-Qt5"; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp -r "$work"/run/log "$work"/*.log "$KEEP"/ 2>/dev/null; rm -rf "$work"' EXIT

src=${1:-}
if [ -z "$src" ]; then
  src=$work/src
  git clone -q https://github.com/333networks/Masterserver-Qt5 "$src" || { echo "cannot clone the master's source"; exit 2; }
fi
command -v qmake >/dev/null || { echo "qmake not found: apt-get install build-essential qtbase5-dev qt5-qmake libqt5sql5-sqlite"; exit 2; }
echo "== building the master ($(git -C "$src" log -1 --format=%h 2>/dev/null || echo '?'))"
cp -r "$src"/src "$work"/build
(cd "$work"/build && qmake >/dev/null && make -j"$(nproc)" >/dev/null 2>"$work"/build.log) || { cat "$work"/build.log; exit 2; }

mkdir -p "$work"/run/bin "$work"/run/data "$work"/run/log
cp "$work"/build/MasterServer-Qt5 "$work"/run/bin/
cp "$src"/data/SupportedGames.json "$work"/run/data/
# Loopback only: no uplink, no sync with public masters; check servers
# often so the run is short.
cat > "$work"/run/data/MasterServer-Settings.ini <<'EOF'
[PublicDetails]
AdminName=bcwire interop
Contact=nobody@localhost
Hostname=localhost
[Logging]
CycleLogs=never
SuppressLog=
SuppressDisplay=
[BeaconServer]
BeaconPort=27900
DoUplink=false
[ListenServer]
ListenPort=28900
ServerLifeTime_s=1800
[Syncer]
size=0
DoSync=false
SyncGames=all
SyncInterval_s=1800
[Checker]
CycleInterval_s=5
DoCheck=true
GetExtendedInformation=true
ServerCheckInterval_ms=250
[Maintenance]
DoMaintenance=true
MaintainRate_s=60
EOF
echo "== starting the master"
# It asks once whether to create its database: yes.
(cd "$work"/run && echo y | "$work"/run/bin/MasterServer-Qt5 >"$work"/master.log 2>&1) &
sleep 3
grep -q 'listening for TCP' "$work"/master.log || { cat "$work"/master.log; exit 2; }

go build -o "$work"/ ./cmd/bcwire ./cmd/bcwire/bcwire-full || exit 2 # serve runs in bcwire-full
list() { go run ./interop/masterlist -master 127.0.0.1:28900; }
rows=()
row() { rows+=("$(printf '| %s | %s | %s |' "$1" "$2" "$3")"); }

echo "== a server on port 22150, a player joins it"
"$work"/bcwire serve --listen 127.0.0.1:22150 --master 127.0.0.1:27900 --log-level debug --stop-after 40s >"$work"/serve22150.log 2>&1 &
sleep 8
"$work"/bcwire verify --target 127.0.0.1:22150 --mode adaptive --timing asap testdata/pcaps/join.pcap >"$work"/verify.log 2>&1
sleep 8
l=$(list)
echo "$l"
if grep -qx '127.0.0.1:22150' <<<"$l"; then row "listed on another port" pass "127.0.0.1:22150"; else row "listed on another port" FAIL "$(echo $l)"; fi
if grep -qx '127.0.0.1:22101' <<<"$l"; then row "no phantom at 22101 after state-change heartbeats" FAIL "listed 127.0.0.1:22101"; else row "no phantom at 22101 after state-change heartbeats" pass "$(grep -c 'statechanged' "$work"/master.log) state-change heartbeats, each with port 22150"; fi
answered=$(grep -c 'msg=gamespy client=127.0.0.1:27901' "$work"/serve22150.log)
dropped=$(grep -c 'rate-limited.*127.0.0.1:2790\|127.0.0.1:2790.*rate-limited' "$work"/serve22150.log)
if [ "$answered" -gt 0 ] && [ "$dropped" -eq 0 ]; then row "master's checks from port 27901 answered" pass "$answered answered, 0 rate-limited"; else row "master's checks from port 27901 answered" FAIL "$answered answered, $dropped rate-limited"; fi
if grep -q 'hostname\\bcwire native server' "$work"/master.log; then row "master stored the \\status\\ reply" pass "hostname from \\status\\"; else row "master stored the \\status\\ reply" FAIL "no \\status\\ reply in its log"; fi

echo "== a server on the default port 22101"
"$work"/bcwire serve --listen 127.0.0.1:22101 --master 127.0.0.1:27900 --log-level debug --stop-after 30s >"$work"/serve22101.log 2>&1 &
sleep 8
l=$(list)
echo "$l"
if grep -qx '127.0.0.1:22101' <<<"$l"; then row "listed on the default port" pass "127.0.0.1:22101"; else row "listed on the default port" FAIL "$(echo $l)"; fi
if grep -q 'heartbeat\\22101\\gamename\\bcommander\\' "$work"/master.log; then row "stock heartbeat form on 22101" pass '\heartbeat\22101\gamename\bcommander\'; else row "stock heartbeat form on 22101" FAIL "not seen"; fi

echo
echo "| check | result | detail |"
echo "|---|---|---|"
printf '%s\n' "${rows[@]}"
! printf '%s\n' "${rows[@]}" | grep -q FAIL
