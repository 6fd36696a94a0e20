"""Build macros shared by the BUILD files of the tests."""

load("@rules_cc//cc:defs.bzl", "cc_test")

def hreduce_cc_test(name, srcs = None, deps = [], **kwargs):
    """A Catch2 test binary: a cc_test that links //tests:catch_main.

    Args:
      name: the test's name.
      srcs: its sources; by default just `name`.cpp.
      deps: its dependencies; //tests:catch_main (Catch2 and its main) is
        added.
      **kwargs: everything else (size, tags, copts, ...) goes to cc_test
        unchanged; the tags "sanitize", "asan" and "ubsan" choose the
        sanitizer runs of .ci/run. A test that names neither size nor
        timeout gets timeout "short": most take seconds, and Bazel warns
        when a test's timeout class (medium's moderate, by default) is far
        above its time.
    """
    if "size" not in kwargs and "timeout" not in kwargs:
        kwargs["timeout"] = "short"
    cc_test(
        name = name,
        srcs = srcs if srcs != None else [name + ".cpp"],
        deps = deps + ["//tests:catch_main"],
        linkopts = kwargs.pop("linkopts", []) + NO_LTO_LINKOPTS,
        **kwargs
    )

# Link-time optimization for the products people run and time: .bazelrc
# compiles the files a call runs through with GCC's intermediate code
# beside their machine code (under the sanitizers, without it: then these
# change nothing).
LTO_LINKOPTS = [
    "-flto=auto",
    "-O3",
    "-march=native",
]

# Everything else links the machine code: GCC's linker plugin would
# otherwise optimize every test's link from the intermediate code, a minute
# each here. Every other cc_binary and cc_test links with these.
NO_LTO_LINKOPTS = ["-fno-lto"]
