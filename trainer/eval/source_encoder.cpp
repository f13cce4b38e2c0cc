#include "trainer/eval/source_encoder.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "data_pipeline/make_tokenizer.h"

extern char** environ;

namespace eval {

namespace fs = std::filesystem;

namespace {

// The tokenize program: built next to this one (build/bin/).
std::string tokenize_program() {
  const fs::path program = fs::read_symlink("/proc/self/exe").parent_path() / "tokenize";
  if (!fs::exists(program))
    throw std::runtime_error("cannot find " + program.string() +
                             " (build it: it encodes SentencePiece text)");
  return program.string();
}

}  // namespace

SourceEncoder::SourceEncoder(const std::string& data_dir, const data::Manifest& manifest) {
  if (manifest.tokenizer_kind != data::TokenizerKind::kSentencePiece) {
    tokenizer_ = data::load_dataset_tokenizer(manifest, data_dir, "src");
    return;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a child that died shows as a read error, not a killed job
  int in[2], out[2];              // parent -> child stdin, child stdout -> parent
  if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("cannot create pipes for tokenize");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  for (int fd : {in[0], in[1], out[0], out[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  const std::string program = tokenize_program();
  std::vector<std::string> args = {program, "--data", data_dir, "--side", "src"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int failed = posix_spawn(&child_, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (failed != 0) throw std::runtime_error("cannot start " + program);
  to_child_ = fdopen(in[1], "w");
  from_child_ = fdopen(out[0], "r");
}

SourceEncoder::~SourceEncoder() {
  if (child_ < 0) return;
  fclose(to_child_);  // end of input: the child exits
  fclose(from_child_);
  waitpid(child_, nullptr, 0);
}

std::vector<int32_t> SourceEncoder::encode(const std::string& line) {
  if (tokenizer_) return tokenizer_->encode(line);
  if (line.find('\n') != std::string::npos)
    throw std::invalid_argument("a source line contains a newline");
  fputs((line + "\n").c_str(), to_child_);
  fflush(to_child_);
  std::string answer;
  for (int c; (c = fgetc(from_child_)) != EOF && c != '\n';) answer.push_back(static_cast<char>(c));
  if (ferror(from_child_) || feof(from_child_))
    throw std::runtime_error("the tokenize process ended unexpectedly");
  std::vector<int32_t> ids;
  std::istringstream words(answer);
  for (int32_t id; words >> id;) ids.push_back(id);
  return ids;
}

}  // namespace eval
