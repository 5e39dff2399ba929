"""Configuration: ``tether.toml`` files, ``TETHER_*`` variables and flags, layered.

Precedence, highest first: flag > ``TETHER_*`` environment > project file
(``tether.toml`` in the working folder or its nearest parent that has one) >
user file (``$TETHER_USER_CONFIG``, ``$XDG_CONFIG_HOME/tether/tether.toml`` or
``~/.config/tether/tether.toml``) > defaults. See docs/reference/config.md.
"""

from __future__ import annotations

from tether.config.files import PROJECT_FILE, check_layer, find_project_file, user_file_path
from tether.config.loader import load_config
from tether.config.model import BUILTIN_PROFILE, Config, Profile
from tether.config.schema import SECTIONS, ProfileSchema, Settings
from tether.config.section import Section

__all__ = [
    "BUILTIN_PROFILE",
    "PROJECT_FILE",
    "SECTIONS",
    "Config",
    "Profile",
    "ProfileSchema",
    "Section",
    "Settings",
    "check_layer",
    "find_project_file",
    "load_config",
    "user_file_path",
]
