"""The project's one exception type."""


class Llama3Error(Exception):
    """A problem with the user's input or setup; its message says what is wrong and what to do about it.

    Every bad input (a missing folder, a broken checkpoint, a wrong tokenizer file, an unwritable
    export folder) is reported with this type, never with a traceback from deep inside torch.
    """
