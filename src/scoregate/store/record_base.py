"""The base of every part of the run record: unknown keys kept, only the keys it was given written back, in the
file's order, so `to_dict(from_dict(x))` is `x` key for key and byte for byte once dumped as the store dumps it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_serializer, model_validator
from pydantic_core.core_schema import SerializerFunctionWrapHandler, ValidatorFunctionWrapHandler

Number = int | float
"""A JSON number as the file wrote it (an int stays an int)."""


class Record(BaseModel):
    """A part of the run record: unknown keys kept, only the keys it was given written back, in the order given."""

    model_config = ConfigDict(extra="allow", frozen=True, protected_namespaces=())

    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        record = handler(data)
        if isinstance(data, dict) and isinstance(record, Record):
            record._order = tuple(data)
        return record

    @model_serializer(mode="wrap")
    def _in_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        return {key: out[key] for key in self._order if key in out} | out

    def to_dict(self) -> dict[str, Any]:
        """The JSON object as written to the run's file."""
        return self.model_dump(mode="json", exclude_unset=True)
