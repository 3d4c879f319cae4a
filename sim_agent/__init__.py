"""A real executable stand-in for the ``prime-agent`` CLI, driven by an oracle file.

Run ``agent.py`` (or the ``prime-agent-sim`` shim) with the real CLI's argv; it starts a
detached daemon, spawns real child processes and leaves the same artifacts on disk as the
real CLI (CONTRACT §2-§4), honestly or with a scripted misbehaviour. Standard library only:
nothing here imports the rest of ``harness``, so any Python can run it by file path.
"""
