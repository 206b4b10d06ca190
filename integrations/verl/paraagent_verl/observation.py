"""What a step observed, as the text the policy reads next: the observation block of the ParaAct text protocol.

The same format as ``renderObservation`` in src/protocol/OpenAiFormat.ts (docs/protocol.md): a protocol-error line,
then each search in the turn's order with its hits, then each call's result, every body one line of JSON cut to a
character budget. Search hits carry each tool's description and parameter schema: in the token-kept loop the system
prompt is rendered once, so this is where the model learns the signatures. Pure Python; no HTTP.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Dict, List, Mapping, Optional

#: The payload budget of the most recent round (``PolicyPrompt.defaultBudgets.latest``).
LATEST_PAYLOAD_CHARS = 4000

#: The note of the last round (``PolicyPrompt`` text mode).
LAST_ROUND_NOTE = "This is your last round: write your final answer now, in <answer>...</answer>."

NOT_EXECUTED = {"error": {"kind": "not_executed", "message": "the runtime did not execute this call"}}
NOT_SEARCHED = {"error": {"kind": "not_executed", "message": "the runtime did not run this search"}}


def _number(x: float) -> Any:
    # JSON.stringify writes 1.0 as 1
    return int(x) if isinstance(x, float) and math.isfinite(x) and x.is_integer() else x


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def dumps(value: Any) -> str:
    """One line of JSON as ``JSON.stringify`` writes it (no spaces, integral floats without ``.0``, non-ASCII kept)."""
    return json.dumps(_plain(value), separators=(",", ":"), ensure_ascii=False)


def cut(text: str, limit: Optional[int]) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if limit is None or limit < 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def strip_extensions(schema: Any) -> Any:
    """A JSON schema without its ``x-`` keys, at every depth."""
    if isinstance(schema, list):
        return [strip_extensions(v) for v in schema]
    if isinstance(schema, dict):
        return {k: strip_extensions(v) for k, v in schema.items() if not k.startswith("x-")}
    return schema


def _attr(value: Any) -> str:
    return f'"{_number(value)}"' if isinstance(value, (int, float)) and not isinstance(value, bool) else json.dumps(value, ensure_ascii=False)


ToolLookup = Callable[[str], Optional[Mapping[str, Any]]]


def entity_line(spec: Mapping[str, Any]) -> str:
    """The entity marks of a tool (``x-entity``) as one line, as ``OpenAiFormat.entityLine`` writes it, or ""."""
    properties = (spec.get("parameters") or {}).get("properties") or {}
    takes = [f"{name} takes {schema['x-entity']}" for name, schema in properties.items() if isinstance(schema, Mapping) and "x-entity" in schema]
    returns: List[str] = []

    def walk(schema: Any, depth: int) -> None:
        if not isinstance(schema, Mapping) or depth > 6:
            return
        entity = schema.get("x-entity")
        if entity is not None and entity not in returns:
            returns.append(entity)
        walk(schema.get("items"), depth + 1)
        for value in (schema.get("properties") or {}).values():
            walk(value, depth + 1)

    walk(spec.get("response"), 0)
    if not takes and not returns:
        return ""
    parts = takes + ([f"returns {', '.join(returns)}"] if returns else [])
    return f"Entities: {'; '.join(parts)}."


def describe_tool(spec: Mapping[str, Any]) -> str:
    """A tool's description with its entity line (``OpenAiFormat.describeTool``)."""
    line = entity_line(spec)
    description = spec.get("description", "")
    return description if not line else f"{description}\n{line}"


def search_json(result: Mapping[str, Any], lookup: Optional[ToolLookup]) -> Dict[str, Any]:
    """A search result as shown: slot, query, the page of a repeated query, and per hit the name, the score to 3 decimals, description and parameters."""
    tools: List[Dict[str, Any]] = []
    for hit in result.get("hits", []):
        spec = lookup(hit["tool"]) if lookup is not None else None
        entry: Dict[str, Any] = {"name": hit["tool"], "score": round(float(hit["score"]) * 1000) / 1000}
        if spec is not None:
            entry["description"] = describe_tool(spec)
            entry["parameters"] = strip_extensions(spec.get("parameters", {}))
        tools.append(entry)
    shown: Dict[str, Any] = {"slot": result["slot"], "query": result["query"]}
    if result.get("page") is not None:
        shown["page"] = result["page"]
    shown["tools"] = tools
    return shown


def render(step: Mapping[str, Any], lookup: Optional[ToolLookup] = None, max_payload_chars: Optional[int] = LATEST_PAYLOAD_CHARS) -> Optional[str]:
    """The observation block of a step (the server's ``StepResponse.step``), or None when there is nothing to show."""
    lines: List[str] = []
    issue = step.get("protocolError")
    if issue is not None:
        lines.append(f"<protocol-error tag={_attr(issue['tag'])} offset={_attr(issue['offset'])}>{issue['message']}</protocol-error>")
    turn = step.get("turn") or {}
    results = list(step.get("searches", []))
    by_slot = {r["slot"]: r for r in results}
    queries = turn.get("searches") if step.get("turn") is not None else [{"slot": r["slot"], "query": r["query"]} for r in results]
    for q in queries or []:
        found = by_slot.get(q["slot"])
        body = NOT_SEARCHED if found is None else search_json(found, lookup)
        lines += [f"<search slot={_attr(q['slot'])} query={_attr(q['query'])}>", cut(dumps(body), max_payload_chars), "</search>"]
    observations = list(step.get("observations", []))
    by_id = {o["callId"]: o for o in observations}
    listed = [(c["id"], c["tool"]) for c in turn.get("calls", [])]
    listed_ids = {i for i, _ in listed}
    listed += [(o["callId"], o["tool"]) for o in observations if o["callId"] not in listed_ids]
    for call_id, tool in listed:
        o = by_id.get(call_id)
        if o is None:
            status, body = "not_executed", NOT_EXECUTED
        else:
            outcome = o["outcome"]
            status = outcome["_tag"]
            body = outcome.get("payload") if status == "ok" else {"error": dict(outcome.get("error", {}))}
        lines += [f"<result id={_attr(call_id)} tool={_attr(tool)} status={_attr(status)}>", cut(dumps(body), max_payload_chars), "</result>"]
    return None if not lines else "<observation>\n" + "\n".join(lines) + "\n</observation>"


def messages(step: Mapping[str, Any], next_round: Optional[Mapping[str, Any]], lookup: Optional[ToolLookup] = None) -> List[Dict[str, str]]:
    """The user messages that follow the model's turn: the observation, then the last-round note when the next round is the last."""
    out: List[Dict[str, str]] = []
    text = render(step, lookup)
    if text is not None:
        out.append({"role": "user", "content": text})
    if next_round is not None and next_round.get("round", 0) >= next_round.get("maxRounds", 0) - 1:
        out.append({"role": "user", "content": LAST_ROUND_NOTE})
    return out
