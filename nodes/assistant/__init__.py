"""Nodes of the assistant graph (``graphs/assistant.py``): memory, slash routes, intent, the
bounded tool loop, the answer and its check, reflection."""
