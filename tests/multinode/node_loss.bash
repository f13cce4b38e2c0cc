# The checks of a run that lost a node (node_loss.sh, slurm_node_loss.sh),
# after the job ended: run <name> (its log <name>.log, its launcher's lines
# in it) against the uninterrupted run runs/reference of $last steps.
# Usage: source after script_lib.bash.

# The job restarted without nodeb with 4 ranks (on nodea alone, or on the
# nodes <left> names), one survivor saved a step past the last periodic
# checkpoint, the job restarted and resumed at exactly that step (0 steps recomputed), and ended
# with the parameters and examples ledger of runs/reference, bit for bit.
# Prints the seconds from <lost at> (date +%s) to the survivor's checkpoint
# and to the first step after the restart (the log's clock, to the second).
survived() {  # <name> <how the node failed> <lost at> [restarts allowed, default 1] [left, default nodea]
  local name=$1 how=$2 lost_at=$3 restarts=${4:-1} left=${5:-nodea} saved mismatch recomputed
  grep -q "launch: restart 1 of $restarts on $(tr , '\n' <<< "$left" | grep -c .) node(s) ($left), 4 ranks; lost: nodeb" \
    "$name.log" || fail "$name: no restart on $left without nodeb" "$name.log"
  # The survivor's step, written by it, or already saved: a loss right after a
  # periodic checkpoint's step leaves that step as the last one completed.
  saved=$(sed -n -e 's/.*survivor checkpoint of step \([0-9]*\) written .* by rank [0-3] on node[a-z].*/\1/p' \
    -e 's/.*no survivor checkpoint needed: step \([0-9]*\) is saved (latest).*/\1/p' "$name.log" | head -1)
  if [ -z "$saved" ]; then  # what the survivors and the launcher said, for the failure's reader
    grep -E "survivor|peer|launch:|resuming from" "$name.log" > "$name.survivors" || true
    fail "$name: no survivor checkpoint written" "$name.survivors"
  fi
  ((saved % 50 != 0)) || echo "($name: nodeb failed right at a periodic checkpoint, step $saved)"
  ((saved < last)) || fail "$name: nodeb failed after the run's last step" "$name.log"
  # Every survivor checkpoint is where the next run resumed.
  mismatch=$(sed -n -e 's/.*survivor checkpoint of step \([0-9]*\) written .*/saved \1/p' \
    -e 's/.*no survivor checkpoint needed: step \([0-9]*\) is saved (latest).*/saved \1/p' \
    -e 's/.*resuming from .*step_0*\([0-9][0-9]*\) .*/resumed \1/p' "$name.log" |
    awk '$1 == "saved" { pending = $2 }
         $1 == "resumed" && pending != "" { if ($2 != pending) print "saved " pending ", resumed " $2; pending = "" }
         END { if (pending != "") print "saved " pending ", no resume after it" }')
  [ -z "$mismatch" ] || fail "$name: $mismatch" "$name.log"
  # Each survivor's last completed step against the writer's, from
  # "rank R (step S): the survivor checkpoint is written by ... (step T)".
  recomputed=$(sed -n 's/.*rank [0-9]* (step \([0-9]*\)): the survivor checkpoint is written by .* (step \([0-9]*\)).*/\1 \2/p' \
    "$name.log" | awk '{ if ($1 - $2 > r) r = $1 - $2 } END { print r + 0 }')
  [ "$recomputed" = 0 ] || fail "$name: $recomputed step(s) recomputed" "$name.log"
  "$python" - "$name" <<'PY' || fail "$name: differs from the uninterrupted run" "$name.log"
import json, sys, torch
name = sys.argv[1]
a = torch.load("runs/reference/checkpoints/latest/model.pt")
b = torch.load(f"runs/{name}/checkpoints/latest/model.pt")
assert all(torch.equal(a[n], b[n]) for n in a), "parameters differ"
sa = json.load(open("runs/reference/checkpoints/latest/state.json"))
sb = json.load(open(f"runs/{name}/checkpoints/latest/state.json"))
assert sa["step"] == sb["step"] == 300, (sa["step"], sb["step"])
assert sa["examples_ledger"] == sb["examples_ledger"], "ledgers differ"
PY
  echo "$name: nodeb lost ($how); survivor saved step $saved, resumed there, 0 steps" \
    "recomputed; final parameters and ledger bitwise the uninterrupted run's"
  # Seconds from the loss to the survivor's checkpoint and to the first step
  # after the restart (the log's clock, to the second; docs/cluster.md).
  awk -v lost=$((lost_at % 86400)) -v name="$name" '
    function at(line) { split(substr(line, 2, 8), t, ":"); return (t[1] * 3600 + t[2] * 60 + t[3] - lost + 86400) % 86400 }
    /survivor checkpoint of step .* written|no survivor checkpoint needed/ { saved = at($0) }
    /resuming from/ { resumed = 1 }
    resumed && /\] step +[0-9]+ \|/ && !first { first = at($0) }
    END { printf "%s: survivor checkpoint %d s after the loss, first step after the restart %d s after\n", name, saved, first }
  ' "$name.log"
}
