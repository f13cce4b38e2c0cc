// HDF5 shards: C++ write -> read round trip (plain and deflated; seq2seq and
// classification), atomic writing, and clear errors for missing files,
// foreign formats and labels out of range.
// (data_prepare_test checks what h5py sees in prepare_data's shards.)
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "data_pipeline/hdf5_util.h"
#include "data_pipeline/shard_reader.h"
#include "data_pipeline/shard_writer.h"
#include "tests/unit/error_message.h"

namespace {

namespace fs = std::filesystem;

class DataShard : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("data_shard_test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

data::ShardData make_data() {
  data::ShardData data;
  data.src.append({4, 5, 6});
  data.src.append({});  // empty sequences are legal
  data.src.append({7});
  data.tgt.append({8, 9});
  data.tgt.append({10});
  data.tgt.append({});
  data.ids = {100, 101, 102};
  return data;
}

void expect_equal(const data::RaggedTokens& a, const data::RaggedTokens& b) {
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.offsets, b.offsets);
}

TEST_F(DataShard, RoundTrip) {
  const auto data = make_data();
  const data::ShardAttrs attrs{11, 14, {}};
  for (const int deflate : {0, 6}) {
    const auto file = dir_ / ("train-0000" + std::to_string(deflate) + ".h5");
    data::write_shard(file, data, attrs, {deflate, 2});
    EXPECT_FALSE(fs::exists(file.string() + ".tmp"));

    const data::ShardReader reader(file);
    EXPECT_EQ(reader.num_examples(), 3);
    EXPECT_EQ(reader.attrs().src_vocab_size, 11);
    EXPECT_EQ(reader.attrs().tgt_vocab_size, 14);
    EXPECT_EQ(reader.attrs().special, data::SpecialIds{});
    const auto read = reader.read();
    expect_equal(read.src, data.src);
    expect_equal(read.tgt, data.tgt);
    EXPECT_EQ(read.ids, data.ids);
    EXPECT_EQ(read.src.at(0), (std::vector<int32_t>{4, 5, 6}));
    EXPECT_EQ(reader.attrs().num_labels, 0);  // a seq2seq shard: no labels
    EXPECT_TRUE(read.labels.empty());
    EXPECT_EQ(reader.read_example(reader.read_index().location(1), 1).label, -1);
  }
}

// Classification: labels in /labels, the class count in num_labels, tgt empty.
data::ShardData make_labelled_data() {
  data::ShardData data;
  for (const auto& sentence : {std::vector<int32_t>{4, 5}, {6}, {7, 8, 9}}) {
    data.src.append(sentence);
    data.tgt.append({});
  }
  data.ids = {0, 2, 3};
  data.labels = {2, 0, 1};
  return data;
}

TEST_F(DataShard, LabelsRoundTrip) {
  const auto file = dir_ / "train-00000.h5";
  data::write_shard(file, make_labelled_data(), {10, 10, {}, 3});
  const data::ShardReader reader(file);
  EXPECT_EQ(reader.attrs().num_labels, 3);
  EXPECT_EQ(reader.read().labels, (std::vector<int64_t>{2, 0, 1}));
  const auto index = reader.read_index();
  EXPECT_EQ(index.labels, (std::vector<int64_t>{2, 0, 1}));
  const auto example = reader.read_example(index.location(2), 2);
  EXPECT_EQ(example.id, 3);
  EXPECT_EQ(example.src, (std::vector<int32_t>{7, 8, 9}));
  EXPECT_TRUE(example.tgt.empty());
  EXPECT_EQ(example.label, 1);
}

TEST_F(DataShard, LabelsOutOfRangeAreRefused) {
  const auto file = dir_ / "train-00000.h5";
  auto data = make_labelled_data();
  data.labels[1] = 3;  // num_labels = 3
  EXPECT_THROW(data::write_shard(file, data, {10, 10, {}, 3}), std::runtime_error);
  data.labels.pop_back();  // fewer labels than examples
  EXPECT_THROW(data::write_shard(file, data, {10, 10, {}, 3}), std::runtime_error);
  EXPECT_FALSE(fs::exists(file));

  // A damaged file: example 1's label overwritten with -1 behind the writer's back.
  data::write_shard(file, make_labelled_data(), {10, 10, {}, 3});
  {
    data::h5::Handle handle(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
    data::h5::Handle labels(H5Dopen2(handle.get(), "labels", H5P_DEFAULT), H5Dclose, "open labels");
    const int64_t damaged[] = {2, -1, 1};
    data::h5::check(
        H5Dwrite(labels.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, damaged),
        "write labels");
  }
  test_util::expect_mentions(test_util::error_of([&] { data::ShardReader(file).read_index(); }),
                             {file.string(), "labels holds -1 in example 1"});
}

TEST_F(DataShard, MissingFileIsNamed) {
  const auto file = dir_ / "nope-00000.h5";
  try {
    data::ShardReader reader(file);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

// A file of another kind (or a future version) is refused with a message
// naming the file and the attribute.
TEST_F(DataShard, ForeignFormatOrVersionIsRefused) {
  const auto write_header = [&](const std::string& name, const std::string& format,
                                int64_t version) {
    const auto file = dir_ / name;
    data::h5::Handle handle(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                            H5Fclose, "create test file");
    data::h5::write_attr(handle.get(), "format", format);
    data::h5::write_attr(handle.get(), "format_version", version);
    return file;
  };
  const auto expect_refused = [](const fs::path& file, const std::string& what) {
    try {
      data::ShardReader reader(file);
      FAIL() << "expected an error for " << file;
    } catch (const std::exception& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(file.string()), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
    }
  };
  expect_refused(write_header("other.h5", "something-else", 1), "format is 'something-else'");
  expect_refused(write_header("future.h5", data::kShardFormat, 3), "format_version 3");
  expect_refused(write_header("partial.h5", data::kShardFormat, 1),
                 "missing attribute num_examples");
}

TEST_F(DataShard, InconsistentDataIsNotWritten) {
  auto data = make_data();
  data.ids.pop_back();
  const auto file = dir_ / "bad-00000.h5";
  EXPECT_THROW(data::write_shard(file, data, {11, 14, {}}), std::runtime_error);
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
}

TEST(DataShardName, Format) { EXPECT_EQ(data::shard_file_name("valid", 3), "valid-00003.h5"); }

}  // namespace
