"""Human-readable output for the CLI (the JSON output needs nothing: it is the models).

Every text a record carries (file names, prompts, commands, notices, reasons) is someone else's:
``for_terminal`` gives a copy of a record with each of them quoted for a terminal
(``terminal.py``: names as git quotes paths, free text only when it holds what a terminal acts
on), so no field can move the cursor, retitle the window or fake a line of this layout. The
CLI passes every record through it before printing (``cli/context.py``); a patch body is left
to the stream's ``escape`` (its newlines are the layout).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from pydantic import BaseModel

from . import wording
from .models import Blame, BlameOrigin, Entry, GcReport, OperationResult, SaveReport, StoreStatus, UnsavedFile
from .terminal import escape, quote_path, quote_text
from .wording import counted, listed, size

_T = TypeVar("_T")
_PATH_FIELDS = frozenset({"path", "old_path", "renamed_from", "paths", "left", "workspace", "store", "outside"})
_BODY_FIELDS = frozenset({"patch", "diff"})


def for_terminal(value: _T) -> _T:
    """``value`` (a record, a dataclass, a list, a dict) with every string in it quoted for a
    terminal. What holds nothing to quote is given back as it is, not copied: a 5,000-file
    operation's answer was 15,000 models copied to quote nothing (0.15-0.2 s of a big undo)."""
    return _quoted(value, None)


