"""A fault plan: which requests the scripted server fails, and how, as a real provider would.

A plan is a list of rules; the first rule that matches a request decides its fault. A rule
names a kind (:data:`KINDS`) and narrows which requests it takes:

- ``scope``: ``parent``, ``children`` or ``any`` (``any`` includes the client's internal
  calls, which the other two never take);
- ``first=N``: only each conversation's first N requests (a conversation is one agent's
  thread: the parent's, or one child's, told apart by its first prompt and its working
  directory, so every item and every attempt of an item is its own);
- ``phase``: ``spawn`` or ``write``: only the request whose answer would spawn the
  children, or write the artifact (``any``: every request);
- ``share=P``: a seeded share of the matching requests (the same requests every time for
  one seed);
- ``window=A-B``: only between A and B seconds of the server's life;
- ``times=N``: at most N faults from this rule in all;
- ``fail-fast``: the answer carries ``x-should-retry: false`` (the Anthropic SDKs' signal
  not to retry); ``retry-after=S``: the ``retry-after`` header of a 429, 529 or 503.

Failed requests bill nothing. The written form (``--faults`` of selftest and of ``python -m
scripted_model``): rules separated by ``;``, each ``KIND[,key=value|flag]...``, e.g.
``overloaded,scope=children,first=1;server_error,scope=parent,phase=write,times=1,fail-fast``.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from typing import Literal

#: Each kind's HTTP status (0: no HTTP answer) and the Anthropic / OpenAI error type.
KINDS: dict[str, tuple[int, str]] = {
    "rate_limited": (429, "rate_limit_error"),
    "overloaded": (529, "overloaded_error"),
    "server_error": (500, "api_error"),
    "unavailable": (503, "api_error"),
    # 200 and the first events of the answer, then the connection closes mid-stream.
    "stream_cut": (0, ""),
    # 200 and the stream's headers, then silence for ``stall_s``, then the connection closes.
    "stall": (0, ""),
    # The connection closes before any answer (the client reads an empty reply).
    "drop": (0, ""),
    # Nothing listens during the rule's window: connections are refused.
    "refused": (0, ""),
}
MESSAGES = {
    "rate_limited": "Rate limited: too many requests (scripted fault)",
    "overloaded": "Overloaded (scripted fault)",
    "server_error": "Internal server error (scripted fault)",
    "unavailable": "Service unavailable (scripted fault)",
}
Scope = Literal["any", "parent", "children"]
Phase = Literal["any", "spawn", "write"]
#: A stall's silence when the rule does not say: longer than a scripted answer ever takes,
#: short enough that a client with no read timeout of its own still finishes a test.
DEFAULT_STALL_S = 30.0


class FaultSpecError(ValueError):
    """A fault plan's written form that does not parse; the message names the part."""


@dataclass(frozen=True)
class FaultRule:
    kind: str
    scope: Scope = "any"
    first: int | None = None
    phase: Phase = "any"
    share: float | None = None
    window: tuple[float, float] | None = None
    times: int | None = None
    fail_fast: bool = False
    retry_after: float | None = None
    stall_s: float = DEFAULT_STALL_S

    @property
    def status(self) -> int:
        return KINDS[self.kind][0]

    @property
    def error_type(self) -> str:
        return KINDS[self.kind][1]

    @property
    def message(self) -> str:
        return MESSAGES.get(self.kind, self.kind)

    def headers(self) -> dict[str, str]:
        """The headers of an HTTP error answer for this rule."""
        headers = {}
        if self.fail_fast:
            headers["x-should-retry"] = "false"
        if self.retry_after is not None and self.status in (429, 503, 529):
            headers["retry-after"] = f"{self.retry_after:g}"
        return headers


@dataclass(frozen=True)
class Request:
    """What a rule looks at in one request."""

    caller: Literal["parent", "child", "internal"]
    conversation: str
    #: Which request of its conversation this is, from 1 (retries count).
    number: int
    phase: Phase


@dataclass
class FaultPlan:
    """The rules, the seed of their shares, and what they served (thread-safe)."""

    rules: tuple[FaultRule, ...] = ()
    seed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _started: float = field(default_factory=time.monotonic, repr=False)
    _seen: Counter[str] = field(default_factory=Counter, repr=False)
    _used: Counter[int] = field(default_factory=Counter, repr=False)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def number(self, conversation: str) -> int:
        """Count one more request of ``conversation``; its number (from 1)."""
        with self._lock:
            self._seen[conversation] += 1
            return self._seen[conversation]

    def fault_for(self, request: Request) -> FaultRule | None:
        """The rule that fails ``request`` (counted against its ``times``), or None."""
        now = self.elapsed()
        with self._lock:
            for n, rule in enumerate(self.rules):
                if rule.kind == "refused" or not self._matches(n, rule, request, now):
                    continue
                if rule.times is not None and self._used[n] >= rule.times:
                    continue
                self._used[n] += 1
                return rule
        return None

    def refusing(self) -> FaultRule | None:
        """A ``refused`` rule whose window is open now (the server stops listening)."""
        now = self.elapsed()
        for rule in self.rules:
            if rule.kind == "refused" and rule.window and rule.window[0] <= now < rule.window[1]:
                return rule
        return None

    def _matches(self, n: int, rule: FaultRule, request: Request, now: float) -> bool:
        if rule.scope == "parent" and request.caller != "parent":
            return False
        if rule.scope == "children" and request.caller != "child":
            return False
        if rule.first is not None and request.number > rule.first:
            return False
        if rule.phase != "any" and rule.phase != request.phase:
            return False
        if rule.window is not None and not rule.window[0] <= now < rule.window[1]:
            return False
        if rule.share is not None:
            digest = hashlib.sha256(
                f"{self.seed}:{n}:{request.conversation}:{request.number}".encode()
            ).digest()
            return int.from_bytes(digest[:8], "big") / 2**64 < rule.share
        return True


