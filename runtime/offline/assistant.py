"""Offline responders for the assistant contracts."""
