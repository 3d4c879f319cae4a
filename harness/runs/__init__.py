"""Past runs on disk: listing them, ``latest``, and the lock that keeps one process per
run directory."""
