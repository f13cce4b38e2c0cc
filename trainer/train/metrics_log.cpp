#include "trainer/train/metrics_log.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

namespace train {

MetricsLog::MetricsLog(const std::string& path) : out_(path, std::ios::app) {
  if (!out_) throw std::runtime_error("cannot open " + path + " for appending");
}

void MetricsLog::write(const nlohmann::json& record) {
  spdlog::info("step {:>6} | epoch {:>3} | loss {:.4f} | nll {:.4f} | ppl {:8.3f} | lr {:.3e} | "
               "gnorm {:.3f} | {:.0f} tok/s | {:.0f} s",
               record.at("step").get<int64_t>(), record.at("epoch").get<int64_t>(),
               record.at("loss").get<double>(), record.at("nll").get<double>(),
               record.at("ppl").get<double>(), record.at("lr").get<double>(),
               record.at("grad_norm").get<double>(), record.at("tokens_per_s").get<double>(),
               record.at("elapsed_s").get<double>());
  out_ << record.dump() << "\n";
  out_.flush();
}

}  // namespace train
