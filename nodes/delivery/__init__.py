"""Thin LangGraph nodes of the delivery chain; every decision they act on comes from ``policies``."""
