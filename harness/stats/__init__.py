"""Statistics: rates and intervals, the fixed-suite strata, power planning, per-fixture
summaries and the candidate-vs-baseline comparison with its gate. Pure functions of item
results; they build the records of :mod:`harness.model`."""
