#!/bin/bash
# Negative compile test: misuses of the ops layer must fail to compile, with a
# diagnostic that names what went wrong (for predefined ops: the op's tag type
# and the element type, via op_type_check<Op, T>). A positive control with
# the same includes and flags guards against the negative cases failing for
# an unrelated reason (a wrong include path, a missing flag).
set -u

runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
include_dir="${runfiles}/include"
cases_dir="${runfiles}/tests/ops/compile_fail"
cxx="${CXX:-g++}"
flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"${include_dir}")
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect_error FILE PATTERN...: FILE must not compile and the diagnostics must
# contain every PATTERN (fixed strings).
expect_error() {
  local file="$1"
  shift
  local log
  if log="$("${cxx}" "${flags[@]}" "${cases_dir}/${file}" 2>&1)"; then
    fail "${file} compiled but must not"
    return
  fi
  local pattern
  for pattern in "$@"; do
    if ! grep -qF -- "${pattern}" <<<"${log}"; then
      fail "${file}: diagnostics lack '${pattern}'"
      echo "${log}" | head -30
    fi
  done
  echo "ok: ${file} is rejected"
}

# expect_success NAME CODE: the translation unit CODE must compile.
expect_success() {
  local name="$1" code="$2"
  local log
  if ! log="$("${cxx}" "${flags[@]}" -x c++ - <<<"${code}" 2>&1)"; then
    fail "${name} must compile"
    echo "${log}" | head -30
    return
  fi
  echo "ok: ${name} compiles"
}

[[ -d "${include_dir}/hreduce" ]] || { echo "no headers under ${include_dir}"; exit 1; }

expect_success control_compiles.cpp "$(cat "${cases_dir}/control_compiles.cpp")"

expect_error band_on_double.cpp "op_type_check<hreduce::op::band_t, double>" \
  "does not accept this element type"
expect_error sum_on_bool.cpp "op_type_check<hreduce::op::sum_t, bool>" \
  "does not accept this element type"
expect_error maxloc_on_double.cpp "op_type_check<hreduce::op::maxloc_t, double>"
expect_error max_called_on_complex.cpp \
  "op_type_check<hreduce::op::max_t, std::complex<double> >"
expect_error user_op_not_trivially_copyable.cpp "must be trivially copyable"
expect_error user_op_bad_signature.cpp "the user function must be callable"
expect_error user_op_wrong_type.cpp "made for a different element type"

if ((failures > 0)); then
  echo "${failures} check(s) failed"
  exit 1
fi
