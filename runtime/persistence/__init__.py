"""What outlives a run: checkpointers, the runs they keep, the home directory and the long-term
memory store with its embeddings."""
