// libFuzzer target for the safetensors reader (model/safetensors.hpp) and what reads through it
// (model/hf_checkpoint.hpp): a file given to `train --weights` or `--tokens` is read or refused
// with a WorkError, whatever its header claims (offsets past the end, shapes that overflow,
// dtypes, nesting): no crash, no read outside the file, no other exception.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/error.hpp"
#include "facts/model_shape.hpp"
#include "input_file.hpp"
#include "model/hf_checkpoint.hpp"
#include "model/llama_layout.hpp"
#include "model/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = write_fuzz_input(data, size);
  if (!path) return 0;
  static const ub::ModelShape tiny = ub::load_model("llama-tiny", fuzz_data_dir() + "/models");
  static const ub::LlamaLayout layout = ub::llama_layout(tiny);
  try {
    const ub::SafetensorsFile f(*path);
    for (const auto& [name, t] : f.tensors()) {
      try {
        if (t.dtype == "I32" || t.dtype == "I64") {
          (void)f.read_ints(t);
        } else {
          std::vector<float> out(static_cast<size_t>(t.elements()));
          f.read_floats(t, out.data());
        }
      } catch (const ub::WorkError&) {
      }
    }
  } catch (const ub::WorkError&) {
  }
  try {
    (void)ub::load_hf_weights(*path, tiny, layout);
  } catch (const ub::WorkError&) {
  }
  try {
    (void)ub::load_token_ids(*path, 0, 1, 4, tiny.vocab);
  } catch (const ub::WorkError&) {
  }
  return 0;
}
