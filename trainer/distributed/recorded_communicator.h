// A communicator that writes every collective of another into a flight
// recorder (flight_recorder.h): started when issued; done when its work's
// test() says so, or when a blocking call or wait() returns on a backend that
// completes on the host (MPI); queued on the device when they return once the
// device has been told to wait (NCCL), until a later collective is seen done
// (one stream runs them in order). What the ring shows is what this rank's
// host knows. Where the host waits for its peers (a blocking call, wait()),
// it tells `waits` (launch/peer_waits.h), if given.
#pragma once
#include "launch/peer_waits.h"
#include "trainer/distributed/communicator.h"
#include "trainer/distributed/flight_recorder.h"

namespace distributed {

class RecordedCommunicator : public Communicator {
 public:
  RecordedCommunicator(std::unique_ptr<Communicator> inner, FlightRecorder& recorder,
                       launch::PeerWaits* waits = nullptr)
      : inner_(std::move(inner)), recorder_(recorder), waits_(waits) {}
  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  const char* backend() const override { return inner_->backend(); }
  void allreduce_sum(torch::Tensor& tensor) override;
  std::unique_ptr<Work> iallreduce_sum(torch::Tensor& tensor) override;
  std::unique_ptr<Work> ireduce_scatter_sum(const torch::Tensor& flat,
                                            torch::Tensor& shard) override;
  std::unique_ptr<Work> iallgather_in_place(torch::Tensor& flat) override;
  void reduce_scatter_sum(const torch::Tensor& flat, torch::Tensor& shard) override;
  void allgather_in_place(torch::Tensor& flat) override;
  void broadcast(torch::Tensor& tensor, int root) override;
  torch::Tensor allgather(const torch::Tensor& local) override;
  void barrier() override;
  void abort() override { inner_->abort(); }
  std::string async_error() override { return inner_->async_error(); }
  bool completes_on_host() const override { return inner_->completes_on_host(); }
  bool needs_progress_polls() const override { return inner_->needs_progress_polls(); }

 private:
  // `call` (a blocking collective) between its start and done.
  template <typename Call>
  void blocking(const char* op, int64_t bytes, Call&& call);
  // What a blocking call's or wait()'s return means for the collective.
  FlightRecorder::State returned() const;
  // `start` (a non-blocking one) recorded, and its work's end.
  template <typename Start>
  std::unique_ptr<Work> nonblocking(const char* op, int64_t bytes, Start&& start);

  std::unique_ptr<Communicator> inner_;
  FlightRecorder& recorder_;
  launch::PeerWaits* const waits_;  // may be null
};

}  // namespace distributed
