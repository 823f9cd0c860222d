"""How many examples a property test draws: its full count in the whole suite,
a tenth of it in the quick tier (`pytest -m quick` loads the hypothesis profile
`quick`, tests/conftest.py). Read when the test module is imported, which is
after pytest loaded the profile."""

from __future__ import annotations

from hypothesis import settings

FULL_PROFILE_EXAMPLES = 100  # hypothesis's default profile


def examples(full: int) -> int:
    """`full` examples under the default profile, scaled to the loaded one."""
    return max(1, full * settings.default.max_examples // FULL_PROFILE_EXAMPLES)
