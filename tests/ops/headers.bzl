"""Puts a cc_library's header files into runfiles.

A cc_library's runfiles hold only its linked outputs; tests that run the
compiler themselves (compile_fail_test.sh) need the headers, and naming them
one by one would let a new public header escape the self-containment check.
"""

def _headers_as_data_impl(ctx):
    headers = depset(transitive = [
        dep[CcInfo].compilation_context.headers
        for dep in ctx.attr.deps
    ])
    return [DefaultInfo(
        files = headers,
        runfiles = ctx.runfiles(transitive_files = headers),
    )]

headers_as_data = rule(
    implementation = _headers_as_data_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)
