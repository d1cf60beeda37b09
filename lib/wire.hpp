// Little serializer for the records processes exchange at start-up (same binary on every rank,
// so native byte order and sizes are fine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <lanes/error.hpp>

namespace lanes::detail {

class WireWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out_.insert(out_.end(), p, p + sizeof v);
  }
  void put_bytes(std::span<const std::byte> b) {
    put(static_cast<std::uint64_t>(b.size()));
    out_.insert(out_.end(), b.begin(), b.end());
  }
  void put_string(const std::string& s) { put_bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get() {
    T v;
    need(sizeof v);
    std::memcpy(&v, in_.data() + off_, sizeof v);
    off_ += sizeof v;
    return v;
  }
  std::span<const std::byte> get_bytes() {
    const auto n = static_cast<std::size_t>(get<std::uint64_t>());
    need(n);
    auto s = in_.subspan(off_, n);
    off_ += n;
    return s;
  }
  std::string get_string() {
    auto b = get_bytes();
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }

 private:
  void need(std::size_t n) const {
    if (n > in_.size() - off_) {  // off_ <= size always; off_ + n could wrap
      throw Error(Errc::bootstrap, "malformed start-up record (mixed lanes versions?)");
    }
  }
  std::span<const std::byte> in_;
  std::size_t off_ = 0;
};

}  // namespace lanes::detail
