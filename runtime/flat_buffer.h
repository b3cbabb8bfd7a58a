// One flat device buffer per role (parameters, gradients, optimizer state) with a view per
// tensor, so that an update or an average is one call over one buffer.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "runtime/backend.h"

namespace cbt {

struct FlatLayout {
  struct Entry {
    std::string name;
    Shape shape;
    int64_t offset = 0;  // in elements
  };
  std::vector<Entry> entries;
  int64_t numel = 0;   // elements of the buffer, alignment padding included
  int64_t values = 0;  // elements of the tensors themselves

  // Entries in the order of `names`, each aligned to 64 elements (256 bytes for float32).
  static FlatLayout of(const std::vector<std::string>& names, const std::map<std::string, ValueType>& types);
};

class FlatBuffer {
 public:
  FlatBuffer() = default;
  FlatBuffer(const FlatLayout& layout, Backend& backend);
  const Tensor& flat() const { return flat_; }
  const Tensor& view(const std::string& name) const { return views_.at(name); }
  const std::map<std::string, Tensor>& views() const { return views_; }

 private:
  Tensor flat_;
  std::map<std::string, Tensor> views_;
};

}  // namespace cbt
