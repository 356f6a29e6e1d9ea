"""The base of every typed result section (re-exported by spine/result.py). Its own module so the
sections defined outside spine/ (cost/, sizing/, engagement/, generic/) can subclass it without
importing the document that holds them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


__all__ = ["Doc"]
