"""The delivery chain on the simulated-latency model, served by ``langgraph dev`` for the
``concurrent_server`` benchmark (from a config it writes into the server's temporary directory)."""

from reins.benchmarks.concurrency import LatencyModel
from reins.graphs.delivery_chain import build_graph
from reins.runtime.llm.models import ModelSet

graph = build_graph(models=ModelSet.uniform(LatencyModel(latency_s=0.2)))
