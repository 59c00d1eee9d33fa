"""Stand-in for SGLang's DeepSeek V4 encoder module: imported by miles at start-up, used only by --tito-model deepseekv4."""


def __getattr__(name: str):
    raise NotImplementedError(f"encoding_dsv4.{name} is not part of this test harness (the qwen3 family never calls it)")
