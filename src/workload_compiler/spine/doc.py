"""The base of every typed result section: a pydantic model that forbids unknown keys.

It lives apart from spine/result.py so that the section models of other packages (cost/,
sizing/) can subclass it while `SystemSpec` imports them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
