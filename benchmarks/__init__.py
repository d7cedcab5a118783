"""contam-guard's benchmark suite (not shipped, not tests): ``make bench`` or ``python -m benchmarks.run``."""
