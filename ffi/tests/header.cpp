// murk.h from C++ (an Unreal plugin, a Godot extension): the header
// compiles as C++17 with every warning as an error, and its functions link
// and answer. Run by `cargo test -p murk-ffi --test c_programs`.
#include "murk.h"

#include <cstdio>
#include <cstring>
#include <string>

int main() {
  uint64_t fog = 0;
  if (murk_fog_create(MURK_BACKEND_CPU, 1, &fog) != MURK_OK) {
    std::fprintf(stderr, "header.cpp: %s\n", murk_last_error());
    return 1;
  }
  MurkArea area = {{8, 8, 5}, {16, 16, 10}, 0};
  const std::string name = "main";
  int32_t rc = murk_instance_create(fog, name.data(), name.size(), &area, 16, 0, MURK_ALL_TEAMS, nullptr, 0, MURK_FORMAT_JSON);
  MurkDims dims = {};
  if (rc == MURK_OK) rc = murk_instance_dims(fog, name.data(), name.size(), &dims);
  if (rc != MURK_OK || dims.out_width != 16) {
    std::fprintf(stderr, "header.cpp: code %d, width %u: %s\n", rc, dims.out_width, murk_last_error());
    return 1;
  }
  std::printf("header.cpp: murk %s, C API %u\n", murk_version(), murk_api_version());
  return murk_fog_free(fog) == MURK_OK ? 0 : 1;
}
