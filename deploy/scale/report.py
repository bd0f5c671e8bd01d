"""The scale-out check's figures and the versions it ran on: collected by the tests, printed at the end."""

REPORT: list[str] = []
