"""Node functions of the tasklist agent; each asks the state-machine guard before it acts."""
