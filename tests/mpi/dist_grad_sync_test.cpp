// Collectives and gradient synchronisation across real MPI ranks
// (ctest runs this program under mpirun with 3 ranks).
//
// Reference values are hand-computed: each rank contributes integers known
// from its rank, so every sum is exact and the expected result is a formula.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "tests/mpi/linear_problem.h"
#include "tests/mpi/mpi_test_ranks.h"
#include "trainer/distributed/consistency.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/distributed/mpi_communicator.h"
#include "trainer/model/masks.h"
#include "trainer/model/transformer.h"

namespace {

TEST(MpiCommunicator, AllreduceSumsEveryDtype) {
  for (auto dtype : {torch::kFloat, torch::kDouble, torch::kLong, torch::kInt}) {
    torch::Tensor t = (torch::arange(10) * (rank() + 1)).to(dtype);
    comm().allreduce_sum(t);
    EXPECT_TRUE(torch::equal(t, (torch::arange(10) * rank_sum()).to(dtype))) << dtype;
  }
}

TEST(MpiCommunicator, NonBlockingAllreduceCompletesOnWait) {
  torch::Tensor t = torch::full({1000}, rank() + 1.0);
  auto work = comm().iallreduce_sum(t);
  work->wait();
  EXPECT_TRUE(work->test());
  EXPECT_TRUE(torch::equal(t, torch::full({1000}, rank_sum())));
}

TEST(MpiCommunicator, BroadcastAndAllgather) {
  torch::Tensor t = torch::full({2, 3}, static_cast<double>(rank()));
  comm().broadcast(t, world() - 1);
  EXPECT_TRUE(torch::equal(t, torch::full({2, 3}, world() - 1.0)));

  const torch::Tensor all = comm().allgather(torch::full({2}, static_cast<int64_t>(rank() * 10)));
  ASSERT_EQ(all.sizes(), (std::vector<int64_t>{world(), 2}));
  for (int r = 0; r < world(); ++r) EXPECT_EQ(all[r][1].item<int64_t>(), r * 10);
}

TEST(MpiCommunicator, RefusesWhatMpiCannotSend) {
  torch::Tensor strided = torch::zeros({4, 4}).t();
  EXPECT_THROW(comm().allreduce_sum(strided), std::invalid_argument);
  torch::Tensor half = torch::zeros({4}, torch::kHalf);
  EXPECT_THROW(comm().allreduce_sum(half), std::invalid_argument);
}

// Both forms: MPI's non-blocking calls and the blocking rings (with 3 ranks,
// every ring step runs).
TEST(MpiCommunicator, ReduceScatterAndAllgatherInPlace) {
  const int64_t n = 5;
  const torch::Tensor expected =
      torch::arange(rank() * n, (rank() + 1) * n).to(torch::kFloat) * rank_sum();
  for (bool blocking : {true, false}) {
    torch::Tensor flat = torch::arange(world() * n).to(torch::kFloat) * (rank() + 1);
    torch::Tensor shard = torch::empty({n});
    if (blocking)
      comm().reduce_scatter_sum(flat, shard);
    else
      comm().ireduce_scatter_sum(flat, shard)->wait();
    EXPECT_TRUE(torch::equal(shard, expected)) << "blocking " << blocking;

    torch::Tensor gathered = torch::full({world() * 4}, -1.0);
    gathered.narrow(0, rank() * 4, 4).fill_(rank() + 1.0);
    if (blocking)
      comm().allgather_in_place(gathered);
    else
      comm().iallgather_in_place(gathered)->wait();
    EXPECT_TRUE(torch::equal(gathered,
                             torch::arange(1, world() + 1).to(torch::kFloat).repeat_interleave(4)))
        << "blocking " << blocking;
  }

  if (world() > 1) {  // shards must be equal
    torch::Tensor uneven = torch::zeros({world() * 4 + 1});
    EXPECT_THROW(comm().iallgather_in_place(uneven), std::invalid_argument);
  }
}

TEST(GradSync, BucketsTakeParametersInReverseOrderUpToTheCap) {
  LinearProblem problem;
  distributed::GradSync sync(problem.params, comm(), options(64, true));  // 16 floats
  const auto layout = sync.bucket_layout();
  std::vector<size_t> order;
  for (const auto& bucket : layout) {
    int64_t bytes = 0;
    for (size_t k = 0; k < bucket.size(); ++k) {
      order.push_back(bucket[k]);
      if (k + 1 < bucket.size()) bytes += problem.params[bucket[k]].numel() * 4;
    }
    EXPECT_LT(bytes, 64) << "a bucket kept filling past the cap";
  }
  EXPECT_EQ(order, (std::vector<size_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_GT(layout.size(), 1u);
}

// Overlap on or off, small or large buckets: the gradient is the sum over
// ranks, exactly; with overlap some buckets start during backward.
TEST(GradSync, SumsGradientsOverRanksWithAndWithoutOverlap) {
  for (bool overlap : {true, false}) {
    for (int64_t bucket_bytes : {16, 64, 1 << 20}) {
      LinearProblem problem;
      distributed::GradSync sync(problem.params, comm(), options(bucket_bytes, overlap));
      sync.zero_grad();
      sync.prepare(/*last=*/true);
      problem.backward(0, problem.all());
      sync.synchronize();
      for (size_t i = 0; i < problem.params.size(); ++i) {
        torch::Tensor expected = torch::zeros_like(problem.params[i]);
        for (int r = 0; r < world(); ++r) expected += problem.coefficient(i, r, 0);
        EXPECT_TRUE(torch::equal(problem.params[i].grad(), expected))
            << "param " << i << " overlap " << overlap << " bucket " << bucket_bytes;
      }
      if (overlap)
        EXPECT_GT(sync.stats().started_in_backward, 0);
      else
        EXPECT_EQ(sync.stats().started_in_backward, 0);
    }
  }
}

// Accumulation: earlier micro-batches only add up locally; a parameter
// without a gradient this step is zero (not the last step's), and a rank whose
// last micro-batch is empty changes nothing and does not deadlock.
TEST(GradSync, AccumulatesAndToleratesEmptyMicroBatchesAndUnusedParameters) {
  LinearProblem problem;
  distributed::GradSync sync(problem.params, comm(), options(32, true));
  const int empty_rank = world() - 1;  // its second micro-batch is empty
  for (size_t unused : {3, 2}) {       // a step each: 2 had a gradient the step before
    std::vector<size_t> used;
    for (size_t i : problem.all())
      if (i != unused) used.push_back(i);
    sync.zero_grad();
    sync.prepare(false);
    problem.backward(0, used);
    sync.prepare(true);
    if (rank() != empty_rank) problem.backward(1, used);
    sync.synchronize();
    for (size_t i = 0; i < problem.params.size(); ++i) {
      torch::Tensor expected = torch::zeros_like(problem.params[i]);
      if (i != unused)
        for (int r = 0; r < world(); ++r) {
          expected += problem.coefficient(i, r, 0);
          if (r != empty_rank) expected += problem.coefficient(i, r, 1);
        }
      EXPECT_TRUE(torch::equal(problem.params[i].grad(), expected))
          << "param " << i << ", unused " << unused;
    }
  }
}

// sum_of_squares (over ranks) and clip_scale == (g / divisor) then
// torch::nn::utils::clip_grad_norm_.
TEST(GradSync, ClipScaleMatchesTorchClipGradNorm) {
  for (double max_norm : {1.0, 1e9}) {
    LinearProblem problem;
    distributed::GradSync sync(problem.params, comm(), options(64, true));
    sync.zero_grad();
    sync.prepare(true);
    problem.backward(0, problem.all());
    sync.synchronize();
    std::vector<torch::Tensor> reference;
    for (const auto& p : problem.params) {
      torch::Tensor r = p.detach().clone().requires_grad_();
      r.mutable_grad() = p.grad().clone() / 37.0;
      reference.push_back(r);
    }
    const double expected_norm = torch::nn::utils::clip_grad_norm_(reference, max_norm);
    torch::Tensor squares = sync.sum_of_squares();  // this rank's part
    comm().allreduce_sum(squares);
    const distributed::GradScale scale =
        distributed::clip_scale(squares, torch::full({}, 37.0, torch::kDouble), max_norm);
    EXPECT_NEAR(scale.norm.item<double>(), expected_norm, 1e-5 * expected_norm);
    for (size_t i = 0; i < reference.size(); ++i)
      EXPECT_TRUE(torch::allclose(problem.params[i].grad() * scale.factor.item<double>(),
                                  reference[i].grad(), 1e-6, 1e-7));
  }
}

// Sharded: each rank gets its shard of every bucket's summed gradients (the
// buckets padded to equal shards), the norm's parts add up to the whole, the
// parameters are views into the buckets (their values kept), and
// gather_parameters hands every rank's shard to all; to_shards and
// shard_pieces place per-parameter tensors (Adam's moments) in the shards. Through
// MPI's collectives or, the ranks all being on this machine, shared memory.
void check_sharded(bool node_shared) {
  LinearProblem problem;
  for (size_t i = 0; i < problem.params.size(); ++i)
    problem.params[i].detach().copy_(problem.coefficient(i, 0, 5));  // values to keep
  std::vector<torch::Tensor> before;
  for (const auto& p : problem.params) before.push_back(p.detach().clone());
  auto o = options(64, true);
  o.shard = true;
  o.node_shared = node_shared;
  distributed::GradSync sync(problem.params, comm(), o);
  ASSERT_EQ(sync.node_shared(), node_shared);
  for (size_t i = 0; i < problem.params.size(); ++i)
    EXPECT_TRUE(torch::equal(problem.params[i], before[i])) << "param " << i << " lost its values";

  sync.zero_grad();
  sync.prepare(true);
  problem.backward(0, problem.all());
  sync.synchronize();
  const auto layout = sync.bucket_layout();
  ASSERT_EQ(sync.shard_parameters().size(), layout.size());
  // Each parameter at the next multiple of 16 elements; the bucket padded to
  // world_size shards of multiples of 16.
  const auto round_up = [](int64_t n, int64_t to) { return (n + to - 1) / to * to; };
  std::vector<std::vector<int64_t>> offsets(layout.size());
  double total_squares = 0;
  for (size_t b = 0; b < layout.size(); ++b) {
    int64_t end = 0;
    for (size_t k : layout[b]) {
      offsets[b].push_back(round_up(end, 16));
      end = offsets[b].back() + problem.params[k].numel();
    }
    torch::Tensor flat = torch::zeros({round_up(end, world() * 16)});  // the summed gradients
    for (size_t j = 0; j < layout[b].size(); ++j) {
      const size_t k = layout[b][j];
      torch::Tensor sum = flat.narrow(0, offsets[b][j], problem.params[k].numel());
      for (int r = 0; r < world(); ++r) sum += problem.coefficient(k, r, 0).reshape({-1});
      total_squares += sum.square().sum().item<double>();
    }
    const int64_t n = flat.numel() / world();
    EXPECT_TRUE(torch::equal(sync.shard_parameters()[b].grad(), flat.narrow(0, rank() * n, n)))
        << "bucket " << b;
  }
  torch::Tensor squares = sync.sum_of_squares();
  comm().allreduce_sum(squares);
  EXPECT_EQ(squares.item<double>(), total_squares);

  // Each rank writes its rank into its shards; the gather hands them to all.
  for (const auto& shard : sync.shard_parameters()) shard.fill_(rank() + 1.0);
  sync.gather_parameters();
  for (size_t b = 0; b < layout.size(); ++b) {
    const int64_t n = sync.shard_parameters()[b].numel();
    for (size_t j = 0; j < layout[b].size(); ++j) {
      const size_t k = layout[b][j];
      const torch::Tensor owner =
          torch::arange(offsets[b][j], offsets[b][j] + problem.params[k].numel())
              .div(n, "floor")
              .add(1)
              .to(torch::kFloat);
      EXPECT_TRUE(torch::equal(problem.params[k].reshape({-1}), owner)) << "param " << k;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(problem.params[k].data_ptr()) % 64, 0u);
    }
  }

  // Per-parameter tensors to this rank's shards; the shards' parameter pieces
  // hold the parameters' own elements, and the ranks' pieces cover every
  // element of every parameter once.
  std::vector<torch::Tensor> moments;
  for (size_t i = 0; i < problem.params.size(); ++i)
    moments.push_back(problem.coefficient(i, 2, 3) * 0.5);
  const auto shards = sync.to_shards(moments);
  const auto pieces = sync.shard_pieces();
  ASSERT_EQ(pieces.size(), shards.size());
  torch::Tensor covered = torch::zeros({static_cast<int64_t>(moments.size())});
  for (size_t b = 0; b < pieces.size(); ++b)
    for (const auto& piece : pieces[b]) {
      EXPECT_TRUE(torch::equal(
          shards[b].narrow(0, piece.shard_begin, piece.numel),
          moments[piece.param].reshape({-1}).narrow(0, piece.param_begin, piece.numel)))
          << "param " << piece.param;
      covered[piece.param] += static_cast<double>(piece.numel);
    }
  comm().allreduce_sum(covered);
  for (size_t i = 0; i < moments.size(); ++i)
    EXPECT_EQ(covered[i].item<double>(), static_cast<double>(moments[i].numel())) << "param " << i;

  // A second step: each rank's gradients start again from zero.
  sync.zero_grad();
  sync.prepare(true);
  problem.backward(1, problem.all());
  sync.synchronize();
  for (size_t b = 0; b < layout.size(); ++b) {
    torch::Tensor flat = torch::zeros_like(sync.shard_parameters()[b]).repeat({world()});
    for (size_t j = 0; j < layout[b].size(); ++j) {
      const size_t k = layout[b][j];
      torch::Tensor sum = flat.narrow(0, offsets[b][j], problem.params[k].numel());
      for (int r = 0; r < world(); ++r) sum += problem.coefficient(k, r, 1).reshape({-1});
    }
    const int64_t n = flat.numel() / world();
    EXPECT_TRUE(torch::equal(sync.shard_parameters()[b].grad(), flat.narrow(0, rank() * n, n)))
        << "bucket " << b << ", second step";
  }
}

TEST(GradSync, ShardedReduceScatterNormAndAllgather) { check_sharded(/*node_shared=*/false); }
TEST(GradSync, ShardedThroughNodeSharedMemory) { check_sharded(/*node_shared=*/true); }

// On the Transformer itself: bucketed, overlapped gradients equal one plain
// allreduce of all gradients after backward.
TEST(GradSync, OverlappedTransformerGradientsEqualPlainAllreduce) {
  model::ModelConfig c;
  c.src_vocab = c.tgt_vocab = 17;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = c.decoder_layers = 2;
  c.dropout = 0;
  c.max_positions = 32;
  const auto loss_of = [&](model::EncoderDecoder& m) {
    torch::manual_seed(100 + rank());  // a different batch on every rank
    const torch::Tensor src = torch::randint(1, 17, {3, 7});
    const torch::Tensor tgt = torch::randint(1, 17, {3, 6});
    const auto out =
        m->forward(src, tgt, model::make_src_mask(src, 0), model::make_tgt_mask(tgt, 0));
    return out.sum();
  };
  torch::manual_seed(1);
  model::EncoderDecoder bucketed(c);
  torch::manual_seed(1);
  model::EncoderDecoder plain(c);

  distributed::GradSync sync(bucketed->parameters(), comm(), options(4096, true));
  sync.zero_grad();
  sync.prepare(true);
  loss_of(bucketed).backward();
  sync.synchronize();
  EXPECT_GT(sync.stats().started_in_backward, 1);

  loss_of(plain).backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : plain->parameters()) grads.push_back(p.grad().reshape({-1}));
  torch::Tensor flat = torch::cat(grads);
  comm().allreduce_sum(flat);

  int64_t offset = 0;
  for (const auto& p : bucketed->parameters()) {
    const torch::Tensor expected = flat.narrow(0, offset, p.numel()).view_as(p);
    offset += p.numel();
    EXPECT_TRUE(torch::allclose(p.grad(), expected, 1e-5, 1e-6));
  }
}

TEST(Consistency, NamesTheRankWhoseParametersDiverged) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> params{torch::randn({4, 5}), torch::randn({9})};
  EXPECT_NO_THROW(distributed::check_replicas_equal(params, comm(), 10));

  const int bad = world() - 1;
  if (rank() == bad) {  // one ulp in one element
    float* x = params[1].data_ptr<float>() + 3;
    *x = std::nextafter(*x, 1e9f);
  }
  try {
    distributed::check_replicas_equal(params, comm(), 11);
    FAIL() << "a diverged rank went unnoticed";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank(s) " + std::to_string(bad)), std::string::npos) << what;
    EXPECT_NE(what.find("step 11"), std::string::npos) << what;
  }
}

}  // namespace
