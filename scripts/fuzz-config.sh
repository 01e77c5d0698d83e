# Sourced by scripts/fuzz-smoke.sh and scripts/fuzz-long.sh: the libFuzzer
# targets, how their build is configured (clang-14, AddressSanitizer and
# UBSan; as scripts/test-sanitizers.sh: -O1, line tables, assertions on,
# UBSan without the checks that only cost compile time here) and the
# sanitizer options every run uses. fuzz_build BUILD_DIR JOBS configures and
# builds the targets.
fuzz_targets=(etp_loader npy_reader quantized_kernels portable_kernels xnnpack_kernels state_writes)
fuzz_options=(-Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=false
              -Db_ndebug=false "-Dcpp_args=-g1 -fno-sanitize=vptr,null,object-size" -Dbenchmarks=false -Dpython=false
              -Dpython_interpreter=/usr/bin/python3)
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

fuzz_build() {  # fuzz_build BUILD_DIR JOBS
  if [ -f "$1/build.ninja" ]; then
    meson setup "$1" --reconfigure "${fuzz_options[@]}"
  else
    CXX=clang++-14 meson setup "$1" "${fuzz_options[@]}"
  fi
  ninja -C "$1" -j "$2" "${fuzz_targets[@]/#/test/fuzz/fuzz_}"
}

fuzz_seed() {  # fuzz_seed TARGET CORPUS_DIR: the checked-in seeds and regression inputs
  mkdir -p "$2"
  local seeds
  for seeds in test/fuzz/corpus/"$1" test/fuzz/regressions/"$1"; do
    if [ -d "$seeds" ]; then cp -R "$seeds"/. "$2"/; fi
  done
}
