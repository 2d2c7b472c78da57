// A small C++ extension for mixed-mode debugging: array arithmetic, a callback into Python, and
// a planted out-of-bounds bug (histogram with an unchecked bin index).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <vector>

namespace py = pybind11;

// Scales every value; called from the driver's main loop.
static std::vector<double> scale(const std::vector<double>& values, double factor) {
  std::vector<double> out;  // mixed: scale_first_line
  out.reserve(values.size());
  for (double v : values) {
    double scaled = v * factor;  // mixed: scale_line
    out.push_back(scaled);
  }
  return out;
}

// Folds the values with a Python function: C++ calling back into Python.
static double fold(const std::vector<double>& values, const std::function<double(double, double)>& combine,
                   double start) {
  double acc = start;  // mixed: fold_first_line
  for (double v : values) {
    acc = combine(acc, v);  // mixed: callback_line
  }
  return acc;
}

// Cheap on purpose: the hot call of the benchmark loop.
static long checksum(long x) {
  long h = x * 2654435761L;  // mixed: checksum_line
  return h ^ (h >> 13);
}

// Counts values into bins of width 1 starting at 0. The bug: a value past the last bin is
// not clamped, so its count is written far outside the array.
static std::vector<std::int64_t> histogram(const std::vector<double>& values, std::size_t bins) {
  std::vector<std::int64_t> counts(bins, 0);
  std::int64_t* data = counts.data();
  for (double v : values) {
    auto bin = static_cast<std::int64_t>(v);
    data[bin] += 1;  // mixed: oob_line
  }
  return counts;
}

PYBIND11_MODULE(mixed_ext, m) {
  m.doc() = "Strata's mixed-mode example extension";
  m.def("scale", &scale, "values times factor");
  m.def("fold", &fold, "fold values with a Python function");
  m.def("checksum", &checksum, "a cheap hash");
  m.def("histogram", &histogram, "count values into unit bins (has a planted bug)");
}
