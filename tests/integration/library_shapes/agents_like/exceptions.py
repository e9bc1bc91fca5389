"""openai-agents' exceptions, shaped (``agents.exceptions``): the package re-exports them."""


class AgentsException(Exception):
    """Base class for every exception the SDK raises."""


class ModelBehaviorError(AgentsException):
    """The model did something unexpected: a tool that does not exist, malformed JSON."""


class MaxTurnsExceeded(AgentsException):
    """The run went past max_turns."""
