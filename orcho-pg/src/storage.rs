//! [`Storage`] on PostgreSQL.

use std::{
    future::Future,
    sync::{Arc, Mutex as StdMutex},
    time::{Duration, Instant},
};

use camino::Utf8PathBuf;
use orcho_core::{
    HandoffId, RunId, StoreError,
    storage::{
        Created, Held, Item, Log, NewRun, PointKind, RunLease, RunListing, RunOrigin, Set, Storage,
        StoreLog, StoreSet, Subscription, View,
    },
};
use tokio::sync::{Mutex, watch};
use tokio_postgres::{error::SqlState, types::ToSql};

use crate::{
    Origin,
    bridge::Bridge,
    conn::{Conn, Target},
    schema,
};

/// How many idle connections are kept for leases and locks.
const SPARE_CONNECTIONS: usize = 4;

/// How often a lease that is held elsewhere is asked for again while
/// waiting.
const LEASE_POLL: Duration = Duration::from_millis(25);

/// The runs of a points view: this origin's (`$1` true, `$2` and `$3` its
/// machine and checkout) or every one, that have a decision point (found
/// through the index of documents by kind).
macro_rules! POINTED {
    () => {
        "($1 = false OR (r.machine = $2 AND r.checkout = $3)) \
         AND r.run IN (SELECT DISTINCT q.run FROM orcho_documents q \
                       WHERE (q.kind COLLATE \"C\") >= 'question/' \
                       AND (q.kind COLLATE \"C\") < 'question0')"
    };
}

/// The channel every new document is announced on, as `KIND RUN NAME`.
pub const CHANNEL: &str = "orcho_documents";

pub(crate) struct Inner {
    pub(crate) bridge: Bridge,
    pub(crate) target: Target,
    /// Counts what the listener heard (and each time it listened again),
    /// once someone subscribed.
    news: std::sync::OnceLock<watch::Receiver<u64>>,
    shared: Mutex<Option<Arc<Conn>>>,
    spare: StdMutex<Vec<Arc<Conn>>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

impl Inner {
    pub(crate) fn new(bridge: Bridge, target: Target) -> Self {
        Self {
            bridge,
            target,
            shared: Mutex::new(None),
            spare: StdMutex::new(Vec::new()),
            news: std::sync::OnceLock::new(),
        }
    }

    /// The listener's count, starting it on first use.
    fn news(&self) -> watch::Receiver<u64> {
        self.news
            .get_or_init(|| {
                let (tx, rx) = watch::channel(0);
                self.bridge.spawn(listen(self.target.clone(), tx));
                rx
            })
            .clone()
    }

    /// The connection every plain query shares (pipelined), opened (and
    /// the schema migrated) on first use and again after it was lost.
    pub(crate) async fn shared(&self) -> Result<Arc<Conn>, StoreError> {
        let mut shared = self.shared.lock().await;
        if let Some(conn) = shared.as_ref().filter(|c| !c.is_closed()) {
            return Ok(Arc::clone(conn));
        }
        let conn = self.target.connect().await?;
        schema::migrate(&conn, &self.target).await?;
        *shared = Some(Arc::clone(&conn));
        Ok(conn)
    }

    /// A connection of its own, for a session lock (a lease, a point
    /// lock).
    async fn dedicated(&self) -> Result<Arc<Conn>, StoreError> {
        // The schema is there before any lock is taken.
        self.shared().await?;
        loop {
            let spare = self.spare.lock().ok().and_then(|mut s| s.pop());
            match spare {
                Some(conn) if !conn.is_closed() => return Ok(conn),
                Some(_) => {}
                None => return self.target.connect().await,
            }
        }
    }

    fn give_back(&self, conn: Arc<Conn>) {
        if conn.is_closed() {
            return;
        }
        if let Ok(mut spare) = self.spare.lock()
            && spare.len() < SPARE_CONNECTIONS
        {
            spare.push(conn);
        }
    }

