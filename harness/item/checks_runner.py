"""The hidden checks' runner: one process runs every edit shard's unittest checks in turn.

Started by :mod:`harness.item.checks` as ``python -I -S -B <this file> <plan.json>`` with the
fresh copy of the repo as its cwd, so it is run by path and imports the standard library
only: an installed harness carries no test framework, and ``-S`` keeps even the harness's
own site-packages (and every ``.pth`` file) out of the checks' process.

The plan (JSON) names the copy's ``root``, the ``shards`` (each ``{"shard", "checks":
[absolute paths]}``), ``shard_limit_s``, ``tail_chars`` and the ``results`` file. The runner
puts ``root`` first on ``sys.path``, refuses the network (an audit hook), and for each shard
loads its check modules by path and runs them with unittest under the shard's own alarm.
It appends to ``results`` one JSON line as it goes: ``{"ready": true}`` once set up,
``{"start": shard}`` before a shard and the shard's outcome after it, so a hard kill keeps
every finished shard and says which one was running.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import ipaddress
import json
import os
import signal
import socket
import sys
import time
import traceback
import unittest
from types import ModuleType
from typing import IO, Any

#: Audit events that reach another host (or ask a resolver about one).
_NET_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
    }
)
_LOCAL_NAMES = frozenset({None, "", "localhost", b"localhost"})


class ShardTimeout(KeyboardInterrupt):
    """A shard's alarm rang. A KeyboardInterrupt, because unittest lets exactly that one
    through (any other exception in a test is that test's error and the run goes on)."""


def _loopback(host: object) -> bool:
    if host in _LOCAL_NAMES:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        return False


def refuse_network(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: anything but a Unix socket or loopback is refused, and says why."""
    if event not in _NET_EVENTS:
        return
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[1]
        if getattr(sock, "family", None) == socket.AF_UNIX or address is None:
            return
        target: object = address[0] if isinstance(address, tuple) and address else address
    elif event == "socket.getnameinfo":
        target = args[0][0] if args and isinstance(args[0], tuple) and args[0] else None
    else:
        target = args[0] if args else None
    if not _loopback(target):
        raise PermissionError(
            f"network refused: the hidden checks run offline ({event} to {target!r})"
        )


class _Tail:
    """A text sink that keeps only the last ``chars`` characters written to it."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        if self._size > 2 * self.chars:
            joined = "".join(self._parts)[-self.chars :]
            self._parts, self._size = [joined], len(joined)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        return "".join(self._parts)[-self.chars :]


def _on_alarm(signum: int, frame: object) -> None:
    raise ShardTimeout


def _load(shard_no: int, paths: list[str]) -> unittest.TestSuite:
    """The shard's check modules, each loaded by path under a name of its own."""
    suite = unittest.TestSuite()
    for i, path in enumerate(paths):
        name = f"swh_check_{shard_no}_{i}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load a check module from {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        suite.addTests(unittest.defaultTestLoader.loadTestsFromModule(module))
    return suite


def _first_failure(result: unittest.TestResult) -> str:
    """A last line naming the first failing test and its error's own last line (after
    unittest's summary, which says only how many failed)."""
    for test, text in [*result.errors, *result.failures]:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        name = test.id().partition(".")[2] or test.id()  # without the module's own name
        return f"\n{name}: {lines[-1] if lines else 'failed'}\n"
    if result.unexpectedSuccesses:
        return f"\n{result.unexpectedSuccesses[0].id()}: passed, but was expected to fail\n"
    return ""


def _owned(module: ModuleType, prefixes: tuple[str, ...]) -> bool:
    """Whether ``module`` came from the copy or the checks (not the standard library)."""
    file = getattr(module, "__file__", None)
    paths = [file] if isinstance(file, str) else []
    with contextlib.suppress(Exception):  # a module's __path__ may be anything
        paths.extend(p for p in getattr(module, "__path__", None) or () if isinstance(p, str))
    return any(p.startswith(prefixes) for p in paths) or module.__name__.startswith("swh_check_")


def run_shard(shard_no: int, entry: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
    """Run one shard's checks under its alarm; its outcome as a results line. What the
    shard changed in the process (modules of the copy, sys.path, cwd, environment) is put
    back afterwards, so the next shard imports the repo afresh."""
    started = time.perf_counter()
    sink = _Tail(int(plan["tail_chars"]))
    modules, path, environ = set(sys.modules), list(sys.path), dict(os.environ)
    results: list[unittest.TestResult] = []

    class Result(unittest.TextTestResult):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            results.append(self)

    outcome = "error"
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(plan["shard_limit_s"]))
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            try:
                suite = _load(shard_no, entry["checks"])
            except Exception:  # a check module that does not import: the shard's error
                sink.write(traceback.format_exc())
            else:
                if suite.countTestCases() == 0:
                    sink.write(f"no tests found in {entry['checks']}\n")
                else:
                    runner = unittest.TextTestRunner(stream=sink, resultclass=Result)
                    result = runner.run(suite)
                    outcome = "passed" if result.wasSuccessful() else "failed"
                    sink.write(_first_failure(result))
    except ShardTimeout:
        outcome = "timed out"
        sink.write(f"\ncut at the shard's limit of {plan['shard_limit_s']} s\n")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        prefixes = (plan["root"] + os.sep, plan["checks_root"] + os.sep)
        for name in set(sys.modules) - modules:
            module = sys.modules.get(name)
            if module is None or _owned(module, prefixes):
                sys.modules.pop(name, None)
        sys.path[:] = path
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(plan["root"])
        importlib.invalidate_caches()
    tests = failures = 0
    if results:
        res = results[0]
        tests = res.testsRun
        failures = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    return {
        "shard": entry["shard"],
        "outcome": outcome,
        "tests": tests,
        "failures": failures,
        "tail": sink.text(),
        "seconds": round(time.perf_counter() - started, 4),
    }


def _emit(out: IO[str], record: dict[str, Any]) -> None:
    out.write(json.dumps(record) + "\n")
    out.flush()  # in the kernel's hands at once: a kill after this keeps the line


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    sys.path.insert(0, plan["root"])
    os.chdir(plan["root"])
    sys.addaudithook(refuse_network)
    with open(plan["results"], "a", encoding="utf-8") as out:
        _emit(out, {"ready": True})
        for shard_no, entry in enumerate(plan["shards"]):
            _emit(out, {"start": entry["shard"]})
            try:
                record = run_shard(shard_no, entry, plan)
            except ShardTimeout:  # the alarm rang between the shard's end and its disarm
                record = {"shard": entry["shard"], "outcome": "timed out", "tail": ""}
            _emit(out, record)
    sys.stdout.flush()
    sys.stderr.flush()
    # Not a normal exit: a thread a check left running, or an atexit hook of the code under
    # test, must not hold the process (or run code) after the last result is written.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
