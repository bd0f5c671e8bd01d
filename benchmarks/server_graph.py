"""The delivery chain on the simulated-latency model, served by ``langgraph dev`` for the
``concurrent_server`` benchmark (from a config it writes into the server's temporary directory)."""

from benchmarks.concurrency import LatencyModel
from graphs.delivery_chain import build_graph
from runtime.llm.models import ModelSet

graph = build_graph(models=ModelSet.uniform(LatencyModel(latency_s=0.2)))
