"""Settings of `CopilotApp` that do not validate: held back, named, and fail closed.

traitlets applies a config section in one go, with notifications held: one value that does
not validate raises `TraitError`, and every value of that section is rolled back. jupyter_server
links an extension by applying its config files (``load_config_file``), the server's config
(``update_config(serverapp.config)``) and the command line (``parse_command_line``), each an
``update_config`` call. A bad value in a config file makes traitlets exit the process; one in
the server's config or on the command line is logged with its value, and the extension then
loads with none of its settings (permissive defaults: Autopilot allowed, every agent, the
default conversation store). So `CopilotApp.update_config` screens every config before it is
applied: each setting is checked on its own, the ones that would not apply are held back and
named, and the app then turns agents and tools off as a whole (docs/admin.md, "Invalid
settings").

Values never leave this module: only setting names are reported.
"""

from __future__ import annotations

import copy
from typing import Any

from traitlets import TraitType
from traitlets.config import Config, Configurable
from traitlets.config.loader import DeferredConfig, LazyConfigValue

#: How a setting whose name is not an identifier is reported (its name could be anything).
ODD_NAME = "(a setting with an odd name)"

#: The longest setting name reported as it is.
MAX_NAME = 80


def screen(app: Configurable, config: Config) -> tuple[Config, list[str]]:
    """``config`` without the settings of ``app`` that would not apply, and their names.

    The sections read are the ones traitlets reads for ``app`` (its class and every
    configurable base class). A setting is held back when its value does not validate for
    its trait, and, in the section of ``app``'s own class only, when no such setting exists
    (a misspelt name would otherwise be ignored with a warning, leaving its permissive
    default). Nested sections and other classes' sections pass through untouched.
    """
    traits = app.traits(config=True)
    own = type(app).__name__
    held: list[tuple[str, str]] = []
    for section in app.section_names():
        values = dict.get(config, section)
        if not isinstance(values, Config):
            continue
        for name, value in values.items():
            if not isinstance(name, str) or name[:1].isupper():
                continue  # a nested section, as traitlets reads it
            trait = traits.get(name)
            if trait is None:
                if section == own:
                    held.append((section, name))
                continue
            if not applies(app, trait, value):
                held.append((section, name))
    if not held:
        return config, []
    screened = copy.deepcopy(config)
    for section, name in held:
        del screened[section][name]
    return screened, unique(reported_name(name) for _, name in held)


def without_own_settings(app: Configurable, config: Config) -> tuple[Config, list[str]]:
    """``config`` without any setting of ``app``'s sections, and their names.

    The last resort when a screened config still does not apply (a cross-validator of the
    class refused a combination of values that each validate): nothing of it is applied
    rather than whatever traitlets' rollback leaves.
    """
    screened = copy.deepcopy(config)
    names: list[str] = []
    for section in app.section_names():
        values = dict.get(screened, section)
        if not isinstance(values, Config):
            continue
        for name in [n for n in values if isinstance(n, str) and not n[:1].isupper()]:
            names.append(reported_name(name))
            del values[name]
    return screened, unique(names)


def applies(app: Configurable, trait: TraitType[Any, Any], value: Any) -> bool:
    """Whether ``value`` would validate for ``trait`` of ``app``, read as traitlets reads it.

    Nothing of ``app`` changes: a lazy value (``c.CopilotApp.x.append(...)``) is worked out on
    a copy, from the trait's current value.
    """
    try:
        if isinstance(value, LazyConfigValue):
            value = copy.deepcopy(value).get_value(getattr(app, str(trait.name)))
        elif isinstance(value, DeferredConfig):
            value = value.get_value(trait)  # a string from the command line or environment
        value = copy.deepcopy(value)
        if value is None and trait.allow_none:
            return True
        validate = getattr(trait, "validate", None)
        if validate is not None:
            validate(app, value)
    except Exception:  # a value can fail in any way (TraitError, ValueError, a broken object)
        return False
    return True


def reported_name(name: str) -> str:
    """A setting's name as logs and ``copilot/api/status`` show it."""
    if name.isidentifier() and len(name) <= MAX_NAME:
        return name
    return ODD_NAME


def unique(names: Any) -> list[str]:
    """The names in their first order, each once."""
    return list(dict.fromkeys(names))
