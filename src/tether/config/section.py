"""What every table of ``tether.toml`` is made of: ``Section`` and the value types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar

import msgspec

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0)]
NonEmptyStr = Annotated[str, msgspec.Meta(min_length=1)]
Command = Annotated[list[NonEmptyStr], msgspec.Meta(min_length=1)]


class Section(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """A table of settings; every field has a default. Subclass to add a section."""

    # setting name -> environment variable that overrides it
    env_vars: ClassVar[Mapping[str, str]] = {}
