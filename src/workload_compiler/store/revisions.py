"""Projects and their revisions: saving is append-only and transactional; a revision once
committed never changes (the database refuses UPDATE and DELETE on it).

Saving takes the next number inside one transaction: the project row is locked (PostgreSQL
`SELECT ... FOR UPDATE`; SQLite's IMMEDIATE transaction holds the write lock), the revision is
inserted, and the unique (project, number) constraint is the last guard; a crash before COMMIT
leaves the last committed revision as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import InputError
from ..spine.result import SystemSpec
from ..versions import versions
from .db import WRITE_OPTION, database_url, make_engine, migrate
from .diff import RevisionDiff, diff_documents
from .models import NAME_MAX, Project, Revision

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$")
_RETRIES = 8


def check_project_name(name: str) -> str:
    name = name.strip() if isinstance(name, str) else name
    if not isinstance(name, str) or not name or len(name) > NAME_MAX or not _NAME.match(name):
        raise InputError("project", name, f"1-{NAME_MAX} characters: letters, digits, space, '.', '_' or '-', "
                                          "starting with a letter or digit")
    return name


def rev_label(number: int) -> str:
    return f"REV {number:02d}"


def parse_rev(text: str | int, field: str = "revision") -> int:
    """'2', '02', 'REV 02', 'rev02', 'rev-2' -> 2."""
    match = re.fullmatch(r"(?:rev[\s_-]*)?0*(\d{1,6})", str(text).strip(), flags=re.IGNORECASE)
    if not match or int(match.group(1)) < 1:
        raise InputError(field, text, "a revision number: 1, 02 or REV 02")
    return int(match.group(1))


@dataclass(frozen=True)
class RevisionInfo:
    project: str
    number: int
    created_at: datetime
    note: str
    feasible: bool
    tool_version: str
    catalog_version: str
    schema_version: str

    @property
    def label(self) -> str:
        return rev_label(self.number)


@dataclass(frozen=True)
class StoredRevision:
    info: RevisionInfo
    intake: dict[str, Any]
    pins: dict[str, Any]
    result: dict[str, Any]

    def spec(self) -> SystemSpec:
        return SystemSpec.model_validate(self.result)


def _iso(value: Any) -> str:
    if isinstance(value, date | datetime | time):
        return value.isoformat()
    raise InputError("intake", type(value).__name__, "values JSON can hold (text, numbers, lists, mappings, dates)")


def _utc(t: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _info(project: str, r: Revision) -> RevisionInfo:
    return RevisionInfo(project=project, number=r.number, created_at=_utc(r.created_at), note=r.note,
                        feasible=r.feasible, tool_version=r.tool_version, catalog_version=r.catalog_version,
                        schema_version=r.schema_version)


class Store:
    """The projects and revisions in one database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._writer = sessionmaker(engine.execution_options(**{WRITE_OPTION: True}), expire_on_commit=False)

    @classmethod
    def open(cls, url: str | None = None) -> Store:
        """Connect to `url` (see db.database_url) and run the migrations."""
        engine = make_engine(database_url(url))
        migrate(engine)
        return cls(engine)

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=False)

    def close(self) -> None:
        self.engine.dispose()

    def _project(self, session: Session, name: str, *, create: bool) -> Project | None:
        query = select(Project).where(Project.name == name)
        if self.engine.dialect.name == "postgresql":
            query = query.with_for_update()
        project = session.scalars(query).first()
        if project is None and create:
            project = Project(name=name, created_at=datetime.now(UTC))
            session.add(project)
            session.flush()  # a racing creator fails here on the unique name; the save is retried
        return project

    def save(self, project: str, intake: dict[str, Any], pins: dict[str, Any], spec: SystemSpec,
             note: str = "") -> RevisionInfo:
        """Append the next revision of `project` (created on first save) and commit it."""
        name = check_project_name(project)
        result = spec.model_dump(mode="json")
        intake = json.loads(json.dumps(intake, default=_iso))  # YAML dates as ISO text, as JSON holds them
        pins = json.loads(json.dumps(dict(pins), default=_iso))
        stamp = versions()
        for attempt in range(_RETRIES):
            try:
                with self._writer.begin() as session:
                    proj = self._project(session, name, create=True)
                    assert proj is not None
                    last = session.scalar(select(func.max(Revision.number)).where(Revision.project_id == proj.id))
                    row = Revision(project_id=proj.id, number=(last or 0) + 1, created_at=datetime.now(UTC),
                                   note=note[:2000], intake=intake, pins=dict(pins), result=result,
                                   feasible=spec.feasible, tool_version=stamp["tool_version"],
                                   catalog_version=stamp["catalog_version"], schema_version=stamp["schema_version"])
                    session.add(row)
                    session.flush()
                    return _info(name, row)
            except (IntegrityError, OperationalError):
                if attempt == _RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def projects(self) -> list[tuple[str, int, datetime | None]]:
        """(name, revision count, last saved) for every project, by name."""
        with self._sessions() as session:
            rows = session.execute(
                select(Project.name, func.count(Revision.id), func.max(Revision.created_at))
                .join(Revision, Revision.project_id == Project.id, isouter=True)
                .group_by(Project.id, Project.name)).all()
        return sorted((n, int(c), _utc(t) if t else None) for n, c, t in rows)

    def revisions(self, project: str) -> list[RevisionInfo]:
        """Every revision of `project`, oldest first; an unknown project is an InputError."""
        name = check_project_name(project)
        with self._sessions() as session:
            proj = self._project(session, name, create=False)
            if proj is None:
                raise InputError("project", name, f"an existing project; known: {self._known(session)}")
            rows = session.scalars(select(Revision).where(Revision.project_id == proj.id)
                                   .order_by(Revision.number)).all()
            return [_info(name, r) for r in rows]

    def revision(self, project: str, number: int) -> StoredRevision:
        name = check_project_name(project)
        with self._sessions() as session:
            row = session.scalars(select(Revision).join(Project).where(Project.name == name,
                                                                       Revision.number == number)).first()
            if row is None:
                known = [rev_label(n) for n in session.scalars(
                    select(Revision.number).join(Project).where(Project.name == name).order_by(Revision.number))]
                raise InputError("revision", rev_label(number), f"a revision of {name}: {', '.join(known) or 'none'}")
            return StoredRevision(info=_info(name, row), intake=dict(row.intake), pins=dict(row.pins),
                                  result=dict(row.result))

    @staticmethod
    def _known(session: Session) -> str:
        names = session.scalars(select(Project.name).order_by(Project.name).limit(20)).all()
        return ", ".join(names) or "none yet (save a revision first)"




def diff_revisions(a: StoredRevision, b: StoredRevision) -> RevisionDiff:
    """The RevisionDiff (store/diff.py) from revision `a` to revision `b`."""
    def stamp(r: RevisionInfo) -> dict[str, str]:
        return {"tool_version": r.tool_version, "catalog_version": r.catalog_version,
                "schema_version": r.schema_version}
    return diff_documents(a.intake, a.pins, a.result, b.intake, b.pins, b.result, stamp(a.info), stamp(b.info))


__all__ = ["RevisionInfo", "Store", "StoredRevision", "check_project_name", "diff_revisions", "parse_rev",
           "rev_label"]
