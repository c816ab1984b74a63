"""The resident process's wire format: a request or an answer is a few byte strings, each sent
as a netstring (``<length>:<bytes>,``). Chosen over JSON because the hook's side must not even
import ``json`` (with ``re``, a tenth of a hook call's budget); each side checks lengths and
separators and refuses anything else with ``ValueError``.

Requests: ``hook FINGERPRINT AGENT EVENT CWD ENVIRONMENT PAYLOAD`` (EVENT empty when the payload
names it; ENVIRONMENT ``NAME=VALUE`` pairs separated by NUL bytes; PAYLOAD the agent's bytes as
they came; answered ``done UNLOGGED STDOUT STATUS``: a failure no store could take, else empty;
what the hook prints on stdout, the guard's answer to the agent; its exit status in decimal),
``cli FINGERPRINT CWD ARGV ENVIRONMENT TERMINALS UMASK`` (ARGV the command line's words
separated by NUL bytes; TERMINALS ``0``/``1`` for stdout and stderr; UMASK in octal, which a
request may leave out if it writes nothing; ``resident/forward.py``),
``status FINGERPRINT``, ``stop FINGERPRINT``. Answers: ``done TEXT`` (for status, the status as
JSON text; for ``cli``, the
exit status then the chunks written) or ``refused REASON``.

Acceptance: before it runs a ``cli`` command that writes, the resident process sends
``accepted`` (``ACCEPTED``, a netstring of its own) ahead of the answer, once it has checked
everything that could refuse it; from then on the command is that process's, whatever happens to
the connection (the caller never runs it again: ``forward.py``). Nothing else is ever sent ahead.
"""

MAX_BYTES = 32 << 20
ACCEPTED = b"accepted"
ACCEPTED_FRAME = b"8:accepted,"  # ``pack([ACCEPTED])``


def pack(fields: list[bytes]) -> bytes:
    return b"".join(b"%d:%s," % (len(field), field) for field in fields)


def unpack(data: bytes) -> list[bytes]:
    fields, at = [], 0
    while at < len(data):
        colon = data.find(b":", at, at + 12)
        if colon < 0 or not data[at:colon].isdigit():
            raise ValueError("not a netstring")
        end = colon + 1 + int(data[at:colon])
        if end >= len(data) or data[end:end + 1] != b",":
            raise ValueError("a netstring is cut short")
        fields.append(data[colon + 1:end])
        at = end + 1
    return fields


def environment(env: dict[str, str]) -> bytes:
    return b"\0".join(f"{k}={v}".encode("utf-8", "surrogateescape") for k, v in env.items())


def read_environment(blob: bytes) -> dict[str, str]:
    env = {}
    for pair in blob.split(b"\0") if blob else []:
        name, sep, value = pair.decode("utf-8", "surrogateescape").partition("=")
        if not sep:
            raise ValueError("an environment entry has no '='")
        env[name] = value
    return env
