"""Executors and agent loops shaped like the libraries users write them with — LangGraph's ToolNode
and RetryPolicy, stamina, backoff; openai-agents, pydantic-ai, smolagents — written here from the
libraries' documented behaviour (none of them is imported), with the policies that state what each
library documents (``*.toml``). The tests in ``test_library_shapes.py`` run the harnesses on them."""
