"""The process-wide kernel registry (it lives in libet_ops.so, shared with C++)."""

import os

from . import _et_ops
from .errors import LibraryError, UsageError


def registered_operators():
    """Every registration record: dicts with op, key, component, version, library,
    fingerprint, schema and active (False for an identical copy kept behind
    the active one under 'first-wins')."""
    return _et_ops.registered_operators()


def counters():
    """Registry counters: registered, deduplicated, conflicts, unregistered."""
    return _et_ops.counters()


def set_duplicate_policy(policy):
    """Chooses what happens when two different copies of a kernel meet:
    'fatal' (abort the process) or 'first-wins' (keep the first; identical
    copies are deduplicated, different ones rejected). Overrides
    ET_OPS_DUPLICATE_POLICY. Any other value raises et_ops.UsageError (a
    ValueError)."""
    if policy not in ("fatal", "first-wins"):
        raise UsageError(f"invalid duplicate policy {policy!r}: valid values are 'fatal' and 'first-wins'")
    _et_ops.set_duplicate_policy(policy)


def clear_duplicate_policy():
    """Forgets set_duplicate_policy(): ET_OPS_DUPLICATE_POLICY and the build default apply again."""
    _et_ops.clear_duplicate_policy()


def duplicate_policy():
    """The policy the next registration uses: dict with policy, source and error."""
    return _et_ops.duplicate_policy()


def load_library(path):
    """Registers the kernel library at `path`, as `et-ops --load-library` does.

    Returns the counts of the batch: registered, deduplicated, unchanged
    (records already registered with the very same functions), plus the
    library's canonical path and component. Raises LibraryError when the
    library cannot be loaded, is not an et_ops kernel library, or the
    registry rejects it. Under the 'fatal' policy a second copy of an
    already registered kernel, identical or not, aborts the process, by
    design.
    """
    path = os.fspath(path)
    outcome = _et_ops.load_library(path)
    if outcome["status"] != "ok":
        raise LibraryError(outcome["message"], outcome["status"], path)
    return {key: outcome[key] for key in ("registered", "deduplicated", "unchanged", "library", "component")}


def unregister_library(path):
    """Removes every record that came from the shared object at `path`; returns how many."""
    return _et_ops.unregister_library(os.fspath(path))
