// What launch/local.sh tells a trainer it starts again within the same job
// after a failure (launch/in_job_restart.bash): the restart's number, the
// nodes it lost, the failed run's exit code and when it ended.
//   TRAINER_RESTART=1 TRAINER_RESTART_LOST_NODES=nodeb
//   TRAINER_RESTART_EXIT=137 TRAINER_RESTART_FAILED_AT=<seconds since 1970>
#pragma once
#include <optional>
#include <string>

namespace launch {

struct Restart {
  int number = 0;          // 1 for the first restart of the job
  std::string lost_nodes;  // comma-separated; empty: every node still answered
  int failed_exit = 0;     // the failed run's exit code
  double failed_at = 0;    // when it ended, seconds since 1970 (UTC)
};

// The restart the environment describes; none without TRAINER_RESTART.
// Throws naming the variable that is not a number.
std::optional<Restart> restart_from_environment();

}  // namespace launch
