"""Claude Code: private dirs, environment and argv for one item, and where its files land.

The lead's ``AgentAdapter`` wraps these; nothing here knows the runner.
"""

from __future__ import annotations

from harness.agents.claude_code.collect import Located, locate, project_dir_name, scorer_inputs
from harness.agents.claude_code.launch import (
    CLAUDE_CODE_VERSION,
    ClaudeCodePaths,
    agent_argv,
    agent_env,
    prepare,
)

__all__ = [
    "CLAUDE_CODE_VERSION",
    "ClaudeCodePaths",
    "Located",
    "agent_argv",
    "agent_env",
    "locate",
    "prepare",
    "project_dir_name",
    "scorer_inputs",
]
