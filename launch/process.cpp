#include "launch/process.h"

#include <mpi.h>

#include <memory>

#include "base/logging.h"

namespace launch {

namespace {
std::unique_ptr<Process> g_process;
}

Process& Process::init(int& argc, char**& argv) {
  if (g_process) return *g_process;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  g_process.reset(new Process());
  ProcessInfo& info = g_process->info_;
  MPI_Comm_rank(MPI_COMM_WORLD, &info.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &info.world_size);

  // Ranks sharing memory are on the same node: that gives the local rank.
  MPI_Comm node_comm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, info.rank, MPI_INFO_NULL, &node_comm);
  MPI_Comm_rank(node_comm, &info.local_rank);
  MPI_Comm_size(node_comm, &info.local_size);
  MPI_Comm_free(&node_comm);

  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  info.node.assign(name, length);
  return *g_process;
}

void Process::abort(const std::string& why, int code) const {
  logging::critical("rank {} of {} on {} aborts the job: {}", info_.rank, info_.world_size,
                    info_.node, why);
  logging::flush();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this satisfies [[noreturn]]
}

void Process::finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

Process::~Process() { finalize(); }

}  // namespace launch
