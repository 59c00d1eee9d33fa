"""Stand-in for the setproctitle package (not on the local index): the title is not needed by a test."""


def setproctitle(title: str) -> None:
    del title
