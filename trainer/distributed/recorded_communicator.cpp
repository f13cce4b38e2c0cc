#include "trainer/distributed/recorded_communicator.h"

namespace distributed {

namespace {

int64_t bytes_of(const torch::Tensor& t) {
  return t.numel() * static_cast<int64_t>(t.element_size());
}

class RecordedWork : public Work {
 public:
  RecordedWork(std::unique_ptr<Work> inner, FlightRecorder& recorder, launch::PeerWaits* waits,
               uint64_t seq, FlightRecorder::State on_wait)
      : inner_(std::move(inner)),
        recorder_(recorder),
        waits_(waits),
        seq_(seq),
        on_wait_(on_wait) {}
  bool test() override {
    const bool done = inner_->test();
    if (done) recorder_.finish(seq_, FlightRecorder::kDone);
    return done;
  }
  void wait() override {
    {
      launch::WaitingForPeers waiting(waits_);
      inner_->wait();
    }
    recorder_.finish(seq_, on_wait_);
  }

 private:
  std::unique_ptr<Work> inner_;
  FlightRecorder& recorder_;
  launch::PeerWaits* const waits_;
  const uint64_t seq_;
  const FlightRecorder::State on_wait_;
};

}  // namespace

template <typename Call>
void RecordedCommunicator::blocking(const char* op, int64_t bytes, Call&& call) {
  const uint64_t seq = recorder_.start(op, bytes);
  {
    launch::WaitingForPeers waiting(waits_);
    call();
  }
  recorder_.finish(seq, returned());
}

FlightRecorder::State RecordedCommunicator::returned() const {
  return inner_->completes_on_host() ? FlightRecorder::kDone : FlightRecorder::kQueuedOnDevice;
}

template <typename Start>
std::unique_ptr<Work> RecordedCommunicator::nonblocking(const char* op, int64_t bytes,
                                                        Start&& start) {
  const uint64_t seq = recorder_.start(op, bytes);
  return std::make_unique<RecordedWork>(start(), recorder_, waits_, seq, returned());
}

void RecordedCommunicator::allreduce_sum(torch::Tensor& tensor) {
  blocking("allreduce", bytes_of(tensor), [&] { inner_->allreduce_sum(tensor); });
}

std::unique_ptr<Work> RecordedCommunicator::iallreduce_sum(torch::Tensor& tensor) {
  return nonblocking("allreduce", bytes_of(tensor), [&] { return inner_->iallreduce_sum(tensor); });
}

std::unique_ptr<Work> RecordedCommunicator::ireduce_scatter_sum(const torch::Tensor& flat,
                                                                torch::Tensor& shard) {
  return nonblocking("reduce-scatter", bytes_of(flat),
                     [&] { return inner_->ireduce_scatter_sum(flat, shard); });
}

std::unique_ptr<Work> RecordedCommunicator::iallgather_in_place(torch::Tensor& flat) {
  return nonblocking("allgather", bytes_of(flat),
                     [&] { return inner_->iallgather_in_place(flat); });
}

void RecordedCommunicator::reduce_scatter_sum(const torch::Tensor& flat, torch::Tensor& shard) {
  blocking("reduce-scatter", bytes_of(flat), [&] { inner_->reduce_scatter_sum(flat, shard); });
}

void RecordedCommunicator::allgather_in_place(torch::Tensor& flat) {
  blocking("allgather", bytes_of(flat), [&] { inner_->allgather_in_place(flat); });
}

void RecordedCommunicator::broadcast(torch::Tensor& tensor, int root) {
  blocking("broadcast", bytes_of(tensor), [&] { inner_->broadcast(tensor, root); });
}

torch::Tensor RecordedCommunicator::allgather(const torch::Tensor& local) {
  torch::Tensor out;
  blocking("allgather", bytes_of(local) * world_size(), [&] { out = inner_->allgather(local); });
  return out;
}

void RecordedCommunicator::barrier() {
  blocking("barrier", 0, [&] { inner_->barrier(); });
}

}  // namespace distributed
