// Told when the training thread waits for its peers: in a blocking
// collective, or in wait() on a non-blocking one. While it waits there, the
// rank's replica of the model and optimizer is not being changed (a step
// changes them only after its collectives have returned), so another thread
// may read it whole (train/survivor_save.h). RecordedCommunicator calls these
// around every such wait, checkpoint::BackgroundSave around its collectives.
#pragma once

namespace launch {

class PeerWaits {
 public:
  virtual ~PeerWaits() = default;
  // The training thread begins to wait for its peers; `peers_may_lag`: they
  // may be far behind it without being lost (writing a checkpoint's files).
  virtual void waiting(bool peers_may_lag) = 0;
  virtual void done_waiting() = 0;  // ... and has returned (also by an exception)
};

// waiting() for its lifetime (exception-safe); `waits` may be null.
class WaitingForPeers {
 public:
  explicit WaitingForPeers(PeerWaits* waits, bool peers_may_lag = false) : waits_(waits) {
    if (waits_ != nullptr) waits_->waiting(peers_may_lag);
  }
  ~WaitingForPeers() {
    if (waits_ != nullptr) waits_->done_waiting();
  }
  WaitingForPeers(const WaitingForPeers&) = delete;
  WaitingForPeers& operator=(const WaitingForPeers&) = delete;

 private:
  PeerWaits* const waits_;
};

}  // namespace launch
