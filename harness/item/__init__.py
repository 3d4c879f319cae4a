"""One work item end to end: its workdir, the agent's processes, collection through the
adapter, the bundle, and its score (also when a saved bundle is scored again)."""
