"""The tables: a project holds revisions REV 01, 02, ...; a revision is immutable (the migration
adds triggers that refuse UPDATE and DELETE on it), so history is append-only at the database too."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# json, not jsonb, on PostgreSQL: the text is kept as written, so a stored result reads back
# identical (jsonb would turn 3.185633746944e+23 into an integer).
Json = JSON()
NAME_MAX = 120


class Base(DeclarativeBase):
    pass


class Project(Base):
    __tablename__ = "projects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX), unique=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class Revision(Base):
    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("project_id", "number", name="uq_revisions_project_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="RESTRICT"), nullable=False, index=True)
    number: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    note: Mapped[str] = mapped_column(Text, nullable=False, default="")
    intake: Mapped[dict[str, Any]] = mapped_column(Json, nullable=False)
    pins: Mapped[dict[str, Any]] = mapped_column(Json, nullable=False)
    result: Mapped[dict[str, Any]] = mapped_column(Json, nullable=False)
    feasible: Mapped[bool] = mapped_column(nullable=False)
    tool_version: Mapped[str] = mapped_column(String(64), nullable=False)
    catalog_version: Mapped[str] = mapped_column(String(64), nullable=False)
    schema_version: Mapped[str] = mapped_column(String(16), nullable=False)
