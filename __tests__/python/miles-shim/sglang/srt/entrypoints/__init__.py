"""Stand-in package for the parts of SGLang miles' session servers import (see protocol.py)."""
