"""projects and immutable revisions

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_JSON = sa.JSON()  # json, not jsonb: the stored text reads back identical

_PG_FUNCTION = """
CREATE FUNCTION wkc_revisions_immutable() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'revisions are immutable: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql
"""


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(120), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "revisions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="RESTRICT"), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("intake", _JSON, nullable=False),
        sa.Column("pins", _JSON, nullable=False),
        sa.Column("result", _JSON, nullable=False),
        sa.Column("feasible", sa.Boolean, nullable=False),
        sa.Column("tool_version", sa.String(64), nullable=False),
        sa.Column("catalog_version", sa.String(64), nullable=False),
        sa.Column("schema_version", sa.String(16), nullable=False),
        sa.UniqueConstraint("project_id", "number", name="uq_revisions_project_number"),
    )
    op.create_index("ix_revisions_project_id", "revisions", ["project_id"])
    # Append-only at the database: no UPDATE or DELETE of a saved revision, whoever connects.
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_FUNCTION)
        op.execute("CREATE TRIGGER revisions_immutable BEFORE UPDATE OR DELETE ON revisions "
                   "FOR EACH ROW EXECUTE FUNCTION wkc_revisions_immutable()")
    else:
        for action in ("UPDATE", "DELETE"):
            op.execute(f"CREATE TRIGGER revisions_no_{action.lower()} BEFORE {action} ON revisions "
                       f"BEGIN SELECT RAISE(ABORT, 'revisions are immutable: {action} refused'); END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER revisions_immutable ON revisions")
        op.execute("DROP FUNCTION wkc_revisions_immutable()")
    op.drop_index("ix_revisions_project_id", "revisions")
    op.drop_table("revisions")
    op.drop_table("projects")
