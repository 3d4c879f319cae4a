"""An ATIF trajectory as the rubric's evidence: score a run from its trajectory alone.

The rules judge :class:`scorers.records.RunEvidence` whatever it was read from; this package
reads it from an Agent Trajectory Interchange Format document (ATIF v1.7+: embedded
``subagent_trajectories`` and ``subagent_trajectory_ref``), ours (written by ``export``) or
another tool's. What a trajectory must hold, and what is read from where:

- **spawns**: an observation result of the root whose ``subagent_trajectory_ref`` names a
  child. Ours mark it (``extra.swarm_harness.role == "spawn"``, with the worker name, the
  spawn's time and ledger order); in another's the first result naming a child is its
  spawn, named by the spawning call's ``description``, ``name`` or ``task_name`` argument.
- **children**: each embedded subagent trajectory is the child session of the ref naming its
  ``trajectory_id``; a spawn whose child is not embedded has no session (as a ledger edge
  with no session file: delegation fails).
- **receipts**: ours are ``system`` steps whose result refers to the child with role
  ``reply`` (the text received) or ``notice``/``failure``; in another's, a result referring
  to a child counts as its reply when it contains the child's last agent message.
- **the answer**: ``extra.swarm_harness.answer`` (ours), else the root's last tool call that
  writes the fixture's artifact (a ``content`` argument beside a path argument naming it).

- **edits** (an edit fixture's): the final tree and every write, carried by ours in the
  root's ``extra`` (:mod:`scorers.atif.edits`, which says why they are not re-derived from
  the tool calls).

What cannot be read is never guessed: with no answer, coverage and provenance are
*unscorable*; with a spawn that names no worker, so are delegation, dedup and provenance;
on an edit fixture, with no final tree, coverage and provenance are, and with no writes,
provenance and lanes.
"""

from scorers.atif.evidence import TrajectoryEvidence, trajectory_evidence

__all__ = ["TrajectoryEvidence", "trajectory_evidence"]
