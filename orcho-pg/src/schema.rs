//! The schema: versioned, migrated by Orcho under an advisory lock, and a
//! newer one than this build knows refused.

use orcho_core::StoreError;

use crate::conn::{Conn, Target};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i32 = 2;

/// The advisory lock that serialises migrations (of every Orcho store in
/// the database): two hosts that first use a new database at once migrate
/// it once.
const MIGRATION_LOCK: i64 = 0x6f72_6368_6f00_0001;

/// Each migration, from the version before it to its own (index + 1):
/// 1, the tables; 2, an index of documents by kind.
const MIGRATIONS: &[&str] = &[
    r"
CREATE TABLE orcho_runs (
    run        text PRIMARY KEY,
    machine    text NOT NULL,
    checkout   text NOT NULL,
    repository text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orcho_runs_origin ON orcho_runs (machine, checkout, run);
CREATE TABLE orcho_log_lines (
    id   bigserial PRIMARY KEY,
    run  text NOT NULL,
    log  text NOT NULL,
    line bytea NOT NULL,
    at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orcho_log_lines_run ON orcho_log_lines (run, log, id);
CREATE TABLE orcho_documents (
    run        text NOT NULL,
    kind       text NOT NULL,
    name       text NOT NULL,
    body       bytea NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run, kind, name)
);
CREATE TABLE orcho_superseded (
    id            bigserial PRIMARY KEY,
    run           text NOT NULL,
    name          text NOT NULL,
    body          bytea NOT NULL,
    written_at    timestamptz NOT NULL,
    superseded_at timestamptz NOT NULL DEFAULT now()
);
",
    r#"
-- The runs with decision points, found without reading every document
-- (the inbox of a team), under a collation that sorts bytes.
CREATE INDEX orcho_documents_kind ON orcho_documents ((kind COLLATE "C"), run);
"#,
];

/// The schema's version in the database, `0` when it has none.
async fn version(conn: &Conn, target: &Target) -> Result<i32, StoreError> {
    conn.client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS orcho_schema (
                 one     boolean PRIMARY KEY DEFAULT true CHECK (one),
                 version integer NOT NULL
             )",
        )
        .await
        .map_err(|e| target.error("cannot read the store's schema", &e))?;
    let row = conn
        .client
        .query_opt("SELECT version FROM orcho_schema", &[])
        .await
        .map_err(|e| target.error("cannot read the store's schema", &e))?;
    Ok(row.map_or(0, |r| r.get(0)))
}

/// Brings the schema to [`SCHEMA_VERSION`] (under the migration lock), or
/// refuses a newer one. Returns the version found before.
pub(crate) async fn migrate(conn: &Conn, target: &Target) -> Result<i32, StoreError> {
    let lock = |e: &tokio_postgres::Error| target.error("cannot lock the store's schema", e);
    conn.client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| lock(&e))?;
    let result = migrate_locked(conn, target).await;
    conn.client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| lock(&e))?;
    result
}

async fn migrate_locked(conn: &Conn, target: &Target) -> Result<i32, StoreError> {
    let found = version(conn, target).await?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::backend(
            format!(
                "the store at {} has schema version {found}, newer than this orcho knows \
                 ({SCHEMA_VERSION}): use a newer orcho with it",
                target.shown()
            ),
            None,
        ));
    }
    let Ok(from) = usize::try_from(found) else {
        return Err(StoreError::backend(
            format!(
                "the store at {} has schema version {found}, which no orcho writes",
                target.shown()
            ),
            None,
        ));
    };
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(from) {
        let to = i32::try_from(index + 1).unwrap_or(i32::MAX);
        let step = format!(
            "BEGIN;\n{sql}\nINSERT INTO orcho_schema (version) VALUES ({to}) \
             ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version;\nCOMMIT;"
        );
        if let Err(e) = conn.client.batch_execute(&step).await {
            let _ = conn.client.batch_execute("ROLLBACK").await;
            return Err(target.error(&format!("cannot migrate the store's schema to {to}"), &e));
        }
    }
    Ok(found)
}