def _quoted(value: Any, field: str | None) -> Any:
    if isinstance(value, str):
        if field in _BODY_FIELDS:
            return value
        return quote_path(value) if field in _PATH_FIELDS else quote_text(value)
    if isinstance(value, BaseModel):
        update = _changed({name: getattr(value, name) for name in type(value).model_fields})
        return value.model_copy(update=update) if update else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # install's reports
        update = _changed({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
        return dataclasses.replace(value, **update) if update else value
    if isinstance(value, list | tuple):
        items = [_quoted(item, field) for item in value]
        return type(value)(items) if any(new is not old for new, old in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        quoted = {key: _quoted(item, key if isinstance(key, str) else field) for key, item in value.items()}
        return quoted if any(quoted[key] is not item for key, item in value.items()) else value
    return value


def _changed(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields whose value ``_quoted`` changes, quoted."""
    update = {}
    for name, item in fields.items():
        quoted = _quoted(item, name)
        if quoted is not item:
            update[name] = quoted
    return update


_STATE_MARK = {"applied": " ", "reverted": "↶", "partial": "±", "open": "…", "not-applied": "✗"}


def _checks(entry: Entry) -> str:
    passed = entry.checks_passed
    if passed is None:
        return ""
    return " checks:passed" if passed else " checks:FAILED"


def print_check(entry: Entry, shown: dict) -> None:
    """``takeback check``'s answer: the check and the entry it speaks for, or, when the files on
    disk were not that entry's end state, that it speaks for none (``shown``: the JSON answer)."""
    what = entry_name(entry)
    print(f"check {shown['name']}: {shown['status']} (exit {shown['exit_code']}) recorded on {what}")
    differs = shown["differs"]
    if differs:
        verb = "differs" if len(differs) == 1 else "differ"
        print(f"  note: the files on disk were not {what}'s end state ({listed(differs)} {verb}): the check does not count "
              f"for #{entry.number}, and no entry is green by it")


def entry_name(entry: Entry) -> str:
    """``turn #3``, ``undo #4 (of turn #2)``: how an answer names an entry."""
    if entry.kind == "turn":
        return f"turn #{entry.number}"
    return f"{entry.kind} #{entry.number}" + (f" (of #{entry.target_number})" if entry.target_number else "")


def entry_line(entry: Entry) -> str:
    when = entry.created_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    label = entry.label or ""
    kind = entry.kind if entry.kind != "turn" else "turn"
    target = f" → #{entry.target_number}" if entry.target_number else ""
    files = f"{entry.file_count} file{'s' if entry.file_count != 1 else ''} +{entry.additions} -{entry.deletions}"
    mark = _STATE_MARK.get(entry.state, "?")
    who = f" [{entry.agent}]" if entry.agent else ""
    return f"{mark} #{entry.number:<4} {kind:<7} {entry.state:<11} {when}  {files}{_checks(entry)}{target}{who}  {label}"


def log_for_terminal(entries: list[Entry]) -> list[Entry]:
    """``entries`` with what ``entry_line`` prints of them quoted for a terminal, as
    ``for_terminal`` quotes it (the label and the agent: the rest are numbers, times and fixed
    words), without copying every field of every entry of a long log."""
    out = []
    for entry in entries:
        label, agent = _quoted(entry.label, "label"), _quoted(entry.agent, "agent")
        # most need no quoting: the entry itself is printed then, not a copy of it
        out.append(entry if (label, agent) == (entry.label, entry.agent)
                   else entry.model_copy(update={"label": label, "agent": agent}))
    return out


def print_log(entries: list[Entry], left_out: int = 0) -> None:
    """``left_out``: the empty turns among them that ``log`` leaves out (without ``--all``)."""
    turns = f"{counted(left_out, 'turn')} that changed no file"
    if not entries:
        if left_out:
            print(f"No turn has changed a file yet ({turns} left out: 'takeback log --all' lists them).")
        else:
            print("No turns recorded yet. Start one with 'takeback begin --label \"...\"'.")
        return
    lines = [entry_line(entry) for entry in entries]
    if left_out:
        lines.append(f"({turns} left out: 'takeback log --all' lists them)")
    print("\n".join(lines))  # one write: 2,000 lines, not 4,000 writes


def print_begun(entry: Entry) -> None:
    for notice in entry.notices:
        print(f"note: {notice}")
    print(f"turn #{entry.number} open ({entry.id}); run 'takeback end' when the agent is done")


def print_entry(entry: Entry) -> None:
    print(entry_line(entry))
    print(f"  id {entry.id}  session {entry.session or '-'}  source {entry.source}  head {entry.head or '-'}")
    if entry.state_hash:
        print(f"  state {entry.state_hash}")
    for change in entry.files:
        name = f"{change.old_path} → {change.path}" if change.old_path else change.path
        extra = " (binary)" if change.binary else ""
        if change.withheld:
            extra += f" (content withheld: {change.withheld})"
        print(f"  {change.kind:<9} {name}  +{change.additions} -{change.deletions}{extra}")
    if entry.shows_steps:
        for index, cp in enumerate(entry.checkpoints, 1):  # the steps: restore #N.k goes back to just after step k
            state = "" if cp.applied else "  (not applied)"
            print(f"  step   #{entry.number}.{index} {cp.label or 'changes'}  ({len(cp.paths)} files){state}")
            for move in cp.git_moved:
                print(f"           git: {move.fact}")
            for path in cp.outside:
                print(f"           outside the workspace: {path}")
            for lost in cp.lost:
                print(f"           {lost.how} ignored {lost.path}: {'kept' if lost.kept is not None else 'lost'}")
    for command in entry.commands:
        print(f"  ran    {command}")
    for check in entry.checks:
        print(f"  check  {check.name}: {check.status}" + (f" (exit {check.exit_code})" if check.exit_code is not None else ""))
    for notice in entry.notices:
        print(f"  note   {notice}")
    if entry.kind == "mark":  # the person's own checkpoint (engine/marks.py)
        held = (f", 'takeback revert {entry.number}' takes back the {'file' if entry.file_count == 1 else 'files'} "
                "you changed" if entry.file_count else " (no file changed since the last entry)")
        print(f"  mark   your own checkpoint: 'takeback restore {entry.number}' goes back to it{held}")
    if entry.git_moved:
        print("  cannot take back (the person's git state, which Takeback never changes):")
        for move in entry.git_moved:
            print(f"    {wording.git_move(move)}")
    if entry.outside:
        print("  cannot take back (written outside the workspace, where Takeback records nothing):")
        for path in entry.outside:
            print(f"    {path}")
    if entry.lost:
        print("  lost, not taken back by undo (ignored files its calls deleted or overwrote; run these in the workspace's folder):")
        for lost in entry.lost:
            print(f"    {wording.lost_file(lost)}")
    if entry.reverted_by:
        print(f"  reverted by {entry.reverted_by}")


_REPEAT_AFTER = 10  # file lines after which the verdict is said again at the end


def print_result(result: OperationResult, patch: bool = False, stat: bool = False) -> None:
    """An operation's answer: the verdict, notes, each file (``stat``: as a diffstat), what was
    skipped or in conflict, the diff only if asked (``patch``), then, after many file lines,
    the verdict again (a 5,000-file turn's list must not scroll it away), and ``next:``."""
    heading = f"{result.verdict.upper()}: {result.message}"
    print(heading)
    for notice in result.notices:
        print(f"  note    {notice}")
    lines = _diffstat(result) if stat else restored_lines(result)
    for line in lines:
        print(line)
    for skip in result.skipped:
        print(f"  skipped {skip.path}: {skip.reason}")
    for conflict in result.conflicts:
        note = " — markers written" if conflict.markers_written else ""
        print(f"  conflict {conflict.path}: {conflict.reason}{note}")
        if conflict.advice and not conflict.markers_possible:  # the general choices in 'next:' do not all apply
            print(f"           {conflict.advice}")
    if result.patch and patch:
        print(result.patch, end="" if result.patch.endswith("\n") else "\n")
    if len(lines) + len(result.skipped) + len(result.conflicts) > _REPEAT_AFTER:
        print(heading)
    print(f"next: {result.next_action}")


def restored_lines(result: OperationResult, width: int = 7) -> list[str]:
    """``  write   PATH  +a -d`` for each file an operation changes (``width``: the action's
    column), a rename's two sides as one ``rename OLD → NEW`` line: the CLI's and the MCP text's."""
    lines = []
    moved = {item.renamed_from for item in result.restored if item.renamed_from}
    for item in result.restored:
        merged = " (merged with later edits)" if item.merged else ""
        if item.renamed_from:
            lines.append(f"  {'rename':<{width}} {item.renamed_from} → {item.path}  +{item.additions} -{item.deletions}{merged}")
        elif not (item.action == "delete" and item.path in moved):  # (its rename's line says it)
            lines.append(f"  {item.action:<{width}} {item.path}  +{item.additions} -{item.deletions}{merged}")
    return lines


def _diffstat(result: OperationResult, width: int = 40) -> list[str]:
    """``path | 12 +++++-------`` per file and a total line, as ``git diff --stat`` prints them."""
    items = result.restored
    if not items:
        return []
    name_width = max(len(item.path) for item in items)
    most = max(item.additions + item.deletions for item in items) or 1
    lines = []
    for item in items:
        total = item.additions + item.deletions
        scale = min(1.0, width / most)
        plus, minus = round(item.additions * scale), round(item.deletions * scale)
        lines.append(f" {item.path:<{name_width}} | {total:>5} {'+' * plus}{'-' * minus}".rstrip())
    added, removed = sum(i.additions for i in items), sum(i.deletions for i in items)
    lines.append(f" {counted(len(items), 'file')} changed, {counted(added, 'insertion')}(+), "
                 f"{counted(removed, 'deletion')}(-)")
    return lines


def print_status(status: StoreStatus) -> None:
    print(f"workspace  {status.workspace}" + ("  (git)" if status.git_repository else "  (not a git repository)"))
    if not status.store_made:
        print(f"store      none yet: the first recorded turn makes it at {status.store}")
    else:
        print(f"store      {status.store}  {size(status.store_bytes)}")
    policy = status.retention
    print(
        f"retention  {policy.max_entries} entries, {policy.max_age_days} days, {size(policy.max_bytes)}"
        f"  fsync {'on' if status.fsync else 'off'}"
    )
    print(f"timeline   {status.entries} entries ({status.turns} agent turns)")
    for turn in status.open_turns or ([status.open_turn] if status.open_turn else []):
        session = f"  (session {turn.session})" if turn.session and len(status.open_turns) > 1 else ""
        print(f"open turn  #{turn.number} {turn.label or ''}{session}")
    print(f"undo       {'#' + str(status.undo_target) if status.undo_target else 'nothing to undo'}")
    print(f"redo       {'#' + str(status.redo_target) if status.redo_target else 'nothing to redo'}")
    if status.last_recovery:
        r = status.last_recovery
        print(f"recovery   {r.at.astimezone():%Y-%m-%d %H:%M:%S}: interrupted {r.operation} {r.action} ({len(r.paths)} files)")
        otherwise = {problem.split(" left as it was: ")[0] for problem in r.problems}  # left for another reason
        changed = [path for path in r.left if path not in otherwise]
        if changed:
            print(f"           {len(changed)} left as they were, changed since (not overwritten): {', '.join(changed)}")
        for problem in r.problems:  # one per path left as it was, and why; or why the journal was set aside
            print(f"           {problem}")
    for repair in status.repairs:
        print(f"repaired   {repair.at.astimezone():%Y-%m-%d %H:%M:%S}: after a crash or power cut, "
              f"{counted(len(repair.files), 'torn file')} set aside in {repair.folder}")
        for item in repair.files:
            print(f"           {item.path}: {item.problem}")
        if repair.log_was != repair.log_now:
            now = f"{repair.log_now[:12]} ({repair.log_now_subject})" if repair.log_now else "nothing (empty)"
            print(f"           the log now ends at {now}")
        for line in repair.lost:
            print(f"           lost: {line}")
    for problem in status.config_problems:
        print(f"settings   {problem}")
    if status.hook_failures:
        print(f"hooks      {counted(status.hook_failures, 'failure')} logged; last: {status.last_hook_failure}")
    if status.payload_problems:
        print(f"payloads   {status.payload_problems} read only in part (recorded anyway); last: {status.last_payload_problem}")
    print_unsaved(status.unsaved)


def print_unsaved(files: list[UnsavedFile]) -> None:
    """The newest operation's editor writes the disk lacks (``status``), and what writes them."""
    for item in files:
        print(f"not saved  {wording.unsaved_line(item)}")
    if any(item.editor != "unsaved" for item in files):
        them = "it" if len(files) == 1 else "them"
        print(f"           '{wording.SAVE_COMMAND}' writes {them} (or save {them} in the editor)")


def print_save(report: SaveReport) -> None:
    print(report.message)
    for item in report.skipped:
        print(f"  skipped {item.path}: {item.reason}")


def print_gc(report: GcReport) -> None:
    print(
        f"dropped {report.removed_entries} entries and {report.removed_objects} objects; "
        f"store {size(report.bytes_before)} → {size(report.bytes_after)}; {report.kept_entries} entries kept"
    )
    for span in report.dropped:
        numbers = f"#{span.first}" if span.first == span.last else f"#{span.first}–#{span.last}"
        print(f"  dropped {numbers}: {span.why}")


def blame_origin(origin: BlameOrigin) -> str:
    """A line's author in ``blame``'s short column: ``#12.3 claude`` (turn 12, step 3, its agent),
    ``person`` (``person, was #12.3`` when the person edited that agent's line), ``^abc1234 (git)``
    (before the timeline, with git blame's commit), ``before`` (before it, not in HEAD), ``unknown``."""
    if origin.kind == "turn":
        mate = f"{quote_text(f'{origin.remote}/{origin.who}')} " if origin.remote else ""  # a teammate's: origin/alice@laptop #12.1
        return f"{mate}#{origin.number}.{origin.step} {quote_text(origin.agent or 'agent')}"
    if origin.kind == "person":
        was = origin.edited_from
        return f"person, was #{was.number}.{was.step}" if was is not None else "person"
    if origin.kind == "before":
        return f"^{origin.commit[:7]} (git)" if origin.commit else "before"
    return "unknown"


def print_blame(blame: Blame) -> None:
    """One line per line of the file, as ``git blame`` prints it: who, the line number, the text.
    The text is the file's own, so written as it is but for what a terminal acts on (``escape``:
    a tab stays a tab), not quoted as a prompt would be."""
    names = [blame_origin(line.origin) for line in blame.lines]
    width = max((len(n) for n in names), default=0)
    digits = len(str(blame.lines[-1].line)) if blame.lines else 1
    for name, line in zip(names, blame.lines, strict=True):
        print(f"{name:<{width}} {line.line:>{digits}}) {escape(line.text)}")
