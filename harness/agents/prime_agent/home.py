"""The user's prime-agent home, and what of it an item's isolated home may copy."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

#: Files copied from the user's agent home into the isolated one (contract §1): credentials
#: and model definitions (custom providers live in models.json). Nothing else.
AGENT_HOME_COPIES = ("auth.json", "models.json")


def source_agent_home(env: Mapping[str, str]) -> Path:
    """The user's agent home: ``$PRIME_AGENT_CODING_AGENT_DIR`` or ``~/.prime/agent``."""
    configured = env.get("PRIME_AGENT_CODING_AGENT_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".prime" / "agent"


def copy_agent_home(source: Path, dest: Path) -> list[str]:
    """Copy auth.json and models.json (if present) into the isolated home; read-only source."""
    copied = []
    for name in AGENT_HOME_COPIES:
        src = source / name
        if src.is_file():
            target = dest / name
            shutil.copyfile(src, target)
            target.chmod(0o600)
            copied.append(name)
    return copied


#: Variables through which providers take their key instead of auth.json.
API_KEY_SUFFIX = "_API_KEY"


def credential_checks(home: Path, env: Mapping[str, str]) -> list[tuple[str, bool, str]]:
    """auth.json (or a provider key in the environment) is needed; models.json only for
    custom providers, so its absence is reported but passes."""
    auth = home / "auth.json"
    keys = sorted(k for k in env if k.endswith(API_KEY_SUFFIX) and env[k])
    if auth.is_file():
        found = ("credentials", True, f"{auth} present")
    elif keys:
        found = (
            "credentials",
            True,
            f"no {auth}; provider keys in the environment: {', '.join(keys)}",
        )
    elif (home / "models.json").is_file():  # a custom provider's key may be in it
        found = ("credentials", True, f"no {auth}; {home / 'models.json'} defines providers")
    else:
        found = ("credentials", False, f"no {auth} and no *{API_KEY_SUFFIX} variable")
    models = home / "models.json"
    detail = f"{models} " + (
        "present" if models.is_file() else "absent (needed only for custom providers)"
    )
    return [found, ("models.json", True, detail)]
