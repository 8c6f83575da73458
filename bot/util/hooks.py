"""A collaborator bound after construction: the one way two services that need each other meet.

The composition root builds every service with its collaborators in dependency order. Where two
need each other (the announcer tells the shows of each play; the shows ask the announcer to look
again at what it watches), a :class:`Hook` is made first and given to both constructors: the
side built second binds itself, the other calls through it. Nothing else is set on a service
after it is built.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Hook(Generic[T]):
    """Holds one target, bound once. ``target`` is None until then: a caller built first may be
    asked to act before the composition root finished, and then has nobody to tell."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._target: T | None = None

    @property
    def target(self) -> T | None:
        return self._target

    def bind(self, target: T) -> None:
        """Bound once: a second binding means two services claim one role, a wiring bug."""
        if self._target is not None:
            raise RuntimeError(f"hook {self.name!r} is already bound")
        self._target = target

    def __repr__(self) -> str:
        return f"Hook({self.name!r}, bound={self._target is not None})"
