"""Scripts run inside each peer's own virtualenv (standard library plus that peer only).

They never import contam-guard or the rest of ``benchmarks``: each is executed by the peer's
interpreter as a file, with paths as arguments, and writes what it found as JSON.
"""
