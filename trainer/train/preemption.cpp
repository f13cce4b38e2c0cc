#include "trainer/train/preemption.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace train {

namespace {

// Lock-free atomics only: the handler may run on any thread, between any two
// instructions of the main one.
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);
std::atomic<int> g_signal{0};         // first signal received
std::atomic<int> g_settled_code{-1};  // the exit code once the outcome is settled
std::atomic<bool> g_saving{false};    // a checkpoint is being written
std::atomic<int> g_held{0};           // a second signal held during that write
struct sigaction g_previous_usr1, g_previous_term;

extern "C" void on_signal(int signo) {
  int none = 0;
  if (g_signal.compare_exchange_strong(none, signo)) return;
  none = 0;
  if (g_saving.load() && g_held.compare_exchange_strong(none, signo)) return;
  const int settled = g_settled_code.load();
  _exit(settled >= 0 ? settled : 128 + signo);  // the second one (or a third)
}

}  // namespace

PreemptionSignals::PreemptionSignals() {
  g_signal = 0;
  g_settled_code = -1;
  g_saving = false;
  g_held = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, &g_previous_usr1);
  sigaction(SIGTERM, &action, &g_previous_term);
}

PreemptionSignals::~PreemptionSignals() {
  sigaction(SIGUSR1, &g_previous_usr1, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool PreemptionSignals::requested() const { return g_signal.load() != 0; }
int PreemptionSignals::signal() const { return g_signal.load(); }
void PreemptionSignals::settle(int exit_code) { g_settled_code = exit_code; }

// A signal the handler held just as the last window closed is dropped here,
// so that this window can hold one.
void PreemptionSignals::begin_save() {
  g_held = 0;
  g_saving = true;
}

// Settled before the write window closes: a signal after it then exits with
// the outcome's code, never 128 + signal, whichever side of this it lands on.
int PreemptionSignals::end_save(int settles) {
  if (settles >= 0) g_settled_code = settles;
  g_saving = false;
  return g_held.exchange(0);
}

}  // namespace train
