"""The one boolean vocabulary of the project: environment variables and query
parameters both read ``true/1/yes/on`` and ``false/0/no/off`` (any case)."""

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def parse_bool(text: str) -> bool | None:
    """True or False for a word of the vocabulary (spaces and case ignored), None for any other text."""
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None