    async fn execute(
        &self,
        what: &str,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<u64, StoreError> {
        let conn = self.shared().await?;
        on(&conn, &self.target, what, sql, params).await
    }

    async fn query(
        &self,
        what: &str,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        let conn = self.shared().await?;
        let statement = conn
            .statement(sql)
            .await
            .map_err(|e| self.target.error(what, &e))?;
        conn.client
            .query(&statement, params)
            .await
            .map_err(|e| self.target.error(what, &e))
    }

    /// Takes the advisory lock `key` on a connection of its own within
    /// `wait` (asking again every [`LEASE_POLL`]); `None` when another
    /// holds it still. `what` says what failed.
    async fn try_lock(
        &self,
        key: i64,
        wait: Duration,
        what: &str,
    ) -> Result<Option<Arc<Conn>>, StoreError> {
        let conn = self.dedicated().await?;
        let deadline = Instant::now() + wait;
        loop {
            let locked = conn
                .client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
                .await
                .map_err(|e| self.target.error(what, &e))?;
            if locked.get::<_, bool>(0) {
                return Ok(Some(conn));
            }
            if Instant::now() >= deadline {
                self.give_back(conn);
                return Ok(None);
            }
            tokio::time::sleep(LEASE_POLL).await;
        }
    }

    /// Unlocks `key` on `conn` and keeps the connection for another lock.
    async fn release(&self, conn: Arc<Conn>, key: i64) {
        if conn
            .client
            .execute("SELECT pg_advisory_unlock($1)", &[&key])
            .await
            .is_ok()
        {
            self.give_back(conn);
        }
        // Otherwise the connection is gone, and the server let go of its
        // locks with it.
    }
}

/// Listens on [`CHANNEL`] on a connection of its own, for as long as the
/// bridge runs, counting every notification; after a lost connection it
/// connects again (within a second or so) and counts that too, since what
/// was written meanwhile was not heard.
async fn listen(target: Target, tx: watch::Sender<u64>) {
    loop {
        if let Ok((client, mut hear)) = target.connect_listening().await
            && client
                .batch_execute(&format!("LISTEN {CHANNEL}"))
                .await
                .is_ok()
        {
            tx.send_modify(|n| *n += 1);
            while hear.recv().await.is_some() {
                tx.send_modify(|n| *n += 1);
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A subscription to a PostgreSQL store: woken by its listener.
#[derive(Debug)]
struct PgSubscription {
    news: Option<watch::Receiver<u64>>,
    storage: PgStorage,
}

impl Subscription for PgSubscription {
    fn wait(&mut self, timeout: Duration) -> bool {
        let Some(mut news) = self.news.take() else {
            return true;
        };
        let outcome = self.storage.inner.bridge.run(async move {
            let changed = tokio::time::timeout(timeout, news.changed()).await;
            (news, matches!(changed, Ok(Ok(()))))
        });
        match outcome {
            Some((news, changed)) => {
                self.news = Some(news);
                changed
            }
            // The bridge has stopped: look, as often as asked.
            None => true,
        }
    }
}

/// Runs `sql` on `conn`, prepared once per connection.
async fn on(
    conn: &Conn,
    target: &Target,
    what: &str,
    sql: &'static str,
    params: Params<'_>,
) -> Result<u64, StoreError> {
    let statement = conn
        .statement(sql)
        .await
        .map_err(|e| target.error(what, &e))?;
    conn.client
        .execute(&statement, params)
        .await
        .map_err(|e| target.error(what, &e))
}

/// Runs and decisions kept in a PostgreSQL database, shared by every host
/// that connects to it.
///
/// Every document is a row of `orcho_documents` keyed by run, kind and
/// name; a first write is an `INSERT … ON CONFLICT DO NOTHING`, so of any
/// number of hosts on any number of machines exactly one records a
/// decision; logs are rows of `orcho_log_lines` replayed in insertion order;
/// a run's lease is a session advisory lock held by a connection of its
/// own, which the server lets go when the holder's process dies or its
/// connection is lost. The schema is versioned and migrated on first use.
///
/// Runs are listed per [`Origin`] (the machine and checkout that created
/// them) so that two checkouts on one database never take each other's
/// runs for their own; [`PgStorage::team`] lists every run.
#[derive(Debug, Clone)]
pub struct PgStorage {
    pub(crate) inner: Arc<Inner>,
    pub(crate) origin: Option<Origin>,
    /// Whether [`runs`](Storage::runs) lists every origin's runs.
    pub(crate) team: bool,
}

impl PgStorage {
    /// Runs `f` on the bridge and waits for it.
    pub(crate) fn call<T, F, Fut>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Inner>) -> Fut,
        Fut: Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let bound = inner.target.connect_timeout() + crate::conn::STATEMENT_TIMEOUT;
        let future = f(Arc::clone(&self.inner));
        let bounded = async move {
            match tokio::time::timeout(bound, future).await {
                Ok(answer) => answer,
                Err(_) => Err(StoreError::backend(
                    format!(
                        "the store at {} did not answer within {}s (is the server overloaded, \
                         or stuck? the command can be run again)",
                        inner.target.shown(),
                        bound.as_secs()
                    ),
                    None,
                )),
            }
        };
        self.inner.bridge.run(bounded).unwrap_or_else(|| {
            Err(StoreError::backend(
                format!(
                    "the connection to {} has stopped",
                    self.inner.target.shown()
                ),
                None,
            ))
        })
    }

    fn name(&self, run: &RunId, kind: &str, name: &str) -> Utf8PathBuf {
        let mut path = format!("{}#runs/{run}/{kind}", self.inner.target.shown());
        if !name.is_empty() {
            path.push('/');
            path.push_str(name);
        }
        Utf8PathBuf::from(path)
    }
}

/// A document's kind and name: the key of its row with the run.
fn slot(item: Item<'_>) -> Result<(String, String), StoreError> {
    orcho_core::storage::item_key(item)
}

fn set_kind(set: Set) -> String {
    orcho_core::storage::set_key(set)
}

fn log_name(log: Log) -> &'static str {
    match log {
        Log::Handoffs => "handoffs",
        _ => "run",
    }
}

/// The advisory-lock key of `what` of `run`: 64 bits of a hash, so two
/// runs share a key with negligible probability (and then only wait for
/// each other).
pub(crate) fn lock_key(what: &str, run: &RunId) -> i64 {
    hash_key(&format!("orcho-pg\0{what}\0{run}"))
}

/// 64 bits of the hash of `text`, as an advisory-lock key.
fn hash_key(text: &str) -> i64 {
    let hash = blake3::hash(text.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&hash.as_bytes()[..8]);
    i64::from_le_bytes(bytes)
}

/// The rows of the store as a whole carry this run: no run id is empty.
const STORE_WIDE: &str = "";

fn store_set_kind(set: StoreSet) -> Result<&'static str, StoreError> {
    match set {
        StoreSet::Notifiers => Ok("store/notifier"),
        other => Err(StoreError::backend(
            format!("this orcho-pg keeps no store-wide set {other:?}"),
            None,
        )),
    }
}

fn store_log_name(log: StoreLog) -> Result<&'static str, StoreError> {
    match log {
        StoreLog::Notifications => Ok("store/notifications"),
        other => Err(StoreError::backend(
            format!("this orcho-pg keeps no store-wide log {other:?}"),
            None,
        )),
    }
}

/// A document name of the store as a whole: what the file store takes.
fn store_name(name: &str) -> Result<String, StoreError> {
    orcho_core::ids::validate("document name", name)
        .map(|()| name.to_owned())
        .map_err(|e| StoreError::backend(e.to_string(), None))
}

fn lease_key(run: &RunId) -> i64 {
    lock_key("lease", run)
}

/// A line as stored: without the `\n` that ends it.
fn line_of(line: &[u8]) -> Vec<u8> {
    line.strip_suffix(b"\n").unwrap_or(line).to_vec()
}

const APPEND: &str = "INSERT INTO orcho_log_lines (run, log, line) VALUES ($1, $2, $3)";
const PUT: &str = "INSERT INTO orcho_documents (run, kind, name, body) VALUES ($1, $2, $3, $4) \
                   ON CONFLICT (run, kind, name) DO UPDATE \
                   SET body = EXCLUDED.body, written_at = now()";
const CREATE: &str = "WITH created AS ( \
                          INSERT INTO orcho_documents (run, kind, name, body) \
                          VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING \
                          RETURNING kind, run, name) \
                      SELECT pg_notify('orcho_documents', kind || ' ' || run || ' ' || name) \
                      FROM created";
const CREATE_RUN: &str = "WITH run AS ( \
                              INSERT INTO orcho_runs (run, machine, checkout, repository) \
                              VALUES ($1, $2, $3, $4) RETURNING run), \
                          line AS ( \
                              INSERT INTO orcho_log_lines (run, log, line) \
                              SELECT run, 'run', $5 FROM run), \
                          snapshot AS ( \
                              INSERT INTO orcho_documents (run, kind, name, body) \
                              SELECT run, 'snapshot', '', $6 FROM run \
                              ON CONFLICT (run, kind, name) DO UPDATE SET body = EXCLUDED.body), \
                          host AS ( \
                              INSERT INTO orcho_documents (run, kind, name, body) \
                              SELECT run, 'host', '', $7 FROM run WHERE $7::bytea IS NOT NULL \
                              ON CONFLICT (run, kind, name) DO UPDATE SET body = EXCLUDED.body) \
                          SELECT pg_notify('orcho_documents', 'run ' || run || ' ') FROM run";

/// The lease of a run: a session advisory lock held by a connection of its
/// own, through which the journal is appended (so a lost lease can write
/// nothing more).
struct PgLease {
    run: RunId,
    key: i64,
    conn: Option<Arc<Conn>>,
    storage: PgStorage,
}

impl std::fmt::Debug for PgLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLease")
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl PgLease {
    fn write(
        &self,
        what: &'static str,
        sql: &'static str,
        kind: &'static str,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        let Some(conn) = self.conn.clone() else {
            return Err(StoreError::backend("the run's lease was let go", None));
        };
        let run = self.run.to_string();
        self.storage.call(move |inner| async move {
            let n = on(&conn, &inner.target, what, sql, &[&run, &kind, &bytes]).await?;
            debug_assert!(n <= 1);
            Ok(())
        })
    }
}

