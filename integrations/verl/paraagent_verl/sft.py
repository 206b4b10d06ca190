"""verl multi-turn SFT over the exported parquet: the ``tools`` column holds JSON text, decoded before the chat template.

Tool parameter schemas differ from tool to tool, so no one Parquet struct holds them without padding every schema
with every other tool's fields; the export stores ``tools`` as a JSON string per row instead. verl's
``MultiTurnSFTDataset`` (verl-project/verl, multiturn_sft_dataset.py) hands that column to ``apply_chat_template``
as it is, so :func:`dataset_class` returns a subclass that decodes it first: point verl at it with
``data.custom_cls.path=<this file> data.custom_cls.name=ParaAgentSFTDataset``.
"""

from __future__ import annotations

import json
from typing import Any, List, Optional


class ToolsColumnError(ValueError):
    """A ``tools`` cell that is not a JSON array of function specs (which row, and why)."""

    def __init__(self, row: int, message: str) -> None:
        super().__init__(f"tools, row {row}: {message}")
        self.row = row
        self.message = message


def decode_tools(value: Any, row: int = 0) -> Optional[List[dict]]:
    """One ``tools`` cell as the list of OpenAI function specs a chat template takes (None and "" stay None)."""
    if value is None or value == "":
        return None
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        return value if isinstance(value, list) else list(value)
    try:
        tools = json.loads(value)
    except json.JSONDecodeError as e:
        raise ToolsColumnError(row, f"not JSON ({e.msg} at {e.pos})") from e
    if not isinstance(tools, list) or not all(isinstance(t, dict) and t.get("type") == "function" for t in tools):
        raise ToolsColumnError(row, "expected a JSON array of {type: function, function: {...}} specs")
    return tools


def dataset_class() -> type:
    """``MultiTurnSFTDataset`` with the ``tools`` column decoded (imports verl: call it where verl is installed)."""
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    class ParaAgentSFTDataset(MultiTurnSFTDataset):
        """verl's multi-turn SFT dataset reading ParaAgent's exported ``tools`` JSON column."""

        def _read_files_and_process(self) -> None:
            super()._read_files_and_process()
            if self.tools is not None:
                self.tools = [decode_tools(t, i) for i, t in enumerate(self.tools)]

    return ParaAgentSFTDataset


def __getattr__(name: str) -> Any:
    # verl loads ``data.custom_cls.name`` from this file by attribute: build the subclass on first access
    if name == "ParaAgentSFTDataset":
        return dataset_class()
    raise AttributeError(name)
