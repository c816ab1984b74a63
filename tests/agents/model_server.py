"""A scripted model server on 127.0.0.1 for live agent tests: just enough of a provider's API.

It speaks the Anthropic Messages API (Claude Code), the OpenAI Chat Completions API (Qwen Code,
Copilot CLI), the OpenAI Responses API (Codex CLI, streamed) and the Gemini API (Gemini CLI),
streaming (server-sent events) or not. Each agent turn is scripted: the first user prompt of the conversation picks a script by
keyword, and each model call of that turn answers the next round of it — tool calls (by the
tool's name as the agent offers it, with the input the script gives), then plain text that
ends the turn. Between two rounds the server can change files on disk, which is how "the person
edits while the agent thinks" is tested. A model call with no tools (agents ask small side
questions: a title, a summary) gets a short text.

Run: ``python model_server.py SCRIPT.json PORT_FILE`` (the port chosen is written to PORT_FILE).
SCRIPT.json: ``{"turns": {"<keyword in the prompt>": [round, ...]}}`` where a round is
``{"calls": [{"tool": "Write", "input": {...}}, ...], "before": {"<abs path>": "<content>"}}``
or ``{"text": "done"}``; a call of a freeform tool (``"type": "custom"``: Codex's ``apply_patch`` in
the Responses API, Copilot CLI's for GPT models in Chat Completions) gives its input as a string. Requests and answers are logged to
stderr, one line each. With ``"requests": "<abs path>"`` in SCRIPT.json, every request body is
also appended to that file, one JSON line each (a test reads what the agent sent the model: a
slash command's expanded text). An input value ``{"$from_result": "REGEX"}`` is replaced by
REGEX's first group in the text of the tool results the agent just sent (a confirmation token
the previous call answered).
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class Script:
    def __init__(self, turns: dict[str, list[dict]], requests: str | None = None) -> None:
        self.turns = turns
        self.requests = requests
        self.lock = threading.Lock()
        self.done_before: set[tuple[str, int]] = set()  # (keyword, round) whose 'before' ran
        self.counter = 0

    def next_id(self, prefix: str) -> str:
        with self.lock:
            self.counter += 1
            return f"{prefix}_mock{self.counter:04d}"

    def round_for(self, messages: list[dict]) -> tuple[str | None, int]:
        """(the script's keyword, how many tool rounds this turn already had) for a conversation:
        the turn is the last user message that holds text rather than tool results."""
        start = 0
        for i, message in enumerate(messages):
            if message.get("role") == "user" and _text_of(message).strip():
                start = i
        prompt = _text_of(messages[start]) if messages else ""
        keyword = next((k for k in self.turns if k in prompt), None)
        rounds = sum(1 for m in messages[start:] if m.get("role") == "assistant" and _has_tool_use(m))
        return keyword, rounds

    def answer(self, body: dict) -> list[dict]:
        """The content blocks of the next answer."""
        if not body.get("tools"):
            return [{"type": "text", "text": "ok"}]
        messages = body.get("messages") or _responses_messages(body.get("input")) or _gemini_messages(body.get("contents", []))
        keyword, n = self.round_for(messages)
        rounds = self.turns.get(keyword or "", [])
        if n >= len(rounds):
            return [{"type": "text", "text": "done"}]
        step = rounds[n]
        with self.lock:
            if (keyword or "", n) not in self.done_before:
                self.done_before.add((keyword or "", n))
                for path, content in step.get("before", {}).items():
                    Path(path).write_text(content)
        if "text" in step:
            return [{"type": "text", "text": step["text"]}]
        offered = {_tool_name(tool) for tool in body.get("tools", [])}
        offered |= {d.get("name") for tool in body.get("tools", []) for d in tool.get("functionDeclarations", [])}
        freeform = {_tool_name(tool) for tool in body.get("tools", []) if tool.get("type") == "custom"}
        blocks = []
        for call in step["calls"]:
            if call["tool"] not in offered:
                raise KeyError(f"the agent offers no tool {call['tool']!r}: {sorted(n for n in offered if n)}")
            if (call["tool"] in freeform) != isinstance(call["input"], str):
                raise KeyError(f"{call['tool']!r} takes {'a string' if call['tool'] in freeform else 'an object'} as its input")
            blocks.append({"type": "tool_use", "id": self.next_id("toolu"), "name": call["tool"],
                           "input": _filled(call["input"], body.get("messages") or []),
                           **({"freeform": True} if call["tool"] in freeform else {})})
        return blocks


def _tool_name(tool: dict) -> str | None:
    """A tool's name as an API offers it: ``name`` (Anthropic, Responses API), ``function.name``
    (Chat Completions) or ``custom.name`` (a Chat Completions freeform tool: Copilot CLI's
    ``apply_patch`` for GPT models)."""
    return tool.get("name") or (tool.get("function") or {}).get("name") or (tool.get("custom") or {}).get("name")


def _chat_call(block: dict, index: int | None = None) -> dict:
    """One Chat Completions tool call: a function with JSON arguments, or a freeform (custom)
    tool with its input as it is."""
    where = {} if index is None else {"index": index}
    if block.get("freeform"):
        return {**where, "id": block["id"], "type": "custom", "custom": {"name": block["name"], "input": block["input"]}}
    return {**where, "id": block["id"], "type": "function",
            "function": {"name": block["name"], "arguments": json.dumps(block["input"])}}


def _filled(value: Any, messages: list[dict]) -> Any:
    """``value`` with every ``{"$from_result": REGEX}`` replaced from the last tool results."""
    if isinstance(value, dict) and set(value) == {"$from_result"}:
        import re

        results = messages[-1].get("content") if messages else None
        text = json.dumps(results)
        found = re.search(value["$from_result"], text)
        if found is None:
            raise KeyError(f"{value['$from_result']!r} is not in the last tool results: {text[:500]}")
        return found.group(1)
    if isinstance(value, dict):
        return {k: _filled(v, messages) for k, v in value.items()}
    return value


def _text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _has_tool_use(message: dict) -> bool:
    """Whether an assistant message called tools (Anthropic ``tool_use`` blocks, OpenAI ``tool_calls``)."""
    if message.get("tool_calls"):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)


def _gemini_messages(contents: list[dict]) -> list[dict]:
    """Gemini's ``contents`` in the shape ``round_for`` reads (roles user/assistant, text and
    tool calls)."""
    out = []
    for content in contents:
        parts = content.get("parts") or []
        text = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
        calls = [p for p in parts if isinstance(p, dict) and "functionCall" in p]
        role = "assistant" if content.get("role") == "model" else "user"
        if role == "user" and any(isinstance(p, dict) and "functionResponse" in p for p in parts):
            text = ""
        out.append({"role": role, "content": text, **({"tool_calls": calls} if calls else {})})
    return out


def _responses_messages(items: object) -> list[dict]:
    """The Responses API's ``input`` items in the shape ``round_for`` reads: user messages with
    their text, one assistant message per run of tool calls, tool outputs as text-less user
    messages (developer and system messages left out)."""
    if not isinstance(items, list):
        return []
    out: list[dict] = []
    for item in items:
        kind = item.get("type", "message") if isinstance(item, dict) else None
        if kind == "message" and item.get("role") in ("user", "assistant"):
            text = "".join(c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict))
            out.append({"role": item["role"], "content": text})
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            if out and out[-1]["role"] == "assistant" and out[-1].get("tool_calls"):
                out[-1]["tool_calls"].append(item)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [item]})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append({"role": "tool", "content": ""})
    return out


def _responses_events(blocks: list[dict], model: str, response_id: str) -> bytes:
    """The OpenAI Responses API's streamed events for one answer: each block an output item (a
    ``message``, a ``function_call`` with JSON arguments, or a ``custom_tool_call`` with the
    freeform input), then ``response.completed``."""
    items: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            items.append({"type": "message", "id": f"{response_id}_m{index}", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": block["text"], "annotations": []}]})
        elif block.get("freeform"):
            items.append({"type": "custom_tool_call", "id": f"{response_id}_c{index}", "status": "completed",
                          "call_id": block["id"], "name": block["name"], "input": block["input"]})
        else:
            items.append({"type": "function_call", "id": f"{response_id}_f{index}", "status": "completed",
                          "call_id": block["id"], "name": block["name"], "arguments": json.dumps(block["input"])})
    response: dict[str, Any] = {"id": response_id, "object": "response", "created_at": 0, "model": model,
                                "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "message":
            events.append({"type": "response.output_text.delta", "output_index": index, "content_index": 0,
                           "item_id": item["id"], "delta": item["content"][0]["text"]})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    events.append({"type": "response.completed", "response": {**response, "status": "completed", "output": items, "usage": usage}})
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _gemini_answer(blocks: list[dict]) -> dict:
    """One Gemini ``GenerateContentResponse`` holding the whole assistant message."""
    parts = [{"text": b["text"]} if b["type"] == "text" else {"functionCall": {"name": b["name"], "args": b["input"]}}
             for b in blocks]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


def _chat_chunks(blocks: list[dict], model: str, message_id: str) -> bytes:
    """The OpenAI Chat Completions streaming chunks for one assistant message."""
    def chunk(delta: dict, finish: str | None) -> str:
        return "data: " + json.dumps({"id": message_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    calls = [b for b in blocks if b["type"] == "tool_use"]
    text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
    out = [chunk({"role": "assistant", "content": text or None}, None)]
    if calls:
        out.append(chunk({"tool_calls": [_chat_call(b, i) for i, b in enumerate(calls)]}, None))
    out.append("data: " + json.dumps({"id": message_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                                      "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}],
                                      "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}) + "\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def _chat_message(blocks: list[dict], model: str, message_id: str) -> bytes:
    """The OpenAI Chat Completions answer (not streamed) for one assistant message."""
    calls = [b for b in blocks if b["type"] == "tool_use"]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(b.get("text", "") for b in blocks if b["type"] == "text") or None}
    if calls:
        message["tool_calls"] = [_chat_call(b) for b in calls]
    return json.dumps({"id": message_id, "object": "chat.completion", "created": 0, "model": model,
                       "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()


def _sse(blocks: list[dict], model: str, message_id: str) -> bytes:
    """The Anthropic streaming events for one assistant message made of ``blocks``."""
    events: list[tuple[str, dict[str, Any]]] = [(
        "message_start",
        {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1},
        }},
    )]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def make_handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write("model-server: " + format % args + "\n")

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_HEAD(self) -> None:
            self._reply(200, b"", "text/plain")

        def do_GET(self) -> None:
            self._reply(200, b"{}", "application/json")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            if script.requests:
                with script.lock, open(script.requests, "a", encoding="utf-8") as log:
                    log.write(json.dumps({"path": self.path, "body": body}) + "\n")
            path = self.path.split("?")[0]
            chat = path.endswith("/chat/completions")
            responses = path.endswith("/responses")
            if ":countTokens" in path:
                self._reply(200, json.dumps({"totalTokens": 10}).encode(), "application/json")
                return
            if ":generateContent" in path or ":streamGenerateContent" in path:
                blocks = script.answer(body)
                sys.stderr.write(f"model-server: answer {[b.get('name') or b['type'] for b in blocks]}\n")
                answer = json.dumps(_gemini_answer(blocks))
                if ":streamGenerateContent" in path:
                    self._reply(200, f"data: {answer}\n\n".encode(), "text/event-stream")
                else:
                    self._reply(200, answer.encode(), "application/json")
                return
            if not chat and not responses and not path.endswith("/messages"):  # count_tokens and the like
                self._reply(200, json.dumps({"input_tokens": 10}).encode(), "application/json")
                return
            try:
                blocks = script.answer(body)
            except KeyError as exc:
                sys.stderr.write(f"model-server: {exc}\n")
                blocks = [{"type": "text", "text": f"script error: {exc}"}]
            sys.stderr.write(f"model-server: answer {[b.get('name') or b['type'] for b in blocks]}\n")
            model = body.get("model", "mock-model")
            message_id = script.next_id("msg")
            if responses:  # Codex streams every answer
                self._reply(200, _responses_events(blocks, model, script.next_id("resp")), "text/event-stream")
                return
            if chat:
                if body.get("stream"):
                    self._reply(200, _chat_chunks(blocks, model, message_id), "text/event-stream")
                else:
                    self._reply(200, _chat_message(blocks, model, message_id), "application/json")
                return
            if body.get("stream"):
                self._reply(200, _sse(blocks, model, message_id), "text/event-stream")
            else:
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                message = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": blocks,
                           "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
                self._reply(200, json.dumps(message).encode(), "application/json")

    return Handler


def serve(script_file: str, port_file: str) -> ThreadingHTTPServer:
    spec = json.loads(Path(script_file).read_text())
    script = Script(spec["turns"], spec.get("requests"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script))
    Path(port_file).write_text(str(server.server_address[1]))
    return server


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2]).serve_forever()
