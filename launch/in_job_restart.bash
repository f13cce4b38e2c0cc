# In-job restart after a lost node (docs/cluster.md, "A lost node"): sourced by
# launch/local.sh and slurm/train.sh. The trainer's survivors save the last
# step every rank completed before the job ends
# (trainer/train/survivor_save.h); this starts it again, within the same job,
# on the nodes that still answer, and the trainer resumes from that
# checkpoint (--resume latest).
#
# The launcher that sources this defines two functions:
#   job_command <nodes file> <ranks> <unbound>   the command of one run of the
#       job on the nodes of <nodes file> (a hostfile: "node slots=N" a line),
#       into the array `cmd`; <unbound> 1: more ranks than the nodes' slots;
#   probe_command <node>   the command that runs `true` on <node> through the
#       job's own way to start ranks (ssh, srun), into the array `cmd`.
# Its traps set `stopped=1` (no restart after that signal) and pass signals
# on to `$child`, the running job's PID, or hold them in `held_signal` while
# it is "" (between runs).

# The nodes of <nodes file> that answer within 60 s (asked all at once),
# written to <out> with their slots; the others' names on stdout.
reachable_nodes() {  # <nodes file> <out>
  local nodes=$1 out=$2 dir node line
  dir=$(mktemp -d)
  while read -r node line || [ -n "$node" ]; do  # a last line without a newline too
    [ -n "$node" ] && [[ $node != \#* ]] || continue
    printf '%s %s\n' "$node" "$line" > "$dir/$node.host"
    ( probe_command "$node" && timeout -k 10 60 "${cmd[@]}" > /dev/null 2>&1 < /dev/null &&
        touch "$dir/$node.ok" ) &
  done < "$nodes"
  wait
  : > "$out"
  while read -r node line || [ -n "$node" ]; do
    [ -n "$node" ] && [[ $node != \#* ]] || continue
    if [ -e "$dir/$node.ok" ]; then cat "$dir/$node.host" >> "$out"; else echo "$node"; fi
  done < "$nodes"
  rm -rf "$dir"
}

# The slots a hostfile gives (a node without slots= has one).
hostfile_slots() {  # <hostfile>
  awk '$1 !~ /^#/ && NF { n = 1; for (i = 2; i <= NF; i++) if ($i ~ /^slots=/) n = substr($i, 7); s += n }
       END { print s + 0 }' "$1"
}

# Runs the job (job_command) and after a failure (an exit other than 0, 2:
# usage, 75: preempted) starts it again on the nodes of <nodes file> that
# still answer, at most <max restarts> times and while at least <min nodes>
# answer. <ranks>: `same` keeps the number of ranks (placed on the nodes
# left, several to a slot), `slots` takes the slots of the nodes left, at most
# the ranks asked for. A trainer resumes from its latest checkpoint
# (--resume latest appended). Nothing starts, and nothing again, once
# `stopped` is 1; a signal the caller's trap held while no job ran
# (`held_signal`, its name) goes to the job as soon as it starts. Sets
# `lost_nodes` to the nodes found lost after the last failure ("" if none).
# Returns the last exit code (75 when stopped before a start).
run_with_restarts() {  # <nodes file> <ranks> <same|slots> <max restarts> <min nodes> -- PROGRAM ARGS...
  local hostfile=$1 asked=$2 keep=$3 max=$4 min=$5
  shift 6
  local current ranks=$asked restarts=0 code=75 nodes slots failed_at resumed=() unbound=0
  lost_nodes=""
  current=$(mktemp)
  cp "$hostfile" "$current"
  while ((!stopped)); do
    job_command "$current" "$ranks" "$unbound"
    ((!stopped)) || break  # a signal while the command was made
    "${cmd[@]}" "$@" "${resumed[@]}" &
    child=$!
    if [ -n "${held_signal:-}" ]; then kill "-$held_signal" "$child" 2> /dev/null || true; fi
    held_signal=""
    while :; do  # a trapped signal ends `wait` early: wait again until the job is done
      wait "$child" && code=0 || code=$?
      # Ended, and reaped by a `wait` a trap interrupted (which returned
      # 128 + that signal): bash keeps its status for one more `wait`.
      kill -0 "$child" 2> /dev/null || { wait "$child" && code=0 || code=$?; break; }
    done
    child=""
    case $code in 0 | 2 | 75) break ;; esac
    ((!stopped)) || { echo "launch: stopped by a signal: no restart" >&2; break; }
    failed_at=$(date +%s.%N)
    echo "launch: the job failed (exit $code) on the nodes of $current ($(hostfile_slots "$current") slots)" >&2
    lost_nodes=$(reachable_nodes "$current" "$current.live" | paste -sd, -)
    if ((restarts >= max)); then
      echo "launch: no in-job restart left ($restarts of $max made)${lost_nodes:+; lost: $lost_nodes}" >&2
      break
    fi
    nodes=$(grep -c . "$current.live" || true)
    if ((nodes < min)); then
      echo "launch: $nodes node(s) answer${lost_nodes:+ (lost: $lost_nodes)}, fewer than the $min" \
        "required: no restart" >&2
      break
    fi
    mv "$current.live" "$current"
    slots=$(hostfile_slots "$current")
    if [ "$keep" = same ]; then
      ranks=$asked
      unbound=$((ranks > slots))
    else
      ranks=$((asked < slots ? asked : slots))
    fi
    restarts=$((restarts + 1))
    [ "$(basename "$1")" = trainer ] && resumed=(--resume latest)
    echo "launch: restart $restarts of $max on $nodes node(s) ($(awk '{print $1}' "$current" | paste -sd, -))," \
      "$ranks ranks${lost_nodes:+; lost: $lost_nodes}" >&2
    export TRAINER_RESTART="$restarts" TRAINER_RESTART_LOST_NODES="$lost_nodes" \
      TRAINER_RESTART_FAILED_AT="$failed_at" TRAINER_RESTART_EXIT="$code"
  done
  rm -f "$current" "$current.live"
  return "$code"
}
