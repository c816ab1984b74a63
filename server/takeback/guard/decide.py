"""What the guard answers for one tool call: the verdict (``classify.py``) weighed by the
person's rules (``policy.py``) into one action, allow / ask / deny / warn, with the one line the
person and the agent see. The hooks turn a ``Decision`` into each agent's own answer
(``hooks/answers.py``); nothing here knows an agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Action = Literal["allow", "warn", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("allow", "warn", "ask", "deny")  # from the mildest to the strictest


def stricter(a: Action, b: Action) -> Action:
    """The stricter of two actions (a repository's rule may only make the guard stricter)."""
    return a if ACTIONS.index(a) >= ACTIONS.index(b) else b


@dataclass(frozen=True)
class Decision:
    action: Action
    line: str = ""  # one line: what Takeback could not take back, and why it asks ("" when allowed)
    effect: str = "workspace"  # the verdict's effect class (``rules.py``), or "rule" for a person's pattern
    wanted: Action | None = None  # what the rules asked for, when the agent cannot do it (ask → warn/deny)

    @property
    def allowed(self) -> bool:
        return self.action == "allow"


ALLOW = Decision("allow")
