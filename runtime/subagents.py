"""The delivery chain's five sub-agent tools (scope ``delivery-chain-manager``)."""

from runtime.registry import ToolRegistry


def register(registry: ToolRegistry) -> None:
    """Add the sub-agent tool definitions to ``registry`` (filled in by the delivery-chain work)."""
