"""Agent-neutral ledger events for the rule tests (no file format involved)."""

from __future__ import annotations

from hypothesis import strategies as st

from scorers.records import DeleteEvent, RenameEvent, SpawnEvent

PARENT = "runs/sessions/parent.jsonl"
OTHER = "runs/sessions/other.jsonl"
ROOT = "root-id"


def child(child_id: str) -> str:
    return f"runs/session-artifacts/{ROOT}/{child_id}/s-{child_id}.jsonl"


def spawn(
    child_id: str, name: str, *, depth: int = 1, parent: str = PARENT, at: str = "t"
) -> SpawnEvent:
    return SpawnEvent(child_id, child(child_id), f"s-{child_id}", parent, depth, name, at)


def rename(child_id: str, name: str) -> RenameEvent:
    return RenameEvent(child_id, child(child_id), name, "t")


def delete(child_id: str) -> DeleteEvent:
    return DeleteEvent(child_id, child(child_id), "t")


#: Random ledgers over small alphabets, so that keys, parents and worker names collide.
_child_ids = st.sampled_from(["s1", "s2", "s3"])
_children = st.sampled_from([child("s1"), child("s2"), "elsewhere"])
_names = st.sampled_from(["w-a", "w-b", "x"])
ledger_events = st.lists(
    st.one_of(
        st.builds(
            SpawnEvent,
            _child_ids,
            _children,
            st.just("s"),
            st.sampled_from([PARENT, OTHER]),
            st.sampled_from([1, 2]),
            _names,
            st.sampled_from(["t1", "t2"]),
        ),
        st.builds(RenameEvent, _child_ids, _children, _names, st.just("t")),
        st.builds(DeleteEvent, _child_ids, _children, st.just("t")),
    ),
    max_size=24,
)
