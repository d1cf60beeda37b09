#include "lib/agreement.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

namespace lanes::detail {

namespace {

std::string without_prefix(const Error& e) {
  const std::string prefix = std::string("lanes: ") + to_string(e.code()) + ": ";
  const std::string what = e.what();
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

}  // namespace

std::optional<Failure> attempt(const std::function<void()>& step) {
  try {
    step();
    return std::nullopt;
  } catch (const Error& e) {
    return Failure{e.code(), without_prefix(e)};
  } catch (const std::bad_alloc&) {
    return Failure{Errc::resource, "out of memory"};
  } catch (const std::exception& e) {
    return Failure{Errc::internal, e.what()};
  }
}

void put_outcome(char* record, const std::optional<Failure>& failure, std::string_view payload) {
  std::memset(record, 0, kOutcomeBytes);
  const std::string_view text = failure ? std::string_view(failure->message) : payload;
  if (failure) record[0] = static_cast<char>(1 + static_cast<int>(failure->code));
  // The last byte stays 0: the text is a C string.
  if (!text.empty()) std::memcpy(record + 1, text.data(), std::min(text.size(), kOutcomeBytes - 2));
}

std::string payload_of(const char* record) {
  return std::string(record + 1);
}

void throw_if_any_failed(const std::vector<std::optional<Failure>>& failures, int me,
                         std::string_view stage) {
  int first = -1, failed = 0;
  for (std::size_t r = 0; r < failures.size(); ++r) {
    if (!failures[r]) continue;
    if (first < 0) first = static_cast<int>(r);
    ++failed;
  }
  if (first < 0) return;
  const bool mine = me >= 0 && static_cast<std::size_t>(me) < failures.size() &&
                    failures[static_cast<std::size_t>(me)].has_value();
  const int shown = mine ? me : first;
  const Failure& f = *failures[static_cast<std::size_t>(shown)];
  std::string message = "rank " + std::to_string(shown) + " of " + std::to_string(failures.size()) +
                        " failed while " + std::string(stage) + ": " + f.message;
  if (failed > 1) {
    message += " (" + std::to_string(failed - 1) + " other rank" + (failed > 2 ? "s" : "") +
               " failed too)";
  }
  throw Error(f.code, message);
}

void throw_if_any_failed(const char* records, int count, int me, std::string_view stage) {
  std::vector<std::optional<Failure>> failures(static_cast<std::size_t>(count));
  for (int r = 0; r < count; ++r) {
    const char* rec = records + static_cast<std::size_t>(r) * kOutcomeBytes;
    if (rec[0] != 0) {
      failures[static_cast<std::size_t>(r)] =
          Failure{static_cast<Errc>(static_cast<unsigned char>(rec[0]) - 1), payload_of(rec)};
    }
  }
  throw_if_any_failed(failures, me, stage);
}

void agree(const ExchangeFn& exchange, int count, int me, const std::optional<Failure>& mine,
           std::string_view stage) {
  char record[kOutcomeBytes];
  put_outcome(record, mine);
  std::vector<char> all(kOutcomeBytes * static_cast<std::size_t>(count));
  exchange(record, all.data(), kOutcomeBytes);
  throw_if_any_failed(all.data(), count, me, stage);
}

}  // namespace lanes::detail
