-- LuaRocks: builds the Lua module (require "epochcast") and the epochcast CLI with CMake and
-- installs models/ beside them in the rock, where the module finds it.
--   luarocks make --lua-version 5.4 epochcast-scm-1.rockspec           (from a clone)
--   luarocks make --lua-version 5.4 --local epochcast-scm-1.rockspec   (into ~/.luarocks)
-- Needs CMake, a C11 compiler, pkg-config and the -dev packages of GSL, jansson, libcsv and
-- Lua 5.4 (Debian: cmake pkg-config libgsl-dev libjansson-dev libcsv-dev liblua5.4-dev).
rockspec_format = "3.0"
package = "epochcast"
version = "scm-1"
source = {
  -- A placeholder until the project publishes its repository (luarocks make does not read it).
  url = "git+https://github.com/epochcast/epochcast.git",
}
description = {
  summary = "Predict deep-learning training step time, epoch time and GPU memory",
  detailed = [[
epochcast predicts how long deep-learning training takes and how much GPU memory it needs
before anyone rents a GPU: step time broken down into compute, input pipeline, host-to-device
copies, CPU overhead and communication; GPU utilization; peak memory and whether it fits;
epoch and run time. A C library with this Lua module and a command-line tool.]],
  labels = { "deep-learning", "gpu", "simulation" },
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
external_dependencies = {
  GSL = { header = "gsl/gsl_math.h", library = "gsl" },
  JANSSON = { header = "jansson.h", library = "jansson" },
  CSV = { header = "csv.h", library = "csv" },
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    EC_INSTALL_CMOD = "$(LIBDIR)",
    EC_INSTALL_LIBRARY = "OFF",
    EC_BUILD_LUA = "ON",
    EC_BUILD_TESTS = "OFF",
    EC_BUILD_BENCH = "OFF",
    EC_WERROR = "OFF",
    EC_MPI = "OFF", -- the rock's epochcast runs in one process (no epochcast-mpi, no MPI dependency)
  },
}
