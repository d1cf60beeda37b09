#!/usr/bin/env bash
# Slurm: starts munge, slurmctld and slurmd on this host with a minimal configuration in a
# temporary directory (their own ports, sockets, spool and state there; nothing of the host's
# configuration is read or changed), then, under `srun --mpi=pmix -n 4 -O`:
#   - the README's example (built by the suite) at one node and at emulated nodes of 2, every
#     rank ok;
#   - the unmodified MPI test program without and with liblanes_mpi (LD_PRELOAD in the tasks'
#     environment), at one node and at nodes of 2, through interpose_check.sh: every value right,
#     identical checksums, the statistics equal to the program's call counts.
# Stops the daemons by pid and leaves nothing running or in /dev/shm. Skips (77), saying why,
# where Slurm is not installed, where not root, or where the daemons do not come up.
#   slurm_check.sh SOURCE_DIR EXAMPLE INTERPOSE_PROGRAM LIBLANES_MPI
set -u
src=$1 example=$2 interpose=$3 lib=$4
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "slurmd must run as root here"
for b in munged mungekey slurmctld slurmd srun sinfo; do
  command -v "$b" >/dev/null 2>&1 || skip "$b is not installed (scripts/setup.sh installs Slurm and munge)"
done

tmp=$(mktemp -d /tmp/lanes-slurm.XXXXXX)
pids=()  # munged, slurmctld, slurmd
# Step daemons (slurmstepd) detach from slurmd: ours are the ones that were not there before.
stepds_before=" $(pgrep -x slurmstepd | tr '\n' ' ') "
our_stepds() {
  local p
  for p in $(pgrep -x slurmstepd); do [[ "$stepds_before" == *" $p "* ]] || echo "$p"; done
}
stop() {  # pid...: TERM, up to 5 s, then KILL
  local p
  for p in "$@"; do kill "$p" 2>/dev/null; done
  for p in "$@"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
}
cleanup() {
  # Jobs first (their steps end by themselves), then slurmd, slurmctld and munged.
  for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop "${pids[$i]}"; done
  for _ in $(seq 100); do [ -z "$(our_stepds)" ] && break; sleep 0.1; done
  stop $(our_stepds)
  rm -rf "$tmp"
}
trap cleanup EXIT
dump_logs() { tail -n 20 "$tmp"/*.log 2>/dev/null; }

# Two free TCP ports for slurmctld and slurmd.
free_port() {
  local p
  for p in $(shuf -i 20000-29999 -n 50); do
    ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
  return 1
}
ctld_port=$(free_port) && slurmd_port=$(free_port) || skip "no free TCP port"
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))

mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool"
chmod 700 "$tmp/munge"
mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null 2>&1 || skip "mungekey failed"
munged --foreground --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/socket" \
  --pid-file="$tmp/munge/pid" --log-file="$tmp/munge.log" --seed-file="$tmp/munge/seed" \
  >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge/socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge/socket" ] || { dump_logs; skip "munged did not start"; }

host=$(hostname -s)
export SLURM_CONF=$tmp/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=lanes-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=lanes Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
slurmctld -D -i >/dev/null 2>&1 &
pids+=($!)
slurmd -D >/dev/null 2>&1 &
pids+=($!)
up=0
for _ in $(seq 100); do
  case "$(sinfo -h -o %T 2>/dev/null)" in idle*) up=1; break ;; esac
  sleep 0.2
done
[ $up = 1 ] || { dump_logs; skip "slurmctld and slurmd did not come up (node: '$(sinfo -h -o %T 2>&1)')"; }
srun --mpi=list 2>&1 | grep -q pmix || { srun --mpi=list; skip "Slurm has no PMIx plugin"; }
echo "slurm: slurmctld :$ctld_port, slurmd :$slurmd_port, node $host idle"

# run_mpi.sh's interface over srun: NP NODE_SIZE PROGRAM [ARGS], LANES_* passed on (srun
# exports the environment), "-x NAME=VALUE" in MPIRUN_EXTRA set in the tasks' environment only.
cat > "$tmp/run_srun.sh" <<'RUN'
#!/usr/bin/env bash
np=$1 node_size=$2; shift 2
export LANES_RAILS=${LANES_RAILS:-lo} LANES_NODE_SIZE=$node_size
# -O puts 4 tasks on 2 cores: Open MPI must yield when idle (mpirun --oversubscribe does this
# by itself), and its own transports stay on this host.
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
exports=ALL
extra=(${MPIRUN_EXTRA:-})
for ((i = 0; i < ${#extra[@]}; i++)); do
  [ "${extra[$i]}" = -x ] && exports+=",${extra[$((i + 1))]}"
done
before=$(ls /dev/shm | grep -c '^lanes-')
timeout --kill-after=10 300 srun --mpi=pmix -n "$np" -O --export="$exports" "$@"
rc=$?
after=$(ls /dev/shm | grep -c '^lanes-')
[ "$after" -gt "$before" ] && { echo "FAIL: lanes segment(s) left in /dev/shm"; exit 1; }
exit $rc
RUN
chmod +x "$tmp/run_srun.sh"

fail=0
for node_size in 4 2; do
  out=$("$tmp/run_srun.sh" 4 "$node_size" "$example" 2>&1)
  n_ok=$(echo "$out" | grep -c ': ok$')
  nodes=$(echo "$out" | grep -c "of 4 (local rank [0-9], $((4 / node_size)) nodes): ok$")
  echo "srun --mpi=pmix -n 4 -O example (LANES_NODE_SIZE=$node_size): $n_ok of 4 ranks ok"
  [ "$n_ok" = 4 ] && [ "$nodes" = 4 ] || { echo "$out"; echo "FAIL: README example under srun"; fail=1; }
  LANES_TEST_RUN=$tmp/run_srun.sh "$src/tests/mpi/interpose_check.sh" 4 "$node_size" \
    "$interpose" "$lib" || { echo "FAIL: liblanes_mpi under srun (LANES_NODE_SIZE=$node_size)"; fail=1; }
done
[ $fail = 0 ] || dump_logs
exit $fail
