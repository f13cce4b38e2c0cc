#!/usr/bin/env bash
# mpirun with what this project's machines need: running as root is allowed
# (containers, CI), more ranks than cores are allowed when asked for, and the
# settings below, taken from the environment mpirun starts in, reach the ranks
# on every node: mpirun passes its own environment to the ranks of its own
# node only, the other nodes' ranks get what `-x` names. One more variable:
# `-x NAME` on the command line. (docs/cluster.md#what-reaches-the-other-nodes)
#   scripts/mpirun.sh -np 2 build/bin/trainer --config configs/default.toml
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# When a rank dies, each node's daemon ends the others: SIGCONT, then
# odls_base_sigkill_timeout seconds later SIGTERM, as long again SIGKILL
# (Open MPI 4.1, orte/mca/odls/base/odls_base_default_fns.c; 1 s by default).
# 5 s gives the survivors time to save the last step every rank completed
# (trainer/train/survivor_save.h: they hear the CONT, and after
# dist.peer_lost_after_s of waiting for the lost peer one of them saves)
# before the KILL at 10 s. The cost: a failed job ends ~10 s later on each
# node (mpirun's own node first, then the others': ~20 s). A larger checkpoint
# or a slower file system: set OMPI_MCA_odls_base_sigkill_timeout higher (it
# reaches every node's daemon). Never signal mpirun twice within 5 s (e.g.
# coreutils timeout without --foreground): it then exits at once and the
# ranks die without the grace.
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-5}

# Forwarded to every node: settings that are one value for the whole job.
forwarded=(
  'TRAINER_*'                # the trainer's own (TRAINER_STARTUP_TIMEOUT_S)
  'NCCL_*'                   # NCCL reads all its settings from the environment (NCCL_SOCKET_IFNAME, NCCL_IB_HCA, NCCL_DEBUG)
  'UCX_*'                    # UCX, Open MPI's transport over InfiniBand and RoCE (UCX_TLS, UCX_NET_DEVICES)
  'FI_*'                     # libfabric, under NCCL's OFI network plugin (AWS EFA) and Open MPI's ofi component (FI_PROVIDER)
  'CUDA_*'                   # the CUDA runtime and driver (CUDA_LAUNCH_BLOCKING, CUDA_MODULE_LOADING), but CUDA_VISIBLE_DEVICES
  'CUBLAS_WORKSPACE_CONFIG'  # cuBLAS's workspace; train.deterministic sets :4096:8 only where it is unset
  'TORCH_*'                  # LibTorch (TORCH_SHOW_CPP_STACKTRACES, TORCH_CPP_LOG_LEVEL, TORCH_BLAS_PREFER_CUBLASLT)
  'PYTORCH_*'                # LibTorch's CUDA caching allocator (PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF)
)
# Never forwarded, though they match: each node has its own value.
per_node=(
  CUDA_VISIBLE_DEVICES       # the node's GPUs for this job (Slurm sets it on each node)
  NCCL_HOSTID                # NCCL's name of a host: one value everywhere would make every rank one host's
)
# Not forwarded, and matched by nothing above:
#  - OMPI_* (OMPI_MCA_* included): mpirun already gives every OMPI_* of its
#    environment to every rank (Open MPI 4.1: mpirun(1), "Exported Environment
#    Variables"; orte/mca/schizo/ompi parse_env) and OMPI_MCA_* to the daemons it
#    starts on the other nodes (plm_rsh_pass_environ_mca_params); -x would add nothing;
#  - OMP_NUM_THREADS: a node's cores; the trainer takes each node's own
#    (train.threads = 0), and launch/local.sh sets it per rank when it binds;
#  - SLURM_*, PMIX_*, OMPI_COMM_WORLD_*, HOSTNAME: each node's or each rank's own.
names=()
for name in $(compgen -e); do
  [[ " ${per_node[*]} " == *" $name "* ]] && continue
  for pattern in "${forwarded[@]}"; do
    # shellcheck disable=SC2053  # a pattern, unquoted on purpose
    if [[ $name == $pattern ]]; then names+=("$name"); break; fi
  done
done

# Open MPI refuses a launch that uses both -x and the MCA parameter
# mca_base_env_list (which forwards the same way): where the environment sets
# the parameter, the names join its list instead.
forward=()
if [ -n "${OMPI_MCA_mca_base_env_list:-}" ]; then
  separator=${OMPI_MCA_mca_base_env_list_delimiter:-;}
  for name in "${names[@]}"; do OMPI_MCA_mca_base_env_list+="$separator$name"; done
else
  for name in "${names[@]}"; do forward+=(-x "$name"); done
fi
exec mpirun --oversubscribe "${forward[@]}" "$@"
