"""The base of every suite model: unknown fields refused (our formats honour or refuse each field)."""

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)
