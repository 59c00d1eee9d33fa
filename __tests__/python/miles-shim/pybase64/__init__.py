"""Stand-in for pybase64 (not on the local index): the standard library's base64 with the same call shapes."""

import base64


def b64decode(data, altchars=None, validate=False):
    return base64.b64decode(data, altchars=altchars, validate=validate)


def b64encode(data, altchars=None):
    return base64.b64encode(data, altchars=altchars)
