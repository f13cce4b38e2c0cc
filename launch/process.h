// Process bootstrap: MPI is the source of truth for rank and world size.
//
//   auto process = launch::Process::init(argc, argv);   // MPI_Init_thread
//   process.info().rank, .world_size, .local_rank, .local_size, .node
//
// Works without mpirun too (an MPI singleton: rank 0 of 1).
#pragma once
#include <string>

namespace launch {

struct ProcessInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // rank among the processes on this node
  int local_size = 1;  // processes on this node
  std::string node;    // host name
};

class Process {
 public:
  static Process& init(int& argc, char**& argv);  // once per program
  const ProcessInfo& info() const { return info_; }
  bool is_main() const { return info_.rank == 0; }

  // Ends every rank of the job (MPI_Abort) after logging why: never a silent hang.
  [[noreturn]] void abort(const std::string& why, int code = 1) const;
  // MPI_Finalize now (otherwise at exit); collective.
  void finalize();

  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

 private:
  Process() = default;
  ProcessInfo info_;
};

}  // namespace launch
