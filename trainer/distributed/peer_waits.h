// Told when the training thread waits for its peers: in a blocking
// collective, or in wait() on a non-blocking one. While it waits there, the
// rank's replica of the model and optimizer is not being changed (a step
// changes them only after its collectives have returned), so another thread
// may read it whole (train/survivor_save.h). RecordedCommunicator calls these
// around every such wait.
#pragma once

namespace distributed {

class PeerWaits {
 public:
  virtual ~PeerWaits() = default;
  virtual void waiting() = 0;       // the training thread begins to wait for its peers
  virtual void done_waiting() = 0;  // ... and has returned (also by an exception)
};

// waiting() for its lifetime (exception-safe); `waits` may be null.
class WaitingForPeers {
 public:
  explicit WaitingForPeers(PeerWaits* waits) : waits_(waits) {
    if (waits_ != nullptr) waits_->waiting();
  }
  ~WaitingForPeers() {
    if (waits_ != nullptr) waits_->done_waiting();
  }
  WaitingForPeers(const WaitingForPeers&) = delete;
  WaitingForPeers& operator=(const WaitingForPeers&) = delete;

 private:
  PeerWaits* const waits_;
};

}  // namespace distributed
