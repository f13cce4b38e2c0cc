# A real single-node Slurm cluster on localhost for the slurm tests (source
# it after tests/script_lib.bash; start it after enter_scratch): munged,
# slurmctld and slurmd from Debian, each with its own state and munge key under
# $work/cluster, their PIDs recorded and stopped by PID (stop_cluster, from the
# test's EXIT trap, so also when it fails).
#
#   install_slurm     # Debian's slurm-wlm and munge if missing; exit 77 (skip) if impossible
#   start_cluster [node names...]  # exports SLURM_CONF; partitions "low" (default,
#                     # preemptible) and "high". With names: one slurmd per name, each
#                     # in a simulated node of its own (tests/multinode/node_shell:
#                     # its hostname, private /tmp and /dev/shm); $work must then be on
#                     # the nodes' shared file system (enter_shared_scratch).
#                     # $slurmd_timeout, when set: SlurmdTimeout (Slurm's 300 s otherwise),
#                     # the seconds until a node that stopped answering is marked DOWN.
#   start_node <name> # a simulated node's slurmd again, after the node was killed
#   submit [sbatch options...] script [args...]   # prints the job id
#   wait_job <job> <state> [seconds]              # fails unless the job ends in <state>

daemons=()  # the PIDs of the daemons this test started

# Skips the test (ctest SKIP_RETURN_CODE 77) where Slurm cannot be installed
# or its daemons cannot run (they need root).
install_slurm() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: a Slurm cluster's daemons (slurmd, munged as user munge) need root"; exit 77
  fi
  command -v slurmctld > /dev/null && command -v munged > /dev/null && return
  bash "$src/scripts/setup.sh" slurm-wlm munge \
    || { echo "SKIP: Slurm (slurm-wlm, munge) could not be installed from Debian"; exit 77; }
}

