// When a peer is lost, one survivor saves the last step that every rank
// completed, from its own replica (docs/DESIGN.md, "A lost node"), so that
// the restart recomputes no step.
//
// Why a survivor's replica is that step: data-parallel ranks each hold the
// whole model and, with the update not sharded, the whole of Adam's state. A
// step changes them only once its collectives have returned, and a
// collective returns only when every rank's contribution has arrived. So
// whenever the training thread waits for its peers, its replica is the state
// after the last step it applied, and every rank has trained that step
// (whether the lost rank applied it too does not matter: the survivor did).
// The survivors need no collective to know it: each knows its own step.
//
// The training thread holds the replica for the loop's duration (Holding) and
// lends it only while it waits for its peers (launch/peer_waits.h:
// RecordedCommunicator and checkpoint::BackgroundSave tell it), but in a
// Keeping scope. When the job ends for a lost peer — the watchdog's timeout, a
// communicator's error, or a signal that the launcher is ending the job (CONT,
// TERM: mpirun's or srun's after a rank died) while the training thread waits
// for its peers and still waits dist.peer_lost_after_s later — the watchdog
// calls save(): it takes the replica (only from a training thread that waits
// for its peers), chooses the writer without a collective (the first survivor
// to create <checkpoints>/.survivor, O_EXCL; the others name it and exit), and
// the writer saves as every checkpoint is saved (checkpoint.h: under a
// temporary name, renamed, `latest` moved last; a second failure meanwhile
// leaves the previous `latest`; a second TERM or USR1 meanwhile is held, as
// during every checkpoint write). It never lends the replica back: the training
// thread waits in done_waiting() until the exit.
//
// Not available, and said at the failure, where a survivor does not hold
// everything the step left: a sharded update (each rank keeps its shard of
// Adam's moments) and a GPU (the host runs a step ahead of the device; its
// update may be queued behind a collective that never ends). The restart
// then resumes from the last checkpoint.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "launch/peer_waits.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/train/preemption.h"

namespace train {

class SurvivorSave : public launch::PeerWaits {
 public:
  using Clock = std::chrono::steady_clock;
  // The replica: its step, and its checkpoint saved in `checkpoints`
  // (returns the directory); both called with the training thread parked in
  // a wait for its peers.
  struct Replica {
    const checkpoint::Checkpoints* checkpoints = nullptr;
    std::function<int64_t()> step;
    std::function<std::string()> write;
  };

  // `peer_lost_after_s`: dist.peer_lost_after_s (0: a signal never means a
  // lost peer).
  // Installs a SIGCONT handler (one SurvivorSave at a time), restored by the destructor.
  SurvivorSave(int rank, double peer_lost_after_s, PreemptionSignals& signals);
  ~SurvivorSave() override;
  SurvivorSave(const SurvivorSave&) = delete;
  SurvivorSave& operator=(const SurvivorSave&) = delete;

  // The training loop's: the replica held by this thread while it lives,
  // but while it waits for its peers.
  class Holding {
   public:
    Holding(SurvivorSave& save, Replica replica);
    ~Holding();
    Holding(const Holding&) = delete;
    Holding& operator=(const Holding&) = delete;

   private:
    SurvivorSave& save_;
  };
  // The training thread's, around what changes the replica after its
  // collectives (validation: the best loss after the validation's
  // allreduce): its waits meanwhile lend nothing.
  class Keeping {
   public:
    explicit Keeping(SurvivorSave& save);
    ~Keeping();
    Keeping(const Keeping&) = delete;
    Keeping& operator=(const Keeping&) = delete;

   private:
    SurvivorSave& save_;
  };
  // Why this rank cannot save the replica (a sharded update, a GPU), said
  // when a peer is lost; instead of Holding.
  void unavailable(std::string why) { unavailable_ = std::move(why); }

  // A signal does not make a wait for lagging peers a lost peer (a
  // preemption's TERM while rank 0 writes a checkpoint); the replica is lent
  // all the same, for a save that the watchdog's timeout or the
  // communicator's error begins.
  void waiting(bool peers_may_lag) override;
  void done_waiting() override;

  // The watchdog, about once a second: why a peer is taken as lost (a
  // termination signal, and the training thread waiting for its peers since
  // before it and peer_lost_after_s after it), "" while not.
  std::string peer_lost(Clock::time_point now);
  // The watchdog, ending the job: the replica saved if this rank can and is
  // the survivor chosen; what happened is logged. Never throws.
  void save();

 private:
  bool is_holder() const { return std::this_thread::get_id() == holder_; }
  void save_replica();  // with the replica taken; may throw

  const int rank_;
  const double peer_lost_after_s_;
  PreemptionSignals& signals_;  // heard; a second signal held during the write
  std::string unavailable_;
  // Who has the replica: the training thread (kHeld; kLent while it waits
  // for its peers), the save (kTaken, for good), or nobody (kNone before
  // the loop, kClosed after it).
  enum State { kNone, kHeld, kLent, kTaken, kClosed };
  static constexpr double kContinueCounts = 30;  // seconds a SIGCONT counts

  std::mutex mutex_;
  std::condition_variable taken_;  // state_ changed
  State state_ = kNone;
  Replica replica_;
  int64_t waiting_since_ = 0;              // Clock ticks the wait began (kLent)
  bool peers_may_lag_ = false;             // of the wait (kLent)
  std::atomic<std::thread::id> holder_{};  // the training thread, while Holding lives
  int keeping_ = 0;                        // Keeping scopes open (the training thread's)
  int64_t continued_seen_ = 0;             // the watchdog's: Clock ticks it saw a SIGCONT
  int64_t signal_seen_ = 0;                // the watchdog's: Clock ticks it first saw TERM/USR1
};

}  // namespace train
