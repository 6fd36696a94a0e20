#!/bin/bash
# Every public header compiles as the first and only include of a
# translation unit, with the project's warning flags; every header under
# hreduce/detail/ refuses to be included that way, and compiles after the
# public headers.
set -u

include_dir="${TEST_SRCDIR}/${TEST_WORKSPACE}/include"
cxx="${CXX:-g++}"
failures=0
checked=0

[[ -d "${include_dir}/hreduce" ]] || { echo "no headers under ${include_dir}"; exit 1; }

while IFS= read -r header; do
  name="${header#"${include_dir}/"}"
  checked=$((checked + 1))
  compile() {
    "${cxx}" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"${include_dir}" -x c++ - 2>&1
  }
  if [[ "${name}" == hreduce/detail/* ]]; then
    if log="$(compile <<<"#include \"${name}\"")" ||
      [[ "${log}" != *"is internal: include"* ]]; then
      echo "FAIL: ${name} does not refuse a direct include"
      echo "${log}" | head -20
      failures=$((failures + 1))
    elif ! log="$(compile <<<$'#include "hreduce/team.hpp"\n'"#include \"${name}\"")"; then
      echo "FAIL: ${name} does not compile after hreduce/team.hpp"
      echo "${log}" | head -20
      failures=$((failures + 1))
    else
      echo "ok: ${name} (refuses a direct include)"
    fi
  elif log="$(compile <<<"#include \"${name}\"")"; then
    echo "ok: ${name}"
  else
    echo "FAIL: ${name} does not compile on its own"
    echo "${log}" | head -20
    failures=$((failures + 1))
  fi
done < <(find "${include_dir}/hreduce" -name '*.hpp' | sort)

echo "${checked} header(s) checked, ${failures} failed"
((failures == 0))