start_cluster() {
  local dir=$work/cluster node ports nodes=("$@") name i
  node=$(hostname -s)
  mkdir -p "$dir/state" "$dir/spool" "$dir/tmp" "$dir/munge"
  chmod 755 "$work" "$dir"  # munged runs as user munge
  chown munge: "$dir/munge"; chmod 755 "$dir/munge"  # munged: the socket's directory
  setpriv --reuid=munge --regid=munge --init-groups mungekey -c -k "$dir/munge/key"
  ports=($(free_ports $((2 + ${#nodes[@]}))))
  # This machine's line of `slurmd -C` (its CPUs, memory) for each node.
  local hardware; hardware=$(slurmd -C | sed -n '1s/^NodeName=[^ ]* //p')
  local node_lines="NodeName=$node $hardware NodeAddr=127.0.0.1 State=UNKNOWN" tmpfs=$dir/tmp
  if ((${#nodes[@]})); then
    tmpfs=/tmp  # each simulated node's own (PMIx's per-step directories must not collide)
    node_lines=""
    for i in "${!nodes[@]}"; do
      node_lines+="NodeName=${nodes[i]} $hardware NodeAddr=127.0.0.1 Port=${ports[2 + i]} State=UNKNOWN"$'\n'
      mkdir -p "$dir/spool/${nodes[i]}"
    done
  fi
  cat > "$dir/slurm.conf" <<EOF
ClusterName=test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket,cred_expire=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
TmpFS=$tmpfs
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_interval=2,bf_interval=2
DependencyParameters=kill_invalid_depend
KillWait=5
SlurmdTimeout=${slurmd_timeout:-300}
MinJobAge=600
ReturnToService=2
MailProg=/bin/true
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
SlurmctldParameters=preempt_send_user_signal
$node_lines
PartitionName=low Nodes=ALL Default=YES PriorityTier=1 PreemptMode=REQUEUE GraceTime=10 MaxTime=INFINITE State=UP
PartitionName=high Nodes=ALL PriorityTier=2 PreemptMode=OFF MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf

  daemon "$dir/munge/pid" setpriv --reuid=munge --regid=munge --init-groups munged --foreground \
    --socket="$dir/munge/socket" --key-file="$dir/munge/key" --pid-file="$dir/munge/pid" \
    --seed-file="$dir/munge/seed" --log-file="$dir/munge/log"
  within 30 "munge" bash -c "munge -n -S '$dir/munge/socket' | unmunge -S '$dir/munge/socket'"
  daemon "$dir/slurmctld.pid" slurmctld -D -i
  if ((${#nodes[@]})); then
    for name in "${nodes[@]}"; do start_node "$name"; done
  else
    mkdir -p "$dir/spool/$node"
    daemon "$dir/slurmd-$node.pid" slurmd -D
  fi
  within 30 "slurmctld" scontrol ping
  within 30 "the nodes" bash -c "s=\$(sinfo -h -p low -o %T) && [ -n \"\$s\" ] && ! grep -qvx idle <<< \"\$s\""
  echo "slurm cluster up: node(s) ${nodes[*]:-$node}, ports ${ports[*]}, PIDs ${daemons[*]}"
}

# The slurmd of simulated node <name>, in a node of its own: at the cluster's
# start, or again after the node was killed (Slurm takes it back once it
# registers: ReturnToService=2).
start_node() {  # <name>
  local dir=$work/cluster old i
  mkdir -p "$dir/spool/$1"
  old=$(cat "$dir/slurmd-$1.pid" 2> /dev/null || true)
  for i in "${!daemons[@]}"; do  # stop_cluster must not signal a PID reused since
    [ "${daemons[i]}" != "$old" ] || unset "daemons[i]"
  done
  daemons=("${daemons[@]}")
  rm -f "$dir/slurmd-$1.pid"
  NODE_SHELL_KEEP_ENV=1 daemon "$dir/slurmd-$1.pid" \
    bash "$src/tests/multinode/node_shell" "$1" slurmd -D -N "$1"
}

# <count> TCP ports nothing listens on (slurmctld, slurmd, each node's slurmd).
free_ports() {  # <count>
  local found=() port
  while ((${#found[@]} < $1)); do
    port=$((20000 + RANDOM % 30000))
    [[ " ${found[*]} " == *" $port "* ]] && continue
    (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null || found+=("$port")
  done
  echo "${found[*]}"
}

# Starts a daemon in its own session; its PID comes from its pid file.
daemon() {  # <pid file> <command...>
  local pidfile=$1 started; shift
  setsid "$@" >> "$work/cluster/daemons.log" 2>&1 < /dev/null &
  started=$!
  within 30 "$1 to write $pidfile" test -s "$pidfile" -o ! -e "/proc/$started"
  [ -s "$pidfile" ] || fail "$1 did not start" "$work/cluster/daemons.log"
  daemons+=("$(cat "$pidfile")")
}

# Runs <command> every 0.2 s until it succeeds; fails the test after <seconds>.
within() {  # <seconds> <what> <command...>
  local seconds=$1 what=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" > /dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what not ready after $seconds s" "$work/cluster/daemons.log"
    sleep 0.2
  done
}

# Cancels this cluster's jobs, then stops the daemons by PID (slurmd,
# slurmctld, munged), TERM then KILL after 10 s. Shows the daemons' logs on failure.
stop_cluster() {
  local status=$? pid i
  if ((${#daemons[@]} >= 3)); then  # munged, slurmctld, and a slurmd at least
    scancel --full --quiet --user=root 2> /dev/null || true  # this cluster's jobs
    for _ in $(seq 50); do [ -z "$(squeue -h 2> /dev/null)" ] && break; sleep 0.2; done
  fi
  if ((status != 0)) && [ -d "$work/cluster" ]; then
    for log in "$work"/cluster/{slurmctld,slurmd-*,daemons}.log; do
      echo "---- $log"; tail -15 "$log" 2> /dev/null || true
    done
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    pid=${daemons[i]}
    kill -TERM "$pid" 2> /dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2> /dev/null || true
  done
  daemons=()
}

# Submits a batch job from the working directory; prints its id.
submit() {  # [sbatch options...] <script> [args...]
  sbatch --parsable "$@" | cut -d';' -f1
}

# A field of `scontrol show job` (JobState, Restarts, ExitCode, ...).
job_field() {  # <job> <field>
  scontrol show job "$1" | grep -o "\b$2=[^ ]*" | head -1 | cut -d= -f2
}

# Waits until <job> has ended (a state that is not PENDING, RUNNING,
# REQUEUED, ...); fails unless that state is <state>.
wait_job() {  # <job> <state> [seconds, default 300]
  local job=$1 want=$2 deadline=$((SECONDS + ${3:-300})) state
  while :; do
    state=$(job_field "$job" JobState)
    case $state in
      PENDING|CONFIGURING|RUNNING|COMPLETING|REQUEUED|REQUEUE_HOLD|REQUEUE_FED|RESIZING|SUSPENDED|PREEMPTED|SIGNALING|STAGE_OUT) ;;
      "$want") return 0 ;;
      *) fail "job $job ended $state (exit $(job_field "$job" ExitCode)), expected $want" "$(job_field "$job" StdOut)" ;;
    esac
    ((SECONDS < deadline)) || fail "job $job still $state after ${3:-300} s" "$(job_field "$job" StdOut)"
    sleep 0.5
  done
}
