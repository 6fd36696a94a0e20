#!/bin/sh
find "$TEST_SRCDIR" | grep -v _solib | head -30; echo WS=$TEST_WORKSPACE; which g++
exit 1
