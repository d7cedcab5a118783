"""The scanning library: the spec and kernels, the matcher, the rule families and rules, a
scan's accumulation and its one post-scan step, registering sets and scrubbing records."""
