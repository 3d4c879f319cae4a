"""One package per agent the harness can run (the adapter seam wraps these)."""
