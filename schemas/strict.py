"""The base of every contract object, and the bounded text type they share.

A model's output is data to check, never to repair silently: unknown fields and type coercion are
rejected, and a validated object cannot be changed afterwards.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints


class Strict(BaseModel):
    """The base of every contract schema: unknown fields and type coercion are rejected, and a
    validated object is frozen. Derive your own reviewer's schema from it.

    Example: ``class PrivacyReview(Strict): role: Literal["privacy"]; summary: bounded_text(1000)``
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def bounded_text(max_length: int, min_length: int = 1) -> Any:
    """A string trimmed of surrounding whitespace, then of ``min_length``..``max_length`` characters.

    Example: ``summary: bounded_text(1000)`` in a ``Strict`` schema.
    """
    return Annotated[str, StringConstraints(strip_whitespace=True, min_length=min_length, max_length=max_length)]