impl RunLease for PgLease {
    fn run(&self) -> &RunId {
        &self.run
    }

    fn append(&mut self, line: &[u8]) -> Result<(), StoreError> {
        self.write(
            "cannot append to the run's journal",
            APPEND,
            "run",
            line_of(line),
        )
    }

    fn write_snapshot(&mut self, snapshot: &[u8]) -> Result<(), StoreError> {
        const SNAPSHOT: &str = "INSERT INTO orcho_documents (run, kind, name, body) \
                                VALUES ($1, $2, '', $3) \
                                ON CONFLICT (run, kind, name) DO UPDATE \
                                SET body = EXCLUDED.body, written_at = now()";
        self.write(
            "cannot write the run's snapshot",
            SNAPSHOT,
            "snapshot",
            snapshot.to_vec(),
        )
    }
}

impl Drop for PgLease {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let key = self.key;
            let _ = self.storage.call(move |inner| async move {
                inner.release(conn, key).await;
                Ok(())
            });
        }
    }
}

/// A point lock: a session advisory lock on a connection of its own.
struct PgHeld {
    key: i64,
    conn: Option<Arc<Conn>>,
    storage: PgStorage,
}

impl std::fmt::Debug for PgHeld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgHeld").finish_non_exhaustive()
    }
}

impl Held for PgHeld {}

