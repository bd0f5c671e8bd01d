"""State and context of the tasklist agent (the builder is ``graphs/tasklist_agent.py``)."""
