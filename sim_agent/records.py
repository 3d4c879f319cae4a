"""The on-disk shapes the sim writes, copied from the real runs (CONTRACT §4).

Ids, timestamps, usage blocks, message dicts, session files (JSONL with a header and
``parentId``-chained entries) and the spawn ledger. Everything is compact JSON, one object
per line, flushed as written so a killed process leaves whole lines behind.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from sim_agent import jsonio

if TYPE_CHECKING:
    from typing import Any

SESSION_VERSION = 3
LEDGER_VERSION = 1
API = "openai-completions"

#: The scripted model in the real runs was billed $1/M input and $2/M output tokens.
COST_PER_INPUT_TOKEN = 1e-6
COST_PER_OUTPUT_TOKEN = 2e-6
#: Every request of the real scripted model reported 1000 input tokens.
PROMPT_TOKENS = 1000
#: The input tokens each request of this process reports (:func:`set_prompt_tokens`).
_prompt_tokens = PROMPT_TOKENS


def set_prompt_tokens(tokens: int) -> None:
    """Make every request of this process report ``tokens`` input tokens (an item's prompt
    size: see ``Oracle.prompt_tokens``)."""
    global _prompt_tokens
    _prompt_tokens = tokens


def dumps(obj: Any) -> str:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)``, see :mod:`jsonio`."""
    return jsonio.dumps(obj)


def now_ms() -> int:
    return int(time.time() * 1000)


def iso(ms: int | None = None) -> str:
    """``ms`` (default: now) in ISO-8601 UTC with milliseconds, as the product writes it:
    ``...T18:59:42.476Z``."""
    ms = now_ms() if ms is None else ms
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def uuid7() -> str:
    """A time-ordered UUIDv7, the product's session id and session file name format."""
    rand = int.from_bytes(os.urandom(10), "big") >> 6  # 74 random bits
    value = (now_ms() << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62)
    value |= rand & ((1 << 62) - 1)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# os.urandom rather than secrets/uuid: those imports alone cost a child ~5 ms of startup.
def entry_id() -> str:
    return os.urandom(4).hex()


def new_child_id() -> str:
    return "sub-" + os.urandom(4).hex()


def active_session_id() -> str:
    return os.urandom(6).hex()


# --- usage ------------------------------------------------------------------------------


def usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    cost_in = input_tokens * COST_PER_INPUT_TOKEN
    cost_out = output_tokens * COST_PER_OUTPUT_TOKEN
    return {
        "input": input_tokens,
        "output": output_tokens,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": input_tokens + output_tokens,
        "cost": {
            "input": cost_in,
            "output": cost_out,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": cost_in + cost_out,
        },
    }


