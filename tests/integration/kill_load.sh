#!/usr/bin/env bash
# The kill tests under the kind of load a CI machine puts on them: each round starts four kill
# jobs at once (victims 0, 1 and 3 in the middle of 64 MiB broadcasts, and victim 2 in the middle
# of a stream of 64-byte broadcasts), each 4 ranks on emulated nodes of 2, while a fifth process
# pushes TCP traffic through loopback, the interface the rails use. Every survivor of every job
# must report a lanes::Error within the bound; a survivor that aborts (inside UCX or anywhere
# else) fails the round.
#   kill_load.sh KILL_CHECK_PROGRAM [ROUNDS]
set -u
prog=$1 rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
traffic_pid=
pids=()
cleanup() {
  [ -n "$traffic_pid" ] && kill "$traffic_pid" 2>/dev/null && wait "$traffic_pid" 2>/dev/null
  # Jobs still running (this script was interrupted) go first: their session directories are
  # under $work. Each job is a process group of its own.
  for entry in "${pids[@]}"; do kill -TERM -- "-${entry%%:*}" 2>/dev/null; done
  wait
  rm -rf "$work"
}
trap cleanup EXIT

# Loopback TCP traffic for at most $1 seconds: one listener, one writer, on 127.0.0.1 only.
loopback_traffic() {
  exec python3 - "$1" <<'PY'
import socket, sys, threading, time
deadline = time.monotonic() + float(sys.argv[1])
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
def sink():
    conn, _ = srv.accept()
    while conn.recv(1 << 20):
        pass
threading.Thread(target=sink, daemon=True).start()
out = socket.create_connection(srv.getsockname())
chunk = b"x" * (1 << 20)
while time.monotonic() < deadline:
    out.sendall(chunk)
PY
}

declare -A jobs=([victim0]="0 67108864" [victim1]="1 67108864" [victim3]="3 67108864"
                 [small-victim2]="2 64")
declare -A clean=() aborted=() failed=()
for name in "${!jobs[@]}"; do clean[$name]=0 aborted[$name]=0 failed[$name]=0; done

for ((round = 1; round <= rounds; ++round)); do
  loopback_traffic 120 &
  traffic_pid=$!
  pids=()
  for name in "${!jobs[@]}"; do
    read -r victim bytes <<<"${jobs[$name]}"
    # A TMPDIR per job: mpiruns started in the same instant race to create one session directory.
    mkdir -p "$work/tmp-$name"
    TMPDIR=$work/tmp-$name LANES_TEST_SHM_CHECK=0 KILL_CHECK_ARGS="--bytes $bytes" \
      setsid "$here/kill_check.sh" "$prog" 4 2 "$victim" >"$work/$name.log" 2>&1 &
    pids+=("$!:$name")
  done
  for entry in "${pids[@]}"; do
    pid=${entry%%:*} name=${entry#*:}
    if wait "$pid"; then
      clean[$name]=$((clean[$name] + 1))
    elif grep -qE "Assertion|ucs_fatal|Caught signal|backtrace|Aborted" "$work/$name.log"; then
      aborted[$name]=$((aborted[$name] + 1))
      echo "kill_load: round $round $name: a survivor aborted"
      grep -E "kill_check|FAIL" "$work/$name.log" | head -4
      grep -A24 -E "Assertion|Caught signal" "$work/$name.log" | head -30
    else
      failed[$name]=$((failed[$name] + 1))
      echo "kill_load: round $round $name failed"
      tail -20 "$work/$name.log"
    fi
  done
  pids=()
  kill "$traffic_pid" 2>/dev/null
  wait "$traffic_pid" 2>/dev/null
  traffic_pid=
done

bad=0
for name in victim0 victim1 victim3 small-victim2; do
  echo "kill_load: $name: ${clean[$name]} clean, ${aborted[$name]} aborted," \
    "${failed[$name]} other failures in $rounds loaded rounds"
  bad=$((bad + aborted[$name] + failed[$name]))
done
if ls /dev/shm | grep -q '^lanes-'; then echo "FAIL: lanes segments left in /dev/shm"; exit 1; fi
[ "$bad" -eq 0 ]
