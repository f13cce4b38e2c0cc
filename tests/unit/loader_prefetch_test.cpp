// Prefetch: the background thread delivers exactly what loading in the loop
// would, in plan order; a loading error reaches take() naming the step and
// the shard, after the micro-batches before it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "data_pipeline/batch_plan.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/loader/prefetcher.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "tests/unit/test_paths.h"

namespace {

class Prefetch : public test_util::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const auto result = test_util::run_command(
        test_paths::bin_dir() + "/prepare_data --task reverse --out " + (dir_ / "data").string() +
        " --train-size 300 --valid-size 0 --test-size 0 --shard-size 100");
    ASSERT_EQ(result.status, 0) << result.output;
  }
  data::Batcher batcher(const data::Dataset& train) const {
    data::BatcherOptions options;
    options.batch_tokens = 200;
    options.max_len = 50;
    return data::Batcher(train.lengths(), options);
  }
};

TEST_F(Prefetch, DeliversWhatSynchronousLoadingWould) {
  const data::Dataset train(dir_ / "data", "train");
  const auto b = batcher(train);
  const data::PlanOptions options{2, 1, 2, 25, 0};
  data::BatchPlan reference(b, options);
  data::Prefetcher prefetch(train, data::BatchPlan(b, options), 3);
  int count = 0;
  while (auto expected = reference.next_step()) {
    const auto got = prefetch.take();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->plan.step, expected->step);
    ASSERT_EQ(got->batches.size(), expected->micro_batches.size());
    for (size_t a = 0; a < got->batches.size(); ++a) {
      std::vector<data::Example> examples;
      for (int64_t i : expected->micro_batches[a].indices) examples.push_back(train.get(i));
      const data::Batch batch = data::collate(examples, train.manifest().special);
      EXPECT_EQ(got->batches[a].ids, batch.ids);
      EXPECT_TRUE(torch::equal(got->batches[a].src, batch.src));
      EXPECT_TRUE(torch::equal(got->batches[a].tgt_out, batch.tgt_out));
      ++count;
    }
  }
  EXPECT_EQ(count, 50);
  EXPECT_FALSE(prefetch.take().has_value());
}

TEST_F(Prefetch, LoadingErrorReachesTakeNamingStepAndShard) {
  const auto shard = dir_ / "data" / "train-00002.h5";
  const auto result = test_util::run_command(
      test_paths::python() + " -c 'import h5py\nwith h5py.File(\"" + shard.string() +
      "\", \"r+\") as f:\n    f[\"src/tokens\"][:] = 10**6'");
  ASSERT_EQ(result.status, 0) << result.output;
  const data::Dataset train(dir_ / "data", "train");
  const auto b = batcher(train);
  data::Prefetcher prefetch(train, data::BatchPlan(b, {1, 0, 1, 0, 1}), 2);
  int delivered = 0;
  try {
    while (prefetch.take()) ++delivered;
    FAIL() << "the damaged shard went unnoticed";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("of step " + std::to_string(delivered + 1)), std::string::npos) << what;
    EXPECT_NE(what.find(shard.string()), std::string::npos) << what;
    EXPECT_NE(what.find("outside the vocabulary"), std::string::npos) << what;
  }
}

}  // namespace
