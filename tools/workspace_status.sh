#!/usr/bin/env bash
# Bazel's workspace status (.bazelrc --workspace_status_command): the commit
# `hreduce --version` names. Prints nothing outside a git checkout.
commit=$(git rev-parse --short=12 HEAD 2>/dev/null) || exit 0
git diff --quiet HEAD -- 2>/dev/null || commit="${commit}-dirty"
echo "STABLE_HREDUCE_COMMIT ${commit}"
