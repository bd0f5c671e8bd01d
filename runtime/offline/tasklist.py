"""Offline responders for the tasklist contracts."""