impl Drop for PgHeld {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let key = self.key;
            let _ = self.storage.call(move |inner| async move {
                inner.release(conn, key).await;
                Ok(())
            });
        }
    }
}

impl Storage for PgStorage {
    fn location(&self) -> String {
        self.inner.target.shown().to_owned()
    }

    fn locate(&self, run: &RunId, item: Item<'_>) -> Utf8PathBuf {
        match slot(item) {
            Ok((kind, name)) => self.name(run, &kind, &name),
            Err(_) => self.name(run, "", ""),
        }
    }

    fn locate_log(&self, run: &RunId, log: Log) -> Utf8PathBuf {
        self.name(run, "log", log_name(log))
    }

    fn runs(&self) -> Result<RunListing, StoreError> {
        let origin = self.origin.clone().filter(|_| !self.team);
        let names: Vec<String> = self.call(move |inner| async move {
            let rows = match &origin {
                Some(o) => {
                    inner
                        .query(
                            "cannot list the runs",
                            "SELECT run FROM orcho_runs WHERE machine = $1 AND checkout = $2 \
                             ORDER BY run",
                            &[&o.machine, &o.checkout],
                        )
                        .await?
                }
                None => {
                    inner
                        .query(
                            "cannot list the runs",
                            "SELECT run FROM orcho_runs ORDER BY run",
                            &[],
                        )
                        .await?
                }
            };
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })?;
        let mut listing = RunListing::default();
        for name in names {
            match name.parse::<RunId>() {
                Ok(run) => listing.runs.push(run),
                Err(e) => listing.unnamed.push((name, orcho_core::error_chain(&e))),
            }
        }
        listing.runs.sort();
        Ok(listing)
    }

