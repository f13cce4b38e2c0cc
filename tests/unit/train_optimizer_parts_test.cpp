// Checkpoints of a sharded update: each rank writes the pieces of Adam's
// moments it holds as its optimizer part, and rank 0 commits the parts of all;
// loading assembles them, and refuses parts that do not make the whole or do
// not belong together, naming the directory or the file and the parameter.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/checkpoint_test.h"
#include "tests/unit/error_message.h"
#include "tests/unit/run_command.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_files.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/state_dict.h"

namespace {

namespace fs = std::filesystem;
using test_util::error_of;
using test_util::expect_mentions;

// linear_'s Adam state as pieces: `param`'s flattened elements [begin, end).
class OptimizerParts : public test_util::CheckpointTest {
 protected:
  torch::Tensor moment(const std::string& param, bool squared) {
    const torch::Tensor& p = linear_->named_parameters()[param];
    const auto& s = static_cast<torch::optim::AdamParamState&>(
        *adam_.state().at(checkpoint::adam_state_key(p)));
    return (squared ? s.exp_avg_sq() : s.exp_avg()).reshape({-1});
  }
  void add(checkpoint::NamedTensors& part, const std::string& param, int64_t begin, int64_t end,
           int64_t step = 1) {
    checkpoint::add_moment_piece(part, param, begin, moment(param, false).slice(0, begin, end),
                                 moment(param, true).slice(0, begin, end), step);
  }
  // Parts of two ranks as state dicts in `dir`, as a sharded run splits a
  // bucket: the weight's 6 elements cut at 4, the bias in the second.
  void write_parts(const fs::path& dir, int64_t cut = 4, int64_t second_begin = 4) {
    fs::create_directories(dir);
    checkpoint::NamedTensors first, second;
    add(first, "weight", 0, cut);
    add(second, "weight", second_begin, 6);
    add(second, "bias", 0, 2);
    checkpoint::save_tensors(first, (dir / checkpoint::optimizer_part_name(0, 2)).string());
    checkpoint::save_tensors(second, (dir / checkpoint::optimizer_part_name(1, 2)).string());
  }
  std::string load_error(const fs::path& dir) {
    torch::nn::Linear weights(3, 2);
    torch::optim::Adam adam(weights->parameters(), torch::optim::AdamOptions(1e-3));
    return error_of([&] { checkpoint::load_optimizer_state(adam, *weights, dir.string()); });
  }
};

// Rank 0 writes the model, the state and its part, rank 1 its part, into
// the step's temporary directory; rank 0 commits the lines of both. The
// checkpoint verifies (and sha256sum -c agrees), and loading assembles the
// moments that were split between the parts, bitwise.
TEST_F(OptimizerParts, RanksWriteTheirPartsAndRankZeroCommits) {
  const checkpoint::Checkpoints c(run());
  checkpoint::CheckpointPart rank0{checkpoint::named_state(*linear_),
                                   {checkpoint::optimizer_part_name(0, 2), {}},
                                   {{"step", 7}}};
  checkpoint::CheckpointPart rank1{{}, {checkpoint::optimizer_part_name(1, 2), {}}, nullptr};
  add(rank0.optimizer.tensors, "weight", 0, 4);
  add(rank1.optimizer.tensors, "weight", 4, 6);
  add(rank1.optimizer.tensors, "bias", 0, 2);
  const std::string tmp = c.begin_save(7);
  checkpoint::Snapshot s0, s1;
  checkpoint::take_snapshot(s0, 7, rank0);
  checkpoint::take_snapshot(s1, 7, rank1);
  const std::string sums = c.write_part(s0, tmp) + c.write_part(s1, tmp);
  const std::string dir = c.commit(7, tmp, sums);
  EXPECT_EQ(fs::read_symlink(checkpoints() / "latest"), "step_00000007");

  std::string why;
  EXPECT_TRUE(test_util::verify_checkpoint(dir, &why)) << why;
  const auto check = test_util::run_command("cd '" + dir + "' && sha256sum -c SHA256SUMS");
  EXPECT_EQ(check.status, 0) << check.output;
  for (const char* file : {"optimizer-00000-of-00002.pt: OK", "optimizer-00001-of-00002.pt: OK",
                           "model.pt: OK", "state.json: OK"})
    EXPECT_NE(check.output.find(file), std::string::npos) << check.output;

  // A stray optimizer file, which loading would read, fails verification.
  checkpoint::save_tensors({}, dir + "/" + checkpoint::optimizer_part_name(2, 3));
  std::string stray;
  EXPECT_FALSE(test_util::verify_checkpoint(dir, &stray));
  expect_mentions(stray, {dir + " holds optimizer parts of 2 and of 3 ranks"});
  fs::remove(dir + "/" + checkpoint::optimizer_part_name(2, 3));

  torch::nn::Linear weights(3, 2);
  torch::optim::Adam adam(weights->parameters(), torch::optim::AdamOptions(1e-3));
  checkpoint::load_optimizer_state(adam, *weights, dir);
  for (const auto& p : weights->named_parameters()) {
    const auto& s = static_cast<torch::optim::AdamParamState&>(
        *adam.state().at(checkpoint::adam_state_key(p.value())));
    EXPECT_EQ(s.step(), 1);
    EXPECT_TRUE(torch::equal(s.exp_avg().reshape({-1}), moment(p.key(), false))) << p.key();
    EXPECT_TRUE(torch::equal(s.exp_avg_sq().reshape({-1}), moment(p.key(), true))) << p.key();
    EXPECT_TRUE(s.exp_avg().sizes().equals(p.value().sizes())) << p.key();
  }

  // Through the checkpoint's files, checked as they are read: the same
  // state; a part that no longer matches its SHA256SUMS entry is refused
  // before the optimizer's state changes.
  torch::optim::Adam verified(weights->parameters(), torch::optim::AdamOptions(1e-3));
  checkpoint::load_optimizer_state(verified, *weights, checkpoint::CheckpointFiles(dir));
  ASSERT_EQ(verified.state().size(), 2u);
  for (const auto& p : weights->named_parameters())
    EXPECT_TRUE(torch::equal(static_cast<torch::optim::AdamParamState&>(
                                 *verified.state().at(checkpoint::adam_state_key(p.value())))
                                 .exp_avg()
                                 .reshape({-1}),
                             moment(p.key(), false)))
        << p.key();
  for (auto& entry : adam.state())
    static_cast<torch::optim::AdamParamState&>(*entry.second).exp_avg().zero_();
  std::ofstream(dir + "/" + checkpoint::optimizer_part_name(1, 2), std::ios::app) << "x";
  const std::string error = error_of(
      [&] { checkpoint::load_optimizer_state(adam, *weights, checkpoint::CheckpointFiles(dir)); });
  expect_mentions(error, {checkpoint::optimizer_part_name(1, 2), "does not match"});
  ASSERT_EQ(adam.state().size(), 2u);
  for (auto& entry : adam.state())
    EXPECT_EQ(static_cast<torch::optim::AdamParamState&>(*entry.second)
                  .exp_avg()
                  .count_nonzero()
                  .item<int64_t>(),
              0)
        << "the state before the load that failed, kept";
}

// Parts that do not make the whole: a missing part, a gap, an overlap, a
// piece beyond its parameter, a parameter in no part, and differing step
// counts are each refused naming the directory or the file and the parameter.
TEST_F(OptimizerParts, PartsThatDoNotCoverEachParameterOnceAreRefused) {
  write_parts(dir_ / "whole");
  torch::nn::Linear weights(3, 2);
  torch::optim::Adam adam(weights->parameters(), torch::optim::AdamOptions(1e-3));
  EXPECT_NO_THROW(checkpoint::load_optimizer_state(adam, *weights, (dir_ / "whole").string()));

  write_parts(dir_ / "one-missing");
  fs::remove(dir_ / "one-missing" / checkpoint::optimizer_part_name(1, 2));
  expect_mentions(load_error(dir_ / "one-missing"),
                  {(dir_ / "one-missing").string(), "no optimizer-00001-of-00002.pt"});

  write_parts(dir_ / "gap", 3, 4);  // element 3 in neither part
  expect_mentions(load_error(dir_ / "gap"),
                  {(dir_ / "gap").string(), "'weight'", "do not cover its 6 elements"});
  write_parts(dir_ / "overlap", 4, 3);  // element 3 in both
  expect_mentions(load_error(dir_ / "overlap"), {"'weight'", "exactly once"});

  fs::create_directories(dir_ / "beyond");
  checkpoint::NamedTensors beyond;
  add(beyond, "bias", 0, 2);
  beyond.back().second = torch::tensor({int64_t{1}, int64_t{3}});  // elements [1, 3) of 2
  const std::string beyond_part = (dir_ / "beyond" / checkpoint::kWholeOptimizerFile).string();
  checkpoint::save_tensors(beyond, beyond_part);
  expect_mentions(load_error(dir_ / "beyond"), {beyond_part, "'bias'", "does not fit"});

  write_parts(dir_ / "no-bias");
  checkpoint::NamedTensors weight_only;
  add(weight_only, "weight", 4, 6);
  checkpoint::save_tensors(weight_only,
                           (dir_ / "no-bias" / checkpoint::optimizer_part_name(1, 2)).string());
  expect_mentions(load_error(dir_ / "no-bias"), {(dir_ / "no-bias").string(), "none of 'bias'"});

  write_parts(dir_ / "steps");
  checkpoint::NamedTensors later;
  add(later, "weight", 4, 6, /*step=*/2);
  add(later, "bias", 0, 2, 2);
  const std::string later_part = (dir_ / "steps" / checkpoint::optimizer_part_name(1, 2)).string();
  checkpoint::save_tensors(later, later_part);
  expect_mentions(load_error(dir_ / "steps"), {later_part, "'weight'", "Adam step 2"});
}

// A part of another rank count beside them, or optimizer.pt beside them.
TEST_F(OptimizerParts, MixedOptimizerFilesAreRefused) {
  write_parts(dir_ / "counts");
  checkpoint::save_tensors({}, (dir_ / "counts" / checkpoint::optimizer_part_name(2, 3)).string());
  expect_mentions(load_error(dir_ / "counts"), {"optimizer parts of 2 and of 3 ranks"});
  write_parts(dir_ / "both");
  checkpoint::save_tensors({}, (dir_ / "both" / checkpoint::kWholeOptimizerFile).string());
  expect_mentions(load_error(dir_ / "both"), {"both optimizer.pt and optimizer parts"});
}

}  // namespace
