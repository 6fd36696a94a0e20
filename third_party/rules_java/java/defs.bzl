"""Offline stand-in for rules_java: re-exports the native rules Bazel 4 loads."""

def java_import(**attrs):
    native.java_import(**attrs)

def java_runtime(**attrs):
    native.java_runtime(**attrs)

def java_toolchain(**attrs):
    native.java_toolchain(**attrs)

def java_library(**attrs):
    native.java_library(**attrs)

def java_binary(**attrs):
    native.java_binary(**attrs)
