"""The request models miles' session servers import from SGLang, written for this test harness.

miles canonicalizes `tools` by validating them as SGLang's `Tool` model and dumping them
(`extract_tool_dicts`). These models reproduce that dump: a function's keys in the order
description, name, parameters, strict (plus defer_loading only when set), and the tool's
`defer_loading` after `function`. Nothing else of SGLang is needed on the session path.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, Field, model_serializer, model_validator


class Function(BaseModel):
    description: Optional[str] = None
    name: str
    parameters: Optional[object] = None
    strict: bool = False
    defer_loading: Optional[bool] = None

    @model_serializer(mode="wrap")
    def _dump(self, handler):
        dumped = handler(self)
        if self.defer_loading is None:
            dumped.pop("defer_loading", None)
        return dumped


class Tool(BaseModel):
    type: str = "function"
    function: Function
    defer_loading: Optional[bool] = None

    @model_validator(mode="after")
    def _copy_defer_loading(self) -> "Tool":
        if self.defer_loading is not None and self.function.defer_loading is None:
            self.function.defer_loading = self.defer_loading
        return self


class FunctionResponse(BaseModel):
    name: Optional[str] = None
    arguments: Optional[Union[str, Dict[str, Any]]] = None


class ToolCall(BaseModel):
    id: Optional[str] = None
    index: Optional[int] = None
    type: Literal["function"] = "function"
    function: FunctionResponse


class ToolChoiceFuncName(BaseModel):
    name: Optional[str] = None


class ToolChoice(BaseModel):
    function: ToolChoiceFuncName
    type: Literal["function"] = "function"


class ChatCompletionRequest(BaseModel):
    """Only the field names are read on the session path; unknown fields are kept."""

    model_config = {"extra": "allow"}

    messages: List[Dict[str, Any]]
    tools: Optional[List[Tool]] = None
    tool_choice: Union[ToolChoice, Literal["auto", "required", "none"]] = "auto"
    chat_template_kwargs: Optional[Dict[str, Any]] = None
    input_ids: Optional[List[int]] = None
    stream: bool = False
    logprobs: bool = False
    return_meta_info: bool = False
    no_stop_trim: bool = False
    separate_reasoning: bool = True
    extra: Dict[str, Any] = Field(default_factory=dict)