def usage_for(text: str) -> dict[str, Any]:
    """Plausible usage for a completion of ``text`` (about four characters per token)."""
    return usage(_prompt_tokens, max(5, len(text) // 4))


def add_usage(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return usage(a["input"] + b["input"], a["output"] + b["output"])


def session_usage(path: str) -> dict[str, Any] | None:
    """What the assistant messages of the session file at ``path`` used so far, summed
    (None: no such message, or no file). A torn-down child's usage is attributed from it."""
    total = None
    try:
        with open(path, "rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            entry = jsonio.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            used = message.get("usage")
            if isinstance(used, dict):
                total = used if total is None else add_usage(total, used)
    return total


# --- messages ---------------------------------------------------------------------------


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_call(call_id: str, code: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "ipython", "arguments": {"code": code}}


def assistant_message(
    content: list[dict[str, Any]],
    model: tuple[str, str],
    stop_reason: str,
    usage_block: dict[str, Any] | None = None,
    error_message: str | None = None,
) -> dict[str, Any]:
    """An assistant message; ``usage_block`` defaults to the usage of its own content."""
    if usage_block is None:
        usage_block = usage_for(dumps(content))
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": API,
        "provider": model[0],
        "model": model[1],
        "usage": usage_block,
        "stopReason": stop_reason,
        "timestamp": now_ms(),
        "responseId": f"chatcmpl-sim-{time.time_ns()}",
    }
    if error_message is not None:
        message["errorMessage"] = error_message
    return message


def tool_result(
    call_id: str,
    text: str,
    duration_ms: int,
    diffs: list[dict[str, Any]] | None = None,
    error: dict[str, Any] | None = None,
    stderr: str = "",
    **details: Any,
) -> dict[str, Any]:
    """An ``ipython`` tool result, keys in the product's order.

    ``diffs``: what the cell's ``edit`` skill calls changed (``{path, oldStr, newStr,
    startLine}``, real-runs/child-edits); the key is absent, not empty, when none did.
    ``error``: the exception that escaped the cell (``{ename, evalue, traceback}``): the
    result is then ``status: "error"`` and ``isError``, and the text ends with it.
    """
    body: dict[str, Any] = {
        "durationMs": duration_ms,
        "status": "error" if error else "ok",
        "stdout": text,
        "stderr": stderr,
    }
    if error:
        body["error"] = error
    if diffs:
        body["diffs"] = diffs
    body["kernelRestarted"] = False
    body.update(details)
    shown = text + (f"{error['ename']}: {error['evalue']}\n" if error else "")
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "ipython",
        "content": [text_block(shown)],
        "details": body,
        "isError": error is not None,
        "timestamp": now_ms(),
    }


# --- files ------------------------------------------------------------------------------


def append_line(path: str, obj: dict[str, Any]) -> None:
    """Append one JSON line with a single write (O_APPEND keeps concurrent writers whole)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (dumps(obj) + "\n").encode())
    finally:
        os.close(fd)


def write_json(path: str, obj: dict[str, Any]) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(dumps(obj))
    os.replace(tmp, path)


class SessionFile:
    """A session JSONL: the header line, then entries chained through ``parentId``."""

    def __init__(self, path: str, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header
        self._last_id: str | None = None
        os.makedirs(os.path.dirname(path), exist_ok=True)
        append_line(path, header)

    @property
    def session_id(self) -> str:
        return str(self.header["id"])

    def append(self, entry_type: str, at: str | None = None, **fields: Any) -> dict[str, Any]:
        """Write an entry (dated ``at``, default now); returns it (its ``id`` is what later
        entries point at)."""
        entry = {
            "type": entry_type,
            "id": entry_id(),
            "parentId": self._last_id,
            "timestamp": at or iso(),
        }
        if entry_type == "custom_message":
            # The product writes custom messages with their payload first.
            entry = {
                "type": entry_type,
                **fields,
                **{k: v for k, v in entry.items() if k != "type"},
            }
        else:
            entry.update(fields)
        append_line(self.path, entry)
        self._last_id = entry["id"]
        return entry

    def preamble(self, model: tuple[str, str]) -> None:
        """The entries every real session file starts with after its header."""
        self.append("model_change", provider=model[0], modelId=model[1])
        self.append("thinking_level_change", thinkingLevel="off")
        self.append("service_tier_change", serviceTier="default")


def session_header(
    session_id: str, cwd: str, depth: int, parent_session: str | None = None
) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "version": SESSION_VERSION,
        "id": session_id,
        "timestamp": iso(),
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    header["rlmDepth"] = depth
    return header


# --- the spawn ledger -------------------------------------------------------------------


def ledger_key(sessions_dir: str) -> str:
    import hashlib  # only the process that creates the ledger needs it, once

    return hashlib.sha256(sessions_dir.encode("utf-8")).hexdigest()[:16]


class Ledger:
    """``H/rlm-ledger/<sha256(S)[:16]>.jsonl``; created (with a ``meta`` record) on first use."""

    def __init__(self, agent_home: str, sessions_dir: str) -> None:
        self.sessions_dir = sessions_dir
        self.path = os.path.join(agent_home, "rlm-ledger", ledger_key(sessions_dir) + ".jsonl")

    def _append(self, op: str, **fields: Any) -> None:
        if not os.path.exists(self.path):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            meta = {
                "v": LEDGER_VERSION,
                "op": "meta",
                "at": iso(),
                "sessionsDir": self.sessions_dir,
            }
            append_line(self.path, meta)
        append_line(self.path, {"v": LEDGER_VERSION, "op": op, "at": iso(), **fields})

    def spawn(self, child_id: str, parent: str, child: str, depth: int, name: str) -> None:
        self._append("spawn", childId=child_id, parent=parent, child=child, depth=depth, name=name)

    def delete(self, child_id: str, child: str, reason: str) -> None:
        self._append("delete", childId=child_id, child=child, reason=reason)
