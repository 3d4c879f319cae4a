"""The session summary and state a resident supervisor answers ``create`` and ``attach``
with: the keys of the captured 0.8.0 frames (``real-runs/resident-daemon``), with the values
a fresh session of the sim has."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from sim_agent import records

if TYPE_CHECKING:
    from typing import Any


class Session(Protocol):
    """What a snapshot reads of the supervisor's session (``resident.Session``)."""

    id: str
    header: dict[str, Any]
    pid: int
    summary: dict[str, Any]


def summary(session: Session, session_config: dict[str, Any], file: str) -> dict[str, Any]:
    """The session summary ``create`` answers with (the captured keys)."""
    now = records.iso()
    return {
        "id": session.id,
        "lifecycle": "draft",
        "activity": "working",
        "isSessionActive": False,
        "lastActivityAt": now,
        "runtimeKind": "top-level",
        "rlmDepth": 0,
        "activeSessionId": session.id,
        "sessionId": session.header["id"],
        "sessionFile": file,
        "cwd": session_config["cwd"],
        "model": model_info(str(session_config.get("model", ""))),
        "thinkingLevel": "off",
        "isStreaming": False,
        "isCompacting": False,
        "isBashRunning": False,
        "hasRunningRlmChildren": False,
        "isRunningTools": False,
        "attachedClients": 0,
        "messageCount": 0,
        "unfinishedActionCount": 0,
        "sessionActions": {"queuedCount": 0, "steering": [], "followUps": []},
        "created": session.header["timestamp"],
        "modified": now,
        "diagnostics": [],
        "workerState": "ready",
        "workerPid": session.pid,
    }


def model_info(name: str) -> dict[str, Any]:
    provider, _, model_id = name.partition("/")
    return {
        "id": model_id,
        "name": model_id,
        "api": records.API,
        "provider": provider,
        "baseUrl": "sim://oracle",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 8192,
        "compat": {
            "supportsDeveloperRole": False,
            "supportsReasoningEffort": False,
            "supportsStore": False,
        },
    }


def state(session: Session) -> dict[str, Any]:
    """The session state in an attach snapshot (the captured keys)."""
    summary = session.summary
    return {
        "activeSessionId": session.id,
        "cwd": summary["cwd"],
        "model": summary["model"],
        "thinkingLevel": "off",
        "serviceTier": "default",
        "availableThinkingLevels": ["off"],
        "isStreaming": False,
        "isCompacting": False,
        "isBashRunning": False,
        "retryAttempt": 0,
        "steeringMode": "one-at-a-time",
        "followUpMode": "one-at-a-time",
        "sessionFile": summary["sessionFile"],
        "sessionId": summary["sessionId"],
        "sessionDir": os.path.dirname(summary["sessionFile"]),
        "leafId": None,
        "autoCompactionEnabled": True,
        "messageCount": 0,
        "sessionActions": {"queuedCount": 0, "steering": [], "followUps": []},
        "compactionCount": 0,
        "goal": {
            "active": False,
            "status": "idle",
            "tokensUsed": 0,
            "timeUsedSeconds": 0,
            "continuationsUsed": 0,
        },
        "scopedModels": [],
        "activeToolNames": ["ipython"],
        "contextUsage": {"tokens": 0, "contextWindow": 128000, "percent": 0},
        "heartbeat": None,
    }
