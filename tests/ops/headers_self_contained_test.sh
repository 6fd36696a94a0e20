#!/bin/bash
# Every public header compiles as the first and only include of a
# translation unit, with the project's warning flags.
set -u

include_dir="${TEST_SRCDIR}/${TEST_WORKSPACE}/include"
cxx="${CXX:-g++}"
failures=0
checked=0

[[ -d "${include_dir}/hreduce" ]] || { echo "no headers under ${include_dir}"; exit 1; }

while IFS= read -r header; do
  name="${header#"${include_dir}/"}"
  checked=$((checked + 1))
  if log="$("${cxx}" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"${include_dir}" \
      -x c++ - <<<"#include \"${name}\"" 2>&1)"; then
    echo "ok: ${name}"
  else
    echo "FAIL: ${name} does not compile on its own"
    echo "${log}" | head -20
    failures=$((failures + 1))
  fi
done < <(find "${include_dir}/hreduce" -name '*.hpp' | sort)

echo "${checked} header(s) checked, ${failures} failed"
((failures == 0))
