"""swarm-harness: measures whether a multi-agent coding agent really orchestrates a swarm."""

from __future__ import annotations

__version__ = "0.1.0"
