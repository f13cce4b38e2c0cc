// Checkpoints written beside training, by every rank in parallel, one save
// at a time (as torchtitan's async checkpointing and PyTorch DCP's
// async_save, which also write from every rank):
//
//   saver.save(step, part, best)  collective: the save before it finished
//                        (finish()), this rank's snapshot taken
//                        (snapshot.h) and its files started on a thread;
//                        in two: saver.begin(step), the collectives, and
//                        saver.write(part, best), the rest
//   saver.writing()      this rank's files of the save in flight are not yet
//                        on disk (the ranks agree on it in a training step)
//   saver.failed()       this rank's files failed, or (rank 0) the commit did
//   saver.commit()       collective, once every rank's files are written:
//                        rank 0 gathers every rank's checksums or error and
//                        commits on its thread (SHA256SUMS, rename, `latest`
//                        last, pruning, `best`)
//   saver.finish()       collective: the save in flight committed; its
//                        failure thrown on every rank
//
// Only the snapshot stops training; the collectives are made on the
// training thread, at step boundaries, so that they never run beside the
// step's own. A failed write or commit leaves the previous checkpoint the
// `latest` and its error names the step, the directory and the rank. The
// destructor waits for this rank's thread (a failure then is logged, as
// the caller is failing already; the uncommitted directory is a dot-named
// leftover that the next start removes).
//
// Its collectives tell `peer_waits` (a survivor's replica, lent while the
// training thread waits in them: train/survivor_save.h) whether the peers
// may lag: the commit that commit() makes, once the ranks agreed that every
// file is written, waits for their arrival only; beginning a save, and
// finishing one whose files may be in writing, make the other ranks wait
// for rank 0's file system (where the update is not sharded, rank 0 writes
// every file and the others none).
#pragma once
#include <chrono>
#include <future>
#include <string>

#include "launch/peer_waits.h"
#include "launch/ranks.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/snapshot.h"

namespace checkpoint {

class BackgroundSave {
 public:
  // `peer_waits` may be null.
  BackgroundSave(const Checkpoints& checkpoints, const launch::Ranks& ranks,
                 launch::PeerWaits* peer_waits = nullptr)
      : checkpoints_(checkpoints), ranks_(ranks), peer_waits_(peer_waits) {}
  ~BackgroundSave();

  void save(int64_t step, const CheckpointPart& part, bool best);
  void begin(int64_t step);
  void write(const CheckpointPart& part, bool best);
  bool writing() const;
  bool failed() const;
  bool awaiting_commit() const { return awaiting_commit_; }
  void commit();
  void finish();

  BackgroundSave(const BackgroundSave&) = delete;
  BackgroundSave& operator=(const BackgroundSave&) = delete;

 private:
  struct Written {
    std::string sums;   // SHA256SUMS lines of this rank's files
    std::string error;  // or why they could not be written
  };
  void gather_and_commit(bool peers_may_lag);

  const Checkpoints& checkpoints_;
  const launch::Ranks& ranks_;
  launch::PeerWaits* const peer_waits_;
  Snapshot snapshot_;  // read by the write in flight, refilled once it is done
  std::string tmp_;    // the save's temporary directory, rank 0's choice
  int64_t step_ = -1;  // the save begun
  bool best_ = false;
  std::chrono::steady_clock::time_point begun_;  // the save's snapshot began
  bool awaiting_commit_ = false;                 // saved, commit() not yet made
  std::shared_future<Written> writing_;          // this rank's files
  std::shared_future<std::string> committing_;   // rank 0: the commit's error, "" if none
};

}  // namespace checkpoint
