"""The next tool's campaign, its format probes built ahead in a thread while this tool is fuzzed."""

from __future__ import annotations

from typing import Any, Optional

from fuzzer.harnesses.parser.tool import ToolCampaign


class ToolsAhead:
    """The next tool's :class:`~fuzzer.harnesses.parser.tool.ToolCampaign`, its probes built in a thread.

    Building is pure Python on the tool's own source, so the samples are the ones the tool would
    build when its turn came; a build that raises is thrown away and redone in turn, where its
    error is reported as usual."""

    def __init__(self) -> None:
        self._index: Optional[int] = None
        self._tool: Optional[ToolCampaign] = None
        self._thread: Any = None
        self._failed = False

    def start(self, index: int, tool: ToolCampaign) -> None:
        import threading

        self.take(-1)  # an earlier one nobody took (its tool was skipped)
        self._index, self._tool, self._failed = index, tool, False
        self._thread = threading.Thread(target=self._build, name="toolfuzz-probes-ahead", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            self._tool.prepare_probes()
        except BaseException:  # noqa: BLE001 - redone in turn, where it is reported
            self._failed = True

    def take(self, index: int) -> Optional[ToolCampaign]:
        """Tool ``index``'s campaign with its probes built (waits for the thread), or None."""
        if self._thread is None:
            return None
        self._thread.join()
        tool, ok = self._tool, self._index == index and not self._failed
        self._index, self._tool, self._thread = None, None, None
        return tool if ok else None


__all__ = ["ToolsAhead"]