    fn has_run(&self, run: &RunId) -> Result<bool, StoreError> {
        let run = run.to_string();
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot look the run up",
                    "SELECT 1 FROM orcho_runs WHERE run = $1",
                    &[&run],
                )
                .await?;
            Ok(!rows.is_empty())
        })
    }

    fn create_run(&self, run: &RunId, new: NewRun<'_>) -> Result<Box<dyn RunLease>, StoreError> {
        let origin = self.origin.clone().unwrap_or_default();
        let name = run.to_string();
        let key = lease_key(run);
        let first = line_of(new.first_event);
        let snapshot = new.snapshot.to_vec();
        let host = new.host_metadata.map(<[u8]>::to_vec);
        let conn = self.call(move |inner| async move {
            let conn = inner.dedicated().await?;
            let what = "cannot create the run";
            let locked: bool = conn
                .client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
                .await
                .map_err(|e| inner.target.error(what, &e))?
                .get(0);
            if !locked {
                inner.give_back(conn);
                return Err(StoreError::backend(
                    format!("cannot create the run {name}: another host holds its lease"),
                    None,
                ));
            }
            let statement = match conn.statement(CREATE_RUN).await {
                Ok(s) => s,
                Err(e) => {
                    inner.release(conn, key).await;
                    return Err(inner.target.error(what, &e));
                }
            };
            let created = conn
                .client
                .execute(
                    &statement,
                    &[
                        &name,
                        &origin.machine,
                        &origin.checkout,
                        &origin.repository,
                        &first,
                        &snapshot,
                        &host,
                    ],
                )
                .await;
            match created {
                Ok(_) => Ok(conn),
                Err(e) => {
                    let exists = e.code() == Some(&SqlState::UNIQUE_VIOLATION);
                    inner.release(conn, key).await;
                    if exists {
                        Err(StoreError::backend(
                            format!("cannot create the run {name}: it exists already"),
                            None,
                        ))
                    } else {
                        Err(inner.target.error(what, &e))
                    }
                }
            }
        })?;
        Ok(Box::new(PgLease {
            run: run.clone(),
            key,
            conn: Some(conn),
            storage: self.clone(),
        }))
    }

    fn lease(&self, run: &RunId, wait: Duration) -> Result<Option<Box<dyn RunLease>>, StoreError> {
        let key = lease_key(run);
        let conn = self.call(move |inner| async move {
            inner
                .try_lock(key, wait, "cannot take the run's lease")
                .await
        })?;
        Ok(conn.map(|conn| {
            Box::new(PgLease {
                run: run.clone(),
                key,
                conn: Some(conn),
                storage: self.clone(),
            }) as Box<dyn RunLease>
        }))
    }

    fn is_leased(&self, run: &RunId) -> bool {
        #[expect(
            clippy::cast_sign_loss,
            reason = "the key's bits, as pg_locks splits them"
        )]
        let bits = lease_key(run) as u64;
        #[expect(clippy::cast_possible_truncation, reason = "the high and low halves")]
        let (high, low) = ((bits >> 32) as u32, bits as u32);
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot ask whether the run is driven",
                    "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted \
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                     AND classid = $1 AND objid = $2 AND objsubid = 1",
                    &[&high, &low],
                )
                .await?;
            Ok(!rows.is_empty())
        })
        // A store that cannot tell says it is held.
        .unwrap_or(true)
    }

    fn read_log(&self, run: &RunId, log: Log) -> Result<Vec<u8>, StoreError> {
        let run = run.to_string();
        let log = log_name(log);
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot read the log",
                    "SELECT line FROM orcho_log_lines WHERE run = $1 AND log = $2 ORDER BY id",
                    &[&run, &log],
                )
                .await?;
            let mut out = Vec::new();
            for row in rows {
                out.extend_from_slice(row.get::<_, &[u8]>(0));
                out.push(b'\n');
            }
            Ok(out)
        })
    }

    fn append_log(&self, run: &RunId, log: Log, line: &[u8]) -> Result<(), StoreError> {
        let run = run.to_string();
        let log = log_name(log);
        let line = line_of(line);
        self.call(move |inner| async move {
            inner
                .execute("cannot append to the log", APPEND, &[&run, &log, &line])
                .await?;
            Ok(())
        })
    }

    fn get(&self, run: &RunId, item: Item<'_>) -> Result<Option<Vec<u8>>, StoreError> {
        let (kind, name) = slot(item)?;
        let run = run.to_string();
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot read the document",
                    "SELECT body FROM orcho_documents WHERE run = $1 AND kind = $2 AND name = $3",
                    &[&run, &kind, &name],
                )
                .await?;
            Ok(rows.first().map(|r| r.get::<_, Vec<u8>>(0)))
        })
    }

    fn create(&self, run: &RunId, item: Item<'_>, bytes: &[u8]) -> Result<Created, StoreError> {
        let (kind, name) = slot(item)?;
        let run = run.to_string();
        let bytes = bytes.to_vec();
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot write the document",
                    CREATE,
                    &[&run, &kind, &name, &bytes],
                )
                .await?;
            Ok(if rows.is_empty() {
                Created::Exists
            } else {
                Created::New
            })
        })
    }

    fn put(&self, run: &RunId, item: Item<'_>, bytes: &[u8]) -> Result<(), StoreError> {
        let (kind, name) = slot(item)?;
        let run = run.to_string();
        let bytes = bytes.to_vec();
        self.call(move |inner| async move {
            inner
                .execute(
                    "cannot write the document",
                    PUT,
                    &[&run, &kind, &name, &bytes],
                )
                .await?;
            Ok(())
        })
    }

    fn remove(&self, run: &RunId, item: Item<'_>) -> Result<bool, StoreError> {
        let (kind, name) = slot(item)?;
        let run = run.to_string();
        self.call(move |inner| async move {
            let removed = inner
                .execute(
                    "cannot remove the document",
                    "DELETE FROM orcho_documents WHERE run = $1 AND kind = $2 AND name = $3",
                    &[&run, &kind, &name],
                )
                .await?;
            Ok(removed > 0)
        })
    }

    fn supersede_decision(&self, run: &RunId, id: &HandoffId) -> Result<(), StoreError> {
        let run = run.to_string();
        let id = id.to_string();
        self.call(move |inner| async move {
            inner
                .execute(
                    "cannot set the decision aside",
                    "WITH aside AS ( \
                         DELETE FROM orcho_documents \
                         WHERE run = $1 AND kind = 'decision' AND name = $2 \
                         RETURNING run, name, body, written_at) \
                     INSERT INTO orcho_superseded (run, name, body, written_at) \
                     SELECT run, name, body, written_at FROM aside",
                    &[&run, &id],
                )
                .await?;
            Ok(())
        })
    }

    fn list(&self, run: &RunId, set: Set) -> Result<Vec<String>, StoreError> {
        let kind = set_kind(set);
        let run = run.to_string();
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot list the documents",
                    "SELECT name FROM orcho_documents WHERE run = $1 AND kind = $2",
                    &[&run, &kind],
                )
                .await?;
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })
    }

    fn origin(&self, run: &RunId) -> Result<Option<RunOrigin>, StoreError> {
        let mut origins = self.origins(std::slice::from_ref(run))?;
        Ok(origins.remove(run))
    }

    fn origins(
        &self,
        runs: &[RunId],
    ) -> Result<std::collections::BTreeMap<RunId, RunOrigin>, StoreError> {
        if runs.is_empty() {
            return Ok(std::collections::BTreeMap::new());
        }
        let names: Vec<String> = runs.iter().map(ToString::to_string).collect();
        type Row = (String, String, String, Option<String>);
        let rows: Vec<Row> = self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot look the runs up",
                    "SELECT run, machine, checkout, repository FROM orcho_runs WHERE run = ANY($1)",
                    &[&names],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                .collect())
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(run, machine, checkout, repository)| {
                let run = RunId::new(run).ok()?;
                let here = self
                    .origin
                    .as_ref()
                    .is_some_and(|o| o.machine == machine && o.checkout == checkout);
                Some((
                    run,
                    RunOrigin::new(machine, checkout, here).with_repository(repository),
                ))
            })
            .collect())
    }

    fn points_view(&self) -> Result<Option<Arc<dyn Storage>>, StoreError> {
        let origin = self.origin.clone().filter(|_| !self.team);
        let here = self.origin.clone();
        let location = self.location();
        let view = self.call(move |inner| async move {
            let what = "cannot read the decision points";
            let conn = inner.shared().await?;
            // The runs with a decision point, with where each was started.
            let (mine, machine, checkout) = match &origin {
                Some(o) => (true, o.machine.clone(), o.checkout.clone()),
                None => (false, String::new(), String::new()),
            };
            let params: [&(dyn ToSql + Sync); 3] = [&mine, &machine, &checkout];
            // One round trip: the two queries share the list of runs with
            // a decision point, and the connection pipelines them. Each
            // document row carries its run's origin.
            const DOCUMENTS: &str = concat!(
                "SELECT d.run, d.kind, d.name, d.body, r.machine, r.checkout, r.repository \
                 FROM orcho_documents d JOIN orcho_runs r ON r.run = d.run \
                 WHERE d.kind NOT IN ('evidence', 'delivery-patch', 'intake-seed') AND ",
                POINTED!()
            );
            const LINES: &str = concat!(
                "SELECT l.run, l.log, l.line FROM orcho_log_lines l \
                 WHERE l.run IN (SELECT r.run FROM orcho_runs r WHERE ",
                POINTED!(),
                ") ORDER BY l.id"
            );
            // Prepared once per connection; then both go out together.
            let (documents, lines) = tokio::join!(conn.statement(DOCUMENTS), conn.statement(LINES));
            let prepared = |s: Result<tokio_postgres::Statement, tokio_postgres::Error>| {
                s.map_err(|e| inner.target.error(what, &e))
            };
            let (documents, lines) = (prepared(documents)?, prepared(lines)?);
            let documents = conn.client.query(&documents, &params);
            let lines = conn.client.query(&lines, &params);
            let (documents, lines) = tokio::join!(documents, lines);
            let documents = documents.map_err(|e| inner.target.error(what, &e))?;
            let lines = lines.map_err(|e| inner.target.error(what, &e))?;
            let mut view = View::new(location);
            let parse = |name: &str| name.parse::<RunId>().ok();
            let mut seen = std::collections::HashSet::new();
            for row in documents {
                let Some(run) = parse(row.get(0)) else {
                    continue;
                };
                if seen.insert(run.clone()) {
                    let (machine, checkout): (String, String) = (row.get(4), row.get(5));
                    let is_here = here
                        .as_ref()
                        .is_some_and(|o| o.machine == machine && o.checkout == checkout);
                    let origin =
                        RunOrigin::new(machine, checkout, is_here).with_repository(row.get(6));
                    view.add_run(run.clone(), Some(origin));
                }
                view.add_document(run, row.get(1), row.get(2), row.get(3));
            }
            for row in lines {
                let Some(run) = parse(row.get(0)) else {
                    continue;
                };
                let log = if row.get::<_, &str>(1) == "handoffs" {
                    Log::Handoffs
                } else {
                    Log::Run
                };
                view.add_line(run, log, row.get(2));
            }
            Ok(view)
        })?;
        Ok(Some(Arc::new(view)))
    }

    fn subscribe(&self) -> Result<Option<Box<dyn Subscription>>, StoreError> {
        let mut news = self.inner.news();
        news.mark_unchanged();
        Ok(Some(Box::new(PgSubscription {
            news: Some(news),
            storage: self.clone(),
        })))
    }

    fn lock(&self, run: &RunId, kind: PointKind) -> Result<Box<dyn Held>, StoreError> {
        let key = lock_key(kind.as_str(), run);
        let conn = self.call(move |inner| async move {
            let conn = inner.dedicated().await?;
            conn.client
                .execute("SELECT pg_advisory_lock($1)", &[&key])
                .await
                .map_err(|e| inner.target.error("cannot take the lock", &e))?;
            Ok(conn)
        })?;
        Ok(Box::new(PgHeld {
            key,
            conn: Some(conn),
            storage: self.clone(),
        }))
    }

    fn store_get(&self, set: StoreSet, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let (kind, name) = (store_set_kind(set)?, store_name(name)?);
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot read the document",
                    "SELECT body FROM orcho_documents WHERE run = $1 AND kind = $2 AND name = $3",
                    &[&STORE_WIDE, &kind, &name],
                )
                .await?;
            Ok(rows.first().map(|r| r.get::<_, Vec<u8>>(0)))
        })
    }

    fn store_create(&self, set: StoreSet, name: &str, bytes: &[u8]) -> Result<Created, StoreError> {
        let (kind, name) = (store_set_kind(set)?, store_name(name)?);
        let bytes = bytes.to_vec();
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot write the document",
                    CREATE,
                    &[&STORE_WIDE, &kind, &name, &bytes],
                )
                .await?;
            Ok(if rows.is_empty() {
                Created::Exists
            } else {
                Created::New
            })
        })
    }

    fn store_remove(&self, set: StoreSet, name: &str) -> Result<bool, StoreError> {
        let (kind, name) = (store_set_kind(set)?, store_name(name)?);
        self.call(move |inner| async move {
            let n = inner
                .execute(
                    "cannot remove the document",
                    "DELETE FROM orcho_documents WHERE run = $1 AND kind = $2 AND name = $3",
                    &[&STORE_WIDE, &kind, &name],
                )
                .await?;
            Ok(n > 0)
        })
    }

    fn store_names(&self, set: StoreSet) -> Result<Vec<String>, StoreError> {
        let kind = store_set_kind(set)?;
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot list the documents",
                    "SELECT name FROM orcho_documents WHERE run = $1 AND kind = $2 \
                     ORDER BY name COLLATE \"C\"",
                    &[&STORE_WIDE, &kind],
                )
                .await?;
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })
    }

    fn store_append(&self, log: StoreLog, line: &[u8]) -> Result<(), StoreError> {
        let log = store_log_name(log)?;
        let line = line_of(line);
        self.call(move |inner| async move {
            inner
                .execute(
                    "cannot append to the log",
                    APPEND,
                    &[&STORE_WIDE, &log, &line],
                )
                .await?;
            Ok(())
        })
    }

    fn store_read(&self, log: StoreLog) -> Result<Vec<u8>, StoreError> {
        let log = store_log_name(log)?;
        self.call(move |inner| async move {
            let rows = inner
                .query(
                    "cannot read the log",
                    "SELECT line FROM orcho_log_lines WHERE run = $1 AND log = $2 ORDER BY id",
                    &[&STORE_WIDE, &log],
                )
                .await?;
            let mut out = Vec::new();
            for row in rows {
                out.extend_from_slice(row.get::<_, &[u8]>(0));
                out.push(b'\n');
            }
            Ok(out)
        })
    }

    fn store_lock(
        &self,
        log: StoreLog,
        wait: Duration,
    ) -> Result<Option<Box<dyn Held>>, StoreError> {
        let key = hash_key(&format!("orcho-pg\0store\0{}", store_log_name(log)?));
        let conn = self.call(move |inner| async move {
            inner.try_lock(key, wait, "cannot take the lock").await
        })?;
        Ok(conn.map(|conn| {
            Box::new(PgHeld {
                key,
                conn: Some(conn),
                storage: self.clone(),
            }) as Box<dyn Held>
        }))
    }
}
