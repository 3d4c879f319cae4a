"""Small builders for synthetic prime-agent runs, all in memory (``io.BytesIO`` openers).

``honest_run()`` is a resolved three-shard run; each cheat test starts from it (or from
an empty :class:`Run`) and changes one thing.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from scorers import ItemScore, Manifest, Shard
from scorers.prime_agent import ChildSessionFile, PrimeAgentArtifacts, score_prime_agent

RUN = "/srv/evals/t"
PARENT_FILE = f"{RUN}/sessions/01aa-parent-file.jsonl"  # the file name is not the header id
ROOT_ID = "01bb-root-header-id"
OTHER_PARENT_FILE = f"{RUN}/sessions/01cc-other-root.jsonl"
AT = "2026-11-29T18:59:42.476Z"

SHARDS = (("shard-a.txt", 3), ("shard-b.txt", 5), ("shard-c.txt", 6))
WORKERS = tuple("worker-" + file.removesuffix(".txt") for file, _ in SHARDS)
MANIFEST = Manifest(
    name="word-counts",
    artifact="combined-index.md",
    shards=tuple(
        Shard(file=file, worker=worker, question="How many words?", expected=n)
        for (file, n), worker in zip(SHARDS, WORKERS, strict=True)
    ),
)
ANSWERS = {
    worker: f"ANSWER::{file}::{n} words" for (file, n), worker in zip(SHARDS, WORKERS, strict=True)
}
CORRECT_ARTIFACT = "# Index\n\n" + "".join(f"- {file}: {n} words\n" for file, n in SHARDS)


def session_id(child_id: str) -> str:
    """The session id (file stem) the builders give a child."""
    return f"sess-{child_id}"


def child_path(child_id: str, root_id: str = ROOT_ID) -> str:
    return f"{RUN}/session-artifacts/{root_id}/{child_id}/{session_id(child_id)}.jsonl"


def jsonl(*records: object) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


def opener(data: bytes) -> Callable[[], io.BytesIO]:
    return lambda: io.BytesIO(data)


class Ledger:
    """Appends ledger records in order."""

    def __init__(self) -> None:
        self.data = jsonl({"v": 1, "op": "meta", "at": AT, "sessionsDir": f"{RUN}/sessions"})

    def raw(self, data: bytes) -> Ledger:
        self.data += data
        return self

    def record(self, **fields: object) -> Ledger:
        return self.raw(jsonl({"v": 1, "at": AT} | fields))

    def spawn(
        self,
        child_id: str,
        name: str,
        *,
        depth: int = 1,
        parent: str = PARENT_FILE,
        child: str | None = None,
    ) -> Ledger:
        child = child or child_path(child_id)
        return self.record(
            op="spawn", childId=child_id, parent=parent, child=child, depth=depth, name=name
        )

    def rename(self, child_id: str, name: str, *, child: str | None = None) -> Ledger:
        return self.record(
            op="rename", childId=child_id, child=child or child_path(child_id), name=name
        )

    def delete(self, child_id: str, *, child: str | None = None, reason: str = "user") -> Ledger:
        child = child or child_path(child_id)
        return self.record(op="delete", childId=child_id, child=child, reason=reason)


class Transcript:
    """The parent transcript: a header, then entries in order."""

    def __init__(self, header_id: str | None = ROOT_ID) -> None:
        header = {"type": "session", "version": 3, "id": header_id, "timestamp": AT}
        self.data = jsonl(header) if header_id is not None else b""

    def raw(self, data: bytes) -> Transcript:
        self.data += data
        return self

    def entry(self, **fields: object) -> Transcript:
        return self.raw(jsonl({"id": "e", "parentId": None, "timestamp": AT} | fields))

    def custom(self, custom_type: str, details: object) -> Transcript:
        return self.entry(type="custom_message", customType=custom_type, details=details)

    def reply(
        self,
        child_id: str,
        *,
        relationship: str = "child",
        sender: str | None = None,
        message: str | None = None,
        at: str | None = AT,
    ) -> Transcript:
        sender = sender or session_id(child_id)
        details = {
            "message": f"ANSWER from {child_id}" if message is None else message,
            "from": {"sessionId": sender, "sessionName": child_id},
            "fromRelationship": relationship,
        }
        entry = {"id": "e", "parentId": None, "type": "custom_message"}
        entry |= {"customType": "agent_message", "details": details}
        return self.raw(jsonl(entry | ({"timestamp": at} if at is not None else {})))

    def notice(self, child_id: str, kind: str = "completed_without_reply") -> Transcript:
        return self.custom("rlm_child_terminal_notice", {"kind": kind, "childId": child_id})

    def failure(self, child_id: str, error: str = "boom") -> Transcript:
        return self.custom("rlm_child_failure", {"childId": child_id, "error": error})

    def child_usage(self, tokens: int, aggregate: int = 999_999) -> Transcript:
        return self.entry(
            type="child_usage_attributed",
            childUsage={"input": tokens, "output": 0, "totalTokens": tokens},
            aggregateUsage={"input": aggregate, "totalTokens": aggregate},
        )

    def assistant(self, tokens: int, stop: str = "stop", error: str | None = None) -> Transcript:
        return self.entry(type="message", message=assistant_message(tokens, stop, error))


def assistant_message(tokens: int, stop: str = "stop", error: str | None = None) -> dict:
    message: dict[str, object] = {
        "role": "assistant",
        "content": [],
        "stopReason": stop,
        "usage": {"input": max(tokens - 1, 0), "output": min(tokens, 1), "totalTokens": tokens},
    }
    if error is not None:
        message["errorMessage"] = error
    return message


def child_session(
    child_id: str,
    *,
    parent: str = PARENT_FILE,
    depth: object = 1,
    started: str | None = AT,
    task_for: str | None = None,
    task_from: str = ROOT_ID,
    stops: tuple[str, ...] = ("toolUse", "stop"),
    hollow: bool = False,
) -> bytes:
    """A child session file as the product writes it: header, the parent's task addressed
    to ``task_for`` (default: this child), then one assistant message per stop reason."""
    header: dict[str, object] = {"type": "session", "version": 3, "id": session_id(child_id)}
    if started is not None:
        header["timestamp"] = started
    header |= {"cwd": f"{RUN}/repo", "parentSession": parent, "rlmDepth": depth}
    if hollow:
        return jsonl(header)
    task = {
        "type": "custom_message",
        "customType": "agent_message",
        "content": "[task from parent]\n\nCount the words.",
        "details": {
            "id": f"spawn:{task_for or child_id}",
            "message": "Count the words.",
            "from": {"sessionId": task_from},
            "fromRelationship": "parent",
        },
        "id": "t",
        "parentId": None,
        "timestamp": AT,
    }
    turns = [
        {"type": "message", "id": f"m{i}", "parentId": "t", "timestamp": AT}
        | {"message": assistant_message(100, stop, "boom" if stop == "error" else None)}
        for i, stop in enumerate(stops)
    ]
    return jsonl(header, {"type": "session_info", "name": child_id}, task, *turns)


class Stream:
    """The CLI's ``--mode json`` stdout: the header, ``agent_start``, the events added,
    and ``agent_end`` unless the stream was :meth:`cut` short."""

    def __init__(self) -> None:
        self.body = b""
        self.open = False
        self.replaced: bytes | None = None

    @property
    def data(self) -> bytes:
        if self.replaced is not None:
            return self.replaced
        head = jsonl({"type": "session", "version": 3, "id": ROOT_ID}, {"type": "agent_start"})
        end = b"" if self.open else jsonl({"type": "agent_end", "messages": []})
        return head + self.body + end

    @data.setter
    def data(self, value: bytes) -> None:
        """Replace the whole stream (a test that edits the bytes)."""
        self.replaced = value

    def raw(self, data: bytes) -> Stream:
        self.body += data
        return self

    def cut(self) -> Stream:
        """End mid-turn: the agent was stopped before its ``agent_end``."""
        self.open = True
        return self

    def assistant(self, tokens: int, stop: str = "toolUse", error: str | None = None) -> Stream:
        message = assistant_message(tokens, stop, error)
        user = {"role": "user", "content": "task"}
        return self.raw(
            jsonl(
                {"type": "message_end", "message": user},
                {"type": "message_start", "message": message},
                {"type": "message_update", "message": message},
                {"type": "message_end", "message": message},
                {"type": "turn_end", "message": message, "toolResults": []},
            )
        )


@dataclass
class Run:
    """One run's artifacts; ``None`` means the artifact is missing."""

    ledger: Ledger | None = None
    transcript: Transcript | None = field(default_factory=Transcript)
    stream: Stream | None = field(default_factory=Stream)
    artifact: str | bytes | None = CORRECT_ARTIFACT
    children: list[ChildSessionFile] = field(default_factory=list)
    parent_paths: tuple[str, ...] = (PARENT_FILE,)

    def present(self, *child_ids: str, data: bytes | None = None) -> Run:
        """Mark depth-1 child session files as collected (an honest child's file unless
        ``data`` is given)."""
        for child_id in child_ids:
            content = child_session(child_id) if data is None else data
            self.children.append(
                ChildSessionFile((child_id,), f"{session_id(child_id)}.jsonl", opener(content))
            )
        return self

    def artifacts(self) -> PrimeAgentArtifacts:
        artifact = self.artifact.encode() if isinstance(self.artifact, str) else self.artifact
        return PrimeAgentArtifacts(
            parent_session_paths=self.parent_paths,
            ledger=opener(self.ledger.data) if self.ledger is not None else None,
            parent_transcript=opener(self.transcript.data) if self.transcript else None,
            stdout=opener(self.stream.data) if self.stream is not None else None,
            artifact=opener(artifact) if artifact is not None else None,
            child_sessions=tuple(self.children),
        )

    def score(self, manifest: Manifest = MANIFEST) -> ItemScore:
        return score_prime_agent(self.artifacts(), manifest)


def honest_run() -> Run:
    """Three workers spawned, present on disk, each replying; a correct artifact."""
    ledger = Ledger()
    transcript = Transcript()
    stream = Stream().assistant(1000)
    for worker in WORKERS:
        ledger.spawn(f"sub-{worker}", worker)
    for worker in WORKERS:
        transcript.reply(f"sub-{worker}", message=ANSWERS[worker]).child_usage(100)
        stream.assistant(1000)
    stream.assistant(500, stop="stop")
    run = Run(ledger=ledger, transcript=transcript, stream=stream)
    return run.present(*(f"sub-{worker}" for worker in WORKERS))
