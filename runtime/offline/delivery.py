"""Offline responders for the delivery contracts."""