def conversation_key(api: str, model: str, first_prompt: str, cwd: str | None) -> str:
    """One agent thread's identity: its first prompt in its working directory."""
    text = f"{api}\0{model}\0{cwd or ''}\0{first_prompt}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_faults(spec: str, seed: int = 0) -> FaultPlan:
    """The plan a written form describes (:class:`FaultSpecError` naming the bad part)."""
    rules = []
    for raw in spec.split(";"):
        text = raw.strip()
        if text:
            rules.append(_rule(text))
    return FaultPlan(tuple(rules), seed)


def _rule(text: str) -> FaultRule:
    kind, *parts = [p.strip() for p in text.split(",")]
    kind = kind.replace("-", "_")
    if kind not in KINDS:
        raise FaultSpecError(f"fault {text!r}: unknown kind {kind!r} (known: {', '.join(KINDS)})")
    rule = FaultRule(kind)
    for part in parts:
        name, has_value, value = part.partition("=")
        name = name.strip().replace("_", "-")
        try:
            rule = _option(rule, name, value.strip(), bool(has_value))
        except (ValueError, TypeError) as exc:
            raise FaultSpecError(f"fault {text!r}: {part!r}: {exc}") from None
    if kind == "refused" and rule.window is None:
        raise FaultSpecError(f"fault {text!r}: 'refused' needs window=A-B (seconds)")
    return rule


def _option(rule: FaultRule, name: str, value: str, has_value: bool) -> FaultRule:
    if name == "fail-fast" and not has_value:
        return replace(rule, fail_fast=True)
    if not has_value:
        raise ValueError("expected key=value")
    if name == "scope":
        if value not in ("any", "parent", "children"):
            raise ValueError("scope is any, parent or children")
        return replace(rule, scope=value)  # type: ignore[arg-type]
    if name == "phase":
        if value not in ("any", "spawn", "write"):
            raise ValueError("phase is any, spawn or write")
        return replace(rule, phase=value)  # type: ignore[arg-type]
    if name in ("first", "times"):
        count = int(value)
        if count < 1:
            raise ValueError("a count of at least 1")
        return replace(rule, first=count) if name == "first" else replace(rule, times=count)
    if name == "share":
        share = float(value)
        if not 0.0 <= share <= 1.0:
            raise ValueError("a share in [0, 1]")
        return replace(rule, share=share)
    if name == "window":
        start, _, end = value.partition("-")
        window = (float(start), float(end))
        if not 0 <= window[0] < window[1]:
            raise ValueError("window=A-B with 0 <= A < B seconds")
        return replace(rule, window=window)
    if name in ("retry-after", "stall-s"):
        seconds = float(value)
        if seconds < 0:
            raise ValueError("seconds >= 0")
        if name == "retry-after":
            return replace(rule, retry_after=seconds)
        return replace(rule, stall_s=seconds)
    raise ValueError(
        "unknown option (known: scope, first, phase, share, window, times, fail-fast, "
        "retry-after, stall-s)"
    )


#: How often a stalled answer looks whether the server is stopping.
STALL_POLL_S = 0.05


def break_stream(
    handler: BaseHTTPRequestHandler, rule: FaultRule, partial: bytes, stopping: Callable[[], bool]
) -> None:
    """Serve a fault of the plan that is no HTTP error, on any API: no answer at all
    (``drop``), the first bytes of an answer (``partial``) then the connection closed
    (``stream_cut``), or the headers then silence until the stall ends (billed nothing)."""
    handler.close_connection = True
    if rule.kind == "drop":
        return  # the client reads an empty reply
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    # A length the stream never reaches: the client sees it end early.
    handler.send_header("content-length", str(len(partial) * 4 + 1024))
    handler.end_headers()
    if rule.kind == "stream_cut":
        handler.wfile.write(partial)
        handler.wfile.flush()
        return
    handler.wfile.flush()  # a stall: the headers, then silence
    deadline = time.monotonic() + rule.stall_s
    while time.monotonic() < deadline and not stopping():
        time.sleep(STALL_POLL_S)
