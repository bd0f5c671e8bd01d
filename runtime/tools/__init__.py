"""Tools: the one registry, the runner, the built-in chat tools, MCP servers, skills, memory
tools and the delivery chain's sub-agents."""
