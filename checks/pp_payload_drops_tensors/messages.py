"""What SHD301 says about a dropped tap: why the combination is reachable
(a claim, an open path, or nothing known), what then happens, and the fix
in the engine's own spelling."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checks.pp_payload_drops_tensors.drops import TapDrop
from checks.pp_payload_drops_tensors.paths import TapPath
from linter.api import Note
from linter.types import Span


def _either(flags: Sequence[str]) -> str:
    return " or ".join(f"`{f}`" for f in flags)


# (the draft's input projection, EAGLE-3's ``combine_hidden_states``,
# DFlash/DSpark's ``fc``/``context_proj``, has the checkpoint's width)
CONSEQUENCE = (
    "The taps of the layers on earlier ranks never reach the last rank, where the draft runs: the "
    "taps it concatenates come out narrower than its input projection was trained for, and its "
    "first step fails with a shape mismatch (`mat1 and mat2 shapes cannot be multiplied`); with no "
    "tap on the last rank the forward returns no taps at all, and a receiving rank that reserved "
    "their slots fails on the missing keys. Pipeline size 1 is unaffected."
)


@dataclass(frozen=True)
class Reach:
    """Why the combination of a draft with pipeline parallelism reaches the
    class: ``why`` completes the message; ``notes`` point at the claim or
    the path; ``warning`` when nothing shows it is reachable."""

    why: str
    notes: tuple[Note, ...]
    warning: bool = False
    claimed: bool = False
    open_path: TapPath | None = None


def claimed(flag: str, value: object, inherited_from: str | None, note: Note | None) -> Reach:
    where = f", inherited from `{inherited_from}`," if inherited_from else " on this class"
    return Reach(
        f"`{flag} = {value!r}`{where} lets the engine start a draft over pipeline parallelism",
        (note,) if note is not None else (),
        claimed=True,
    )


def open_path(paths: Sequence[TapPath], flags: Sequence[str]) -> Reach:
    first = paths[0]
    flag = _either(flags)
    more = f" (and {len(paths) - 1} other path{'s' if len(paths) > 2 else ''})" if len(paths) > 1 else ""
    notes = tuple(
        Note(
            f"`{p.qualname}` turns the taps on for a draft without reading {flag} and without "
            "refusing pipeline parallelism: a draft that consumes them starts with PP > 1 through it",
            p.path,
            Span(*p.span),
        )
        for p in paths
    )
    return Reach(
        f"`{first.qualname}`{more} turns the taps on without reading {flag} or refusing pipeline "
        "parallelism, so not claiming the flag refuses nothing there",
        notes,
        open_path=first,
    )


def unknown(flags: Sequence[str]) -> Reach:
    return Reach(
        f"no class in its hierarchy sets {_either(flags)} and no code of the project turns the taps on: safe "
        "only while the engine refuses a draft with pipeline parallelism for this model at start-up",
        (),
        warning=True,
    )


def _leaves(cls: str, method: str, names: Sequence[str], payload: str | None, rank: str) -> str:
    shown = ", ".join(f"`{n}`" for n in names)
    what = f"the `{payload}`" if payload else "the payload"
    them = "it" if len(names) == 1 else "them"
    return f"`{cls}.{method}` returns {shown} on the {rank}, but {what} the other ranks return leaves {them} behind"


def message(cls: str, method: str, names: Sequence[str], payload: str | None, reach: Reach) -> str:
    crash = "" if reach.warning else ": with PP > 1 the draft's first step crashes on the last rank"
    return f"{_leaves(cls, method, names, payload, 'last pipeline rank')}; {reach.why}{crash}"


def fix_note(
    *,
    sglang: bool,
    cls: str,
    flag: str,
    reach: Reach,
    has_packer: bool,
    checked: Sequence[TapPath],
) -> str:
    """The fix, spelled for the engine the code belongs to."""
    if sglang:
        carry = (
            "Carry the taps across stages: one `PPProxyTensors` key per tap on the other ranks, "
            "read back and prepended on the receiving ranks before the last one returns them"
        )
        refuse = (
            f"or refuse the combination: raise in `{reach.open_path.qualname}` when "
            "`pp_size > 1` and a draft consumes the taps"
            if reach.open_path is not None
            else "or raise in the capture setter when `self.pp_group.world_size > 1`"
        )
        return f"{carry}; {refuse}."
    if has_packer:
        carry = (
            "Carry the taps across stages: `**self.pack_local_aux_hidden_states(aux_hidden_states)` in "
            "the payload, `self.collect_remote_aux_hidden_states(intermediate_tensors)` prepended on "
            f"the receiving ranks, then claim `{flag} = True`"
        )
    else:
        carry = (
            "Carry the taps across stages: one payload key per tap, reserved in "
            "`make_empty_intermediate_tensors` and prepended on the receiving ranks"
        )
    if reach.claimed:
        refuse = f"or set `{flag} = False` on `{cls}` so that the engine refuses the combination at start-up"
    elif reach.open_path is not None:
        like = f" as `{checked[0].qualname}` does" if checked else ""
        refuse = (
            f"or make `{reach.open_path.qualname}` read `{flag}` under pipeline parallelism and "
            f"raise{like}"
        )
    else:
        refuse = "or refuse a draft with pipeline parallelism for this model at start-up"
    return f"{carry}; {refuse}."


# -- one finding per open path ---------------------------------------------------

# model names spelled out in a path's message (all of them are notes)
_SHOWN = 5


def path_message(qualname: str, broken: Sequence[TapDrop], flags: Sequence[str], *, sglang: bool) -> str:
    classes = [cls for _module, cls in dict.fromkeys((d.module, d.cls) for d in broken)]
    models = len(classes)
    shown = ", ".join(f"`{c}`" for c in classes[:_SHOWN])
    if models > _SHOWN:
        shown += f" and {models - _SHOWN} more"
    how = (
        "for a draft without refusing pipeline parallelism"
        if sglang
        else "under pipeline parallelism without checking " + _either(flags)
    )
    these = f"these {models} models" if models > 1 else "this model"
    return (
        f"`{qualname}` turns aux hidden-state taps on {how}; "
        f"{these} ({shown}) drop their taps on non-last ranks, and with PP > 1 the draft's "
        "first step crashes on the last rank"
    )


def model_notes(broken: Sequence[TapDrop], flags: Sequence[str], *, sglang: bool) -> list[Note]:
    out = []
    for d in broken:
        them = "it" if len(d.names) == 1 else "them"
        claim = "" if sglang else f"; `{d.cls}` does not claim `{flags[0]}`"
        out.append(Note(_leaves(d.cls, d.method, d.names, d.payload, "last rank") + claim, d.path, Span(*d.span)))
        out += [
            Note(f"this return of `{d.cls}.{d.method}` leaves {them} behind too", d.path, Span(*o))
            for o in d.others
        ]
    return out


def path_fix(qualname: str, flag: str, checked: Sequence[TapPath], *, sglang: bool) -> str:
    """The fix at the path, spelled for the engine the path belongs to."""
    if sglang:
        return (
            f"Raise in `{qualname}` when `pp_size > 1` and the model does not carry its taps "
            "across stages, instead of turning capture on at every rank: these models are then "
            "refused at start-up. A model becomes runnable with PP by carrying one "
            "`PPProxyTensors` key per tap from the other ranks, prepended on the receiving ranks."
        )
    like = f", as `{checked[0].qualname}` does" if checked else ""
    return (
        f"Make `{qualname}` read `{flag}` from the model when the pipeline size is above 1 and "
        f"raise{like}: these models are then refused at start-up instead of crashing. A model "
        "becomes runnable with PP by carrying its taps across stages (one payload key per tap, "
        "`pack_local_aux_hidden_states` / `collect_remote_aux_hidden_states` where the engine "
        f"has them) and claiming `{flag} = True`."
    )
