"""One error type for everything a user can get wrong.

The CLI turns a UserError into one line on stderr and exit code 2; anything else is a bug
and is also caught at the top, but reported as an internal error with exit code 3.
"""


class UserError(Exception):
    """Bad input: a file, a flag, a name. The message names what is wrong, on one line."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
