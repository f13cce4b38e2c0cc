#include "trainer/train/preemption.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace train {

namespace {

std::atomic<int> g_signal{0};         // first signal received
std::atomic<int> g_settled_code{-1};  // the exit code once the outcome is settled
struct sigaction g_previous_usr1, g_previous_term;

extern "C" void on_signal(int signo) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, signo)) return;
  const int settled = g_settled_code.load();
  _exit(settled >= 0 ? settled : 128 + signo);  // the second one
}

}  // namespace

PreemptionSignals::PreemptionSignals() {
  g_signal = 0;
  g_settled_code = -1;
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

}  // namespace train
