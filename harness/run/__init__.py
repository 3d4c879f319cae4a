"""A whole run: the scheduler that bounds agents in flight, executing every planned item
through an executor, resuming, the dry run, and the run's exit code."""
