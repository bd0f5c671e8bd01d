"""OfflineModel: the embedded default — a deterministic, rule-based stand-in for a language model.

It is NOT a language model. It answers each Reins contract by rules applied to the contract's
structured inputs, which travel in the call's metadata (``OfflineRequest.inputs``; keyword
checklists, arithmetic), and cuts its answers to the bounds the contract's schema declares
(``reins.runtime.standins.offline.bounds``), so every graph runs offline, in CI and in
``make demo``, with no network and no weights. Each pipeline registers its responders, keyed by
contract name, in its own module of this package; the evaluation's baselines register theirs from
``evals/offline.py``.
"""

from reins.runtime.standins.offline.framework import OfflineModel, OfflineRequest, responder, registered_contracts

# Importing the responder modules registers them.
from reins.runtime.standins.offline import assistant as _assistant  # noqa: E402,F401
from reins.runtime.standins.offline import delivery as _delivery  # noqa: E402,F401
from reins.runtime.standins.offline import tasklist as _tasklist  # noqa: E402,F401

__all__ = ["OfflineModel", "OfflineRequest", "responder", "registered_contracts"]
