// <run>/finished.json: the trainer's word that the run is complete (its last
// checkpoint is saved). Written by rank 0 at the end of training, removed when
// training starts or resumes. Jobs beside training (evaluate --watch) stop
// once it is there and every checkpoint is scored.
//
//   {"step": 2000, "time": "2026-11-22T09:14:03Z"}
#pragma once
#include <cstdint>
#include <string>

namespace checkpoint {

void mark_finished(const std::string& run_dir, int64_t step);  // atomic (written aside, renamed)
void clear_finished(const std::string& run_dir);
bool is_finished(const std::string& run_dir);

}  // namespace checkpoint
