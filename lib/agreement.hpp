// Failing alike: a step that can fail on some ranks only (start-up, a communicator's node
// segment) is followed by an exchange of every rank's outcome, so that either every rank goes on
// or every rank throws, naming the rank that failed and why. Without it the ranks that succeeded
// would wait forever in the next exchange for the ones that gave up.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <lanes/error.hpp>

namespace lanes::detail {

// One rank's outcome in a fixed-size record: a status byte (0: ok, else 1 + the Errc) and the
// message, or, when ok, a payload such as a segment's name.
inline constexpr std::size_t kOutcomeBytes = 256;

struct Failure {
  Errc code = Errc::internal;
  std::string message;  // without the "lanes: <code>: " prefix
};

// Runs `step`, catching what it throws.
std::optional<Failure> attempt(const std::function<void()>& step);

// Writes `failure` (or ok and `payload`, at most kOutcomeBytes - 1 bytes) into `record`.
void put_outcome(char* record, const std::optional<Failure>& failure,
                 std::string_view payload = {});
// The payload of an ok record.
std::string payload_of(const char* record);

// Throws one lanes::Error when any member failed (`failures` in rank order): this member's own
// failure when it failed, else the first failed member's, "while <stage>", and how many failed.
void throw_if_any_failed(const std::vector<std::optional<Failure>>& failures, int me,
                         std::string_view stage);
// The same over `count` records written by put_outcome.
void throw_if_any_failed(const char* records, int count, int me, std::string_view stage);

// Collective exchange of equal-sized blocks among a group (the bootstrap at start-up, the parent
// communicator for a split).
using ExchangeFn = std::function<void(const void* mine, void* all, std::size_t bytes)>;
// Exchanges `mine` among the `count` members and throws as throw_if_any_failed.
void agree(const ExchangeFn& exchange, int count, int me, const std::optional<Failure>& mine,
           std::string_view stage);

}  // namespace lanes::detail
