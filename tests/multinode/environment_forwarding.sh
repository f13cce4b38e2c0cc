#!/usr/bin/env bash
# What of the launching shell's environment reaches a rank on the second of
# two simulated nodes through scripts/mpirun.sh (mpirun passes its environment
# to its own node's ranks only, the others get what -x names):
#   - the settings of NCCL, UCX, libfabric, CUDA, cuBLAS, LibTorch and the
#     trainer do (NCCL_SOCKET_IFNAME, UCX_TLS, PYTORCH_CUDA_ALLOC_CONF, ...),
#     and OMPI_MCA_* too (mpirun passes those itself);
#   - each node's own do not (CUDA_VISIBLE_DEVICES, NCCL_HOSTID, OMP_NUM_THREADS);
#   - the same where the environment sets Open MPI's mca_base_env_list, which
#     Open MPI refuses to mix with -x.
# No program of the build runs: each rank is a shell that writes what it sees.
# Usage: environment_forwarding.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch multinode-environment
write_hostfile 1 1

# The same value is right on every node: these must reach nodeb.
forwarded=(NCCL_SOCKET_IFNAME=eth7 NCCL_DEBUG=INFO UCX_TLS=rc FI_PROVIDER=efa
  CUDA_LAUNCH_BLOCKING=1 CUBLAS_WORKSPACE_CONFIG=:4096:8 TORCH_SHOW_CPP_STACKTRACES=1
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True TRAINER_PROBE=forwarded
  OMPI_MCA_btl_base_warn_component_unused=0)
# The launching node's own: these must not.
own=(CUDA_VISIBLE_DEVICES=5 NCCL_HOSTID=nodea-only OMP_NUM_THREADS=3)
names=("${forwarded[@]%%=*}" "${own[@]%%=*}" LISTED_PROBE)

# 2 ranks, one a node, each writing "<host> NAME=value ..." (unset: NAME=unset)
# to <its host>.env in the shared working directory.
report='line=$(hostname); for name; do line+=" $name=${!name-unset}"; done
  echo "$line" > "$(hostname).env"'
run_probe() {  # <log> [NAME=value...]: in the launching shell's environment
  log=$1; shift
  rm -f nodea.env nodeb.env
  env "$@" timeout 120 "${mpirun_nodes[@]}" -np 2 bash -c "$report" report "${names[@]}" \
    > "$log" 2>&1
}
saw() {  # <node> <NAME=value...>: the rank on <node> saw each
  local node=$1 pair; shift
  [ -s "$node.env" ] || fail "no report from the rank on $node" "$log"
  for pair; do
    [[ " $(< "$node.env") " == *" $pair "* ]] ||
      fail "the rank on $node did not see $pair; it saw: $(< "$node.env")" "$log"
  done
}

run_probe plain.log "${forwarded[@]}" "${own[@]}" || fail "mpirun over two nodes" plain.log
saw nodea "${forwarded[@]}" "${own[@]}"  # mpirun's own node: its whole environment
saw nodeb "${forwarded[@]}" CUDA_VISIBLE_DEVICES=unset NCCL_HOSTID=unset OMP_NUM_THREADS=unset

run_probe env_list.log "${forwarded[@]}" "${own[@]}" OMPI_MCA_mca_base_env_list=LISTED_PROBE=listed ||
  fail "mpirun with mca_base_env_list set" env_list.log
saw nodeb "${forwarded[@]}" LISTED_PROBE=listed CUDA_VISIBLE_DEVICES=unset NCCL_HOSTID=unset
echo "environment forwarding to the second node: OK"
