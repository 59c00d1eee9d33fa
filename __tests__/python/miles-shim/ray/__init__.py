"""Stand-in for ray: miles.utils.misc imports it at module level; the session servers never call it."""


def __getattr__(name: str):
    raise NotImplementedError(f"ray.{name} is not part of this test harness")
